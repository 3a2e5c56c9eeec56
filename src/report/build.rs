//! Making a report's model from a sketched collection and its stories (clustered for the
//! report, or read from a table or an index). The pipeline drops each text once it is
//! shingled, so the inputs are read a second time for the texts: each member of a story of two
//! or more is compared with its representative ([`crate::compare()`]: exact Jaccard,
//! containment, shared supershingles and megashingles, shared passages), one story after
//! another on the thread pool, each text prepared once. Texts are then cut to what the views
//! need: a lead for every document, and for the documents of stories of two or more as many
//! more words as the report's text budget allows.

use std::path::PathBuf;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::cluster::{Cluster, Via};
use crate::compare::{Comparer, Prepared};
use crate::config::{Config, Plan};
use crate::engine::Collection;
use crate::io::read::{read_inputs, ReadError, ReadItem, ReadOptions};
use crate::io::time::format_time;
use crate::report::model::{
    Grouping, Join, Member, Pair, ReportModel, Story, StorySource, Summary,
};
use crate::report::text::{Keep, Shown};

/// Bytes of text a report holds for the documents of stories of two or more, shared out
/// evenly among them (see [`text_bytes`]).
pub(crate) const TEXT_BUDGET: usize = 8 << 20;

/// Most display words kept of one text.
pub(crate) const MAX_TEXT_WORDS: usize = 1000;

/// The stories to show and what is known of them.
#[derive(Debug, Clone)]
pub struct Stories {
    /// Clusters in output order, each representative first (as [`crate::cluster::cluster`]
    /// or [`crate::cluster::clusters_of`] give them).
    pub clusters: Vec<Cluster>,
    /// Each cluster's name from a table or an index; the smallest id of its documents when
    /// `None`, as `cluster` names them.
    pub names: Option<Vec<String>>,
    /// Each cluster's size in the table or index it comes from.
    pub known_sizes: Option<Vec<u64>>,
    /// How each document joined, by document number, when the stories were clustered here.
    pub via: Option<Vec<Option<Via>>>,
    /// Where the stories come from.
    pub source: StorySource,
}

/// The texts read back for a report, by document number.
#[derive(Debug, Default)]
pub struct Texts {
    documents: Vec<Option<Text>>,
}

/// One document's text as kept for the report, with its column values.
#[derive(Debug)]
struct Text {
    /// The whole raw text (a document of a story of two or more), or only its lead.
    body: Body,
    columns: Vec<String>,
}

#[derive(Debug)]
enum Body {
    Raw(String),
    Lead(Shown),
}

/// The inputs cannot be read again.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// Standard input was given.
    #[error("a report reads its inputs twice (to cluster them, then for the texts it shows), and stdin cannot be read twice: save it to a file and name the file")]
    Stdin,
    /// Reading failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Whether the inputs can be read a second time for their texts: not stdin.
pub fn rereadable(inputs: &[PathBuf]) -> Result<(), TextError> {
    match inputs.iter().any(|p| p.as_os_str() == "-") {
        true => Err(TextError::Stdin),
        false => Ok(()),
    }
}

/// Reads the inputs again (as they were read for `collection`, with `options`) and keeps each
/// document's text: whole for the documents of stories of two or more in `clusters`, else its
/// lead only. Records that were skipped or dropped the first time (a later duplicate id) are
/// skipped again, silently: they were reported then.
pub fn read_texts(
    inputs: &[PathBuf],
    options: &ReadOptions,
    collection: &Collection,
    clusters: &[Cluster],
    config: &Config,
) -> Result<Texts, TextError> {
    rereadable(inputs)?;
    let ids = &collection.ids;
    let mut whole = vec![false; ids.len()];
    for c in clusters.iter().filter(|c| c.members.len() > 1) {
        for &(doc, _) in &c.members {
            whole[doc as usize] = true;
        }
    }
    let canonicalizer = crate::canonicalize::Canonicalizer::new(&config.canonicalize);
    let lead_only = Keep { words: 0, bytes: 0 };
    let mut documents: Vec<Option<Text>> = (0..ids.len()).map(|_| None).collect();
    // Documents are in id order; of two records with one id, the first read was kept.
    let options = ReadOptions {
        strict: false,
        ..options.clone()
    };
    for item in read_inputs(inputs, &options) {
        let ReadItem::Record(record) = item? else {
            continue;
        };
        let Ok(doc) = ids.binary_search(&record.id) else {
            continue;
        };
        if documents[doc].is_some() {
            continue;
        }
        let body = if whole[doc] {
            Body::Raw(record.text)
        } else {
            Body::Lead(Shown::of(&canonicalizer, &record.text, None, lead_only))
        };
        documents[doc] = Some(Text {
            body,
            columns: record.columns,
        });
    }
    Ok(Texts { documents })
}

