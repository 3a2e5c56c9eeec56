//! Comparing two texts: exact Dice and Jaccard of their shingle sets, the estimate from the
//! minima, the supershingles and megashingles they share, how much of each text's lead the
//! other holds, and the shared fragments as text. A text is prepared once ([`Prepared`]) and
//! can then be compared with many.

use std::ops::Range;

use serde::Serialize;

use crate::canonicalize::stream::WordStream;
use crate::canonicalize::Canonicalizer;
use crate::cluster::intersection::intersection_size;
use crate::config::Plan;
use crate::reuse::align::{shared_passages, PassageRules};
use crate::reuse::{share, Settings, Text};
use crate::sketch::keys::{shared_slots, KeyMaker};
use crate::sketch::shingle::{key, shingle_set, Lead};
use crate::sketch::signature::estimate_jaccard;
use crate::sketch::Sketcher;

/// Everything `megashingle compare` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// Exact Dice coefficient `2|A∩B|/(|A|+|B|)`.
    pub dice: f64,
    /// Exact Jaccard `|A∩B|/|A∪B|`.
    pub jaccard: f64,
    /// Share of equal minima.
    pub estimated_jaccard: f64,
    /// Distinct shingles of the first text.
    pub first_shingles: usize,
    /// Distinct shingles of the second text.
    pub second_shingles: usize,
    /// Shingles in common.
    pub common: usize,
    /// Shingle size used.
    pub shingle_size: usize,
    /// Number of minima.
    pub minima: usize,
    /// Supershingles in the same slot and equal.
    pub shared_supershingles: usize,
    /// Supershingles per text.
    pub supershingles: usize,
    /// Megashingles in the same slot and equal.
    pub shared_megashingles: usize,
    /// Megashingles per text.
    pub megashingles: usize,
    /// Share of the first text's lead (its first 32 distinct shingles) found in the second.
    pub first_lead_in_second: f64,
    /// Share of the second text's lead found in the first.
    pub second_lead_in_first: f64,
    /// Maximal runs of the first text's words made of shared shingles.
    pub shared_fragments: Vec<String>,
    /// Share of the first text's words in passages shared with the second, as `megashingle
    /// reuse` counts them (its `a_in_b`; no boilerplate is known between two texts).
    pub first_in_second: f64,
    /// Share of the second text's words in passages shared with the first (`b_in_a`).
    pub second_in_first: f64,
    /// The first text's passages shared with the second, each from its first shared word to
    /// its last, with the shared words in brackets: `[a b c] d [e f g]`.
    pub first_passages: Vec<String>,
    /// The second text's passages shared with the first, marked the same way.
    pub second_passages: Vec<String>,
}

/// A text that cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{name} has {words} words, fewer than the shingle size k = {k}: it has no shingles, and two empty sets prove nothing; use a smaller shingle size (shingle.size) or a longer text")]
pub struct TooShort {
    /// Which text: a file name or "first text"/"second text".
    pub name: String,
    /// Its canonical words.
    pub words: usize,
    /// The shingle size.
    pub k: usize,
}

/// A text made ready to be compared with others: its canonical words, shingle windows and
/// set, signature and candidate keys. Preparing each text once lets one text be compared with
/// many (a story's representative with each member) without doing its work again.
#[derive(Debug, Clone)]
pub struct Prepared {
    shingle_size: usize,
    words: Vec<String>,
    windows: Vec<u64>,
    set: Vec<u32>,
    signature: Vec<u32>,
    supershingles: Vec<u64>,
    megashingles: Vec<u64>,
}

impl Prepared {
    /// Its canonical words, in order.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The maximal runs of its words (as ranges of word positions) covered by shingles that
    /// `other` also has: the passages the two texts share, as this text has them.
    pub(crate) fn shared_runs(&self, other: &Prepared) -> Vec<Range<usize>> {
        let k = self.shingle_size;
        let mut runs: Vec<Range<usize>> = Vec::new();
        for (i, window) in self.windows.iter().enumerate() {
            if other.set.binary_search(&key(*window)).is_err() {
                continue;
            }
            match runs.last_mut() {
                Some(run) if i <= run.end => run.end = i + k,
                _ => runs.push(i..i + k),
            }
        }
        runs
    }

