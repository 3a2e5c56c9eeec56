//! `index add`: a collection sketched as `cluster` sketches it joins the index in one
//! transaction, written by `prepare` and held as a [`PreparedAdd`] until it is committed or
//! abandoned. The add goes in named phases: the checks, `look_up` (the postings, then the
//! night's own segment), `examine`, `load`, `join_night` with `write_ids_and_leads` on a
//! thread beside it, `place`, then `write_documents` with `write_postings` on a thread beside
//! it. Candidates come from the postings of its candidate keys (a bucket of more than
//! `cluster.max-bucket` indexed documents is boilerplate, as in `cluster`) and from the
//! collection itself; the indexed candidates and their stories' representatives are loaded,
//! and [`crate::cluster::join()`] decides with those stories already formed, so a pair of
//! indexed documents is never checked again and a story is never split.
//!
//! Pairs within the collection are verified as `cluster` verifies them (exactly, from the
//! shingle sets, by default); pairs with an indexed document from the minima, because the
//! index keeps sketches, not texts or shingle sets.
//!
//! Each resulting set keeps the id of the oldest indexed story in it; the other stories in it
//! are merged into that one and the merge is recorded. A set of new documents only founds a
//! new story, named after its smallest document id.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use redb::{ReadTransaction, ReadableTable, Table, WriteTransaction};
use rustc_hash::FxHashMap;

use crate::cancel::Cancel;
use crate::cluster::{join, Joined, Known, KnownStory};
use crate::clusterer::Status;
use crate::config::Plan;
use crate::corpus::set_store::SetStore;
use crate::engine::{Collection, Timings};
use crate::index::error::{Damage, IndexError, Result};
use crate::index::examine::{paired, strengths, strongest};
use crate::index::lists::KeyLists;
use crate::index::postings::{LookUp, Postings};
use crate::index::schema::{
    decode_lead, encode_lead, table, DocRecord, MergeRecord, StoryRecord, CHUNKS, DOCS, GHOSTS,
    LEADS,
};
use crate::index::store::{posting_key, widen, Store, Tables};
use crate::io::time::{format_time, now};
use crate::sketch::keys::KeyMaker;
use crate::sketch::shingle::{gallop, merge_sorted, Lead};
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::Sketch;

/// Where one added document went.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// The document.
    pub doc_id: String,
    /// Its story's id.
    pub story_id: String,
    /// True when the story was made by this add.
    pub new_story: bool,
    /// Estimated Jaccard to the story's representative (1 for the representative itself);
    /// `None` for a text too short to compare.
    pub similarity: Option<f64>,
    /// `ok`, `too_short`, or `replaced` (an indexed document of that id was replaced).
    pub status: &'static str,
}

/// What an add did.
#[derive(Debug, Clone, Default)]
pub struct AddReport {
    /// One per added document, in id order.
    pub assignments: Vec<Assignment>,
    /// Stories merged by this add.
    pub merges: Vec<MergeRecord>,
    /// Stories made.
    pub new_stories: usize,
    /// Documents that joined a story that was already indexed.
    pub joined_existing: usize,
    /// Indexed documents replaced (`--upsert`).
    pub replaced: usize,
    /// Indexed documents found in the postings of the added documents' keys, each read and
    /// checked against the added documents it shares a key with.
    pub examined: usize,
    /// Indexed documents loaded into the join: of the examined ones that may link to an
    /// added document, its strongest link into each story, and those stories'
    /// representatives.
    pub loaded: usize,
    /// Documents in the index afterwards.
    pub documents: u64,
    /// Bytes of the postings segments that merges replaced: their pages are free once the
    /// add is committed (0 when no segments were merged).
    pub merged_bytes: u64,
    /// A warning, when the index could not be compacted after the add, which is committed
    /// all the same: its free pages stay until a later add or removal gives them back.
    pub not_compacted: Option<String>,
    /// Candidate buckets cut: keys shared by more distinct documents than
    /// `cluster.max-bucket` (see [`crate::cluster::ClusterStats`]).
    pub cut_buckets: usize,
    /// Documents in the cut buckets.
    pub cut_bucket_documents: usize,
    /// Time of each step.
    pub timings: Timings,
}

/// How to add.
#[derive(Debug, Clone, Default)]
pub struct AddOptions {
    /// Replace an indexed document with the same id instead of failing.
    pub upsert: bool,
    /// Stops the join at its next check once cancelled; the transaction is then dropped.
    pub cancel: Cancel,
    /// Make a new index keep the passages of its documents (format 6), for reuse through it;
    /// an index that keeps them keeps them for every add whatever this says.
    pub passages: bool,
}

/// What an add of a collection to the index says, when the index's file cannot be written.
const CANNOT_WRITE: &str = "cannot write to the index, which is left as it was";

/// Writes a sketched collection into a transaction of the index and returns it prepared, to
/// be committed or abandoned. `config` must be comparable with the index's (see
/// [`Store::check_comparable`]); on any error nothing is changed.
pub(crate) fn prepare<'s>(
    store: &'s mut Store,
    collection: Collection,
    config: &Plan,
    options: AddOptions,
) -> crate::Result<PreparedAdd<'s>> {
    let path = store.path.clone();
    let (txn, report, clock) = write_add(store, collection, config, options)
        .map_err(|e| e.doing_at(&path, CANNOT_WRITE))??;
    Ok(PreparedAdd {
        store,
        txn,
        report,
        timings: clock.timings,
    })
}

/// An add written into its transaction but not committed: its [`report`](PreparedAdd::report)
/// says what it will do (every assignment, merge and count), and nothing of it reaches the
/// index until [`commit`](PreparedAdd::commit). [`abort`](PreparedAdd::abort), or dropping
/// it, leaves the index as it was. A program writes the outputs of an add between the two,
/// so that the index and the outputs change together or not at all.
#[must_use = "an add changes nothing until it is committed"]
pub struct PreparedAdd<'a> {
    store: &'a mut Store,
    txn: WriteTransaction,
    report: AddReport,
    timings: Timings,
}

impl PreparedAdd<'_> {
    /// What the add does once committed. Its `timings` are those of the preparation; the
    /// committed report adds the commit's.
    pub fn report(&self) -> &AddReport {
        &self.report
    }

    /// Commits the add, then gives free space back when its postings merges left much of it
    /// (a compaction that fails is a warning in the report's `not_compacted`, the add being
    /// committed). Returns the report, with the timings of the preparation and the commit.
    pub fn commit(self) -> crate::Result<AddReport> {
        let PreparedAdd {
            store,
            txn,
            mut report,
            timings,
        } = self;
        let mut clock = Clock {
            timings,
            last: Instant::now(),
        };
        txn.commit()
            .map_err(|e| IndexError::from(e).doing_at(&store.path, CANNOT_WRITE))?;
        clock.lap("index: commit");
        // The add is committed: a compaction that fails leaves the index as it is, free
        // pages and all, and is reported rather than failing the add.
        match store.compact_after_merges(report.merged_bytes) {
            Ok(true) => clock.lap("index: compaction"),
            Ok(false) => {}
            Err(error) => {
                report.not_compacted = Some(format!(
                    "the documents were added, but the index was not compacted ({error}); a \
                     later add or removal gives its free space back"
                ))
            }
        }
        report.timings = clock.timings;
        Ok(report)
    }

    /// Gives the add up: the index stays as it was.
    pub fn abort(self) {
        // An abort that fails leaves the transaction uncommitted all the same.
        let _ = self.txn.abort();
    }
}

