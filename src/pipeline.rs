//! Running the stages over inputs: one reader thread sends batches of records over a bounded
//! channel to rayon workers that canonicalize and shingle them (a record's text is dropped as
//! soon as its shingle set is made), and one collector gathers the sets. Documents are then put
//! in id order, so clusters and output do not depend on input order or thread count; shingles
//! common to many documents are found (boilerplate), and each set becomes a signature. Progress bars and
//! warnings go to stderr through a `Reporter`.

use std::path::PathBuf;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::boilerplate::{document_counts, Boilerplate};
use crate::cluster::{cluster, Cluster, ClusterStats};
use crate::config::Config;
use crate::io::read::{read_inputs, Origin, ReadError, ReadOptions, ReadSummary, Record};
use crate::io::write::Row;
use crate::keyset::KeySet;
use crate::sketch::{Scratch, Shingles, Sketch, Sketcher};

/// Records per batch sent to the workers.
const BATCH_RECORDS: usize = 256;
/// Text bytes per batch sent to the workers.
const BATCH_BYTES: usize = 4 << 20;

/// Progress bars and warnings on stderr.
#[derive(Clone)]
pub struct Reporter {
    bars: MultiProgress,
}

impl Reporter {
    /// Bars drawn when `visible` (stderr is a terminal and not `--quiet`), hidden otherwise.
    pub fn new(visible: bool) -> Reporter {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Reporter {
            bars: MultiProgress::with_draw_target(target),
        }
    }

    /// A counting bar for one stage.
    pub fn bar(&self, stage: &str, unit: &str) -> ProgressBar {
        let style = ProgressStyle::with_template(&format!(
            "{{prefix:>10.bold}} {{spinner}} {{human_pos}} {unit} {{per_sec:>12}} {{elapsed:>4}}"
        ))
        .expect("a valid template");
        let bar = self.bars.add(ProgressBar::new_spinner().with_style(style));
        bar.set_prefix(stage.to_owned());
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    }

    /// Prints one warning line without breaking the bars.
    pub fn warn(&self, message: &str) {
        let line = format!("warning: {message}");
        if self.bars.is_hidden() {
            eprintln!("{line}");
        } else {
            let _ = self.bars.println(line);
        }
    }
}

