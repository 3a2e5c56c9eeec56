//! Plain-text furniture: the parts of a mail or a plain-text page that are not its text. Quote
//! markers (`> `) are removed but the quoted text is kept (a re-sent message often carries the
//! story inside the quote); attribution lines (`On … wrote:`), forwarded-message separators with
//! their header lines, signatures after the `-- ` delimiter, a short footer after a separator
//! line at the end (mailing-list and unsubscribe footers), lone hash-buster tokens, and
//! navigation lines (`Home | World | Sport | …`) are dropped.

/// The text with its furniture removed.
#[cfg(test)]
pub(crate) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for_each_piece(text, |piece| out.push_str(piece));
    out
}

/// Kept lines held at most while the text is read a first time: the end of a text, where
/// signatures and footers are cut, is found among them. A text with no more kept lines is
/// given from them; a longer one is read a second time.
const HELD_LINES: usize = 256;

/// Calls `f` with [`clean`]'s text in pieces, in order: runs of kept lines (a slice of `text`
/// where they follow one another with a bare `\n` between them) and the `\n` between runs. Only the last `HELD_LINES` kept lines are held, never a copy of the text (unless
/// signatures and footers cut more than those from the end, which no real text does).
pub(crate) fn for_each_piece(text: &str, f: impl FnMut(&str)) {
    let mut held = std::collections::VecDeque::with_capacity(HELD_LINES.min(text.len() / 32 + 1));
    let mut before = 0;
    let mut filter = LineFilter::default();
    for line in text.lines() {
        if let Some(line) = filter.keep(line) {
            if held.len() == HELD_LINES {
                held.pop_front();
                before += 1;
            }
            held.push_back(line);
        }
    }
    let kept = match kept_after_cut(held.make_contiguous(), before) {
        Some(kept) => kept,
        None => {
            // The cut reaches further back than the lines held: hold them all.
            let mut lines = kept_lines(text).collect::<Vec<_>>();
            cut_signatures_and_footers(&mut lines);
            held = lines.into();
            before = 0;
            held.len()
        }
    };
    let mut runs = Runs::new(text, f);
    if before == 0 {
        held.iter().take(kept).for_each(|line| runs.add(line));
    } else {
        kept_lines(text).take(kept).for_each(|line| runs.add(line));
    }
    runs.finish();
}

/// Kept lines given as few pieces as can be: lines that follow one another in the text with
/// a bare `\n` between them, as they are joined, go as one slice of the text.
struct Runs<'a, F: FnMut(&str)> {
    text: &'a str,
    f: F,
    /// The run not yet given, as byte offsets in `text`.
    run: Option<(usize, usize)>,
    /// A run was given before.
    given: bool,
}

impl<'a, F: FnMut(&str)> Runs<'a, F> {
    fn new(text: &'a str, f: F) -> Self {
        Runs {
            text,
            f,
            run: None,
            given: false,
        }
    }

    /// Adds the next kept line, a slice of the text.
    fn add(&mut self, line: &'a str) {
        let start = line.as_ptr() as usize - self.text.as_ptr() as usize;
        let end = start + line.len();
        match &mut self.run {
            Some((_, run_end))
                if *run_end + 1 == start && self.text.as_bytes()[*run_end] == b'\n' =>
            {
                *run_end = end;
            }
            _ => {
                self.finish();
                self.run = Some((start, end));
            }
        }
    }

    /// Gives the run not yet given, after a line break when one was given before.
    fn finish(&mut self) {
        if let Some((start, end)) = self.run.take() {
            if self.given {
                (self.f)("\n");
            }
            (self.f)(&self.text[start..end]);
            self.given = true;
        }
    }
}

/// The lines of `text` that [`LineFilter`] keeps, unquoted, before signatures and footers are
/// cut.
fn kept_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut filter = LineFilter::default();
    text.lines().filter_map(move |line| filter.keep(line))
}

/// Line by line: drops forwarded-message headers, attributions, hash busters and navigation,
/// and removes quote markers.
#[derive(Default)]
struct LineFilter {
    in_forward_header: bool,
}

impl LineFilter {
    /// The line as kept, or `None` when it is dropped.
    fn keep<'a>(&mut self, raw: &'a str) -> Option<&'a str> {
        let line = unquote(raw.trim_end_matches('\r'));
        let trimmed = line.trim();
        if self.in_forward_header {
            if is_header_line(trimmed) {
                return None;
            }
            self.in_forward_header = false;
            if trimmed.is_empty() {
                return None;
            }
        }
        if is_forward_separator(trimmed) {
            self.in_forward_header = true;
            return None;
        }
        if is_attribution(trimmed) || is_hash_buster(trimmed) || is_navigation(trimmed) {
            return None;
        }
        Some(line)
    }
}

/// A line without its quote markers (`>`, `> >`, `>>`).
fn unquote(line: &str) -> &str {
    let mut rest = line;
    while let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix('>') {
        rest = after;
    }
    if std::ptr::eq(rest, line) {
        line
    } else {
        rest.strip_prefix(' ').unwrap_or(rest)
    }
}

