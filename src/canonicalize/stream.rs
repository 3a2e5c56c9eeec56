//! Words of a text given in pieces, normalized a bounded chunk at a time: however long the
//! text, what is held besides it is one chunk of it and that chunk normalized. A chunk ends
//! just before an ASCII character that is not a letter or digit (a space, a line break,
//! punctuation): such a character begins a segment that Unicode normalization never joins
//! with what precedes it, normalizes to itself (lowercased) and separates words, so the
//! chunks' words, one chunk after another, are the whole text's words.

use super::{tokens, unicode};

/// Bytes of text gathered before they are normalized: large enough that the work per chunk is
/// nothing beside the work per byte, small enough to stay in the cache.
const CHUNK_BYTES: usize = 64 << 10;

/// Reusable buffers that turn pieces of text into normalized words.
#[derive(Debug)]
pub struct WordStream {
    /// Bytes normalized at a time, about.
    chunk_bytes: usize,
    /// Text given that does not end a chunk yet (no chunk end in it but at its start).
    pending: String,
    /// The last chunk normalized.
    normalized: String,
}

impl Default for WordStream {
    fn default() -> Self {
        WordStream::with_chunk_bytes(CHUNK_BYTES)
    }
}

impl WordStream {
    /// A stream normalizing chunks of about `chunk_bytes` bytes.
    fn with_chunk_bytes(chunk_bytes: usize) -> Self {
        WordStream {
            chunk_bytes,
            pending: String::new(),
            normalized: String::new(),
        }
    }

    /// Calls `on_word` with each word (normalized, not yet filtered) of the text whose pieces
    /// `for_each_piece` gives to the function it is passed, in order.
    pub fn for_each_word(
        &mut self,
        for_each_piece: impl FnOnce(&mut dyn FnMut(&str)),
        mut on_word: impl FnMut(&str),
    ) {
        self.pending.clear();
        for_each_piece(&mut |piece| self.push(piece, &mut on_word));
        let pending = std::mem::take(&mut self.pending);
        self.normalize(&pending, &mut on_word);
        self.pending = pending;
        self.pending.clear();
    }

    /// Adds a piece of text: whole chunks are normalized straight from it, the rest is kept
    /// until a chunk end comes.
    fn push(&mut self, piece: &str, on_word: &mut impl FnMut(&str)) {
        let mut rest = piece;
        if !self.pending.is_empty() {
            if self.pending.len() + rest.len() < self.chunk_bytes {
                self.pending.push_str(rest);
                return;
            }
            // The pending text ends where the piece first holds a chunk end.
            let Some(end) = first_chunk_end(rest, 0) else {
                self.pending.push_str(rest);
                return;
            };
            let mut pending = std::mem::take(&mut self.pending);
            pending.push_str(&rest[..end]);
            self.normalize(&pending, on_word);
            pending.clear();
            self.pending = pending;
            rest = &rest[end..];
        }
        while rest.len() >= self.chunk_bytes {
            let mut window = self.chunk_bytes;
            while !rest.is_char_boundary(window) {
                window -= 1;
            }
            // A chunk is never empty, even when a long character fills the window.
            let end =
                last_chunk_end(&rest[..window]).or_else(|| first_chunk_end(rest, window.max(1)));
            let Some(end) = end else {
                break;
            };
            self.normalize(&rest[..end], on_word);
            rest = &rest[end..];
        }
        self.pending.push_str(rest);
    }

    /// Normalizes `text` and calls `on_word` with its words.
    fn normalize(&mut self, text: &str, on_word: &mut impl FnMut(&str)) {
        self.normalized.clear();
        unicode::normalize_into(text, &mut self.normalized);
        tokens::for_each_word(&self.normalized, on_word);
    }
}

/// Whether a chunk may end before `byte`: an ASCII character that is not a letter or digit.
fn ends_a_chunk(byte: u8) -> bool {
    byte.is_ascii() && !byte.is_ascii_alphanumeric()
}

/// Where the last chunk of `text` ends: before its last ASCII character that is not a letter
/// or digit, not its first (a chunk is never empty); `None` when there is none.
fn last_chunk_end(text: &str) -> Option<usize> {
    text.bytes().rposition(ends_a_chunk).filter(|&at| at > 0)
}

/// Where a chunk of `text` first ends at or after byte `from`: before the first ASCII
/// character there that is not a letter or digit.
fn first_chunk_end(text: &str, from: usize) -> Option<usize> {
    text.as_bytes()[from..]
        .iter()
        .position(|&b| ends_a_chunk(b))
        .map(|at| from + at)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of `text` normalized whole.
    fn whole(text: &str) -> Vec<String> {
        tokens::words(&unicode::normalize(text))
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The words of `pieces` through a stream.
    fn streamed(stream: &mut WordStream, pieces: &[&str]) -> Vec<String> {
        let mut words = Vec::new();
        stream.for_each_word(
            |push| pieces.iter().for_each(|piece| push(piece)),
            |w| words.push(w.to_owned()),
        );
        words
    }

    #[test]
    fn chunks_end_before_ascii_separators_only() {
        assert_eq!(last_chunk_end("ab cd"), Some(2));
        assert_eq!(last_chunk_end("ab\ncd."), Some(5));
        assert_eq!(last_chunk_end(" abc"), None, "never an empty chunk");
        assert_eq!(last_chunk_end("абв\u{301}где"), None);
        assert_eq!(first_chunk_end(" ab cd", 0), Some(0));
        assert_eq!(first_chunk_end(" ab cd", 1), Some(3));
        assert_eq!(first_chunk_end("абв\u{301}где", 0), None);
    }

    #[test]
    fn texts_over_many_chunks_give_the_words_of_the_whole() {
        // Combining marks, no-break spaces and format characters sit on every side of the
        // chunk ends.
        let sentence =
            "Ёлки и\u{A0}палки, е\u{308}ж И\u{306}ОД при\u{AD}мер ＡＢＣ ﬁne-Straße;\r\n";
        let mut text = sentence.repeat(CHUNK_BYTES / sentence.len() * 3);
        let mut stream = WordStream::default();
        assert_eq!(streamed(&mut stream, &[&text]), whole(&text));
        assert!(
            stream.pending.capacity() < 2 * CHUNK_BYTES,
            "{}",
            stream.pending.capacity()
        );
        // A long run with no ASCII separator is held until one comes.
        text.push_str(&"ж\u{301}".repeat(CHUNK_BYTES));
        text.push_str(" tail");
        assert_eq!(streamed(&mut stream, &[&text]), whole(&text));
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        assert_eq!(streamed(&mut stream, &lines), whole(&text));
        assert_eq!(
            streamed(&mut stream, &["tail"]),
            ["tail"],
            "nothing left over"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn any_text_cut_anywhere_gives_the_words_of_the_whole(
            text in "(([a-zA-Z0-9 ,.\n\t_-]|[а-яёЁ]|[\u{300}-\u{36F}]|[\u{A0}\u{AD}\u{2BC}\u{FB01}\u{FF21}\u{1100}\u{1161}\u{AC00}]){0,200})",
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let mut at: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            at.retain(|&i| text.is_char_boundary(i));
            let pieces: Vec<&str> = at.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            for chunk_bytes in [1, 7, CHUNK_BYTES] {
                let mut stream = WordStream::with_chunk_bytes(chunk_bytes);
                proptest::prop_assert_eq!(streamed(&mut stream, &pieces), whole(&text));
            }
        }
    }
}
