//! Words: maximal runs of letters and digits (the underscore and punctuation separate words).

/// Calls `f` with each word of `text`, in order.
pub fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    if text.is_ascii() {
        let bytes = text.as_bytes();
        let mut start = None;
        for (i, b) in bytes.iter().enumerate() {
            match (b.is_ascii_alphanumeric(), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    f(&text[s..i]);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            f(&text[s..]);
        }
        return;
    }
    text.split(|c: char| !is_word_char(c))
        .filter(|w| !w.is_empty())
        .for_each(f);
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
    fn ascii_and_unicode_paths_agree() {
        let text = "Mixed text, with 12 numbers_and punctuation.";
        let unicode: Vec<&str> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(words(text), unicode);
    }
}
