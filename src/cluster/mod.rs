//! Clustering: candidate pairs from shared candidate keys (supershingles or megashingles),
//! verification of each pair from its signatures, and union-find into clusters.
//!
//! Exact copies (equal shingle sets, see [`crate::cluster::copies`]) are found first: each copy is
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
//! [`join()`] can start from stories already formed ([`Known`], an index's stories around a new
//! night's documents): those start as sets with their own representatives, count with their
//! full size, and pairs of two known documents are not checked again.

pub mod candidates;
pub mod copies;
pub mod intersection;
pub mod join;
pub mod verify;

pub use candidates::ALL_PAIRS_BUCKET;
pub use join::KnownStory;
pub use join::{join, joined_via, Joined, Known, Link, UnionFind, Via};
#[cfg(test)]
pub(crate) use verify::exact_jaccard;
pub use verify::Verifier;
pub(crate) use verify::{estimate_containment, open_alike};

use crate::config::Plan;
use crate::corpus::set_store::SetsView;
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::Sketch;
use crate::{Cancel, Error};

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
    pub(crate) candidate_pairs: usize,
    /// Pairs that passed verification.
    pub(crate) verified_pairs: usize,
    /// Verified pairs not joined because their clusters' representatives disagree.
    pub(crate) representative_rejections: usize,
    /// Lone documents attached to a story on a weaker link.
    pub(crate) attached: usize,
}

impl ClusterStats {
    /// Distinct candidate pairs checked.
    pub fn candidate_pairs(&self) -> usize {
        self.candidate_pairs
    }

    /// Pairs that passed verification.
    pub fn verified_pairs(&self) -> usize {
        self.verified_pairs
    }
}

/// Clusters of documents, sketches given in document-number order (by id); `sets` gives the
/// shingle sets that verification compares, where it is exact.
pub fn cluster(sketches: &[Sketch], sets: SetsView, config: &Plan) -> (Vec<Cluster>, ClusterStats) {
    match cluster_with_links(sketches, sets, config, &Cancel::new()) {
        Ok((clusters, stats, _)) => (clusters, stats),
        Err(_) => unreachable!("a fresh token is never cancelled"),
    }
}

