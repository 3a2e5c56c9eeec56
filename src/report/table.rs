//! Stories made elsewhere, over a collection's documents: a clusters table (the CSV of
//! `cluster`, with `doc_id` and `cluster_id`, or of `index export`, with `doc_id` and
//! `story_id`) or the rows of an index. Each document of the collection must be in one story;
//! rows of documents that are not in the collection (other nights of an index, other inputs)
//! are left out. Stories are then ordered as `cluster` orders its own.

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::cluster::clusters_of;
use crate::engine::Ids;
use crate::report::build::Stories;
use crate::report::model::StorySource;
use crate::sketch::Sketch;

/// One row of a table: a document, its story, and the story's size when the table gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The document.
    pub doc_id: String,
    /// Its story.
    pub story: String,
    /// The story's size in the table.
    pub size: Option<u64>,
    /// Where the row is, for messages: `FILE:LINE`.
    pub place: String,
}

/// A table that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TableError {
    /// The file cannot be read.
    #[error("{path}: cannot read the clusters table: {reason}")]
    Read {
        /// The table.
        path: String,
        /// Why.
        reason: String,
    },
    /// A column is missing.
    #[error("{path}: not a clusters table: it needs the columns doc_id and cluster_id (from `cluster`) or story_id (from `index export`); columns found: {found}")]
    Columns {
        /// The table.
        path: String,
        /// The header.
        found: String,
    },
    /// A document is in two rows.
    #[error("{place}: document {doc_id:?} is already in the table at {first}; each document belongs to one story")]
    Twice {
        /// The second row.
        place: String,
        /// The document.
        doc_id: String,
        /// The first row.
        first: String,
    },
    /// Documents of the collection are in no story.
    #[error("{count} of the inputs' documents are not in {table}, such as {example:?}; {advice}")]
    Missing {
        /// How many.
        count: usize,
        /// The first by id.
        example: String,
        /// The table or index.
        table: String,
        /// What to do.
        advice: String,
    },
}

/// Reads the rows of a clusters table.
pub fn read_table(path: &Path) -> Result<Vec<Row>, TableError> {
    let name = path.display().to_string();
    let unreadable = |reason: String| TableError::Read {
        path: name.clone(),
        reason,
    };
    let mut reader = csv::Reader::from_path(path).map_err(|e| unreadable(e.to_string()))?;
    let header: Vec<String> = (reader.headers().map_err(|e| unreadable(e.to_string()))?)
        .iter()
        .map(|h| h.trim_start_matches('\u{FEFF}').trim().to_owned())
        .collect();
    let at = |wanted: &str| header.iter().position(|h| h == wanted);
    let (Some(doc_at), Some(story_at)) = (at("doc_id"), at("cluster_id").or(at("story_id"))) else {
        return Err(TableError::Columns {
            path: name.clone(),
            found: header.join(", "),
        });
    };
    let size_at = at("cluster_size").or(at("story_size"));
    let mut rows = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| unreadable(e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |at: usize| record.get(at).unwrap_or("").to_owned();
        rows.push(Row {
            doc_id: field(doc_at),
            story: field(story_at),
            size: size_at.and_then(|at| field(at).trim().parse().ok()),
            place: format!("{name}:{line}"),
        });
    }
    Ok(rows)
}