/// Wall-clock time of each stage, in the order they ran.
#[derive(Debug, Clone, Default)]
pub struct Timings(pub Vec<(&'static str, Duration)>);

impl Timings {
    /// Records the time from `since` to now as `stage`, and moves `since` to now.
    pub fn lap(&mut self, stage: &'static str, since: &mut std::time::Instant) {
        let now = std::time::Instant::now();
        self.0.push((stage, now - *since));
        *since = now;
    }

    /// Runs `f`, adding its wall-clock time to `stage`.
    pub fn time<T>(&mut self, stage: &'static str, f: impl FnOnce() -> T) -> T {
        let started = std::time::Instant::now();
        let out = f();
        let elapsed = started.elapsed();
        match self.0.iter_mut().find(|(name, _)| *name == stage) {
            Some((_, total)) => *total += elapsed,
            None => self.0.push((stage, elapsed)),
        }
        out
    }

    /// One line: each stage with its seconds.
    pub fn line(&self) -> String {
        self.0
            .iter()
            .map(|(stage, d)| format!("{stage} {:.3} s", d.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A document read and shingled, waiting for its sketch.
struct Shingled {
    id: String,
    time: Option<i64>,
    origin: Origin,
    content: Content,
}

/// What is kept of a document until every input is read.
enum Content {
    /// Its shingle sets, for corpus statistics.
    Shingles(Shingles),
    /// Its finished sketch, when no corpus statistics are wanted.
    Sketch(Sketch),
}

/// Everything read and sketched from the inputs, by document number (documents in id order,
/// ids unique).
#[derive(Debug)]
pub struct Collection {
    /// Document ids.
    pub ids: Vec<String>,
    /// Where each document was read.
    pub origins: Vec<Origin>,
    /// Each document's time, when a time column is read.
    pub times: Vec<Option<i64>>,
    /// Each document's sketch.
    pub sketches: Vec<Sketch>,
    /// Counts from reading.
    pub read: ReadSummary,
    /// Records dropped for a duplicate id.
    pub duplicates: u64,
    /// Shingles left out as boilerplate: those found in this collection and those given.
    pub boilerplate: Boilerplate,
    /// Time of each stage so far.
    pub timings: Timings,
}

/// Reads and sketches all inputs with `threads` threads (0: one per core).
pub fn sketch_inputs(
    inputs: &[PathBuf],
    options: &ReadOptions,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
) -> Result<Collection, ReadError> {
    sketch_inputs_with(
        inputs,
        options,
        config,
        threads,
        reporter,
        &Boilerplate::none(),
    )
}

/// [`sketch_inputs`], leaving out `known` boilerplate shingles (found in earlier
/// collections) besides those the corpus statistics of these inputs find.
pub fn sketch_inputs_with(
    inputs: &[PathBuf],
    options: &ReadOptions,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
    known: &Boilerplate,
) -> Result<Collection, ReadError> {
    give_back_large_blocks();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("sketch-{i}"))
        .build()
        .expect("a thread pool");
    let (sender, receiver) = bounded::<Vec<Record>>(2 * pool.current_num_threads() + 2);
    let reading = reporter.bar("reading", "docs");
    let shingling = reporter.bar("shingling", "docs");
    let sketcher = Sketcher::new(config);
    let statistics = config.boilerplate.min_documents > 0 || config.boilerplate.min_stories > 0;
    let mut timings = Timings::default();
    let started = std::time::Instant::now();
    let (read, batches) = std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("reader".into())
            .spawn_scoped(scope, || {
                // The sender is moved here, so the channel closes when reading ends.
                let sender = sender;
                let mut warn = |message: String| reporter.warn(&message);
                send_batches(inputs, options, &sender, &|| reading.inc(1), &mut warn)
            })
            .expect("spawn the reader thread");
        let batches: Vec<Vec<Shingled>> = pool.install(|| {
            receiver
                .into_iter()
                .par_bridge()
                .map_init(Scratch::default, |scratch, batch| {
                    let documents: Vec<Shingled> = batch
                        .into_iter()
                        .map(|record| {
                            let pages = config.boilerplate.min_documents > 0;
                            let shingles = sketcher.shingles(&record.text, scratch, pages);
                            let content = if statistics {
                                Content::Shingles(shingles)
                            } else {
                                Content::Sketch(sketcher.sketch_shingles(&shingles, known))
                            };
                            Shingled {
                                id: record.id,
                                time: record.time,
                                origin: record.origin,
                                content,
                            }
                        })
                        .collect();
                    shingling.inc(documents.len() as u64);
                    documents
                })
                .collect()
        });
        (
            reader.join().expect("the reader thread does not panic"),
            batches,
        )
    });
    reading.finish();
    shingling.finish();
    timings.0.push(("reading and shingling", started.elapsed()));
    let read = read?;
    let mut documents: Vec<Shingled> = batches.into_iter().flatten().collect();
    let duplicates = timings.time("ordering by id", || {
        drop_duplicate_ids(&mut documents, options.strict, reporter)
    })?;
    give_back_free_pages();
    let mut ids = Vec::with_capacity(documents.len());
    let mut origins = Vec::with_capacity(documents.len());
    let mut times = Vec::with_capacity(documents.len());
    let mut contents = Vec::with_capacity(documents.len());
    for d in documents {
        ids.push(d.id);
        origins.push(d.origin);
        times.push(d.time);
        contents.push(d.content);
    }
    let sketching = reporter.bar("sketching", "docs");
    let sketch_started = std::time::Instant::now();
    let (boilerplate, sketches) = if statistics {
        let shingles = contents
            .into_iter()
            .map(|c| match c {
                Content::Shingles(s) => s,
                Content::Sketch(_) => unreachable!("shingle sets are kept when statistics are on"),
            })
            .collect();
        pool.install(|| {
            sketch_with_statistics(shingles, &sketcher, config, known, &sketching, &mut timings)
        })
    } else {
        let sketches = contents
            .into_iter()
            .map(|c| match c {
                Content::Sketch(sketch) => sketch,
                Content::Shingles(_) => unreachable!("sketched by the workers"),
            })
            .collect();
        timings
            .0
            .push(("collecting sketches", sketch_started.elapsed()));
        (known.clone(), sketches)
    };
    sketching.finish();
    Ok(Collection {
        ids,
        origins,
        times,
        sketches,
        read,
        duplicates,
        boilerplate,
        timings,
    })
}

/// Has glibc's malloc map every block of 128 KiB or more on its own and unmap it when freed.
/// By default it raises that threshold to the size of each such block freed (up to 32 MiB),
/// after which the large lists that each stage makes and drops (key ranges, candidate keys,
/// pairs) come from the heap, and their memory stays with the process for good.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_large_blocks() {
    use std::ffi::c_int;
    const M_MMAP_THRESHOLD: c_int = -3;
    extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
    }
    // SAFETY: mallopt only sets a tuning parameter of malloc, and any threshold is valid.
    unsafe {
        mallopt(M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_large_blocks() {}

/// Has glibc's malloc give back to the system every whole page of its heaps that is free.
/// Shingle sets and other per-document lists are small blocks on the heap; when many are freed
/// (the page sets once counted, the keys a set leaves out, the batches once ordered), the holes
/// they leave between the sets still held stay with the process unless trimmed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn give_back_free_pages() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim only returns free memory of malloc's own heaps to the system.
    unsafe {
        malloc_trim(0);
    }
}

/// Other allocators are left as they are.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn give_back_free_pages() {}

/// Reads every input and sends its records in batches (of `BATCH_RECORDS` records or
/// `BATCH_BYTES` of text, whichever comes first) over `sender`, calling `on_record` for each
/// record and `warn` for each skipped one. The reader thread of a pipeline runs this.
pub fn send_batches(
    inputs: &[PathBuf],
    options: &ReadOptions,
    sender: &Sender<Vec<Record>>,
    on_record: &dyn Fn(),
    warn: &mut dyn FnMut(String),
) -> Result<ReadSummary, ReadError> {
    let mut batch = Vec::with_capacity(BATCH_RECORDS);
    let mut bytes = 0;
    let mut emit = |record: Record| {
        on_record();
        bytes += record.text.len();
        batch.push(record);
        if batch.len() >= BATCH_RECORDS || bytes >= BATCH_BYTES {
            bytes = 0;
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS));
            // A closed channel means the workers stopped; reading on is useless.
            let _ = sender.send(full);
        }
    };
    let result = read_inputs(inputs, options, &mut emit, warn);
    if !batch.is_empty() {
        let _ = sender.send(batch);
    }
    result
}

/// Finds the boilerplate shingles of the collection (document frequency, then story frequency
/// over a first clustering), adds them to the `known` ones and sketches every document
/// without them. The shingle sets are taken: page sets are dropped once counted, and each main
/// set is held once, as its sketch's set (plus the keys that set leaves out, where a second
/// sketch may need them).
fn sketch_with_statistics(
    mut shingles: Vec<Shingles>,
    sketcher: &Sketcher,
    config: &Config,
    known: &Boilerplate,
    sketching: &ProgressBar,
    timings: &mut Timings,
) -> (Boilerplate, Vec<Sketch>) {
    let (min_documents, min_stories) = (
        config.boilerplate.min_documents,
        config.boilerplate.min_stories,
    );
    let (mut boilerplate, frequent) = timings.time("document frequency", || {
        let pages: Vec<&[u32]> = shingles.iter().map(Shingles::page_set).collect();
        let floor = [min_documents, min_stories]
            .into_iter()
            .filter(|&n| n > 0)
            .min();
        let counts = document_counts(&pages, floor.unwrap_or(0));
        let mut boilerplate = Boilerplate::from_counts(&counts, min_documents);
        boilerplate.extend(known);
        (boilerplate, counts.into_keys().collect::<Vec<u32>>())
    });
    shingles.iter_mut().for_each(|s| s.page = None);
    give_back_free_pages();
    // Story frequency only ever adds frequent shingles to the boilerplate. A document's
    // left-out keys are kept for its second sketch only when, with every frequent shingle of
    // its set gone, less than a fifth of its main set would be left: then the whole main set
    // may be kept, and its left-out keys are needed again.
    let (frequent_set, keep_rests): (KeySet, bool) = if min_stories > 0 {
        (frequent.iter().copied().collect(), true)
    } else {
        (KeySet::default(), false)
    };
    let rest_needed = |set: &Option<Vec<u32>>, left_out: usize| match set {
        None => keep_rests,
        Some(_) if !keep_rests || left_out == 0 => false,
        Some(set) => {
            let frequent = set.iter().filter(|&&s| frequent_set.contains(s)).count();
            (set.len() - frequent) * 5 < set.len() + left_out
        }
    };
    // Each document's sketch, and the keys of its main set that the sketch's set leaves out
    // where they are needed.
    let (mut sketches, rests) = timings.time("sketching", || {
        let chunks: Vec<(Vec<Sketch>, Rests)> = shingles
            .into_par_iter()
            .chunks(REST_CHUNK)
            .map(|chunk| {
                let mut rests = Rests::default();
                let sketches = chunk
                    .into_iter()
                    .map(|s| {
                        sketching.inc(1);
                        let start = rests.keys.len();
                        let sketch = sketcher.sketch_owned(s, &boilerplate, &mut rests.keys);
                        let left_out = rests.keys.len() - start;
                        if !rest_needed(&sketch.set, left_out) {
                            rests.keys.truncate(start);
                        }
                        rests.ends.push(rests.keys.len());
                        rests.left_out.push(left_out as u32);
                        sketch
                    })
                    .collect();
                rests.keys.shrink_to_fit();
                (sketches, rests)
            })
            .collect();
        let mut sketches = Vec::with_capacity(chunks.len() * REST_CHUNK);
        let mut rests = Vec::with_capacity(chunks.len());
        for (s, r) in chunks {
            sketches.extend(s);
            rests.push(r);
        }
        (sketches, rests)
    });
    drop(frequent_set);
    give_back_free_pages();
    let rest = |d: usize| rests[d / REST_CHUNK].get(d % REST_CHUNK);
    let left_out = |d: usize| rests[d / REST_CHUNK].left_out[d % REST_CHUNK] as usize;
    if min_stories > 0 {
        let stories = timings.time("first clustering", || {
            preliminary_stories(&sketches, config)
        });
        // A set's left-out keys are boilerplate already and cannot be found again, so only the
        // sets are counted (or, where sketches keep no set, the whole main sets).
        let main = |d: usize| sketches[d].set.as_deref().unwrap_or_else(|| rest(d));
        let added = timings.time("story frequency", || {
            let sets: Vec<&[u32]> = (0..sketches.len()).map(main).collect();
            boilerplate.add_spread_across_stories(&sets, &stories, min_stories, &frequent)
        });
        // Only the documents that hold a newly found boilerplate shingle change. A set that left
        // keys out holds no earlier boilerplate, so only the new shingles are looked for in it;
        // a set kept whole, or one that left nothing out, is checked against all of them.
        timings.time("sketching", || {
            sketches
                .par_iter_mut()
                .enumerate()
                .for_each(|(d, sketch)| match &sketch.set {
                    Some(_) if left_out(d) > 0 => {
                        sketcher.resketch(sketch, rest(d), left_out(d), &added);
                    }
                    Some(set) if !added.touches(set) => {}
                    None if !added.touches(rest(d)) => {}
                    _ => sketcher.resketch(sketch, rest(d), left_out(d), &boilerplate),
                });
        });
        give_back_free_pages();
    }
    (boilerplate, sketches)
}

/// Documents per chunk of [`Rests`].
const REST_CHUNK: usize = 1024;

/// The keys of the main sets of a chunk of documents that their sketches' sets leave out,
/// where they are kept, in one list.
#[derive(Debug, Default)]
struct Rests {
    /// The keys kept (see `sketch_with_statistics`: most documents need none).
    keys: Vec<u32>,
    /// Where each document's keys end in `keys`.
    ends: Vec<usize>,
    /// How many keys each document's set leaves out, kept or not.
    left_out: Vec<u32>,
}

impl Rests {
    /// The keys of the `i`th document of the chunk.
    fn get(&self, i: usize) -> &[u32] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.keys[start..self.ends[i]]
    }
}

