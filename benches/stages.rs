//! Each stage of the pipeline on its own, over a fixed sample of ~2,000 news-like documents
//! (every fixture file plus documents generated deterministically from them; see
//! `sample/mod.rs`). Each stage gets its inputs precomputed, so a group measures that stage
//! only:
//!
//! - `floor`: canonical words → one SipHash per word → one hash per shingle window, nothing
//!   else (no set, no signature): the least any shingle pipeline must do;
//! - `canonicalize`: `Canonicalizer::for_each_word` (main text, normalization, tokenization);
//! - `per_document`: `Sketcher::shingles` as the pipeline calls it, all the per-document work
//!   before signatures (main text and, when boilerplate is counted, the whole page's set too);
//! - `shingle_hash`: word hashes, windows and `shingle_set` from canonical words;
//! - `signature`: `MinHasher::signature` from shingle sets;
//! - `candidate_keys`: `KeyMaker::candidate_keys` from signatures, for the configured grouping
//!   and the classic 6×14 megashingles;
//! - `cluster`: `cluster::cluster` (candidate index, verification, union-find) from the
//!   pipeline's own sketches (boilerplate left out);
//! - `union_find`: `UnionFind` with random unions;
//! - `pipeline`: `Clusterer` on the sample as a CSV file, for scale.
//!
//! Throughput is in bytes of raw document text where the stage is per document, so every group
//! reads as "corpus MB/s this stage alone could sustain on one thread" (`cluster` and `pipeline`
//! use the rayon pool, one thread per core). Run: `cargo bench --bench stages [-- FILTER]`.

mod sample;

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

use megashingle::canonicalize::stream::WordStream;
use megashingle::canonicalize::Canonicalizer;
use megashingle::cluster::{cluster, UnionFind};
use megashingle::config::{Config, Matching, Plan};
use megashingle::corpus::set_store::SetStore;
use megashingle::engine::{CollectOptions, Collector};
use megashingle::io::read::ReadOptions;
use megashingle::sketch::grouping::Grouping;
use megashingle::sketch::keys::KeyMaker;
use megashingle::sketch::shingle::{shingle_set, ShingleHasher};
use megashingle::sketch::signature::MinHasher;
use megashingle::sketch::{SketchBuffers, Sketcher};
use megashingle::Clusterer;

/// The configuration the CLI uses when run from the crate root: `pipeline.toml`, else defaults.
fn config() -> Config {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline.toml");
    if file.is_file() {
        Config::load(&file).expect("pipeline.toml is valid")
    } else {
        Config::default()
    }
}

/// Everything the stage groups start from.
struct Inputs {
    config: Config,
    documents: Vec<sample::Document>,
    texts: Vec<String>,
    bytes: u64,
    words: Vec<Vec<String>>,
    sets: Vec<Vec<u32>>,
    signatures: Vec<Vec<u32>>,
}

fn inputs() -> Inputs {
    let config = config();
    let documents = sample::documents(sample::SAMPLE_DOCUMENTS);
    let texts: Vec<String> = documents.iter().map(|d| d.text.clone()).collect();
    let bytes = texts.iter().map(|t| t.len() as u64).sum();
    let sketcher = Sketcher::new(&Plan::try_from(&config).unwrap());
    let mut scratch = SketchBuffers::default();
    let words = texts
        .iter()
        .map(|t| sketcher.canonicalizer().words(t))
        .collect();
    let sets: Vec<Vec<u32>> = texts
        .iter()
        .map(|t| sketcher.shingles(t, &mut scratch, false).set)
        .collect();
    let signatures = sets.iter().map(|s| sketcher.signature(s)).collect();
    Inputs {
        config,
        documents,
        texts,
        bytes,
        words,
        sets,
        signatures,
    }
}

/// The floor of one text: canonical words, one hash per word and one per shingle window.
fn floor_one(
    canonicalizer: &Canonicalizer,
    hasher: &ShingleHasher,
    k: usize,
    text: &str,
    buffer: &mut WordStream,
    words: &mut Vec<u64>,
) -> u64 {
    words.clear();
    canonicalizer.for_each_word(text, buffer, |w| words.push(hasher.word(w)));
    words
        .windows(k)
        .fold(0u64, |acc, window| acc ^ hasher.window(window))
}

