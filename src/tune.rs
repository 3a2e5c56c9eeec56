//! The S-curve of a grouping drawn for `megashingle tune --plot`: the probability that two
//! texts become candidates against their Jaccard similarity, with the target marked.

use crate::config::Matching;
use crate::sketch::grouping::Grouping;

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

    #[test]
    fn svg_is_a_document_with_the_curve() {
        let classic = Grouping {
            groups: 6,
            minima_per_group: 14,
            matching: Matching::Megashingle,
        };
        let svg = svg(&classic, 0.9);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("6 groups of 14 minima"));
    }
}
