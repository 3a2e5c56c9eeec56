//! Clustering: candidate pairs from shared candidate keys (supershingles or megashingles),
//! verification of each pair from its signatures, and union-find into clusters.
//!
//! Exact copies (equal shingle sets, see [`crate::copies`]) are found first: each copy is
//! joined to its original directly, with similarity 1, and only the originals take part in
//! candidate generation, so any number of copies of one text cluster at a cost linear in
//! their number.
//!
//! The candidate index is a sorted `Vec<(key, doc)>`; each run of equal keys is a bucket. A
//! bucket of up to `ALL_PAIRS_BUCKET` documents (its originals counted with their copies)
//! gives all its pairs; a larger one joins each member to the bucket's first member only, so a
//! bucket of `n` documents costs `O(n)` checks, never `O(n²)`. A bucket of more than
//! `cluster.max-bucket` distinct documents is boilerplate and is cut: it gives no pairs, and
//! the run counts the cut buckets and the documents in them. A large collection's index is
//! made and read one key range at a time (its keys made again from the signatures for each
//! range), so that it never needs to be held whole.
//!
//! A pair is verified by its Jaccard similarity, or by its containment (the share of the
//! smaller text's shingles found in the larger: a text cut to its lead). Both are exact from the
//! shingle sets with `cluster.verify = "exact"`, else estimated from the minima; pairs whose
//! estimate is far below every threshold are rejected without an exact check. Verified pairs are
//! then joined strongest first, and two clusters merge only when their representatives (each
//! cluster's fullest member when it formed; a larger cluster keeps its own when a smaller one
//! joins) also pass a check at half the thresholds: one bridge document
//! similar to two different stories cannot glue them together.
//!
//! Last, a document still alone joins the story of its most similar candidate when their
//! Jaccard reaches `cluster.attach-similarity` (a heavy rewrite of a story that is already
//! established); it can join one story only, so it cannot bridge two. Such a weak link also
//! needs the two texts to open alike (`cluster.attach-lead`): rewrites keep a story's lead,
//! while texts on one topic, or letters filled in from one template, share phrases further in.
//!
//! Each union is recorded as a [`Link`], so a reader can see how each member came into its
//! cluster ([`joined_via`]): on a verified pair with the representative, through another
//! member, or attached on a weak link.
//!
//! Documents are numbered in id order and ties are broken by number, so the result does not
//! depend on the order of the input or the number of threads.
//!
//! [`join`] can start from stories already formed ([`Known`], an index's stories around a new
//! night's documents): those start as sets with their own representatives, count with their
//! full size, and pairs of two known documents are not checked again.

use std::ops::Range;

use rayon::prelude::*;

use crate::config::Config;
use crate::copies::{find_copies, Copies};
use crate::sets::SetsView;
use crate::signature::estimate_jaccard;
use crate::sketch::Sketch;
use crate::supershingle::KeyMaker;

/// Disjoint sets over `0..n` with path compression (halving) and union by size.
#[derive(Debug, Clone)]
pub struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u32>,
}

impl UnionFind {
    /// `n` singleton sets.
    pub fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n as u32).collect(),
            size: vec![1; n],
        }
    }

    /// The representative of `x`'s set.
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let grandparent = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = grandparent;
            x = grandparent;
        }
        x
    }

    /// The number of members of the set whose representative is `root`.
    pub fn size_of(&self, root: u32) -> u32 {
        self.size[root as usize]
    }

    /// Joins the sets of `a` and `b`; true when they were apart.
    pub fn union(&mut self, a: u32, b: u32) -> bool {
        let (mut ra, mut rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        if self.size[ra as usize] < self.size[rb as usize] {
            std::mem::swap(&mut ra, &mut rb);
        }
        self.parent[rb as usize] = ra;
        self.size[ra as usize] += self.size[rb as usize];
        true
    }

    /// The sets, each sorted, in order of their smallest member.
    pub fn sets(&mut self) -> Vec<Vec<u32>> {
        let n = self.parent.len();
        let mut index_of_root = vec![u32::MAX; n];
        let mut sets: Vec<Vec<u32>> = Vec::new();
        for x in 0..n as u32 {
            let root = self.find(x) as usize;
            if index_of_root[root] == u32::MAX {
                index_of_root[root] = sets.len() as u32;
                sets.push(Vec::new());
            }
            sets[index_of_root[root] as usize].push(x);
        }
        sets
    }
}

/// One cluster: its members in output order, the representative first.
#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Document numbers with their estimated Jaccard to the representative (1.0 for itself);
    /// `None` for a document that could not be compared.
    pub members: Vec<(u32, Option<f64>)>,
}

impl Cluster {
    /// The representative: the first member.
    pub fn representative(&self) -> u32 {
        self.members[0].0
    }
}

/// Counts that describe one clustering run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterStats {
    /// Distinct candidate keys.
    pub keys: usize,
    /// Buckets cut: keys shared by more than `max-bucket` distinct documents, ignored as
    /// boilerplate.
    pub cut_buckets: usize,
    /// Documents in the cut buckets (copies of them included), each counted once.
    pub cut_bucket_documents: usize,
    /// Documents joined directly to an earlier document with an equal shingle set.
    pub copies: usize,
    /// Distinct candidate pairs checked.
    pub candidate_pairs: usize,
    /// Pairs that passed verification.
    pub verified_pairs: usize,
    /// Verified pairs not joined because their clusters' representatives disagree.
    pub representative_rejections: usize,
    /// Lone documents attached to a story on a weaker link.
    pub attached: usize,
}

/// Buckets up to this size give all their pairs.
pub const ALL_PAIRS_BUCKET: usize = 16;

/// The pair checks of a configuration.
#[derive(Debug, Clone, Copy)]
pub struct Verifier {
    /// Least Jaccard.
    pub min_similarity: f64,
    /// Least containment.
    pub min_containment: f64,
    /// Below this estimated Jaccard a pair is not worth an exact check: half the lowest
    /// threshold, two standard errors and more below it for 84 minima.
    pub prefilter: f64,
    /// Standard errors taken off a similarity that is only estimated.
    pub estimate_margin: f64,
}

/// Fewest shingles a text needs for its containment in another to count.
pub const MIN_CONTAINED_SHINGLES: u32 = 25;

impl Verifier {
    /// The checks of `config`.
    pub fn new(config: &Config) -> Verifier {
        let attach = config.cluster.attach_similarity;
        let lowest = if attach > 0.0 {
            attach.min(config.cluster.min_similarity)
        } else {
            config.cluster.min_similarity
        };
        Verifier {
            min_similarity: config.cluster.min_similarity,
            min_containment: config.cluster.min_containment,
            prefilter: lowest / 2.0,
            estimate_margin: config.cluster.estimate_margin,
        }
    }

    /// The same checks at half the thresholds.
    pub fn relaxed(&self) -> Verifier {
        Verifier {
            min_similarity: self.min_similarity / 2.0,
            min_containment: self.min_containment / 2.0,
            prefilter: self.prefilter / 2.0,
            estimate_margin: self.estimate_margin,
        }
    }

