//! `megashingle tune`: the candidate grouping the library chooses for a target similarity
//! (`--threshold`, else supershingle.target-similarity), its S-curve as a table next to the
//! classic 6 supershingles of 14 minima, and with `--plot FILE.svg` the curve drawn as an SVG
//! chart, written atomically.

use std::io::Write;

use anyhow::Result;
use megashingle::config::Matching;
use megashingle::sketch::grouping::{choose, Grouping};

use crate::cli::TuneArgs;
use crate::cmd::files::{check_outputs, print, write_file};
use crate::exit::Outcome;

/// Runs the command.
pub fn run(args: TuneArgs) -> Result<Outcome> {
    check_outputs(
        &[("--plot", args.plot.as_deref())],
        &[],
        Some(&args.config),
        None,
    )?;
    let config = args.config.resolve()?;
    let target = match args.threshold {
        Some(t) => {
            anyhow::ensure!(
                t > 0.0 && t < 1.0,
                "--threshold {t} is out of range: give a Jaccard similarity above 0 and below 1"
            );
            t
        }
        None => {
            let t = config.supershingle.target_similarity;
            anyhow::ensure!(
                t > 0.0,
                "supershingle.target-similarity is 0 (the grouping is given by hand): \
                 give a target with --threshold T"
            );
            t
        }
    };
    let minima = config.signature.minima;
    let chosen = choose(target, minima);
    let classic = Grouping {
        groups: 6,
        minima_per_group: 14,
        matching: Matching::Megashingle,
    };
    let describe = |g: &Grouping| {
        let kind = match g.matching {
            Matching::Megashingle => "megashingles (pairs of supershingles)",
            Matching::Supershingle => "single supershingles",
        };
        format!(
            "{} supershingles of {} minima, matched as {kind}: {} keys per document",
            g.groups,
            g.minima_per_group,
            g.keys()
        )
    };
    let (fp, fneg) = chosen.areas(target);
    let (cfp, cfn) = classic.areas(target);
    let mut out = format!(
        "target Jaccard {target:.2}, {minima} minima\n\
         chosen:  {}\n         false-positive area {fp:.4}, false-negative area {fneg:.4}\n\
         classic: {}\n         false-positive area {cfp:.4}, false-negative area {cfn:.4}\n\n\
         Jaccard  P(candidate) chosen            classic\n",
        describe(&chosen),
        describe(&classic),
    );
    for i in 1..=20 {
        let j = f64::from(i) * 0.05;
        let (p, c) = (chosen.probability(j), classic.probability(j));
        let bar = "#".repeat((p * 20.0).round() as usize);
        let mark = if (j - target).abs() < 0.025 {
            " <- target"
        } else {
            ""
        };
        out.push_str(&format!("  {j:.2}   {p:.3} {bar:<20}   {c:.3}{mark}\n"));
    }
    if let Some(path) = &args.plot {
        let picture = svg(&chosen, target);
        write_file(path, |file| file.write_all(picture.as_bytes()))?;
        eprintln!("megashingle: S-curve written to {}", path.display());
    }
    print(&out)?;
    Ok(Outcome::Clean)
}

/// The S-curve as an SVG line chart, with the target marked and the two areas shaded.
fn svg(grouping: &Grouping, target: f64) -> String {
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
