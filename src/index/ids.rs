//! The ids of the index: which document number holds each id, so that an add refuses (or,
//! with `--upsert`, replaces) an id already indexed and `index remove --ids` finds its
//! documents. Each id is kept as a posting of its 32-bit hash, `(hash, number)`, in segments
//! of their own written, merged and looked up as the candidate keys' are
//! ([`crate::index::postings`]): an add writes its ids as one new segment, so a night costs
//! what it adds, where a B-tree keyed by the ids themselves had most of its leaves rewritten
//! by every night (ids are spread over the whole key space). A hash found is confirmed by the
//! id in the document's record, so two ids with one hash are never confused.
//!
//! Indexes of formats 1 to 4 kept the ids in a table of their own (`ids`, id → number): they
//! are read there until the next write moves them into postings ([`move_former_ids`]).

use redb::{ReadTransaction, ReadableTable, TableHandle, WriteTransaction};
use siphasher::sip::SipHasher13;

use crate::index::error::{Damage, IndexError, Result};
use crate::index::postings::{LookUp, Postings};
use crate::index::schema::{table, DocRecord, DOCS, FORMER_IDS, ID_CHUNKS, ID_DEAD, ID_SEGMENTS};

/// The keys of the hash of an id: fixed, as the hashes are kept on disk.
const ID_HASH_KEYS: (u64, u64) = (0x6d65_6761_7368_696e, 0x676c_652d_6964_7321);

/// The posting key of an id: the low 32 bits of its SipHash-1-3.
pub(crate) fn id_key(id: &str) -> u32 {
    SipHasher13::new_with_keys(ID_HASH_KEYS.0, ID_HASH_KEYS.1).hash(id.as_bytes()) as u32
}

/// The id pairs of documents numbered from `first` on in the order of `ids`, sorted as a
/// segment is written.
pub(crate) fn id_pairs<'a>(first: u32, ids: impl Iterator<Item = &'a str>) -> Vec<(u32, u32)> {
    let mut pairs: Vec<(u32, u32)> = (first..).zip(ids).map(|(n, id)| (id_key(id), n)).collect();
    pairs.sort_unstable();
    pairs
}

/// For each of `ids`, the number of the indexed document that has it, if any, read from the
/// ids' postings (`segments`, `dead`, `chunks`) and confirmed in `docs`.
pub(crate) fn indexed<S, D, C, R>(
    segments: &S,
    dead: &D,
    chunks: &C,
    docs: &R,
    ids: &[&str],
) -> Result<Vec<Option<u32>>>
where
    S: ReadableTable<u32, &'static [u8]>,
    D: ReadableTable<u32, ()>,
    C: ReadableTable<(u32, u32), &'static [u8]> + Sync,
    R: ReadableTable<u32, &'static [u8]>,
{
    let look_up = LookUp::read(segments, dead)?;
    if look_up.is_empty() || ids.is_empty() {
        return Ok(vec![None; ids.len()]);
    }
    let hashes: Vec<u32> = ids.iter().map(|id| id_key(id)).collect();
    let mut keys = hashes.clone();
    keys.sort_unstable();
    keys.dedup();
    // Every document with the hash of one of the ids, sorted by hash.
    let found = look_up.find(chunks, &keys, usize::MAX)?;
    let mut numbers = Vec::with_capacity(ids.len());
    for (id, hash) in ids.iter().zip(hashes) {
        let from = found.partition_point(|p| p.0 < hash);
        let mut holder = None;
        for &(_, number) in found[from..].iter().take_while(|p| p.0 == hash) {
            let bytes = docs
                .get(number)?
                .ok_or(IndexError::damaged(Damage::LostDocument { number }))?;
            if DocRecord::decode(bytes.value())?.id == *id {
                holder = Some(number);
                break;
            }
        }
        numbers.push(holder);
    }
    Ok(numbers)
}

/// [`indexed`] in a read transaction, of an index of any format (the `ids` table of formats 1
/// to 4 is read where a write has not moved it yet).
pub(crate) fn indexed_in(txn: &ReadTransaction, ids: &[&str]) -> Result<Vec<Option<u32>>> {
    if let Some(former) = table(txn, FORMER_IDS)? {
        return ids
            .iter()
            .map(|&id| Ok(former.get(id)?.map(|n| n.value())))
            .collect();
    }
    let (Some(segments), Some(dead), Some(chunks), Some(docs)) = (
        table(txn, ID_SEGMENTS)?,
        table(txn, ID_DEAD)?,
        table(txn, ID_CHUNKS)?,
        table(txn, DOCS)?,
    ) else {
        return Ok(vec![None; ids.len()]);
    };
    indexed(&segments, &dead, &chunks, &docs, ids)
}