/// Bytes of text kept of each document of a story of two or more: the budget shared evenly,
/// or `asked` when given.
pub fn text_bytes(clusters: &[Cluster], asked: Option<usize>) -> usize {
    asked.unwrap_or_else(|| {
        let shown: usize = (clusters.iter())
            .map(|c| c.members.len())
            .filter(|&n| n > 1)
            .sum();
        TEXT_BUDGET / shown.max(1)
    })
}

/// What a report says of its run besides the stories.
#[derive(Debug, Clone)]
pub struct Setting<'a> {
    /// The inputs, as named on the command line.
    pub inputs: &'a [PathBuf],
    /// The configuration the stories were made with.
    pub config: &'a Plan,
    /// The time column, when one is read.
    pub time_column: Option<String>,
    /// Other columns shown (read into each record's columns).
    pub columns: Vec<String>,
    /// Bytes of text kept of each document of a story of two or more (see [`text_bytes`]).
    pub text_bytes: usize,
}

/// The model of a report on `stories` of the documents of `collection`, with their `texts`.
pub fn model(
    collection: &Collection,
    stories: &Stories,
    texts: Texts,
    setting: &Setting,
) -> ReportModel {
    let config = setting.config;
    let comparer = Comparer::new(config);
    let keep = Keep {
        words: MAX_TEXT_WORDS,
        bytes: setting.text_bytes,
    };
    let mut documents = texts.documents;
    // Each story takes its members' texts out, so stories can be made in parallel.
    let owned: Vec<Vec<Option<Text>>> = (stories.clusters.iter())
        .map(|c| {
            (c.members.iter())
                .map(|&(doc, _)| documents[doc as usize].take())
                .collect()
        })
        .collect();
    drop(documents);
    let context = Context {
        collection,
        stories,
        comparer: &comparer,
        keep,
        with_time: setting.time_column.is_some(),
    };
    let made: Vec<Story> = (stories.clusters.par_iter().zip(owned).enumerate())
        .map(|(index, (cluster, texts))| {
            let id = match &stories.names {
                Some(names) => names[index].clone(),
                None => {
                    let smallest = cluster.members.iter().map(|m| m.0).min().unwrap_or(0);
                    collection.ids[smallest as usize].to_owned()
                }
            };
            Story {
                id,
                known_size: (stories.known_sizes.as_ref())
                    .map(|sizes| sizes[index])
                    .filter(|&size| size > cluster.members.len() as u64),
                members: members(cluster, texts, &context),
            }
        })
        .collect();
    let maker = &config.key_maker;
    let supershingles = maker.supershingles(&vec![0; config.signature.minima]);
    let mut columns: Vec<String> = setting.time_column.iter().cloned().collect();
    columns.extend(setting.columns.iter().cloned());
    ReportModel {
        inputs: (setting.inputs.iter())
            .map(|p| p.display().to_string())
            .collect(),
        source: stories.source.clone(),
        summary: summary(collection, &made),
        configuration: config.to_toml(),
        grouping: Grouping {
            shingle_size: config.shingle.size,
            minima: config.signature.minima,
            supershingles: supershingles.len(),
            megashingles: maker.megashingles(&supershingles).len(),
        },
        join_similarity: config.cluster.min_similarity,
        attach_similarity: config.cluster.attach_similarity,
        columns,
        stories: made,
    }
}

/// What making each story needs.
struct Context<'a> {
    collection: &'a Collection,
    stories: &'a Stories,
    comparer: &'a Comparer,
    keep: Keep,
    with_time: bool,
}

