//! Snowball stemming for English, Russian and Ukrainian. A word's script picks the stemmer:
//! Latin words go to English; Cyrillic words go to Ukrainian when they hold a letter only
//! Ukrainian uses (і ї є ґ) or when Russian is not enabled, else to Russian.

use std::borrow::Cow;

use frostem::{Algorithm, Stemmer};

use crate::config::Language;

/// The stemmers of the enabled languages.
#[derive(Default)]
pub(crate) struct Stemmers {
    english: Option<Stemmer>,
    russian: Option<Stemmer>,
    ukrainian: Option<Stemmer>,
}

impl std::fmt::Debug for Stemmers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stemmers")
            .field("english", &self.english.is_some())
            .field("russian", &self.russian.is_some())
            .field("ukrainian", &self.ukrainian.is_some())
            .finish()
    }
}

impl Stemmers {
    /// Stemmers for `languages`.
    pub fn new(languages: &[Language]) -> Stemmers {
        let make = |l: Language, a: Algorithm| languages.contains(&l).then(|| Stemmer::new(a));
        Stemmers {
            english: make(Language::En, Algorithm::English),
            russian: make(Language::Ru, Algorithm::Russian),
            ukrainian: make(Language::Uk, Algorithm::Ukrainian),
        }
    }

    /// True when no language was chosen.
    pub fn is_empty(&self) -> bool {
        self.english.is_none() && self.russian.is_none() && self.ukrainian.is_none()
    }

    /// The stem of a normalized word; the word itself when no enabled stemmer fits its script.
    pub fn stem<'a>(&self, word: &'a str) -> Cow<'a, str> {
        let stemmer = if word.bytes().all(|b| b.is_ascii_alphabetic()) {
            self.english.as_ref()
        } else if word.chars().any(|c| ('\u{400}'..='\u{4FF}').contains(&c)) {
            let ukrainian_letter = word.chars().any(|c| matches!(c, 'і' | 'ї' | 'є' | 'ґ'));
            if ukrainian_letter || self.russian.is_none() {
                self.ukrainian.as_ref()
            } else {
                self.russian.as_ref()
            }
        } else {
            None
        };
        match stemmer {
            Some(s) => s.stem(word),
            None => Cow::Borrowed(word),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_script_goes_to_its_stemmer() {
        let all = Stemmers::new(&Language::ALL);
        assert_eq!(all.stem("connections"), "connect");
        assert_eq!(all.stem("новостями"), all.stem("новости"));
        assert_eq!(all.stem("новинами"), all.stem("новини"));
        assert_eq!(all.stem("2024"), "2024");
    }

    #[test]
    fn disabled_languages_are_left_alone() {
        let ru = Stemmers::new(&[Language::Ru]);
        assert_eq!(ru.stem("connections"), "connections");
        assert!(Stemmers::new(&[]).is_empty());
    }
}