fn is_header_line(line: &str) -> bool {
    let Some((name, _)) = line.split_once(':') else {
        return false;
    };
    !name.is_empty()
        && name.len() <= 30
        && name.chars().all(|c| c.is_alphabetic() || c == '-')
        && name.chars().next().is_some_and(char::is_uppercase)
}

/// `---------- Forwarded message ---------`, `-----Original Message-----`, `Begin forwarded message:`.
fn is_forward_separator(line: &str) -> bool {
    if !line.starts_with(['-', 'B', 'b']) {
        return false;
    }
    let lower = line.to_lowercase();
    let core = lower.trim_matches(|c: char| c == '-' || c.is_whitespace());
    let dashed = line.starts_with("--") && line.trim_end().ends_with('-');
    (dashed
        && (core.contains("forward")
            || core.contains("original message")
            || core.contains("пересланное")
            || core.contains("переслане")))
        || lower.starts_with("begin forwarded message")
}

/// `On Tue, 3 May 2022 at 10:01, Jane <j@x.org> wrote:` and `Jane Doe writes:`.
fn is_attribution(line: &str) -> bool {
    if !line.ends_with(':') {
        return false;
    }
    let lower = line.to_lowercase();
    line.chars().count() <= 200
        && [
            "wrote:",
            "writes:",
            "написал:",
            "написала:",
            "написал(а):",
            "пише:",
            "написав:",
            "написала(в):",
        ]
        .iter()
        .any(|end| lower.ends_with(end))
}

