//! Texts as a report shows them. A document's visible text (its main text, as the
//! canonicalizer extracts it) is cut into display words at white space, keeping line breaks,
//! and each display word knows how many canonical words it holds; shared passages, found on
//! canonical words, are then marked on the words a reader recognises. Where the display words
//! do not give back the canonical words exactly, the canonical words themselves are shown.

use std::ops::Range;

use crate::canonicalize::stream::WordStream;
use crate::canonicalize::{tokens, Canonicalizer};

/// The separator between display words written without a space between them (characters of
/// Chinese, Japanese, Thai...): the zero-width space, which the page splits words at and shows
/// as nothing.
pub(crate) const JOINER: char = '\u{200B}';

/// Most display words in a lead: the first words shown in the story list.
pub(crate) const LEAD_WORDS: usize = 10;

/// A lead ends at the first word that starts this many bytes into the text, if it is not
/// over before: about one line of the story list.
pub(crate) const LEAD_BYTES: usize = 80;

/// Longest display word shown, in characters; a longer one is cut and ends with `…`.
pub(crate) const MAX_WORD_CHARS: usize = 40;

/// The start of a text as shown: display words with the separator before each.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Shown {
    /// The words, one after another, each after its separator (`' '`, `'\n'` or [`JOINER`];
    /// none before the first).
    text: String,
    /// Where each word's separator starts in `text`.
    starts: Vec<u32>,
    /// Canonical words held by the display words up to each one, inclusive.
    ends: Vec<u32>,
    /// True when the text goes on past the words kept.
    cut: bool,
}

/// How much of a text to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// At most this many display words.
    pub words: usize,
    /// At most about this many bytes: words are kept while the text is shorter (the lead is
    /// always kept whole).
    pub bytes: usize,
}

impl Shown {
    /// The start of `raw` as shown, kept to `keep`. With `canonical` (the text's canonical
    /// words, from the same canonicalizer), the display words are checked against them;
    /// where they differ, the canonical words are shown instead.
    pub fn of(
        canonicalizer: &Canonicalizer,
        raw: &str,
        canonical: Option<&[String]>,
        keep: Keep,
    ) -> Shown {
        Shown::of_visible(
            canonicalizer,
            &canonicalizer.visible_text(raw),
            canonical,
            keep,
        )
    }

