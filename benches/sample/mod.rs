//! A fixed, deterministic sample of news-like documents for the stage benchmarks, made in
//! process from the fixtures (no files needed beyond `fixtures/news/`).
//!
//! The sample holds every fixture file as it is (HTML pages, mails, plain texts, entity and
//! Unicode traps), then generated documents in the mix of `scripts/gen-corpus`: new stories
//! recombined from word pairs of the fixtures' plain texts, in clusters (70% singletons, the rest
//! 2–50 documents on a power law) of variants (word substitutions, sentence drops and swaps,
//! truncation), about a quarter Cyrillic, a tenth HTML pages in a site template, and 30% with
//! the same legal disclaimer appended.

use std::path::{Path, PathBuf};

use megashingle::sketch::signature::splitmix64;

/// One document of the sample.
pub struct Document {
    pub id: String,
    pub text: String,
}

/// Documents in the default sample.
pub const SAMPLE_DOCUMENTS: usize = 2000;

const DISCLAIMER: &str = "Disclaimer: This article is provided for general information only and \
does not constitute legal, financial or professional advice. While every effort has been made to \
ensure accuracy at the time of publication, the publisher accepts no liability for any loss or \
damage arising from reliance on its contents. Reproduction in whole or in part without prior \
written permission is prohibited. All rights reserved.";

/// A small deterministic generator (SplitMix64).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// The fixture folder of the crate.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/news")
}

/// Every fixture document, sorted by path; ids are paths relative to `fixtures/news`.
fn fixture_documents() -> Vec<(String, String)> {
    let root = fixtures();
    let mut files = Vec::new();
    let mut folders = vec![root.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("fixtures/news is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("txt" | "html" | "htm" | "eml")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("fixtures are UTF-8");
            let id = path
                .strip_prefix(&root)
                .expect("under the root")
                .to_string_lossy()
                .replace('\\', "/");
            (id, text)
        })
        .collect()
}

/// The word pairs of one language's plain-text fixtures.
struct Pool {
    pairs: Vec<String>,
    words: Vec<String>,
}

impl Pool {
    fn new(texts: &[&str]) -> Pool {
        let words: Vec<String> = texts
            .iter()
            .flat_map(|t| t.split_whitespace())
            .filter(|w| w.chars().any(char::is_alphabetic) && w.chars().count() <= 24)
            .map(str::to_owned)
            .collect();
        let pairs = words
            .windows(2)
            .map(|w| format!("{} {}", w[0], w[1]))
            .collect();
        Pool { pairs, words }
    }
}

/// A story: paragraphs of sentences of chunks (word pairs).
#[derive(Clone)]
struct Story {
    title: String,
    paragraphs: Vec<Vec<Vec<String>>>,
}

fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn new_story(pool: &Pool, rng: &mut Rng) -> Story {
    // Article body between ~0.5 and ~4.5 KB, mean ~2 KB; Cyrillic takes two bytes a letter,
    // so count bytes, not words.
    let target = 500 + rng.below(2000) + rng.below(2000);
    let mut bytes = 0;
    let mut paragraphs = Vec::new();
    while bytes < target {
        let mut paragraph = Vec::new();
        for _ in 0..2 + rng.below(4) {
            let mut sentence: Vec<String> = (0..4 + rng.below(11))
                .map(|_| pool.pairs[rng.below(pool.pairs.len())].clone())
                .collect();
            sentence[0] = capitalize(&sentence[0]);
            let last = sentence.last_mut().expect("non-empty");
            if !last.ends_with(['.', '!', '?']) {
                *last = format!("{}.", last.trim_end_matches([',', ';', ':']));
            }
            bytes += sentence.iter().map(|c| c.len() + 1).sum::<usize>();
            paragraph.push(sentence);
            if bytes >= target {
                break;
            }
        }
        paragraphs.push(paragraph);
    }
    let title = (0..3 + rng.below(3))
        .map(|_| pool.pairs[rng.below(pool.pairs.len())].as_str())
        .collect::<Vec<_>>()
        .join(" ")
        .replace(['.', ',', ';', ':', '"', '«', '»', '“', '”'], "");
    Story {
        title: capitalize(&title),
        paragraphs,
    }
}