/// The timings of an add's steps as they are taken.
struct Clock {
    timings: Timings,
    last: Instant,
}

impl Clock {
    fn start() -> Clock {
        Clock {
            timings: Timings::default(),
            last: Instant::now(),
        }
    }

    fn lap(&mut self, step: &'static str) {
        self.timings.lap(step, &mut self.last);
    }
}

/// The add of [`prepare`], written into a transaction that is not committed yet (or what gave
/// it up inside the join: a failed read of the night's shingle sets, or a cancelled run): the checks, then the phases in
/// turn ([`look_up`], [`examine`], [`load`], [`join_night`], [`place`],
/// [`write_documents`] beside [`write_postings`]).
fn write_add(
    store: &mut Store,
    collection: Collection,
    config: &Plan,
    options: AddOptions,
) -> Result<crate::Result<(WriteTransaction, AddReport, Clock)>> {
    let mut clock = Clock::start();
    store.check_comparable(config)?;
    if !options.upsert {
        refuse_indexed_ids(store, &collection)?;
    }
    let is_new = store.is_new()?;
    let started = now();
    let path = store.path.clone();
    clock.lap("index: checks");
    let txn = store.writable()?.begin_write()?;
    // The index as it was before this add, which threads can read at once.
    let before = if is_new {
        None
    } else {
        Some(store.begin_read()?)
    };
    clock.lap("index: opening for writing");
    let mut report = AddReport::default();
    {
        // A new index keeps passages when made with them; one that keeps them goes on keeping
        // them.
        // An add writes the boilerplate as this format keeps it (moving a format 1 index's).
        let mut t = Tables::open(&txn, is_new && options.passages)?;
        if is_new {
            t.meta.insert("configuration", config.to_toml().as_str())?;
            t.meta.insert("created_at", started.to_string().as_str())?;
        }
        let Collection {
            ids,
            times,
            sketches: fresh,
            sets,
            boilerplate,
            sequences,
            frequent_in_documents,
            ..
        } = collection;
        // The boilerplate the collection found (it is over the index's own): kept to be
        // written, and the index's let go.
        let found_boilerplate = boilerplate.found();
        // The ids as strings of their own, for the tables' keys and messages.
        let ids: Vec<String> = ids.iter().map(str::to_owned).collect();

        // Without --upsert, indexed ids were refused above.
        let replaced = if options.upsert {
            replace_indexed(&mut t, &ids)?
        } else {
            vec![false; ids.len()]
        };
        report.replaced = replaced.iter().filter(|&&r| r).count();

        // Numbers for the new documents, in id order.
        let first_doc = t.counter("next_doc")?;
        if first_doc + ids.len() as u64 > u64::from(u32::MAX) {
            return Err(IndexError::Full {
                path: path.display().to_string(),
            });
        }
        clock.lap("index: replacing");

        // The passages are written on a thread of their own while the stories are joined and
        // written: they go to tables of their own, in the same transaction.
        drop(boilerplate);
        let passages = crate::index::passages::PassageAdd {
            before: before.as_ref(),
            first_doc: first_doc as u32,
            window: config.config().reuse.window,
            frequent: frequent_in_documents,
        };
        let writer = crate::index::passages::prepare(&txn, &mut t, passages)?;
        if writer.is_some() {
            clock.lap("index: preparing the passages");
        }
        // Set when the stories fail, so that the passages stop too.
        let abandoned = AtomicBool::new(false);
        let stop = || abandoned.load(Ordering::Relaxed) || options.cancel.is_cancelled();
        let (stories, passages) = std::thread::scope(|scope| {
            let passages = writer.map(|writer| {
                scope.spawn(move || {
                    let started = Instant::now();
                    (writer.write(sequences, stop), started.elapsed())
                })
            });
            let night = StoryAdd {
                ids: &ids,
                times: &times,
                replaced: &replaced,
                first_doc,
                started,
                before,
                fresh,
                sets,
            };
            let stories = write_stories(
                &mut t,
                night,
                config,
                &options.cancel,
                &mut report,
                &mut clock,
            );
            if !matches!(stories, Ok(Ok(()))) {
                abandoned.store(true, Ordering::Relaxed);
            }
            let passages = passages.map(|thread| {
                thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            });
            (stories, passages)
        });
        if let Err(failed_or_cancelled) = stories? {
            // The transaction is dropped uncommitted.
            return Ok(Err(failed_or_cancelled));
        }
        if let Some((written, spent)) = passages {
            match written? {
                Ok(merged) => report.merged_bytes += merged,
                // The transaction is dropped uncommitted.
                Err(failed_or_cancelled) => return Ok(Err(failed_or_cancelled)),
            }
            clock.lap("index: waiting for the passages");
            clock
                .timings
                .0
                .push(("index: passages (beside the stories)", spent));
        }
        crate::index::boilerplate::add(&txn, &found_boilerplate)?;
        let documents = t.counter("documents")? + ids.len() as u64 - report.replaced as u64;
        t.counters
            .insert("next_doc", first_doc + ids.len() as u64)?;
        t.counters.insert("documents", documents)?;
        t.meta.insert("last_add_at", started.to_string().as_str())?;
        report.documents = documents;
        clock.lap("index: writing");
    }
    Ok(Ok((txn, report, clock)))
}

/// What the stories of an add are made from: its new documents and the index before it.
struct StoryAdd<'n> {
    /// The new documents' ids, in id order.
    ids: &'n [String],
    /// Their times.
    times: &'n [Option<i64>],
    /// Which of them replaced an indexed document.
    replaced: &'n [bool],
    /// The index's number of the first of them.
    first_doc: u64,
    /// When the add started.
    started: i64,
    /// The index as it was before the add (`None` when it is new).
    before: Option<ReadTransaction>,
    /// Their sketches.
    fresh: Vec<Sketch>,
    /// Their shingle sets, when verification is exact.
    sets: Option<SetStore>,
}

