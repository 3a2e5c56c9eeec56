//! Unicode normalization of text: NFKC, deletion of format characters (category Cf: soft
//! hyphen, zero-width space and joiners, byte-order mark, bidi marks), full case folding, and
//! `ё`→`е`. The modifier-letter apostrophe `ʼ` (U+02BC), which Ukrainian spelling uses inside
//! words like «мʼясо», becomes the plain apostrophe, so that the three apostrophes in use split
//! words alike. ASCII text takes a fast path that only lowercases.

use caseless::Caseless;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Appends the normalized form of `text` to `out`.
pub fn normalize_into(text: &str, out: &mut String) {
    out.reserve(text.len());
    if text.is_ascii() {
        out.extend(text.bytes().map(|b| b.to_ascii_lowercase() as char));
        return;
    }
    // No-break spaces and fullwidth forms are the commonest reasons a text is not in NFKC.
    // Each decomposes to one plain character that decomposes no further, so replacing them
    // first gives the same NFKC, and the quick check then spares most texts the composition.
    let mapped;
    let text = if text.chars().any(|c| compatibility_plain(c).is_some()) {
        mapped = text
            .chars()
            .map(|c| compatibility_plain(c).unwrap_or(c))
            .collect::<String>();
        mapped.as_str()
    } else {
        text
    };
    // ASCII characters are NFKC starters that never compose with what precedes them, so
    // leaving them out can only make the quick check more careful, never wrong.
    if is_nfkc_quick(text.chars().filter(|c| !c.is_ascii())) == IsNormalized::Yes {
        fold_str(text, out);
    } else {
        fold_into(text.nfkc(), out);
    }
}

/// [`fold_into`] over a text already in NFKC, copying its runs of ASCII in bulk.
fn fold_str(text: &str, out: &mut String) {
    let mut rest = text;
    while !rest.is_empty() {
        let run = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let start = out.len();
        out.push_str(&rest[..run]);
        out[start..].make_ascii_lowercase();
        rest = &rest[run..];
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            fold_into(std::iter::once(c), out);
            rest = chars.as_str();
        }
    }
}

/// The plain character a no-break space or a fullwidth ASCII form stands for.
fn compatibility_plain(c: char) -> Option<char> {
    match c {
        '\u{A0}' => Some(' '),
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0),
        _ => None,
    }
}

/// First and last letters of the Cyrillic blocks, whose folding is table-driven.
const CYRILLIC: std::ops::RangeInclusive<char> = '\u{0400}'..='\u{052F}';

/// The lowercase of each Cyrillic letter, made once from the standard library's tables.
fn cyrillic_lowercase(c: char) -> char {
    static TABLE: std::sync::OnceLock<Vec<char>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        CYRILLIC
            .map(|c| {
                let mut lower = c.to_lowercase();
                match (lower.next(), lower.next()) {
                    (Some(l), None) => l,
                    _ => c,
                }
            })
            .collect()
    });
    table[c as usize - *CYRILLIC.start() as usize]
}

/// Deletes format characters, folds case and maps single letters, ASCII first.
fn fold_into(chars: impl Iterator<Item = char>, out: &mut String) {
    for c in chars {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if ('\u{2010}'..='\u{2027}').contains(&c) {
            // Dashes, quotes and bullets: no case, not format characters.
            out.push(c);
        } else if CYRILLIC.contains(&c) {
            // Cyrillic: case folding is lowercasing, one letter to one.
            out.push(fold_letter(cyrillic_lowercase(c)));
        } else if c.general_category() != GeneralCategory::Format {
            out.extend(std::iter::once(c).default_case_fold().map(fold_letter));
        }
    }
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
    fn fast_paths_agree_with_full_folding() {
        let full = |c: char| -> String {
            std::iter::once(c)
                .default_case_fold()
                .map(fold_letter)
                .collect()
        };
        for c in CYRILLIC.chain('\u{2010}'..='\u{2027}') {
            let mut fast = String::new();
            fold_into(std::iter::once(c), &mut fast);
            assert_eq!(fast, full(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn the_plain_shortcut_is_nfkc() {
        for c in std::iter::once('\u{A0}').chain('\u{FF01}'..='\u{FF5E}') {
            let nfkc: String = c.to_string().nfkc().collect();
            assert_eq!(
                compatibility_plain(c).unwrap().to_string(),
                nfkc,
                "U+{:04X}",
                c as u32
            );
        }
        // A combining mark after a fullwidth letter still composes.
        assert_eq!(normalize("\u{FF45}\u{301}"), "é");
    }

    #[test]
    fn no_break_spaces_become_spaces() {
        assert_eq!(normalize("a\u{A0}B ｃ"), "a b c");
    }

    #[test]
    fn ascii_fast_path_lowercases() {
        assert_eq!(normalize("Hello, World 42"), "hello, world 42");
    }
}