fn stages(c: &mut Criterion) {
    let Inputs {
        config,
        documents,
        texts,
        bytes,
        words,
        sets,
        signatures,
    } = inputs();
    let shingles: usize = sets.iter().map(Vec::len).sum();
    eprintln!(
        "sample: {} documents, {:.2} MB, {} canonical words, {shingles} distinct shingles",
        documents.len(),
        bytes as f64 / 1e6,
        words.iter().map(Vec::len).sum::<usize>()
    );
    let canonicalizer = Canonicalizer::new(&config.canonicalize);
    let hasher = ShingleHasher::new(config.signature.seed);
    let k = config.shingle.size;

    let mut group = c.benchmark_group("floor");
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("words_and_window_hashes", |b| {
        let (mut buffer, mut words) = (WordStream::default(), Vec::new());
        b.iter(|| {
            texts.iter().fold(0u64, |acc, t| {
                acc ^ floor_one(&canonicalizer, &hasher, k, t, &mut buffer, &mut words)
            })
        });
    });
    group.finish();

    let mut group = c.benchmark_group("canonicalize");
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("for_each_word", |b| {
        let mut buffer = WordStream::default();
        b.iter(|| {
            let mut n = 0usize;
            for t in &texts {
                canonicalizer.for_each_word(t, &mut buffer, |w| n += w.len());
            }
            n
        });
    });
    group.finish();

    let sketcher = Sketcher::new(&Plan::try_from(&config).unwrap());
    let mut group = c.benchmark_group("per_document");
    group.throughput(Throughput::Bytes(bytes));
    // As the pipeline calls it: with the whole page's set too when boilerplate is counted.
    let pages = config.boilerplate.min_documents > 0;
    group.bench_function("sketcher_shingles", |b| {
        let mut scratch = SketchBuffers::default();
        b.iter(|| {
            texts
                .iter()
                .map(|t| sketcher.shingles(t, &mut scratch, pages).set.len())
                .sum::<usize>()
        });
    });
    group.finish();

    let mut group = c.benchmark_group("shingle_hash");
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("word_hashes_windows_set", |b| {
        let mut hashes = Vec::new();
        b.iter(|| {
            words
                .iter()
                .map(|doc| {
                    hashes.clear();
                    hashes.extend(doc.iter().map(|w| hasher.word(w)));
                    shingle_set(&hasher.windows(&hashes, k)).len()
                })
                .sum::<usize>()
        });
    });
    group.finish();

    let minhasher = MinHasher::new(config.signature.minima, config.signature.seed);
    let mut group = c.benchmark_group("signature");
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function(format!("minhash_{}", config.signature.minima), |b| {
        b.iter(|| {
            sets.iter()
                .map(|s| minhasher.signature(black_box(s))[0])
                .fold(0u32, |a, m| a ^ m)
        });
    });
    group.finish();

    let configured = config.supershingle.grouping(config.signature.minima);
    let classic = Grouping {
        groups: 6,
        minima_per_group: 14,
        matching: Matching::Megashingle,
    };
    let mut group = c.benchmark_group("candidate_keys");
    group.throughput(Throughput::Bytes(bytes));
    for (name, grouping) in [("configured", configured), ("classic", classic)] {
        if grouping.groups * grouping.minima_per_group > config.signature.minima {
            continue;
        }
        let maker = KeyMaker::new(&grouping, config.signature.seed);
        // e.g. configured_42x2_supershingle, classic_6x14_megashingle
        let label = format!(
            "{name}_{}x{}_{:?}",
            grouping.groups, grouping.minima_per_group, grouping.matching
        )
        .to_lowercase();
        group.bench_function(label, |b| {
            b.iter(|| {
                signatures
                    .iter()
                    .map(|s| maker.candidate_keys(black_box(s)).len())
                    .sum::<usize>()
            });
        });
    }
    group.finish();

    // The pipeline's own sketches: the sample as a CSV file, read and sketched as the CLI does
    // (boilerplate found over the sample and left out of the signatures).
    let dir = tempfile::tempdir().expect("a temporary folder");
    let csv = dir.path().join("sample.csv");
    sample::write_csv(&documents, &csv);
    let options = ReadOptions::default();
    let inputs = [csv.clone()];
    let resolved = Plan::try_from(&config).unwrap();
    let mut collector = Collector::new(&resolved, CollectOptions::default()).expect("a collector");
    collector.read(&inputs, &options).expect("the sample reads");
    let collection = collector.finish().expect("the sample sketches");
    let mut group = c.benchmark_group("cluster");
    group.throughput(Throughput::Bytes(bytes));
    SetStore::reading_of(collection.sets.as_ref(), 0, |sets| {
        group.bench_function("candidates_verify_union_find", |b| {
            b.iter(|| {
                cluster(black_box(&collection.sketches), sets, &resolved)
                    .0
                    .len()
            });
        });
    })
    .expect("the sample's sets read back");
    group.finish();

    let n = 100_000usize;
    let mut rng = sample::Rng::new(7);
    let unions: Vec<(u32, u32)> = (0..n)
        .map(|_| (rng.below(n) as u32, rng.below(n) as u32))
        .collect();
    let mut group = c.benchmark_group("union_find");
    group.throughput(Throughput::Elements(unions.len() as u64));
    group.bench_function("100k_random_unions", |b| {
        b.iter_batched_ref(
            || UnionFind::new(n),
            |sets| unions.iter().filter(|&&(a, b)| sets.union(a, b)).count(),
            BatchSize::LargeInput,
        );
    });
    group.bench_function("100k_random_unions_then_sets", |b| {
        b.iter_batched_ref(
            || UnionFind::new(n),
            |sets| {
                for &(a, b) in &unions {
                    sets.union(a, b);
                }
                sets.sets().len()
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();

    let mut group = c.benchmark_group("pipeline");
    group.throughput(Throughput::Bytes(
        std::fs::metadata(&csv).expect("the sample").len(),
    ));
    group.bench_function("read_sketch_cluster", |b| {
        b.iter(|| {
            let mut clusterer = Clusterer::new(&config).expect("a clusterer");
            clusterer.read(&inputs, &options).expect("the sample reads");
            clusterer.finish().expect("the sample clusters").len()
        });
    });
    group.finish();
}

fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = criterion();
    targets = stages
}
criterion_main!(benches);
