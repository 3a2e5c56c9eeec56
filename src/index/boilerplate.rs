//! The boilerplate an index knows: the shingles its adds found to be boilerplate, which every
//! later add and query leaves out of its sketches as the add that found them did.
//!
//! They are stored in blocks by their top 16 bits: block `k` holds the low 16 bits of each
//! boilerplate shingle `k << 16 | low`, sorted, two bytes each, so an add reads all of them as
//! at most 65,536 entries (5.8 million shingles of ten million documents take 11 MB), and a
//! query reads the block of each of its shingles. Indexes of format 1 kept one entry a
//! shingle in the table `boilerplate`: they are read as they are, and their next add moves
//! those shingles into blocks (the index is then of format 2).

use redb::{
    ReadOnlyTable, ReadTransaction, ReadableTable, ReadableTableMetadata, TableHandle,
    WriteTransaction,
};

use crate::index::error::Result;
use crate::index::schema::{
    decode_block, encode_block, table, BLOCKS, FORMAT_1_ENTRIES, PASSAGE_BLOCKS,
};

/// The boilerplate of an index as one read transaction sees it, for look-ups one shingle at a
/// time.
pub(crate) struct KnownBoilerplate {
    blocks: Option<ReadOnlyTable<u16, &'static [u8]>>,
    entries: Option<ReadOnlyTable<u32, ()>>,
}

impl KnownBoilerplate {
    /// The boilerplate as `txn` sees it.
    pub fn open(txn: &ReadTransaction) -> Result<KnownBoilerplate> {
        Ok(KnownBoilerplate {
            blocks: table(txn, BLOCKS)?,
            entries: table(txn, FORMAT_1_ENTRIES)?,
        })
    }

    /// The boilerplate of the passages as `txn` sees it (see [`add_passage_boilerplate`]).
    pub fn open_passages(txn: &ReadTransaction) -> Result<KnownBoilerplate> {
        Ok(KnownBoilerplate {
            blocks: table(txn, PASSAGE_BLOCKS)?,
            entries: None,
        })
    }

    /// Every boilerplate shingle, sorted.
    pub fn all(&self) -> Result<Vec<u32>> {
        let mut shingles = Vec::new();
        if let Some(blocks) = &self.blocks {
            for entry in blocks.iter()? {
                let (top, block) = entry?;
                shingles.extend(decode_block(top.value(), block.value())?);
            }
        }
        if let Some(entries) = &self.entries {
            let sorted = shingles.len();
            for entry in entries.iter()? {
                shingles.push(entry?.0.value());
            }
            if sorted > 0 && sorted < shingles.len() {
                shingles.sort_unstable();
                shingles.dedup();
            }
        }
        Ok(shingles)
    }

    /// True when `shingle` is boilerplate.
    pub fn contains(&self, shingle: u32) -> Result<bool> {
        if let Some(blocks) = &self.blocks {
            let top = (shingle >> 16) as u16;
            if let Some(block) = blocks.get(top)? {
                // A block holds about a hundred shingles: checked and scanned whole.
                if decode_block(top, block.value())?.any(|s| s == shingle) {
                    return Ok(true);
                }
            }
        }
        match &self.entries {
            Some(entries) => Ok(entries.get(shingle)?.is_some()),
            None => Ok(false),
        }
    }

    /// The number of boilerplate shingles.
    pub fn len(&self) -> Result<u64> {
        let mut len = 0;
        if let Some(blocks) = &self.blocks {
            for entry in blocks.iter()? {
                len += entry?.1.value().len() as u64 / 2;
            }
        }
        if let Some(entries) = &self.entries {
            len += entries.len()?;
        }
        Ok(len)
    }
}

