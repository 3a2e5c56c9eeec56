//! The commands and their flags. The doc comments here are the `--help` text.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use megashingle::config::{Config, ConfigError, HtmlMode, Keep, Language};
use megashingle::io::read::{InputFormat, ReadOptions};
use megashingle::io::transcode::RecordEncoding;
use megashingle::io::write::OutputFormat;

/// Find near-duplicate texts and group news articles into stories with shingles,
/// 84-minima signatures, supershingles and megashingles.
///
/// Texts may be in any script. A word is a run of letters and digits with the combining marks
/// that follow them (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, Tamil, Hangul; a
/// Tibetan word is a syllable). Chinese, Japanese, Thai, Lao, Khmer and Burmese are written
/// without spaces: there every character is a word, and a text mostly in one of these scripts
/// is shingled by runs of characters (shingle.script-size: 4 for Han and kana, 5 for the
/// others). Stop words and stemmers exist for English, Russian and Ukrainian.
#[derive(Debug, Parser)]
#[command(name = "megashingle", version, max_term_width = 100, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The exit codes, as `megashingle --help` lists them after the commands.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    all good
  1    finished, but some input records were skipped (each is reported on stderr)
  2    nothing was written: bad arguments, configuration or input, or an output that cannot
       be written
  130  interrupted by SIGINT (Ctrl-C): nothing was written, or, when the signal came as the
       run ended, everything was; the last line says which
  143  interrupted by SIGTERM (a scheduler stopping the job), as for 130";

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Group a collection of texts into clusters of near-duplicates (stories).
    ///
    /// Writes one row per input document: doc_id, cluster_id, cluster_size, similarity,
    /// status. Rows are grouped by cluster, largest cluster first, then by cluster_id.
    /// cluster_id is the smallest doc_id of the cluster. The first row of each cluster is its
    /// representative: the member with the most distinct shingles (the fullest version), ties
    /// going to the smallest id. similarity is the Jaccard similarity to the representative,
    /// estimated from the minima (1.0000 for the representative itself). status is `ok`, or
    /// `too_short` for a document with fewer words than the shingle size: such a document is
    /// never called a duplicate and stays a cluster of its own, with an empty similarity.
    ///
    /// Each text is dropped as soon as its shingle set is made. Memory: the shingle sets (4
    /// bytes per distinct shingle, about 4 bytes per word, twice that for HTML pages) are kept
    /// until every input is read, to find the boilerplate shingles common to many documents;
    /// with cluster.verify = "exact" (the default) each document keeps its set until clustering
    /// is done. Sets that take more than cluster.set-memory-mb (256) MiB go to an unlinked
    /// temporary file in TMPDIR instead (about 1.5 GB for a million 2.5 KB documents) and are
    /// read back from there (while the corpus statistics are counted, a second temporary file
    /// takes up to as much again), so memory grows with the number of documents (about 1.1 KB
    /// each at the peak at a million: signatures, leads, ids and one part of the sets or of
    /// the candidate index at a time), not with their size.
    /// While a document is read and shingled it takes up to about three times its size (a
    /// 100 MB plain text 160 MB, a 100 MB HTML page 250 MB); each thread shingles one at a time.
    /// The output is the same for any input order, any number of threads and any set memory.
    Cluster(ClusterArgs),
    /// Remove near-duplicate records: the input records, each story's duplicates left out.
    ///
    /// Clusters the inputs as `cluster` does, keeps one record of each story (--keep) and
    /// removes a member only when its own exact Jaccard with the kept record, or the share of
    /// its shingles found in it, is at least --threshold (dedup.threshold, 0.5). A story is a
    /// chain of links, so a member can be far from the kept record; such a member stays.
    /// The output has every original column or field, in the input's format: CSV stays CSV
    /// with its header and delimiter (fields re-quoted only where CSV needs it), JSONL keeps
    /// each line as it was, Parquet keeps every column with its type. Records come out in
    /// input order. Inputs are CSV, JSONL or Parquet files, all of one format (and one header
    /// for CSV, one schema for Parquet); each is read twice, so stdin is not accepted.
    /// --format parquet writes CSV inputs as Parquet. Records skipped as malformed are
    /// reported and left out (exit 1).
    Dedup(DedupArgs),
    /// Find text reuse: every pair of documents where one holds a passage of the other.
    ///
    /// Reads the inputs as `cluster` does (the same readers, canonical words, shingle size
    /// and boilerplate: a shingle in boilerplate.min-documents documents, a site's footer, is
    /// no passage) and writes one row a pair: doc_a, doc_b (ids in order), a_in_b (the share
    /// of doc_a's words shared with doc_b), b_in_a, shared_words (the smaller of the two
    /// texts' shared words), passages, longest (words of the longest passage) and jaccard (of
    /// the two shingle sets). A word is shared when a shingle holding it is in the other text;
    /// shared words at most reuse.max-gap words apart are one passage, and a passage of fewer
    /// than reuse.min-passage-words shared words does not count. A pair is written when its
    /// passages hold at least --min-shared-words words in both texts and at least
    /// --min-containment of one of them. Every figure is computed exactly from the two texts'
    /// shingles; candidates are the pairs sharing two winnowed fingerprints (any shared run of
    /// 2 × reuse.window + shingle.size - 1 words, 10 at the defaults).
    ///
    /// Memory: each document keeps its shingle keys in text order (4 bytes a word) and its
    /// fingerprints (about 8 bytes for every 2.5 words) until the pairs are found; the text
    /// itself is dropped once read. Pairs come out by doc_a, then doc_b, the same for any
    /// input order and number of threads.
    Reuse(ReuseArgs),
    /// Print the canonical word stream of a text: exactly what is shingled and compared.
    ///
    /// Words are separated by spaces. In Chinese, Japanese, Thai, Lao, Khmer and Burmese, which
    /// are written without spaces, each character (with its vowel signs and marks) is a word.
    Canon(CanonArgs),
    /// Compare two texts: exact Dice and Jaccard of their shingle sets, the estimate from the
    /// minima, shared supershingles and megashingles, and the shared fragments.
    Compare(CompareArgs),
    /// Choose the candidate grouping for a target similarity and show its S-curve.
    ///
    /// Prints, for each Jaccard similarity, the probability that a pair becomes a candidate,
    /// with the false-positive area (pairs below the target that get checked) and the
    /// false-negative area (pairs above it that are never seen), next to the classic 6
    /// supershingles of 14 minima matched as megashingles. Set the target as
    /// supershingle.target-similarity in pipeline.toml to use the grouping.
    Tune(TuneArgs),
    /// Print the effective configuration (defaults < file < flags) as TOML.
    Config(ConfigOnlyArgs),
    /// Write an HTML report of the stories: every story with its members, how each joined,
    /// and a member and its representative side by side with their shared passages.
    ///
    /// Clusters the inputs as `cluster` does (same flags and pipeline.toml), or shows the
    /// stories of --clusters FILE (the output of `cluster` or `index export`) over the same
    /// inputs. The page is one self-contained file that opens from disk: no network, readable
    /// without JavaScript; its small inline script adds filters, paging and the side-by-side
    /// view. Document texts and ids are shown as text and never run. The inputs are read
    /// twice (the texts are read back for the page), so stdin cannot be one.
    Report(ReportArgs),
    /// A persistent story index on disk that each night's documents join.
    ///
    /// `index add` puts new documents into the stories of the index (or new ones); story ids
    /// stay the same across nights. The index keeps each document's id, sketch, times, story
    /// and opening shingle keys (under 1 KB a document) and, for `index query --reuse`, its shingle keys in text
    /// order and their winnowed fingerprints (about 5 bytes a word), never its text. It is one redb file, changed in one
    /// transaction per command: a command that fails or is killed leaves it as it was. While
    /// a command has it open, `<index>.lock` holds it and names that command; others are
    /// refused.
    #[command(subcommand)]
    Index(IndexCommand),
}

