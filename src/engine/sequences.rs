//! The documents' main texts as reuse keeps them (each one's shingle keys in text order, see
//! [`crate::reuse::Text`]), held for an index that keeps passages between reading and the
//! add's passages phase. Reading workers store each batch's keys as one block of a
//! [`SetStore`] whose budget is nothing, so every block goes to its unlinked temporary file
//! at once: a night holds no memory for its texts while it sketches and clusters, and reads
//! them back a chunk of documents at a time.

use std::io;
use std::ops::Range;

use crate::corpus::set_store::{Place, SetStore};
use crate::reuse::Text;

/// Where a document's keys are, and what else its [`Text`] holds.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SequencePlace {
    /// Its keys' block, start and length in the store.
    pub place: Place,
    /// Canonical words of the text.
    pub words: u32,
    /// Its shingle size.
    pub k: u8,
}

impl SequencePlace {
    /// The place of `text`, whose keys start at `start` of the block to come.
    pub fn of(text: &Text, start: usize) -> SequencePlace {
        SequencePlace {
            place: Place {
                block: 0,
                start: start as u32,
                len: text.keys.len() as u32,
                second: 0,
            },
            words: text.words,
            k: text.k,
        }
    }
}

/// Every document's text as reuse keeps it, by document number, on file.
#[derive(Debug)]
pub struct Sequences {
    keys: SetStore,
    /// Each document's words and shingle size, by document number.
    shapes: Vec<(u32, u8)>,
}

impl Default for Sequences {
    fn default() -> Self {
        Sequences::store()
    }
}

impl Sequences {
    /// The store the reading workers fill, a block a batch ([`SetStore::push_block`]): on
    /// file from its first key.
    pub(crate) fn store() -> Sequences {
        Sequences {
            keys: SetStore::new(0),
            shapes: Vec::new(),
        }
    }

    /// Stores one batch's keys as a block; returns its number.
    pub(crate) fn push_block(&mut self, keys: Vec<u32>) -> io::Result<u32> {
        self.keys.push_block(keys)
    }

    /// Gives each document its place, by document number, once documents are in id order.
    pub(crate) fn set_places(&mut self, places: Vec<SequencePlace>) {
        self.shapes = places.iter().map(|p| (p.words, p.k)).collect();
        self.keys
            .set_places(places.into_iter().map(|p| p.place).collect());
    }

    /// Number of documents.
    pub fn len(&self) -> usize {
        self.shapes.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.shapes.is_empty()
    }

    /// The texts of documents `docs`, read from the file.
    pub fn texts(&self, docs: Range<u32>) -> io::Result<Vec<Text>> {
        let mut buffer = Vec::new();
        let texts = docs
            .map(|doc| {
                let (words, k) = self.shapes[doc as usize];
                let keys = self.keys.set(doc, &mut buffer).into();
                Text { words, k, keys }
            })
            .collect();
        match self.keys.take_failure() {
            Some(failure) => Err(failure),
            None => Ok(texts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_come_back_by_document_number_from_the_file() {
        let text = |words: u32, keys: &[u32]| Text {
            words,
            k: 3,
            keys: keys.into(),
        };
        let batches = [
            vec![text(5, &[9, 8, 7]), text(2, &[])],
            vec![text(6, &[1, 2, 1, 4])],
        ];
        let mut sequences = Sequences::store();
        let mut places = Vec::new();
        for batch in &batches {
            let mut keys = Vec::new();
            let mut made: Vec<SequencePlace> = batch
                .iter()
                .map(|t| {
                    let place = SequencePlace::of(t, keys.len());
                    keys.extend_from_slice(&t.keys);
                    place
                })
                .collect();
            let block = sequences.push_block(keys).unwrap();
            made.iter_mut().for_each(|p| p.place.block = block);
            places.extend(made);
        }
        // Document numbers in another order than reading's, as ordering by id gives them.
        places.swap(0, 2);
        sequences.set_places(places);
        assert!(sequences.keys.spilled());
        let texts = sequences.texts(0..3).unwrap();
        let got: Vec<(u32, &[u32])> = texts.iter().map(|t| (t.words, &t.keys[..])).collect();
        assert_eq!(
            got,
            [(6, &[1, 2, 1, 4][..]), (2, &[][..]), (5, &[9, 8, 7][..])]
        );
        assert_eq!(sequences.texts(1..2).unwrap()[0].k, 3);
    }
}
