//! Words: letters and digits with the combining marks that follow them, and, in the scripts
//! written without spaces between words, each character on its own.
//!
//! A word of a spaced script is a maximal run of letters and digits (the underscore and
//! punctuation separate words, so `it's`, `3.5` and `e.g` are two words each) in which the
//! combining marks (Unicode categories Mn, Mc, Me) and format characters (Cf: joiners) that
//! follow a letter, digit or mark stay inside the word, as Unicode word boundaries (UAX #29)
//! keep them: Devanagari `दिल्ली`, Tamil, Arabic with harakat and NFD-decomposed Latin stay
//! whole. A mark after a separator belongs to that separator and is no part of a word.
//!
//! In Chinese, Japanese (Han and kana, Bopomofo), Thai, Lao, Khmer and Myanmar (Burmese)
//! text every user-perceived character — an extended grapheme cluster (UAX #29): a letter with
//! its vowel signs, tone marks and subscript marks — is a word of its own. The shingle of such
//! a text is a run of characters (see [`UnitScript`] and `shingle.script-size`). Tibetan
//! separates its syllables with the tsheg, so a Tibetan word is a syllable. ASCII text is
//! read byte by byte, as fast as before any of this.

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation};

/// A script written without spaces between words, whose characters are words of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum UnitScript {
    /// Han ideographs, Japanese kana and Bopomofo: Chinese and Japanese.
    Han,
    /// Thai.
    Thai,
    /// Lao.
    Lao,
    /// Khmer.
    Khmer,
    /// Myanmar (Burmese).
    Myanmar,
}

impl UnitScript {
    /// Every such script, in a fixed order.
    pub const ALL: [UnitScript; 5] = [
        UnitScript::Han,
        UnitScript::Thai,
        UnitScript::Lao,
        UnitScript::Khmer,
        UnitScript::Myanmar,
    ];

    /// The script of `c` when it is one of these (letters, digits and marks of its blocks).
    pub fn of(c: char) -> Option<UnitScript> {
        let code = c as u32;
        if code < 0x0E00 {
            return None;
        }
        Some(match code {
            0x0E00..=0x0E7F => UnitScript::Thai,
            0x0E80..=0x0EFF => UnitScript::Lao,
            0x1000..=0x109F | 0xA9E0..=0xA9FF | 0xAA60..=0xAA7F => UnitScript::Myanmar,
            0x1780..=0x17FF | 0x19E0..=0x19FF => UnitScript::Khmer,
            // CJK radicals, ideographic iteration marks and numbers, kana, Bopomofo, the CJK
            // blocks and their extensions, compatibility ideographs, the kana supplements.
            0x2E80..=0x2FDF
            | 0x3005..=0x3007
            | 0x3021..=0x3029
            | 0x3031..=0x3035
            | 0x3038..=0x303C
            | 0x3040..=0x30FF
            | 0x3100..=0x312F
            | 0x31A0..=0x31BF
            | 0x31F0..=0x31FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0xFF66..=0xFF9F
            | 0x1AFF0..=0x1B16F
            | 0x20000..=0x323AF => UnitScript::Han,
            _ => return None,
        })
    }

    /// The script of a word when it is a character of one of these scripts.
    pub(crate) fn of_word(word: &str) -> Option<UnitScript> {
        // Every character of these scripts takes three or four bytes.
        if word.as_bytes().first().is_none_or(|&b| b < 0xE0) {
            return None;
        }
        word.chars().next().and_then(UnitScript::of)
    }
}

/// What a character is to words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Separates words.
    Separator,
    /// A letter or digit of a spaced script: begins or continues a word.
    Letter,
    /// A combining mark or format character: continues the word it follows.
    Mark,
    /// A letter or digit of a script without spaces: a word of its own, with what follows it
    /// in its grapheme cluster.
    Unit,
}