/// The index commands.
#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Add documents to the index (made when missing) and print where each went.
    ///
    /// The documents are read and sketched as `cluster` does (boilerplate found in earlier
    /// adds is left out too), find their candidates among everything indexed and among each
    /// other, are verified the same way (pairs with an indexed document from the minima,
    /// since the index keeps no shingle sets) and join an existing story or found a new one,
    /// named after its smallest document id. A story keeps its id as it grows; when a
    /// document joins two stories, the older id survives and the merge is recorded (see
    /// `index merges`).
    ///
    /// Writes doc_id, story_id, new_story, similarity, status: new_story is true when this
    /// add made the story; similarity is the estimated Jaccard to the story's representative;
    /// status is ok, too_short or replaced (with --upsert). The configuration's sketch
    /// settings (canonicalize, shingle, signature, supershingle) must be those the index was
    /// made with; the error names any that differ.
    Add(IndexAddArgs),
    /// Ask the index about one text, or many, without changing it.
    ///
    /// By default, the indexed near-duplicates of one text, most similar first: doc_id,
    /// story_id, similarity (estimated Jaccard), containment (the estimated share of the
    /// smaller text's shingles found in the larger).
    ///
    /// With --reuse, every indexed document that shares a passage with the text (as `reuse`
    /// finds pairs: at least reuse.min-shared-words words in passages), most shared words
    /// first: doc_id, story_id, a_in_b (the share of the text's words in passages shared with
    /// the document), b_in_a (the share of the document's), shared_words, passages, longest,
    /// jaccard; then, on stderr, the text's uniqueness: the share of its words found in no
    /// indexed document. --passages prints the shared passages themselves instead of the
    /// table. The index must keep passages (one made with `index add --passages`).
    ///
    /// With -o, many texts: the inputs are read as `reuse` reads them (files, folders,
    /// CSV/JSONL/Parquet) and one row per (text, indexed document) pair is written, the
    /// columns of `reuse` with the text as doc_a and the indexed document as doc_b: the texts
    /// of a night against an archive, or a training corpus against an indexed evaluation set.
    Query(IndexQueryArgs),
    /// Write every indexed document with its story: doc_id, story_id, story_size, added_at.
    Export(IndexOutputArgs),
    /// Write the merges of stories: merged_at, absorbed_story, absorbed_size,
    /// surviving_story, via_doc.
    Merges(IndexOutputArgs),
    /// Print counts, size on disk and the sketch settings of the index.
    Stats(IndexDbArgs),
    /// Remove documents: those older than a date (their time column's value, else when they
    /// were added) and/or those listed in a file. Emptied stories go; a story whose
    /// representative goes gets a new one.
    Remove(IndexRemoveArgs),
    /// Write an HTML report of the stories of the given documents (a night's) as the index
    /// holds them: see `megashingle report`. The inputs must have been added.
    Report(IndexReportArgs),
}

