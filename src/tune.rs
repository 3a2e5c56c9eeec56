//! Choosing the candidate generator for a target similarity. Two texts of Jaccard `J` share one
//! supershingle of `r` minima with probability `q = J^r`; with `g` supershingles they become
//! candidates with probability `1-(1-q)^g` (one shared supershingle) or
//! `1-(1-q)^g-g·q·(1-q)^(g-1)` (a shared megashingle: two of them). That S-curve should rise
//! steeply at the target `T`: the area under it below `T` is the false-positive area (pairs
//! checked for nothing), the area above it beyond `T` the false-negative area (pairs never
//! seen). A missed pair is lost while a needless one only costs a check, so the choice
//! minimizes `FALSE_NEGATIVE_WEIGHT`·FN + (1-`FALSE_NEGATIVE_WEIGHT`)·FP.

use crate::config::Matching;

/// How much more a false negative costs than a false positive, as a share of the total.
pub const FALSE_NEGATIVE_WEIGHT: f64 = 0.8;
/// Most supershingles a megashingle grouping may have (`g(g-1)/2` keys per document).
pub const MAX_MEGASHINGLE_GROUPS: usize = 12;

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

/// The grouping of `minima` minima that best separates pairs above `target` from those below.
pub fn choose(target: f64, minima: usize) -> Grouping {
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

/// The S-curve as an SVG line chart, with the target marked and the two areas shaded.
pub fn svg(grouping: &Grouping, target: f64) -> String {
    let (w, h, pad) = (640.0, 400.0, 50.0);
    let x = |j: f64| pad + j * (w - 2.0 * pad);
    let y = |p: f64| h - pad - p * (h - 2.0 * pad);
    let points: Vec<(f64, f64)> = (0..=200)
        .map(|i| {
            let j = i as f64 / 200.0;
            (j, grouping.probability(j))
        })
        .collect();
    let path = |pts: &[(f64, f64)]| {
        pts.iter()
            .map(|&(j, p)| format!("{:.1},{:.1}", x(j), y(p)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let below: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(j, _)| j <= target)
        .collect();
    let above: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(j, _)| j >= target)
        .collect();
    let fp_area = format!(
        "{:.1},{:.1} {} {:.1},{:.1}",
        x(0.0),
        y(0.0),
        path(&below),
        x(target),
        y(0.0)
    );
    let fn_area = format!(
        "{:.1},{:.1} {} {:.1},{:.1}",
        x(target),
        y(1.0),
        path(&above),
        x(1.0),
        y(1.0)
    );
    let (fp, fneg) = grouping.areas(target);
    let mut ticks = String::new();
    for i in 0..=10 {
        let v = i as f64 / 10.0;
        ticks +=
            &format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{v:.1}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{v:.1}</text>",
            x(v), h - pad + 16.0, pad - 6.0, y(v) + 4.0
        );
    }
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
         <polygon points=\"{fp_area}\" fill=\"#f4a582\" opacity=\"0.6\"/>\
         <polygon points=\"{fn_area}\" fill=\"#92c5de\" opacity=\"0.6\"/>\
         <polyline points=\"{}\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\
         <line x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"red\" stroke-dasharray=\"4\"/>\
         <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\
         <line x1=\"{pad}\" y1=\"{:.1}\" x2=\"{pad}\" y2=\"{:.1}\" stroke=\"black\"/>{ticks}\
         <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">Jaccard similarity of the pair</text>\
         <text x=\"14\" y=\"{:.1}\" font-size=\"13\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">probability of becoming a candidate</text>\
         <text x=\"{:.1}\" y=\"22\" font-size=\"13\" text-anchor=\"middle\">{} groups of {} minima, {} matching; target {target:.2}: FP area {fp:.3} (orange), FN area {fneg:.3} (blue)</text>\
         </svg>\n",
        path(&points),
        y(0.0), y(1.0),
        y(0.0), x(1.0), y(0.0),
        y(0.0), y(1.0),
        w / 2.0, h - 12.0,
        h / 2.0, h / 2.0,
        w / 2.0,
        grouping.groups, grouping.minima_per_group,
        match grouping.matching { Matching::Supershingle => "supershingle", Matching::Megashingle => "megashingle" },
        tx = x(target),
    )
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
    fn svg_is_a_document_with_the_curve() {
        let svg = svg(&CLASSIC, 0.9);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("6 groups of 14 minima"));
    }
}
