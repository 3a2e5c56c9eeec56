//! Mail to text: the RFC 5322 header block at the start of a message is removed, so that routing
//! headers (Received, Message-ID, dates) never become shingles. The body is kept as it is.

/// Header names that mark a text as a mail message when they start it.
const MAIL_HEADERS: [&str; 10] = [
    "from",
    "to",
    "subject",
    "date",
    "message-id",
    "received",
    "return-path",
    "mime-version",
    "content-type",
    "delivered-to",
];

/// The body of a mail message, or the whole text when it does not start with a header block.
/// A header block is at least two `Name: value` lines (continuation lines allowed), one of them a
/// well-known mail header, ended by an empty line.
pub(crate) fn strip_headers(text: &str) -> &str {
    let mut headers = 0;
    let mut known = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\r', '\n']);
        offset += line.len();
        if content.is_empty() {
            return if headers >= 2 && known {
                &text[offset..]
            } else {
                text
            };
        }
        if content.starts_with([' ', '\t']) && headers > 0 {
            continue;
        }
        let Some((name, _)) = content.split_once(':') else {
            return text;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return text;
        }
        headers += 1;
        known |= MAIL_HEADERS.iter().any(|h| h.eq_ignore_ascii_case(name));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_removed() {
        let mail = "From: a@b.c\r\nSubject: Hello\r\n  continued\r\nX-Id: 1\r\n\r\nBody here.\n";
        assert_eq!(strip_headers(mail), "Body here.\n");
    }

    #[test]
    fn plain_text_is_kept() {
        let text = "Note: this is text\nSecond: line\n\nMore";
        assert_eq!(strip_headers(text), text);
        let prose = "A story starts here.\n\nAnd goes on.";
        assert_eq!(strip_headers(prose), prose);
    }
}