/// What a report shows besides the stories, and where it goes.
#[derive(Debug, Args)]
pub struct ReportOutputArgs {
    /// The report file (HTML), replaced only when complete.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// CSV column or JSONL field with each document's time (RFC 3339, or YYYY-MM-DD), shown
    /// with it.
    #[arg(long, value_name = "NAME")]
    pub time_column: Option<String>,
    /// Another CSV column or JSONL field to show with each document, such as its source or
    /// headline; repeatable.
    #[arg(long = "column", value_name = "NAME")]
    pub columns: Vec<String>,
    /// Bytes of text kept of each document of a story of two or more, for the side-by-side
    /// view; default: 8 MiB shared out among them, so the report stays about 30 MB at
    /// 100,000 documents (every text is measured and compared whole all the same).
    #[arg(long, value_name = "BYTES")]
    pub text_bytes: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Inputs, read as `cluster` reads them (not stdin).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Show the stories of this clusters table (doc_id with cluster_id, from `cluster`, or
    /// story_id, from `index export`) instead of clustering.
    #[arg(long, value_name = "FILE")]
    pub clusters: Option<PathBuf>,
    /// Show the pairs of documents where one reuses a passage of the other (as `reuse`
    /// finds them), most shared words first, each pair's texts side by side with the shared
    /// passages marked, instead of the stories.
    #[arg(long, conflicts_with = "clusters")]
    pub reuse: bool,
    #[command(flatten)]
    pub report: ReportOutputArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct IndexReportArgs {
    #[command(flatten)]
    pub db: IndexDbArgs,
    /// The documents to show, read as `cluster` reads them (not stdin).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub report: ReportOutputArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// The index file.
#[derive(Debug, Args)]
pub struct IndexDbArgs {
    /// The index file (a redb database made by `index add`).
    #[arg(long, value_name = "FILE", required = true)]
    pub db: PathBuf,
}

#[derive(Debug, Args)]
pub struct IndexAddArgs {
    #[command(flatten)]
    pub db: IndexDbArgs,
    /// Inputs, read as `cluster` reads them.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Assignments file, replaced only when complete; stdout when absent or `-`. It may not be
    /// an input or the index.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    /// CSV column or JSONL field with each document's time (RFC 3339, or YYYY-MM-DD), stored
    /// with it and used by `index remove --before`.
    #[arg(long, value_name = "NAME")]
    pub time_column: Option<String>,
    /// Replace indexed documents that have the same id instead of failing.
    #[arg(long)]
    pub upsert: bool,
    /// Make the index keep the passages of its documents, for `index query --reuse`: on the
    /// first add of an index, which then keeps them on every add (index format 4, about four
    /// times the bytes a document). An index made without them cannot begin to keep them.
    #[arg(long)]
    pub passages: bool,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct IndexQueryArgs {
    #[command(flatten)]
    pub db: IndexDbArgs,
    /// A text, HTML or mail file; `-` for stdin. With -o, any number of inputs, read as
    /// `reuse` reads them.
    #[arg(
        value_name = "FILE",
        required_unless_present = "text",
        conflicts_with = "text"
    )]
    pub files: Vec<PathBuf>,
    /// The text itself instead of a file.
    #[arg(long, value_name = "TEXT")]
    pub text: Option<String>,
    /// List the indexed documents that share a passage with the text instead of its
    /// near-duplicates.
    #[arg(long)]
    pub reuse: bool,
    /// Print the passages the text shares with each document (its canonical words) instead
    /// of the table.
    #[arg(long, requires = "reuse", conflicts_with = "output")]
    pub passages: bool,
    /// Query every text of the inputs and write one row per (text, indexed document) pair to
    /// this file, replaced only when complete (`-` for stdout); with --reuse. It may not be an
    /// input or the index.
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        requires = "reuse",
        conflicts_with = "text"
    )]
    pub output: Option<PathBuf>,
    /// Output format of -o; Parquet goes to a file or a pipe, not to a terminal.
    #[arg(long, value_name = "FORMAT", default_value = "csv", value_parser = choice::<OutputFormat>(FORMATS), requires = "output")]
    pub format: OutputFormat,
    /// Words the shared passages hold, in each text, at the fewest
    /// (reuse.min-shared-words, 30).
    #[arg(long, value_name = "WORDS", requires = "reuse")]
    pub min_shared_words: Option<usize>,
    /// Share of one of the two texts in the shared passages at the least
    /// (reuse.min-containment, 0.1).
    #[arg(long, value_name = "SHARE", requires = "reuse")]
    pub min_containment: Option<f64>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct IndexOutputArgs {
    #[command(flatten)]
    pub db: IndexDbArgs,
    /// Output file, replaced only when complete; stdout when absent or `-`. It may not be the
    /// index.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("which").required(true).multiple(true).args(["before", "ids"]))]
pub struct IndexRemoveArgs {
    #[command(flatten)]
    pub db: IndexDbArgs,
    /// Remove documents whose time is before DATE: RFC 3339 (2026-11-30T09:00:00+03:00), or a
    /// date or date-time without an offset, taken as UTC (YYYY-MM-DD is midnight UTC).
    #[arg(long, value_name = "DATE")]
    pub before: Option<String>,
    /// Remove the documents whose ids are listed in FILE, one per line.
    #[arg(long, value_name = "FILE")]
    pub ids: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TuneArgs {
    /// The Jaccard similarity to find pairs at (0 < T < 1); default: the configuration's
    /// supershingle.target-similarity.
    #[arg(short = 't', long, value_name = "T")]
    pub threshold: Option<f64>,
    /// Draw the S-curve into this SVG file.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// Flags that override keys of the configuration file.
#[derive(Debug, Args, Clone, Default)]
pub struct ConfigArgs {
    /// Configuration file. Without it, ./pipeline.toml is used when present, else the built-in
    /// defaults (the same values as the pipeline.toml shipped with megashingle).
    #[arg(short = 'c', long = "config", value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Words per shingle (shingle.size).
    #[arg(short = 'k', long = "shingle-size", value_name = "N")]
    pub shingle_size: Option<usize>,
    /// Minimum Jaccard for a candidate pair to be joined (cluster.min-similarity).
    #[arg(long, value_name = "J")]
    pub min_similarity: Option<f64>,
    /// Remove stop words of these languages (canonicalize.stopwords), e.g. ru,uk,en; `none` for none.
    #[arg(long, value_name = "LANGS", value_delimiter = ',')]
    pub stopwords: Option<Vec<LanguageArg>>,
    /// Stem words with the Snowball stemmers of these languages (canonicalize.stem); `none` for none.
    #[arg(long, value_name = "LANGS", value_delimiter = ',')]
    pub stem: Option<Vec<LanguageArg>>,
    /// When to treat a text as HTML (canonicalize.html).
    #[arg(long, value_name = "WHEN", value_parser = choice::<HtmlMode>(&[
        ("auto", "HTML when the text contains a tag"),
        ("always", "always strip tags and decode entities"),
        ("never", "never: the text is taken as it is"),
    ]))]
    pub html: Option<HtmlMode>,
    /// Set any key of the configuration, e.g. --set boilerplate.min-documents=0 or
    /// --set canonicalize.main-text=false; repeatable, applied after the other flags.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
}