/// The members of one story, with their texts (taken in member order).
fn members(cluster: &Cluster, texts: Vec<Option<Text>>, context: &Context) -> Vec<Member> {
    let Context {
        collection,
        stories,
        comparer,
        keep,
        with_time,
    } = *context;
    let position: FxHashMap<u32, usize> = (cluster.members.iter().enumerate())
        .map(|(i, &(doc, _))| (doc, i))
        .collect();
    let canonicalizer = comparer.canonicalizer();
    // Each text prepared for comparison (when it can be) and shown.
    let prepared: Vec<(Option<Prepared>, Shown, Vec<String>)> = (texts.into_iter())
        .zip(&cluster.members)
        .map(|(text, &(doc, _))| {
            let Some(Text { body, columns }) = text else {
                return (None, Shown::default(), Vec::new());
            };
            match body {
                Body::Lead(shown) => (None, shown, columns),
                Body::Raw(raw) => {
                    let id = &collection.ids[doc as usize];
                    let visible = canonicalizer.visible_text(&raw);
                    let prepared = comparer.prepare_visible(&visible, id).ok();
                    let words = prepared.as_ref().map(Prepared::words);
                    let shown = Shown::of_visible(canonicalizer, &visible, words, keep);
                    (prepared, shown, columns)
                }
            }
        })
        .collect();
    let (representative, representative_shown, _) = &prepared[0];
    (cluster.members.iter().zip(&prepared).enumerate())
        .map(|(i, (&(doc, similarity), (own, shown, columns)))| {
            let pair = match (i, own, representative) {
                (0, _, _) => None,
                (_, Some(own), Some(representative)) => Some(pair(
                    comparer,
                    (own, shown),
                    (representative, representative_shown),
                )),
                _ => None,
            };
            let join = match (&stories.via, i) {
                (_, 0) => Join::Representative,
                (None, _) => Join::NotKnown,
                (Some(via), _) => match via[doc as usize] {
                    Some(v) => Join::Linked {
                        partner: position.get(&v.partner).copied().unwrap_or(0),
                        score: v.score,
                        weak: v.weak,
                        depth: v.depth,
                    },
                    None => Join::NotKnown,
                },
            };
            let mut values: Vec<String> = Vec::new();
            if with_time {
                let time = collection.times[doc as usize];
                values.push(time.map(format_time).unwrap_or_default());
            }
            values.extend(columns.iter().cloned());
            Member {
                id: collection.ids[doc as usize].to_owned(),
                similarity,
                too_short: !collection.sketches[doc as usize].is_comparable(),
                columns: values,
                join,
                lead: shown.lead().to_owned(),
                rest: shown.rest().to_owned(),
                cut: shown.is_cut(),
                pair,
            }
        })
        .collect()
}

/// A member compared with its representative.
fn pair(
    comparer: &Comparer,
    (member, member_shown): (&Prepared, &Shown),
    (representative, representative_shown): (&Prepared, &Shown),
) -> Pair {
    let c = comparer.compare(member, representative);
    let smaller = c.first_shingles.min(c.second_shingles).max(1);
    Pair {
        jaccard: c.jaccard,
        containment: c.common as f64 / smaller as f64,
        dice: c.dice,
        common: c.common,
        member_shingles: c.first_shingles,
        representative_shingles: c.second_shingles,
        estimated_jaccard: c.estimated_jaccard,
        shared_supershingles: c.shared_supershingles,
        shared_megashingles: c.shared_megashingles,
        member_lead_shared: c.first_lead_in_second,
        representative_lead_shared: c.second_lead_in_first,
        member_passages: member_shown.passages(&member.shared_runs(representative)),
        representative_passages: representative_shown.passages(&representative.shared_runs(member)),
    }
}

