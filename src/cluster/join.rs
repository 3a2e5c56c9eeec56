//! Joining verified pairs into stories: union-find over the documents, pairs joined strongest
//! first, two clusters merged only when their representatives also pass a relaxed check, then
//! lone documents attached on weak links. Each union is recorded as a [`Link`], from which
//! [`joined_via`] tells how each member came into its cluster. [`join`] runs candidates,
//! verification and joining in order, and can start from stories already formed ([`Known`]).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;

use super::candidates::{indexed_pairs, merge_distinct, Bucketing, INDEX_ENTRIES_PER_RANGE};
use super::copies::find_copies;
use super::verify::{Buffers, KeptSets};
use super::{Cluster, ClusterStats};
use crate::config::Plan;
use crate::corpus::set_store::SetsView;
use crate::sketch::Sketch;
use crate::{Cancel, Error};

/// Candidate pairs verified at once: their outcomes are collected a slice at a time (8 MiB of
/// outcomes), and what passes in a slice is one run of [`StrongestFirst`].
const SCORED_PER_SLICE: usize = 1 << 18;

/// The connected components of a graph given as an edge list (two aligned lists of vertex
/// numbers, any `i64`): the vertices that are in an edge, sorted, and each one's component as
/// the component's smallest vertex.
pub fn edge_components(a: &[i64], b: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut nodes: Vec<i64> = a.iter().chain(b).copied().collect();
    nodes.sort_unstable();
    nodes.dedup();
    let at = |v: &i64| nodes.binary_search(v).expect("every vertex is listed") as u32;
    let mut sets = UnionFind::new(nodes.len());
    for (x, y) in a.iter().zip(b) {
        sets.union(at(x), at(y));
    }
    // Each set is sorted, so its first member is its smallest vertex.
    let mut roots = vec![0i64; nodes.len()];
    for set in sets.sets() {
        for &member in &set {
            roots[member as usize] = nodes[set[0] as usize];
        }
    }
    (nodes, roots)
}

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

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Counts `more` members that are not among the elements in the set whose representative
    /// is `root` (a known story's members that are not loaded).
    pub(crate) fn count_more(&mut self, root: u32, more: u32) {
        self.size[root as usize] += more;
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

/// Documents already placed in stories before this run, such as an index's stories around
/// tonight's documents. Documents `0..fresh_from` are known: pairs among them are never
/// checked again, and each known story starts as one set with its own representative.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// The first document that is not known.
    pub(crate) fresh_from: u32,
    /// The known stories; every known document belongs to one.
    pub stories: Vec<KnownStory>,
    /// The candidate pairs of all documents, when the caller has made them (a distributed
    /// job that made them over a larger collection than the documents joined here, with its
    /// bucket rules); made from the signatures when `None`.
    pub pairs: Option<Vec<(u32, u32)>>,
    /// The candidate pairs of known documents with fresh ones, when the caller has found them
    /// (an index add, in its postings), each a known document then a fresh one, sorted and
    /// distinct: the candidate index is then made of the fresh documents alone.
    pub(crate) known_pairs: Option<Vec<(u32, u32)>>,
}

/// One known story, as far as it is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownStory {
    /// Its representative (a known document).
    pub representative: u32,
    /// Its other loaded members.
    pub members: Vec<u32>,
    /// How many of its members are not loaded: they count for its size.
    pub(crate) unloaded: u32,
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
    pub(crate) partner: u32,
    /// The link's score (see [`Link::score`]).
    pub score: f64,
    /// True when that link is weak.
    pub weak: bool,
    /// Links between the member and the representative: 1 for a direct link.
    pub(crate) depth: u32,
}

/// How each document came into its cluster, by document number: `None` for a representative
/// and for a document no link reaches (one alone). `links` are those of the clustering that
/// made `clusters` from `sketches` and `sets` (see `super::cluster_with_links`).
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
    config: &Plan,
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
    let verifier = config.verifier;
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

/// The caller's candidate pairs as the join takes them: each pair smaller document first,
/// sorted and distinct, and none with a copy (copies join their original on their own and are
/// in no bucket).
fn given_pairs(given: &[(u32, u32)], is_copy: impl Fn(u32) -> bool) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = given
        .iter()
        .filter(|&&(a, b)| a != b && !is_copy(a) && !is_copy(b))
        .map(|&(a, b)| (a.min(b), a.max(b)))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// Joins documents into sets: candidate pairs, verified, joined strongest first with the