    /// Its shingle keys in text order, as `reuse` keeps a text.
    fn reuse_text(&self) -> Text {
        Text {
            words: self.words.len() as u32,
            k: self.shingle_size as u8,
            keys: self.windows.iter().map(|&w| key(w)).collect(),
        }
    }

    /// Its passages shared with `other` as `reuse` counts them (see
    /// [`crate::reuse::align`]), their shared words marked in brackets; and the share of its
    /// words they hold.
    pub(crate) fn reuse_passages(
        &self,
        other: &Prepared,
        rules: PassageRules,
    ) -> (Vec<String>, f64) {
        let text = self.reuse_text();
        let passages = shared_passages(&text, &other.reuse_text(), rules);
        let shared_words: u32 = passages.iter().map(|(_, shared)| shared).sum();
        let runs = self.shared_runs(other);
        let marked = passages
            .into_iter()
            .map(|(words, _)| mark_runs(&self.words, words, &runs))
            .collect();
        (marked, share(shared_words, text.words))
    }

    /// The runs of its words made of shared shingles (see [`Prepared::shared_runs`]) that lie
    /// in the passages it shares with `other` as `reuse` counts them: what a reuse view marks.
    pub(crate) fn reuse_runs(&self, other: &Prepared, rules: PassageRules) -> Vec<Range<usize>> {
        let passages = shared_passages(&self.reuse_text(), &other.reuse_text(), rules);
        let mut out = Vec::new();
        for run in self.shared_runs(other) {
            for (words, _) in &passages {
                let (start, end) = (run.start.max(words.start), run.end.min(words.end));
                if start < end {
                    out.push(start..end);
                }
            }
        }
        out
    }

    /// The share of its lead found in `other`.
    fn lead_share_in(&self, other: &[u32]) -> f64 {
        let keys: Vec<u32> = self.windows.iter().map(|&w| key(w)).collect();
        Lead::of(&keys).share_in(other).unwrap_or(0.0)
    }
}

/// Prepares and compares texts under one configuration.
#[derive(Debug)]
pub struct Comparer {
    sketcher: Sketcher,
    maker: KeyMaker,
    rules: PassageRules,
}

impl Comparer {
    /// A comparer for `config`.
    pub fn new(config: &Plan) -> Comparer {
        Comparer {
            sketcher: Sketcher::new(config),
            maker: config.key_maker.clone(),
            rules: Settings::of(config).rules,
        }
    }

    /// The canonicalizer that makes the words compared.
    pub fn canonicalizer(&self) -> &Canonicalizer {
        self.sketcher.canonicalizer()
    }

    /// `text` made ready for comparisons; `name` labels it in the error when it is too short.
    pub fn prepare(&self, text: &str, name: &str) -> Result<Prepared, TooShort> {
        self.prepare_visible(&self.canonicalizer().visible_text(text), name)
    }

    /// [`Comparer::prepare`] for a text already made visible
    /// ([`Canonicalizer::visible_text`]).
    pub(crate) fn prepare_visible(&self, visible: &str, name: &str) -> Result<Prepared, TooShort> {
        let sketcher = &self.sketcher;
        let mut words = Vec::new();
        let canonicalizer = sketcher.canonicalizer();
        canonicalizer.for_each_word_of_visible(visible, &mut WordStream::default(), |w| {
            words.push(w.to_owned())
        });
        let k = sketcher.shingle_size_of(words.iter().map(String::as_str));
        if words.len() < k {
            return Err(TooShort {
                name: name.to_owned(),
                words: words.len(),
                k,
            });
        }
        let hashes: Vec<u64> = words.iter().map(|w| sketcher.word_hash(w)).collect();
        let windows = sketcher.windows(&hashes, k);
        let set = shingle_set(&windows);
        let signature = sketcher.signature(&set);
        let supershingles = self.maker.supershingles(&signature);
        let megashingles = self.maker.megashingles(&supershingles);
        Ok(Prepared {
            shingle_size: k,
            words,
            windows,
            set,
            signature,
            supershingles,
            megashingles,
        })
    }