/// The stories of an add: its documents looked up in the postings, the candidates examined
/// and loaded, the night joined into stories and written with its postings. Fails inside
/// (the inner error) when the join cannot read the night's shingle sets or is cancelled.
fn write_stories(
    t: &mut Tables,
    night: StoryAdd,
    config: &Plan,
    cancel: &Cancel,
    report: &mut AddReport,
    clock: &mut Clock,
) -> Result<crate::Result<()>> {
    let StoryAdd {
        ids,
        times,
        replaced,
        first_doc,
        started,
        before,
        mut fresh,
        sets,
    } = night;
    // The night's posting keys, made from the full minima before they are cut.
    let night_keys = NightKeys::of(&fresh, &config.key_maker);
    let looked_up = look_up(t, before.as_ref(), &night_keys, config)?;
    clock.lap("index: postings look-up");

    // Every signature as the index keeps it (16-bit minima), so that estimates compare
    // like with like.
    fresh.par_iter_mut().for_each(|s| {
        for m in &mut s.signature {
            *m = u32::from(*m as u16);
        }
    });
    let (linkable, posted) = examine(before.as_ref(), looked_up, &fresh, config, report)?;
    // The look-up's pairs, the records examined and the index's pages read for them are let
    // go: their pages go back before the join takes its own.
    crate::engine::allocator::give_back_free_pages();
    clock.lap("index: examining candidates");
    let (near, all, known) = load(t, before.as_ref(), linkable, fresh, config)?;
    // The index as it was is let go: the join takes its own pages.
    drop(before);
    report.loaded = near.numbers.len();
    // The loaded records' minima, widened into the join's sketches, leave holes in the heap
    // that the join would not fill: their pages go back too.
    crate::engine::allocator::give_back_free_pages();
    clock.lap("index: loading candidates");
    // The new documents' ids and leads hang on nothing the join decides: they are written
    // on a thread of their own while the night is joined.
    let fresh_from = near.numbers.len();
    let (joined, beside) = std::thread::scope(|scope| {
        let joined =
            scope.spawn(|| join_night(&all, sets.as_ref(), &near, config, known, report, cancel));
        let started = Instant::now();
        let new = NewDocuments {
            ids,
            first_doc: first_doc as u32,
            sketches: &all[fresh_from..],
            sets: sets.as_ref(),
        };
        let beside = (
            write_ids_and_leads(&mut t.ids, &mut t.leads, new),
            started.elapsed(),
        );
        let joined = joined
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (joined, beside)
    });
    clock.lap("index: joining");
    // The night's shingle sets are let go.
    drop(sets);
    let (written, spent) = beside;
    let joined = match (joined, written?) {
        (Ok(joined), Ok(merged)) => {
            report.merged_bytes += merged;
            joined
        }
        // The transaction is dropped uncommitted.
        (Err(failed_or_cancelled), _) | (_, Err(failed_or_cancelled)) => {
            return Ok(Err(failed_or_cancelled))
        }
    };
    clock
        .timings
        .0
        .push(("index: ids and leads (beside the join)", spent));

    let night = Night {
        ids,
        times,
        replaced,
        sketches: &all,
        fresh_from: near.numbers.len() as u32,
        first_doc,
        started,
    };
    let Placed {
        placements,
        absorbed,
    } = place(t, &joined, &near, &night, report)?;
    clock.lap("index: placing");
    // The documents and the postings go to tables of their own: the night's segment is
    // written on a thread of their own while the documents are.
    let story_of = |doc: u32| placements[doc as usize].story;
    let posted = Posted::after_merges(posted, &absorbed);
    let Tables {
        docs,
        members,
        postings,
        ..
    } = t;
    let (documents, segment) = std::thread::scope(|scope| {
        let segment = scope.spawn(|| {
            let started = Instant::now();
            let merged = write_postings(postings, &night_keys, &posted, story_of, first_doc as u32);
            (merged, started.elapsed())
        });
        let documents = write_documents(
            DocTables { docs, members },
            &night,
            &near,
            &placements,
            report,
        );
        let segment = segment
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (documents, segment)
    });
    documents?;
    let (merged, spent) = segment;
    report.merged_bytes += merged?;
    clock.lap("index: writing documents and postings");
    clock
        .timings
        .0
        .push(("index: postings (beside the documents)", spent));
    // What the night held, hundreds of thousands of small lists, is let go on another
    // thread while the add goes on to its commit.
    rayon::spawn(move || drop((all, near, joined, placements)));
    Ok(Ok(()))
}

/// The new documents of an add as the phases after the join see them.
struct Night<'n> {
    /// Their ids, in id order.
    ids: &'n [String],
    /// Their times.
    times: &'n [Option<i64>],
    /// Which of them replaced an indexed document.
    replaced: &'n [bool],
    /// The sketches of the join: the loaded indexed documents', then the new ones'.
    sketches: &'n [Sketch],
    /// The local number of the first new document.
    fresh_from: u32,
    /// The index's number of the first new document.
    first_doc: u64,
    /// When the add started.
    started: i64,
}

impl Night<'_> {
    /// The index's number of the document at local number `local` of the join.
    fn number_of(&self, near: &Neighbourhood, local: u32) -> u32 {
        if local < self.fresh_from {
            near.numbers[local as usize]
        } else {
            (self.first_doc + u64::from(local - self.fresh_from)) as u32
        }
    }
}

/// What the look-up phase found for a night.
struct LookedUp {
    /// The sorted, distinct `(candidate, new document)` pairs that share a posting key (see
    /// [`paired`]).
    pairs: Vec<(u32, u32)>,
    /// The `(key, indexed document)` pairs found for the night's keys, sorted.
    found: Vec<(u32, u32)>,
}

/// The look-up phase: the night's posting keys looked up in the postings as they were
/// before this add (candidates among the indexed documents, each paired with the new
/// documents that share a key), one key range at a time.
fn look_up(
    t: &Tables,
    before: Option<&ReadTransaction>,
    night: &NightKeys,
    config: &Plan,
) -> Result<LookedUp> {
    let passes = night.passes();
    // The chunks as they were before this add, which threads can read at once; the removed
    // documents as they are now.
    let look_up = LookUp::read(&t.postings.segments, &t.postings.dead)?;
    let (mut pairs, mut found) = (Vec::new(), Vec::new());
    if let (false, Some(before)) = (look_up.is_empty(), before) {
        let chunks = before.open_table(CHUNKS)?;
        for pass in 0..passes {
            let night = night.pass_pairs(pass, passes);
            let mut keys: Vec<u32> = night.iter().map(|&(key, _)| key).collect();
            keys.dedup();
            let max_bucket = config.cluster.max_bucket;
            let in_pass = look_up.find(&chunks, &keys, max_bucket)?;
            // A candidate shares several keys of a range with a document: the repeats are
            // dropped range by range, so they are never held all at once.
            let mut in_range = paired(&in_pass, &night, max_bucket);
            // Sorted in place: a scattered copy of these pairs would be the look-up's peak.
            in_range.par_sort_unstable();
            in_range.dedup();
            // A candidate may share keys of several ranges with a document.
            merge_distinct_into(&mut pairs, &in_range);
            // Passes are key ranges in order, so `found` stays sorted.
            found.extend(in_pass);
        }
    }
    pairs.shrink_to_fit();
    Ok(LookedUp { pairs, found })
}

/// Merges the sorted, distinct `more` into the sorted, distinct `pairs`, which stay so.
fn merge_distinct_into(pairs: &mut Vec<(u32, u32)>, more: &[(u32, u32)]) {
    merge_sorted(pairs, more);
    pairs.dedup();
}

