//! `index remove`: retention. Documents older than a date (their own time when they have one,
//! else the time they were added) or named in a list leave every table in one transaction;
//! a story left empty goes too, and a story whose representative left gets its fullest
//! remaining member as representative.

use redb::ReadableTable;

use crate::index::error::Result;
use crate::index::schema::DocRecord;
use crate::index::store::{Store, Tables};

/// Which documents to remove.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Documents whose time (or, without one, whose added time) is before this, in seconds
    /// since 1970.
    pub before: Option<i64>,
    /// Documents with these ids.
    pub ids: Vec<String>,
}

/// What a removal did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Removal {
    /// Documents removed.
    pub removed: u64,
    /// Stories left empty and removed.
    pub stories_removed: u64,
    /// Ids in the list that the index does not hold.
    pub unknown_ids: Vec<String>,
    /// Documents left.
    pub documents: u64,
}

/// Removes the selected documents; nothing changes on an error.
pub fn remove(store: &mut Store, selection: &Selection) -> Result<Removal> {
    let path = store.path.clone();
    remove_selected(store, selection)
        .map_err(|e| e.doing_at(&path, "cannot write to the index, which is left as it was"))
}

/// The removal of [`remove`], its errors not yet given the index's path.
fn remove_selected(store: &mut Store, selection: &Selection) -> Result<Removal> {
    let mut removal = Removal::default();
    if store.is_new()? {
        removal.unknown_ids = selection.ids.clone();
        return Ok(removal);
    }
    let txn = store.writable()?.begin_write()?;
    {
        let mut t = Tables::open(&txn, false)?;
        let mut chosen: Vec<u32> = Vec::new();
        if let Some(before) = selection.before {
            for entry in t.docs.iter()? {
                let (number, bytes) = entry?;
                let record = DocRecord::decode(bytes.value())?;
                if record.time.unwrap_or(record.added_at) < before {
                    chosen.push(number.value());
                }
            }
        }
        let asked: Vec<&str> = selection.ids.iter().map(String::as_str).collect();
        for (id, indexed) in selection.ids.iter().zip(t.indexed(&asked)?) {
            match indexed {
                Some(number) => chosen.push(number),
                None => removal.unknown_ids.push(id.clone()),
            }
        }
        chosen.sort_unstable();
        chosen.dedup();
        let mut stories = Vec::new();
        for number in chosen {
            let record = t.remove_document(number)?;
            stories.push(record.story);
            removal.removed += 1;
        }
        stories.sort_unstable();
        stories.dedup();
        for story in stories {
            if t.stories.get(story)?.is_none() {
                removal.stories_removed += 1;
            } else {
                t.repair_representative(story)?;
            }
        }
        removal.documents = t.counter("documents")? - removal.removed;
        t.counters.insert("documents", removal.documents)?;
    }
    txn.commit()?;
    Ok(removal)
}