/// [`cluster`], with the links that joined the clusters (see [`joined_via`]); stops with
/// [`Error::Cancelled`] once `cancel` is cancelled.
pub(crate) fn cluster_with_links(
    sketches: &[Sketch],
    sets: SetsView,
    config: &Plan,
    cancel: &Cancel,
) -> Result<(Vec<Cluster>, ClusterStats, Vec<Link>), Error> {
    let joined = join(sketches, sets, config, &Known::default(), cancel)?;
    Ok((
        clusters_of(joined.sets, sketches),
        joined.stats,
        joined.links,
    ))
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

/// The representative is the member with the most shingles (the fullest version of the text),
/// ties going to the smallest id; then the others by similarity to it, then by id.
pub(super) fn order_members(members: Vec<u32>, sketches: &[Sketch]) -> Cluster {
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
pub(super) fn sort_clusters(mut clusters: Vec<Cluster>) -> Vec<Cluster> {
    let smallest = |c: &Cluster| c.members.iter().map(|m| m.0).min().unwrap_or(0);
    clusters.sort_by_key(|c| (std::cmp::Reverse(c.members.len()), smallest(c)));
    clusters
}

#[cfg(test)]
mod tests {
    use super::candidates::{indexed_pairs, Bucketing, INDEX_ENTRIES_PER_RANGE};
    use super::copies::{find_copies, Copies};
    use super::join::attach_lone_documents;
    use super::*;
    use crate::config::Config;
    use crate::corpus::set_store::SetStore;
    use crate::sketch::shingle::Lead;

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
        Sketch::with_minima(signature, shingles)
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
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(clusters.len(), 3);
        assert!(stats.cut_buckets > 0 && stats.cut_buckets <= stats.keys);
        assert_eq!(stats.cut_bucket_documents, 3);
        assert_eq!((stats.candidate_pairs, stats.copies), (0, 0));
        // At a bound of 3 they are one story, and nothing is cut.
        config.cluster.max_bucket = 3;
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(clusters.len(), 1, "{clusters:?}");
        assert_eq!(clusters[0].members.len(), 11);
        assert_eq!(stats.copies, 9);
        assert_eq!((stats.cut_buckets, stats.cut_bucket_documents), (0, 0));
        // The near-copy pairs with the original only: the copies join it directly.
        assert_eq!(stats.candidate_pairs, 1);
        // A third distinct text in their buckets cuts them: the copies still cluster, and
        // the cut counts the documents the originals stand for.
        sketches.push(sketch((0..80).chain(2000..2004).collect(), 10));
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
        let (clusters, stats) = cluster(
            &with_copies,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(stats.copies, 6);
        assert_eq!(clusters.len(), 1);
        let mut counted = ClusterStats::default();
        let copies = find_copies(&with_copies, SetsView::none(), 0);
        let mut bucketing = Bucketing::new(&config, 0, &copies);
        let pairs = indexed_pairs(
            &with_copies,
            &Plan::try_from(&config).unwrap(),
            &mut bucketing,
            usize::MAX,
            &Cancel::new(),
        )
        .unwrap();
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
        let pairs = indexed_pairs(
            &sketches,
            &Plan::try_from(&config).unwrap(),
            &mut bucketing,
            INDEX_ENTRIES_PER_RANGE,
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(pairs.len(), n - 1);
        assert!(pairs.iter().all(|&(a, _)| a == 0));
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(clusters.len(), 1);
        assert_eq!(stats.copies, 0);
    }

    #[test]
    fn any_number_of_copies_is_one_cluster_at_the_default_bound() {
        let config = Config::default();
        let minima: Vec<u32> = (0..84).collect();
        for n in [5_000, 5_001, 20_000] {
            let sketches = vec![sketch(minima.clone(), 100); n];
            let (clusters, stats) = cluster(
                &sketches,
                SetsView::none(),
                &Plan::try_from(&config).unwrap(),
            );
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
        let mut random = move || crate::sketch::signature::splitmix64(&mut state) as u32;
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
                let pairs = indexed_pairs(
                    &sketches,
                    &Plan::try_from(&config).unwrap(),
                    &mut bucketing,
                    per_range,
                    &Cancel::new(),
                )
                .unwrap();
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
    fn a_cancelled_token_stops_the_join() {
        let a: Vec<u32> = (0..84).collect();
        let sketches = vec![sketch(a.clone(), 10), sketch(a, 10)];
        let plan = Plan::try_from(&Config::default()).unwrap();
        let cancel = Cancel::new();
        let run = |cancel: &Cancel| {
            join(
                &sketches,
                SetsView::none(),
                &plan,
                &Known::default(),
                cancel,
            )
        };
        assert_eq!(run(&cancel).unwrap().sets, vec![vec![0, 1]]);
        cancel.cancel();
        assert!(matches!(run(&cancel), Err(Error::Cancelled)));
        let cancelled = cluster_with_links(&sketches, SetsView::none(), &plan, &cancel);
        assert!(matches!(cancelled, Err(Error::Cancelled)));
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
        let via = joined_via(
            &clusters,
            &links,
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
        let (clusters, stats, links) = cluster_with_links(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!((clusters.len(), stats.attached), (1, 1));
        assert_eq!(links.len(), 2);
        let via = joined_via(
            &clusters,
            &links,
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
        assert_eq!(
            cluster(
                &sketches,
                SetsView::none(),
                &Plan::try_from(&config).unwrap()
            )
            .0,
            clusters
        );
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
        let (clusters, stats) = cluster(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
        );
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
            pairs: None,
            known_pairs: None,
        };
        // Two known documents, however alike, are not joined again.
        let joined = join(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
            &known(5),
            &Cancel::new(),
        )
        .unwrap();
        assert!(!joined.sets.iter().any(|s| s.contains(&0) && s.contains(&1)));
        // The new document attaches to story 0, which has 6 documents though 1 is loaded...
        assert!(joined.sets.iter().any(|s| s == &vec![0, 2]), "{joined:?}");
        assert_eq!(joined.stats.attached, 1);
        // ...but not to a story of one.
        let joined = join(
            &sketches,
            SetsView::none(),
            &Plan::try_from(&config).unwrap(),
            &known(0),
            &Cancel::new(),
        )
        .unwrap();
        assert_eq!(joined.sets, vec![vec![0], vec![1], vec![2]]);
        assert_eq!(joined.representatives, vec![0, 1, 2]);
    }

    #[test]
    fn given_pairs_with_known_documents_are_the_only_ones_they_get() {
        let config = Config::default();
        let a: Vec<u32> = (0..84).collect();
        // One known document and two fresh ones, all the same text.
        let sketches = vec![
            sketch(a.clone(), 100),
            sketch(a.clone(), 100),
            sketch(a, 100),
        ];
        let known = |given: Vec<(u32, u32)>| Known {
            fresh_from: 1,
            stories: vec![KnownStory {
                representative: 0,
                members: vec![],
                unloaded: 0,
            }],
            pairs: None,
            known_pairs: Some(given),
        };
        let joined = |given| {
            join(
                &sketches,
                SetsView::none(),
                &Plan::try_from(&config).unwrap(),
                &known(given),
                &Cancel::new(),
            )
            .unwrap()
            .sets
        };
        // The fresh documents find each other in the candidate index, which holds only them;
        // the known one joins them through a given pair (with the first: the second is its
        // copy), and through none without it.
        assert_eq!(joined(vec![]), vec![vec![0], vec![1, 2]]);
        assert_eq!(joined(vec![(0, 1)]), vec![vec![0, 1, 2]]);
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
        let (clusters, _) = cluster(
            &both(),
            SetsView::of(&store, 0),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(clusters.len(), 2);
        // Without sets the estimate (1.0) decides.
        let (clusters, _) = cluster(&both(), SetsView::none(), &Plan::try_from(&config).unwrap());
        assert_eq!(clusters.len(), 1);
        // Sets numbered from 1: document 0 has none, so the pair is estimated.
        let (clusters, _) = cluster(
            &both(),
            SetsView::of(&store, 1),
            &Plan::try_from(&config).unwrap(),
        );
        assert_eq!(clusters.len(), 1);
        assert_eq!(exact_jaccard(&[1, 2, 3], &[2, 3, 4]), 0.5);
        assert_eq!(exact_jaccard(&[], &[]), 0.0);
    }

    #[test]
    fn an_estimated_pair_may_link_when_it_passes_or_is_a_weak_link() {
        let verifier = Verifier::new(&Config::default());
        let minima: Vec<u32> = (0..84).collect();
        let with_shared = |shared: u32| {
            let minima = (0..shared).chain(1000..1000 + 84 - shared).collect();
            sketch(minima, 100)
        };
        let indexed = sketch(minima, 100);
        let may_link = |b: &Sketch, attach: f64| {
            let estimate = estimate_jaccard(&indexed.signature, &b.signature);
            verifier.may_link_estimated(estimate, &indexed, b, attach)
        };
        // Estimated Jaccard 1: it passes.
        assert!(may_link(&with_shared(84), 0.2));
        // 24 of 84 (0.29, less its margin 0.23): below 0.35, a weak link at 0.2 only.
        assert!(may_link(&with_shared(24), 0.2));
        assert!(!may_link(&with_shared(24), 0.0));
        assert!(!may_link(&with_shared(24), 0.3));
        // 4 of 84: below the prefilter.
        assert!(!may_link(&with_shared(4), 0.01));
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
            let (clusters, stats) = cluster(
                sketches,
                SetsView::of(&store, 0),
                &Plan::try_from(config).unwrap(),
            );
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