/// The examination phase: the candidates of the look-up's pairs that may link to a new
/// document they are paired with (see [`Neighbourhood::linkable`]), read from the index as
/// it was before this add (`before`, `None` for a new index), which is then let go; and
/// the stories that post each of the night's keys already ([`Posted`]).
fn examine(
    before: Option<&ReadTransaction>,
    looked_up: LookedUp,
    fresh: &[Sketch],
    config: &Plan,
    report: &mut AddReport,
) -> Result<(Linkable, Posted)> {
    let LookedUp { pairs, found } = looked_up;
    // Each candidate's pairs.
    let by_candidate: Vec<&[(u32, u32)]> = pairs.chunk_by(|a, b| a.0 == b.0).collect();
    report.examined = by_candidate.len();
    // Candidates are indexed before this add, and their records unchanged so far: they
    // are read from the index as it was, which threads can read at once.
    let Some(txn) = before else {
        let none = Linkable {
            records: FxHashMap::default(),
            pairs: Vec::new(),
        };
        return Ok((none, Posted::default()));
    };
    let docs = txn.open_table(DOCS)?;
    let ghosts = table(txn, GHOSTS)?;
    let examined = Neighbourhood::linkable(&docs, ghosts.as_ref(), &by_candidate, fresh, config)?;
    // The pairs are let go before the stories that post each key are gathered.
    drop(by_candidate);
    drop(pairs);
    let mut joinable: Vec<u32> = examined
        .linkable
        .records
        .values()
        .map(|l| l.story)
        .collect();
    joinable.par_sort_unstable();
    joinable.dedup();
    let posted = Posted::of(&found, &examined.stories, &joinable);
    Ok((examined.linkable, posted))
}

/// The load phase: the linkable candidates with their stories and those stories'
/// representatives ([`Neighbourhood::load`]); the sketches of the join (theirs, then the
/// night's) and the stories it starts from.
fn load(
    t: &Tables,
    before: Option<&ReadTransaction>,
    linkable: Linkable,
    fresh: Vec<Sketch>,
    config: &Plan,
) -> Result<(Neighbourhood, Vec<Sketch>, Known)> {
    let Linkable { records, pairs } = linkable;
    let mut near = Neighbourhood::load(t, records)?;
    if let Some(leads) = before.map(|txn| table(txn, LEADS)).transpose()?.flatten() {
        near.read_leads(&leads)?;
    }
    let mut all = near.sketches(config.signature.minima);
    all.extend(fresh);
    let known = near.known(&pairs);
    Ok((near, all, known))
}

/// The join phase: [`join`] of the loaded and new documents, the stories they were in
/// already known. Fails when the sets' temporary file could not be read back (the join made
/// of keys of zeros is dropped), and when `cancel` is cancelled during the join.
fn join_night(
    all: &[Sketch],
    sets: Option<&SetStore>,
    near: &Neighbourhood,
    config: &Plan,
    known: Known,
    report: &mut AddReport,
    cancel: &Cancel,
) -> crate::Result<Joined> {
    let fresh_from = near.numbers.len() as u32;
    let joined = SetStore::reading_of(sets, fresh_from, |view| {
        join(all, view, config, &known, cancel)
    })
    .map_err(crate::Error::spill)??;
    report.cut_buckets = joined.stats.cut_buckets;
    report.cut_bucket_documents = joined.stats.cut_bucket_documents;
    Ok(joined)
}

/// The new documents of an add, as [`write_ids_and_leads`] writes them.
struct NewDocuments<'n> {
    /// Their ids, in id order.
    ids: &'n [String],
    /// The index's number of the first of them.
    first_doc: u32,
    /// Their sketches.
    sketches: &'n [Sketch],
    /// Their shingle sets, when verification is exact.
    sets: Option<&'n SetStore>,
}

/// Each new document's id (one segment of the ids' postings, with any merge it sets off),
/// and what the index keeps of its lead: the keys of its lead in its own set (none for a text
/// too short to compare, nor when verification is estimated: there are no sets). Returns the
/// bytes of the id segments merged; fails inside when the sets' temporary file could not be
/// read back.
fn write_ids_and_leads(
    ids: &mut Postings,
    lead_table: &mut Table<u32, &'static [u8]>,
    new: NewDocuments,
) -> Result<crate::Result<u64>> {
    let pairs = crate::index::ids::id_pairs(new.first_doc, new.ids.iter().map(String::as_str));
    let merged = ids.add_segment_from(new.first_doc, pairs.into_iter())?;
    let written = SetStore::reading_of(new.sets, 0, |view| {
        let mut buffer = Vec::new();
        for ((doc, number), sketch) in (0..).zip(new.first_doc..).zip(new.sketches) {
            if !sketch.is_comparable() {
                continue;
            }
            let Some(set) = view.get(doc, &mut buffer) else {
                continue;
            };
            let lead = sketch.lead.content_in(set);
            if !lead.is_empty() {
                lead_table.insert(number, encode_lead(&lead).as_slice())?;
            }
        }
        Ok(())
    });
    match written {
        Ok(written) => written.map(|()| Ok(merged)),
        Err(failed) => Ok(Err(crate::Error::spill(failed))),
    }
}

/// The tables [`write_documents`] writes.
struct DocTables<'a, 't> {
    docs: &'a mut Table<'t, u32, &'static [u8]>,
    members: &'a mut Table<'t, (u32, u32), ()>,
}

/// The write phase: each new document's record, story membership and assignment.
fn write_documents(
    t: DocTables,
    night: &Night,
    near: &Neighbourhood,
    placements: &[Placement],
    report: &mut AddReport,
) -> Result<()> {
    let mut members = Vec::with_capacity(night.ids.len());
    for (i, id) in night.ids.iter().enumerate() {
        let local = night.fresh_from + i as u32;
        let number = night.number_of(near, local);
        let sketch = &night.sketches[local as usize];
        let Placement {
            story,
            story_id,
            new_story,
            representative,
        } = placements[i].clone();
        let record = DocRecord {
            id: id.clone(),
            story,
            added_at: night.started,
            time: night.times[i],
            words: sketch.words,
            shingles: sketch.shingles,
            signature: if sketch.is_comparable() {
                sketch.signature.iter().map(|&m| m as u16).collect()
            } else {
                Vec::new()
            },
        };
        t.docs.insert(number, record.encode().as_slice())?;
        members.push((story, number));
        let representative = &night.sketches[representative as usize];
        let similarity = sketch
            .is_comparable()
            .then(|| estimate_jaccard(&representative.signature, &sketch.signature));
        let status = match Status::of(sketch) {
            Status::Ok if night.replaced[i] => "replaced",
            other => other.as_str(),
        };
        report.assignments.push(Assignment {
            doc_id: id.clone(),
            story_id,
            new_story,
            similarity,
            status,
        });
    }
    // In key order, so that each page of the table is copied and filled once, not once for
    // each of the night's documents whose story it holds.
    members.sort_unstable();
    for member in members {
        t.members.insert(member, ())?;
    }
    Ok(())
}

/// Where one new document goes.
#[derive(Debug, Clone, Default)]
struct Placement {
    /// Its story's number.
    story: u32,
    /// Its story's id.
    story_id: String,
    /// True when this add made the story.
    new_story: bool,
    /// The story's representative, as a local number.
    representative: u32,
}