/// The record formats.
const FORMATS: &[(&str, &str)] = &[
    ("csv", "CSV with a header row"),
    ("jsonl", "one JSON object per line"),
    (
        "parquet",
        "Apache Parquet, one record a row (a file, not stdin or a terminal)",
    ),
];

/// A parser of one of the library's enums by its name in `pipeline.toml` (kebab-case), listing
/// `values` (name, help) in `--help`.
fn choice<T>(values: &'static [(&'static str, &'static str)]) -> impl TypedValueParser<Value = T>
where
    T: serde::de::DeserializeOwned + Clone + Send + Sync + 'static,
{
    let possible = values
        .iter()
        .map(|&(name, help)| PossibleValue::new(name).help(help));
    PossibleValuesParser::new(possible).map(|name| {
        let name = serde::de::value::StrDeserializer::<serde::de::value::Error>::new(&name);
        T::deserialize(name).expect("every possible value names a variant")
    })
}

/// A language code on the command line, or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LanguageArg(pub Option<Language>);

impl std::str::FromStr for LanguageArg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "none" {
            return Ok(LanguageArg(None));
        }
        s.parse().map(|l| LanguageArg(Some(l)))
    }
}

fn languages(args: &[LanguageArg]) -> Vec<Language> {
    let mut out: Vec<Language> = args.iter().filter_map(|a| a.0).collect();
    out.sort();
    out.dedup();
    out
}

