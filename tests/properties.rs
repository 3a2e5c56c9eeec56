//! Property tests: the minima estimate against the exact Jaccard, union-find against a plain
//! graph search, and the independence of the clustering from input order and thread count.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use megashingle::cluster::UnionFind;
use megashingle::compare::compare;
use megashingle::config::{Config, Plan};
use megashingle::io::read::ReadOptions;
use megashingle::sketch::signature::{estimate_jaccard, splitmix64, MinHasher};
use megashingle::{Clusterer, RunOptions};

/// Words are `w0` … `w199`: one canonical word each, so texts are plain word sequences.
const VOCABULARY: usize = 200;
/// The default shingle size: texts with fewer words are too short to compare.
const SHINGLE_SIZE: usize = 3;

fn text(words: &[usize]) -> String {
    words
        .iter()
        .map(|w| format!("w{w}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One position of the edit script: a draw in 0..100 (the position is edited when the draw is
/// below the share), the kind of edit, and the word to put in.
type Edit = (u32, u8, usize);

fn edit() -> impl Strategy<Value = Edit> {
    (0u32..100, 0u8..3, 0..VOCABULARY)
}

/// Applies the edits whose draw is below `share` percent: 0 replaces the word, 1 deletes it,
/// 2 inserts a word before it.
fn apply(base: &[usize], edits: &[Edit], share: u32) -> Vec<usize> {
    let mut out = Vec::with_capacity(base.len() + base.len() / 2);
    for (&word, &(draw, kind, new)) in base.iter().zip(edits) {
        if draw >= share {
            out.push(word);
            continue;
        }
        match kind {
            0 => out.push(new),
            1 => {}
            _ => {
                out.push(new);
                out.push(word);
            }
        }
    }
    out
}

/// A base text of 50–300 words, an edit share of 0–80 %, and an edit script as long as the text.
fn text_pair() -> impl Strategy<Value = (Vec<usize>, Vec<Edit>, u32)> {
    prop::collection::vec(0..VOCABULARY, 50..=300).prop_flat_map(|base| {
        let n = base.len();
        (
            Just(base),
            prop::collection::vec(edit(), n),
            prop_oneof![Just(0u32), 0u32..=10, 0u32..=80],
        )
    })
}

fn config_with_k(k: usize) -> Config {
    let mut config = Config::default();
    config.shingle.size = k;
    config
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The share of equal minima is within 4 standard errors of the exact Jaccard.
    #[test]
    fn estimate_is_within_four_standard_errors(
        (base, edits, share) in text_pair(),
        k in prop_oneof![3 => Just(5usize), 1 => 1usize..=6],
    ) {
        let second = apply(&base, &edits, share);
        prop_assume!(second.len() >= k);
        let config = config_with_k(k);
        let (a, b) = (text(&base), text(&second));
        let c = compare((&a, "a"), (&b, "b"), &Plan::try_from(&config).unwrap()).expect("both texts have k words");
        let m = config.signature.minima as f64;
        prop_assert_eq!(c.minima, 84);
        // Exact values are consistent with the counts.
        let union = (c.first_shingles + c.second_shingles - c.common) as f64;
        prop_assert!((c.jaccard - c.common as f64 / union).abs() < 1e-12);
        prop_assert!((0.0..=1.0).contains(&c.estimated_jaccard));
        // The estimate is a count of equal minima.
        let agreeing = c.estimated_jaccard * m;
        prop_assert!((agreeing - agreeing.round()).abs() < 1e-9, "{}", agreeing);
        // Identical and disjoint sets are exact: a_i·x + b_i is a bijection.
        if c.common == 0 {
            prop_assert_eq!(c.estimated_jaccard, 0.0);
        }
        if c.jaccard == 1.0 {
            prop_assert_eq!(c.estimated_jaccard, 1.0);
        }
        // The count of equal minima is Binomial(m, J) (see `equal_minima_are_binomial`),
        // whose tails near J = 0 or 1 are much heavier than the normal curve's: the bare 4 SE
        // bound fails about once in 40 runs of 128 cases. A slack of 3 minima for the
        // discreteness and skew keeps a false alarm below about 1 in 3000 runs.
        let j = c.jaccard;
        let standard_error = (j * (1.0 - j) / m).sqrt().max(0.5 / m);
        let bound = 4.0 * standard_error + 3.0 / m;
        prop_assert!(
            (c.estimated_jaccard - j).abs() <= bound,
            "exact {:.4}, estimated {:.4}, bound {:.4} (k = {}, {} and {} shingles, {} common)",
            j, c.estimated_jaccard, bound, k,
            c.first_shingles, c.second_shingles, c.common
        );
    }
}

/// The number of equal minima of two sets behaves like Binomial(84, J): the 84 functions act as
/// independent random permutations. Deterministic: the sets come from a fixed SplitMix64 stream.
#[test]
fn equal_minima_are_binomial() {
    let config = Config::default();
    let hasher = MinHasher::new(config.signature.minima, config.signature.seed);
    let m = hasher.len() as f64;
    let mut state = 0x1234_5678;
    for (union, common) in [(100usize, 50usize), (100, 10), (60, 57)] {
        let trials = 3000;
        let (mut sum, mut squares) = (0.0, 0.0);
        for _ in 0..trials {
            let values: Vec<u32> = (0..union).map(|_| splitmix64(&mut state) as u32).collect();
            let (shared, rest) = values.split_at(common);
            let (only_a, only_b) = rest.split_at(rest.len() / 2);
            let a: Vec<u32> = shared.iter().chain(only_a).copied().collect();
            let b: Vec<u32> = shared.iter().chain(only_b).copied().collect();
            let e = estimate_jaccard(&hasher.signature(&a), &hasher.signature(&b));
            sum += e;
            squares += e * e;
        }
        let j = common as f64 / union as f64;
        let mean = sum / trials as f64;
        let variance = squares / trials as f64 - mean * mean;
        let binomial = j * (1.0 - j) / m;
        // The mean of 3000 estimates has a standard error of sqrt(binomial / 3000) < 0.001.
        assert!((mean - j).abs() < 0.004, "J = {j}: mean estimate {mean}");
        assert!(
            (0.85..=1.15).contains(&(variance / binomial)),
            "J = {j}: variance {variance}, binomial {binomial}"
        );
    }
}

/// The connected components of `0..n` under `edges`, each sorted, in order of their smallest
/// member, found by breadth-first search.
fn components(n: usize, edges: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut adjacent = vec![Vec::new(); n];
    for &(a, b) in edges {
        adjacent[a as usize].push(b);
        adjacent[b as usize].push(a);
    }
    let mut seen = vec![false; n];
    let mut out = Vec::new();
    for start in 0..n {
        if seen[start] {
            continue;
        }
        seen[start] = true;
        let mut component = vec![start as u32];
        let mut queue = VecDeque::from([start]);
        while let Some(x) = queue.pop_front() {
            for &y in &adjacent[x] {
                if !seen[y as usize] {
                    seen[y as usize] = true;
                    component.push(y);
                    queue.push_back(y as usize);
                }
            }
        }
        component.sort_unstable();
        out.push(component);
    }
    out
}

fn graph() -> impl Strategy<Value = (usize, Vec<(u32, u32)>)> {
    (1usize..80).prop_flat_map(|n| {
        let node = 0..n as u32;
        (Just(n), prop::collection::vec((node.clone(), node), 0..120))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Union-find gives the same partition as a breadth-first search over the same edges, and
    /// `union` reports a merge exactly `n - components` times.
    #[test]
    fn union_find_agrees_with_breadth_first_search((n, edges) in graph()) {
        let mut sets = UnionFind::new(n);
        let merges = edges.iter().filter(|&&(a, b)| sets.union(a, b)).count();
        let expected = components(n, &edges);
        prop_assert_eq!(merges, n - expected.len());
        for &(a, b) in &edges {
            prop_assert_eq!(sets.find(a), sets.find(b));
        }
        prop_assert_eq!(sets.sets(), expected);
    }
}

/// One document of the collection test.
#[derive(Debug, Clone)]
struct Doc {
    id: String,
    text: String,
}

/// A few random documents, each with 0–2 near copies (0–3 word edits; no edit is an exact
/// copy), plus 0–2 texts shorter than the shingle size.
fn collection() -> impl Strategy<Value = Vec<Doc>> {
    let copy = prop::collection::vec((0usize..1000, 0..VOCABULARY), 0..=3);
    let family = (
        prop::collection::vec(0..VOCABULARY, 20..=150),
        prop::collection::vec(copy, 0..=2),
    );
    (
        prop::collection::vec(family, 2..=5),
        prop::collection::vec(prop::collection::vec(0..VOCABULARY, 0..SHINGLE_SIZE), 0..=2),
    )
        .prop_map(|(families, shorts)| {
            let mut docs = Vec::new();
            for (i, (base, copies)) in families.into_iter().enumerate() {
                for (j, edits) in copies.into_iter().enumerate() {
                    let mut words = base.clone();
                    for (at, word) in edits {
                        let at = at % words.len();
                        words[at] = word;
                    }
                    docs.push(Doc {
                        id: format!("d{i}-copy{j}"),
                        text: text(&words),
                    });
                }
                docs.push(Doc {
                    id: format!("d{i}"),
                    text: text(&base),
                });
            }
            for (i, words) in shorts.into_iter().enumerate() {
                docs.push(Doc {
                    id: format!("short{i}"),
                    text: text(&words),
                });
            }
            docs
        })
}

fn write_csv(path: &Path, docs: &[Doc]) {
    let mut writer = csv::Writer::from_path(path).expect("create the CSV");
    writer.write_record(["id", "text"]).unwrap();
    for doc in docs {
        writer.write_record([&doc.id, &doc.text]).unwrap();
    }
    writer.flush().unwrap();
}

/// Owned output rows: doc_id, cluster_id, cluster_size, similarity, status.
type OwnedRow = (String, String, usize, Option<f64>, String);

fn cluster_rows(input: PathBuf, threads: usize) -> Vec<OwnedRow> {
    let config = Config::default();
    let options = RunOptions {
        threads,
        ..RunOptions::default()
    };
    let mut clusterer = Clusterer::with_options(&config, options).expect("a clusterer");
    clusterer
        .read(&[input], &ReadOptions::default())
        .expect("the CSV is readable");
    let clusters = clusterer.finish().expect("the documents cluster");
    clusters
        .assignments()
        .map(|r| {
            (
                r.doc_id.to_owned(),
                r.cluster_id.to_owned(),
                r.cluster_size,
                r.similarity,
                r.status.to_string(),
            )
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// The rows are the same for any input order and any number of threads.
    #[test]
    fn input_order_and_threads_change_nothing(
        (docs, order) in collection().prop_flat_map(|docs| {
            let n = docs.len();
            (Just(docs), Just((0..n).collect::<Vec<usize>>()).prop_shuffle())
        })
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (forward, permuted) = (dir.path().join("forward.csv"), dir.path().join("permuted.csv"));
        write_csv(&forward, &docs);
        let reordered: Vec<Doc> = order.iter().map(|&i| docs[i].clone()).collect();
        write_csv(&permuted, &reordered);

        let reference = cluster_rows(forward.clone(), 1);
        prop_assert_eq!(&cluster_rows(forward, 2), &reference);
        prop_assert_eq!(&cluster_rows(permuted.clone(), 1), &reference);
        prop_assert_eq!(&cluster_rows(permuted, 2), &reference);

        // One row per document, each cluster's rows together, and sizes that add up.
        prop_assert_eq!(reference.len(), docs.len());
        let mut ids: Vec<&str> = reference.iter().map(|r| r.0.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), docs.len());
        let mut at = 0;
        while at < reference.len() {
            let (cluster_id, size) = (&reference[at].1, reference[at].2);
            prop_assert!(at + size <= reference.len());
            let members = &reference[at..at + size];
            prop_assert!(members.iter().all(|r| &r.1 == cluster_id && r.2 == size));
            prop_assert_eq!(
                members.iter().map(|r| r.0.as_str()).min(),
                Some(cluster_id.as_str())
            );
            at += size;
        }
        // Exact copies always join their original; short texts are alone and unscored.
        let cluster_of = |id: &str| reference.iter().find(|r| r.0 == id).map(|r| r.1.clone());
        for doc in &docs {
            if let Some(base) = doc.id.split("-copy").next().filter(|_| doc.id.contains("-copy")) {
                let original = docs.iter().find(|d| d.id == base).unwrap();
                if original.text == doc.text {
                    prop_assert_eq!(cluster_of(&doc.id), cluster_of(base));
                }
            }
        }
        for row in reference.iter().filter(|r| r.0.starts_with("short")) {
            prop_assert_eq!(row.2, 1);
            prop_assert_eq!(row.3, None);
            prop_assert_eq!(row.4.as_str(), "too_short");
        }
    }
}