/// The summary of a report's stories.
fn summary(collection: &Collection, stories: &[Story]) -> Summary {
    let mut summary = Summary {
        documents: collection.ids.len(),
        stories: stories.len(),
        too_short: (collection.sketches.iter())
            .filter(|s| !s.is_comparable())
            .count(),
        skipped: collection.read.skipped + collection.duplicates,
        ..Summary::default()
    };
    for story in stories.iter().filter(|s| s.members.len() > 1) {
        summary.multi_stories += 1;
        summary.clustered_documents += story.members.len();
        for member in &story.members {
            if let Join::Linked { partner, weak, .. } = member.join {
                match (weak, partner) {
                    (true, _) => summary.weak += 1,
                    (false, 0) => summary.direct += 1,
                    (false, _) => summary.through += 1,
                }
            }
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::joined_via;
    use crate::{Clusterer, RunOptions};
    use std::ops::Range;

    /// A story of three (a text, a copy with a word changed, and its first half) and one
    /// document alone, clustered and made into a model keeping `text_bytes` of each text.
    fn model_of(text_bytes: usize) -> ReportModel {
        let words: Vec<String> = (0..120).map(|i| format!("w{i}")).collect();
        let mut changed = words.clone();
        changed[60] = "changed".into();
        let rows = [
            ("a", words.join(" "), "Herald"),
            ("b", changed.join(" "), "Courier"),
            ("c", words[..60].join(" "), "Post"),
            ("d", "something else entirely; said no one".into(), ""),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.csv");
        let mut csv = String::from("id,text,site\n");
        for (id, text, site) in rows {
            csv.push_str(&format!("{id},{text},{site}\n"));
        }
        std::fs::write(&path, csv).unwrap();
        let inputs = [path];
        let options = ReadOptions {
            columns: vec!["site".into()],
            ..ReadOptions::default()
        };
        let config = Config::default();
        let run = RunOptions {
            threads: 1,
            ..RunOptions::default()
        };
        let mut clusterer = Clusterer::with_options(&config, run).unwrap();
        clusterer.read(&inputs, &options).unwrap();
        let (collection, clustering) = clusterer.finish().unwrap().into_parts();
        let via = (collection.sets.as_ref().unwrap())
            .reading(0, |sets| {
                joined_via(
                    &clustering.clusters,
                    &clustering.links,
                    &collection.sketches,
                    sets,
                    &Plan::try_from(&config).unwrap(),
                )
            })
            .unwrap();
        let stories = Stories {
            clusters: clustering.clusters,
            names: None,
            known_sizes: None,
            via: Some(via),
            source: StorySource::Clustered,
        };
        let texts = read_texts(&inputs, &options, &collection, &stories.clusters, &config);
        let resolved = Plan::try_from(&config).unwrap();
        let setting = Setting {
            inputs: &inputs,
            config: &resolved,
            time_column: None,
            columns: vec!["site".into()],
            text_bytes,
        };
        model(&collection, &stories, texts.unwrap(), &setting)
    }

    #[test]
    fn members_are_compared_with_their_representative() {
        let model = model_of(1 << 20);
        assert_eq!(model.summary.documents, 4);
        assert_eq!((model.summary.stories, model.summary.multi_stories), (2, 1));
        let story = &model.stories[0];
        let ids: Vec<&str> = story.members.iter().map(|m| m.id.as_str()).collect();
        // The fullest text represents the story; the story is named after its smallest id.
        assert_eq!(ids[0], "a");
        assert_eq!(story.id, "a");
        assert_eq!(story.members[0].join, Join::Representative);
        assert_eq!(story.members[0].columns, ["Herald"]);
        let copy = story.members.iter().find(|m| m.id == "b").unwrap();
        let pair = copy.pair.as_ref().unwrap();
        // 120 words, 118 windows; the changed word takes 3 windows out of each text.
        assert_eq!((pair.common, pair.member_shingles), (115, 118));
        assert!((pair.jaccard - 115.0 / 121.0).abs() < 1e-9);
        // The passages are the words before and after the changed one.
        let from = |s: u32, e: u32| Range { start: s, end: e };
        assert_eq!(pair.member_passages, [from(0, 60), from(61, 120)]);
        assert_eq!(pair.representative_passages, [from(0, 60), from(61, 120)]);
        assert!(matches!(
            copy.join,
            Join::Linked {
                partner: 0,
                weak: false,
                depth: 1,
                ..
            }
        ));
        // The first half is contained in the whole.
        let half = story.members.iter().find(|m| m.id == "c").unwrap();
        assert!((half.pair.as_ref().unwrap().containment - 1.0).abs() < 1e-9);
        // Texts are whole: lead and rest give the text back.
        let representative = &story.members[0];
        let text = format!("{}{}", representative.lead, representative.rest);
        assert_eq!(text.split(' ').count(), 120);
        assert!(!representative.cut);
        // A document alone keeps its lead only.
        let alone = &model.stories[1].members[0];
        assert_eq!(alone.lead, "something else entirely; said no one");
        assert_eq!((alone.rest.as_str(), alone.pair.is_none()), ("", true));
        assert_eq!(alone.columns, [""]);
    }

    #[test]
    fn texts_are_cut_to_the_bytes_asked_for() {
        let model = model_of(100);
        let representative = &model.stories[0].members[0];
        assert!(representative.cut);
        let kept = representative.lead.len() + representative.rest.len();
        assert!((100..110).contains(&kept), "{kept}");
        // Passages past the kept words are left out.
        let copy = &model.stories[0].members[1];
        let kept_words = (copy.lead.clone() + &copy.rest).split(' ').count() as u32;
        let passages = &copy.pair.as_ref().unwrap().member_passages;
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].end, kept_words);
    }

    #[test]
    fn stdin_cannot_be_read_again() {
        let err = rereadable(&[PathBuf::from("a.csv"), PathBuf::from("-")]).unwrap_err();
        assert!(err.to_string().contains("stdin cannot be read twice"));
        assert!(rereadable(&[PathBuf::from("a.csv")]).is_ok());
    }
}