    /// The pair's Jaccard similarity: exact when `sets` gives both shingle sets (it is asked
    /// only when the estimate passes the prefilter), else estimated from the minima less
    /// `estimate_margin` standard errors; `None` when the estimate is below the prefilter.
    pub fn jaccard<'s>(
        &self,
        a: &Sketch,
        b: &Sketch,
        sets: impl FnOnce() -> PairSets<'s>,
    ) -> Option<f64> {
        let estimate = estimate_jaccard(&a.signature, &b.signature);
        if estimate < self.prefilter {
            return None;
        }
        Some(match sets() {
            Some((x, y)) => exact_jaccard(x, y),
            None => {
                let k = a.signature.len() as f64;
                let error = (estimate * (1.0 - estimate) / k).sqrt();
                (estimate - self.estimate_margin * error).max(0.0)
            }
        })
    }

    /// The pair's score when it passes: its Jaccard, or its containment.
    pub fn score<'s>(
        &self,
        a: &Sketch,
        b: &Sketch,
        sets: impl FnOnce() -> PairSets<'s>,
    ) -> Option<f64> {
        self.score_with(self.jaccard(a, b, sets)?, a, b)
    }

    /// [`Verifier::score`] with the pair's Jaccard already known.
    pub fn score_with(&self, jaccard: f64, a: &Sketch, b: &Sketch) -> Option<f64> {
        if jaccard >= self.min_similarity {
            return Some(jaccard);
        }
        let smaller = a.shingles.min(b.shingles);
        if smaller < MIN_CONTAINED_SHINGLES {
            return None;
        }
        let containment = estimate_containment(jaccard, a.shingles, b.shingles);
        (containment >= self.min_containment).then_some(containment)
    }
}

/// Whether two texts open alike: at least `min_share` of the lead of one is found in the
/// other's shingle set. Where that cannot be told (no sets: an estimated pair; no lead: a
/// document read from an index) it counts as yes, and so it does with `min_share` 0 (the
/// check off).
pub fn open_alike(a: &Sketch, b: &Sketch, sets: PairSets, min_share: f64) -> bool {
    let Some((x, y)) = sets.filter(|_| min_share > 0.0) else {
        return true;
    };
    match (a.lead.share_in(y), b.lead.share_in(x)) {
        (Some(s), Some(t)) => s.max(t) >= min_share,
        _ => true,
    }
}

/// The shingle sets of a pair, when verification can compare them exactly.
pub type PairSets<'s> = Option<(&'s [u32], &'s [u32])>;

/// The exact Jaccard similarity of two sorted sets.
pub fn exact_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let common = crate::sorted::intersection_size(a, b);
    let union = a.len() + b.len() - common;
    if union == 0 {
        0.0
    } else {
        common as f64 / union as f64
    }
}

/// The share of the smaller set inside the larger, from their Jaccard and sizes:
/// `|A∩B| = J(|A|+|B|)/(1+J)`.
pub fn estimate_containment(jaccard: f64, a: u32, b: u32) -> f64 {
    let smaller = a.min(b);
    if smaller == 0 {
        return 0.0;
    }
    let common = jaccard * f64::from(a + b) / (1.0 + jaccard);
    (common / f64::from(smaller)).min(1.0)
}

/// Documents already placed in stories before this run, such as an index's stories around
/// tonight's documents. Documents `0..fresh_from` are known: pairs among them are never
/// checked again, and each known story starts as one set with its own representative.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// The first document that is not known.
    pub fresh_from: u32,
    /// The known stories; every known document belongs to one.
    pub stories: Vec<KnownStory>,
    /// The candidate index of all documents, known and fresh, when the caller has it (an
    /// index's postings); made from the signatures when `None`.
    pub index: Option<Vec<IndexEntry>>,
}

/// One entry of the candidate index: a candidate key and a document that has it. Packed, it
/// takes 12 bytes where a `(u64, u32)` takes 16. Entries order by key, then document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(C, packed(4))]
pub struct IndexEntry {
    /// The candidate key.
    pub key: u64,
    /// The document.
    pub doc: u32,
}

/// One known story, as far as it is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownStory {
    /// Its representative (a known document).
    pub representative: u32,
    /// Its other loaded members.
    pub members: Vec<u32>,
    /// How many of its members are not loaded: they count for its size.
    pub unloaded: u32,
}

/// The sets that verified pairs join, before they are ordered as clusters.
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// Each set's members, sorted; sets in order of their smallest member.
    pub sets: Vec<Vec<u32>>,
    /// Each set's representative: the one its joins were checked against.
    pub representatives: Vec<u32>,
    /// Counts from the run.
    pub stats: ClusterStats,
    /// The links that joined the sets, in the order they were made: a tree over each set.
    pub links: Vec<Link>,
}

/// A link that joined the sets of two documents: a verified pair, or the weak link that
/// attached a lone document to a story. Each union makes one, so the links of a clustering
/// form a tree over each cluster (a known story's members are not linked).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// One document.
    pub a: u32,
    /// The other.
    pub b: u32,
    /// The pair's score: its Jaccard or containment for a verified pair, its Jaccard for a
    /// weak link.
    pub score: f64,
    /// True for a weak link (a lone document attached, `cluster.attach-similarity`).
    pub weak: bool,
}

/// How a member came into its cluster, seen from the representative: linked to it directly,
/// or the first link on its way there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Via {
    /// The document at the other end of that link: the representative itself for a member
    /// whose pair with it passes, else the member it joined through.
    pub partner: u32,
    /// The link's score (see [`Link::score`]).
    pub score: f64,
    /// True when that link is weak.
    pub weak: bool,
    /// Links between the member and the representative: 1 for a direct link.
    pub depth: u32,
}

