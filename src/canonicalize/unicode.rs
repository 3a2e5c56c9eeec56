//! Unicode normalization of text: NFKC, deletion of format characters (category Cf: soft
//! hyphen, zero-width space and joiners, byte-order mark, bidi marks), full case folding, and
//! `ё`→`е`. The modifier-letter apostrophe `ʼ` (U+02BC), which Ukrainian spelling uses inside
//! words like «мʼясо», becomes the plain apostrophe, so that the three apostrophes in use split
//! words alike. ASCII text takes a fast path that only lowercases; a text whose every character
//! NFKC leaves unjoined with its neighbours (ASCII, Cyrillic, precomposed letters, punctuation,
//! fullwidth forms — almost every text) is normalized one character at a time, the commonest
//! characters through a table; any other text goes through the whole-text NFKC.

use caseless::Caseless;
use unicode_normalization::char::{canonical_combining_class, decompose_compatible};
use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Appends the normalized form of `text` to `out`.
pub(crate) fn normalize_into(text: &str, out: &mut String) {
    out.reserve(text.len());
    let start = out.len();
    if text.is_ascii() {
        push_lowercase(text, out);
        return;
    }
    if !fold_char_by_char(text, out) {
        out.truncate(start);
        normalize_whole(text, out);
    }
}

/// Appends the normalized form of `text` one character at a time and returns true, when each
/// of its characters begins a normalization segment of its own (see [`fold_alone`]); returns
/// false, having appended part of it, when one does not. Runs of ASCII are copied as they are
/// and lowercased at the end with the rest: what folding appends has no capital letters.
fn fold_char_by_char(text: &str, out: &mut String) -> bool {
    let table = FoldTable::get();
    let start = out.len();
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = ascii_prefix_len(rest.as_bytes());
        out.push_str(&rest[..ascii]);
        rest = &rest[ascii..];
        let mut run_end = rest.len();
        for (at, c) in rest.char_indices() {
            if c.is_ascii() {
                run_end = at;
                break;
            }
            if let Some(folded) = table.single(c) {
                out.push(folded);
            } else if is_stable_ideograph(c) {
                out.push(c);
            } else if !fold_alone(c, out) {
                return false;
            }
        }
        rest = &rest[run_end..];
    }
    out[start..].make_ascii_lowercase();
    true
}

/// The number of ASCII bytes `bytes` starts with, found sixteen bytes at a time.
fn ascii_prefix_len(bytes: &[u8]) -> usize {
    let mut len = 0;
    for chunk in bytes.chunks(16) {
        if !chunk.is_ascii() {
            return len + chunk.iter().take_while(|b| b.is_ascii()).count();
        }
        len += chunk.len();
    }
    len
}

/// Appends ASCII text lowercased.
fn push_lowercase(ascii: &str, out: &mut String) {
    let start = out.len();
    out.push_str(ascii);
    out[start..].make_ascii_lowercase();
}

/// Appends the normalized form of `c` alone and returns true when NFKC never joins `c` with
/// what precedes it: when its compatibility decomposition begins with a starter that no
/// canonical composition takes as its second character (NFC quick check Yes). Such a character
/// closes the segment before it, so a text made only of such characters normalizes as the
/// concatenation of its characters normalized alone. Returns false, appending nothing, for any
/// other character (a combining mark, a conjoining vowel or final jamo).
fn fold_alone(c: char, out: &mut String) -> bool {
    let mut lead = None;
    decompose_compatible(c, |d| {
        lead.get_or_insert(d);
    });
    if !is_segment_start(lead.unwrap_or(c)) {
        return false;
    }
    if is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes {
        fold_into(std::iter::once(c), out);
    } else {
        fold_into(std::iter::once(c).nfkc(), out);
    }
    true
}

/// True for a fully decomposed character that NFKC never joins with what precedes it: a
/// starter (combining class 0) that no canonical composition takes as its second character.
fn is_segment_start(lead: char) -> bool {
    canonical_combining_class(lead) == 0 && is_nfc_quick(std::iter::once(lead)) == IsNormalized::Yes
}

/// Blocks of characters whose normalized form is looked up in [`FoldTable`]: Latin-1 to
/// Cyrillic, general punctuation, the halfwidth and fullwidth forms, and the CJK symbols and
/// kana.
const TABLE_BLOCKS: [std::ops::Range<u32>; 4] =
    [0x80..0x530, 0x2000..0x2070, 0xFF00..0xFFF0, 0x3000..0x3100];

/// The CJK Unified Ideographs (U+4E00 to U+9FFF): each normalizes to itself alone, as
/// [`fold_alone`] says (no decomposition, no case, never composed with what precedes it).
fn is_stable_ideograph(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
}

/// The normalized form of each character of [`TABLE_BLOCKS`] when [`fold_alone`] makes it one
/// character, made once from `fold_alone` itself.
struct FoldTable {
    blocks: [Vec<Option<char>>; 4],
}

