//! The packed forms of a text's shingle sets and of a document's sketch: one binary value per
//! document, little-endian `u32` words after a leading tag that names the form and its version.
//! A job that moves sketches between processes (the Spark job keeps them in binary columns)
//! packs and unpacks them here; a value of another form or of a version this library does not
//! read is refused with an error that says so, never read as something else.
//!
//! Shingle sets (`MSs1`): the tag, words, the lengths of the lead, of the main set and of the
//! page set (`u32::MAX` when there is none), then the lead, the main set and the page set.
//!
//! Sketch (`MSk1`): the tag, words, flags (1: comparable), the counts of minima, of the shingle
//! set, of the set's shingles stored here and of lead keys, then the minima, the stored
//! shingles and the lead. A sketch for estimated verification may leave its set out (stored
//! count 0) and keep its size.

use crate::sketch::shingle::Lead;
use crate::sketch::{ShingleSets, TextOutline};
use crate::{DocumentSketch, Status};

/// The tag of packed shingle sets, version 1.
pub(crate) const SETS_TAG: u32 = u32::from_le_bytes(*b"MSs1");
/// The tag of a packed sketch, version 1.
pub(crate) const SKETCH_TAG: u32 = u32::from_le_bytes(*b"MSk1");

/// Words before the lists in packed shingle sets (the tag included).
const SETS_HEAD: usize = 5;
/// Words before the lists in a packed sketch (the tag included).
const SKETCH_HEAD: usize = 7;

/// A packed value that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    /// The value is shorter than its head says, or not whole words.
    #[error("{what} is cut short or malformed")]
    Malformed {
        /// "a value of packed shingle sets" or "a packed sketch".
        what: &'static str,
    },
    /// The value's tag names another form or a version this library does not read.
    #[error(
        "{what} has the tag {tag}, not {expected}: it was packed by another version of \
         megashingle or is not such a value; pack and unpack with one version"
    )]
    UnknownVersion {
        /// "a value of packed shingle sets" or "a packed sketch".
        what: &'static str,
        /// The tag found: its four characters in quotes where they are printable, else a
        /// number.
        tag: String,
        /// The tag this library reads.
        expected: String,
    },
}

/// What a value is called in errors.
const SETS: &str = "a value of packed shingle sets";
const SKETCH: &str = "a packed sketch";

/// A text's shingle sets packed (see the module's description), appended to `out`.
pub fn pack_sets(sets: &ShingleSets, out: &mut Vec<u8>) {
    let lead = sets.outline.lead.keys();
    let page = sets.page.as_deref();
    let head = [
        SETS_TAG,
        sets.outline.words,
        lead.len() as u32,
        sets.set.len() as u32,
        page.map_or(u32::MAX, |p| p.len() as u32),
    ];
    push_words(
        out,
        head.iter()
            .chain(lead)
            .chain(&sets.set)
            .chain(page.unwrap_or(&[])),
    );
}

/// Packed shingle sets read back.
pub fn unpack_sets(bytes: &[u8]) -> Result<ShingleSets, PackError> {
    let values = words_of(bytes, SETS, SETS_HEAD, SETS_TAG)?;
    let (lead, set) = (values[2] as usize, values[3] as usize);
    let page = (values[4] != u32::MAX).then_some(values[4] as usize);
    let body = &values[SETS_HEAD..];
    if body.len() != lead + set + page.unwrap_or(0) {
        return Err(PackError::Malformed { what: SETS });
    }
    Ok(ShingleSets {
        outline: TextOutline {
            words: values[1],
            lead: Lead::of(&body[..lead]),
        },
        set: body[lead..lead + set].to_vec(),
        page: page.map(|p| body[lead + set..lead + set + p].to_vec()),
    })
}

/// A sketch packed (see the module's description), its shingle set stored only when
/// `with_set`, appended to `out`.
pub fn pack_sketch(sketch: &DocumentSketch, with_set: bool, out: &mut Vec<u8>) {
    let shingles: &[u32] = if with_set { &sketch.shingles } else { &[] };
    let head = [
        SKETCH_TAG,
        sketch.words,
        u32::from(sketch.status == Status::Ok),
        sketch.minima.len() as u32,
        sketch.shingles.len() as u32,
        shingles.len() as u32,
        sketch.lead.len() as u32,
    ];
    push_words(
        out,
        head.iter()
            .chain(&sketch.minima)
            .chain(shingles)
            .chain(&sketch.lead),
    );
}

/// A packed sketch read back, and whether it carries its shingle set: when it does not, the
/// set holds placeholders of the right size, for estimated verification only. Its candidate
/// keys are not packed: they are empty.
pub fn unpack_sketch(bytes: &[u8]) -> Result<(DocumentSketch, bool), PackError> {
    let values = words_of(bytes, SKETCH, SKETCH_HEAD, SKETCH_TAG)?;
    let [minima, set_len, stored, lead] = [3, 4, 5, 6].map(|i| values[i] as usize);
    let body = &values[SKETCH_HEAD..];
    if body.len() != minima + stored + lead || (stored != 0 && stored != set_len) {
        return Err(PackError::Malformed { what: SKETCH });
    }
    let has_set = stored == set_len;
    let shingles = if has_set {
        body[minima..minima + stored].to_vec()
    } else {
        vec![0; set_len]
    };
    let sketch = DocumentSketch {
        words: values[1],
        minima: body[..minima].to_vec(),
        keys: Vec::new(),
        shingles,
        lead: body[minima + stored..].to_vec(),
        status: if values[2] & 1 == 1 {
            Status::Ok
        } else {
            Status::TooShort
        },
    };
    Ok((sketch, has_set))
}

