//! Query latency of an open index: opens INDEX, takes N texts spread evenly over a CSV of
//! documents (`id,text`), queries each once after one query that warms the index, and prints
//! the time to open, the first query's time, and the median, 99th percentile and slowest of
//! the timed queries; then the same of `Index::query_reuse` when the index keeps passages. The configuration is `pipeline.toml` when it is in the working
//! directory, else the default, as the command's. scripts/bench-index.sh runs it.
//!
//! cargo run --release --example index_query_latency -- INDEX.db TEXTS.csv [N]

use std::time::Instant;

use megashingle::config::Config;
use megashingle::Index;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    anyhow::ensure!(
        args.len() == 3 || args.len() == 4,
        "usage: index_query_latency INDEX.db TEXTS.csv [N]"
    );
    let n: usize = match args.get(3) {
        Some(n) => n.parse()?,
        None => 1000,
    };
    let config = if std::path::Path::new("pipeline.toml").exists() {
        Config::load(std::path::Path::new("pipeline.toml"))?
    } else {
        Config::default()
    };
    let mut every = Vec::new();
    for record in csv::Reader::from_path(&args[2])?.into_records() {
        every.push(record?[1].to_owned());
    }
    anyhow::ensure!(!every.is_empty(), "{}: no texts", args[2]);
    let step = (every.len() / n.max(1)).max(1);
    let texts: Vec<&String> = every.iter().step_by(step).take(n).collect();

    let clock = Instant::now();
    let index = Index::open_existing(&args[1])?;
    let open_ms = clock.elapsed().as_secs_f64() * 1e3;
    let clock = Instant::now();
    index.query(&config, texts[0])?;
    let first_ms = clock.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::with_capacity(texts.len());
    let mut matched = 0;
    for text in &texts {
        let clock = Instant::now();
        let found = index.query(&config, text)?;
        times.push(clock.elapsed().as_secs_f64() * 1e3);
        matched += usize::from(!found.is_empty());
    }
    let (p50, p99, max) = percentiles(&mut times);
    println!(
        "rust Index::query: queries={} matched={matched} open_ms={open_ms:.1} first_ms={first_ms:.1} p50_ms={p50:.2} p99_ms={p99:.2} max_ms={max:.2}",
        times.len(),
    );
    if index.stats()?.keeps_passages {
        let clock = Instant::now();
        index.query_reuse(&config, texts[0])?;
        let first_ms = clock.elapsed().as_secs_f64() * 1e3;
        let mut times = Vec::with_capacity(texts.len());
        let mut matched = 0;
        for text in &texts {
            let clock = Instant::now();
            let found = index.query_reuse(&config, text)?;
            times.push(clock.elapsed().as_secs_f64() * 1e3);
            matched += usize::from(!found.matches.is_empty());
        }
        let (p50, p99, max) = percentiles(&mut times);
        println!(
            "rust Index::query_reuse: queries={} matched={matched} first_ms={first_ms:.1} p50_ms={p50:.2} p99_ms={p99:.2} max_ms={max:.2}",
            times.len(),
        );
    }
    Ok(())
}

/// The median, 99th percentile and slowest of `times`, which are sorted.
fn percentiles(times: &mut [f64]) -> (f64, f64, f64) {
    times.sort_by(f64::total_cmp);
    let at = |p: f64| times[((p * times.len() as f64) as usize).min(times.len() - 1)];
    (at(0.50), at(0.99), times[times.len() - 1])
}
