//! The pipeline configuration: what `pipeline.toml` may say, its defaults, its validation, and
//! how it is loaded. Layers apply in one order: built-in defaults < the file < command-line flags.
//! Unknown keys and out-of-range values are errors that name the key and what is allowed.

pub mod plan;

pub use plan::Plan;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::canonicalize::tokens::UnitScript;
use crate::sketch::grouping::Grouping;
pub use crate::sketch::grouping::Matching;

/// A language with stop-word lists and a Snowball stemmer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// English.
    En,
    /// Russian.
    Ru,
    /// Ukrainian.
    Uk,
}

impl Language {
    /// Every supported language, in a fixed order.
    pub const ALL: [Language; 3] = [Language::En, Language::Ru, Language::Uk];

    /// The two-letter code used in `pipeline.toml`.
    pub fn code(self) -> &'static str {
        match self {
            Language::En => "en",
            Language::Ru => "ru",
            Language::Uk => "uk",
        }
    }
}

impl std::str::FromStr for Language {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Language::ALL
            .into_iter()
            .find(|l| l.code() == s)
            .ok_or_else(|| format!("unknown language {s:?}: allowed are en, ru, uk"))
    }
}

/// When to treat a text as HTML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HtmlMode {
    /// HTML when the text contains a tag.
    Auto,
    /// Always strip tags and decode entities.
    Always,
    /// Never: the text is taken as it is.
    Never,
}

/// How candidate pairs are verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verify {
    /// From the signatures: fixed memory per document.
    Estimate,
    /// From the shingle sets, kept until clustering is done: 4 bytes per distinct shingle.
    Exact,
}

/// The whole configuration, as in `pipeline.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct Config {
    /// Text canonicalization.
    pub canonicalize: CanonConfig,
    /// Shingling.
    pub shingle: ShingleConfig,
    /// The minima signature.
    pub signature: SignatureConfig,
    /// Supershingles and megashingles: the candidate generator.
    pub supershingle: SupershingleConfig,
    /// Corpus statistics.
    pub boilerplate: BoilerplateConfig,
    /// Verification and clustering.
    pub cluster: ClusterConfig,
    /// Removing duplicates (`megashingle dedup`).
    pub dedup: DedupConfig,
    /// Passages reused between documents (`megashingle reuse`).
    pub reuse: ReuseConfig,
}

/// Which record of a story `dedup` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Keep {
    /// The story's representative: the member with the most distinct shingles.
    Representative,
    /// The member read first (input order).
    First,
    /// The member with the most canonical words; ties to the one read first.
    Longest,
    /// The member with the earliest time (a time column); members without a time come last,
    /// ties to the one read first.
    Earliest,
}

impl std::fmt::Display for Keep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Keep::Representative => "representative",
            Keep::First => "first",
            Keep::Longest => "longest",
            Keep::Earliest => "earliest",
        })
    }
}

/// `[dedup]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct DedupConfig {
    /// A member of a story is removed as a duplicate of the kept record only when its exact
    /// Jaccard with it, or the share of its shingles found in it, is at least this.
    pub threshold: f64,
    /// Which record of each story is kept.
    pub keep: Keep,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig {
            threshold: 0.5,
            keep: Keep::Representative,
        }
    }
}

/// `[reuse]`: when two documents share a passage (see `megashingle reuse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct ReuseConfig {
    /// A pair is reuse when the passages it shares hold at least this many words in each text.
    pub min_shared_words: usize,
    /// ... and when at least this share of one of the two texts lies in those passages.
    pub min_containment: f64,
    /// Shingles per winnowing window: texts sharing two fingerprints (any shared run of
    /// `2 * window + k - 1` words) are a candidate pair.
    pub window: usize,
    /// Runs of shared words at most this many words apart are one passage.
    pub max_gap: usize,
    /// Words of the fewest a passage holds to count.
    pub min_passage_words: usize,
}

impl Default for ReuseConfig {
    fn default() -> Self {
        ReuseConfig {
            min_shared_words: 30,
            min_containment: 0.1,
            window: 4,
            max_gap: 8,
            min_passage_words: 8,
        }
    }
}