impl ConfigArgs {
    /// The configuration file read, if any: the one given, else ./pipeline.toml when present.
    pub fn file(&self) -> Option<PathBuf> {
        let default_file = PathBuf::from("pipeline.toml");
        match &self.config {
            Some(path) => Some(path.clone()),
            None if default_file.is_file() => Some(default_file),
            None => None,
        }
    }

    /// The effective configuration: defaults < file < flags. A bad setting is named as the
    /// `--set` that gave it.
    pub fn resolve(&self) -> anyhow::Result<Config> {
        let default_file = PathBuf::from("pipeline.toml");
        let mut config = match &self.config {
            Some(path) => Config::load(path)?,
            None if default_file.is_file() => Config::load(&default_file)?,
            None => Config::default(),
        };
        if let Some(k) = self.shingle_size {
            config.shingle.size = k;
        }
        if let Some(t) = self.min_similarity {
            config.cluster.min_similarity = t;
        }
        if let Some(list) = &self.stopwords {
            config.canonicalize.stopwords = languages(list);
        }
        if let Some(list) = &self.stem {
            config.canonicalize.stem = languages(list);
        }
        if let Some(html) = self.html {
            config.canonicalize.html = html;
        }
        for setting in &self.settings {
            config = config.with_setting(setting).map_err(|e| match e {
                ConfigError::Setting { setting, message } => {
                    anyhow::anyhow!("--set {setting}: {message}")
                }
                e => e.into(),
            })?;
        }
        config.validate()?;
        Ok(config)
    }
}

