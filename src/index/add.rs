//! `index add`: a collection sketched as `cluster` sketches it joins the index in one
//! transaction, written by `prepare` and held as a [`PreparedAdd`] until it is committed or
//! abandoned. The add goes in named phases: the checks, `look_up` (the postings, then the
//! night's own segment), `examine`, `load`, `join_night`, `place` and
//! `write_documents`. Candidates come from the postings of its candidate keys (a bucket of more than
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

use std::collections::hash_map::Entry;
use std::time::Instant;

use rayon::prelude::*;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use rustc_hash::FxHashMap;

use crate::cancel::Cancel;
use crate::cluster::{join, Joined, Known, KnownStory};
use crate::clusterer::Status;
use crate::config::Plan;
use crate::corpus::set_store::SetStore;
use crate::engine::{Collection, Timings};
use crate::index::error::{Damage, IndexError, Result};
use crate::index::examine::{linking, paired};
use crate::index::postings::LookUp;
use crate::index::schema::{DocRecord, MergeRecord, StoryRecord, CHUNKS, DOCS, IDS};
use crate::index::store::{posting_key, widen, Store, Tables};
use crate::io::time::{format_time, now};
use crate::sketch::keys::KeyMaker;
use crate::sketch::shingle::Lead;
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
    /// Indexed documents loaded into the join: the examined ones that may link to an added
    /// document, and their stories' representatives.
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
    /// Make a new index keep the passages of its documents (format 3), for reuse through it;
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
/// [`write_documents`]).
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
        let mut t = Tables::open(&txn, is_new && options.passages)?;
        // An add writes the boilerplate as this format keeps it (moving a format 1 index's).
        let format = if t.passages.is_some() {
            crate::index::schema::FORMAT_WITH_PASSAGES
        } else {
            crate::index::schema::FORMAT
        };
        t.meta.insert("format", format)?;
        if is_new {
            t.meta.insert("configuration", config.to_toml().as_str())?;
            t.meta.insert("created_at", started.to_string().as_str())?;
        }
        let Collection {
            ids,
            times,
            sketches: mut fresh,
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

        // The passages go first, so that their texts are let go before the look-up and the
        // join.
        drop(boilerplate);
        let passages = crate::index::passages::PassageAdd {
            before: before.as_ref(),
            first_doc: first_doc as u32,
            window: config.config().reuse.window,
            frequent: frequent_in_documents,
        };
        report.merged_bytes += crate::index::passages::write(&txn, &mut t, sequences, passages)?;
        clock.lap("index: passages");

        let pairs = look_up(
            &mut t,
            before.as_ref(),
            &fresh,
            config,
            first_doc,
            &mut report,
        )?;
        clock.lap("index: postings look-up");

        // Every signature as the index keeps it (16-bit minima), so that estimates compare
        // like with like.
        fresh.par_iter_mut().for_each(|s| {
            for m in &mut s.signature {
                *m = u32::from(*m as u16);
            }
        });
        let linkable = examine(before, pairs, &fresh, config, &mut report)?;
        clock.lap("index: examining candidates");
        let (near, all, known) = load(&t, linkable, fresh, config)?;
        report.loaded = near.numbers.len();
        clock.lap("index: loading candidates");
        let joined = match join_night(
            &all,
            sets,
            &near,
            config,
            known,
            &mut report,
            &options.cancel,
        ) {
            Ok(joined) => joined,
            // The transaction is dropped uncommitted.
            Err(failed_or_cancelled) => return Ok(Err(failed_or_cancelled)),
        };
        clock.lap("index: joining");

        let night = Night {
            ids: &ids,
            times: &times,
            replaced: &replaced,
            sketches: &all,
            fresh_from: near.numbers.len() as u32,
            first_doc,
            started,
        };
        let placements = place(&mut t, &joined, &near, &night, &mut report)?;
        write_documents(&mut t, &night, &near, &placements, &mut report)?;
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

/// The look-up phase: the night's posting pairs looked up in the postings as they were
/// before this add (candidates among the indexed documents, each paired with the new
/// documents that share a key), then written as a new segment numbered from `first_doc`,
/// one key range at a time. Returns the sorted, distinct `(candidate, new document)` pairs.
fn look_up(
    t: &mut Tables,
    before: Option<&ReadTransaction>,
    fresh: &[Sketch],
    config: &Plan,
    first_doc: u64,
    report: &mut AddReport,
) -> Result<Vec<(u32, u32)>> {
    let maker = &config.key_maker;
    let passes = passes(fresh.len(), maker);
    // The night's posting pairs, numbered from 0: made once when they fit one pass, for
    // the look-up and then for the new segment; made again for each pass otherwise.
    let single_pass = (passes == 1).then(|| pass_pairs(fresh, maker, 0, 1));
    // The chunks as they were before this add (it has written none so far), which
    // threads can read at once; the removed documents as they are now.
    let look_up = LookUp::read(&t.postings.segments, &t.postings.dead)?;
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    if let (false, Some(before)) = (look_up.is_empty(), before) {
        let chunks = before.open_table(CHUNKS)?;
        for pass in 0..passes {
            let made;
            let night = match &single_pass {
                Some(night) => night,
                None => {
                    made = pass_pairs(fresh, maker, pass, passes);
                    &made
                }
            };
            let mut keys: Vec<u32> = night.iter().map(|&(key, _)| key).collect();
            keys.dedup();
            let max_bucket = config.cluster.max_bucket;
            let found = look_up.find(&chunks, &keys, max_bucket)?;
            pairs.extend(paired(&found, night, max_bucket));
        }
    }
    pairs.par_sort_unstable();
    pairs.dedup();

    // The new documents' postings, a new segment written one key range at a time, its
    // documents numbered from the first new number.
    let base = first_doc as u32;
    let numbered = |(key, doc): (u32, u32)| (key, base + doc);
    report.merged_bytes += match single_pass {
        Some(night) => t
            .postings
            .add_segment_from(base, night.into_iter().map(numbered))?,
        None => t.postings.add_segment_from(
            base,
            (0..passes).flat_map(|pass| {
                pass_pairs(fresh, maker, pass, passes)
                    .into_iter()
                    .map(numbered)
            }),
        )?,
    };
    Ok(pairs)
}

/// The examination phase: the candidates of `pairs` that may link to a new document they
/// are paired with (see [`Neighbourhood::linkable`]), read from the index as it was before
/// this add (`before`, `None` for a new index), which is then let go.
fn examine(
    before: Option<ReadTransaction>,
    pairs: Vec<(u32, u32)>,
    fresh: &[Sketch],
    config: &Plan,
    report: &mut AddReport,
) -> Result<FxHashMap<u32, Loaded>> {
    // Each candidate's pairs.
    let by_candidate: Vec<&[(u32, u32)]> = pairs.chunk_by(|a, b| a.0 == b.0).collect();
    report.examined = by_candidate.len();
    // Candidates are indexed before this add, and their records unchanged so far: they
    // are read from the index as it was, which threads can read at once.
    match &before {
        Some(txn) => {
            let docs = txn.open_table(DOCS)?;
            Neighbourhood::linkable(&docs, &by_candidate, fresh, config)
        }
        None => Ok(FxHashMap::default()),
    }
}

/// The load phase: the linkable candidates with their stories and those stories'
/// representatives ([`Neighbourhood::load`]); the sketches of the join (theirs, then the
/// night's) and the stories it starts from.
fn load(
    t: &Tables,
    linkable: FxHashMap<u32, Loaded>,
    fresh: Vec<Sketch>,
    config: &Plan,
) -> Result<(Neighbourhood, Vec<Sketch>, Known)> {
    let mut near = Neighbourhood::load(t, linkable)?;
    let mut all = near.sketches(config.signature.minima);
    all.extend(fresh);
    let known = near.known();
    Ok((near, all, known))
}

/// The join phase: [`join`] of the loaded and new documents, the stories they were in
/// already known; the night's shingle sets are let go after it. Fails when the sets' temporary
/// file could not be read back (the join made of keys of zeros is dropped), and when `cancel`
/// is cancelled during the join.
fn join_night(
    all: &[Sketch],
    sets: Option<SetStore>,
    near: &Neighbourhood,
    config: &Plan,
    known: Known,
    report: &mut AddReport,
    cancel: &Cancel,
) -> crate::Result<Joined> {
    let fresh_from = near.numbers.len() as u32;
    let joined = SetStore::reading_of(sets.as_ref(), fresh_from, |view| {
        join(all, view, config, &known, cancel)
    })
    .map_err(crate::Error::spill)??;
    report.cut_buckets = joined.stats.cut_buckets;
    report.cut_bucket_documents = joined.stats.cut_bucket_documents;
    Ok(joined)
}

/// The write phase: each new document's record, id, story membership and assignment.
fn write_documents(
    t: &mut Tables,
    night: &Night,
    near: &Neighbourhood,
    placements: &[Placement],
    report: &mut AddReport,
) -> Result<()> {
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
        t.ids.insert(id.as_str(), number)?;
        t.members.insert((story, number), ())?;
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
/// its smallest new document. Returns each new document's placement, in id order.
fn place(
    t: &mut Tables,
    joined: &Joined,
    near: &Neighbourhood,
    night: &Night,
    report: &mut AddReport,
) -> Result<Vec<Placement>> {
    let (ids, started, fresh_from) = (night.ids, night.started, night.fresh_from);
    let stories = &near.stories;
    let mut next_story = t.counter("next_story")? as u32;
    let mut next_merge = t.counter("next_merge")?;
    let mut placements = vec![Placement::default(); ids.len()];
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
    Ok(placements)
}

/// Removes the indexed documents whose ids are added again (`--upsert`) and repairs their
/// stories' representatives; which ids were replaced.
fn replace_indexed(t: &mut Tables, ids: &[String]) -> Result<Vec<bool>> {
    let mut replaced = vec![false; ids.len()];
    let mut touched_stories = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let indexed = t.ids.get(id.as_str())?.map(|v| v.value());
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

/// Posting pairs made in one pass of a key range, about: an add's postings are made and
/// written one key range at a time, so a large add never holds all of them (8 bytes a pair).
const PASS_PAIRS: usize = 1 << 24;

/// The key ranges an add of `documents` makes its postings in.
fn passes(documents: usize, maker: &KeyMaker) -> u32 {
    (documents * maker.keys_per_signature().max(1))
        .div_ceil(PASS_PAIRS)
        .max(1) as u32
}

/// The sorted, distinct posting pairs `(key, i)` of the comparable documents
/// (`fresh[i]`) whose posting keys fall in range `pass` of `passes` equal ranges.
fn pass_pairs(fresh: &[Sketch], maker: &KeyMaker, pass: u32, passes: u32) -> Vec<(u32, u32)> {
    const DOCUMENTS: usize = 4096;
    let in_pass = |key: u32| ((u64::from(key) * u64::from(passes)) >> 32) as u32 == pass;
    let lists: Vec<Vec<(u32, u32)>> = fresh
        .par_chunks(DOCUMENTS)
        .enumerate()
        .map(|(c, documents)| {
            let (mut pairs, mut made) = (Vec::new(), Vec::new());
            for (j, sketch) in documents.iter().enumerate() {
                if !sketch.is_comparable() {
                    continue;
                }
                let number = (c * DOCUMENTS + j) as u32;
                made.clear();
                maker.append_candidate_keys_in(
                    &sketch.signature,
                    0..maker.keys_per_signature(),
                    &mut made,
                );
                pairs.extend(
                    made.iter()
                        .map(|&k| posting_key(k))
                        .filter(|&k| in_pass(k))
                        .map(|k| (k, number)),
                );
            }
            pairs
        })
        .collect();
    let mut pairs = lists.concat();
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

/// Candidates read at once while they are examined (see [`Neighbourhood::linkable`]).
const EXAMINED_AT_ONCE: usize = 1 << 14;

/// What a loaded document's record gives the join.
struct Loaded {
    story: u32,
    words: u32,
    shingles: u32,
    signature: Vec<u16>,
}

impl Loaded {
    /// Its sketch, from the minima the index keeps, widened; no lead.
    fn sketch(&self) -> Sketch {
        Sketch {
            words: self.words,
            shingles: self.shingles,
            signature: widen(&self.signature).into(),
            lead: Lead::default(),
        }
    }

    /// The record of document `number`, its id left out.
    fn of(t: &Tables, number: u32) -> Result<Loaded> {
        Loaded::read(&t.docs, number)
    }

    /// The record of document `number` in `docs`, its id left out.
    fn read(docs: &impl ReadableTable<u32, &'static [u8]>, number: u32) -> Result<Loaded> {
        let bytes = docs
            .get(number)?
            .ok_or_else(|| IndexError::damaged(Damage::LostDocument { number }))?;
        let (story, words, shingles, signature) = DocRecord::decode_sketch(bytes.value())?;
        Ok(Loaded {
            story,
            words,
            shingles,
            signature,
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
    /// in order (see [`linking`]). Candidates are read and examined a part at a time and only
    /// the kept ones are held, so a night's memory follows the stories it may join, not how
    /// many indexed documents share its keys.
    fn linkable(
        docs: &(impl ReadableTable<u32, &'static [u8]> + Sync),
        by_candidate: &[&[(u32, u32)]],
        fresh: &[Sketch],
        config: &Plan,
    ) -> Result<FxHashMap<u32, Loaded>> {
        let mut kept: FxHashMap<u32, Loaded> = FxHashMap::default();
        for part in by_candidate.chunks(EXAMINED_AT_ONCE) {
            let read: Vec<(u32, Loaded)> = part
                .par_iter()
                .map(|pairs| Ok((pairs[0].0, Loaded::read(docs, pairs[0].0)?)))
                .collect::<Result<_>>()?;
            let sketches: Vec<Sketch> =
                read.par_iter().map(|(_, loaded)| loaded.sketch()).collect();
            // The pairs by the candidates' places in the part.
            let local: Vec<(u32, u32)> = part
                .iter()
                .enumerate()
                .flat_map(|(place, pairs)| pairs.iter().map(move |&(_, doc)| (place as u32, doc)))
                .collect();
            let links = linking(&local, &sketches, fresh, config);
            kept.extend(
                read.into_iter()
                    .zip(links)
                    .filter_map(|(record, link)| link.then_some(record)),
            );
        }
        Ok(kept)
    }

    /// The `records` of the candidates to join, with their stories and those stories'
    /// representatives: only the stories the night may join.
    fn load(t: &Tables, mut records: FxHashMap<u32, Loaded>) -> Result<Neighbourhood> {
        let mut stories: FxHashMap<u32, StoryRecord> = FxHashMap::default();
        for record in records.values() {
            if let Entry::Vacant(slot) = stories.entry(record.story) {
                slot.insert(t.story(record.story)?);
            }
        }
        for story in stories.values() {
            if let Entry::Vacant(slot) = records.entry(story.representative) {
                slot.insert(Loaded::of(t, story.representative)?);
            }
        }
        let mut numbers: Vec<u32> = records.keys().copied().collect();
        numbers.sort_unstable();
        Ok(Neighbourhood {
            numbers,
            records,
            stories,
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
                    // The index keeps no leads: a weak link to an indexed document is not
                    // checked for a shared opening.
                    lead: Lead::default(),
                }
            })
            .collect()
    }

    /// The known stories for [`join`]. Candidates are made from every sketch as the index
    /// keeps it (16-bit minima), known and fresh alike, one key range at a time as `cluster`
    /// makes them: two documents whose full minima share a key share it in their low bits.
    fn known(&self) -> Known {
        let local: FxHashMap<u32, u32> = self
            .numbers
            .iter()
            .enumerate()
            .map(|(i, &n)| (n, i as u32))
            .collect();
        let fresh_from = self.numbers.len() as u32;
        let mut by_story: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
        for &n in &self.numbers {
            by_story.entry(self.records[&n].story).or_default().push(n);
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
                        unloaded: story.size.saturating_sub(loaded.len() as u32),
                    }
                })
                .collect(),
            pairs: None,
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
    let ids = txn.open_table(IDS)?;
    let docs = txn.open_table(DOCS)?;
    for (i, id) in collection.ids.iter().enumerate() {
        let Some(number) = ids.get(id)?.map(|v| v.value()) else {
            continue;
        };
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
        let whole = pass_pairs(&fresh, &maker, 0, 1);
        assert!(whole.len() > 300);
        assert!(whole.windows(2).all(|w| w[0] < w[1]));
        assert!(whole.iter().all(|&(_, doc)| doc < 320));
        for passes in [2, 3, 7] {
            let split: Vec<(u32, u32)> = (0..passes)
                .flat_map(|pass| pass_pairs(&fresh, &maker, pass, passes))
                .collect();
            assert_eq!(split, whole, "{passes} passes");
        }
    }
}