/// `[boilerplate]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct BoilerplateConfig {
    /// A shingle found in at least this many documents is left out of signatures; 0 turns it off.
    pub min_documents: usize,
    /// A shingle found in documents of at least this many different stories is left out of
    /// signatures; 0 turns it off.
    pub min_stories: usize,
}

impl Default for BoilerplateConfig {
    fn default() -> Self {
        BoilerplateConfig {
            min_documents: 30,
            min_stories: 8,
        }
    }
}

/// `[canonicalize]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct CanonConfig {
    /// auto | always | never.
    pub html: HtmlMode,
    /// Strip RFC 5322 headers from texts that start with them.
    pub mail_headers: bool,
    /// Keep only the main text: the article of an HTML page, the body of a mail.
    pub main_text: bool,
    /// Languages whose stop words are removed.
    pub stopwords: Vec<Language>,
    /// Languages whose Snowball stemmer is applied.
    pub stem: Vec<Language>,
    /// Words shorter than this many characters are dropped.
    pub min_word_length: usize,
}

impl Default for CanonConfig {
    fn default() -> Self {
        CanonConfig {
            html: HtmlMode::Auto,
            mail_headers: true,
            main_text: true,
            stopwords: Vec::new(),
            stem: Vec::new(),
            min_word_length: 1,
        }
    }
}

/// `[shingle]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct ShingleConfig {
    /// Words per shingle (k).
    pub size: usize,
    /// Characters per shingle in a text written mostly in a script without spaces, whose
    /// characters are its words.
    pub script_size: ScriptSizes,
}

impl Default for ShingleConfig {
    fn default() -> Self {
        ShingleConfig {
            size: 3,
            script_size: ScriptSizes::default(),
        }
    }
}

impl ShingleConfig {
    /// The shingle size of a text whose canonical words are `words` (see [`ScriptCount`]).
    pub fn size_of<'a>(&self, words: impl IntoIterator<Item = &'a str>) -> usize {
        let mut count = ScriptCount::default();
        words
            .into_iter()
            .take(ScriptCount::ENOUGH)
            .for_each(|w| count.add(w));
        count.size(self)
    }
}

/// `[shingle.script-size]`: characters per shingle for the scripts written without spaces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct ScriptSizes {
    /// Chinese and Japanese: Han ideographs, kana and Bopomofo.
    pub han: usize,
    /// Thai.
    pub thai: usize,
    /// Lao.
    pub lao: usize,
    /// Khmer.
    pub khmer: usize,
    /// Myanmar (Burmese).
    pub myanmar: usize,
}

impl Default for ScriptSizes {
    fn default() -> Self {
        ScriptSizes {
            han: 4,
            thai: 5,
            lao: 5,
            khmer: 5,
            myanmar: 5,
        }
    }
}

impl ScriptSizes {
    /// The shingle size for `script`.
    pub(crate) fn get(&self, script: UnitScript) -> usize {
        match script {
            UnitScript::Han => self.han,
            UnitScript::Thai => self.thai,
            UnitScript::Lao => self.lao,
            UnitScript::Khmer => self.khmer,
            UnitScript::Myanmar => self.myanmar,
        }
    }
}

/// Counts a text's words by script, to choose its shingle size: a text most of whose words
/// are characters of one script written without spaces (more of them than words of spaced
/// scripts and than characters of any other such script) is shingled with that script's
/// `shingle.script-size`; any other text with `shingle.size`. Japanese with Latin brand
/// names, or Chinese with numbers, is one stream of words either way: a Latin word or a
/// number counts as one character of a shingle. Long texts are judged by their first
/// [`ScriptCount::ENOUGH`] words.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScriptCount {
    /// Words of spaced scripts.
    spaced: u32,
    /// Characters of each script of [`UnitScript::ALL`].
    units: [u32; 5],
}

impl ScriptCount {
    /// Words counted before a text's shingle size is chosen.
    pub const ENOUGH: usize = 4096;

    /// Counts one canonical word.
    #[inline]
    pub fn add(&mut self, word: &str) {
        match UnitScript::of_word(word) {
            None => self.spaced += 1,
            Some(script) => self.units[script as usize] += 1,
        }
    }