/// The low byte of each of the first `minima` minima of a packed sketch, appended to `out`:
/// `minima` bytes, zeros where the sketch has fewer. Two sketches whose minima agree in a
/// place agree in its low byte, so the share of agreeing bytes bounds the share of agreeing
/// minima from above.
pub fn low_bytes(bytes: &[u8], minima: usize, out: &mut Vec<u8>) -> Result<(), PackError> {
    let values = words_of(bytes, SKETCH, SKETCH_HEAD, SKETCH_TAG)?;
    let count = values[3] as usize;
    let stored = &values[SKETCH_HEAD..];
    if stored.len() < count {
        return Err(PackError::Malformed { what: SKETCH });
    }
    let taken = count.min(minima);
    out.extend(stored[..taken].iter().map(|&m| m as u8));
    out.resize(out.len() + (minima - taken), 0);
    Ok(())
}

/// Appends words to `out`, little-endian.
fn push_words<'a>(out: &mut Vec<u8>, words: impl Iterator<Item = &'a u32>) {
    for word in words {
        out.extend_from_slice(&word.to_le_bytes());
    }
}

/// The words of a packed value whose head is `head` words and whose tag must be `tag`.
fn words_of(
    bytes: &[u8],
    what: &'static str,
    head: usize,
    tag: u32,
) -> Result<Vec<u32>, PackError> {
    if bytes.len() < 4 {
        return Err(PackError::Malformed { what });
    }
    let found = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    if found != tag {
        return Err(PackError::UnknownVersion {
            what,
            tag: tag_name(found),
            expected: tag_name(tag),
        });
    }
    if !bytes.len().is_multiple_of(4) || bytes.len() < head * 4 {
        return Err(PackError::Malformed { what });
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// A tag as its four characters in quotes when they are printable ASCII, else as a number.
fn tag_name(tag: u32) -> String {
    let bytes = tag.to_le_bytes();
    if bytes.iter().all(|b| b.is_ascii_graphic()) {
        format!(
            "{:?}",
            bytes.iter().map(|&b| char::from(b)).collect::<String>()
        )
    } else {
        format!("{tag:#010x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sets() -> ShingleSets {
        ShingleSets {
            outline: TextOutline {
                words: 12,
                lead: Lead::of(&[7, 8]),
            },
            set: vec![1, 5, 9],
            page: Some(vec![1, 2, 5, 9]),
        }
    }

    fn sketch() -> DocumentSketch {
        DocumentSketch {
            words: 40,
            minima: vec![0x1_01, 0x2_02, 0x3_ff],
            keys: Vec::new(),
            shingles: vec![4, 6, 8, 10],
            lead: vec![3],
            status: Status::Ok,
        }
    }

    #[test]
    fn sets_and_sketches_come_back_as_they_were_packed() {
        let mut packed = Vec::new();
        pack_sets(&sets(), &mut packed);
        assert_eq!(&packed[..4], b"MSs1");
        assert_eq!(unpack_sets(&packed).unwrap(), sets());
        let mut without_page = sets();
        without_page.page = None;
        packed.clear();
        pack_sets(&without_page, &mut packed);
        assert_eq!(unpack_sets(&packed).unwrap(), without_page);

        for with_set in [true, false] {
            packed.clear();
            pack_sketch(&sketch(), with_set, &mut packed);
            let (back, has_set) = unpack_sketch(&packed).unwrap();
            assert_eq!(has_set, with_set);
            assert_eq!(
                (back.words, back.minima, back.lead),
                (40, sketch().minima, vec![3])
            );
            assert_eq!(back.shingles.len(), 4);
            assert_eq!(back.shingles == sketch().shingles, with_set);
            assert_eq!(back.status, Status::Ok);
        }
    }

    #[test]
    fn low_bytes_are_the_minima_cut_to_a_byte_and_padded() {
        let mut packed = Vec::new();
        pack_sketch(&sketch(), false, &mut packed);
        let mut out = vec![9];
        low_bytes(&packed, 5, &mut out).unwrap();
        assert_eq!(out, [9, 0x01, 0x02, 0xff, 0, 0]);
        out.clear();
        low_bytes(&packed, 2, &mut out).unwrap();
        assert_eq!(out, [0x01, 0x02]);
    }

    #[test]
    fn a_value_of_another_version_or_form_is_refused_with_what_to_do() {
        let mut packed = Vec::new();
        pack_sets(&sets(), &mut packed);
        let error = unpack_sketch(&packed).unwrap_err().to_string();
        assert_eq!(
            error,
            "a packed sketch has the tag \"MSs1\", not \"MSk1\": it was packed by another \
             version of megashingle or is not such a value; pack and unpack with one version"
        );
        packed[3] = b'2';
        let error = unpack_sets(&packed).unwrap_err().to_string();
        assert!(
            error.starts_with("a value of packed shingle sets has the tag \"MSs2\""),
            "{error}"
        );
        let error = unpack_sets(&[0, 0, 0, 0]).unwrap_err().to_string();
        assert!(error.contains("the tag 0x00000000"), "{error}");
    }

    #[test]
    fn a_cut_value_is_malformed() {
        let mut packed = Vec::new();
        pack_sketch(&sketch(), true, &mut packed);
        for cut in [2, 8, packed.len() - 4, packed.len() - 1] {
            assert_eq!(
                unpack_sketch(&packed[..cut]).unwrap_err().to_string(),
                "a packed sketch is cut short or malformed"
            );
        }
        packed.clear();
        pack_sets(&sets(), &mut packed);
        let error = unpack_sets(&packed[..packed.len() - 4]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a value of packed shingle sets is cut short or malformed"
        );
    }
}