/// Calls `f` with each word of `text`, in order. The text is read byte by byte, skipping the
/// separators between words and then running to the end of a word; two-byte characters (Latin,
/// Greek, Cyrillic...) are decoded in place.
pub fn for_each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut at = 0;
    loop {
        // Separators, and the marks that follow them.
        while at < text.len() {
            let lead = bytes[at];
            if lead.is_ascii() {
                if ASCII_WORD_BYTES[usize::from(lead)] {
                    break;
                }
                at += 1;
                continue;
            }
            let c = char_at(text, at);
            match class(c) {
                Class::Letter => break,
                Class::Separator | Class::Mark => at += c.len_utf8(),
                Class::Unit => {
                    let end = unit_end(text, at);
                    f(&text[at..end]);
                    at = end;
                }
            }
        }
        if at == text.len() {
            return;
        }
        let start = at;
        while at < text.len() {
            let lead = bytes[at];
            if lead.is_ascii() {
                if !ASCII_WORD_BYTES[usize::from(lead)] {
                    break;
                }
                at += 1;
                continue;
            }
            let c = char_at(text, at);
            match class(c) {
                Class::Letter | Class::Mark => at += c.len_utf8(),
                Class::Separator => break,
                // A character of a script without spaces ends the word, unless it extends the
                // word's last grapheme cluster (a Thai vowel sign after a digit, say).
                Class::Unit if is_grapheme_boundary(text, at) => break,
                Class::Unit => at += c.len_utf8(),
            }
        }
        f(&text[start..at]);
    }
}

/// Where the word of the character of a script without spaces at byte `at` of `text` ends: at
/// the end of its grapheme cluster and of the marks and format characters after it (a
/// Myanmar vowel sign that Unicode makes a cluster of its own, say).
fn unit_end(text: &str, at: usize) -> usize {
    let c = char_at(text, at);
    let after = at + c.len_utf8();
    // An ideograph or kana letter followed by ASCII or another: a cluster of its own.
    if is_plain_ideograph_or_kana(c)
        && text[after..]
            .chars()
            .next()
            .is_none_or(|n| n.is_ascii() || is_plain_ideograph_or_kana(n))
    {
        return after;
    }
    let mut end = grapheme_end(text, at);
    while let Some(c) = text[end..].chars().next() {
        if c.is_ascii() || !is_mark(c) {
            break;
        }
        // The mark's own grapheme cluster comes whole (a Myanmar vowel sign and the Lao AM
        // that extends it).
        end = grapheme_end(text, end).max(end + c.len_utf8());
    }
    end
}

/// Where the grapheme cluster that starts at byte `at` of `text` ends.
fn grapheme_end(text: &str, at: usize) -> usize {
    GraphemeCursor::new(at, text.len(), true)
        .next_boundary(text, 0)
        .ok()
        .flatten()
        .unwrap_or(text.len())
}

/// Whether a grapheme cluster of `text` begins at byte `at`.
fn is_grapheme_boundary(text: &str, at: usize) -> bool {
    GraphemeCursor::new(at, text.len(), true)
        .is_boundary(text, 0)
        .unwrap_or(true)
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

/// The non-ASCII character that starts at byte `at` of `text`; a two-byte one decoded in place.
#[inline(always)]
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

/// What a non-ASCII character is to words, the Cyrillic letters answered without a table
/// search.
#[inline(always)]
fn class(c: char) -> Class {
    match c {
        '\u{0400}'..='\u{0481}' | '\u{048A}'..='\u{052F}' => Class::Letter,
        // Dashes, quotes and bullets.
        '\u{2010}'..='\u{2027}' => Class::Separator,
        c if is_plain_ideograph_or_kana(c) => Class::Unit,
        c => class_by_table(c),
    }
}

/// The CJK Unified Ideographs and the kana letters: letters of a script without spaces that
/// neither extend a grapheme cluster nor are extended by one another (grapheme cluster break
/// property Other).
#[inline(always)]
fn is_plain_ideograph_or_kana(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FA}')
}

/// [`class`] from the Unicode tables.
fn class_by_table(c: char) -> Class {
    if c.is_alphanumeric() {
        if UnitScript::of(c).is_some() {
            Class::Unit
        } else {
            Class::Letter
        }
    } else if is_mark(c) {
        Class::Mark
    } else {
        Class::Separator
    }
}

/// Combining marks (Mn, Mc, Me) and format characters (Cf): they extend the word they follow.
pub(crate) fn is_mark(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
            | GeneralCategory::Format
    )
}