    /// The script written without spaces that most words are characters of, if any.
    pub(crate) fn script(&self) -> Option<UnitScript> {
        let (script, &count) = UnitScript::ALL
            .iter()
            .zip(&self.units)
            .max_by_key(|&(script, &count)| (count, std::cmp::Reverse(*script)))?;
        (count > self.spaced).then_some(*script)
    }

    /// The shingle size of the text counted.
    pub fn size(&self, config: &ShingleConfig) -> usize {
        self.script()
            .map_or(config.size, |script| config.script_size.get(script))
    }
}

/// `[signature]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct SignatureConfig {
    /// Number of minima (hash functions).
    pub minima: usize,
    /// Seed of the keyed shingle hash and of the hash functions.
    pub seed: u64,
}

impl Default for SignatureConfig {
    fn default() -> Self {
        SignatureConfig {
            minima: 84,
            seed: 0x6d65_6761_7368_696e,
        }
    }
}

/// `[supershingle]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct SupershingleConfig {
    /// Number of supershingles.
    pub groups: usize,
    /// Minima hashed into each supershingle.
    pub minima_per_group: usize,
    /// megashingle | supershingle.
    pub matching: Matching,
    /// When above 0, the grouping is chosen for this Jaccard similarity and the three keys
    /// above are ignored.
    pub target_similarity: f64,
}

impl SupershingleConfig {
    /// The grouping in force: chosen for `target-similarity` when it is set, else as given.
    pub fn grouping(&self, minima: usize) -> Grouping {
        if self.target_similarity > 0.0 {
            crate::sketch::grouping::choose(self.target_similarity, minima)
        } else {
            Grouping {
                groups: self.groups,
                minima_per_group: self.minima_per_group,
                matching: self.matching,
            }
        }
    }
}

impl Default for SupershingleConfig {
    fn default() -> Self {
        SupershingleConfig {
            groups: 6,
            minima_per_group: 14,
            matching: Matching::Megashingle,
            target_similarity: 0.2,
        }
    }
}

/// `[cluster]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default, rename_all = "kebab-case")]
pub struct ClusterConfig {
    /// A candidate pair is joined when its Jaccard is at least this.
    pub min_similarity: f64,
    /// ... or when the estimated share of the smaller text's shingles found in the larger is at
    /// least this (a text cut to its lead); above 1.0 turns containment off.
    pub min_containment: f64,
    /// estimate | exact: the similarity that verification uses.
    pub verify: Verify,
    /// A similarity estimated from the minima (verify = "estimate", or a pair with an indexed
    /// document) counts this many standard errors below its estimate.
    pub estimate_margin: f64,
    /// Two clusters merge only when their representatives also pass the checks at half the
    /// thresholds.
    pub check_representatives: bool,
    /// A document left alone joins the cluster (of two or more) of its most similar candidate
    /// when their Jaccard is at least this; 0 turns it off.
    pub attach_similarity: f64,
    /// ... and when at least this share of the lead (first 32 shingles) of one is found in the
    /// other's set; 0 turns the check off.
    pub attach_lead: f64,
    /// A candidate key shared by more documents than this is boilerplate and makes no pairs.
    pub max_bucket: usize,
    /// Shingle sets that take more than this many MiB are all kept in a temporary file.
    pub set_memory_mb: usize,
}

impl ClusterConfig {
    /// The lowest similarity at which a pair can link two documents: `min-similarity`, or
    /// `attach-similarity` when weak links are on and it is lower.
    pub fn weakest_link(&self) -> f64 {
        if self.attach_similarity > 0.0 {
            self.attach_similarity.min(self.min_similarity)
        } else {
            self.min_similarity
        }
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        ClusterConfig {
            min_similarity: 0.35,
            min_containment: 0.8,
            verify: Verify::Exact,
            estimate_margin: 1.0,
            check_representatives: true,
            attach_similarity: 0.2,
            attach_lead: 0.2,
            max_bucket: 5000,
            set_memory_mb: 256,
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{path}: cannot read the configuration")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown keys.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the parser said, with the key and line.
        message: String,
    },
    /// A setting `KEY=VALUE` that names no key or gives a value of the wrong type.
    #[error("setting {setting}: {message}")]
    Setting {
        /// The assignment as given.
        setting: String,
        /// What is wrong.
        message: String,
    },
    /// A value is out of its range.
    #[error("configuration key `{key}` = {value} is out of range: {allowed}")]
    Range {
        /// Dotted key, as in pipeline.toml.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is allowed.
        allowed: String,
    },
}

/// The dotted key of a script's shingle size.
fn script_size_key(script: UnitScript) -> &'static str {
    match script {
        UnitScript::Han => "shingle.script-size.han",
        UnitScript::Thai => "shingle.script-size.thai",
        UnitScript::Lao => "shingle.script-size.lao",
        UnitScript::Khmer => "shingle.script-size.khmer",
        UnitScript::Myanmar => "shingle.script-size.myanmar",
    }
}