/// How each document came into its cluster, by document number: `None` for a representative
/// and for a document no link reaches (one alone). `links` are those of the clustering that
/// made `clusters` from `sketches` and `sets` (see [`cluster_with_links`]).
///
/// The links are followed from each representative. A member whose own pair with the
/// representative passes the pair check (as verification checks pairs) is linked to it
/// directly, whichever link joined it first; any other member joined through the member its
/// links lead through, and a member attached on a weak link keeps that link.
pub fn joined_via(
    clusters: &[Cluster],
    links: &[Link],
    sketches: &[Sketch],
    shingles: SetsView,
    config: &Config,
) -> Vec<Option<Via>> {
    let documents = sketches.len();
    // Each document's links, in one list cut by offsets.
    let mut offsets = vec![0u32; documents + 1];
    for link in links {
        offsets[link.a as usize + 1] += 1;
        offsets[link.b as usize + 1] += 1;
    }
    for i in 0..documents {
        offsets[i + 1] += offsets[i];
    }
    let mut filled = offsets.clone();
    let mut adjacent = vec![0u32; 2 * links.len()];
    for (number, link) in links.iter().enumerate() {
        for end in [link.a, link.b] {
            adjacent[filled[end as usize] as usize] = number as u32;
            filled[end as usize] += 1;
        }
    }
    let mut via: Vec<Option<Via>> = vec![None; documents];
    let verifier = Verifier::new(config);
    let mut buffers = Buffers::default();
    let mut reached: Vec<u32> = Vec::new();
    for cluster in clusters {
        // The members in the order the links reach them from the representative.
        let root = cluster.representative();
        reached.clear();
        reached.push(root);
        let mut next = 0;
        while let Some(&doc) = reached.get(next) {
            next += 1;
            let (from, to) = (offsets[doc as usize], offsets[doc as usize + 1]);
            for &number in &adjacent[from as usize..to as usize] {
                let link = links[number as usize];
                let other = if link.a == doc { link.b } else { link.a };
                if other == root || via[other as usize].is_some() {
                    continue;
                }
                via[other as usize] = Some(Via {
                    partner: doc,
                    score: link.score,
                    weak: link.weak,
                    depth: 0,
                });
                reached.push(other);
            }
        }
        // A member whose own pair with the representative passes is linked to it directly;
        // the others are as many links away as the member they joined through, and one.
        for &doc in &reached[1..] {
            let mut v = via[doc as usize].expect("reached by a link");
            let (a, b) = (&sketches[doc as usize], &sketches[root as usize]);
            let direct = (!v.weak && v.partner != root)
                .then(|| verifier.score(a, b, || buffers.sets(shingles, doc, root)))
                .flatten();
            if let Some(score) = direct {
                (v.partner, v.score) = (root, score);
            }
            v.depth = match via[v.partner as usize] {
                Some(partner) if v.partner != root => partner.depth + 1,
                _ => 1,
            };
            via[doc as usize] = Some(v);
        }
    }
    via
}

/// Clusters of documents, sketches given in document-number order (by id); `sets` gives the
/// shingle sets that verification compares, where it is exact.
pub fn cluster(
    sketches: &[Sketch],
    sets: SetsView,
    config: &Config,
) -> (Vec<Cluster>, ClusterStats) {
    let (clusters, stats, _) = cluster_with_links(sketches, sets, config);
    (clusters, stats)
}

/// [`cluster`], with the links that joined the clusters (see [`joined_via`]).
pub fn cluster_with_links(
    sketches: &[Sketch],
    sets: SetsView,
    config: &Config,
) -> (Vec<Cluster>, ClusterStats, Vec<Link>) {
    let joined = join(sketches, sets, config, &Known::default());
    (
        clusters_of(joined.sets, sketches),
        joined.stats,
        joined.links,
    )
}

/// Sets of documents as clusters in output order: each set's representative first, then its
/// members by similarity to it; larger clusters first. A table of stories made elsewhere (a
/// clusters file, an index) is ordered this way to be shown as `cluster` shows its own.
pub fn clusters_of(sets: Vec<Vec<u32>>, sketches: &[Sketch]) -> Vec<Cluster> {
    let clusters = sets
        .into_iter()
        .map(|members| order_members(members, sketches))
        .collect::<Vec<_>>();
    sort_clusters(clusters)
}

/// Joins documents into sets: candidate pairs, verified, joined strongest first with the
/// representative check, then lone documents attached. `known` documents start in their
/// stories, and only pairs with at least one other document are checked. Documents with a set
/// in `shingles` are compared exactly, pairs with any other by their estimate.
pub fn join(sketches: &[Sketch], shingles: SetsView, config: &Config, known: &Known) -> Joined {
    let mut stats = ClusterStats::default();
    let copies = find_copies(sketches, shingles, known.fresh_from);
    let mut bucketing = Bucketing::new(config, known.fresh_from, &copies);
    let pairs = match &known.index {
        Some(index) => {
            let originals = index.iter().filter(|e| !copies.is_copy(e.doc));
            candidate_pairs(originals.copied().collect(), &mut bucketing)
        }
        None => indexed_pairs(sketches, config, &mut bucketing, INDEX_ENTRIES_PER_RANGE),
    };
    bucketing.count_into(&mut stats);
    stats.candidate_pairs = pairs.len();
    stats.copies = copies.len();
    let verifier = Verifier::new(config);
    let (attach, attach_lead) = (config.cluster.attach_similarity, config.cluster.attach_lead);
    // Each candidate pair with its Jaccard, its score when it passes, and whether it may be a
    // weak link for attaching a lone document.
    let scored: Vec<(f64, Option<f64>, bool, u32, u32)> = pairs
        .into_par_iter()
        .map_init(Buffers::default, |buffers, (a, b)| {
            let (sa, sb) = (&sketches[a as usize], &sketches[b as usize]);
            let jaccard = verifier.jaccard(sa, sb, || buffers.sets(shingles, a, b))?;
            let score = verifier.score_with(jaccard, sa, sb);
            // A pair that passes may attach a document left alone by the representative
            // check; one that passes only the attach threshold is a weak link.
            let weak = attach > 0.0
                && jaccard >= attach
                && (score.is_some()
                    || open_alike(sa, sb, buffers.sets(shingles, a, b), attach_lead));
            (score.is_some() || weak).then_some((jaccard, score, weak, a, b))
        })
        .flatten()
        .chain(copy_pairs_scored(&copies, attach))
        .collect();
    let mut verified: Vec<(f64, u32, u32)> = scored
        .iter()
        .filter_map(|&(_, score, _, a, b)| score.map(|s| (s, a, b)))
        .collect();
    stats.verified_pairs = verified.len();
    verified
        .par_sort_unstable_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let relaxed = verifier.relaxed();
    let mut kept = KeptSets::default();
    let mut sets = UnionFind::new(sketches.len());
    let mut representative: Vec<u32> = (0..sketches.len() as u32).collect();
    for story in &known.stories {
        for &member in &story.members {
            sets.union(story.representative, member);
        }
        let root = sets.find(story.representative);
        sets.size[root as usize] += story.unloaded;
        representative[root as usize] = story.representative;
    }
    let mut links = Vec::new();
    for (score, a, b) in verified {
        let (ra, rb) = (sets.find(a), sets.find(b));
        if ra == rb {
            continue;
        }
        let (pa, pb) = (representative[ra as usize], representative[rb as usize]);
        if config.cluster.check_representatives
            && (pa, pb) != (a, b)
            && relaxed
                .score(&sketches[pa as usize], &sketches[pb as usize], || {
                    kept.sets(shingles, pa, pb)
                })
                .is_none()
        {
            stats.representative_rejections += 1;
            continue;
        }
        // The larger cluster keeps its representative, so a newcomer, however full, never
        // speaks for a story it has just joined.
        let keep = match sets.size_of(ra).cmp(&sets.size_of(rb)) {
            std::cmp::Ordering::Greater => pa,
            std::cmp::Ordering::Less => pb,
            std::cmp::Ordering::Equal => fuller(pa, pb, sketches),
        };
        sets.union(a, b);
        links.push(Link {
            a,
            b,
            score,
            weak: false,
        });
        let root = sets.find(a);
        representative[root as usize] = keep;
    }
    if attach > 0.0 {
        let weak = scored
            .iter()
            .filter(|pair| pair.2)
            .map(|&(jaccard, _, _, a, b)| (jaccard, a, b));
        stats.attached = attach_lone_documents(&mut sets, weak, attach, &mut links);
    }
    let members = sets.sets();
    let representatives = members
        .iter()
        .map(|set| representative[sets.find(set[0]) as usize])
        .collect();
    Joined {
        sets: members,
        representatives,
        stats,
        links,
    }
}