/// Puts each joined set that holds new documents into a story: the oldest indexed story in it
/// (the others are merged into that one, and the merge recorded), or a new story named after
/// its smallest new document. Returns each new document's placement, in id order, and the
/// stories merged into others.
fn place(
    t: &mut Tables,
    joined: &Joined,
    near: &Neighbourhood,
    night: &Night,
    report: &mut AddReport,
) -> Result<Placed> {
    let (ids, started, fresh_from) = (night.ids, night.started, night.fresh_from);
    let stories = &near.stories;
    let mut next_story = t.counter("next_story")? as u32;
    let mut next_merge = t.counter("next_merge")?;
    let mut placements = vec![Placement::default(); ids.len()];
    let mut absorbed_into: FxHashMap<u32, u32> = FxHashMap::default();
    for (set, &representative) in joined.sets.iter().zip(&joined.representatives) {
        let fresh_members: Vec<u32> = set.iter().copied().filter(|&d| d >= fresh_from).collect();
        if fresh_members.is_empty() {
            continue;
        }
        let mut old_stories: Vec<u32> = set
            .iter()
            .filter(|&&d| d < fresh_from)
            .map(|&d| near.records[&near.numbers[d as usize]].story)
            .collect();
        old_stories.sort_unstable();
        old_stories.dedup();
        let (number, mut story, founded) = match old_stories.first() {
            None => {
                let number = next_story;
                next_story += 1;
                let founder = &ids[(fresh_members[0] - fresh_from) as usize];
                let name = t.claim_story_name(founder, number)?;
                let story = StoryRecord {
                    name,
                    representative: 0,
                    size: 0,
                    created_at: started,
                    updated_at: started,
                };
                report.new_stories += 1;
                (number, story, true)
            }
            Some(&oldest) => (oldest, stories[&oldest].clone(), false),
        };
        for &absorbed in old_stories.iter().skip(1) {
            absorbed_into.insert(absorbed, number);
            t.move_ghosts(absorbed, number)?;
            let gone = stories[&absorbed].clone();
            for member in t.members_of(absorbed)? {
                let mut doc = t.doc(member)?;
                doc.story = number;
                t.docs.insert(member, doc.encode().as_slice())?;
                t.members.remove((absorbed, member))?;
                t.members.insert((number, member), ())?;
            }
            t.stories.remove(absorbed)?;
            t.story_names.remove(gone.name.as_str())?;
            story.size += gone.size;
            let merge = MergeRecord {
                at: started,
                absorbed: gone.name,
                absorbed_size: gone.size,
                survivor: story.name.clone(),
                via: ids[(fresh_members[0] - fresh_from) as usize].clone(),
            };
            t.merges.insert(next_merge, merge.encode().as_slice())?;
            next_merge += 1;
            report.merges.push(merge);
        }
        if !founded {
            report.joined_existing += fresh_members.len();
        }
        story.size += fresh_members.len() as u32;
        story.representative = night.number_of(near, representative);
        story.updated_at = started;
        t.put_story(number, &story)?;
        for &d in &fresh_members {
            placements[(d - fresh_from) as usize] = Placement {
                story: number,
                story_id: story.name.clone(),
                new_story: founded,
                representative,
            };
        }
    }
    t.counters.insert("next_story", u64::from(next_story))?;
    t.counters.insert("next_merge", next_merge)?;
    Ok(Placed {
        placements,
        absorbed: absorbed_into,
    })
}

/// Where an add's new documents went.
struct Placed {
    /// Each new document's placement, in id order.
    placements: Vec<Placement>,
    /// The indexed stories merged into others: absorbed to survivor.
    absorbed: FxHashMap<u32, u32>,
}

/// Removes the indexed documents whose ids are added again (`--upsert`) and repairs their
/// stories' representatives; which ids were replaced.
fn replace_indexed(t: &mut Tables, ids: &[String]) -> Result<Vec<bool>> {
    let mut replaced = vec![false; ids.len()];
    let mut touched_stories = Vec::new();
    let asked: Vec<&str> = ids.iter().map(String::as_str).collect();
    for (i, indexed) in t.indexed(&asked)?.into_iter().enumerate() {
        if let Some(number) = indexed {
            touched_stories.push(t.remove_document(number)?.story);
            replaced[i] = true;
        }
    }
    for story in touched_stories {
        t.repair_representative(story)?;
    }
    Ok(replaced)
}

/// Posting pairs made in one pass of a key range, about: the look-up and the night's
/// segment take the night's postings one key range at a time, so a large add never holds
/// all of them as pairs (8 bytes a pair, twice while they are sorted).
const PASS_PAIRS: usize = 1 << 21;

/// The posting keys of a night's documents, made once from their full minima (before they
/// are cut to the 16 bits the index keeps) for the look-up and then for the night's
/// segment (none for a text too short to compare).
struct NightKeys(KeyLists);

impl NightKeys {
    /// The posting keys of each of `fresh`.
    fn of(fresh: &[Sketch], maker: &KeyMaker) -> NightKeys {
        const DOCUMENTS: usize = 4096;
        let parts: Vec<KeyLists> = fresh
            .par_chunks(DOCUMENTS)
            .map(|documents| {
                let mut lists = KeyLists::with_documents(documents.len());
                let (mut made, mut posting) = (Vec::new(), Vec::new());
                for sketch in documents {
                    posting.clear();
                    if sketch.is_comparable() {
                        made.clear();
                        maker.append_candidate_keys_in(
                            &sketch.signature,
                            0..maker.keys_per_signature(),
                            &mut made,
                        );
                        posting.extend(made.iter().map(|&k| posting_key(k)));
                        posting.sort_unstable();
                        posting.dedup();
                    }
                    lists.push(&posting);
                }
                lists
            })
            .collect();
        NightKeys(KeyLists::concat(parts))
    }

    /// The key ranges the night's postings are taken in.
    fn passes(&self) -> u32 {
        self.0.passes(PASS_PAIRS)
    }

    /// The sorted, distinct posting pairs `(key, document)` whose keys fall in range `pass`
    /// of `passes` equal ranges.
    fn pass_pairs(&self, pass: u32, passes: u32) -> Vec<(u32, u32)> {
        self.0.pass_pairs(pass, passes)
    }
}

/// Indexed documents of one story that post a key: a document whose story posts a key this
/// many times already leaves it out of the postings. The story is found all the same
/// through the document that posts it, so what a night examines and loads for a story it
/// joins is bounded by this, not by the story's size: a story of hundreds of copies posts
/// each of its keys once. (A second poster finds the same stories, at the cost of more
/// candidates to examine.)
pub(crate) const POSTERS_PER_KEY: u32 = 1;

/// The stories that post each of a night's keys already: `(key, story)` for each indexed
/// document the look-up found, sorted, one entry a posting document (up to
/// [`POSTERS_PER_KEY`] a story and key).
#[derive(Debug, Default)]
struct Posted(Vec<(u32, u32)>);