/// The story of each document in a first clustering, made with the boilerplate found so far.
fn preliminary_stories(sketches: &[Sketch], config: &Config) -> Vec<u32> {
    let (clusters, _) = cluster(sketches, config);
    let mut story = vec![0u32; sketches.len()];
    for (index, c) in clusters.iter().enumerate() {
        for &(doc, _) in &c.members {
            story[doc as usize] = index as u32;
        }
    }
    story
}

/// Sorts documents by id and drops the later of two records with the same id, reporting it.
fn drop_duplicate_ids(
    documents: &mut Vec<Shingled>,
    strict: bool,
    reporter: &Reporter,
) -> Result<u64, ReadError> {
    documents.par_sort_unstable_by(|a, b| a.id.cmp(&b.id).then_with(|| a.origin.cmp(&b.origin)));
    let before = documents.len();
    let mut kept: Vec<Shingled> = Vec::with_capacity(before);
    for document in documents.drain(..) {
        match kept.last() {
            Some(first) if first.id == document.id => {
                let message = format!(
                    "{}: duplicate id {:?}, first seen at {}; ids must be unique",
                    document.origin, document.id, first.origin
                );
                if strict {
                    return Err(ReadError::Strict(message));
                }
                reporter.warn(&format!("{message}; record skipped"));
            }
            _ => kept.push(document),
        }
    }
    *documents = kept;
    Ok((before - documents.len()) as u64)
}