/// The joins of the copies to their originals, scored as verification scores a pair of equal
/// sets: Jaccard 1, passing, and (with attaching on) a link a lone document may attach by.
fn copy_pairs_scored(copies: &Copies, attach: f64) -> Vec<(f64, Option<f64>, bool, u32, u32)> {
    let weak = attach > 0.0 && attach <= 1.0;
    copies
        .pairs
        .iter()
        .map(|&(original, copy)| (1.0, Some(1.0), weak, original, copy))
        .collect()
}

/// Room for the shingle sets of a pair read from a store's file. Pairs come sorted, so the
/// first document of a pair is often the one before's: a set still held is not read again.
#[derive(Debug, Default)]
struct Buffers {
    first: HeldSet,
    second: HeldSet,
}

/// A set read from file, and whose it is.
#[derive(Debug, Default)]
struct HeldSet {
    doc: Option<u32>,
    keys: Vec<u32>,
}

impl HeldSet {
    /// The set of `doc`, when it has one: from memory, from this buffer, or read into it.
    fn get<'s>(&'s mut self, sets: SetsView<'s>, doc: u32) -> Option<&'s [u32]> {
        if !sets.on_file() {
            return sets.get(doc, &mut self.keys);
        }
        if self.doc != Some(doc) {
            self.doc = None;
            sets.get(doc, &mut self.keys)?;
            self.doc = Some(doc);
        }
        Some(&self.keys)
    }
}

impl Buffers {
    /// The shingle sets of documents `a` and `b`, when both have one.
    fn sets<'s>(&'s mut self, sets: SetsView<'s>, a: u32, b: u32) -> PairSets<'s> {
        let Buffers { first, second } = self;
        first.get(sets, a).zip(second.get(sets, b))
    }
}

/// Most keys of sets read from file that [`KeptSets`] keeps.
const KEPT_KEYS: usize = 1 << 24;

/// The sets of the representative checks, which are made one after another and mostly name
/// the same representatives: sets read from file are kept (up to `KEPT_KEYS` keys, then all
/// dropped at once) rather than read again for each check.
#[derive(Debug, Default)]
struct KeptSets {
    sets: rustc_hash::FxHashMap<u32, Box<[u32]>>,
    keys: usize,
    buffers: Buffers,
}

impl KeptSets {
    /// The shingle sets of documents `a` and `b`, when both have one.
    fn sets<'s>(&'s mut self, sets: SetsView<'s>, a: u32, b: u32) -> PairSets<'s> {
        if !sets.on_file() {
            return self.buffers.sets(sets, a, b);
        }
        if self.keys > KEPT_KEYS {
            self.sets.clear();
            self.keys = 0;
        }
        for doc in [a, b] {
            if !self.sets.contains_key(&doc) {
                let set: Box<[u32]> = sets.get(doc, &mut self.buffers.first.keys)?.into();
                self.buffers.first.doc = None;
                self.keys += set.len();
                self.sets.insert(doc, set);
            }
        }
        Some((&self.sets[&a], &self.sets[&b]))
    }
}

/// Joins each document that is still alone to the cluster of its most similar candidate, when
/// that candidate is in a cluster of two or more and their estimated Jaccard is at least
/// `attach`. A lone document can only join one story, never bridge two, and two lone documents
/// are never joined on a weak link. Each attachment is added to `links`. Returns the number of
/// documents attached.
fn attach_lone_documents(
    sets: &mut UnionFind,
    pairs: impl Iterator<Item = (f64, u32, u32)>,
    attach: f64,
    links: &mut Vec<Link>,
) -> usize {
    let n = sets.parent.len();
    let size: Vec<u32> = (0..n as u32)
        .map(|d| {
            let root = sets.find(d);
            sets.size_of(root)
        })
        .collect();
    let mut best: Vec<Option<(f64, u32)>> = vec![None; n];
    for (jaccard, a, b) in pairs.filter(|p| p.0 >= attach) {
        for (lone, other) in [(a, b), (b, a)] {
            if size[lone as usize] != 1 || size[other as usize] < 2 {
                continue;
            }
            let better = best[lone as usize].is_none_or(|(j, o)| {
                jaccard.total_cmp(&j).then(o.cmp(&other)) == std::cmp::Ordering::Greater
            });
            if better {
                best[lone as usize] = Some((jaccard, other));
            }
        }
    }
    let mut attached = 0;
    for (lone, choice) in best.into_iter().enumerate() {
        if let Some((jaccard, other)) = choice {
            sets.union(lone as u32, other);
            links.push(Link {
                a: lone as u32,
                b: other,
                score: jaccard,
                weak: true,
            });
            attached += 1;
        }
    }
    attached
}

/// Of two documents, the one with more shingles; on a tie, the one with the smaller number.
fn fuller(a: u32, b: u32, sketches: &[Sketch]) -> u32 {
    let key = |d: u32| (sketches[d as usize].shingles, std::cmp::Reverse(d));
    if key(a) >= key(b) {
        a
    } else {
        b
    }
}

/// Most entries of the candidate index made at once, about: the keys are cut into as many
/// ranges as it takes for each range's share of the index to stay below this, and the ranges
/// are indexed one after another (see [`indexed_pairs`]). A million documents have tens of
/// millions of entries, 12 bytes each ([`IndexEntry`]); made whole, the index alone would take
/// half a gigabyte, and in ranges of 2^24 (192 MiB) it is made in three.
const INDEX_ENTRIES_PER_RANGE: usize = 1 << 24;

/// Documents whose entries of one part of the key values one task makes.
const RANGE_CHUNK_DOCUMENTS: usize = 4096;

/// The deduplicated candidate pairs of the sketches (see [`candidate_pairs`]), their candidate
/// index made one range at a time, each range holding about `per_range` entries, and each
/// range's pairs merged into those of the ranges before. A range is a run of key numbers (a
/// key's number is hashed into it, so equal keys share it), so each key is made once; past
/// one range per key number, each number's keys are also cut by value, and made again for
/// each part.
fn indexed_pairs(
    sketches: &[Sketch],
    config: &Config,
    bucketing: &mut Bucketing,
    per_range: usize,
) -> Vec<(u32, u32)> {
    let grouping = config.supershingle.grouping(config.signature.minima);
    let maker = KeyMaker::new(&grouping, config.signature.seed);
    let comparable: Vec<u32> = (0..sketches.len() as u32)
        .filter(|&d| sketches[d as usize].is_comparable() && !bucketing.copies.is_copy(d))
        .collect();
    let per_document = maker.keys_per_signature().max(1);
    let ranges = (comparable.len() * per_document)
        .div_ceil(per_range.max(1))
        .max(1);
    let runs = ranges.min(per_document);
    let parts = ranges.div_ceil(runs) as u64;
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for run in 0..runs {
        let keys = run * per_document / runs..(run + 1) * per_document / runs;
        for part in 0..parts {
            let index = candidate_index(sketches, &comparable, &maker, keys.clone(), (part, parts));
            let found = candidate_pairs(index, bucketing);
            pairs = merge_distinct(&pairs, &found);
        }
    }
    pairs
}

