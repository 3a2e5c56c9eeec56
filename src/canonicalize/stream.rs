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
    /// Bytes gathered before a chunk is normalized.
    chunk_bytes: usize,
    /// Text given and not yet normalized.
    pending: String,
    /// How many bytes at the start of `pending` hold no end of a chunk.
    no_end_before: usize,
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
            no_end_before: 0,
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
        self.no_end_before = 0;
        for_each_piece(&mut |piece| self.push(piece, &mut on_word));
        self.normalize(self.pending.len(), &mut on_word);
        self.pending.clear();
    }

    /// Adds a piece of text, normalizing every whole chunk it completes.
    fn push(&mut self, piece: &str, on_word: &mut impl FnMut(&str)) {
        let mut rest = piece;
        while !rest.is_empty() {
            // Up to a whole chunk; a whole chunk more when the pending text has no end yet.
            let room = match self.chunk_bytes.checked_sub(self.pending.len()) {
                Some(room) if room > 0 => room,
                _ => self.chunk_bytes,
            };
            let mut take = room.min(rest.len());
            while !rest.is_char_boundary(take) {
                take += 1;
            }
            self.pending.push_str(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() >= self.chunk_bytes {
                match chunk_end(&self.pending, self.no_end_before) {
                    Some(end) => {
                        self.normalize(end, on_word);
                        self.pending.drain(..end);
                        self.no_end_before = 0;
                    }
                    None => self.no_end_before = self.pending.len(),
                }
            }
        }
    }

    /// Normalizes the first `end` bytes of the pending text and calls `on_word` with their
    /// words.
    fn normalize(&mut self, end: usize, on_word: &mut impl FnMut(&str)) {
        self.normalized.clear();
        unicode::normalize_into(&self.pending[..end], &mut self.normalized);
        tokens::for_each_word(&self.normalized, on_word);
    }
}

/// Where the last whole chunk of `text` ends: before its last ASCII character that is not a
/// letter or digit (not its first character: a chunk is never empty); `None` when there is no
/// such character. The first `from` bytes are known to hold none and are not searched.
fn chunk_end(text: &str, from: usize) -> Option<usize> {
    text.as_bytes()[from..]
        .iter()
        .rposition(|b| b.is_ascii() && !b.is_ascii_alphanumeric())
        .map(|at| from + at)
        .filter(|&at| at > 0)
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
        assert_eq!(chunk_end("ab cd", 0), Some(2));
        assert_eq!(chunk_end("ab\ncd.", 0), Some(5));
        assert_eq!(chunk_end("ab\ncd.", 5), Some(5));
        assert_eq!(chunk_end(" abc", 0), None, "never an empty chunk");
        assert_eq!(chunk_end("абв\u{301}где", 0), None);
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
