//! Whole-file documents: how the bytes of a `.html`/`.htm`, `.txt` or `.eml` file (or of a text
//! whose kind no name tells, such as stdin to `canon`) become text, and what is told of how.
//! HTML and plain text are decoded by [`crate::io::charset`], mail by [`crate::io::mime`].

use crate::io::charset::{self, TextKind};
use crate::io::mime;

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
        match extension {
            "html" | "htm" => Some(DocumentKind::Html),
            "txt" => Some(DocumentKind::Plain),
            "eml" => Some(DocumentKind::Mail),
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

/// A document's text, with what its bytes said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentText {
    /// The text.
    pub text: String,
    /// Its time (a mail's `Date`), in seconds since 1970 (UTC).
    pub time: Option<i64>,
    /// A mail's `Message-ID`.
    pub message_id: Option<String>,
    /// How it was decoded, one line for each text read ("windows-1251, declared by …"; a
    /// mail's parts as "text/plain: …").
    pub decoding: Vec<String>,
    /// Malformed byte sequences replaced by U+FFFD.
    pub malformed: u64,
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
pub fn from_mail(mail: mime::Mail) -> DocumentText {
    DocumentText {
        text: mail.text,
        time: mail.time,
        message_id: mail.message_id,
        decoding: mail.parts,
        malformed: mail.malformed,
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
