//! Whole-file documents: how the bytes of a `.html`/`.htm`, `.txt` or `.eml` file (or of a text
//! whose kind no name tells, such as stdin to `canon`) become text, and what is told of how.
//! HTML and plain text are decoded by [`crate::io::charset`], mail by [`crate::io::mime`].

use std::io::{BufRead, Read};
use std::sync::Arc;

use crate::io::charset::{self, TextKind};
use crate::io::format::Format;
use crate::io::mime::{self, MboxMessages};
use crate::io::record::{DocumentText, Entry, ReadError};

/// What a whole-file document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentKind {
    /// An HTML page (`.html`, `.htm`).
    Html,
    /// Plain text (`.txt`).
    Plain,
    /// A mail message (`.eml`).
    Mail,
}

impl DocumentKind {
    /// The kind an extension (lower case, before any `.gz` or `.zst`) names.
    pub fn of_extension(extension: &str) -> Option<DocumentKind> {
        Format::of_extension(extension).and_then(DocumentKind::of_format)
    }

    /// The kind of a document of `format` (text, HTML or mail); `None` for the others.
    pub(crate) fn of_format(format: Format) -> Option<DocumentKind> {
        match format {
            Format::Html => Some(DocumentKind::Html),
            Format::Text => Some(DocumentKind::Plain),
            Format::Mail => Some(DocumentKind::Mail),
            _ => None,
        }
    }

    /// The kind of bytes no name tells: a mail when they start with a mail header block, HTML
    /// when they look like a page, else plain text.
    pub fn guess(bytes: &[u8]) -> DocumentKind {
        if mime::looks_like_mail(bytes) {
            return DocumentKind::Mail;
        }
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]);
        if crate::canonicalize::html::looks_like_html(&head) {
            DocumentKind::Html
        } else {
            DocumentKind::Plain
        }
    }
}

/// The text of a document of `kind` whose bytes are `bytes`. A `.eml` file that does not start
/// with a mail header block is read as plain text.
pub fn decode_document(bytes: Vec<u8>, kind: DocumentKind) -> DocumentText {
    let text_kind = match kind {
        DocumentKind::Mail => {
            if mime::looks_like_mail(&bytes) {
                if let Some(mail) = mime::read_mail(&bytes) {
                    return from_mail(mail);
                }
            }
            TextKind::Plain
        }
        DocumentKind::Html => TextKind::Html,
        DocumentKind::Plain => TextKind::Plain,
    };
    let decoded = charset::decode(bytes, text_kind, None);
    DocumentText {
        decoding: vec![decoded.explain()],
        malformed: decoded.malformed,
        text: decoded.text,
        time: None,
        message_id: None,
    }
}

/// A mail's text as a document's.
pub(crate) fn from_mail(mail: mime::Mail) -> DocumentText {
    DocumentText {
        text: mail.text,
        time: mail.time,
        message_id: mail.message_id,
        decoding: mail.parts,
        malformed: mail.malformed,
    }
}

/// The one record of a whole-file document of `kind` whose bytes are read from `file`; its id
/// is `id`.
pub fn read_document(
    mut file: impl Read,
    id: String,
    source: Arc<str>,
    kind: DocumentKind,
) -> Result<Entry, ReadError> {
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(|e| ReadError::Io {
        path: source.to_string(),
        source: e,
    })?;
    Ok(Entry::Document {
        id,
        document: decode_document(bytes, kind),
        source,
        newest_kept: false,
    })
}

/// The messages of an mbox archive as records, pulled one at a time: each message's id is its
/// `Message-ID`, else the archive's id and the message's number (`archive.mbox#3`), and it is
/// named in messages by the archive and that number.
pub(crate) struct MboxReader<R: BufRead> {
    messages: MboxMessages<R>,
    archive: String,
    source: Arc<str>,
}

impl<R: BufRead> MboxReader<R> {
    /// The messages of the archive `input`, whose id is `archive`, named `source` in messages.
    pub fn new(input: R, archive: String, source: Arc<str>) -> MboxReader<R> {
        MboxReader {
            messages: MboxMessages::new(input),
            archive,
            source,
        }
    }
}

impl<R: BufRead> Iterator for MboxReader<R> {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.messages.next()? {
            Ok((number, bytes)) => {
                let document = decode_document(bytes, DocumentKind::Mail);
                let id = (document.message_id.clone())
                    .unwrap_or_else(|| format!("{}#{number}", self.archive));
                Ok(Entry::Document {
                    id,
                    document,
                    source: Arc::from(format!("{}#{number}", self.source)),
                    newest_kept: false,
                })
            }
            Err(e) => Err(ReadError::Io {
                path: self.source.to_string(),
                source: e,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_extension_and_by_bytes() {
        assert_eq!(DocumentKind::of_extension("htm"), Some(DocumentKind::Html));
        assert_eq!(DocumentKind::of_extension("csv"), None);
        assert_eq!(
            DocumentKind::guess(b"From: a@b.c\nSubject: x\n\nhi"),
            DocumentKind::Mail
        );
        assert_eq!(
            DocumentKind::guess(b"<html><p>hi</p></html>"),
            DocumentKind::Html
        );
        assert_eq!(DocumentKind::guess(b"just words"), DocumentKind::Plain);
    }

    #[test]
    fn an_eml_without_headers_is_plain_text() {
        let text = decode_document(b"Only a story.\n".to_vec(), DocumentKind::Mail);
        assert_eq!(text.text, "Only a story.\n");
        assert_eq!(text.decoding, ["UTF-8, the bytes are valid UTF-8"]);
    }

    #[test]
    fn a_mail_tells_its_time_id_and_part_charsets() {
        let mail = b"From: a@b.c\nSubject: s\nMessage-ID: <m1@b.c>\n\
                     Date: Tue, 3 Jun 2025 10:00:00 +0000\n\
                     Content-Type: text/plain; charset=koi8-r\n\n\xF0\xD2\xC9\xD7\xC5\xD4";
        let text = decode_document(mail.to_vec(), DocumentKind::Mail);
        assert_eq!(text.message_id.as_deref(), Some("m1@b.c"));
        assert_eq!(text.time, Some(1_748_944_800));
        assert_eq!(
            text.decoding,
            ["text/plain: KOI8-R, declared by the transport (Content-Type charset)"]
        );
        assert!(text.text.ends_with("\n\nПривет"), "{:?}", text.text);
    }
}
