//! Words in every script: the canonical words `megashingle canon` prints for a few sentences of
//! each script (golden files under tests/golden/canon/), and the multilingual dev benchmark
//! scored language by language (when `../shared` is beside the repository).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use megashingle::{Clusterer, Config};

#[allow(dead_code)]
mod common;
use common::{megashingle, stdout_of, temp};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn canon_prints_the_words_of_every_script_as_the_golden_files_say() {
    let dir = root().join("tests").join("golden").join("canon");
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the golden folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    inputs.sort();
    assert!(inputs.len() >= 15, "{inputs:?}");
    // In a folder without pipeline.toml: the built-in defaults.
    let cwd = temp();
    for input in inputs {
        let output = megashingle(cwd.path())
            .arg("canon")
            .arg(&input)
            .output()
            .expect("the binary runs");
        assert!(output.status.success(), "{output:?}");
        let golden = std::fs::read_to_string(input.with_extension("canon")).expect("a .canon file");
        assert_eq!(stdout_of(&output), golden, "{}", input.display());
    }
}

#[test]
fn formatting_changes_leave_the_words_of_every_script_alone() {
    // Fullwidth and halfwidth forms, zero-width spaces, a line break inside a clause, NFD.
    let config = Config::default();
    let canon = megashingle::canonicalize::Canonicalizer::new(&config.canonicalize);
    for (plain, formatted) in [
        ("国家统计局发布了数据", "国家统\n计局发\u{200B}布了数据"),
        ("カタカナのiPhone15", "ｶﾀｶﾅのｉＰｈｏｎｅ１５"),
        ("រាជធានីភ្នំពេញ", "រាជធានី\u{200B}ភ្នំពេញ"),
        ("Hà Nội", "Ha\u{300} No\u{323}\u{302}i"),
        ("istanbul izmir", "İSTANBUL İZMİR"),
    ] {
        assert_eq!(canon.words(plain), canon.words(formatted), "{formatted:?}");
    }
}

/// `../shared/data/multilingual-dev` beside the repository, or `None` (and a line on stderr
/// saying the test skips it) when it is absent.
fn multilingual_dev(test: &str) -> Option<PathBuf> {
    let dir = root().join("../shared/data/multilingual-dev");
    if dir.join("docs.csv").is_file() {
        return Some(dir);
    }
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {test}: {} is absent (the benchmark lives beside the repository, in ../shared)",
        dir.display()
    );
    None
}

/// The rows of a CSV file, each a map from column to value.
fn rows(path: &Path) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).expect("a CSV file");
    let headers = reader.headers().expect("a header").clone();
    reader
        .records()
        .map(|r| {
            let r = r.expect("a record");
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

/// Pairs within one clustering of `members`: the sum over its clusters of n(n-1)/2.
fn pairs<'a>(members: impl IntoIterator<Item = &'a String>) -> u64 {
    let mut sizes: HashMap<&String, u64> = HashMap::new();
    members
        .into_iter()
        .for_each(|c| *sizes.entry(c).or_default() += 1);
    sizes.values().map(|n| n * (n - 1) / 2).sum()
}

#[test]
fn the_multilingual_dev_benchmark_scores_in_every_language() {
    let Some(dir) = multilingual_dev("the_multilingual_dev_benchmark_scores_in_every_language")
    else {
        return;
    };
    let config = Config::from_file(root().join("pipeline.toml")).expect("the shipped config");
    let mut clusterer = Clusterer::new(&config).expect("a clusterer");
    for row in rows(&dir.join("docs.csv")) {
        clusterer.add(&row["id"], &row["text"]).expect("a document");
    }
    let clusters = clusterer.finish().expect("the documents cluster");
    let predicted: HashMap<String, String> = clusters
        .assignments()
        .map(|a| (a.doc_id.to_owned(), a.cluster_id.to_owned()))
        .collect();
    let truth: HashMap<String, String> = rows(&dir.join("truth.csv"))
        .into_iter()
        .map(|r| (r["id"].clone(), r["cluster_id"].clone()))
        .collect();
    let lang: HashMap<String, String> = rows(&dir.join("meta.csv"))
        .into_iter()
        .map(|r| (r["id"].clone(), r["lang"].clone()))
        .collect();
    // Pairwise F1 per language, as the scorer counts it: pairs within the language's
    // documents.
    let mut by_lang: HashMap<&str, Vec<&String>> = HashMap::new();
    for id in truth.keys() {
        by_lang.entry(lang[id].as_str()).or_default().push(id);
    }
    let f1_of = |ids: &[&String]| {
        let true_pairs = pairs(ids.iter().map(|id| &truth[*id]));
        let found = pairs(ids.iter().map(|id| &predicted[*id]));
        let both = pairs(
            &ids.iter()
                .map(|id| format!("{}\u{0}{}", truth[*id], predicted[*id]))
                .collect::<Vec<_>>(),
        );
        2.0 * both as f64 / (true_pairs + found) as f64
    };
    // Recall of true pairs by level and the hard-negative merge rate, per language.
    let mut recall: HashMap<(String, String), (u32, u32)> = HashMap::new();
    let mut negatives: HashMap<String, (u32, u32)> = HashMap::new();
    for pair in rows(&dir.join("pairs_truth.csv")) {
        let joined = u32::from(predicted[&pair["id_a"]] == predicted[&pair["id_b"]]);
        let language = lang[&pair["id_a"]].clone();
        let count = if pair["label"] == "1" {
            recall
                .entry((language, pair["difficulty"].clone()))
                .or_default()
        } else {
            negatives.entry(language).or_default()
        };
        count.0 += joined;
        count.1 += 1;
    }
    let share = |(n, of): (u32, u32)| f64::from(n) / f64::from(of.max(1));
    let mut languages: Vec<&str> = by_lang.keys().copied().collect();
    languages.sort_unstable();
    let mut failures = Vec::new();
    eprintln!("lang    pw F1  format    easy  medium    hard  negatives merged");
    for &language in &languages {
        let f1 = f1_of(&by_lang[language]);
        let level = |l: &str| {
            recall
                .get(&(language.to_owned(), l.to_owned()))
                .copied()
                .map(share)
        };
        let shown =
            |r: Option<f64>| r.map_or("     -".to_owned(), |r| format!("{:6.1}", 100.0 * r));
        let merged = negatives.get(language).copied().unwrap_or_default();
        eprintln!(
            "{language:6} {:6.2} {} {} {} {} {:>6}/{}",
            100.0 * f1,
            shown(level("format")),
            shown(level("easy")),
            shown(level("medium")),
            shown(level("hard")),
            merged.0,
            merged.1
        );
        if f1 < 0.92 {
            failures.push(format!("{language}: pairwise F1 {f1:.4} below 0.92"));
        }
        for (l, floor) in [("format", 1.0), ("easy", 1.0), ("medium", 0.98)] {
            if level(l).is_some_and(|r| r < floor) {
                failures.push(format!("{language}: {l} recall below {floor}"));
            }
        }
        if share(merged) > 0.01 {
            failures.push(format!(
                "{language}: {} of {} hard negatives merged, above 1%",
                merged.0, merged.1
            ));
        }
    }
    let all: Vec<&String> = truth.keys().collect();
    let f1 = f1_of(&all);
    eprintln!("all    {:6.2}", 100.0 * f1);
    if f1 < 0.95 {
        failures.push(format!("the whole set: pairwise F1 {f1:.4} below 0.95"));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
