//! Mail as MIME (RFC 2045–2049, 2047) with `mail-parser`: a message becomes a text made of a
//! header block of its decoded `From`, `Subject` and `Date` (which the canonicalizer's
//! `mail-headers` setting removes, as it removes a raw header block) and then its text parts in
//! order. Transfer encodings (quoted-printable, base64) are undone and each part is decoded from
//! its own charset as a browser would ([`crate::io::charset`], the part's `charset` as the
//! transport's). Of a `multipart/alternative`, the `text/plain` alternative is kept (what its
//! author wrote, without a template; the HTML one is read only when there is no plain one);
//! parts marked as attachments are left out, text or not, except attached messages
//! (`message/rfc822`), read as messages. The `Date` header is the document's time. An mbox
//! archive is split into its messages.

use std::io::BufRead;

use mail_parser::{MessageParser, MimeHeaders, PartType};

use crate::io::charset::{self, Decoded, TextKind};

/// Attached messages are read this many levels deep, no deeper.
const MAX_NESTING: usize = 8;

/// A mail message read as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mail {
    /// Its header block (decoded `From`, `Subject`, `Date`), an empty line, then its text parts
    /// separated by empty lines.
    pub text: String,
    /// Its `Date`, in seconds since 1970 (UTC).
    pub time: Option<i64>,
    /// Its `Message-ID`, without angle brackets.
    pub(crate) message_id: Option<String>,
    /// Each text part read: its content type and how it was decoded.
    pub parts: Vec<String>,
    /// Malformed byte sequences replaced by U+FFFD, over all parts.
    pub malformed: u64,
}

/// True when `bytes` start with a mail header block: two or more `Name: value` lines, one of
/// them a well-known mail header, ended by an empty line.
pub(crate) fn looks_like_mail(bytes: &[u8]) -> bool {
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(1 << 16)]);
    let body = crate::canonicalize::mail::strip_headers(&head);
    body.len() != head.len()
}

/// Reads a mail message; `None` when `bytes` are not one.
pub fn read_mail(bytes: &[u8]) -> Option<Mail> {
    let message = MessageParser::default().parse(bytes)?;
    let mut mail = Mail {
        text: header_block(&message),
        time: message
            .date()
            .filter(|d| d.is_valid())
            .map(|d| d.to_timestamp()),
        message_id: message.message_id().map(str::to_owned),
        parts: Vec::new(),
        malformed: 0,
    };
    let mut bodies = Vec::new();
    collect_bodies(&message, 0, &mut bodies, &mut mail);
    mail.text.push_str(&bodies.join("\n\n"));
    Some(mail)
}

