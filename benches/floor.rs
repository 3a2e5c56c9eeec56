//! The floor: the least work any shingle pipeline must do over a corpus, measured end to end on
//! a CSV file with the same reader design as `megashingle cluster` (one reader thread running
//! the crate's readers into a bounded channel of batches, rayon workers). Each worker canonicalizes
//! every text (`Canonicalizer::for_each_word`), hashes each word once and each shingle window
//! once, and keeps the text's signature (the minima of its shingle keys under the configured
//! functions, `signature.minima` of them): no sets, no boilerplate, no clustering.
//!
//!     FLOOR_CSV=corpus.csv [FLOOR_THREADS=2] cargo bench --bench floor
//!
//! Prints one line of `key=value` fields on stdout: documents, text and file bytes, seconds,
//! MB/s (file bytes, decimal MB), threads and peak RSS. Without FLOOR_CSV it says so and exits 0,
//! so a plain `cargo bench` does not fail. `scripts/bench.sh` runs it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crossbeam_channel::bounded;
use rayon::prelude::*;

use megashingle::canonicalize::stream::WordStream;
use megashingle::canonicalize::Canonicalizer;
use megashingle::config::Config;
use megashingle::io::read::{read_inputs, ReadItem, ReadOptions, Record};
use megashingle::sketch::shingle::{key, ShingleHasher};
use megashingle::sketch::signature::MinHasher;

/// Records per batch sent to the workers, as in the crate's pipeline.
const BATCH_RECORDS: usize = 256;

/// What the workers counted.
#[derive(Default, Clone, Copy)]
struct Counts {
    documents: u64,
    text_bytes: u64,
    words: u64,
    windows: u64,
    checksum: u64,
}

impl Counts {
    fn add(self, o: Counts) -> Counts {
        Counts {
            documents: self.documents + o.documents,
            text_bytes: self.text_bytes + o.text_bytes,
            words: self.words + o.words,
            windows: self.windows + o.windows,
            checksum: self.checksum ^ o.checksum,
        }
    }
}

/// The configuration the CLI uses when run from the crate root: `pipeline.toml`, else defaults.
fn config() -> Config {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline.toml");
    if file.is_file() {
        Config::load(&file).unwrap_or_else(|e| {
            eprintln!("floor: {e}");
            std::process::exit(2)
        })
    } else {
        Config::default()
    }
}

/// Peak resident set size of this process in MB (Linux), 0 when unknown.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb * 1024.0 / 1e6)
}

fn main() {
    let Some(csv) = std::env::var_os("FLOOR_CSV").map(PathBuf::from) else {
        eprintln!("floor: set FLOOR_CSV to a CSV file (id,text) to measure; nothing to do");
        return;
    };
    let threads: usize = std::env::var("FLOOR_THREADS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(2);
    let file_bytes = match std::fs::metadata(&csv) {
        Ok(m) => m.len(),
        Err(e) => {
            eprintln!("floor: {}: {e}", csv.display());
            std::process::exit(2);
        }
    };
    let config = config();
    let canonicalizer = Canonicalizer::new(&config.canonicalize);
    let hasher = ShingleHasher::new(config.signature.seed);
    let minhasher = MinHasher::new(config.signature.minima, config.signature.seed);
    let k = config.shingle.size;
    let started = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let (sender, receiver) = bounded::<Vec<Record>>(2 * pool.current_num_threads() + 2);
    let inputs = [csv.clone()];
    let (read, counts) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch: Vec<Record> = Vec::with_capacity(BATCH_RECORDS);
            let options = ReadOptions::default();
            let mut records = read_inputs(&inputs, &options);
            for item in records.by_ref() {
                match item {
                    Ok(ReadItem::Record(record)) => batch.push(record),
                    Ok(ReadItem::Skipped(message)) => eprintln!("floor: warning: {message}"),
                    Err(e) => return Err(e),
                }
                if batch.len() == BATCH_RECORDS {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS));
                    let _ = sender.send(full);
                }
            }
            let _ = sender.send(batch);
            Ok(records.summary())
        });
        let counts = pool.install(|| {
            receiver
                .into_iter()
                .par_bridge()
                .map_init(
                    || (WordStream::default(), Vec::<u64>::new(), Vec::<u32>::new()),
                    |(buffer, words, keys), batch| {
                        let mut c = Counts::default();
                        for record in batch {
                            words.clear();
                            canonicalizer.for_each_word(&record.text, buffer, |w| {
                                words.push(hasher.word(w));
                            });
                            c.documents += 1;
                            c.text_bytes += record.text.len() as u64;
                            c.words += words.len() as u64;
                            keys.clear();
                            keys.extend(words.windows(k).map(|w| key(hasher.window(w))));
                            c.windows += keys.len() as u64;
                            let signature = minhasher.signature(keys);
                            c.checksum ^= signature.iter().fold(0, |h, &m| h ^ u64::from(m));
                        }
                        c
                    },
                )
                .reduce(Counts::default, Counts::add)
        });
        (reader.join().expect("the reader does not panic"), counts)
    });
    let seconds = started.elapsed().as_secs_f64();
    if let Err(e) = read {
        eprintln!("floor: {e}");
        std::process::exit(2);
    }
    println!(
        "floor documents={} text_bytes={} file_bytes={} words={} windows={} seconds={:.3} \
         mb_per_s={:.2} docs_per_s={:.0} threads={} peak_rss_mb={:.1} checksum={:016x}",
        counts.documents,
        counts.text_bytes,
        file_bytes,
        counts.words,
        counts.windows,
        seconds,
        file_bytes as f64 / 1e6 / seconds,
        counts.documents as f64 / seconds,
        threads,
        peak_rss_mb(),
        counts.checksum,
    );
}