/// Calls `f` with the pieces of `text` (raw or normalized) that hold one character of a
/// script without spaces each: each such character's grapheme cluster alone, and the text
/// between them whole, in order. A text with no such character is one piece.
pub(crate) fn for_each_unit_piece<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    if text.bytes().all(|b| b < 0xE0) {
        f(text);
        return;
    }
    let mut start = 0;
    for (at, cluster) in text.grapheme_indices(true) {
        let lead = cluster
            .chars()
            .next()
            .expect("a grapheme cluster is not empty");
        if lead.is_alphanumeric() && UnitScript::of(lead).is_some() {
            if start < at {
                f(&text[start..at]);
            }
            f(cluster);
            start = at + cluster.len();
        }
    }
    if start < text.len() {
        f(&text[start..]);
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
    fn the_shortcuts_agree_with_the_tables() {
        for c in ('\u{0400}'..='\u{052F}')
            .chain('\u{2010}'..='\u{2027}')
            .chain('\u{3000}'..='\u{9FFF}')
        {
            assert_eq!(class(c), class_by_table(c), "U+{:04X}", c as u32);
        }
        // Two ideographs or kana letters, or one before ASCII: two grapheme clusters.
        let plain: Vec<char> = ('\u{3000}'..='\u{9FFF}')
            .filter(|&c| is_plain_ideograph_or_kana(c))
            .collect();
        for (i, &c) in plain.iter().enumerate() {
            let next = plain[(i * 7919) % plain.len()];
            for text in [format!("{c}{next}"), format!("{c}a"), c.to_string()] {
                assert_eq!(
                    grapheme_end(&text, 0),
                    c.len_utf8(),
                    "U+{:04X} in {text:?}",
                    c as u32
                );
            }
        }
    }

    #[test]
    fn a_mark_after_a_unit_brings_its_whole_grapheme_cluster() {
        // U+1083 (a Myanmar vowel sign) begins a grapheme cluster that U+0EB3 (Lao AM)
        // extends; the sign follows a Han numeral, whose word takes the sign's whole cluster.
        let text = "\u{3021}\u{1083}\u{EB3}";
        assert_eq!(words(text), [text]);
    }

    #[test]
    fn empty_and_punctuation_only_have_no_words() {
        assert!(words("").is_empty());
        assert!(words(" -- ... !!").is_empty());
        assert!(words(" \u{301}\u{94D} 。、").is_empty());
    }

    #[test]
    fn letters_and_digits_split_as_the_standard_library_says() {
        let reference = |text: &str| -> Vec<String> {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect()
        };
        // Every character that is neither a mark nor of a script without spaces.
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            if is_mark(c) || UnitScript::of(c).is_some() {
                continue;
            }
            let text = format!("{c}a{c}{c}я,{c}");
            assert_eq!(words(&text), reference(&text), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn marks_stay_inside_words() {
        assert_eq!(words("दिल्ली बढ़ेगा"), ["दिल्ली", "बढ़ेगा"]);
        assert_eq!(words("மாநிலம் தமிழ்நாடு"), ["மாநிலம்", "தமிழ்நாடு"]);
        assert_eq!(words("كَتَبَ الوَلَدُ"), ["كَتَبَ", "الوَلَدُ"]);
        assert_eq!(words("שָׁלוֹם"), ["שָׁלוֹם"]);
        assert_eq!(
            words("cafe\u{301} i\u{307}stanbul"),
            ["cafe\u{301}", "i\u{307}stanbul"]
        );
        assert_eq!(words("a\u{200D}b"), ["a\u{200D}b"], "a joiner stays inside");
        // Tibetan: a stack of subjoined letters is one syllable; the tsheg separates them.
        assert_eq!(words("བོད་སྐད་"), ["བོད", "སྐད"]);
    }

    #[test]
    fn characters_of_scripts_without_spaces_are_words_of_their_own() {
        assert_eq!(
            words("国家统计局发布了GDP数据，增长5%。"),
            [
                "国", "家", "统", "计", "局", "发", "布", "了", "GDP", "数", "据", "增", "长", "5"
            ]
        );
        assert_eq!(
            words("東京都はiPhone15を"),
            ["東", "京", "都", "は", "iPhone15", "を"]
        );
        // Thai vowel and tone marks, and the spacing vowel sara am, stay with their letter.
        assert_eq!(words("ขนส่ง น้ำ"), ["ข", "น", "ส่", "ง", "น้ำ"]);
        // Khmer: a subscript consonant stays with the letter it is written under.
        assert_eq!(words("ខ្មែរ"), ["ខ្មែ", "រ"]);
        assert_eq!(words("မြန်မာ"), ["မြ", "န်", "မာ"]);
        assert_eq!(words("ພາສາລາວ"), ["ພ", "າ", "ສ", "າ", "ລ", "າ", "ວ"]);
        assert_eq!(UnitScript::of_word("ขนส"), Some(UnitScript::Thai));
        assert_eq!(UnitScript::of_word("國"), Some(UnitScript::Han));
        assert_eq!(UnitScript::of_word("カ"), Some(UnitScript::Han));
        assert_eq!(UnitScript::of_word("한국"), None);
        assert_eq!(UnitScript::of_word("слово"), None);
    }

    #[test]
    fn unit_pieces_hold_one_character_of_a_script_without_spaces_each() {
        let pieces = |text| {
            let mut out = Vec::new();
            for_each_unit_piece(text, |p| out.push(p));
            out
        };
        assert_eq!(pieces("Ёлки, палки"), ["Ёлки, палки"]);
        assert_eq!(
            pieces("「東京都」はiPhoneを"),
            ["「", "東", "京", "都", "」", "は", "iPhone", "を"]
        );
        assert_eq!(pieces("น้ำ."), ["น้ำ", "."]);
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

    /// Characters of every kind: ASCII, Latin and Cyrillic letters, combining marks of many
    /// scripts, letters of spaced scripts that take marks (Devanagari, Tamil, Arabic, Hebrew,
    /// Tibetan, Hangul), of scripts without spaces (Han, kana, Thai, Lao, Khmer, Myanmar),
    /// punctuation, spaces and format characters.
    fn any_char() -> impl proptest::strategy::Strategy<Value = char> {
        use proptest::prelude::*;
        prop_oneof![
            proptest::char::range(' ', '~'),
            proptest::char::range('\u{C0}', '\u{24F}'),
            proptest::char::range('\u{300}', '\u{36F}'),
            proptest::char::range('\u{400}', '\u{52F}'),
            proptest::char::range('\u{590}', '\u{5FF}'),
            proptest::char::range('\u{600}', '\u{6FF}'),
            proptest::char::range('\u{900}', '\u{97F}'),
            proptest::char::range('\u{B80}', '\u{BFF}'),
            proptest::char::range('\u{E00}', '\u{EFF}'),
            proptest::char::range('\u{F00}', '\u{FFF}'),
            proptest::char::range('\u{1000}', '\u{109F}'),
            proptest::char::range('\u{1100}', '\u{11FF}'),
            proptest::char::range('\u{1780}', '\u{17FF}'),
            proptest::char::range('\u{1AB0}', '\u{1AFF}'),
            proptest::char::range('\u{2000}', '\u{206F}'),
            proptest::char::range('\u{3000}', '\u{30FF}'),
            proptest::char::range('\u{4E00}', '\u{4E80}'),
            proptest::char::range('\u{AC00}', '\u{AC80}'),
            proptest::char::range('\u{FE00}', '\u{FE2F}'),
            proptest::sample::select(vec!['\u{200D}', '\u{200C}', '\u{E0100}', '\u{20BB7}']),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn words_lose_no_letter_digit_or_mark_and_keep_grapheme_clusters_whole(
            chars in proptest::collection::vec(any_char(), 0..40)
        ) {
            let text: String = chars.into_iter().collect();
            let found = words(&text);
            // Words are pieces of the text, in order, none empty.
            let mut spans = Vec::new();
            let mut from = 0;
            for w in &found {
                proptest::prop_assert!(!w.is_empty());
                let start = w.as_ptr() as usize - text.as_ptr() as usize;
                proptest::prop_assert!(start >= from);
                from = start + w.len();
                spans.push(start..from);
            }
            let word_at = |at: usize| spans.iter().position(|s| s.contains(&at));
            // Every grapheme cluster that begins with a letter or digit lands whole in one
            // word: its letters, digits and marks with it; the rest are not in words.
            for (at, cluster) in text.grapheme_indices(true) {
                let lead = cluster.chars().next().unwrap();
                if lead.is_alphanumeric() {
                    let word = word_at(at);
                    proptest::prop_assert!(word.is_some(), "{:?} lost in {:?}", cluster, text);
                    proptest::prop_assert_eq!(word_at(at + cluster.len() - 1), word, "{:?} split in {:?}", cluster, text);
                } else if !is_mark(lead) {
                    proptest::prop_assert_eq!(word_at(at), None, "{:?} in a word in {:?}", cluster, text);
                }
            }
            // Every letter and digit is in a word, and so is every mark after one.
            let mut after_word_char = false;
            for (at, c) in text.char_indices() {
                if c.is_alphanumeric() || (after_word_char && is_mark(c)) {
                    proptest::prop_assert!(word_at(at).is_some(), "U+{:04X} lost in {:?}", c as u32, text);
                    after_word_char = true;
                } else if !is_mark(c) {
                    after_word_char = false;
                }
            }
        }
    }
}
