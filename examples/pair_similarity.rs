//! Exact shingle-set similarity of listed document pairs: reads a CSV of documents (`id,text`)
//! and a CSV of pairs (`id_a,id_b,...`), and prints each pair's exact Jaccard and containment
//! under the default configuration, boilerplate left out, (or the one in `pipeline.toml`), followed by the pair's
//! other columns. A tool for studying what a configuration can and cannot separate.
//!
//! cargo run --release --example pair_similarity -- docs.csv pairs.csv > similarity.csv

use std::collections::HashMap;

use megashingle::cluster::intersection::intersection_size;
use megashingle::config::{Config, Plan};
use megashingle::corpus::boilerplate::Boilerplate;
use megashingle::sketch::{ShingleSets, SketchBuffers, Sketcher};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(args.len() == 3, "usage: pair_similarity DOCS.csv PAIRS.csv");
    let config = if std::path::Path::new("pipeline.toml").exists() {
        Config::load(std::path::Path::new("pipeline.toml"))?
    } else {
        Config::default()
    };
    let sketcher = Sketcher::new(&Plan::try_from(&config).unwrap());
    let mut sets: HashMap<String, ShingleSets> = HashMap::new();
    let mut scratch = SketchBuffers::default();
    for record in csv::Reader::from_path(&args[1])?.into_records() {
        let record = record?;
        sets.insert(
            record[0].to_owned(),
            sketcher.shingles(&record[1], &mut scratch, true),
        );
    }
    let all: Vec<&[u32]> = sets.values().map(ShingleSets::page_set).collect();
    let boilerplate = Boilerplate::from_sets(&all, config.boilerplate.min_documents);
    let sets: HashMap<String, Vec<u32>> = sets
        .iter()
        .map(|(id, s)| (id.clone(), boilerplate.filter(&s.set).into_owned()))
        .collect();
    let mut pairs = csv::Reader::from_path(&args[2])?;
    let header = pairs.headers()?.clone();
    let mut out = csv::Writer::from_writer(std::io::stdout().lock());
    let mut row = vec!["jaccard", "containment", "size_a", "size_b"];
    row.extend(header.iter());
    out.write_record(&row)?;
    for record in pairs.records() {
        let record = record?;
        let (a, b) = (&sets[&record[0]], &sets[&record[1]]);
        let common = intersection_size(a, b);
        let union = a.len() + b.len() - common;
        let jaccard = if union == 0 {
            0.0
        } else {
            common as f64 / union as f64
        };
        let smaller = a.len().min(b.len());
        let containment = if smaller == 0 {
            0.0
        } else {
            common as f64 / smaller as f64
        };
        let mut row = vec![
            format!("{jaccard:.4}"),
            format!("{containment:.4}"),
            a.len().to_string(),
            b.len().to_string(),
        ];
        row.extend(record.iter().map(str::to_owned));
        out.write_record(&row)?;
    }
    out.flush()?;
    Ok(())
}
