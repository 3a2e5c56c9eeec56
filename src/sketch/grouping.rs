//! The grouping of minima into candidate keys, and how it is chosen for a target similarity.
//! Two texts of Jaccard `J` share one supershingle of `r` minima with probability `q = J^r`;
//! with `g` supershingles they become candidates with probability `1-(1-q)^g` (one shared
//! supershingle) or `1-(1-q)^g-g·q·(1-q)^(g-1)` (a shared megashingle: two of them). That
//! S-curve should rise steeply at the target `T`: the area under it below `T` is the false-
//! positive area (pairs checked for nothing), the area above it beyond `T` the false-negative
//! area (pairs never seen). A missed pair is lost while a needless one only costs a check, so
//! the choice minimizes `FALSE_NEGATIVE_WEIGHT`·FN + (1-`FALSE_NEGATIVE_WEIGHT`)·FP.

use serde::{Deserialize, Serialize};

/// How candidate pairs are generated from the supershingles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Matching {
    /// Two documents are candidates when they share a pair of supershingles (a megashingle).
    Megashingle,
    /// Two documents are candidates when they share one supershingle.
    Supershingle,
}

/// How much more a false negative costs than a false positive, as a share of the total.
pub(crate) const FALSE_NEGATIVE_WEIGHT: f64 = 0.8;
/// Most supershingles a megashingle grouping may have (`g(g-1)/2` keys per document).
pub(crate) const MAX_MEGASHINGLE_GROUPS: usize = 12;

/// A grouping of minima into candidate keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grouping {
    /// Number of supershingles.
    pub groups: usize,
    /// Minima per supershingle.
    pub minima_per_group: usize,
    /// Whether keys are supershingles or pairs of them.
    pub matching: Matching,
}

impl Grouping {
    /// The probability that two texts of Jaccard `j` become candidates.
    pub fn probability(&self, j: f64) -> f64 {
        let q = j.powi(self.minima_per_group as i32);
        let g = self.groups as i32;
        let p = match self.matching {
            Matching::Supershingle => 1.0 - (1.0 - q).powi(g),
            Matching::Megashingle => {
                1.0 - (1.0 - q).powi(g) - f64::from(g) * q * (1.0 - q).powi(g - 1)
            }
        };
        p.clamp(0.0, 1.0)
    }

    /// Candidate keys per document.
    pub fn keys(&self) -> usize {
        match self.matching {
            Matching::Supershingle => self.groups,
            Matching::Megashingle => self.groups * (self.groups - 1) / 2,
        }
    }

    /// False-positive and false-negative areas of the S-curve around `target`.
    pub fn areas(&self, target: f64) -> (f64, f64) {
        const STEPS: usize = 1000;
        let (mut fp, mut fneg) = (0.0, 0.0);
        for i in 0..STEPS {
            let j = (i as f64 + 0.5) / STEPS as f64;
            let p = self.probability(j);
            if j < target {
                fp += p / STEPS as f64;
            } else {
                fneg += (1.0 - p) / STEPS as f64;
            }
        }
        (fp, fneg)
    }
}

/// Most choices [`choose`] remembers.
const REMEMBERED_CHOICES: usize = 64;

/// The grouping of `minima` minima that best separates pairs above `target` from those below.
/// Weighing every grouping takes about a millisecond, so the choice is remembered: a caller
/// that makes a plan a call (clustering one group of a large job at a time) weighs once.
pub fn choose(target: f64, minima: usize) -> Grouping {
    use std::sync::{Mutex, PoisonError};
    static CHOSEN: Mutex<Vec<((u64, usize), Grouping)>> = Mutex::new(Vec::new());
    let key = (target.to_bits(), minima);
    let remembered = || CHOSEN.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(&(_, grouping)) = remembered().iter().find(|(k, _)| *k == key) {
        return grouping;
    }
    let grouping = weigh(target, minima);
    let mut chosen = remembered();
    if chosen.len() == REMEMBERED_CHOICES {
        chosen.remove(0);
    }
    chosen.push((key, grouping));
    grouping
}

/// [`choose`], weighing every grouping.
fn weigh(target: f64, minima: usize) -> Grouping {
    let mut best: Option<(f64, Grouping)> = None;
    for minima_per_group in 1..=minima {
        let most = minima / minima_per_group;
        let candidates = [
            Grouping {
                groups: most,
                minima_per_group,
                matching: Matching::Supershingle,
            },
            Grouping {
                groups: most.min(MAX_MEGASHINGLE_GROUPS),
                minima_per_group,
                matching: Matching::Megashingle,
            },
        ];
        for grouping in candidates {
            if grouping.groups == 0
                || (grouping.matching == Matching::Megashingle && grouping.groups < 2)
            {
                continue;
            }
            let (fp, fneg) = grouping.areas(target);
            let cost = FALSE_NEGATIVE_WEIGHT * fneg + (1.0 - FALSE_NEGATIVE_WEIGHT) * fp;
            if best.is_none_or(|(c, _)| cost < c - 1e-12) {
                best = Some((cost, grouping));
            }
        }
    }
    best.expect("at least one grouping").1
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLASSIC: Grouping = Grouping {
        groups: 6,
        minima_per_group: 14,
        matching: Matching::Megashingle,
    };

    #[test]
    fn classic_s_curve_matches_the_published_figures() {
        assert!((CLASSIC.probability(0.8) - 0.03).abs() < 0.01);
        assert!((CLASSIC.probability(0.9) - 0.42).abs() < 0.01);
        assert!((CLASSIC.probability(0.95) - 0.88).abs() < 0.01);
        assert_eq!(CLASSIC.keys(), 15);
    }

    #[test]
    fn the_chosen_curve_rises_at_the_target() {
        for target in [0.3, 0.5, 0.8] {
            let g = choose(target, 84);
            assert!(g.groups * g.minima_per_group <= 84);
            assert!(g.probability(target + 0.1) > 0.8, "{target}: {g:?}");
            assert!(g.probability(target / 3.0) < 0.5, "{target}: {g:?}");
            let (fp, fneg) = g.areas(target);
            let (cfp, cfn) = CLASSIC.areas(target);
            assert!(0.8 * fneg + 0.2 * fp <= 0.8 * cfn + 0.2 * cfp);
        }
    }

    #[test]
    fn higher_targets_take_more_minima_per_group() {
        assert!(choose(0.8, 84).minima_per_group > choose(0.3, 84).minima_per_group);
    }

    #[test]
    fn a_remembered_choice_is_the_weighed_one() {
        // More targets than are remembered, twice over: each answer is weighed afresh or
        // remembered, and always the same.
        let targets: Vec<f64> = (0..REMEMBERED_CHOICES + 6)
            .map(|i| 0.2 + i as f64 / 100.0)
            .collect();
        for _ in 0..2 {
            for &target in &targets {
                assert_eq!(choose(target, 24), weigh(target, 24), "target {target}");
            }
        }
    }
}