/// Moves the ids of an index of formats 1 to 4 from their table into the ids' postings
/// `into` (one segment), and deletes the table; nothing to do when there is none. Returns
/// how many ids were moved.
pub(crate) fn move_former_ids(txn: &WriteTransaction, into: &mut Postings) -> Result<u64> {
    if !txn.list_tables()?.any(|t| t.name() == FORMER_IDS.name()) {
        return Ok(0);
    }
    let mut pairs = {
        let former = txn.open_table(FORMER_IDS)?;
        former
            .iter()?
            .map(|entry| {
                let (id, number) = entry?;
                Ok((id_key(id.value()), number.value()))
            })
            .collect::<Result<Vec<(u32, u32)>>>()?
    };
    txn.delete_table(FORMER_IDS)?;
    pairs.sort_unstable();
    let moved = pairs.len() as u64;
    if let Some(base) = pairs.iter().map(|p| p.1).min() {
        into.add_segment_from(base, pairs.into_iter())?;
    }
    Ok(moved)
}

/// The ids' postings of a write transaction.
pub(crate) fn open(txn: &WriteTransaction) -> Result<Postings<'_>> {
    Ok(Postings {
        segments: txn.open_table(ID_SEGMENTS)?,
        chunks: txn.open_table(ID_CHUNKS)?,
        dead: txn.open_table(ID_DEAD)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_keeps_its_key_across_releases() {
        // The keys are on disk: a change of hash would lose every indexed id.
        assert_eq!(id_key("doc-97db1631"), 205_689_038);
        assert_ne!(id_key("doc-1"), id_key("doc-2"));
    }

    #[test]
    fn id_pairs_are_sorted_by_hash_with_their_numbers() {
        let ids = ["b", "a", "c"];
        let pairs = id_pairs(10, ids.iter().copied());
        assert!(pairs.is_sorted());
        for (n, id) in (10..).zip(ids) {
            assert!(pairs.contains(&(id_key(id), n)), "{id}");
        }
    }

    /// An in-memory database with documents `ids` numbered from 0 and their id postings.
    fn with_ids(
        ids: &[&str],
        test: impl FnOnce(&WriteTransaction, &redb::Table<u32, &'static [u8]>, &mut Postings),
    ) {
        let file = tempfile::NamedTempFile::new().unwrap();
        let db = redb::Database::create(file.path()).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut docs = txn.open_table(DOCS).unwrap();
            for (n, id) in (0..).zip(ids) {
                let record = DocRecord {
                    id: id.to_string(),
                    story: n,
                    added_at: 0,
                    time: None,
                    words: 0,
                    shingles: 0,
                    signature: Vec::new(),
                };
                docs.insert(n, record.encode().as_slice()).unwrap();
            }
            let mut postings = open(&txn).unwrap();
            test(&txn, &docs, &mut postings);
        }
        txn.abort().unwrap();
    }

    #[test]
    fn indexed_ids_are_found_and_others_are_not() {
        let ids: Vec<String> = (0..1000).map(|i| format!("doc-{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        with_ids(&ids, |_, docs, postings| {
            postings
                .add_segment(&id_pairs(0, ids[..600].iter().copied()))
                .unwrap();
            postings
                .add_segment(&id_pairs(600, ids[600..].iter().copied()))
                .unwrap();
            postings.dead.insert(7, ()).unwrap();
            let asked = ["doc-5", "doc-7", "doc-999", "doc-1000", "doc-650", "nope"];
            let found = indexed(
                &postings.segments,
                &postings.dead,
                &postings.chunks,
                docs,
                &asked,
            )
            .unwrap();
            assert_eq!(found, [Some(5), None, Some(999), None, Some(650), None]);
        });
    }

    #[test]
    fn a_hash_shared_with_an_indexed_id_is_not_that_id() {
        with_ids(&["doc-1"], |_, docs, postings| {
            // Document 0 posted under the key of another id, as two ids with one hash would.
            postings.add_segment(&[(id_key("other"), 0)]).unwrap();
            let found = indexed(
                &postings.segments,
                &postings.dead,
                &postings.chunks,
                docs,
                &["other"],
            )
            .unwrap();
            assert_eq!(found, [None]);
        });
    }

    #[test]
    fn former_ids_move_into_postings_and_their_table_goes() {
        let ids = ["x-1", "x-2", "x-3"];
        with_ids(&ids, |txn, docs, postings| {
            {
                let mut former = txn.open_table(FORMER_IDS).unwrap();
                for (n, id) in (0..).zip(ids) {
                    former.insert(id, n).unwrap();
                }
            }
            assert_eq!(move_former_ids(txn, postings).unwrap(), 3);
            assert!(!txn.list_tables().unwrap().any(|t| t.name() == "ids"));
            assert_eq!(move_former_ids(txn, postings).unwrap(), 0);
            let found = indexed(
                &postings.segments,
                &postings.dead,
                &postings.chunks,
                docs,
                &["x-3", "x-1", "x-4"],
            )
            .unwrap();
            assert_eq!(found, [Some(2), Some(0), None]);
        });
    }
}