#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Inputs, read as one collection: CSV files (header row; .tsv and .tab files are
    /// tab-separated, see --delimiter), JSONL files (.jsonl, .ndjson, .json), Parquet files
    /// (.parquet, one record a row), folders of .txt/.html/.htm/.eml files (id = path relative
    /// to the folder) and of .parquet files, single such files (id = file name), or `-` for
    /// stdin (JSONL when its first non-blank character is `{`, else CSV; --input-format says
    /// which).
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file, replaced only when complete; stdout when absent or `-`. It may not be an
    /// input or the configuration file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format; Parquet goes to a file (-o) or a pipe, not to a terminal.
    #[arg(long, value_name = "FORMAT", default_value = "csv", value_parser = choice::<OutputFormat>(FORMATS))]
    pub format: OutputFormat,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct ReuseArgs {
    /// Inputs, read as one collection, as `cluster` reads them.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file, replaced only when complete; stdout when absent or `-`. It may not be an
    /// input or the configuration file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Output format; Parquet goes to a file (-o) or a pipe, not to a terminal.
    #[arg(long, value_name = "FORMAT", default_value = "csv", value_parser = choice::<OutputFormat>(FORMATS))]
    pub format: OutputFormat,
    /// Words the shared passages of a pair hold, in each text, at the fewest
    /// (reuse.min-shared-words, 30).
    #[arg(long, value_name = "WORDS")]
    pub min_shared_words: Option<usize>,
    /// Share of one of the two texts in the shared passages at the least
    /// (reuse.min-containment, 0.1).
    #[arg(long, value_name = "SHARE")]
    pub min_containment: Option<f64>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct DedupArgs {
    /// CSV, JSONL or Parquet files, read as one collection.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// Output file, replaced only when complete; stdout when absent or `-`. It may not be an
    /// input or the configuration file.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write each removed record as CSV: doc_id, duplicate_of, similarity (the larger of
    /// jaccard and containment), jaccard, containment.
    #[arg(long, value_name = "FILE")]
    pub dropped: Option<PathBuf>,
    /// Output format: that of the inputs (the default), or parquet for CSV inputs (every
    /// column a string column). Parquet goes to a file (-o) or a pipe, not to a terminal.
    #[arg(long, value_name = "FORMAT", value_parser = choice::<OutputFormat>(FORMATS))]
    pub format: Option<OutputFormat>,
    /// Which record of a story to keep (dedup.keep): representative (most distinct
    /// shingles), first (input order), longest (most words) or earliest (--time-column).
    #[arg(long, value_name = "WHICH", value_parser = choice::<Keep>(&[
        ("representative", "the member with the most distinct shingles"),
        ("first", "the member read first"),
        ("longest", "the member with the most words"),
        ("earliest", "the member with the earliest time"),
    ]))]
    pub keep: Option<Keep>,
    /// Remove a member when its Jaccard with the kept record, or containment in it, is at
    /// least this (dedup.threshold).
    #[arg(long, value_name = "S")]
    pub threshold: Option<f64>,
    /// CSV column or JSONL field holding each record's time, for --keep earliest (RFC 3339
    /// or YYYY-MM-DD).
    #[arg(long, value_name = "NAME")]
    pub time_column: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// How a run over inputs goes: threads, progress and timings.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Worker threads; 0 means one per core. At most 4 per core are run.
    #[arg(short = 'j', long = "threads", value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// No progress bars and no summary (warnings and errors are still printed).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Print the wall-clock time of each stage on stderr at the end.
    #[arg(long)]
    pub timings: bool,
}

