//! The gzip members of a `.warc.gz`, decompressed one after another as `zcat` does them, but
//! each member checked (its CRC and length) before its bytes are given, and a damaged member
//! stepped over ([`GzipMembers`]): reading fails once with a [`DamagedMember`] naming the byte
//! of the file where that member starts, and goes on at the next gzip header after the damage
//! that starts a member which decompresses. Crawlers write a member a record, so the records
//! of the other members are all read.

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

/// A member whose decompressed bytes pass this is given as it is decompressed, in pieces of
/// this size, each checked only as far as the decompression goes (a whole WARC file written as
/// one gzip member, say); a member a record is checked whole before it is given.
const CHECKED_BYTES: usize = 32 << 20;

/// The first bytes of a gzip member: its magic number and the deflate method.
const MEMBER_START: [u8; 3] = [0x1f, 0x8b, 0x08];

/// A gzip member that cannot be decompressed: the error that reading a [`GzipMembers`] gives
/// once for it (inside an [`io::Error`] of kind `InvalidData`), before it goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DamagedMember {
    /// Byte offset in the (compressed) file where the member starts.
    pub at: u64,
    /// What the decompression found wrong.
    pub why: String,
    /// Where reading goes on: the offset of the next member that decompresses, `None` when
    /// none follows.
    pub next: Option<u64>,
    /// The file ends inside the member: it was cut short rather than damaged.
    pub truncated: bool,
}

impl std::fmt::Display for DamagedMember {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = self.at;
        let why = &self.why;
        match self.next {
            None if self.truncated => write!(
                f,
                "the file ends inside the gzip member at byte {at} ({why}): it was cut short; \
                 the records before are kept; fetch the file again for the rest"
            ),
            None => write!(
                f,
                "the gzip member at byte {at} cannot be decompressed ({why}) and no member \
                 follows; its records are lost; fetch the file again to read them"
            ),
            Some(next) => write!(
                f,
                "the gzip member at byte {at} cannot be decompressed ({why}); its records are \
                 lost and reading goes on at the next member, at byte {next}; fetch the file \
                 again to read them"
            ),
        }
    }
}

impl std::error::Error for DamagedMember {}

impl DamagedMember {
    /// The damaged member an I/O error of a [`GzipMembers`] names, if it names one.
    pub fn of(error: &io::Error) -> Option<&DamagedMember> {
        error.get_ref()?.downcast_ref::<DamagedMember>()
    }
}

/// Where the reading of the members is.
enum State<R> {
    /// Between two members, or before the first.
    Between(Counted<R>),
    /// Inside a member larger than [`CHECKED_BYTES`], which starts at this offset.
    Inside(u64, Box<GzDecoder<Counted<R>>>),
    /// At the end of the file, or after an error of the file itself.
    Ended,
}

/// The decompressed bytes of a gzip file, member after member, each member checked before
/// it is given; see the module's note.
pub struct GzipMembers<R> {
    state: State<R>,
    /// Decompressed bytes ready to give, from `given` on.
    ready: Vec<u8>,
    given: usize,
    /// A damaged member not yet reported: it is, once the next member is found.
    damaged: Option<DamagedMember>,
    /// [`CHECKED_BYTES`], but for the tests.
    checked_bytes: usize,
}

impl<R: Read> GzipMembers<R> {
    /// The members of the gzip file `input`.
    pub fn new(input: R) -> GzipMembers<R> {
        GzipMembers {
            state: State::Between(Counted::new(input)),
            ready: Vec::new(),
            given: 0,
            damaged: None,
            checked_bytes: CHECKED_BYTES,
        }
    }

    /// Decompresses the next member (or piece of a large one) into `ready`. Fails with a
    /// [`DamagedMember`] once the member after a damaged one is ready, or the file ends.
    fn fill(&mut self) -> io::Result<()> {
        self.ready.clear();
        self.given = 0;
        loop {
            let (at, mut decoder) = match std::mem::replace(&mut self.state, State::Ended) {
                State::Ended => return self.report(None),
                State::Inside(at, decoder) => (at, decoder),
                State::Between(mut input) => {
                    if self.damaged.is_some() && !input.seek_member_start()? {
                        return self.report(None);
                    }
                    if input.fill_buf()?.is_empty() {
                        return self.report(None);
                    }
                    (input.position, Box::new(GzDecoder::new(input)))
                }
            };
            let read = (&mut decoder)
                .take(self.checked_bytes as u64)
                .read_to_end(&mut self.ready);
            match read {
                Ok(n) if n == self.checked_bytes => {
                    self.state = State::Inside(at, decoder);
                    return self.report(Some(at));
                }
                Ok(_) => {
                    self.state = State::Between(decoder.into_inner());
                    if !self.ready.is_empty() {
                        return self.report(Some(at));
                    }
                }
                Err(e) => {
                    self.ready.clear();
                    let mut input = decoder.into_inner();
                    if let Some(failed) = input.failed.take() {
                        return Err(failed);
                    }
                    if self.damaged.is_none() {
                        self.damaged = Some(DamagedMember {
                            at,
                            why: e.to_string(),
                            next: None,
                            truncated: input.fill_buf()?.is_empty(),
                        });
                    } else if input.position == at {
                        // A false start found after the damage: look past it.
                        input.consume(1);
                    }
                    self.state = State::Between(input);
                }
            }
        }
    }

    /// Ends a [`GzipMembers::fill`]: the damaged member not yet reported, with the member
    /// that follows it (`next`), as an error; else done.
    fn report(&mut self, next: Option<u64>) -> io::Result<()> {
        match self.damaged.take() {
            None => Ok(()),
            Some(mut damaged) => {
                damaged.next = next;
                Err(io::Error::new(io::ErrorKind::InvalidData, damaged))
            }
        }
    }
}