/// Largest shingle size accepted.
pub const MAX_SHINGLE_SIZE: usize = 64;
/// Largest winnowing window accepted (`reuse.window`).
pub const MAX_REUSE_WINDOW: usize = 64;
/// Largest number of minima accepted.
pub const MAX_MINIMA: usize = 1024;

impl Config {
    /// Parses a configuration from TOML text; `path` names it in errors.
    pub fn from_toml(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let config: Config = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: one_line(&e.to_string()),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Reads and validates a configuration file (TOML, the keys of `pipeline.toml`); keys it
    /// leaves out keep their defaults.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        Config::load(path.as_ref())
    }

    /// Reads and validates a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Config::from_toml(&text, path)
    }

    /// Checks every value against its range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let range = |key: &'static str, value: String, allowed: String| {
            Err(ConfigError::Range {
                key,
                value,
                allowed,
            })
        };
        let k = self.shingle.size;
        if !(1..=MAX_SHINGLE_SIZE).contains(&k) {
            return range(
                "shingle.size",
                k.to_string(),
                format!("1 to {MAX_SHINGLE_SIZE} words"),
            );
        }
        for script in UnitScript::ALL {
            let k = self.shingle.script_size.get(script);
            if !(1..=MAX_SHINGLE_SIZE).contains(&k) {
                return Err(ConfigError::Range {
                    key: script_size_key(script),
                    value: k.to_string(),
                    allowed: format!("1 to {MAX_SHINGLE_SIZE} characters"),
                });
            }
        }
        let m = self.signature.minima;
        if !(1..=MAX_MINIMA).contains(&m) {
            return range(
                "signature.minima",
                m.to_string(),
                format!("1 to {MAX_MINIMA}"),
            );
        }
        let s = &self.supershingle;
        if !(0.0..1.0).contains(&s.target_similarity) {
            return range(
                "supershingle.target-similarity",
                s.target_similarity.to_string(),
                "0.0 (off: use groups and minima-per-group) or above, up to but not including 1.0"
                    .into(),
            );
        }
        if s.target_similarity == 0.0 {
            if s.groups == 0 || s.minima_per_group == 0 || s.groups * s.minima_per_group > m {
                return range(
                    "supershingle.groups",
                    format!(
                        "{} (with minima-per-group = {})",
                        s.groups, s.minima_per_group
                    ),
                    format!(
                        "at least 1 group of at least 1 minimum, and groups × minima-per-group \
                         at most signature.minima = {m}"
                    ),
                );
            }
            if s.matching == Matching::Megashingle && s.groups < 2 {
                return range(
                    "supershingle.groups",
                    s.groups.to_string(),
                    "at least 2 when matching = \"megashingle\" (a megashingle is a pair)".into(),
                );
            }
        }
        let t = self.cluster.min_similarity;
        if !(0.0..=1.0).contains(&t) {
            return range("cluster.min-similarity", t.to_string(), "0.0 to 1.0".into());
        }
        for (key, share) in [
            ("cluster.attach-similarity", self.cluster.attach_similarity),
            ("cluster.attach-lead", self.cluster.attach_lead),
            ("dedup.threshold", self.dedup.threshold),
        ] {
            if !(0.0..=1.0).contains(&share) {
                return range(key, share.to_string(), "0.0 (off) to 1.0".into());
            }
        }
        let m = self.cluster.estimate_margin;
        if !(0.0..=4.0).contains(&m) {
            return range(
                "cluster.estimate-margin",
                m.to_string(),
                "0.0 to 4.0 standard errors".into(),
            );
        }
        let c = self.cluster.min_containment;
        if !(0.0..=2.0).contains(&c) {
            return range(
                "cluster.min-containment",
                c.to_string(),
                "0.0 to 1.0, or above 1.0 to turn containment off".into(),
            );
        }
        if self.cluster.max_bucket < 2 {
            return range(
                "cluster.max-bucket",
                self.cluster.max_bucket.to_string(),
                "at least 2 documents".into(),
            );
        }
        self.validate_reuse()?;
        if self.boilerplate.min_documents == 1 {
            return range(
                "boilerplate.min-documents",
                "1".into(),
                "0 (off) or at least 2 documents".into(),
            );
        }
        if self.canonicalize.min_word_length > 100 {
            return range(
                "canonicalize.min-word-length",
                self.canonicalize.min_word_length.to_string(),
                "0 to 100 characters".into(),
            );
        }
        Ok(())
    }

    /// Checks the `[reuse]` keys against their ranges.
    fn validate_reuse(&self) -> Result<(), ConfigError> {
        let r = &self.reuse;
        let range = |key: &'static str, value: String, allowed: &str| {
            Err(ConfigError::Range {
                key,
                value,
                allowed: allowed.to_owned(),
            })
        };
        if !(1..=10_000).contains(&r.min_shared_words) {
            return range(
                "reuse.min-shared-words",
                r.min_shared_words.to_string(),
                "1 to 10000 words",
            );
        }
        if !(0.0..=1.0).contains(&r.min_containment) {
            return range(
                "reuse.min-containment",
                r.min_containment.to_string(),
                "0.0 to 1.0",
            );
        }
        if !(1..=MAX_REUSE_WINDOW).contains(&r.window) {
            return range("reuse.window", r.window.to_string(), "1 to 64 shingles");
        }
        if r.max_gap > 64 {
            return range("reuse.max-gap", r.max_gap.to_string(), "0 to 64 words");
        }
        if !(1..=10_000).contains(&r.min_passage_words) {
            return range(
                "reuse.min-passage-words",
                r.min_passage_words.to_string(),
                "1 to 10000 words",
            );
        }
        Ok(())
    }

    /// The configuration with one `section.key=value` assignment applied; the value is read
    /// as TOML (`5`, `0.3`, `true`, `["ru", "uk"]`), or as a string when it is not TOML. Ranges
    /// are not checked here, so that several settings can be applied in any order: call
    /// [`Config::validate`] after the last.
    pub fn with_setting(&self, setting: &str) -> Result<Config, ConfigError> {
        let fail = |message: String| ConfigError::Setting {
            setting: setting.to_owned(),
            message,
        };
        let (key, value) = setting
            .split_once('=')
            .ok_or_else(|| fail("expected KEY=VALUE, e.g. cluster.min-similarity=0.4".into()))?;
        let value = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_owned()));
        let mut table = toml::Table::try_from(self).expect("a Config always serializes");
        let parts: Vec<&str> = key.trim().split('.').collect();
        let (leaf, sections) = parts.split_last().expect("split gives one part at least");
        let mut at = &mut table;
        for section in sections {
            let sections: Vec<String> = at.keys().cloned().collect();
            at = at
                .get_mut(*section)
                .and_then(toml::Value::as_table_mut)
                .ok_or_else(|| {
                    fail(format!(
                        "no section `{section}`; sections are {}",
                        sections.join(", ")
                    ))
                })?;
        }
        at.insert((*leaf).to_owned(), value);
        toml::Value::Table(table)
            .try_into()
            .map_err(|e: toml::de::Error| fail(one_line(&e.to_string())))
    }

    /// The configuration as TOML, as `megashingle config` prints it.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a Config always serializes")
    }
}

fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.chars().all(|c| c == '|' || c == '^' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn committed_pipeline_toml_is_the_default() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipeline.toml");
        let config = Config::load(&path).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn printed_config_parses_back() {
        let config = Config::default();
        let again = Config::from_toml(&config.to_toml(), Path::new("x.toml")).unwrap();
        assert_eq!(config, again);
    }

    #[test]
    fn a_script_shingle_size_is_set_checked_and_chosen_from_the_text() {
        let config =
            Config::from_toml("[shingle.script-size]\nkhmer = 7\n", Path::new("p.toml")).unwrap();
        assert_eq!(config.shingle.script_size.khmer, 7);
        assert_eq!(config.shingle.script_size.han, ScriptSizes::default().han);
        let err = Config::from_toml("[shingle.script-size]\nthai = 0\n", Path::new("p.toml"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "configuration key `shingle.script-size.thai` = 0 is out of range: 1 to 64 characters"
        );
        let set = Config::default()
            .with_setting("shingle.script-size.han=6")
            .unwrap();
        assert_eq!(set.shingle.script_size.han, 6);
        let shingle = &set.shingle;
        let words = |text: &'static str| crate::canonicalize::tokens::words(text);
        // Chinese with a number and a Latin name: Han characters are most of the words.
        assert_eq!(shingle.size_of(words("国家统计局发布了GDP数据 2024")), 6);
        assert_eq!(shingle.size_of(words("東京都はiPhoneを発表")), 6);
        // Mostly spaced words, or nothing: shingle.size.
        assert_eq!(shingle.size_of(words("a report on 北京 and its people")), 3);
        assert_eq!(shingle.size_of(words("")), 3);
        // Thai and Khmer characters outnumber the Han ones: the larger count decides.
        assert_eq!(
            shingle.size_of(words("ขนส่งน้ำ 国")),
            shingle.script_size.thai
        );
        let mut count = ScriptCount::default();
        for w in words("ខ្មែរ ខ្មែរ abc") {
            count.add(w);
        }
        assert_eq!(count.script(), Some(UnitScript::Khmer));
    }

    #[test]
    fn unknown_key_is_named() {
        let err = Config::from_toml("[shingle]\nsise = 4\n", Path::new("p.toml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("p.toml:"), "{msg}");
        assert!(msg.contains("sise"), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }

    #[test]
    fn out_of_range_names_key_and_range() {
        let err = Config::from_toml("[shingle]\nsize = 0\n", Path::new("p.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "configuration key `shingle.size` = 0 is out of range: 1 to 64 words"
        );
        let err = Config::from_toml(
            "[supershingle]\ntarget-similarity = 0.0\ngroups = 7\nminima-per-group = 14\n",
            Path::new("p.toml"),
        )
        .unwrap_err();
        assert!(err.to_string().contains("supershingle.groups"), "{err}");
        let err = Config::from_toml("[cluster]\nmin-similarity = 1.5\n", Path::new("p.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("0.0 to 1.0"), "{err}");
        let err =
            Config::from_toml("[cluster]\nattach-lead = -0.1\n", Path::new("p.toml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "configuration key `cluster.attach-lead` = -0.1 is out of range: 0.0 (off) to 1.0"
        );
    }

    #[test]
    fn settings_override_one_key() {
        let config = Config::default()
            .with_setting("cluster.min-similarity=0.45")
            .unwrap()
            .with_setting("canonicalize.stem=[\"ru\", \"uk\"]")
            .unwrap()
            .with_setting("canonicalize.html=never")
            .unwrap();
        assert_eq!(config.cluster.min_similarity, 0.45);
        assert_eq!(config.canonicalize.stem, [Language::Ru, Language::Uk]);
        assert_eq!(config.canonicalize.html, HtmlMode::Never);
    }

    #[test]
    fn bad_settings_say_what_is_wrong() {
        let base = Config::default();
        let err = base.with_setting("cluster.min-similarity").unwrap_err();
        assert!(err.to_string().contains("expected KEY=VALUE"), "{err}");
        let err = base.with_setting("clustr.min-similarity=1").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("setting clustr.min-similarity=1: no section `clustr`"),
            "{err}"
        );
        let err = base.with_setting("cluster.min-simlarity=0.4").unwrap_err();
        assert!(err.to_string().contains("min-simlarity"), "{err}");
        let err = base
            .with_setting("cluster.min-similarity=2")
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(err.to_string().contains("cluster.min-similarity"), "{err}");
    }

    #[test]
    fn unknown_language_is_rejected() {
        let err = Config::from_toml("[canonicalize]\nstem = [\"xx\"]\n", Path::new("p.toml"))
            .unwrap_err();
        assert!(err.to_string().contains("xx"), "{err}");
    }
}