/// A line that is one token mixing letters and digits, as inserted to defeat spam filters.
fn is_hash_buster(line: &str) -> bool {
    // All ASCII, so its length in bytes is its length in characters.
    (5..=16).contains(&line.len())
        && line.bytes().all(|b| b.is_ascii_alphanumeric())
        && line.bytes().any(|b| b.is_ascii_digit())
        && line.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A navigation item is at most this many words, or at most this many characters: three
/// words of English, or the five or six syllables, each written apart, that Vietnamese needs
/// for as much.
const NAVIGATION_ITEM_WORDS: usize = 3;
const NAVIGATION_ITEM_CHARS: usize = 32;

/// A line of at least four short items between `|`, `•` or `·` separators.
fn is_navigation(line: &str) -> bool {
    // Four items need three separators, and each separator has a byte of its own among `|`
    // and the lead bytes of `•` (E2) and `·` (C2): fewer such bytes, no navigation.
    if memchr::memchr3_iter(b'|', 0xE2, 0xC2, line.as_bytes())
        .nth(2)
        .is_none()
    {
        return false;
    }
    let items: Vec<&str> = line.split(['|', '•', '·']).map(str::trim).collect();
    items.len() >= 4
        && items.iter().all(|item| {
            item.split_whitespace().count() <= NAVIGATION_ITEM_WORDS
                || item.chars().count() <= NAVIGATION_ITEM_CHARS
        })
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    // All ASCII, so its length in bytes is its length in characters.
    t.chars().all(|c| matches!(c, '_' | '-' | '=' | '~' | '*')) && t.len() >= 5
}

/// Drops, from the end, signature blocks (a `-- ` line and at most 10 lines after it) and short
/// footers (a separator line and at most 6 lines after it), repeatedly.
fn cut_signatures_and_footers(lines: &mut Vec<&str>) {
    let kept = kept_after_cut(lines, 0).expect("every line is held");
    lines.truncate(kept);
}

/// How many kept lines [`cut_signatures_and_footers`] leaves of a text whose last kept lines
/// are `tail`, after `before` others; `None` when the cut needs lines before `tail`.
fn kept_after_cut(tail: &[&str], before: usize) -> Option<usize> {
    let mut len = tail.len();
    loop {
        while len > 0 && tail[len - 1].trim().is_empty() {
            len -= 1;
        }
        // Signatures are looked for among the last 11 lines, footers among the last 7.
        if len < 11 && before > 0 {
            return None;
        }
        let signature = (len.saturating_sub(11)..len)
            .rev()
            .find(|&i| tail[i] == "-- " || tail[i] == "--");
        let footer = (len.saturating_sub(7)..len)
            .rev()
            .find(|&i| is_separator(tail[i]));
        match signature.or(footer) {
            Some(at) if before + at > 0 => len = at,
            _ => return Some(before + len),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cleaned text as made before it was given in pieces: every kept line held, then
    /// joined.
    fn clean_whole(text: &str) -> String {
        let mut lines: Vec<&str> = kept_lines(text).collect();
        loop {
            while lines.last().is_some_and(|l| l.trim().is_empty()) {
                lines.pop();
            }
            let tail_start = lines.len().saturating_sub(11);
            let signature = (tail_start..lines.len())
                .rev()
                .find(|&i| lines[i] == "-- " || lines[i] == "--");
            let footer = (lines.len().saturating_sub(7)..lines.len())
                .rev()
                .find(|&i| is_separator(lines[i]));
            match signature.or(footer) {
                Some(at) if at > 0 => lines.truncate(at),
                _ => break,
            }
        }
        lines.join("\n")
    }

    /// Lines of mail and page furniture and of text, for texts of every shape.
    fn any_line() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        prop_oneof![
            3 => "[a-zA-Zа-я ,.]{0,30}",
            1 => proptest::sample::select(vec![
                "-- ", "--", "", " ", "\r", "_______________", "=====", "> quoted line",
                "> > deeper", "On Monday, Ann wrote:", "---------- Forwarded message ---------",
                "From: A <a@b.c>", "Subject: news", "Home | World | Sport | Culture", "2mf31fcf5",
                "text\r", "\u{A0}",
            ])
            .prop_map(str::to_owned),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1000))]
        #[test]
        fn pieces_make_the_text_cleaned_whole(
            lines in proptest::collection::vec(any_line(), 0..40),
            repeat in 1usize..40,
            ending in proptest::sample::select(vec!["", "\n", "\r\n", "\n\n"]),
        ) {
            // Repeated, the lines make texts longer than the lines held, whose signatures
            // and footers may reach back past them.
            let text = lines.join("\n").repeat(repeat) + ending;
            proptest::prop_assert_eq!(clean(&text), clean_whole(&text));
        }
    }

    #[test]
    fn a_cut_reaching_past_the_lines_held_is_made_whole() {
        let text = "Body line.\n".repeat(300) + &"-- \nSignature\n".repeat(HELD_LINES);
        assert_eq!(clean(&text), clean_whole(&text));
        assert_eq!(clean(&text), "Body line.\n".repeat(300).trim_end());
        let long = "Body line.\n".repeat(3 * HELD_LINES) + "-- \nSignature\n";
        assert_eq!(clean(&long), clean_whole(&long));
    }

    #[test]
    fn quoted_reply_keeps_the_quoted_text() {
        let mail = "Thanks, see below.\n\nOn 15 May 2017, Olivia wrote:\n> Owen writes:\n> > The story goes\n> > on here.\n>\n> And more.\n";
        assert_eq!(
            clean(mail),
            "Thanks, see below.\n\nThe story goes\non here.\n\nAnd more."
        );
    }

    #[test]
    fn forwarded_headers_signatures_and_footers_go() {
        let mail = "FYI\n\n---------- Forwarded message ---------\nFrom: A <a@b.c>\nDate: 5 May\nSubject: News\nTo: x@y.z\n\nThe body.\n-- \nChuck\n\n_______________\nList mailing list\nhttp://lists.example/list\n\n-- \nMary Baker\nTel: 555\n";
        assert_eq!(clean(mail), "FYI\n\nThe body.");
    }

    #[test]
    fn navigation_and_hash_busters_go_prose_stays() {
        let page = "Northern Chronicle\nHome | Culture | Business | Technology | Contact us\nThe story, with a | in it.\n2mf31fcf5\nA 2024 report.";
        assert_eq!(
            clean(page),
            "Northern Chronicle\nThe story, with a | in it.\nA 2024 report."
        );
    }

    #[test]
    fn navigation_with_bullets_and_middle_dots_goes() {
        let page = "Home • World • Sport • Culture\nНовини · Світ · Спорт · Культура\nÀ · propos • de | nous\nThe story · with • dots.\nЁлка | ёж";
        assert_eq!(clean(page), "The story · with • dots.\nЁлка | ёж");
    }

    #[test]
    fn navigation_items_of_a_language_that_spaces_its_syllables_go() {
        // Vietnamese writes each syllable apart: a menu item of two words is five syllables.
        let text = "Tài khoản người dùng | Email & phần mềm thư tín | Vấn đề âm thanh | Năng lượng và pin\n\
                    Biểu tượng đường Cong trên thanh công cụ Vẽ thì mở một thanh công cụ riêng.";
        assert_eq!(
            clean(text),
            "Biểu tượng đường Cong trên thanh công cụ Vẽ thì mở một thanh công cụ riêng."
        );
        // Items longer than a label are prose, whatever their separators.
        let prose = "The council met on Monday | the vote on the new bridge was put off until spring | the mayor \
                     spoke first | then the residents had their say";
        assert_eq!(clean(prose), prose);
    }

    #[test]
    fn hash_busters_are_ascii_tokens_of_five_to_sixteen() {
        assert!(is_hash_buster("2mf31fcf5"));
        assert!(!is_hash_buster("2mf3"));
        assert!(!is_hash_buster("2mf31fcf5abcdefgh"));
        assert!(!is_hash_buster("2ёf31fcf5"));
        assert!(!is_hash_buster("abcdefg"));
    }

    #[test]
    fn a_text_that_is_all_signature_is_kept() {
        assert_eq!(clean("-- \nJust this"), "-- \nJust this");
    }
}