/// representative check, then lone documents attached. `known` documents start in their
/// stories, and only pairs with at least one other document are checked. Documents with a set
/// in `shingles` are compared exactly, pairs with any other by their estimate. Stops with
/// [`Error::Cancelled`] at its next check (between the ranges of candidate keys and between
/// slices of the pairs verified) once `cancel` is cancelled.
pub fn join(
    sketches: &[Sketch],
    shingles: SetsView,
    config: &Plan,
    known: &Known,
    cancel: &Cancel,
) -> Result<Joined, Error> {
    let mut stats = ClusterStats::default();
    let copies = find_copies(sketches, shingles, known.fresh_from);
    let mut bucketing = Bucketing::new(config, known.fresh_from, &copies);
    if known.known_pairs.is_some() {
        bucketing.index_fresh_only();
    }
    let pairs = match &known.pairs {
        Some(given) => given_pairs(given, |d| copies.is_copy(d)),
        None => {
            let found = indexed_pairs(
                sketches,
                config,
                &mut bucketing,
                INDEX_ENTRIES_PER_RANGE,
                cancel,
            )?;
            match &known.known_pairs {
                Some(given) => merge_distinct(&found, &given_pairs(given, |d| copies.is_copy(d))),
                None => found,
            }
        }
    };
    bucketing.count_into(&mut stats);
    stats.candidate_pairs = pairs.len();
    stats.copies = copies.len();
    let (mut verified, mut weak_links) = score_pairs(&pairs, sketches, shingles, config, cancel)?;
    drop(pairs);
    let attach = config.cluster.attach_similarity;
    let copy_pairs = || copies.pairs.iter().map(|&(o, c)| (1.0, o, c)).collect();
    verified.add_run(copy_pairs());
    if attach > 0.0 && attach <= 1.0 {
        weak_links.push(copy_pairs());
    }
    stats.verified_pairs = verified.len();
    let (mut sets, mut representative) = known_stories(sketches.len(), known);
    let mut links = Vec::new();
    join_strongest_first(
        verified,
        (&mut sets, &mut representative),
        (sketches, shingles, config),
        &mut links,
        &mut stats,
    );
    if attach > 0.0 {
        stats.attached = attach_lone_documents(
            &mut sets,
            weak_links.into_iter().flatten(),
            attach,
            &mut links,
        );
    }
    let members = sets.sets();
    let representatives = members
        .iter()
        .map(|set| representative[sets.find(set[0]) as usize])
        .collect();
    Ok(Joined {
        sets: members,
        representatives,
        stats,
        links,
    })
}

/// Weak links of a slice of pairs: `(jaccard, a, b)`.
type WeakLinks = Vec<(f64, u32, u32)>;

/// The candidate pairs scored: the verified ones with their scores, strongest first, and the
/// weak links (pairs that may attach a document left alone by the representative check) with
/// their Jaccard. Pairs are scored a slice at a time, and what passes in a slice is kept in
/// lists of its exact size (16 bytes a pair), the verified ones sorted strongest first: nothing
/// is held twice or grown by doubling, and the runs are merged as they are joined.
fn score_pairs(
    pairs: &[(u32, u32)],
    sketches: &[Sketch],
    shingles: SetsView,
    config: &Plan,
    cancel: &Cancel,
) -> Result<(StrongestFirst, Vec<WeakLinks>), Error> {
    let verifier = config.verifier;
    let (attach, attach_lead) = (config.cluster.attach_similarity, config.cluster.attach_lead);
    let mut verified = StrongestFirst::default();
    let mut weak_links: Vec<WeakLinks> = Vec::new();
    for slice in pairs.chunks(SCORED_PER_SLICE) {
        cancel.check()?;
        let outcomes: Vec<Option<(f64, Option<f64>, bool)>> = slice
            .par_iter()
            .map_init(Buffers::default, |buffers, &(a, b)| {
                let (sa, sb) = (&sketches[a as usize], &sketches[b as usize]);
                let jaccard = verifier.jaccard(sa, sb, || buffers.sets(shingles, a, b))?;
                let score = verifier.score_with(jaccard, sa, sb);
                // A pair that passes may attach a document left alone by the representative
                // check; one that passes only the attach threshold is a weak link.
                let weak = attach > 0.0
                    && jaccard >= attach
                    && (score.is_some()
                        || buffers.open_alike(shingles, (a, sa), (b, sb), attach_lead));
                (score.is_some() || weak).then_some((jaccard, score, weak))
            })
            .collect();
        let passed = || {
            outcomes
                .iter()
                .zip(slice)
                .filter_map(|(outcome, &(a, b))| Some(((*outcome)?, a, b)))
        };
        verified.add_run(exact(
            passed().filter_map(|((_, score, _), a, b)| Some((score?, a, b))),
        ));
        let weak = exact(
            passed()
                .filter(|&((_, _, weak), _, _)| weak)
                .map(|((jaccard, _, _), a, b)| (jaccard, a, b)),
        );
        if !weak.is_empty() {
            weak_links.push(weak);
        }
    }
    Ok((verified, weak_links))
}

/// One set a document, with the `known` stories joined already (each with its representative
/// and its members not loaded counted), and each set's representative.
fn known_stories(documents: usize, known: &Known) -> (UnionFind, Vec<u32>) {
    let mut sets = UnionFind::new(documents);
    let mut representative: Vec<u32> = (0..documents as u32).collect();
    for story in &known.stories {
        for &member in &story.members {
            sets.union(story.representative, member);
        }
        let root = sets.find(story.representative);
        sets.count_more(root, story.unloaded);
        representative[root as usize] = story.representative;
    }
    (sets, representative)
}