/// The outcome of clustering a collection.
#[derive(Debug)]
pub struct Clustering {
    /// Clusters in output order.
    pub clusters: Vec<Cluster>,
    /// Counts from the clustering.
    pub stats: ClusterStats,
    /// Its wall-clock time.
    pub elapsed: Duration,
}

/// Clusters a collection.
pub fn cluster_collection(
    collection: &Collection,
    config: &Config,
    threads: usize,
    reporter: &Reporter,
) -> Clustering {
    let bar = reporter.bar("clustering", "docs");
    let sketches = &collection.sketches;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("cluster-{i}"))
        .build()
        .expect("a thread pool");
    let started = std::time::Instant::now();
    let (clusters, stats) = pool.install(|| cluster(sketches, config));
    let elapsed = started.elapsed();
    bar.inc(sketches.len() as u64);
    bar.finish();
    Clustering {
        clusters,
        stats,
        elapsed,
    }
}

/// The status of a document in the output.
pub fn status(sketch: &Sketch) -> &'static str {
    if sketch.is_comparable() {
        "ok"
    } else {
        "too_short"
    }
}

/// The output rows of a clustering, in order.
pub fn rows<'a>(
    collection: &'a Collection,
    clustering: &'a Clustering,
) -> impl Iterator<Item = Row<'a>> + 'a {
    clustering.clusters.iter().flat_map(move |c| {
        let smallest = c.members.iter().map(|m| m.0).min().expect("non-empty");
        let cluster_id = collection.ids[smallest as usize].as_str();
        let size = c.members.len();
        c.members.iter().map(move |&(doc, similarity)| Row {
            doc_id: &collection.ids[doc as usize],
            cluster_id,
            cluster_size: size,
            similarity,
            status: status(&collection.sketches[doc as usize]),
        })
    })
}