    /// Compares two prepared texts.
    pub fn compare(&self, a: &Prepared, b: &Prepared) -> Comparison {
        let common = intersection_size(&a.set, &b.set);
        let total = a.set.len() + b.set.len();
        let (first_passages, first_in_second) = a.reuse_passages(b, self.rules);
        let (second_passages, second_in_first) = b.reuse_passages(a, self.rules);
        Comparison {
            dice: 2.0 * common as f64 / total as f64,
            jaccard: common as f64 / (total - common) as f64,
            estimated_jaccard: estimate_jaccard(&a.signature, &b.signature),
            first_shingles: a.set.len(),
            second_shingles: b.set.len(),
            common,
            shingle_size: a.shingle_size,
            minima: a.signature.len(),
            shared_supershingles: shared_slots(&a.supershingles, &b.supershingles),
            supershingles: a.supershingles.len(),
            shared_megashingles: shared_slots(&a.megashingles, &b.megashingles),
            megashingles: a.megashingles.len(),
            first_lead_in_second: a.lead_share_in(&b.set),
            second_lead_in_first: b.lead_share_in(&a.set),
            shared_fragments: a
                .shared_runs(b)
                .into_iter()
                .map(|run| a.words[run].join(" "))
                .collect(),
            first_in_second,
            second_in_first,
            first_passages,
            second_passages,
        }
    }
}

/// The words `within` of `words`, the parts inside `runs` (sorted word ranges) in brackets.
fn mark_runs(words: &[String], within: Range<usize>, runs: &[Range<usize>]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for at in within {
        let shared = runs.iter().any(|r| r.contains(&at));
        if !out.is_empty() {
            out.push(if inside && !shared { ']' } else { ' ' });
            if inside && !shared {
                out.push(' ');
            }
        }
        if shared && !inside {
            out.push('[');
        }
        inside = shared;
        out.push_str(&words[at]);
    }
    if inside {
        out.push(']');
    }
    out
}

