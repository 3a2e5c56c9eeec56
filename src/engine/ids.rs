//! A collection's document ids, held compactly: every id's bytes one after another in one
//! string, and where each ends. A `Vec<String>` takes a 24-byte header and a heap block of its
//! own for each id (about 56 bytes for a 12-byte id); here the same id takes its 12 bytes and
//! an 8-byte end. Ids are looked up by document number, iterated in order and, when sorted (as
//! a [`crate::engine::Collection`] holds them), found by binary search.

use std::ops::Index;

/// Document ids by number, in one buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ids {
    /// Every id's bytes, one after another.
    bytes: String,
    /// Where each id ends in `bytes`.
    ends: Vec<u64>,
}

impl Ids {
    /// No ids, with room for `ids` of them in `bytes` bytes.
    pub fn with_capacity(ids: usize, bytes: usize) -> Ids {
        Ids {
            bytes: String::with_capacity(bytes),
            ends: Vec::with_capacity(ids),
        }
    }

    /// Adds an id as the next document's.
    pub fn push(&mut self, id: &str) {
        self.bytes.push_str(id);
        self.ends.push(self.bytes.len() as u64);
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The id of document `doc`, if there is one.
    pub fn get(&self, doc: usize) -> Option<&str> {
        let end = *self.ends.get(doc)? as usize;
        let start = match doc {
            0 => 0,
            _ => self.ends[doc - 1] as usize,
        };
        Some(&self.bytes[start..end])
    }

    /// The ids in document order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + DoubleEndedIterator + '_ {
        (0..self.len()).map(move |doc| &self[doc])
    }

    /// The document of `id` among sorted ids (`Ok`), or where it would go (`Err`).
    pub fn binary_search(&self, id: &str) -> Result<usize, usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            match self[middle].cmp(id) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Ok(middle),
            }
        }
        Err(low)
    }
}

impl Index<usize> for Ids {
    type Output = str;

    fn index(&self, doc: usize) -> &str {
        match self.get(doc) {
            Some(id) => id,
            None => panic!("document {doc} of {} ids", self.len()),
        }
    }
}

impl<S: AsRef<str>> FromIterator<S> for Ids {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Ids {
        let mut ids = Ids::default();
        for id in iter {
            ids.push(id.as_ref());
        }
        ids
    }
}

impl<'a> IntoIterator for &'a Ids {
    type Item = &'a str;
    type IntoIter = Box<dyn Iterator<Item = &'a str> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_by_number_and_by_search() {
        let ids: Ids = ["a", "bb", "", "d"].into_iter().collect();
        assert_eq!(ids.len(), 4);
        assert_eq!((&ids[0], &ids[1], &ids[2], &ids[3]), ("a", "bb", "", "d"));
        assert_eq!(ids.get(4), None);
        assert_eq!(ids.iter().collect::<Vec<_>>(), ["a", "bb", "", "d"]);
        let sorted: Ids = ["a", "c", "e"].into_iter().collect();
        assert_eq!(sorted.binary_search("c"), Ok(1));
        assert_eq!(sorted.binary_search("d"), Err(2));
        assert_eq!(sorted.binary_search(""), Err(0));
        assert!(Ids::default().is_empty());
    }
}