impl<R: Read> Read for GzipMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.given == self.ready.len() {
            if matches!(self.state, State::Ended) && self.damaged.is_none() {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = out.len().min(self.ready.len() - self.given);
        out[..n].copy_from_slice(&self.ready[self.given..self.given + n]);
        self.given += n;
        Ok(n)
    }
}

/// The compressed file, buffered, with the offset of the next byte to read and the error of
/// the file itself (told apart from a damaged member's).
struct Counted<R> {
    input: R,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    /// Offset in the file of `buffer[start]`.
    position: u64,
    /// An error reading the file, kept for the caller.
    failed: Option<io::Error>,
}

impl<R: Read> Counted<R> {
    fn new(input: R) -> Counted<R> {
        Counted {
            input,
            buffer: vec![0; 1 << 16],
            start: 0,
            end: 0,
            position: 0,
            failed: None,
        }
    }

    /// At least `n` buffered bytes when the file holds them (fewer at its end).
    fn fill_to(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.end - self.start < n {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            while self.end < n {
                let read = match self.input.read(&mut self.buffer[self.end..]) {
                    Ok(read) => read,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.failed = Some(io::Error::new(e.kind(), e.to_string()));
                        return Err(e);
                    }
                };
                if read == 0 {
                    break;
                }
                self.end += read;
            }
        }
        Ok(&self.buffer[self.start..self.end])
    }

    /// Reads up to the next [`MEMBER_START`], which is left unread; false at the end.
    fn seek_member_start(&mut self) -> io::Result<bool> {
        loop {
            let available = self.fill_buf()?;
            if available.is_empty() {
                return Ok(false);
            }
            let Some(i) = memchr::memchr(MEMBER_START[0], available) else {
                let n = available.len();
                self.consume(n);
                continue;
            };
            self.consume(i);
            if self.fill_to(MEMBER_START.len())?.starts_with(&MEMBER_START) {
                return Ok(true);
            }
            self.consume(1);
        }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = out.len().min(available.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.fill_to(1)
    }

    fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.position += n as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// Every read of `file`: the bytes, and the errors as they come.
    fn read_all(file: &[u8]) -> (Vec<u8>, Vec<DamagedMember>) {
        let mut members = GzipMembers::new(file);
        let (mut bytes, mut damaged) = (Vec::new(), Vec::new());
        let mut piece = [0u8; 7];
        loop {
            match members.read(&mut piece) {
                Ok(0) => return (bytes, damaged),
                Ok(n) => bytes.extend_from_slice(&piece[..n]),
                Err(e) => damaged.push(DamagedMember::of(&e).expect("a damaged member").clone()),
            }
        }
    }

    #[test]
    fn members_are_read_one_after_another() {
        let file = [gzip(b"one "), gzip(b""), gzip(b"two")].concat();
        assert_eq!(read_all(&file), (b"one two".to_vec(), vec![]));
        assert_eq!(read_all(b""), (vec![], vec![]));
    }

    #[test]
    fn a_damaged_member_is_named_and_the_next_one_read() {
        let words: String = (0..400).map(|i| format!("word{i} ")).collect();
        let (first, second, third) = (gzip(b"first "), gzip(words.as_bytes()), gzip(b"third"));
        let mut damaged = second.clone();
        let middle = damaged.len() / 2;
        damaged[middle..middle + 8].copy_from_slice(&[0xff; 8]);
        let file = [&first[..], &damaged, &third].concat();
        let (bytes, reports) = read_all(&file);
        assert_eq!(bytes, b"first third");
        let second_at = first.len() as u64;
        let third_at = second_at + second.len() as u64;
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!(
            (reports[0].at, reports[0].next),
            (second_at, Some(third_at))
        );
        assert!(!reports[0].truncated);
        assert_eq!(
            reports[0].to_string(),
            format!(
                "the gzip member at byte {second_at} cannot be decompressed ({}); its records \
                 are lost and reading goes on at the next member, at byte {third_at}; fetch the \
                 file again to read them",
                reports[0].why
            )
        );
    }

    #[test]
    fn a_cut_file_keeps_what_comes_before() {
        let (first, second) = (gzip(b"first "), gzip(b"second and more words"));
        let file = [&first[..], &second[..second.len() - 5]].concat();
        let (bytes, reports) = read_all(&file);
        assert_eq!(bytes, b"first ");
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(reports[0].truncated && reports[0].next.is_none());
        assert!(
            reports[0].to_string().starts_with(&format!(
                "the file ends inside the gzip member at byte {} (",
                first.len()
            )),
            "{}",
            reports[0]
        );
    }

    #[test]
    fn bytes_after_the_last_member_are_reported() {
        let first = gzip(b"first");
        let file = [&first[..], b"not gzip at all"].concat();
        let (bytes, reports) = read_all(&file);
        assert_eq!(bytes, b"first");
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert_eq!((reports[0].at, reports[0].next), (first.len() as u64, None));
        assert!(reports[0].to_string().contains("and no member follows"));
    }

    #[test]
    fn a_member_larger_than_the_checked_size_is_given_in_pieces() {
        let big: Vec<u8> = (0..1000u32).flat_map(|i| i.to_le_bytes()).collect();
        let file = [gzip(&big), gzip(b"y")].concat();
        let mut members = GzipMembers::new(&file[..]);
        members.checked_bytes = 100;
        let mut bytes = Vec::new();
        members.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, [&big[..], b"y"].concat());
    }

    #[test]
    fn an_error_of_the_file_itself_is_passed_on() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk on fire"))
            }
        }
        let error = GzipMembers::new(Failing).read(&mut [0; 4]).unwrap_err();
        assert!(DamagedMember::of(&error).is_none());
        assert_eq!(error.to_string(), "disk on fire");
    }
}