/// Compares two texts under `config`; the names label the texts in errors.
pub fn compare(
    (first, first_name): (&str, &str),
    (second, second_name): (&str, &str),
    plan: &Plan,
) -> Result<Comparison, TooShort> {
    let comparer = Comparer::new(plan);
    let a = comparer.prepare(first, first_name)?;
    let b = comparer.prepare(second, second_name)?;
    Ok(comparer.compare(&a, &b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn plan(config: Config) -> Plan {
        Plan::try_from(&config).unwrap()
    }

    fn with_k(k: usize) -> Config {
        let mut config = Config::default();
        config.shingle.size = k;
        config
    }

    #[test]
    fn the_documented_example_holds() {
        let c = compare(("a b c d", "a"), ("a b c e", "b"), &plan(with_k(2))).unwrap();
        assert_eq!((c.first_shingles, c.second_shingles, c.common), (3, 3, 2));
        assert!((c.dice - 2.0 / 3.0).abs() < 1e-12);
        assert!((c.jaccard - 0.5).abs() < 1e-12);
        assert_eq!(c.shared_fragments, ["a b c"]);
    }

    #[test]
    fn fragments_are_maximal_runs() {
        let c = compare(
            ("x one two three y four five six z", "a"),
            ("one two three q four five six", "b"),
            &plan(with_k(2)),
        )
        .unwrap();
        assert_eq!(c.shared_fragments, ["one two three", "four five six"]);
    }

    #[test]
    fn shared_runs_are_word_ranges_on_each_side() {
        let comparer = Comparer::new(&Plan::try_from(&with_k(2)).unwrap());
        let a = comparer.prepare("x one two three y", "a").unwrap();
        let b = comparer.prepare("one two three q r", "b").unwrap();
        assert_eq!(a.shared_runs(&b), [Range { start: 1, end: 4 }]);
        assert_eq!(b.shared_runs(&a), [Range { start: 0, end: 3 }]);
        assert_eq!(&a.words()[1..4], ["one", "two", "three"]);
        assert_eq!(comparer.compare(&a, &b).shared_fragments, ["one two three"]);
    }

    #[test]
    fn identical_texts_share_everything() {
        let text = "one two three four five six seven eight nine ten";
        let c = compare((text, "a"), (text, "b"), &plan(Config::default())).unwrap();
        assert_eq!(c.jaccard, 1.0);
        assert_eq!(c.estimated_jaccard, 1.0);
        assert_eq!(c.shared_supershingles, c.supershingles);
        assert_eq!(c.shared_megashingles, c.megashingles);
        assert!(c.supershingles > 0);
    }

    #[test]
    fn leads_are_compared_both_ways() {
        let words: Vec<String> = (0..80).map(|i| format!("w{i}")).collect();
        let full = words.join(" ");
        let (head, tail) = (words[..40].join(" "), words[40..].join(" "));
        let config = plan(Config::default());
        let c = compare((&full, "a"), (&head, "b"), &config).unwrap();
        assert_eq!((c.first_lead_in_second, c.second_lead_in_first), (1.0, 1.0));
        // The tail holds none of the full text's lead, and the full text all of the tail's.
        let c = compare((&full, "a"), (&tail, "b"), &config).unwrap();
        assert_eq!((c.first_lead_in_second, c.second_lead_in_first), (0.0, 1.0));
    }

    #[test]
    fn short_text_is_rejected_with_counts() {
        let err =
            compare(("a b", "notes.txt"), ("a b c d e f", "b"), &plan(with_k(5))).unwrap_err();
        assert_eq!(err.words, 2);
        assert!(err
            .to_string()
            .starts_with("notes.txt has 2 words, fewer than the shingle size k = 5"));
    }

    #[test]
    fn passages_are_marked_in_both_directions() {
        let words = |prefix: &str, n: usize| -> Vec<String> {
            (0..n).map(|i| format!("{prefix}{i}")).collect()
        };
        let passage = words("p", 30).join(" ");
        let first = format!(
            "{} {passage} {}",
            words("a", 20).join(" "),
            words("b", 10).join(" ")
        );
        let second = format!("{} {passage}", words("c", 50).join(" "));
        let c = compare((&first, "a"), (&second, "b"), &plan(Config::default())).unwrap();
        let marked = format!("[{passage}]");
        assert_eq!(
            (c.first_passages.as_slice(), c.second_passages.as_slice()),
            ([marked.clone()].as_slice(), [marked].as_slice())
        );
        assert!((c.first_in_second - 30.0 / 60.0).abs() < 1e-12);
        assert!((c.second_in_first - 30.0 / 80.0).abs() < 1e-12);
        // One shared word changed in the second: one passage still, the change outside the brackets.
        let revised = second.replace("p15", "changed");
        let c = compare((&first, "a"), (&revised, "b"), &plan(Config::default())).unwrap();
        assert_eq!(c.second_passages.len(), 1);
        assert!(
            c.second_passages[0].contains("p14] changed [p16"),
            "{:?}",
            c.second_passages
        );
        // A text that shares no passage with the other has none to mark.
        let c = compare(
            (&first, "a"),
            (&words("z", 40).join(" "), "b"),
            &plan(Config::default()),
        )
        .unwrap();
        assert!(c.first_passages.is_empty() && c.second_passages.is_empty());
        assert_eq!((c.first_in_second, c.second_in_first), (0.0, 0.0));
    }

    #[test]
    fn runs_are_marked_in_brackets() {
        let words: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        assert_eq!(
            mark_runs(&words, 0..5, &[Range { start: 1, end: 3 }]),
            "a [b c] d e"
        );
        assert_eq!(mark_runs(&words, 1..5, &[1..2, 3..5]), "[b] c [d e]");
        assert_eq!(mark_runs(&words, 0..2, &[]), "a b");
    }
}
