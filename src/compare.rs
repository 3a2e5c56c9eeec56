//! Comparing two texts: exact Dice and Jaccard of their shingle sets, the estimate from the
//! minima, the supershingles and megashingles they share, how much of each text's lead the
//! other holds, and the shared fragments as text.

use serde::Serialize;

use crate::config::Config;
use crate::shingle::{key, shingle_set, Lead};
use crate::signature::estimate_jaccard;
use crate::sketch::Sketcher;
use crate::sorted::intersection_size;
use crate::supershingle::{shared_slots, KeyMaker};

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
}

/// A text that cannot be compared.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{name} has {words} words, fewer than the shingle size k = {k}: it has no shingles, and two empty sets prove nothing; use a smaller -k or a longer text")]
pub struct TooShort {
    /// Which text: a file name or "first text"/"second text".
    pub name: String,
    /// Its canonical words.
    pub words: usize,
    /// The shingle size.
    pub k: usize,
}

struct Side {
    words: Vec<String>,
    windows: Vec<u64>,
    set: Vec<u32>,
}

fn side(text: &str, name: &str, sketcher: &Sketcher) -> Result<Side, TooShort> {
    let words = sketcher.canonicalizer().words(text);
    let k = sketcher.shingle_size();
    if words.len() < k {
        return Err(TooShort {
            name: name.to_owned(),
            words: words.len(),
            k,
        });
    }
    let hashes: Vec<u64> = words.iter().map(|w| sketcher.word_hash(w)).collect();
    let windows = sketcher.windows(&hashes);
    let set = shingle_set(&windows);
    Ok(Side {
        words,
        windows,
        set,
    })
}

/// Compares two texts under `config`; the names label the texts in errors.
pub fn compare(
    (first, first_name): (&str, &str),
    (second, second_name): (&str, &str),
    config: &Config,
) -> Result<Comparison, TooShort> {
    let sketcher = Sketcher::new(config);
    let a = side(first, first_name, &sketcher)?;
    let b = side(second, second_name, &sketcher)?;
    let common = intersection_size(&a.set, &b.set);
    let total = a.set.len() + b.set.len();
    let (sig_a, sig_b) = (sketcher.signature(&a.set), sketcher.signature(&b.set));
    let grouping = config.supershingle.grouping(config.signature.minima);
    let maker = KeyMaker::new(&grouping, config.signature.seed);
    let (super_a, super_b) = (maker.supershingles(&sig_a), maker.supershingles(&sig_b));
    let (mega_a, mega_b) = (maker.megashingles(&super_a), maker.megashingles(&super_b));
    Ok(Comparison {
        dice: 2.0 * common as f64 / total as f64,
        jaccard: common as f64 / (total - common) as f64,
        estimated_jaccard: estimate_jaccard(&sig_a, &sig_b),
        first_shingles: a.set.len(),
        second_shingles: b.set.len(),
        common,
        shingle_size: sketcher.shingle_size(),
        minima: sig_a.len(),
        shared_supershingles: shared_slots(&super_a, &super_b),
        supershingles: super_a.len(),
        shared_megashingles: shared_slots(&mega_a, &mega_b),
        megashingles: mega_a.len(),
        first_lead_in_second: a.lead_share_in(&b.set),
        second_lead_in_first: b.lead_share_in(&a.set),
        shared_fragments: shared_fragments(&a, &b.set, sketcher.shingle_size()),
    })
}

impl Side {
    /// The share of its lead found in `other`.
    fn lead_share_in(&self, other: &[u32]) -> f64 {
        let keys: Vec<u32> = self.windows.iter().map(|&w| key(w)).collect();
        Lead::of(&keys).share_in(other).unwrap_or(0.0)
    }
}

/// Runs of `side`'s words covered by windows whose hash is in `other`.
fn shared_fragments(side: &Side, other: &[u32], k: usize) -> Vec<String> {
    let mut fragments = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    for (i, window) in side.windows.iter().enumerate() {
        let shared = other.binary_search(&key(*window)).is_ok();
        run = match (shared, run) {
            (true, Some((start, end))) if i <= end => Some((start, i + k)),
            (true, previous) => {
                if let Some((start, end)) = previous {
                    fragments.push(side.words[start..end].join(" "));
                }
                Some((i, i + k))
            }
            (false, previous) => previous,
        };
    }
    if let Some((start, end)) = run {
        fragments.push(side.words[start..end].join(" "));
    }
    fragments
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_k(k: usize) -> Config {
        let mut config = Config::default();
        config.shingle.size = k;
        config
    }

    #[test]
    fn the_documented_example_holds() {
        let c = compare(("a b c d", "a"), ("a b c e", "b"), &with_k(2)).unwrap();
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
            &with_k(2),
        )
        .unwrap();
        assert_eq!(c.shared_fragments, ["one two three", "four five six"]);
    }

    #[test]
    fn identical_texts_share_everything() {
        let text = "one two three four five six seven eight nine ten";
        let c = compare((text, "a"), (text, "b"), &Config::default()).unwrap();
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
        let config = Config::default();
        let c = compare((&full, "a"), (&head, "b"), &config).unwrap();
        assert_eq!((c.first_lead_in_second, c.second_lead_in_first), (1.0, 1.0));
        // The tail holds none of the full text's lead, and the full text all of the tail's.
        let c = compare((&full, "a"), (&tail, "b"), &config).unwrap();
        assert_eq!((c.first_lead_in_second, c.second_lead_in_first), (0.0, 1.0));
    }

    #[test]
    fn short_text_is_rejected_with_counts() {
        let err = compare(("a b", "notes.txt"), ("a b c d e f", "b"), &with_k(5)).unwrap_err();
        assert_eq!(err.words, 2);
        assert!(err
            .to_string()
            .starts_with("notes.txt has 2 words, fewer than the shingle size k = 5"));
    }
}