/// Joins the verified pairs strongest first, each only when the representatives of the two
/// sets it would join pass the relaxed check too (`cluster.check-representatives`); the larger
/// set keeps its representative. Each join is a link.
fn join_strongest_first(
    verified: StrongestFirst,
    (sets, representative): (&mut UnionFind, &mut [u32]),
    (sketches, shingles, config): (&[Sketch], SetsView, &Plan),
    links: &mut Vec<Link>,
    stats: &mut ClusterStats,
) {
    let relaxed = config.verifier.relaxed();
    let mut kept = KeptSets::default();
    for (score, a, b) in verified.merged() {
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
}

/// The items of `items` in a list of their exact size (counted first, so the list is never
/// grown by doubling).
fn exact<T>(items: impl Iterator<Item = T> + Clone) -> Vec<T> {
    let mut list = Vec::with_capacity(items.clone().count());
    list.extend(items);
    list
}

/// Scored pairs `(score, a, b)` kept as runs, each sorted strongest first (ties by the smaller
/// documents), and read back as one list in that order by merging the runs.
#[derive(Debug, Default)]
struct StrongestFirst {
    runs: Vec<Vec<(f64, u32, u32)>>,
}

impl StrongestFirst {
    /// The order of the pairs: higher score first, then by the documents.
    fn order(x: &(f64, u32, u32), y: &(f64, u32, u32)) -> Ordering {
        y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2))
    }

    /// Adds a run of pairs (any order; sorted here).
    fn add_run(&mut self, mut run: Vec<(f64, u32, u32)>) {
        if !run.is_empty() {
            run.par_sort_unstable_by(Self::order);
            self.runs.push(run);
        }
    }

    /// How many pairs the runs hold.
    fn len(&self) -> usize {
        self.runs.iter().map(Vec::len).sum()
    }

    /// All pairs in order, each run let go once it is read.
    fn merged(self) -> impl Iterator<Item = (f64, u32, u32)> {
        /// The next pair of a run; the heap's greatest is the pair that comes first.
        struct Head((f64, u32, u32), usize);
        impl PartialEq for Head {
            fn eq(&self, other: &Head) -> bool {
                self.cmp(other) == Ordering::Equal
            }
        }
        impl Eq for Head {}
        impl PartialOrd for Head {
            fn partial_cmp(&self, other: &Head) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl Ord for Head {
            fn cmp(&self, other: &Head) -> Ordering {
                StrongestFirst::order(&other.0, &self.0)
            }
        }
        let mut runs: Vec<std::vec::IntoIter<(f64, u32, u32)>> =
            self.runs.into_iter().map(Vec::into_iter).collect();
        let mut heads: BinaryHeap<Head> = runs
            .iter_mut()
            .enumerate()
            .filter_map(|(run, pairs)| Some(Head(pairs.next()?, run)))
            .collect();
        std::iter::from_fn(move || {
            let Head(pair, run) = heads.pop()?;
            match runs[run].next() {
                Some(next) => heads.push(Head(next, run)),
                None => runs[run] = Vec::new().into_iter(),
            }
            Some(pair)
        })
    }
}

/// Joins each document that is still alone to the cluster of its most similar candidate, when
/// that candidate is in a cluster of two or more and their estimated Jaccard is at least
/// `attach`. A lone document can only join one story, never bridge two, and two lone documents
/// are never joined on a weak link. Each attachment is added to `links`. Returns the number of
/// documents attached.
pub(super) fn attach_lone_documents(
    sets: &mut UnionFind,
    pairs: impl Iterator<Item = (f64, u32, u32)>,
    attach: f64,
    links: &mut Vec<Link>,
) -> usize {
    let n = sets.len();
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
pub(super) fn fuller(a: u32, b: u32, sketches: &[Sketch]) -> u32 {
    let key = |d: u32| (sketches[d as usize].shingles, std::cmp::Reverse(d));
    if key(a) >= key(b) {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edge_components_name_each_vertex_by_the_smallest_vertex_of_its_component() {
        let (nodes, roots) = edge_components(&[9, 3, -4, 20], &[3, 7, 40, 9]);
        assert_eq!(nodes, [-4, 3, 7, 9, 20, 40]);
        assert_eq!(roots, [-4, 3, 3, 3, 3, -4]);
        assert_eq!(edge_components(&[], &[]), (vec![], vec![]));
    }

    proptest! {
        /// Runs merged come out as the whole list sorted strongest first, ties by documents.
        #[test]
        fn strongest_first_merges_runs_in_order(
            runs in prop::collection::vec(
                prop::collection::vec((0u8..6, 0u32..50, 0u32..50), 0..40),
                0..8,
            )
        ) {
            let runs: Vec<Vec<(f64, u32, u32)>> = runs
                .into_iter()
                .map(|run| run.into_iter().map(|(s, a, b)| (f64::from(s) / 5.0, a, b)).collect())
                .collect();
            let mut all: Vec<(f64, u32, u32)> = runs.iter().flatten().copied().collect();
            all.sort_by(StrongestFirst::order);
            let mut pairs = StrongestFirst::default();
            for run in runs {
                pairs.add_run(run);
            }
            prop_assert_eq!(pairs.len(), all.len());
            prop_assert_eq!(pairs.merged().collect::<Vec<_>>(), all);
        }
    }
}