fn variant(story: &Story, pool: &Pool, rng: &mut Rng) -> Story {
    let level = rng.unit();
    let (sub_rate, drop, swaps, truncate) = if level < 0.4 {
        (rng.unit() * 0.02, 0.0, 0, None)
    } else if level < 0.8 {
        let cut = rng.chance(0.15).then(|| 0.7 + 0.2 * rng.unit());
        (0.02 + 0.03 * rng.unit(), 0.05, 1, cut)
    } else {
        let cut = rng.chance(0.5).then(|| 0.4 + 0.35 * rng.unit());
        (0.05 + 0.05 * rng.unit(), 0.12, 3, cut)
    };
    let mut paragraphs: Vec<Vec<Vec<String>>> = story
        .paragraphs
        .iter()
        .map(|p| {
            let kept: Vec<Vec<String>> = p.iter().filter(|_| !rng.chance(drop)).cloned().collect();
            if kept.is_empty() {
                p[..1].to_vec()
            } else {
                kept
            }
        })
        .collect();
    for _ in 0..swaps {
        let i = rng.below(paragraphs.len());
        let p = &mut paragraphs[i];
        if p.len() > 1 {
            let j = rng.below(p.len() - 1);
            p.swap(j, j + 1);
        }
    }
    if let Some(share) = truncate {
        let keep = ((paragraphs.len() as f64 * share).round() as usize).max(1);
        paragraphs.truncate(keep);
    }
    let chunks: usize = paragraphs.iter().flatten().map(Vec::len).sum();
    let substitutions = (1.5 * chunks as f64 * sub_rate + rng.unit()) as usize;
    for _ in 0..substitutions {
        let p = rng.below(paragraphs.len());
        let s = rng.below(paragraphs[p].len());
        let c = rng.below(paragraphs[p][s].len());
        paragraphs[p][s][c] = pool.pairs[rng.below(pool.pairs.len())].clone();
    }
    let title = if rng.chance(0.3) {
        capitalize(&pool.words[rng.below(pool.words.len())])
    } else {
        story.title.clone()
    };
    Story { title, paragraphs }
}

fn paragraph_texts(story: &Story) -> Vec<String> {
    story
        .paragraphs
        .iter()
        .map(|p| p.iter().map(|s| s.join(" ")).collect::<Vec<_>>().join(" "))
        .collect()
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Site templates: name, nav items, footer, cookie banner.
const SITES: [(&str, &str, &str, &str); 3] = [
    (
        "The Daily Herald",
        "Home|World|Politics|Business|Sport|Culture|Opinion",
        "© The Daily Herald Media Group. Contact the newsroom. Terms of use · Privacy policy",
        "We use cookies to personalise content and ads and to analyse our traffic. By continuing \
         to browse you agree to our use of cookies.",
    ),
    (
        "Городской вестник",
        "Главная|Город|Политика|Экономика|Происшествия|Спорт",
        "© Городской вестник. При использовании материалов ссылка на сайт обязательна.",
        "Мы используем файлы cookie, чтобы сайт работал лучше. Оставаясь на сайте, вы \
         соглашаетесь с политикой конфиденциальности.",
    ),
    (
        "Northgate Courier",
        "News|Local|Crime|Property|Jobs|Motors",
        "Northgate Courier. Subscribe to our newsletter · Advertise with us · Contact us",
        "This website uses cookies to improve your experience. Accept all cookies or manage \
         your preferences.",
    ),
];

fn render(story: &Story, pool: &Pool, rng: &mut Rng, cyrillic: bool) -> String {
    let paragraphs = paragraph_texts(story);
    let disclaimer = rng.chance(0.30);
    if rng.chance(0.10) {
        let (name, nav, footer, cookie) = SITES[if cyrillic { 1 } else { 2 * rng.below(2) }];
        let mut page = format!(
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title} | {name}</title>\
             <style>body{{font-family:serif}}.nav a{{margin:0 6px}}</style>\
             <script>window.dataLayer=window.dataLayer||[];</script></head>\n<body>\n\
             <header class=\"site-header\"><a class=\"logo\" href=\"/\">{name}</a></header>\n\
             <nav class=\"nav\"><ul>",
            title = escape(&story.title)
        );
        for (i, item) in nav.split('|').enumerate() {
            page.push_str(&format!("<li><a href=\"/{i}\">{item}</a></li>"));
        }
        page.push_str(&format!(
            "</ul></nav>\n<main><article>\n<h1>{}</h1>\n",
            escape(&story.title)
        ));
        for p in &paragraphs {
            page.push_str(&format!("<p>{}</p>\n", escape(p)));
        }
        if disclaimer {
            page.push_str(&format!("<p class=\"disclaimer\">{DISCLAIMER}</p>\n"));
        }
        page.push_str("</article>\n<aside class=\"related\"><h3>Related</h3><ul>");
        for _ in 0..4 {
            let title = &pool.pairs[rng.below(pool.pairs.len())];
            page.push_str(&format!(
                "<li><a href=\"/news/{}\">{}</a></li>",
                rng.below(100_000),
                escape(title)
            ));
        }
        page.push_str(&format!(
            "</ul></aside></main>\n<footer class=\"site-footer\"><p>{footer}</p></footer>\n\
             <div class=\"cookie-banner\" id=\"cookie-consent\"><p>{cookie}</p>\
             <button>OK</button></div>\n</body></html>\n"
        ));
        return page;
    }
    let mut text = story.title.clone();
    for p in &paragraphs {
        text.push_str("\n\n");
        text.push_str(p);
    }
    if disclaimer {
        text.push_str("\n\n");
        text.push_str(DISCLAIMER);
    }
    text
}