/// The decoded `From`, `Subject` and `Date` as a header block, with the empty line that ends it.
fn header_block(message: &mail_parser::Message<'_>) -> String {
    let one_line = |s: &str| s.replace(['\r', '\n', '\t'], " ");
    let from = message.from().map_or_else(String::new, |from| {
        from.iter()
            .map(|a| match (a.name(), a.address()) {
                (Some(name), Some(address)) => format!("{name} <{address}>"),
                (Some(name), None) => name.to_owned(),
                (None, Some(address)) => address.to_owned(),
                (None, None) => String::new(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    });
    let mut block = format!(
        "From: {}\nSubject: {}\n",
        one_line(&from),
        one_line(message.subject().unwrap_or(""))
    );
    if let Some(date) = message.date() {
        block.push_str(&format!("Date: {}\n", date.to_rfc3339()));
    }
    block.push('\n');
    block
}

/// Pushes the texts of `message`'s body parts to `bodies`, then those of its attached messages.
fn collect_bodies(
    message: &mail_parser::Message<'_>,
    depth: usize,
    bodies: &mut Vec<String>,
    mail: &mut Mail,
) {
    let ids = if message.text_body.is_empty() {
        &message.html_body
    } else {
        &message.text_body
    };
    for part in ids.iter().filter_map(|&id| message.part(id)) {
        let kind = match &part.body {
            PartType::Text(_) => TextKind::Plain,
            PartType::Html(_) => TextKind::Html,
            _ => continue,
        };
        let decoded = decode_part(message, part, kind);
        let content_type = part.content_type().map_or_else(
            || "text/plain".to_owned(),
            |ct| format!("{}/{}", ct.ctype(), ct.subtype().unwrap_or("")),
        );
        mail.parts
            .push(format!("{content_type}: {}", decoded.explain()));
        mail.malformed += decoded.malformed;
        if !decoded.text.trim().is_empty() {
            bodies.push(decoded.text);
        }
    }
    if depth >= MAX_NESTING {
        return;
    }
    for part in message
        .attachments
        .iter()
        .filter_map(|&id| message.part(id))
    {
        if let PartType::Message(inner) = &part.body {
            collect_bodies(inner, depth + 1, bodies, mail);
        }
    }
}

/// A text part decoded: its transfer encoding undone, then its bytes decoded with the part's
/// `charset` as the transport's. Bytes that cannot be found again are taken as `mail-parser`
/// decoded them.
fn decode_part(
    message: &mail_parser::Message<'_>,
    part: &mail_parser::MessagePart<'_>,
    kind: TextKind,
) -> Decoded {
    let transport = part
        .content_type()
        .and_then(|ct| ct.attribute("charset"))
        .and_then(charset::for_label);
    let raw = message
        .raw_message
        .get(part.offset_body as usize..part.offset_end as usize);
    let bytes = raw.and_then(|raw| match part.encoding {
        mail_parser::Encoding::QuotedPrintable => {
            mail_parser::decoders::quoted_printable::quoted_printable_decode(raw)
        }
        mail_parser::Encoding::Base64 => mail_parser::decoders::base64::base64_decode(raw),
        mail_parser::Encoding::None => Some(raw.to_vec()),
    });
    match bytes {
        Some(bytes) => charset::decode(bytes, kind, transport),
        None => {
            let text = part.text_contents().unwrap_or_default().to_owned();
            charset::decode(text.into_bytes(), kind, None)
        }
    }
}

/// The messages of an mbox archive, pulled one at a time: each its number (from 1) and its
/// bytes, or the error that stopped reading the archive.
pub struct MboxMessages<R: BufRead> {
    messages: mail_parser::mailbox::mbox::MessageIterator<R>,
    number: u64,
}

impl<R: BufRead> MboxMessages<R> {
    /// The messages of the archive `input`.
    pub fn new(input: R) -> MboxMessages<R> {
        MboxMessages {
            messages: mail_parser::mailbox::mbox::MessageIterator::new(input),
            number: 0,
        }
    }
}

impl<R: BufRead> Iterator for MboxMessages<R> {
    type Item = std::io::Result<(u64, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let message = self.messages.next()?;
        self.number += 1;
        Some(message.map(|m| (self.number, m.unwrap_contents())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(raw: &str) -> String {
        read_mail(raw.as_bytes()).expect("a message").text
    }

    #[test]
    fn quoted_printable_is_undone() {
        let mail = "From: a@b.c\r\nSubject: Cafe\r\nContent-Type: text/plain; charset=utf-8\r\n\
                    Content-Transfer-Encoding: quoted-printable\r\n\r\n\
                    Caf=C3=A9 owners =E2=80=94 welcome it=\r\n today\r\n";
        assert!(text_of(mail).ends_with("\n\nCafé owners — welcome it today\r\n"));
    }

    #[test]
    fn base64_and_rfc2047_are_undone() {
        let mail = "From: =?utf-8?B?0JjQstCw0L0=?= <i@b.c>\r\n\
                    Subject: =?koi8-r?Q?=F0=D2=C9=D7=C5=D4?=\r\n\
                    Date: Tue, 3 Jun 2025 10:00:00 +0300\r\n\
                    Content-Type: text/plain; charset=utf-8\r\n\
                    Content-Transfer-Encoding: base64\r\n\r\n\
                    VGhpcyBpcyB0aGUgYm9keQ==\r\n";
        let mail = read_mail(mail.as_bytes()).unwrap();
        assert_eq!(
            mail.text,
            "From: Иван <i@b.c>\nSubject: Привет\nDate: 2025-06-03T10:00:00+03:00\n\nThis is the body"
        );
        assert_eq!(mail.time, Some(1_748_934_000));
    }

    #[test]
    fn alternatives_give_the_plain_text_once() {
        let mail = "From: a@b.c\nSubject: s\nMIME-Version: 1.0\n\
                    Content-Type: multipart/alternative; boundary=\"xyz\"\n\n\
                    --xyz\nContent-Type: text/plain; charset=utf-8\n\nPlain words\n\
                    --xyz\nContent-Type: text/html; charset=utf-8\n\n<p>Html words</p>\n--xyz--\n";
        let text = text_of(mail);
        assert!(text.ends_with("\n\nPlain words"), "{text:?}");
        assert!(!text.contains("xyz") && !text.contains("Html"), "{text:?}");
    }

    #[test]
    fn mixed_parts_keep_text_in_order_and_leave_attachments_out() {
        let mail = "From: a@b.c\nSubject: s\nMIME-Version: 1.0\n\
                    Content-Type: multipart/mixed; boundary=b\n\n\
                    --b\nContent-Type: text/plain\n\nFirst part\n\
                    --b\nContent-Type: application/pdf; name=x.pdf\n\
                    Content-Disposition: attachment; filename=x.pdf\n\
                    Content-Transfer-Encoding: base64\n\nJVBERi0xLjQK\n\
                    --b\nContent-Type: message/rfc822\n\n\
                    From: c@d.e\nSubject: inner\n\nForwarded words\n\
                    --b--\n";
        let mail = read_mail(mail.as_bytes()).unwrap();
        assert!(
            mail.text.ends_with("\n\nFirst part\n\nForwarded words"),
            "{:?}",
            mail.text
        );
        assert!(!mail.text.contains("JVBER"));
    }

    #[test]
    fn a_part_in_a_legacy_charset_is_decoded_from_it() {
        let (body, _, _) = encoding_rs::WINDOWS_1251.encode("Министерство сообщило");
        let mut mail = b"From: a@b.c\nSubject: s\nContent-Type: text/plain; charset=windows-1251\n\
                         Content-Transfer-Encoding: 8bit\n\n"
            .to_vec();
        mail.extend_from_slice(&body);
        let mail = read_mail(&mail).unwrap();
        assert!(
            mail.text.ends_with("\n\nМинистерство сообщило"),
            "{:?}",
            mail.text
        );
        assert_eq!(
            mail.parts,
            ["text/plain: windows-1251, declared by the transport (Content-Type charset)"]
        );
    }

    #[test]
    fn mail_is_told_from_text() {
        assert!(looks_like_mail(b"From: a@b.c\nSubject: s\n\nbody"));
        assert!(!looks_like_mail(b"A story.\n\nMore of it."));
    }

    #[test]
    fn an_mbox_is_split_into_messages() {
        let mbox = b"From a@b.c Tue Jun  3 10:00:00 2025\nSubject: one\n\nFirst\n\n\
                     From c@d.e Tue Jun  3 11:00:00 2025\nSubject: two\n\n>From the start\n";
        let messages: Vec<(u64, String)> = MboxMessages::new(&mbox[..])
            .map(|m| m.map(|(n, bytes)| (n, read_mail(&bytes).unwrap().text)))
            .collect::<std::io::Result<_>>()
            .unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!((messages[0].0, messages[1].0), (1, 2));
        assert!(
            messages[1].1.ends_with("From the start\n"),
            "{:?}",
            messages[1]
        );
    }
}
