//! Stop-word removal. The lists are data files committed under `data/stopwords/` with their
//! source and licence; lines starting with `#` are comments. Entries that the tokenizer would
//! split (English contractions such as `don't`) can never match a word and are left out.

use rustc_hash::FxHashSet;

use crate::config::Language;

/// The committed list of one language.
fn list(language: Language) -> &'static str {
    match language {
        Language::En => include_str!("../../data/stopwords/en.txt"),
        Language::Ru => include_str!("../../data/stopwords/ru.txt"),
        Language::Uk => include_str!("../../data/stopwords/uk.txt"),
    }
}

/// The union of the stop-word lists of some languages.
#[derive(Debug, Default)]
pub(crate) struct StopWords {
    words: FxHashSet<&'static str>,
}

impl StopWords {
    /// The stop words of `languages`.
    pub fn new(languages: &[Language]) -> StopWords {
        let words = languages
            .iter()
            .flat_map(|&l| list(l).lines())
            .map(str::trim)
            .filter(|w| !w.is_empty() && !w.starts_with('#'))
            .filter(|w| crate::canonicalize::tokens::words(w) == [*w])
            .collect();
        StopWords { words }
    }

    /// True when no language was chosen.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// True when `word` (already normalized) is a stop word.
    pub fn contains(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_hold_function_words_and_keep_content_words() {
        let en = StopWords::new(&[Language::En]);
        assert!(en.contains("the") && en.contains("and"));
        assert!(!en.contains("flood"));
        let ru = StopWords::new(&[Language::Ru]);
        assert!(ru.contains("и") && ru.contains("в"));
        assert!(!ru.contains("the"));
        let uk = StopWords::new(&[Language::Uk]);
        assert!(uk.contains("і") && uk.contains("не"));
        assert!(
            !en.contains("don"),
            "contractions must not become fragments"
        );
    }

    #[test]
    fn list_entries_are_normalized_words() {
        for language in Language::ALL {
            for word in list(language)
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
            {
                assert_eq!(
                    crate::canonicalize::unicode::normalize(word),
                    word,
                    "{}: {word:?} is not normalized",
                    language.code()
                );
            }
        }
    }
}
