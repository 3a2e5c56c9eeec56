//! Plain-text furniture: the parts of a mail or a plain-text page that are not its text. Quote
//! markers (`> `) are removed but the quoted text is kept (a re-sent message often carries the
//! story inside the quote); attribution lines (`On … wrote:`), forwarded-message separators with
//! their header lines, signatures after the `-- ` delimiter, a short footer after a separator
//! line at the end (mailing-list and unsubscribe footers), lone hash-buster tokens, and
//! navigation lines (`Home | World | Sport | …`) are dropped.

/// The text with its furniture removed.
pub fn clean(text: &str) -> String {
    let mut lines: Vec<&str> = Vec::new();
    let mut in_forward_header = false;
    for raw in text.lines() {
        let line = unquote(raw.trim_end_matches('\r'));
        let trimmed = line.trim();
        if in_forward_header {
            if is_header_line(trimmed) {
                continue;
            }
            in_forward_header = false;
            if trimmed.is_empty() {
                continue;
            }
        }
        if is_forward_separator(trimmed) {
            in_forward_header = true;
            continue;
        }
        if is_attribution(trimmed) || is_hash_buster(trimmed) || is_navigation(trimmed) {
            continue;
        }
        lines.push(line);
    }
    cut_signatures_and_footers(&mut lines);
    lines.join("\n")
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
        && items
            .iter()
            .all(|item| item.split_whitespace().count() <= 3)
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    // All ASCII, so its length in bytes is its length in characters.
    t.chars().all(|c| matches!(c, '_' | '-' | '=' | '~' | '*')) && t.len() >= 5
}

/// Drops, from the end, signature blocks (a `-- ` line and at most 10 lines after it) and short
/// footers (a separator line and at most 6 lines after it), repeatedly.
fn cut_signatures_and_footers(lines: &mut Vec<&str>) {
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
            _ => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
