//! Canonicalization: raw text (plain, HTML or mail) to the word stream that shingles are made of.
//! A chain of small filters, one a file: mail headers, HTML, Unicode normalization, words,
//! stop words, stemming and a minimum word length. Stop words and stemming are options, never
//! silent defaults: dropping «не» can flip a meaning.

pub mod html;
pub mod mail;
pub mod plain;
pub mod stem;
pub mod stopwords;
pub mod tokens;
pub mod unicode;

use std::borrow::Cow;

use crate::config::{CanonConfig, HtmlMode};
use stem::Stemmers;
use stopwords::StopWords;

/// Turns raw texts into canonical words under one configuration.
#[derive(Debug)]
pub struct Canonicalizer {
    html: HtmlMode,
    mail_headers: bool,
    main_text: bool,
    stopwords: StopWords,
    stemmers: Stemmers,
    min_word_length: usize,
}

impl Canonicalizer {
    /// A canonicalizer for `config`.
    pub fn new(config: &CanonConfig) -> Canonicalizer {
        Canonicalizer {
            html: config.html,
            mail_headers: config.mail_headers,
            main_text: config.main_text,
            stopwords: StopWords::new(&config.stopwords),
            stemmers: Stemmers::new(&config.stem),
            min_word_length: config.min_word_length,
        }
    }

    /// The visible text: mail headers removed, HTML turned to text (its main text when
    /// `main-text` is on), entities decoded, plain-text furniture dropped; not yet normalized.
    pub fn visible_text<'a>(&self, raw: &'a str) -> Cow<'a, str> {
        self.texts(raw, false).0
    }

    /// The visible text and, when `with_page` is set and `main-text` removed furniture, the
    /// whole page's text as well (what corpus statistics count).
    pub fn texts<'a>(&self, raw: &'a str, with_page: bool) -> (Cow<'a, str>, Option<Cow<'a, str>>) {
        let body = if self.mail_headers {
            mail::strip_headers(raw)
        } else {
            raw
        };
        let is_html = match self.html {
            HtmlMode::Always => true,
            HtmlMode::Never => return (Cow::Borrowed(body), None),
            HtmlMode::Auto => html::looks_like_html(body),
        };
        let page = if is_html {
            Cow::Owned(html::html_to_text(body))
        } else {
            html::decode_entities(body)
        };
        if !self.main_text {
            return (page, None);
        }
        let article = if is_html {
            html::main_text(body, &page)
        } else {
            None
        };
        let main = plain::clean(article.as_deref().unwrap_or(&page));
        if with_page && main != page {
            (Cow::Owned(main), Some(page))
        } else {
            (Cow::Owned(main), None)
        }
    }

    /// The lines of the whole page that main-text extraction dropped, in page order.
    pub fn dropped_lines(&self, raw: &str) -> Vec<String> {
        let (main, page) = self.texts(raw, true);
        let Some(page) = page else {
            return Vec::new();
        };
        let kept: std::collections::HashSet<String> = main
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        page.lines()
            .map(|l| l.trim_start_matches(['>', ' ', '\t']))
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty() && !kept.contains(l))
            .collect()
    }

    /// The normalized text: visible text after NFKC, format-character deletion, case folding
    /// and `ё`→`е`.
    pub fn normalized_text(&self, raw: &str) -> String {
        unicode::normalize(&self.visible_text(raw))
    }

    /// Calls `f` with each canonical word of `raw`, in order. `buffer` is scratch space reused
    /// across calls.
    pub fn for_each_word(&self, raw: &str, buffer: &mut String, f: impl FnMut(&str)) {
        self.for_each_word_of_visible(&self.visible_text(raw), buffer, f);
    }

    /// Calls `f` with each canonical word of a text already made visible.
    pub fn for_each_word_of_visible(
        &self,
        visible: &str,
        buffer: &mut String,
        mut f: impl FnMut(&str),
    ) {
        buffer.clear();
        unicode::normalize_into(visible, buffer);
        if self.stopwords.is_empty() && self.stemmers.is_empty() && self.min_word_length <= 1 {
            tokens::for_each_word(buffer, f);
            return;
        }
        tokens::for_each_word(buffer, |word| {
            if !self.stopwords.is_empty() && self.stopwords.contains(word) {
                return;
            }
            let word = if self.stemmers.is_empty() {
                Cow::Borrowed(word)
            } else {
                self.stemmers.stem(word)
            };
            if self.min_word_length > 1 && word.chars().count() < self.min_word_length {
                return;
            }
            f(&word);
        });
    }

    /// The canonical words of `raw`.
    pub fn words(&self, raw: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.for_each_word(raw, &mut String::new(), |w| out.push(w.to_owned()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Language;

    #[test]
    fn html_page_and_plain_text_give_the_same_words() {
        let canon = Canonicalizer::new(&CanonConfig::default());
        let page = "<html><body><p>Ёлки&nbsp;и&#x20;палки,</p><script>x()</script><p>ДА\u{AD}ВНО</p></body></html>";
        let plain = "елки и палки, давно";
        assert_eq!(canon.words(page), canon.words(plain));
        assert_eq!(canon.words(plain), ["елки", "и", "палки", "давно"]);
    }

    #[test]
    fn options_filter_words() {
        let config = CanonConfig {
            stopwords: vec![Language::En],
            stem: vec![Language::En],
            min_word_length: 3,
            ..CanonConfig::default()
        };
        let canon = Canonicalizer::new(&config);
        assert_eq!(
            canon.words("The floods of it hit towns"),
            ["flood", "hit", "town"]
        );
    }

    #[test]
    fn html_never_keeps_tags_as_words() {
        let config = CanonConfig {
            html: HtmlMode::Never,
            ..CanonConfig::default()
        };
        let canon = Canonicalizer::new(&config);
        assert_eq!(canon.words("<b>bold</b>"), ["b", "bold", "b"]);
    }

    #[test]
    fn mail_headers_are_not_words() {
        let canon = Canonicalizer::new(&CanonConfig::default());
        let mail = "From: a@example.com\nSubject: hi\n\nBody text";
        assert_eq!(canon.words(mail), ["body", "text"]);
    }
}