/// The sample: every fixture file, then generated documents up to `n` in all.
pub fn documents(n: usize) -> Vec<Document> {
    let fixtures = fixture_documents();
    let plain = |lang: &str| -> Vec<&str> {
        fixtures
            .iter()
            .filter(|(id, text)| {
                id.starts_with(lang) && id.ends_with(".txt") && !text.contains('<')
            })
            .map(|(_, text)| text.as_str())
            .collect()
    };
    let pools = [
        Pool::new(&plain("en/")),
        Pool::new(&plain("ru/")),
        Pool::new(&plain("uk/")),
    ];
    // Cluster sizes 2..=50 with p(s) ~ s^-2.5, by inverse lookup.
    let weights: Vec<f64> = (2..=50).map(|s| (s as f64).powf(-2.5)).collect();
    let total: f64 = weights.iter().sum();
    let mut rng = Rng::new(0x5EED_BE4C);
    let mut out: Vec<Document> = fixtures
        .into_iter()
        .map(|(id, text)| Document { id, text })
        .collect();
    let mut cluster = 0;
    while out.len() < n {
        let size = if rng.chance(0.7) {
            1
        } else {
            let mut x = rng.unit() * total;
            let mut size = 50;
            for (i, w) in weights.iter().enumerate() {
                if x < *w {
                    size = i + 2;
                    break;
                }
                x -= w;
            }
            size
        };
        let lang = if rng.chance(0.75) {
            0
        } else {
            1 + rng.below(2)
        };
        let pool = &pools[lang];
        let story = new_story(pool, &mut rng);
        for member in 0..size.min(n - out.len()) {
            let version = if member == 0 {
                story.clone()
            } else {
                variant(&story, pool, &mut rng)
            };
            let text = render(&version, pool, &mut rng, lang > 0);
            out.push(Document {
                id: format!("gen-{cluster:05}-{member:02}"),
                text,
            });
        }
        cluster += 1;
    }
    out
}

/// Writes documents as a CSV `id,text` file.
pub fn write_csv(documents: &[Document], path: &Path) {
    let mut writer = csv::Writer::from_path(path).expect("a writable temporary file");
    writer.write_record(["id", "text"]).expect("write");
    for d in documents {
        writer
            .write_record([d.id.as_str(), d.text.as_str()])
            .expect("write");
    }
    writer.flush().expect("flush");
}