impl Posted {
    /// From the look-up's `found` pairs `(key, indexed document)` and the `stories` of the
    /// examined documents (`(document, story)`, sorted), for the stories in `joinable`
    /// (sorted): the night's documents join those stories or new ones. A document that was
    /// not examined (its key was shared by more new documents than `cluster.max-bucket`) is
    /// left out.
    fn of(found: &[(u32, u32)], stories: &[(u32, u32)], joinable: &[u32]) -> Posted {
        let story_of: FxHashMap<u32, u32> = stories
            .iter()
            .filter(|(_, story)| joinable.binary_search(story).is_ok())
            .copied()
            .collect();
        let mut posted: Vec<(u32, u32)> = found
            .par_iter()
            .filter_map(|&(key, doc)| story_of.get(&doc).map(|&story| (key, story)))
            .collect();
        // `found` is sorted by key, so only each key's stories are put in order.
        posted
            .par_chunk_by_mut(|a, b| a.0 == b.0)
            .for_each(|run| run.sort_unstable());
        let mut kept = Vec::with_capacity(posted.len());
        for run in posted.chunk_by(|a, b| a == b) {
            kept.extend_from_slice(&run[..run.len().min(POSTERS_PER_KEY as usize)]);
        }
        Posted(kept)
    }

    /// The same, with the stories this add merged into others (`absorbed`, absorbed to
    /// survivor) named by their survivors.
    fn after_merges(mut self, absorbed: &FxHashMap<u32, u32>) -> Posted {
        if !absorbed.is_empty() {
            for (_, story) in &mut self.0 {
                if let Some(&survivor) = absorbed.get(story) {
                    *story = survivor;
                }
            }
        }
        self
    }
}

/// The night's posting pairs `(key, document)` (sorted by key) that go into its segment: a
/// document posts a key unless its story (`story_of`) has [`POSTERS_PER_KEY`] posters of it
/// already, among the indexed documents (`posted`) and the night's documents before it.
fn capped(night: &[(u32, u32)], posted: &Posted, story_of: impl Fn(u32) -> u32) -> Vec<(u32, u32)> {
    let posted = &posted.0;
    let mut kept = Vec::with_capacity(night.len());
    let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
    let mut at = 0;
    for run in night.chunk_by(|a, b| a.0 == b.0) {
        let key = run[0].0;
        at += gallop(&posted[at..], |&(k, _)| k < key);
        let before = &posted[at..at + gallop(&posted[at..], |&(k, _)| k == key)];
        if before.is_empty() && run.len() <= POSTERS_PER_KEY as usize {
            kept.extend_from_slice(run);
            continue;
        }
        counts.clear();
        for &(_, story) in before {
            *counts.entry(story).or_default() += 1;
        }
        for &(key, doc) in run {
            let count = counts.entry(story_of(doc)).or_default();
            if *count < POSTERS_PER_KEY {
                *count += 1;
                kept.push((key, doc));
            }
        }
    }
    kept
}

/// The postings phase: the night's posting pairs, capped by story ([`capped`]), written as
/// a new segment one key range at a time, its documents numbered from `base`. Returns the
/// bytes of the segments merged (see [`crate::index::postings::Postings::add_segment_from`]).
fn write_postings(
    postings: &mut Postings,
    night: &NightKeys,
    posted: &Posted,
    story_of: impl Fn(u32) -> u32 + Copy,
    base: u32,
) -> Result<u64> {
    let passes = night.passes();
    let numbered = move |(key, doc): (u32, u32)| (key, base + doc);
    postings.add_segment_from(
        base,
        (0..passes).flat_map(|pass| {
            capped(&night.pass_pairs(pass, passes), posted, story_of)
                .into_iter()
                .map(numbered)
        }),
    )
}

/// Candidates read at once while they are examined (see [`Neighbourhood::linkable`]).
const EXAMINED_AT_ONCE: usize = 1 << 14;

/// The examined candidates: those that may link to a new document, and every one's story as
/// `(candidate, story)`, in the candidates' order.
struct Examined {
    linkable: Linkable,
    stories: Vec<(u32, u32)>,
}

/// The candidates that may link to a new document: the records of those to load, and every
/// pair that may link, `(candidate, new document)`, sorted.
struct Linkable {
    records: FxHashMap<u32, Loaded>,
    pairs: Vec<(u32, u32)>,
}

/// What a loaded document's record gives the join.
struct Loaded {
    story: u32,
    words: u32,
    shingles: u32,
    signature: Vec<u16>,
    /// What the index keeps of its lead (see [`crate::index::schema::LEADS`]): read only for
    /// the documents loaded for the join.
    lead: Vec<u32>,
    /// True for a ghost: a removed document that stands for its story (see
    /// [`crate::index::schema::GHOSTS`]), not one of its members.
    ghost: bool,
}

/// The stored record of document `number` in `docs`, or else of the ghost `number` in
/// `ghosts` (then with `true`).
fn doc_record<'t>(
    docs: &'t impl ReadableTable<u32, &'static [u8]>,
    ghosts: Option<&'t impl ReadableTable<u32, &'static [u8]>>,
    number: u32,
) -> Result<(redb::AccessGuard<'t, &'static [u8]>, bool)> {
    match docs.get(number)? {
        Some(bytes) => Ok((bytes, false)),
        None => match ghosts.map(|g| g.get(number)).transpose()?.flatten() {
            Some(bytes) => Ok((bytes, true)),
            None => Err(IndexError::damaged(Damage::LostDocument { number })),
        },
    }
}

/// Reads the record of document (or ghost) `number` into `sketch`, its minima widened into
/// the list it holds, no lead; gives the document's story.
fn read_sketch_into(
    docs: &impl ReadableTable<u32, &'static [u8]>,
    ghosts: Option<&impl ReadableTable<u32, &'static [u8]>>,
    number: u32,
    sketch: &mut Sketch,
) -> Result<u32> {
    let (bytes, _) = doc_record(docs, ghosts, number)?;
    let (story, words, shingles) =
        DocRecord::decode_sketch_into(bytes.value(), &mut sketch.signature)?;
    (sketch.words, sketch.shingles) = (words, shingles);
    Ok(story)
}

impl Loaded {
    /// The record of document `number`, its id left out.
    fn of(t: &Tables, number: u32) -> Result<Loaded> {
        Loaded::read(&t.docs, None::<&redb::ReadOnlyTable<u32, &[u8]>>, number)
    }

    /// The record of document `number` in `docs`, or else of the ghost `number` in
    /// `ghosts`, its id left out.
    fn read(
        docs: &impl ReadableTable<u32, &'static [u8]>,
        ghosts: Option<&impl ReadableTable<u32, &'static [u8]>>,
        number: u32,
    ) -> Result<Loaded> {
        let (bytes, ghost) = doc_record(docs, ghosts, number)?;
        let (story, words, shingles, signature) = DocRecord::decode_sketch(bytes.value())?;
        Ok(Loaded {
            story,
            words,
            shingles,
            signature,
            lead: Vec::new(),
            ghost,
        })
    }
}