impl FoldTable {
    /// The table, made on first use.
    fn get() -> &'static FoldTable {
        static TABLE: std::sync::OnceLock<FoldTable> = std::sync::OnceLock::new();
        TABLE.get_or_init(|| FoldTable {
            blocks: TABLE_BLOCKS.map(|block| {
                block
                    .map(|code| {
                        let c = char::from_u32(code)?;
                        let mut folded = String::new();
                        if !fold_alone(c, &mut folded) {
                            return None;
                        }
                        let mut chars = folded.chars();
                        match (chars.next(), chars.next()) {
                            (Some(f), None) => Some(f),
                            _ => None,
                        }
                    })
                    .collect()
            }),
        })
    }

    /// The one character `c` normalizes to alone, when the table holds it.
    fn single(&self, c: char) -> Option<char> {
        let code = c as u32;
        TABLE_BLOCKS
            .iter()
            .zip(&self.blocks)
            .find(|(block, _)| block.contains(&code))
            .and_then(|(block, folds)| folds[(code - block.start) as usize])
    }
}

/// The normalized form of a text that needs NFKC as a whole.
fn normalize_whole(text: &str, out: &mut String) {
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
        } else if c == '\u{130}' {
            // Turkish dotted capital İ: plain `i`, not `i` and a combining dot above.
            out.push('i');
        } else if c.general_category() != GeneralCategory::Format {
            out.extend(std::iter::once(c).default_case_fold().map(fold_letter));
        }
    }
}

/// The normalized form of `text`.
#[cfg(test)]
pub(crate) fn normalize(text: &str) -> String {
    let mut out = String::new();
    normalize_into(text, &mut out);
    out
}