/// Adds `found` (sorted, distinct, none of them known) to the index's boilerplate in `txn`,
/// and moves the shingles of a format 1 index into blocks.
pub(crate) fn add(txn: &WriteTransaction, found: &[u32]) -> Result<()> {
    debug_assert!(found.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
    let mut moved = Vec::new();
    // (Opening a table for writing would make it: the list says whether it is there.)
    if txn
        .list_tables()?
        .any(|t| t.name() == FORMAT_1_ENTRIES.name())
    {
        let entries = txn.open_table(FORMAT_1_ENTRIES)?;
        for entry in entries.iter()? {
            moved.push(entry?.0.value());
        }
        drop(entries);
        txn.delete_table(FORMAT_1_ENTRIES)?;
    }
    let shingles = if moved.is_empty() {
        found.to_vec()
    } else {
        moved.extend_from_slice(found);
        moved.sort_unstable();
        moved.dedup();
        moved
    };
    add_to_blocks(txn, BLOCKS, &shingles)
}

/// Adds `found` (sorted, distinct) to the boilerplate of the passages in `txn`: the shingles
/// of the documents' main texts found in `boilerplate.min-documents` documents of an add, as
/// `reuse` finds them in a batch, kept in blocks as the index's own boilerplate is.
pub(crate) fn add_passage_boilerplate(txn: &WriteTransaction, found: &[u32]) -> Result<()> {
    add_to_blocks(txn, PASSAGE_BLOCKS, found)
}

/// Adds `shingles` (sorted, distinct) to the blocks of table `blocks`.
fn add_to_blocks(
    txn: &WriteTransaction,
    blocks: redb::TableDefinition<u16, &[u8]>,
    shingles: &[u32],
) -> Result<()> {
    let mut blocks = txn.open_table(blocks)?;
    for group in shingles.chunk_by(|a, b| a >> 16 == b >> 16) {
        let top = (group[0] >> 16) as u16;
        let mut merged: Vec<u32> = match blocks.get(top)? {
            Some(block) => decode_block(top, block.value())?.collect(),
            None => Vec::new(),
        };
        merged.extend_from_slice(group);
        merged.sort_unstable();
        merged.dedup();
        blocks.insert(top, encode_block(merged.into_iter()).as_slice())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::ReadableDatabase;

    /// A database in a temporary directory, kept alive with it.
    fn database() -> (tempfile::TempDir, redb::Database) {
        let dir = tempfile::tempdir().unwrap();
        let db = redb::Database::create(dir.path().join("index.db")).unwrap();
        (dir, db)
    }

    fn add_all(db: &redb::Database, found: &[u32]) {
        let txn = db.begin_write().unwrap();
        add(&txn, found).unwrap();
        txn.commit().unwrap();
    }

    fn known(db: &redb::Database) -> KnownBoilerplate {
        KnownBoilerplate::open(&db.begin_read().unwrap()).unwrap()
    }

    #[test]
    fn blocks_hold_every_shingle_added_across_adds() {
        let (_dir, db) = database();
        let first = [3, 0x0001_0000, 0x0001_ffff, 0xffff_0000, u32::MAX];
        let second = [0, 4, 0x0001_8000, 0x7fff_1234];
        add_all(&db, &first);
        add_all(&db, &second);
        let mut union: Vec<u32> = first.iter().chain(&second).copied().collect();
        union.sort_unstable();
        let txn = db.begin_read().unwrap();
        assert!(table(&txn, FORMAT_1_ENTRIES).unwrap().is_none(), "not made");
        let boilerplate = KnownBoilerplate::open(&txn).unwrap();
        assert_eq!(boilerplate.all().unwrap(), union);
        assert_eq!(boilerplate.len().unwrap(), union.len() as u64);
        for &s in &union {
            assert!(boilerplate.contains(s).unwrap(), "{s:#x}");
        }
        for s in [1, 2, 5, 0x0001_0001, 0x0002_0000, 0xfffe_ffff, 0x7fff_1235] {
            assert!(!boilerplate.contains(s).unwrap(), "{s:#x}");
        }
    }

    #[test]
    fn format_1_entries_are_read_and_moved_into_blocks_by_the_next_add() {
        let (_dir, db) = database();
        let old = [7, 0x0005_0001, 0x0005_0002, 0xabcd_ef01];
        {
            let txn = db.begin_write().unwrap();
            let mut entries = txn.open_table(FORMAT_1_ENTRIES).unwrap();
            for s in old {
                entries.insert(s, ()).unwrap();
            }
            drop(entries);
            txn.commit().unwrap();
        }
        let boilerplate = known(&db);
        assert_eq!(boilerplate.all().unwrap(), old);
        assert!(boilerplate.contains(0x0005_0002).unwrap());
        assert!(!boilerplate.contains(0x0005_0003).unwrap());
        drop(boilerplate);

        add_all(&db, &[8, 0x0005_0000]);
        let txn = db.begin_read().unwrap();
        assert!(table(&txn, FORMAT_1_ENTRIES).unwrap().is_none());
        let boilerplate = KnownBoilerplate::open(&txn).unwrap();
        assert_eq!(
            boilerplate.all().unwrap(),
            [7, 8, 0x0005_0000, 0x0005_0001, 0x0005_0002, 0xabcd_ef01]
        );
        assert_eq!(boilerplate.len().unwrap(), 6);
    }

    #[test]
    fn a_damaged_block_is_an_error_that_says_to_restore_the_index() {
        let (_dir, db) = database();
        for damaged in [&[1u8, 0, 2][..], &[2, 0, 1, 0][..]] {
            let txn = db.begin_write().unwrap();
            txn.open_table(BLOCKS).unwrap().insert(9, damaged).unwrap();
            txn.commit().unwrap();
            let error = known(&db).all().unwrap_err().to_string();
            assert_eq!(
                error,
                "the index's boilerplate block 9 is damaged; restore the index from a copy"
            );
        }
        let error = known(&db).contains(9 << 16).unwrap_err().to_string();
        assert!(error.contains("block 9 is damaged"), "{error}");
    }
}
