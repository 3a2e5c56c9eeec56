//! Unicode normalization of text: NFKC, deletion of format characters (category Cf: soft
//! hyphen, zero-width space and joiners, byte-order mark, bidi marks), full case folding, and
//! `ё`→`е`. The modifier-letter apostrophe `ʼ` (U+02BC), which Ukrainian spelling uses inside
//! words like «мʼясо», becomes the plain apostrophe, so that the three apostrophes in use split
//! words alike. ASCII text takes a fast path that only lowercases.

use caseless::Caseless;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Appends the normalized form of `text` to `out`.
pub fn normalize_into(text: &str, out: &mut String) {
    if text.is_ascii() {
        out.reserve(text.len());
        out.extend(text.bytes().map(|b| b.to_ascii_lowercase() as char));
        return;
    }
    let visible = text
        .nfkc()
        .filter(|&c| c.general_category() != GeneralCategory::Format);
    out.extend(visible.default_case_fold().map(fold_letter));
}

/// The normalized form of `text`.
pub fn normalize(text: &str) -> String {
    let mut out = String::new();
    normalize_into(text, &mut out);
    out
}

fn fold_letter(c: char) -> char {
    match c {
        'ё' => 'е',
        '\u{2BC}' => '\'',
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compatibility_forms_fold() {
        // Fullwidth letters, the fi ligature, NFD-decomposed й, and sharp s.
        assert_eq!(
            normalize("ＡＢＣ ﬁne И\u{306} Straße"),
            "abc fine й strasse"
        );
    }

    #[test]
    fn format_characters_are_deleted() {
        assert_eq!(
            normalize("при\u{AD}мер zero\u{200B}width \u{FEFF}bom"),
            "пример zerowidth bom"
        );
    }

    #[test]
    fn yo_becomes_ye() {
        assert_eq!(normalize("Ёлка ещё"), "елка еще");
    }

    #[test]
    fn ukrainian_apostrophes_agree() {
        assert_eq!(normalize("м\u{2BC}ясо"), normalize("м'ясо"));
    }

    #[test]
    fn ascii_fast_path_lowercases() {
        assert_eq!(normalize("Hello, World 42"), "hello, world 42");
    }
}
