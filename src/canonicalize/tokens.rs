//! Words: maximal runs of letters and digits (the underscore and punctuation separate words).

/// Calls `f` with each word of `text`, in order. The text is read byte by byte, skipping the
/// separators between words and then running to the end of a word; two-byte characters (Latin,
/// Greek, Cyrillic...) are decoded in place.
pub fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let mut at = 0;
    loop {
        while at < text.len() {
            let (is_word, len) = word_char_at(text, at);
            if is_word {
                break;
            }
            at += len;
        }
        if at == text.len() {
            return;
        }
        let start = at;
        while at < text.len() {
            let (is_word, len) = word_char_at(text, at);
            if !is_word {
                break;
            }
            at += len;
        }
        f(&text[start..at]);
    }
}

/// Which ASCII bytes belong to words: the letters and digits.
const ASCII_WORD_BYTES: [bool; 128] = {
    let mut table = [false; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    table
};

/// Whether the character at byte `at` of `text` belongs to words, and its length in bytes.
#[inline(always)]
fn word_char_at(text: &str, at: usize) -> (bool, usize) {
    let lead = text.as_bytes()[at];
    if lead.is_ascii() {
        (ASCII_WORD_BYTES[usize::from(lead)], 1)
    } else {
        let c = char_at(text, at);
        (is_word_char(c), c.len_utf8())
    }
}

/// The non-ASCII character that starts at byte `at` of `text`; a two-byte one decoded in place.
fn char_at(text: &str, at: usize) -> char {
    let bytes = text.as_bytes();
    if bytes[at] < 0xE0 {
        let code = u32::from(bytes[at] & 0x1F) << 6 | u32::from(bytes[at + 1] & 0x3F);
        char::from_u32(code).expect("a two-byte UTF-8 sequence encodes a character")
    } else {
        text[at..]
            .chars()
            .next()
            .expect("a character starts at a lead byte")
    }
}

/// Letters and digits, with the ASCII and Cyrillic letters answered without a table search.
fn is_word_char(c: char) -> bool {
    match c {
        'a'..='z' | 'A'..='Z' | '0'..='9' => true,
        '\u{0400}'..='\u{0481}' | '\u{048A}'..='\u{052F}' => true,
        c => c.is_alphanumeric(),
    }
}

/// The words of `text`.
pub fn words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(w));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_punctuation_and_underscore() {
        assert_eq!(
            words("it's a_b, 3.5 — «слово»!"),
            ["it", "s", "a", "b", "3", "5", "слово"]
        );
        assert_eq!(
            words("plain ascii_text here"),
            ["plain", "ascii", "text", "here"]
        );
    }

    #[test]
    fn the_cyrillic_shortcut_agrees_with_the_standard_library() {
        for c in '\u{0400}'..='\u{052F}' {
            assert_eq!(is_word_char(c), c.is_alphanumeric(), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn empty_and_punctuation_only_have_no_words() {
        assert!(words("").is_empty());
        assert!(words(" -- ... !!").is_empty());
    }

    #[test]
    fn every_character_splits_as_the_standard_library_says() {
        let reference = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        };
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let text = format!("{c}a{c}{c}я,{c}");
            assert_eq!(words(&text), reference(&text), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn ascii_and_unicode_paths_agree() {
        let text = "Mixed text, with 12 numbers_and punctuation.";
        let unicode: Vec<&str> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(words(text), unicode);
    }
}