/// The one-line summary of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Documents clustered.
    pub documents: usize,
    /// Clusters, singletons included.
    pub clusters: usize,
    /// Clusters of two or more documents.
    pub multi_clusters: usize,
    /// Documents in clusters of two or more.
    pub clustered_documents: usize,
    /// Documents too short to compare.
    pub too_short: usize,
    /// Records skipped while reading or for a duplicate id.
    pub skipped: u64,
}

impl Summary {
    /// The summary of a run.
    pub fn new(collection: &Collection, clustering: &Clustering) -> Summary {
        let multi = clustering.clusters.iter().filter(|c| c.members.len() > 1);
        Summary {
            documents: collection.ids.len(),
            clusters: clustering.clusters.len(),
            multi_clusters: multi.clone().count(),
            clustered_documents: multi.map(|c| c.members.len()).sum(),
            too_short: collection
                .sketches
                .iter()
                .filter(|s| !s.is_comparable())
                .count(),
            skipped: collection.read.skipped + collection.duplicates,
        }
    }

    /// As printed on stderr.
    pub fn line(&self, elapsed: Duration) -> String {
        format!(
            "{} documents in {} clusters ({} clusters of 2 or more hold {} documents); {} too short to compare; {} records skipped; {:.2} s",
            self.documents,
            self.clusters,
            self.multi_clusters,
            self.clustered_documents,
            self.too_short,
            self.skipped,
            elapsed.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Verify;

    fn shingles(keys: impl IntoIterator<Item = u32>) -> Shingles {
        let mut set: Vec<u32> = keys.into_iter().collect();
        set.sort_unstable();
        set.dedup();
        Shingles {
            words: set.len() as u32 + 2,
            set,
            page: None,
        }
    }

    #[test]
    fn sketches_with_statistics_are_those_of_the_whole_sets() {
        let template = 1_000_000;
        // X shares one half with Y and the other with Z, each of another story, so story
        // frequency takes most of X: X is then kept whole, with the template it had left out.
        let documents = vec![
            shingles([template].into_iter().chain(10..30).chain(100..105)),
            shingles((10..20).chain(1000..1100)),
            shingles((20..30).chain(2000..2100)),
            shingles([template].into_iter().chain(3000..3050)),
            shingles([template].into_iter().chain(4000..4050)),
            shingles([template].into_iter().chain(5000..5050)),
        ];
        for verify in [Verify::Exact, Verify::Estimate] {
            let mut config = Config::default();
            config.boilerplate.min_documents = 3;
            config.boilerplate.min_stories = 2;
            config.cluster.verify = verify;
            let sketcher = Sketcher::new(&config);
            let (boilerplate, sketches) = sketch_with_statistics(
                documents.clone(),
                &sketcher,
                &config,
                &Boilerplate::none(),
                &ProgressBar::hidden(),
                &mut Timings::default(),
            );
            assert_eq!(boilerplate.len(), 21);
            for (sketch, document) in sketches.iter().zip(&documents) {
                assert_eq!(sketch, &sketcher.sketch_shingles(document, &boilerplate));
            }
            assert_eq!(sketches[0].shingles, 26);
            assert_eq!(sketches[1].shingles, 100);
        }
    }
}