/// The indexed documents around a night's documents: the candidates its keys found in the
/// postings, their stories, and those stories' representatives.
struct Neighbourhood {
    /// Their numbers, sorted: the document at local number `i` is `numbers[i]`.
    numbers: Vec<u32>,
    /// Their records, without their ids (their minima go to their sketches).
    records: FxHashMap<u32, Loaded>,
    /// Their stories.
    stories: FxHashMap<u32, StoryRecord>,
}

impl Neighbourhood {
    /// The records of the candidates that may link to one of the `fresh` documents (their
    /// minima cut to 16 bits, as the index keeps them) they are paired with: `by_candidate`
    /// holds each candidate's pairs `(candidate, fresh document)` from [`paired`], candidates
    /// in order (see [`linking`]). Candidates are read and examined a part at a time, and of
    /// those that may link, each fresh document keeps its strongest of each story
    /// ([`strongest`]); only their links are held until then, and the chosen ones are read
    /// again, so a night's memory follows the stories it may join, not how many indexed
    /// documents share its keys. Every candidate's story comes with them.
    fn linkable(
        docs: &(impl ReadableTable<u32, &'static [u8]> + Sync),
        ghosts: Option<&(impl ReadableTable<u32, &'static [u8]> + Sync)>,
        by_candidate: &[&[(u32, u32)]],
        fresh: &[Sketch],
        config: &Plan,
    ) -> Result<Examined> {
        let mut stories = Vec::with_capacity(by_candidate.len());
        // (fresh document, story, strength, candidate) of every pair that may link.
        let mut links: Vec<(u32, u32, f32, u32)> = Vec::new();
        // The sketches of a part, their lists kept from part to part.
        let mut sketches: Vec<Sketch> = Vec::new();
        for part in by_candidate.chunks(EXAMINED_AT_ONCE) {
            sketches.resize_with(part.len(), Sketch::default);
            let part_stories: Vec<u32> = part
                .par_iter()
                .zip(sketches.par_iter_mut())
                .map(|(pairs, sketch)| read_sketch_into(docs, ghosts, pairs[0].0, sketch))
                .collect::<Result<_>>()?;
            stories.extend(
                part.iter()
                    .zip(&part_stories)
                    .map(|(pairs, &story)| (pairs[0].0, story)),
            );
            // The pairs by the candidates' places in the part.
            let local: Vec<(u32, u32)> = part
                .iter()
                .enumerate()
                .flat_map(|(place, pairs)| pairs.iter().map(move |&(_, doc)| (place as u32, doc)))
                .collect();
            let strengths = strengths(&local, &sketches, fresh, config);
            for (&(place, doc), strength) in local.iter().zip(strengths) {
                if let Some(strength) = strength {
                    let place = place as usize;
                    links.push((doc, part_stories[place], strength, part[place][0].0));
                }
            }
        }
        // The chosen candidates are read again rather than every linking one held until they
        // are chosen: a few of them are chosen, and a record is read in microseconds.
        let chosen = strongest(&mut links);
        // The pairs that may link are kept for the join: those of the candidates it loads.
        let mut pairs: Vec<(u32, u32)> = links.par_iter().map(|link| (link.3, link.0)).collect();
        drop(links);
        pairs.par_sort_unstable();
        let kept: FxHashMap<u32, Loaded> = chosen
            .par_iter()
            .map(|&number| Ok((number, Loaded::read(docs, ghosts, number)?)))
            .collect::<Result<_>>()?;
        Ok(Examined {
            linkable: Linkable {
                records: kept,
                pairs,
            },
            stories,
        })
    }

    /// The `records` of the candidates to join, with their stories and those stories'
    /// representatives: only the stories the night may join.
    fn load(t: &Tables, mut records: FxHashMap<u32, Loaded>) -> Result<Neighbourhood> {
        let mut numbers: Vec<u32> = records.values().map(|record| record.story).collect();
        numbers.par_sort_unstable();
        numbers.dedup();
        let stories: FxHashMap<u32, StoryRecord> = numbers
            .par_iter()
            .map(|&number| Ok((number, t.story(number)?)))
            .collect::<Result<_>>()?;
        let mut representatives: Vec<u32> = stories
            .values()
            .map(|story| story.representative)
            .filter(|number| !records.contains_key(number))
            .collect();
        representatives.par_sort_unstable();
        representatives.dedup();
        let representatives: Vec<(u32, Loaded)> = representatives
            .par_iter()
            .map(|&number| Ok((number, Loaded::of(t, number)?)))
            .collect::<Result<_>>()?;
        records.extend(representatives);
        let mut numbers: Vec<u32> = records.keys().copied().collect();
        numbers.sort_unstable();
        Ok(Neighbourhood {
            numbers,
            records,
            stories,
        })
    }

    /// Reads the leads of the loaded documents from `leads` (of the index as it was before the
    /// add, which threads can read at once).
    fn read_leads(
        &mut self,
        leads: &(impl ReadableTable<u32, &'static [u8]> + Sync),
    ) -> Result<()> {
        self.records
            .par_iter_mut()
            .try_for_each(|(&number, record)| {
                if let Some(lead) = leads.get(number)? {
                    record.lead = decode_lead(lead.value())?;
                }
                Ok(())
            })
    }

    /// Their sketches, by local number, from the minima the index keeps (which are moved
    /// out of the records).
    fn sketches(&mut self, minima: usize) -> Vec<Sketch> {
        self.numbers
            .iter()
            .map(|n| {
                let r = self.records.get_mut(n).expect("a loaded document");
                let short = std::mem::take(&mut r.signature);
                Sketch {
                    words: r.words,
                    shingles: r.shingles,
                    signature: if r.shingles > 0 {
                        widen(&short).into()
                    } else {
                        vec![u32::from(u16::MAX); minima].into()
                    },
                    // The lead as the index keeps it: a weak link to an indexed
                    // document is checked for a shared opening with it.
                    lead: Lead::of(&std::mem::take(&mut r.lead)),
                }
            })
            .collect()
    }

    /// The known stories for [`join`], with the pairs of loaded documents with fresh ones:
    /// those of `pairs` (`(candidate, fresh document)` from the examination, sorted) whose
    /// candidate is loaded. The join makes candidates of the fresh documents alone, from their
    /// minima as the index keeps them (16 bits), one key range at a time as `cluster` makes
    /// them.
    fn known(&self, pairs: &[(u32, u32)]) -> Known {
        let local: FxHashMap<u32, u32> = self
            .numbers
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u32))
            .collect();
        let fresh_from = self.numbers.len() as u32;
        let mut by_story: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        let mut ghosts: FxHashMap<u32, u32> = FxHashMap::default();
        for &n in &self.numbers {
            let record = &self.records[&n];
            by_story.entry(record.story).or_default().push(n);
            *ghosts.entry(record.story).or_default() += u32::from(record.ghost);
        }
        let mut story_numbers: Vec<u32> = by_story.keys().copied().collect();
        story_numbers.sort_unstable();
        Known {
            fresh_from,
            stories: story_numbers
                .iter()
                .map(|s| {
                    let story = &self.stories[s];
                    let loaded = &by_story[s];
                    KnownStory {
                        representative: local[&story.representative],
                        members: loaded
                            .iter()
                            .filter(|&&n| n != story.representative)
                            .map(|n| local[n])
                            .collect(),
                        unloaded: story.size.saturating_sub(loaded.len() as u32 - ghosts[s]),
                    }
                })
                .collect(),
            pairs: None,
            known_pairs: Some(
                pairs
                    .iter()
                    .filter_map(|&(candidate, doc)| {
                        let loaded = self.numbers.binary_search(&candidate).ok()?;
                        Some((loaded as u32, fresh_from + doc))
                    })
                    .collect(),
            ),
        }
    }
}

/// Fails, naming the first one, when a document's id is indexed already; reads only, so a
/// refused add leaves the file as it was.
fn refuse_indexed_ids(store: &Store, collection: &Collection) -> Result<()> {
    if store.is_new()? {
        return Ok(());
    }
    let txn = store.begin_read()?;
    let docs = txn.open_table(DOCS)?;
    let ids: Vec<&str> = (0..collection.ids.len())
        .map(|i| collection.ids.get(i).expect("a document's id"))
        .collect();
    // The first indexed one in order is named.
    let first_indexed = crate::index::ids::indexed_in(&txn, &ids)?
        .into_iter()
        .zip(ids)
        .enumerate()
        .find_map(|(i, (number, id))| number.map(|number| (i, id, number)));
    if let Some((i, id, number)) = first_indexed {
        let added = match docs.get(number)? {
            Some(bytes) => DocRecord::decode(bytes.value())?.added_at,
            None => return Err(IndexError::damaged(Damage::LostDocument { number })),
        };
        return Err(IndexError::AlreadyIndexed {
            origin: collection.origins[i].to_string(),
            id: id.to_owned(),
            added: format_time(added),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    proptest::proptest! {
        #[test]
        fn merging_sorted_pairs_gives_them_sorted_and_distinct(
            a in proptest::collection::btree_set((0u32..50, 0u32..50), 0..40),
            b in proptest::collection::btree_set((0u32..50, 0u32..50), 0..40),
        ) {
            let mut merged: Vec<(u32, u32)> = a.iter().copied().collect();
            let more: Vec<(u32, u32)> = b.iter().copied().collect();
            merge_distinct_into(&mut merged, &more);
            let union: Vec<(u32, u32)> = a.union(&b).copied().collect();
            proptest::prop_assert_eq!(merged, union);
        }
    }

    #[test]
    fn passes_split_the_posting_pairs_into_key_ranges_in_order() {
        let maker = Plan::try_from(&Config::default()).unwrap().key_maker;
        // Sketches with pseudo-random minima, some sharing all of them, and one too short to
        // compare, which has no postings.
        let mut state = 7u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 32) as u32
        };
        let mut fresh: Vec<Sketch> = (0..300)
            .map(|_| Sketch::with_minima((0..84).map(|_| next()).collect(), 100))
            .collect();
        fresh.extend(fresh[..20].to_vec());
        fresh.push(Sketch::with_minima(vec![u32::MAX; 84], 0));
        let night = NightKeys::of(&fresh, &maker);
        let whole = night.pass_pairs(0, 1);
        assert!(whole.len() > 300);
        assert!(whole.windows(2).all(|w| w[0] < w[1]));
        assert!(whole.iter().all(|&(_, doc)| doc < 320));
        assert_eq!(night.0.len(), fresh.len());
        // The copies have the keys of their originals; the short text has none.
        for copy in 0..20 {
            assert_eq!(keys_of(&night, 300 + copy), keys_of(&night, copy));
        }
        assert!(keys_of(&night, 320).is_empty());
        for passes in [2, 3, 7] {
            let split: Vec<(u32, u32)> = (0..passes)
                .flat_map(|pass| night.pass_pairs(pass, passes))
                .collect();
            assert_eq!(split, whole, "{passes} passes");
        }
    }

    fn keys_of(night: &NightKeys, doc: usize) -> &[u32] {
        night.0.list(doc)
    }

    #[test]
    fn a_story_posts_each_key_a_few_times_counting_its_indexed_posters() {
        let cap = POSTERS_PER_KEY;
        // Key 1: story 10 posts it `cap - 1` times already, story 11 `cap` times; key 2 is
        // posted by no one.
        let mut posted: Vec<(u32, u32)> = (0..cap - 1).map(|_| (1, 10)).collect();
        posted.extend((0..cap).map(|_| (1, 11)));
        posted.push((3, 12));
        let posted = Posted(posted);
        // Night documents 0..8 are in story 10, 8..16 in story 11, 16.. in story 12.
        let story_of = |doc: u32| 10 + doc / 8;
        let night: Vec<(u32, u32)> = (0..24)
            .map(|doc| (1, doc))
            .chain((0..24).map(|doc| (2, doc)))
            .collect();
        let kept = capped(&night, &posted, story_of);
        let of_key = |key: u32| -> Vec<u32> {
            kept.iter()
                .filter(|&&(k, _)| k == key)
                .map(|&(_, doc)| doc)
                .collect()
        };
        // Story 10 has room for one more poster of key 1, story 11 none, story 12 for all.
        let firsts = |from: u32| from..from + cap;
        assert_eq!(
            of_key(1),
            [0].into_iter().chain(firsts(16)).collect::<Vec<_>>()
        );
        // Key 2: each story's first.
        let each: Vec<u32> = firsts(0).chain(firsts(8)).chain(firsts(16)).collect();
        assert_eq!(of_key(2), each);
        // A key no story posts yet, held by one document of each of two stories, is kept
        // whole.
        assert_eq!(
            capped(&[(5, 0), (5, 8)], &posted, story_of),
            [(5, 0), (5, 8)]
        );
    }

    #[test]
    fn posters_of_a_merged_story_count_for_its_survivor() {
        let posted = Posted((0..POSTERS_PER_KEY).map(|_| (1, 7)).collect());
        let absorbed: FxHashMap<u32, u32> = [(7, 3)].into_iter().collect();
        let posted = posted.after_merges(&absorbed);
        assert!(capped(&[(1, 0)], &posted, |_| 3).is_empty());
        assert_eq!(capped(&[(1, 0)], &posted, |_| 7), [(1, 0)]);
    }

    #[test]
    fn found_pairs_take_the_stories_of_the_examined_documents() {
        let found = [(1, 5), (1, 9), (2, 5), (2, 6)];
        let stories = [(5, 50), (9, 90)];
        assert_eq!(
            Posted::of(&found, &stories, &[50, 90]).0,
            [(1, 50), (1, 90), (2, 50)]
        );
        // Only the stories the night may join count.
        assert_eq!(Posted::of(&found, &stories, &[90]).0, [(1, 90)]);
        // A story counts as many posters as it may have.
        let many: Vec<(u32, u32)> = (0..5).map(|doc| (1, doc)).collect();
        let all_in_one: Vec<(u32, u32)> = (0..5).map(|doc| (doc, 7)).collect();
        assert_eq!(
            Posted::of(&many, &all_in_one, &[7]).0.len(),
            POSTERS_PER_KEY as usize
        );
    }
}