/// Worker threads per core beyond which more threads only cost memory and start-up time.
pub const THREADS_PER_CORE: usize = 4;

impl RunArgs {
    /// The number of worker threads to run (0: one per core), with a warning when `-j` asked
    /// for more than [`THREADS_PER_CORE`] per core and was lowered to that.
    pub fn threads(&self) -> (usize, Option<String>) {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        cap_threads(self.threads, cores)
    }
}

/// `asked` threads capped at [`THREADS_PER_CORE`] per core of `cores`, and the warning when
/// capped.
pub fn cap_threads(asked: usize, cores: usize) -> (usize, Option<String>) {
    let most = THREADS_PER_CORE * cores.max(1);
    if asked <= most {
        return (asked, None);
    }
    let warning = format!(
        "-j {asked} is more than {THREADS_PER_CORE} threads per core ({cores} cores here); running {most} threads"
    );
    (most, Some(warning))
}

/// How input records are read.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Column (CSV, Parquet) or field (JSONL) holding the document id.
    #[arg(long, value_name = "NAME", default_value = "id")]
    pub id_column: String,
    /// Column (CSV, Parquet) or field (JSONL) holding the text.
    #[arg(long, value_name = "NAME", default_value = "text")]
    pub text_column: String,
    /// Format of stdin and of record files, instead of the one detected: by the extension, or
    /// for stdin and other extensions JSONL when the first non-blank character is `{`, else CSV.
    #[arg(long, value_name = "FORMAT", value_parser = choice::<InputFormat>(FORMATS))]
    pub input_format: Option<InputFormat>,
    /// The character between the fields of CSV inputs: one character of one byte, such as ';'
    /// or '|', or `tab` (also written '\t'). Default: tabs for .tsv and .tab files (also
    /// .tsv.gz, .tsv.zst), commas for any other CSV input.
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,
    /// The charset of CSV, TSV and JSONL inputs, for a file a spreadsheet exported in a legacy
    /// one: a label such as windows-1251, cp1252, koi8-r, shift_jis, gb18030 or utf-16le, or
    /// `auto` to find it from the first 64 KiB of each input. Default: UTF-8. HTML, text and
    /// mail files always find their own, as browsers do.
    #[arg(long, value_name = "LABEL", value_parser = RecordEncoding::parse)]
    pub encoding: Option<RecordEncoding>,
    /// Stop at the first malformed record, bad UTF-8 (or bytes a file's charset does not
    /// allow), empty or duplicate id, instead of reporting and skipping it (or reading the
    /// bytes as U+FFFD).
    #[arg(long)]
    pub strict: bool,
}