/// The union of two sorted lists of distinct pairs, sorted.
fn merge_distinct(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                merged.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                merged.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                merged.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
}

/// The candidate index of the `comparable` documents: their keys numbered `keys`, of those
/// whose value falls in part `part.0` of `part.1` equal parts of the key space.
fn candidate_index(
    sketches: &[Sketch],
    comparable: &[u32],
    maker: &KeyMaker,
    keys: Range<usize>,
    (part, parts): (u64, u64),
) -> Vec<IndexEntry> {
    // A document's keys, made into a list each thread keeps.
    let keys_of = |doc: u32, made: &mut Vec<u64>| {
        made.clear();
        let signature = &sketches[doc as usize].signature;
        maker.append_candidate_keys_in(signature, keys.clone(), made);
    };
    if parts == 1 {
        // Filled in place, each document's keys in its own slots: no list is grown.
        let per_document = keys.len();
        let mut index = vec![IndexEntry { key: 0, doc: 0 }; comparable.len() * per_document];
        index
            .par_chunks_mut(per_document.max(1))
            .zip(comparable)
            .for_each_init(Vec::new, |made, (slots, &doc)| {
                keys_of(doc, made);
                debug_assert_eq!(made.len(), slots.len());
                for (slot, &key) in slots.iter_mut().zip(made.iter()) {
                    *slot = IndexEntry { key, doc };
                }
            });
        return index;
    }
    // Each thread's share of the part's entries in one list, the lists then joined.
    let in_part = |key: u64| ((u128::from(key) * u128::from(parts)) >> 64) as u64 == part;
    let lists: Vec<Vec<IndexEntry>> = comparable
        .par_chunks(RANGE_CHUNK_DOCUMENTS)
        .map(|documents| {
            let (mut entries, mut made) = (Vec::new(), Vec::new());
            for &doc in documents {
                keys_of(doc, &mut made);
                let keys = made.iter().copied().filter(|&key| in_part(key));
                entries.extend(keys.map(|key| IndexEntry { key, doc }));
            }
            entries
        })
        .collect();
    lists.concat()
}

/// How candidate generation turns buckets into pairs, and what it counts as it goes.
#[derive(Debug)]
struct Bucketing<'c> {
    /// A bucket of more distinct documents than this is cut.
    max_bucket: usize,
    /// Pairs of two documents before this one are left out.
    fresh_from: u32,
    /// The copies: each stands in its original's buckets, and takes no part itself.
    copies: &'c Copies,
    /// Distinct candidate keys.
    keys: usize,
    /// Buckets cut.
    cut_buckets: usize,
    /// The documents in cut buckets, one bit each.
    cut_documents: Vec<u64>,
}

impl<'c> Bucketing<'c> {
    fn new(config: &Config, fresh_from: u32, copies: &'c Copies) -> Bucketing<'c> {
        Bucketing {
            max_bucket: config.cluster.max_bucket,
            fresh_from,
            copies,
            keys: 0,
            cut_buckets: 0,
            cut_documents: Vec::new(),
        }
    }

    /// Counts a cut bucket and marks its documents.
    fn cut(&mut self, bucket: &[IndexEntry]) {
        self.cut_buckets += 1;
        for entry in bucket {
            let doc = entry.doc as usize;
            if self.cut_documents.len() <= doc / 64 {
                self.cut_documents.resize(doc / 64 + 1, 0);
            }
            self.cut_documents[doc / 64] |= 1 << (doc % 64);
        }
    }

    /// The documents in cut buckets, each with its copies.
    fn documents_in_cut_buckets(&self) -> usize {
        let mut documents = 0;
        for (word_index, &word) in self.cut_documents.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let doc = word_index * 64 + bits.trailing_zeros() as usize;
                documents += self.copies.weight(doc as u32) as usize;
                bits &= bits - 1;
            }
        }
        documents
    }

    /// Puts its counts into `stats`.
    fn count_into(&self, stats: &mut ClusterStats) {
        stats.keys = self.keys;
        stats.cut_buckets = self.cut_buckets;
        stats.cut_bucket_documents = self.documents_in_cut_buckets();
    }
}

/// Deduplicated candidate pairs `(a, b)` with `a < b` and `b >= fresh_from` from a candidate
/// index whose copies are left out: pairs of two known documents are left out, a bucket of
/// more than `max_bucket` distinct documents is cut, and a bucket that stands for more than
/// `ALL_PAIRS_BUCKET` documents (with the copies of its own) is anchored at its first fresh
/// member. Counting a bucket with its copies pairs it as it would be paired with its copies in
/// it, less the pairs of copies, which their originals stand for.
fn candidate_pairs(mut index: Vec<IndexEntry>, bucketing: &mut Bucketing) -> Vec<(u32, u32)> {
    index.par_sort_unstable();
    index.dedup();
    let fresh_from = bucketing.fresh_from;
    let mut pairs = Vec::new();
    for bucket in index.chunk_by(|a, b| { a.key } == { b.key }) {
        bucketing.keys += 1;
        if bucket.len() > bucketing.max_bucket {
            bucketing.cut(bucket);
            continue;
        }
        let documents: usize = bucket
            .iter()
            .map(|e| bucketing.copies.weight(e.doc) as usize)
            .sum();
        if documents <= ALL_PAIRS_BUCKET {
            for (i, a) in bucket.iter().enumerate() {
                pairs.extend(
                    bucket[i + 1..]
                        .iter()
                        .map(|b| b.doc)
                        .filter(|&b| b >= fresh_from)
                        .map(|b| (a.doc, b)),
                );
            }
        } else if let Some(anchor) = bucket.iter().map(|e| e.doc).find(|&d| d >= fresh_from) {
            // Documents are sorted within the bucket, so the anchor is the first fresh one.
            pairs.extend(
                bucket
                    .iter()
                    .map(|e| e.doc)
                    .filter(|&d| d != anchor)
                    .map(|d| (d.min(anchor), d.max(anchor))),
            );
        }
    }
    drop(index);
    pairs.par_sort_unstable();
    pairs.dedup();
    pairs
}

