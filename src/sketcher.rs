//! The per-document and per-story stages as plain functions, for callers that run the corpus
//! passes themselves (the Python package, the Spark job): a [`DocumentSketcher`] gives a
//! text's minima, candidate keys, shingle set, lead and status, one text or a batch in
//! parallel, with boilerplate found elsewhere left out; [`verify_pair`] checks a candidate
//! pair the way clustering does; [`cluster_group`] clusters a group of sketched documents
//! (such as one connected component of verified pairs) with the library's own candidates,
//! checks and joins. Nothing here re-implements a stage: each function calls the stage's module.

use rayon::prelude::*;

use crate::cancel::Cancel;
use crate::cluster::{clusters_of, join, open_alike, Known};
use crate::clusterer::Status;
use crate::config::{Config, Plan};
use crate::corpus::boilerplate::Boilerplate;
use crate::corpus::set_store::SetStore;
use crate::error::{Error, Result};
use crate::sketch::keys::KeyMaker;
use crate::sketch::shingle::Lead;
use crate::sketch::{ShingleSets, Sketch, SketchBuffers, Sketcher};

/// What the stages keep of one text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSketch {
    /// Canonical words in the main text.
    pub words: u32,
    /// The minima of its shingle set (boilerplate left out); all `u32::MAX` when it has none.
    pub minima: Vec<u32>,
    /// Its candidate keys (supershingles or megashingles, as configured); none when too short.
    pub keys: Vec<u64>,
    /// Its shingle set, sorted, boilerplate left out (unless that would leave less than a
    /// fifth of it): the set that exact verification compares.
    pub shingles: Vec<u32>,
    /// The keys of its first distinct shingles, in text order (see `cluster.attach-lead`).
    pub lead: Vec<u32>,
    /// Whether it can be compared.
    pub status: Status,
}

impl DocumentSketch {
    /// The stage's own sketch of this document.
    pub fn to_sketch(&self) -> Sketch {
        Sketch {
            words: self.words,
            shingles: self.shingles.len() as u32,
            signature: self.minima.clone().into(),
            lead: Lead::of(&self.lead),
        }
    }
}

/// Sketches texts under one configuration, leaving out a given boilerplate.
#[derive(Debug)]
pub struct DocumentSketcher {
    sketcher: Sketcher,
    maker: KeyMaker,
    boilerplate: Boilerplate,
    pages: bool,
    threads: usize,
}

impl DocumentSketcher {
    /// A sketcher for `config` (checked first), with no boilerplate and one thread per core.
    pub fn new(config: &Config) -> Result<DocumentSketcher> {
        let plan = Plan::try_from(config)?;
        Ok(DocumentSketcher {
            sketcher: Sketcher::new(&plan),
            maker: plan.key_maker,
            boilerplate: Boilerplate::none(),
            pages: config.boilerplate.min_documents > 0,
            threads: 0,
        })
    }

    /// Leaves these shingles out of every sketch, as corpus statistics computed elsewhere
    /// found them (see [`DocumentSketcher::page_set`]).
    pub fn with_boilerplate(mut self, shingles: impl IntoIterator<Item = u32>) -> Self {
        self.boilerplate = Boilerplate::from_keys(shingles);
        self
    }

    /// Leaves these shingles out even of a text kept whole (one that would keep less than a
    /// fifth of its shingles without its boilerplate), and out of every sketch as boilerplate
    /// too: those that story frequency found in the documents of at least
    /// `boilerplate.min-documents` stories (and `min-stories`). Given after
    /// [`DocumentSketcher::with_boilerplate`].
    pub fn with_spread(mut self, shingles: impl IntoIterator<Item = u32>) -> Self {
        let spread: Vec<u32> = shingles.into_iter().collect();
        let mut boilerplate = std::mem::take(&mut self.boilerplate);
        boilerplate.add(spread.iter().copied());
        self.boilerplate = boilerplate.with_spread(spread);
        self
    }