    /// [`Shown::of`] for a text already made visible ([`Canonicalizer::visible_text`]).
    pub(crate) fn of_visible(
        canonicalizer: &Canonicalizer,
        visible: &str,
        canonical: Option<&[String]>,
        keep: Keep,
    ) -> Shown {
        let mut shown = Shown::default();
        let mut buffer = WordStream::default();
        let (mut count, mut same) = (0usize, true);
        'lines: for line in visible.lines() {
            for (i, token) in line.split_whitespace().enumerate() {
                // A character of a script written without spaces is a display word of its
                // own, after an invisible separator, so that passages are marked on it.
                let mut pieces = Vec::new();
                tokens::for_each_unit_piece(token, |piece| pieces.push(piece));
                // (A zero-width space of the text's own is dropped: it shows nothing.)
                pieces.retain(|piece| piece.chars().any(|c| c != JOINER));
                for (j, piece) in pieces.into_iter().enumerate() {
                    if shown.is_full(keep) {
                        shown.cut = true;
                        break 'lines;
                    }
                    canonicalizer.for_each_word_of_visible(piece, &mut buffer, |word| {
                        if let Some(words) = canonical {
                            same &= words.get(count).is_some_and(|w| w == word);
                        }
                        count += 1;
                    });
                    let separator = match (shown.starts.is_empty(), i, j) {
                        (true, _, _) => None,
                        (false, _, 1..) => Some(JOINER),
                        (false, 0, _) => Some('\n'),
                        (false, _, _) => Some(' '),
                    };
                    shown.push(separator, piece, count);
                }
            }
        }
        match canonical {
            Some(words) if !same => Shown::of_words(words, keep),
            _ => shown,
        }
    }

    /// The canonical words themselves, kept to `keep`.
    fn of_words(words: &[String], keep: Keep) -> Shown {
        let mut shown = Shown::default();
        for (i, word) in words.iter().enumerate() {
            if shown.is_full(keep) {
                shown.cut = true;
                break;
            }
            shown.push((i > 0).then_some(' '), word, i + 1);
        }
        shown
    }

    fn is_full(&self, keep: Keep) -> bool {
        self.starts.len() >= keep.words.max(LEAD_WORDS)
            || (self.lead_is_whole() && self.text.len() >= keep.bytes)
    }

    fn lead_is_whole(&self) -> bool {
        self.starts.len() >= LEAD_WORDS || self.text.len() >= LEAD_BYTES
    }

    fn push(&mut self, separator: Option<char>, token: &str, canonical_so_far: usize) {
        self.starts.push(self.text.len() as u32);
        self.text.extend(separator);
        for (i, c) in token.chars().enumerate() {
            if i == MAX_WORD_CHARS {
                self.text.push('…');
                break;
            }
            // Control characters would not survive as they are in a page: the HTML parser
            // replaces NUL, so the lead in the page and in its data would differ. A zero-width
            // space in a word (Khmer marks word ends with it) would split it there.
            match c {
                JOINER => {}
                c if c.is_control() => self.text.push('\u{FFFD}'),
                c => self.text.push(c),
            }
        }
        self.ends.push(canonical_so_far as u32);
    }

    /// The display words kept, each after its separator (none before the first).
    pub fn words(&self) -> impl Iterator<Item = &str> + '_ {
        let ends = self.starts.iter().skip(1).map(|&s| s as usize);
        (self.starts.iter().map(|&s| s as usize))
            .zip(ends.chain([self.text.len()]))
            .map(|(start, end)| &self.text[start..end])
    }

    /// Display words kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// True when the text goes on past the words kept.
    pub(crate) fn is_cut(&self) -> bool {
        self.cut
    }

    /// The lead: the first [`LEAD_WORDS`] words with their separators, or fewer, up to the
    /// first word that starts [`LEAD_BYTES`] into the text.
    pub fn lead(&self) -> &str {
        &self.text[..self.split()]
    }

    /// The words after the lead, each after its separator.
    pub fn rest(&self) -> &str {
        &self.text[self.split()..]
    }

    fn split(&self) -> usize {
        let lead = self.starts[..self.starts.len().min(LEAD_WORDS)]
            .iter()
            .position(|&s| s as usize >= LEAD_BYTES)
            .unwrap_or(LEAD_WORDS);
        self.starts
            .get(lead)
            .map_or(self.text.len(), |&s| s as usize)
    }

    /// Runs of canonical words (positions, as [`crate::compare::Prepared::shared_runs`]
    /// gives them) as runs of the display words kept: each display word that holds a word of a
    /// run is in it; runs that meet are joined, and what lies past the kept words is dropped.
    pub fn passages(&self, runs: &[Range<usize>]) -> Vec<Range<u32>> {
        let mut passages: Vec<Range<u32>> = Vec::new();
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let first = self.ends.partition_point(|&end| end as usize <= run.start);
            if first >= self.ends.len() {
                break;
            }
            let last = self
                .ends
                .partition_point(|&end| (end as usize) < run.end)
                .min(self.ends.len() - 1);
            let passage = first as u32..last as u32 + 1;
            match passages.last_mut() {
                Some(previous) if passage.start <= previous.end => {
                    previous.end = previous.end.max(passage.end)
                }
                _ => passages.push(passage),
            }
        }
        passages
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CanonConfig, Config};

    fn canonicalizer() -> Canonicalizer {
        Canonicalizer::new(&CanonConfig::default())
    }

    const ALL: Keep = Keep {
        words: 1000,
        bytes: 1 << 20,
    };

    #[test]
    fn display_words_keep_case_punctuation_and_line_breaks() {
        let canon = canonicalizer();
        let raw = "Flood  hits Kelsborough.\n\nThe river, well-known, rose.";
        let words = canon.words(raw);
        let shown = Shown::of(&canon, raw, Some(&words), ALL);
        let each: Vec<&str> = shown.words().collect();
        assert_eq!(
            each,
            [
                "Flood",
                " hits",
                " Kelsborough.",
                "\nThe",
                " river,",
                " well-known,",
                " rose."
            ]
        );
        assert_eq!(
            shown.lead(),
            "Flood hits Kelsborough.\nThe river, well-known, rose."
        );
        assert_eq!(shown.rest(), "");
        assert_eq!(shown.len(), 7);
        // "well-known" holds two canonical words: runs map onto whole display words.
        assert_eq!(shown.ends, [1, 2, 3, 4, 5, 7, 8]);
        assert_eq!(shown.passages(&[1..3, 5..6]), [1..3, 5..6]);
        assert_eq!(shown.passages(&[0..2, 2..4]), [Range { start: 0, end: 4 }]);
    }

    #[test]
    fn characters_of_scripts_without_spaces_are_display_words_of_their_own() {
        let canon = canonicalizer();
        let raw = "国家统计局\u{200B}发布ＧＤＰ数据。\nThe end";
        let words = canon.words(raw);
        assert_eq!(words.len(), 12, "{words:?}");
        let shown = Shown::of(&canon, raw, Some(&words), ALL);
        // Each character after an invisible separator; the zero-width space of the text is
        // dropped; a Latin word and the punctuation after a character stay as they are.
        assert_eq!(
            format!("{}{}", shown.lead(), shown.rest()),
            "国\u{200B}家\u{200B}统\u{200B}计\u{200B}局\u{200B}发\u{200B}布\u{200B}ＧＤＰ\u{200B}数\u{200B}据\u{200B}。\nThe end"
        );
        assert_eq!(shown.len(), 13);
        // A passage of canonical words marks just its characters.
        assert_eq!(shown.passages(&[2..5, 8..10]), [2..5, 8..10]);
        assert_eq!(shown.ends[10], 10, "the full stop holds no word");
    }

    #[test]
    fn html_shows_its_main_text() {
        let canon = canonicalizer();
        let raw = "<html><body><p>Ёлки&nbsp;и <b>палки</b></p><script>x()</script></body></html>";
        let words = canon.words(raw);
        let shown = Shown::of(&canon, raw, Some(&words), ALL);
        assert_eq!(shown.lead(), "Ёлки и палки");
    }

    #[test]
    fn texts_are_cut_to_words_and_bytes_but_the_lead_stays_whole() {
        let canon = canonicalizer();
        let raw: Vec<String> = (0..100).map(|i| format!("w{i}")).collect();
        let raw = raw.join(" ");
        let words = canon.words(&raw);
        let keep = |words, bytes| Keep { words, bytes };
        let shown = Shown::of(&canon, &raw, Some(&words), keep(30, 1 << 20));
        assert_eq!((shown.len(), shown.is_cut()), (30, true));
        assert_eq!(shown.lead(), "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9");
        assert!(shown.rest().starts_with(" w10 w11"));
        let shown = Shown::of(&canon, &raw, Some(&words), keep(1000, 10));
        assert_eq!(shown.len(), LEAD_WORDS);
        assert_eq!(shown.rest(), "");
        // Passages past the kept words are dropped; one across the cut is clipped.
        assert_eq!(
            shown.passages(&[8..20, 40..50]),
            [Range { start: 8, end: 10 }]
        );
        // A lead of long words ends at the word that starts past LEAD_BYTES.
        let long: Vec<String> = (0..20).map(|i| format!("{i:0>20}")).collect();
        let long = long.join(" ");
        let shown = Shown::of(&canon, &long, None, keep(1000, 1 << 20));
        assert_eq!(shown.lead().len(), 4 * 21 - 1);
        assert_eq!(shown.lead().len() + shown.rest().len(), long.len());
        let shown = Shown::of(&canon, &raw, Some(&words), keep(1000, 1 << 20));
        assert!(!shown.is_cut());
    }

    #[test]
    fn long_words_are_cut_and_control_characters_replaced() {
        let canon = canonicalizer();
        let long = "x".repeat(500);
        let raw = format!("a\u{0}b {long} c");
        let shown = Shown::of(&canon, &raw, None, ALL);
        let expected = format!("a\u{FFFD}b {}… c", "x".repeat(MAX_WORD_CHARS));
        assert_eq!(shown.lead(), expected);
    }

    #[test]
    fn canonical_words_are_shown_when_display_words_differ_from_them() {
        // Stop words are dropped from the canonical words, display words still hold them:
        // they map onto no canonical word and still agree.
        let mut config = Config::default();
        config.canonicalize.stopwords = vec![crate::config::Language::En];
        let canon = Canonicalizer::new(&config.canonicalize);
        let raw = "The flood of the year";
        let words = canon.words(raw);
        let shown = Shown::of(&canon, raw, Some(&words), ALL);
        assert_eq!(shown.lead(), raw);
        assert_eq!(
            shown.passages(&[Range { start: 0, end: 2 }]),
            [Range { start: 1, end: 5 }]
        );
        // Words that do not come back from the display words: the canonical words are shown.
        let other = vec!["something".to_owned(), "else".to_owned()];
        let shown = Shown::of(&canon, raw, Some(&other), ALL);
        assert_eq!(shown.lead(), "something else");
    }
}