/// The representative is the member with the most shingles (the fullest version of the text),
/// ties going to the smallest id; then the others by similarity to it, then by id.
fn order_members(members: Vec<u32>, sketches: &[Sketch]) -> Cluster {
    let representative = *members
        .iter()
        .max_by_key(|&&d| (sketches[d as usize].shingles, std::cmp::Reverse(d)))
        .expect("a set is never empty");
    let rep = &sketches[representative as usize];
    let mut others: Vec<(u32, Option<f64>)> = members
        .into_iter()
        .filter(|&d| d != representative)
        .map(|d| {
            let s = &sketches[d as usize];
            (
                d,
                s.is_comparable()
                    .then(|| estimate_jaccard(&rep.signature, &s.signature)),
            )
        })
        .collect();
    others.sort_by(|a, b| {
        let (sa, sb) = (a.1.unwrap_or(-1.0), b.1.unwrap_or(-1.0));
        sb.total_cmp(&sa).then(a.0.cmp(&b.0))
    });
    let mut ordered = vec![(representative, rep.is_comparable().then_some(1.0))];
    ordered.extend(others);
    Cluster { members: ordered }
}

/// Larger clusters first; among equals, the one whose smallest member comes first.
fn sort_clusters(mut clusters: Vec<Cluster>) -> Vec<Cluster> {
    let smallest = |c: &Cluster| c.members.iter().map(|m| m.0).min().unwrap_or(0);
    clusters.sort_by_key(|c| (std::cmp::Reverse(c.members.len()), smallest(c)));
    clusters
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sets::SetStore;
    use crate::shingle::Lead;

    #[test]
    fn union_find_joins_and_counts() {
        let mut uf = UnionFind::new(6);
        assert!(uf.union(0, 1));
        assert!(uf.union(2, 1));
        assert!(!uf.union(0, 2));
        uf.union(4, 5);
        assert_eq!(uf.sets(), vec![vec![0, 1, 2], vec![3], vec![4, 5]]);
    }

    fn sketch(signature: Vec<u32>, shingles: u32) -> Sketch {
        Sketch {
            words: shingles + 4,
            shingles,
            signature,
            lead: Lead::default(),
        }
    }

    #[test]
    fn identical_signatures_cluster_and_short_texts_stay_alone() {
        let config = Config::default();
        let a: Vec<u32> = (0..84).collect();
        let b: Vec<u32> = (100..184).collect();
        let sketches = vec![
            sketch(a.clone(), 10),
            sketch(b.clone(), 10),
            sketch(a.clone(), 12),
            sketch(vec![u32::MAX; 84], 0),
            sketch(vec![u32::MAX; 84], 0),
        ];
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters.len(), 4);
        assert_eq!(clusters[0].members, vec![(2, Some(1.0)), (0, Some(1.0))]);
        assert_eq!(clusters[1].members, vec![(1, Some(1.0))]);
        assert_eq!(clusters[2].members, vec![(3, None)]);
        assert_eq!(stats.verified_pairs, 1);
    }

    #[test]
    fn buckets_of_more_distinct_documents_than_the_bound_are_cut_and_counted() {
        let mut config = Config::default();
        config.cluster.max_bucket = 2;
        // Three texts that share 80 of 84 minima: every key of theirs but a few is in a
        // bucket of 3 distinct documents.
        let near = |d: u32| -> Vec<u32> { (0..80).chain(1000 * d..1000 * d + 4).collect() };
        let sketches = vec![
            sketch(near(1), 10),
            sketch(near(2), 10),
            sketch(near(3), 10),
        ];
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters.len(), 3);
        assert!(stats.cut_buckets > 0 && stats.cut_buckets <= stats.keys);
        assert_eq!(stats.cut_bucket_documents, 3);
        assert_eq!((stats.candidate_pairs, stats.copies), (0, 0));
        // At a bound of 3 they are one story, and nothing is cut.
        config.cluster.max_bucket = 3;
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters.len(), 1);
        assert_eq!((stats.cut_buckets, stats.cut_bucket_documents), (0, 0));
    }

    #[test]
    fn copies_cluster_beyond_the_bucket_bound() {
        let mut config = Config::default();
        config.cluster.max_bucket = 2;
        let a: Vec<u32> = (0..84).collect();
        let b: Vec<u32> = (0..80).chain(1000..1004).collect();
        // Ten copies of one text and one near-copy of it: two distinct documents per bucket.
        let mut sketches = vec![sketch(a.clone(), 10); 10];
        sketches.insert(4, sketch(b, 10));
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters.len(), 1, "{clusters:?}");
        assert_eq!(clusters[0].members.len(), 11);
        assert_eq!(stats.copies, 9);
        assert_eq!((stats.cut_buckets, stats.cut_bucket_documents), (0, 0));
        // The near-copy pairs with the original only: the copies join it directly.
        assert_eq!(stats.candidate_pairs, 1);
        // A third distinct text in their buckets cuts them: the copies still cluster, and
        // the cut counts the documents the originals stand for.
        sketches.push(sketch((0..80).chain(2000..2004).collect(), 10));
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters[0].members.len(), 10, "{clusters:?}");
        assert_eq!(stats.cut_bucket_documents, 12);
    }

    #[test]
    fn with_copies_a_bucket_is_paired_as_without_them() {
        // Twelve distinct near-copies and their copies: with every copy in a bucket it stands
        // for more than 16 documents and is anchored, so the pairs are those of the anchor,
        // and the result the same.
        let config = Config::default();
        let near = |d: u32| -> Vec<u32> { (0..80).chain(1000 * d..1000 * d + 4).collect() };
        let distinct: Vec<Sketch> = (1..=12).map(|d| sketch(near(d), 50)).collect();
        let mut with_copies = distinct.clone();
        with_copies.extend(distinct.iter().take(6).cloned());
        let (clusters, stats) = cluster(&with_copies, SetsView::none(), &config);
        assert_eq!(stats.copies, 6);
        assert_eq!(clusters.len(), 1);
        let mut counted = ClusterStats::default();
        let copies = find_copies(&with_copies, SetsView::none(), 0);
        let mut bucketing = Bucketing::new(&config, 0, &copies);
        let pairs = indexed_pairs(&with_copies, &config, &mut bucketing, usize::MAX);
        bucketing.count_into(&mut counted);
        // Anchored at document 0: 11 pairs, not the 66 of all pairs of 12 documents.
        assert_eq!(pairs.len(), 11, "{pairs:?}");
        assert!(pairs.iter().all(|&(a, _)| a == 0));
        assert_eq!(counted.keys, stats.keys);
    }

    #[test]
    fn a_huge_bucket_costs_linear_pairs() {
        let mut config = Config::default();
        config.signature.minima = 5;
        config.supershingle.target_similarity = 0.0;
        config.supershingle.groups = 1;
        config.supershingle.minima_per_group = 4;
        config.supershingle.matching = crate::config::Matching::Supershingle;
        config.cluster.max_bucket = 200_000;
        let n = 100_000;
        // Distinct documents (a fifth minimum of their own) that share the four of the key.
        let sketches: Vec<Sketch> = (0..n as u32)
            .map(|d| sketch(vec![1, 2, 3, 4, 10 + d], 10))
            .collect();
        let copies = Copies::default();
        let mut bucketing = Bucketing::new(&config, 0, &copies);
        let pairs = indexed_pairs(&sketches, &config, &mut bucketing, INDEX_ENTRIES_PER_RANGE);
        assert_eq!(pairs.len(), n - 1);
        assert!(pairs.iter().all(|&(a, _)| a == 0));
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        assert_eq!(clusters.len(), 1);
        assert_eq!(stats.copies, 0);
    }

    #[test]
    fn any_number_of_copies_is_one_cluster_at_the_default_bound() {
        let config = Config::default();
        let minima: Vec<u32> = (0..84).collect();
        for n in [5_000, 5_001, 20_000] {
            let sketches = vec![sketch(minima.clone(), 100); n];
            let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
            assert_eq!(clusters.len(), 1, "{n} copies");
            assert_eq!(clusters[0].members.len(), n);
            assert_eq!(stats.copies, n - 1);
            assert_eq!((stats.candidate_pairs, stats.cut_buckets), (0, 0));
        }
    }

    #[test]
    fn an_index_made_in_key_ranges_gives_the_pairs_of_the_whole() {
        // Supershingles as keys (the default), and megashingles (the classic grouping).
        let mut classic = Config::default();
        classic.supershingle.target_similarity = 0.0;
        for config in [Config::default(), classic] {
            index_ranges_give_the_pairs_of_the_whole(&config);
        }
    }

    fn index_ranges_give_the_pairs_of_the_whole(config: &Config) {
        // Documents in small families of near-copies: each family shares most of its minima.
        let mut state = 7u64;
        let mut random = move || crate::signature::splitmix64(&mut state) as u32;
        let mut sketches = Vec::new();
        for _ in 0..60 {
            let base: Vec<u32> = (0..84).map(|_| random()).collect();
            for _ in 0..(random() % 5 + 1) {
                let mut signature = base.clone();
                for _ in 0..(random() % 12) {
                    signature[(random() % 84) as usize] = random();
                }
                sketches.push(sketch(signature, 100));
            }
        }
        sketches.push(sketch(vec![u32::MAX; 84], 0));
        // Copies of a few (some near-copies above kept every minimum, and are copies too).
        for d in [5, 40, 41, 100] {
            sketches.push(sketches[d].clone());
        }
        let copies = find_copies(&sketches, SetsView::none(), 3);
        let last = sketches.len() as u32;
        assert!((last - 4..last).all(|d| copies.is_copy(d)), "{copies:?}");
        // The configured bound, and one that cuts the buckets of the larger families.
        for max_bucket in [config.cluster.max_bucket, 2] {
            let mut config = config.clone();
            config.cluster.max_bucket = max_bucket;
            let pairs_in_ranges = |per_range| {
                let mut bucketing = Bucketing::new(&config, 3, &copies);
                let pairs = indexed_pairs(&sketches, &config, &mut bucketing, per_range);
                let mut stats = ClusterStats::default();
                bucketing.count_into(&mut stats);
                (pairs, stats)
            };
            let (whole, whole_stats) = pairs_in_ranges(usize::MAX);
            let fewest = if max_bucket == 2 { 1 } else { 50 };
            assert!(whole.len() > fewest, "{}", whole.len());
            assert_eq!(
                whole_stats.cut_buckets > 0,
                max_bucket == 2,
                "{whole_stats:?}"
            );
            for per_range in [1, 100, 1000] {
                let (ranged, stats) = pairs_in_ranges(per_range);
                assert_eq!(ranged, whole);
                assert_eq!(stats, whole_stats);
            }
        }
    }

    #[test]
    fn a_lone_document_attaches_to_a_story_but_not_to_another_lone_one() {
        let mut sets = UnionFind::new(5);
        sets.union(0, 1);
        // 2 is weakly like 1 (in a story) and more weakly like 3 (alone); 3 and 4 are alone.
        let pairs = vec![(0.26, 1, 2), (0.25, 2, 3), (0.3, 3, 4)];
        let mut links = Vec::new();
        let attached = attach_lone_documents(&mut sets, pairs.into_iter(), 0.25, &mut links);
        assert_eq!(attached, 1);
        assert_eq!(sets.sets(), vec![vec![0, 1, 2], vec![3], vec![4]]);
        let weak = Link {
            a: 2,
            b: 1,
            score: 0.26,
            weak: true,
        };
        assert_eq!(links, [weak]);
    }

    #[test]
    fn each_member_is_reached_from_the_representative_by_its_links() {
        let link = |a, b, score, weak| Link { a, b, score, weak };
        // 0-1 and 1-2 verified, 3 attached to 2 on a weak link; 4 and 5 alone.
        let links = [
            link(1, 2, 0.9, false),
            link(0, 1, 0.8, false),
            link(3, 2, 0.25, true),
        ];
        // 5 is linked through 2, but its own pair with 0 passes; 6 joined through 5.
        let links = [
            links[0],
            links[1],
            links[2],
            link(2, 5, 0.7, false),
            link(6, 5, 0.6, false),
        ];
        let clusters = vec![
            Cluster {
                members: vec![
                    (0, Some(1.0)),
                    (1, Some(0.8)),
                    (5, Some(1.0)),
                    (2, Some(0.0)),
                    (3, Some(0.0)),
                    (6, Some(0.0)),
                ],
            },
            Cluster {
                members: vec![(4, Some(1.0))],
            },
        ];
        let like = |from: u32| sketch((from..from + 84).collect(), 100);
        let sketches = [
            like(0),
            like(0),
            like(1000),
            like(2000),
            like(0),
            like(0),
            like(3000),
        ];
        let config = Config::default();
        let via = joined_via(&clusters, &links, &sketches, SetsView::none(), &config);
        let hop = |partner, score, weak, depth| {
            Some(Via {
                partner,
                score,
                weak,
                depth,
            })
        };
        assert_eq!(via[0], None);
        assert_eq!(via[1], hop(0, 0.8, false, 1));
        assert_eq!(via[2], hop(1, 0.9, false, 2));
        assert_eq!(via[3], hop(2, 0.25, true, 3));
        assert_eq!(via[4], None);
        assert_eq!(via[5], hop(0, 1.0, false, 1));
        assert_eq!(via[6], hop(5, 0.6, false, 2));
    }

    #[test]
    fn links_record_verified_pairs_and_weak_attachments() {
        let config = Config::default();
        let a: Vec<u32> = (0..84).collect();
        // Shares 24 of 84 minima with `a`: estimated Jaccard 0.29, enough to attach only.
        let weak: Vec<u32> = (0..24).chain(1000..1060).collect();
        let sketches = vec![sketch(a.clone(), 100), sketch(a, 100), sketch(weak, 100)];
        let (clusters, stats, links) = cluster_with_links(&sketches, SetsView::none(), &config);
        assert_eq!((clusters.len(), stats.attached), (1, 1));
        assert_eq!(links.len(), 2);
        let via = joined_via(&clusters, &links, &sketches, SetsView::none(), &config);
        assert_eq!(clusters[0].representative(), 0);
        assert!(matches!(
            via[1],
            Some(Via {
                partner: 0,
                weak: false,
                depth: 1,
                ..
            })
        ));
        assert!(matches!(
            via[2],
            Some(Via {
                partner: 0,
                weak: true,
                depth: 1,
                ..
            })
        ));
        assert_eq!(cluster(&sketches, SetsView::none(), &config).0, clusters);
    }

    #[test]
    fn representatives_keep_a_bridge_from_gluing_two_stories() {
        let config = Config::default();
        // Story A has minima 0..84, story B 1000..1084; the bridge shares half of each.
        let a: Vec<u32> = (0..84).collect();
        let b: Vec<u32> = (1000..1084).collect();
        let bridge: Vec<u32> = (0..42).chain(1042..1084).collect();
        let sketches = vec![
            sketch(a.clone(), 100),
            sketch(a, 100),
            sketch(bridge, 100),
            sketch(b.clone(), 100),
            sketch(b, 100),
        ];
        let (clusters, stats) = cluster(&sketches, SetsView::none(), &config);
        let together = |x: u32, y: u32| {
            clusters
                .iter()
                .any(|c| c.members.iter().any(|m| m.0 == x) && c.members.iter().any(|m| m.0 == y))
        };
        assert!(together(0, 1) && together(3, 4));
        assert!(!together(0, 3), "{clusters:?}");
        assert!(stats.representative_rejections >= 1);
    }

    #[test]
    fn known_stories_stay_apart_and_count_with_their_full_size() {
        let config = Config::default();
        let a: Vec<u32> = (0..84).collect();
        // Shares 24 of 84 minima with `a`: estimated Jaccard 0.29, enough to attach only.
        let weak: Vec<u32> = (0..24).chain(1000..1060).collect();
        let sketches = vec![
            sketch(a.clone(), 100),
            sketch(a.clone(), 100),
            sketch(weak, 100),
        ];
        let known = |unloaded| Known {
            fresh_from: 2,
            stories: vec![
                KnownStory {
                    representative: 0,
                    members: vec![],
                    unloaded,
                },
                KnownStory {
                    representative: 1,
                    members: vec![],
                    unloaded: 0,
                },
            ],
            index: None,
        };
        // Two known documents, however alike, are not joined again.
        let joined = join(&sketches, SetsView::none(), &config, &known(5));
        assert!(!joined.sets.iter().any(|s| s.contains(&0) && s.contains(&1)));
        // The new document attaches to story 0, which has 6 documents though 1 is loaded...
        assert!(joined.sets.iter().any(|s| s == &vec![0, 2]), "{joined:?}");
        assert_eq!(joined.stats.attached, 1);
        // ...but not to a story of one.
        let joined = join(&sketches, SetsView::none(), &config, &known(0));
        assert_eq!(joined.sets, vec![vec![0], vec![1], vec![2]]);
        assert_eq!(joined.representatives, vec![0, 1, 2]);
    }

    #[test]
    fn containment_is_estimated_from_jaccard_and_sizes() {
        // A ⊂ B with |A| = 50, |B| = 150: J = 1/3, containment of A in B = 1.
        assert!((estimate_containment(1.0 / 3.0, 50, 150) - 1.0).abs() < 1e-9);
        assert!((estimate_containment(0.0, 50, 150)).abs() < 1e-9);
        assert_eq!(estimate_containment(0.5, 0, 10), 0.0);
    }

    #[test]
    fn exact_sets_overrule_the_estimate() {
        let config = Config::default();
        let minima: Vec<u32> = (0..84).collect();
        let both = || vec![sketch(minima.clone(), 100), sketch(minima.clone(), 100)];
        // Equal signatures, but the sets share 10 of 190 keys: exact Jaccard 0.05.
        let (a, b): (Vec<u32>, Vec<u32>) = ((0..100).collect(), (90..190).collect());
        let verifier = Verifier::new(&config);
        let jaccard = verifier.jaccard(&both()[0], &both()[1], || Some((&a[..], &b[..])));
        assert!((jaccard.unwrap() - 10.0 / 190.0).abs() < 1e-12);
        let store = SetStore::of_sets(&[a, b]);
        let (clusters, _) = cluster(&both(), SetsView::of(&store, 0), &config);
        assert_eq!(clusters.len(), 2);
        // Without sets the estimate (1.0) decides.
        let (clusters, _) = cluster(&both(), SetsView::none(), &config);
        assert_eq!(clusters.len(), 1);
        // Sets numbered from 1: document 0 has none, so the pair is estimated.
        let (clusters, _) = cluster(&both(), SetsView::of(&store, 1), &config);
        assert_eq!(clusters.len(), 1);
        assert_eq!(exact_jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(exact_jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn a_weak_link_needs_texts_that_open_alike() {
        let config = Config::default();
        let minima: Vec<u32> = (0..84).collect();
        // Estimated Jaccard 0.29 for the lone document: a candidate of the story.
        let weak: Vec<u32> = (0..24).chain(1000..1060).collect();
        // The story's two copies hold 0..100; the lone text shares 0..40 of it and adds
        // 1000..1080 of its own: exact Jaccard 40/180 = 0.22, enough to attach only.
        let story: Vec<u32> = (0..100).collect();
        let lone: Vec<u32> = (0..40).chain(1000..1080).collect();
        let store = SetStore::of_sets(&[story.clone(), story, lone]);
        let lead = |keys: std::ops::Range<u32>| Lead::of(&keys.collect::<Vec<u32>>());
        let sketches = |story_lead: Lead, lone_lead: Lead| {
            vec![
                Sketch {
                    lead: story_lead.clone(),
                    ..sketch(minima.clone(), 100)
                },
                Sketch {
                    lead: story_lead,
                    ..sketch(minima.clone(), 100)
                },
                Sketch {
                    lead: lone_lead,
                    ..sketch(weak.clone(), 120)
                },
            ]
        };
        let attached = |sketches: &[Sketch], config: &Config| {
            let (clusters, stats) = cluster(sketches, SetsView::of(&store, 0), config);
            assert_eq!(stats.attached, usize::from(clusters.len() == 1));
            clusters.len() == 1
        };
        // A rewrite that keeps the story's opening attaches...
        assert!(attached(&sketches(lead(0..32), lead(0..32)), &config));
        // ...and so it does when only one text's opening is found in the other.
        assert!(attached(&sketches(lead(60..92), lead(8..40)), &config));
        // A text that shares phrases further in, but neither opening, stays alone.
        let apart = sketches(lead(60..92), lead(1000..1032));
        assert!(!attached(&apart, &config));
        // Unless the check is off, or cannot be made: no sets, or no lead (an indexed text).
        let off = Config::default()
            .with_setting("cluster.attach-lead=0")
            .unwrap();
        assert!(attached(&apart, &off));
        assert!(attached(&sketches(lead(60..92), Lead::default()), &config));
        let (sa, sb) = (&apart[0], &apart[2]);
        assert!(open_alike(sa, sb, None, 0.2));
        let store_sets = (&(0..100).collect::<Vec<u32>>()[..], &[1000u32, 1001][..]);
        assert!(!open_alike(sa, sb, Some(store_sets), 0.2));
    }
}