    /// Sketches batches on this many threads; 0 for one per core.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// The shingle set that document frequency counts for a text: its whole page's (furniture
    /// included), as the cluster command counts it, sorted and distinct.
    pub fn page_set(&self, text: &str) -> Vec<u32> {
        let mut shingles = self
            .sketcher
            .shingles(text, &mut SketchBuffers::default(), self.pages);
        shingles.page.take().unwrap_or(shingles.set)
    }

    /// The page sets of many texts, in parallel.
    pub fn page_sets(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        self.in_pool(|| texts.par_iter().map(|t| self.page_set(t)).collect())
    }

    /// A text's shingle sets, read once: its main set, its page set when document frequency
    /// counts pages and main-text extraction dropped some of the page, and its outline (word
    /// count and lead). [`DocumentSketcher::sketch_sets`] makes its sketch from them once the
    /// boilerplate is known, as [`DocumentSketcher::sketch`] makes it from the text.
    pub fn shingle_sets(&self, text: &str) -> ShingleSets {
        self.sketcher
            .shingles(text, &mut SketchBuffers::default(), self.pages)
    }

    /// The shingle sets of many texts, in parallel, in their order.
    pub fn shingle_batch(&self, texts: &[&str]) -> Result<Vec<ShingleSets>> {
        self.in_pool(|| {
            texts
                .par_iter()
                .map_init(SketchBuffers::default, |scratch, t| {
                    self.sketcher.shingles(t, scratch, self.pages)
                })
                .collect()
        })
    }

    /// The sketch of a text from its shingle sets (see [`DocumentSketcher::shingle_sets`]):
    /// the one [`DocumentSketcher::sketch`] makes of the text.
    pub fn sketch_sets(&self, sets: &ShingleSets) -> DocumentSketch {
        let (sketch, set) = self.sketcher.sketch_shingles(sets, &self.boilerplate);
        self.finish(sketch, set)
    }

    /// The sketches of many texts' shingle sets, in parallel, in their order.
    pub fn sketch_sets_batch(&self, sets: &[ShingleSets]) -> Result<Vec<DocumentSketch>> {
        self.in_pool(|| sets.par_iter().map(|s| self.sketch_sets(s)).collect())
    }

    /// The sketch of one text.
    pub fn sketch(&self, text: &str) -> DocumentSketch {
        self.sketch_with(text, &mut SketchBuffers::default())
    }

    /// The sketches of many texts, in parallel, in their order.
    pub fn sketch_batch(&self, texts: &[&str]) -> Result<Vec<DocumentSketch>> {
        self.in_pool(|| {
            texts
                .par_iter()
                .map_init(SketchBuffers::default, |scratch, t| {
                    self.sketch_with(t, scratch)
                })
                .collect()
        })
    }

    fn in_pool<T: Send>(&self, work: impl FnOnce() -> T + Send) -> Result<T> {
        if self.threads == 0 {
            return Ok(work());
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .build()
            .map_err(|e| Error::Threads {
                threads: self.threads,
                message: e.to_string(),
            })?;
        Ok(pool.install(work))
    }

    fn sketch_with(&self, text: &str, scratch: &mut SketchBuffers) -> DocumentSketch {
        let shingles = self.sketcher.shingles(text, scratch, false);
        let (sketch, set) = self.sketcher.sketch_shingles(&shingles, &self.boilerplate);
        self.finish(sketch, set)
    }

    fn finish(&self, sketch: Sketch, set: std::borrow::Cow<'_, [u32]>) -> DocumentSketch {
        let status = Status::of(&sketch);
        let keys = if sketch.is_comparable() {
            self.maker.candidate_keys(&sketch.signature)
        } else {
            Vec::new()
        };
        DocumentSketch {
            words: sketch.words,
            minima: sketch.signature.into_vec(),
            keys,
            shingles: set.into_owned(),
            lead: sketch.lead.keys().to_vec(),
            status,
        }
    }
}

/// What clustering makes of one candidate pair.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PairVerdict {
    /// Their Jaccard similarity (exact when `cluster.verify = "exact"`); `None` when the
    /// estimate from the minima is too low to be worth computing it.
    pub jaccard: Option<f64>,
    /// Their score when the pair passes: the Jaccard, or the containment.
    pub score: Option<f64>,
    /// True when the pair may attach a lone document to a story (`cluster.attach-similarity`).
    pub weak: bool,
}