/// Maps single letters after case folding: `ё`→`е`, the modifier-letter apostrophe to the
/// plain one, and Turkish dotless `ı` to `i`.
fn fold_letter(c: char) -> char {
    match c {
        'ё' => 'е',
        '\u{2BC}' => '\'',
        'ı' => 'i',
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
    fn ideographs_normalize_to_themselves_alone() {
        for c in '\u{4E00}'..='\u{9FFF}' {
            assert!(is_stable_ideograph(c));
            let mut alone = String::new();
            assert!(fold_alone(c, &mut alone), "U+{:04X}", c as u32);
            assert_eq!(alone, c.to_string(), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn no_break_spaces_become_spaces() {
        assert_eq!(normalize("a\u{A0}B ｃ"), "a b c");
    }

    #[test]
    fn ascii_fast_path_lowercases() {
        assert_eq!(normalize("Hello, World 42"), "hello, world 42");
    }

    /// The normalized form by the whole-text path alone.
    fn whole(text: &str) -> String {
        let mut out = String::new();
        normalize_whole(text, &mut out);
        out
    }

    /// The normalized form by the character-by-character path, when it takes the text.
    fn by_char(text: &str) -> Option<String> {
        let mut out = String::new();
        fold_char_by_char(text, &mut out).then_some(out)
    }

    #[test]
    fn no_composition_takes_a_segment_start_as_its_second_character() {
        // Every canonical composition, Hangul included, makes a character that is its own NFC
        // and that the full canonical decomposition undoes; no character after the first may
        // start a segment. (Composition exclusions are never made, and do not count.)
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if !std::iter::once(c).nfc().eq(std::iter::once(c)) {
                continue;
            }
            let mut decomposed = Vec::new();
            unicode_normalization::char::decompose_canonical(c, |d| decomposed.push(d));
            for &d in decomposed.iter().skip(1) {
                assert!(
                    !is_segment_start(d),
                    "U+{:04X} in U+{:04X}",
                    d as u32,
                    c as u32
                );
            }
        }
    }

    #[test]
    fn every_character_normalizes_alike_by_both_paths() {
        // Alone, between neighbours the character-by-character path takes, and after the
        // first characters of compositions whose second is a starter (Hangul leading
        // consonant and syllable, Kannada, Oriya and Sinhala vowel signs).
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let contexts = [
                c.to_string(),
                format!("е{c}ё"),
                format!("{c}\u{A0}Ｋ{c}"),
                format!("\u{1100}{c}\u{AC00}{c}"),
                format!("\u{CC6}{c}\u{B47}{c}\u{DD9}{c}"),
            ];
            for text in contexts {
                if let Some(fast) = by_char(&text) {
                    assert_eq!(fast, whole(&text), "U+{:04X} in {text:?}", c as u32);
                }
            }
        }
    }

    #[test]
    fn the_character_by_character_path_takes_common_text() {
        for text in [
            "Ёлка ещё, «мʼясо» — при\u{AD}мер\u{A0}ＡＢＣ ﬁne Straße é ΣΑΣ 가",
            "Київ і Їжак ґанок Ў ў Ӂ",
            "©·’“”„…–",
        ] {
            assert_eq!(
                by_char(text).as_deref(),
                Some(whole(text).as_str()),
                "{text:?}"
            );
        }
        // A combining mark, a conjoining jamo: the whole text takes NFKC.
        for text in ["е\u{308}", "И\u{306}", "\u{1100}\u{1161}", "a\u{AD}\u{301}"] {
            assert_eq!(by_char(text), None, "{text:?}");
            assert_eq!(normalize(text), whole(text));
        }
    }

    /// Characters for mixed texts: ASCII, the Cyrillic blocks with their combining marks,
    /// Latin letters and combining diacritics, no-break and fullwidth forms, format characters,
    /// apostrophes, ligatures, Greek, Hangul jamo and syllables, and Indic two-part vowels.
    fn mixed_char() -> impl proptest::strategy::Strategy<Value = char> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::char::range(' ', '~'),
            proptest::char::range('\u{400}', '\u{52F}'),
            proptest::char::range('\u{80}', '\u{24F}'),
            proptest::char::range('\u{300}', '\u{36F}'),
            proptest::char::range('\u{370}', '\u{3FF}'),
            proptest::char::range('\u{2000}', '\u{206F}'),
            proptest::char::range('\u{FF00}', '\u{FFEF}'),
            proptest::char::range('\u{1100}', '\u{11FF}'),
            proptest::sample::select(vec![
                '\u{1100}', '\u{1161}', '\u{11A8}', '\u{AC00}', '\u{CC6}', '\u{CD5}', '\u{B47}',
                '\u{B3E}', '\u{DD9}', '\u{DCF}', 'e', 'е', 'и', '\u{301}', '\u{306}', '\u{308}',
            ]),
            proptest::sample::select(vec![
                '\u{A0}', '\u{AD}', '\u{2BC}', '\u{FEFF}', 'ё', 'Ё', 'й', 'ї', '\u{FB01}',
                '\u{AC00}', '\u{AC01}', '\u{CC6}', '\u{CC2}', '\u{CD5}', '\u{B47}', '\u{B3E}',
                '\u{344}', '\u{F73}', '\u{1E9B}', '\u{130}', '\u{212B}',
            ]),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn mixed_texts_normalize_alike_by_both_paths(
            chars in proptest::collection::vec(mixed_char(), 0..40)
        ) {
            let text: String = chars.into_iter().collect();
            proptest::prop_assert_eq!(normalize(&text), whole(&text));
        }
    }

    #[test]
    fn turkish_i_folds_to_one_plain_word() {
        for (text, folded) in [
            ("İstanbul", "istanbul"),
            ("İZMİR", "izmir"),
            ("izmir", "izmir"),
            ("ısı", "isi"),
            ("ISI", "isi"),
            ("I\u{307}stanbul", "istanbul"),
        ] {
            let normalized = normalize(text);
            assert_eq!(normalized, folded, "{text:?}");
            assert_eq!(
                super::super::tokens::words(&normalized),
                [folded],
                "{text:?}"
            );
        }
    }

    /// Letters of many scripts, and combining marks of many scripts, in any order.
    fn letter_or_mark() -> impl proptest::strategy::Strategy<Value = char> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::sample::select(vec![
                'a', 'e', 'i', 'o', 'u', 'n', 'c', 's', 'z', 'A', 'E', 'I', 'O', 'N', 'S', 'Z',
                'ı', 'İ', 'ø', 'е', 'и', 'у', 'Е', 'И', 'У', 'α', 'ε', 'ι', 'ο', 'υ', 'ω', 'Α',
                'Ω', 'क', 'ड', 'ढ', 'ी', 'த', 'க', 'ب', 'ي', 'ש', 'ב', 'ก', 'ส', 'ក', 'ម', 'か',
                'は', 'カ', 'ハ', '国', 'ཀ', 'ག', '가', 'ᄀ', 'ᅡ', ' ', '.', '1', '٣',
            ]),
            proptest::char::range('\u{300}', '\u{36F}'),
            proptest::sample::select(vec![
                '\u{93C}', '\u{94D}', '\u{BCD}', '\u{64E}', '\u{651}', '\u{5B8}', '\u{5C1}',
                '\u{E48}', '\u{E49}', '\u{17D2}', '\u{17C6}', '\u{3099}', '\u{309A}', '\u{F72}',
                '\u{F90}', '\u{1AB0}', '\u{20DD}', '\u{FE0F}',
            ]),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        #[test]
        fn nfd_text_folds_as_nfc_text_does(
            chars in proptest::collection::vec(letter_or_mark(), 0..30)
        ) {
            let text: String = chars.into_iter().collect();
            let nfc = normalize(&text.nfc().collect::<String>());
            let nfd = normalize(&text.nfd().collect::<String>());
            proptest::prop_assert_eq!(&nfd, &nfc);
            proptest::prop_assert_eq!(&normalize(&text), &nfc);
            let words = super::super::tokens::words;
            proptest::prop_assert_eq!(words(&nfd), words(&nfc));
        }
    }
}