/// The stories of `rows` over the documents `ids` (sorted, as a collection holds them),
/// ordered with `sketches`. `table` names the table in messages and `advice` says what to
/// do when documents are missing from it.
pub fn stories(
    rows: Vec<Row>,
    ids: &Ids,
    sketches: &[Sketch],
    source: StorySource,
    (table, advice): (&str, &str),
) -> Result<Stories, TableError> {
    let mut story_of: Vec<Option<u32>> = vec![None; ids.len()];
    let mut first_place: FxHashMap<u32, String> = FxHashMap::default();
    let mut numbers: FxHashMap<String, u32> = FxHashMap::default();
    let mut names: Vec<String> = Vec::new();
    let mut sizes: Vec<Option<u64>> = Vec::new();
    for row in rows {
        let Ok(doc) = ids.binary_search(&row.doc_id) else {
            continue;
        };
        if let Some(first) = first_place.get(&(doc as u32)) {
            return Err(TableError::Twice {
                place: row.place,
                doc_id: row.doc_id,
                first: first.clone(),
            });
        }
        let next = names.len() as u32;
        let story = *numbers.entry(row.story.clone()).or_insert(next);
        if story == next {
            names.push(row.story);
            sizes.push(row.size);
        }
        story_of[doc] = Some(story);
        first_place.insert(doc as u32, row.place);
    }
    let missing: Vec<usize> = (0..ids.len()).filter(|&d| story_of[d].is_none()).collect();
    if let Some(&first) = missing.first() {
        return Err(TableError::Missing {
            count: missing.len(),
            example: ids[first].to_owned(),
            table: table.to_owned(),
            advice: advice.to_owned(),
        });
    }
    let mut sets: Vec<Vec<u32>> = vec![Vec::new(); names.len()];
    for (doc, story) in story_of.iter().enumerate() {
        sets[story.expect("checked above") as usize].push(doc as u32);
    }
    let clusters = clusters_of(sets, sketches);
    // Each cluster's story, found by its first member.
    let (named, known_sizes) = clusters
        .iter()
        .map(|c| {
            let story = story_of[c.members[0].0 as usize].expect("checked above") as usize;
            (names[story].clone(), sizes[story].unwrap_or(0))
        })
        .unzip();
    Ok(Stories {
        clusters,
        names: Some(named),
        known_sizes: Some(known_sizes),
        via: None,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(shingles: u32) -> Sketch {
        Sketch {
            words: shingles + 2,
            shingles,
            signature: vec![1; 84].into(),
            ..Sketch::default()
        }
    }

    fn row(doc_id: &str, story: &str, line: usize) -> Row {
        Row {
            doc_id: doc_id.into(),
            story: story.into(),
            size: Some(9),
            place: format!("t.csv:{line}"),
        }
    }

    #[test]
    fn rows_become_stories_ordered_as_cluster_orders_them() {
        let ids: Ids = ["a", "b", "c", "d"].into_iter().collect();
        let sketches = [sketch(10), sketch(30), sketch(20), sketch(5)];
        let rows = vec![
            row("a", "s1", 2),
            row("zz-other-night", "s9", 3),
            row("d", "s2", 4),
            row("b", "s1", 5),
            row("c", "s1", 6),
        ];
        let source = StorySource::Table("t.csv".into());
        let stories = stories(rows, &ids, &sketches, source, ("t.csv", "")).unwrap();
        let members: Vec<Vec<u32>> = (stories.clusters.iter())
            .map(|c| c.members.iter().map(|m| m.0).collect())
            .collect();
        // The fullest member represents its story; the larger story comes first.
        assert_eq!(members, [vec![1, 0, 2], vec![3]]);
        assert_eq!(stories.names.unwrap(), ["s1", "s2"]);
        assert_eq!(stories.known_sizes.unwrap(), [9, 9]);
    }

    #[test]
    fn a_document_twice_or_missing_is_an_error() {
        let ids: Ids = ["a", "b"].into_iter().collect();
        let sketches = [sketch(10), sketch(10)];
        let source = || StorySource::Table("t.csv".into());
        let twice = vec![row("a", "s1", 2), row("a", "s2", 3), row("b", "s1", 4)];
        let err = stories(twice, &ids, &sketches, source(), ("t.csv", "")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:3: document \"a\" is already in the table at t.csv:2; each document belongs to one story"
        );
        let missing = vec![row("a", "s1", 2)];
        let advice = ("t.csv", "give the table made from these inputs");
        let err = stories(missing, &ids, &sketches, source(), advice).unwrap_err();
        assert_eq!(
            err.to_string(),
            "1 of the inputs' documents are not in t.csv, such as \"b\"; give the table made from these inputs"
        );
    }

    #[test]
    fn a_table_without_the_columns_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "id,cluster\na,1\n").unwrap();
        let err = read_table(&path).unwrap_err().to_string();
        assert!(err.ends_with("columns found: id, cluster"), "{err}");
        std::fs::write(&path, "\u{FEFF}doc_id,story_id,story_size\na,s1,3\n").unwrap();
        let rows = read_table(&path).unwrap();
        assert_eq!(rows[0].story, "s1");
        assert_eq!(rows[0].size, Some(3));
        assert!(rows[0].place.ends_with("t.csv:2"), "{}", rows[0].place);
    }
}