impl InputArgs {
    /// The reader's options, with a time column when one is read.
    pub fn read_options(&self, time_column: Option<String>) -> ReadOptions {
        ReadOptions {
            id_column: self.id_column.clone(),
            text_column: self.text_column.clone(),
            format: self.input_format,
            strict: self.strict,
            time_column,
            columns: Vec::new(),
            delimiter: self.delimiter,
            encoding: self.encoding,
        }
    }
}

/// A `--delimiter`: one character of one byte, `tab` or `\t`; never a quote or a line break.
fn parse_delimiter(value: &str) -> Result<u8, String> {
    let byte = match value {
        "tab" | "\\t" | "\t" => b'\t',
        _ if value.len() == 1 => value.as_bytes()[0],
        _ => {
            return Err(format!(
                "{value:?} is not one character of one byte: give one such as ';' or '|', or `tab`"
            ))
        }
    };
    match byte {
        b'"' | b'\n' | b'\r' => Err(format!(
            "{value:?} cannot separate fields: quotes and line breaks are part of CSV itself"
        )),
        _ => Ok(byte),
    }
}

#[derive(Debug, Args)]
pub struct CanonArgs {
    /// A text, HTML or mail file; `-` for stdin.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Print one word per line instead of one line of words.
    #[arg(long)]
    pub lines: bool,
    /// Also print, after the words, the lines of the page that main-text extraction dropped
    /// (navigation, footers, share lines, signatures...).
    #[arg(long)]
    pub dropped: bool,
    /// Also print, after the words, how the bytes were read: the charset used and why (byte
    /// order mark, declaration, detection), and a mail's parts.
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// First file (or, with --text, first text).
    #[arg(value_name = "A")]
    pub first: String,
    /// Second file (or, with --text, second text).
    #[arg(value_name = "B")]
    pub second: String,
    /// Take A and B as the texts themselves, not as file names.
    #[arg(long)]
    pub text: bool,
    /// Print one JSON object (keys include dice, jaccard, estimated_jaccard, first_shingles,
    /// second_shingles, common, first_lead_in_second, second_lead_in_first).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[derive(Debug, Args)]
pub struct ConfigOnlyArgs {
    #[command(flatten)]
    pub config: ConfigArgs,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_flags_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_listed_value_names_a_variant() {
        for (flag, values) in [
            ("--html", &["auto", "always", "never"][..]),
            ("--format", &["csv", "jsonl", "parquet"]),
            ("--input-format", &["csv", "jsonl", "parquet"]),
        ] {
            for value in values {
                let args = ["megashingle", "cluster", "in.csv", flag, value];
                assert!(Cli::try_parse_from(args).is_ok(), "{flag} {value}");
            }
        }
        for keep in ["representative", "first", "longest", "earliest"] {
            let args = ["megashingle", "dedup", "in.csv", "--keep", keep];
            let Command::Dedup(dedup) = Cli::try_parse_from(args).unwrap().command else {
                panic!("not dedup");
            };
            assert_eq!(dedup.keep.map(|k| k.to_string()).as_deref(), Some(keep));
        }
    }

    #[test]
    fn a_delimiter_is_one_byte_or_tab() {
        for (given, byte) in [
            (";", b';'),
            ("|", b'|'),
            ("tab", b'\t'),
            ("\\t", b'\t'),
            ("\t", b'\t'),
        ] {
            assert_eq!(parse_delimiter(given), Ok(byte), "{given:?}");
        }
        for refused in ["", ";;", "é", "\"", "\n", "semicolon"] {
            assert!(parse_delimiter(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn threads_are_capped_at_four_per_core() {
        assert_eq!(cap_threads(0, 2), (0, None));
        assert_eq!(cap_threads(8, 2), (8, None));
        let (threads, warning) = cap_threads(5000, 2);
        assert_eq!(threads, 8);
        assert_eq!(
            warning.as_deref(),
            Some("-j 5000 is more than 4 threads per core (2 cores here); running 8 threads")
        );
    }
}