impl PairVerdict {
    /// True when the pair is a link of either kind.
    pub fn links(&self) -> bool {
        self.score.is_some() || self.weak
    }
}

/// Checks a candidate pair as clustering does: its Jaccard, its containment, and whether it
/// is a weak link (a Jaccard of at least `cluster.attach-similarity`, and texts that open
/// alike where the pair does not pass outright).
pub fn verify_pair(plan: &Plan, a: &DocumentSketch, b: &DocumentSketch) -> PairVerdict {
    let (config, verifier) = (plan.config(), &plan.verifier);
    let exact = config.cluster.verify == crate::config::Verify::Exact;
    let (sa, sb) = (a.to_sketch(), b.to_sketch());
    let sets = || exact.then_some((a.shingles.as_slice(), b.shingles.as_slice()));
    let Some(jaccard) = verifier.jaccard(&sa, &sb, sets) else {
        return PairVerdict::default();
    };
    let score = verifier.score_with(jaccard, &sa, &sb);
    let attach = config.cluster.attach_similarity;
    let weak = attach > 0.0
        && jaccard >= attach
        && (score.is_some() || open_alike(&sa, &sb, sets(), config.cluster.attach_lead));
    PairVerdict {
        jaccard: Some(jaccard),
        score,
        weak,
    }
}

/// One document's place in the clusters of a group: the cluster (numbered from 0 in the
/// command's order: largest first), its position in it (0: the representative) and its
/// estimated Jaccard to the representative.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    /// The document: its index in the group as given.
    pub doc: usize,
    /// Its cluster within the group.
    pub cluster: usize,
    /// Documents in that cluster.
    pub cluster_size: usize,
    /// Its estimated Jaccard to the representative; `None` when it cannot be compared.
    pub similarity: Option<f64>,
}

/// Clusters a group of documents as the cluster command would cluster them alone: candidates,
/// verification, joins strongest first with the representative check, and attaching of lone
/// documents. `ids` number the documents as the command does (ties go to the smaller id). The
/// rows come in the command's order.
pub fn cluster_group(
    config: &Config,
    ids: &[&str],
    documents: &[DocumentSketch],
) -> Result<Vec<Placement>> {
    place_group(config, ids, documents, None)
}

/// [`cluster_group`] with the group's candidate pairs given (indices into `documents`), as a
/// job that made them over a larger collection has them: the group's documents are then
/// clustered as they are within that collection, whatever keys they share with documents
/// outside it.
pub fn cluster_group_with_pairs(
    config: &Config,
    ids: &[&str],
    documents: &[DocumentSketch],
    pairs: &[(usize, usize)],
) -> Result<Vec<Placement>> {
    place_group(config, ids, documents, Some(pairs))
}

fn place_group(
    config: &Config,
    ids: &[&str],
    documents: &[DocumentSketch],
    pairs: Option<&[(usize, usize)]>,
) -> Result<Vec<Placement>> {
    let plan = Plan::try_from(config)?;
    assert_eq!(ids.len(), documents.len(), "one id per document");
    let mut order: Vec<usize> = (0..ids.len()).collect();
    order.sort_by(|&x, &y| ids[x].cmp(ids[y]));
    let mut number = vec![0u32; order.len()];
    for (n, &d) in order.iter().enumerate() {
        number[d] = n as u32;
    }
    let known = Known {
        pairs: pairs.map(|pairs| pairs.iter().map(|&(a, b)| (number[a], number[b])).collect()),
        ..Known::default()
    };
    let sketches: Vec<Sketch> = order.iter().map(|&d| documents[d].to_sketch()).collect();
    let exact = config.cluster.verify == crate::config::Verify::Exact;
    let sets: Vec<Vec<u32>> = if exact {
        order
            .iter()
            .map(|&d| documents[d].shingles.clone())
            .collect()
    } else {
        Vec::new()
    };
    let store = SetStore::of_sets(&sets);
    let joined = SetStore::reading_of(exact.then_some(&store), 0, |view| {
        join(&sketches, view, &plan, &known, &Cancel::new())
    })
    .map_err(Error::spill)??;
    let clusters = clusters_of(joined.sets, &sketches);
    Ok(clusters
        .iter()
        .enumerate()
        .flat_map(|(c, cluster)| {
            let order = &order;
            cluster
                .members
                .iter()
                .map(move |&(doc, similarity)| Placement {
                    doc: order[doc as usize],
                    cluster: c,
                    cluster_size: cluster.members.len(),
                    similarity,
                })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Clusterer;

    const STORY: &str = "the regional council approved the new budget for public transport on \
        monday after three hours of debate about bus routes fares and the night service";

    fn no_statistics() -> Config {
        let mut config = Config::default();
        config.boilerplate.min_documents = 0;
        config.boilerplate.min_stories = 0;
        config
    }

    #[test]
    fn sketches_of_shingle_sets_are_the_texts_sketches() {
        let config = Config::default();
        let page = "<html><body><nav>home news sport weather contact</nav><article><p>"
            .to_string()
            + STORY
            + "</p></article><footer>all rights reserved by the regional paper</footer></body></html>";
        let texts = [STORY, page.as_str(), "two words", ""];
        let plain = DocumentSketcher::new(&config).unwrap();
        let sets = plain.shingle_batch(&texts).unwrap();
        for (text, set) in texts.iter().zip(&sets) {
            assert_eq!(set.page_set(), plain.page_set(text).as_slice());
        }
        let boilerplate = sets[0].set[..3].to_vec();
        let sketcher = DocumentSketcher::new(&config)
            .unwrap()
            .with_boilerplate(boilerplate);
        let from_sets = sketcher.sketch_sets_batch(&sets).unwrap();
        let from_texts = sketcher.sketch_batch(&texts).unwrap();
        assert_eq!(from_sets, from_texts);
        assert_eq!(from_sets[0].shingles.len(), sets[0].set.len() - 3);
    }

    #[test]
    fn a_sketch_holds_the_stages_results() {
        let config = Config::default();
        let sketcher = DocumentSketcher::new(&config).unwrap();
        let sketch = sketcher.sketch(STORY);
        let stage = Sketcher::new(&Plan::try_from(&config).unwrap())
            .sketch(STORY, &mut SketchBuffers::default());
        assert_eq!(sketch.minima[..], stage.signature[..]);
        assert_eq!(sketch.shingles.len() as u32, stage.shingles);
        assert_eq!(sketch.status, Status::Ok);
        assert!(!sketch.keys.is_empty());
        assert!(sketch.shingles.windows(2).all(|w| w[0] < w[1]));
        let short = sketcher.sketch("two words");
        assert_eq!((short.status, short.keys.len()), (Status::TooShort, 0));
        let batch = sketcher.sketch_batch(&[STORY, "two words"]).unwrap();
        assert_eq!(batch, [sketch, short]);
    }

    #[test]
    fn boilerplate_given_is_left_out() {
        let config = Config::default();
        let plain = DocumentSketcher::new(&config).unwrap().sketch(STORY);
        let some: Vec<u32> = plain.shingles[..3].to_vec();
        let filtered = DocumentSketcher::new(&config)
            .unwrap()
            .with_boilerplate(some.clone())
            .sketch(STORY);
        assert_eq!(filtered.shingles.len() + 3, plain.shingles.len());
        assert!(some.iter().all(|s| !filtered.shingles.contains(s)));
        assert_ne!(filtered.minima, plain.minima);
    }

    #[test]
    fn a_text_kept_whole_leaves_out_the_spread_shingles_given() {
        let config = Config::default();
        let plain = DocumentSketcher::new(&config).unwrap().sketch(STORY);
        let all = plain.shingles.clone();
        let sketcher = || {
            DocumentSketcher::new(&config)
                .unwrap()
                .with_boilerplate(all.clone())
        };
        // All of it is boilerplate: kept whole.
        assert_eq!(sketcher().sketch(STORY), plain);
        let kept = sketcher().with_spread(all[..3].to_vec()).sketch(STORY);
        assert_eq!(kept.shingles, all[3..]);
        let made = Sketcher::new(&Plan::try_from(&config).unwrap());
        assert_eq!(kept.minima, made.signature(&all[3..]));
    }

    #[test]
    fn a_bad_configuration_is_refused_with_its_message() {
        let mut config = Config::default();
        config.shingle.size = 0;
        let err = DocumentSketcher::new(&config).unwrap_err().to_string();
        assert!(err.contains("shingle.size"), "{err}");
    }

    #[test]
    fn pairs_are_verified_as_clustering_verifies_them() {
        let config = Config::default();
        let sketcher = DocumentSketcher::new(&config).unwrap();
        let a = sketcher.sketch(STORY);
        let b = sketcher.sketch(&STORY.replace("monday", "tuesday"));
        let c = sketcher.sketch("a recipe for bread with flour water salt and yeast baked hot");
        let close = verify_pair(&Plan::try_from(&config).unwrap(), &a, &b);
        let expected = crate::cluster::exact_jaccard(&a.shingles, &b.shingles);
        assert_eq!(close.jaccard, Some(expected));
        assert_eq!(close.score, Some(expected));
        assert!(close.links());
        assert!(!verify_pair(&Plan::try_from(&config).unwrap(), &a, &c).links());
    }

    #[test]
    fn a_group_clusters_as_the_clusterer_clusters_it() {
        let config = no_statistics();
        let texts = [
            STORY.to_owned(),
            "a recipe for bread with flour water salt and yeast baked in a hot oven".to_owned(),
            STORY.replace("monday", "tuesday"),
            format!("{STORY} and the mayor"),
        ];
        let ids = ["d", "a", "c", "b"];
        let sketcher = DocumentSketcher::new(&config).unwrap();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let sketches = sketcher.sketch_batch(&refs).unwrap();
        let placed = cluster_group(&config, &ids, &sketches).unwrap();
        let mut clusterer = Clusterer::new(&config).unwrap();
        for (id, text) in ids.iter().zip(&texts) {
            clusterer.add(*id, text).unwrap();
        }
        let clusters = clusterer.finish().unwrap();
        let expected: Vec<(&str, usize, Option<f64>)> = clusters
            .assignments()
            .map(|a| (a.doc_id, a.cluster_size, a.similarity))
            .collect();
        let got: Vec<(&str, usize, Option<f64>)> = placed
            .iter()
            .map(|p| (ids[p.doc], p.cluster_size, p.similarity))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(placed[0].cluster_size, 3);
    }

    #[test]
    fn a_group_with_given_pairs_links_only_those() {
        let config = no_statistics();
        let texts = [
            STORY.to_owned(),
            STORY.replace("monday", "tuesday"),
            format!("{STORY} and the mayor"),
            "a recipe for bread with flour water salt and yeast baked in a hot oven".to_owned(),
        ];
        let ids = ["a", "b", "c", "d"];
        let sketcher = DocumentSketcher::new(&config).unwrap();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let sketches = sketcher.sketch_batch(&refs).unwrap();
        let sizes = |placed: Vec<Placement>| {
            let mut sizes = vec![0; ids.len()];
            for p in placed {
                sizes[p.doc] = p.cluster_size;
            }
            sizes
        };
        let all: Vec<(usize, usize)> = (0..4)
            .flat_map(|a| (a + 1..4).map(move |b| (a, b)))
            .collect();
        let alone = sizes(cluster_group(&config, &ids, &sketches).unwrap());
        assert_eq!(alone, [3, 3, 3, 1]);
        let given = |pairs: &[(usize, usize)]| {
            sizes(cluster_group_with_pairs(&config, &ids, &sketches, pairs).unwrap())
        };
        assert_eq!(given(&all), alone);
        // Without the pairs that reach `c`, it stays alone; with none, everything does.
        assert_eq!(given(&[(1, 0)]), [2, 2, 1, 1]);
        assert_eq!(given(&[]), [1, 1, 1, 1]);
    }
}
