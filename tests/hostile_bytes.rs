//! Random and truncated bytes into the charset, MIME, mbox and WARC readers, the reader of a
//! `.warc.gz`'s gzip members and the HTML tokenizer never panic (and the members' reader always
//! comes to an end); a decoded text is always a whole string, and a page or text's valid
//! UTF-8 is kept as it is.

use std::io::Read;

use megashingle::canonicalize::html::{html_to_text, main_text, page_words};
use megashingle::canonicalize::Canonicalizer;
use megashingle::config::{CanonConfig, HtmlMode};
use megashingle::io::charset::{decode, prescan, TextKind};
use megashingle::io::gzip::{DamagedMember, GzipMembers};
use megashingle::io::mime::{read_mail, MboxMessages};
use megashingle::io::transcode::Utf8Reader;
use megashingle::io::warc::WarcReader;
use proptest::prelude::*;

/// A MIME message with quoted-printable, base64 and nested parts, to be cut anywhere.
const MAIL: &[u8] = b"From: =?utf-8?Q?Pr=C3=A9fecture?= <p@example.org>\r\n\
Subject: =?windows-1251?B?zu/l8ODy6OLt++Ug7e7i7vHy6A==?=\r\nMIME-Version: 1.0\r\n\
Content-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\n\
Content-Type: multipart/alternative; boundary=c\r\n\r\n--c\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
Caf=C3=A9 owners =E2=80=94 welcome it=\r\n\r\n--c\r\nContent-Type: text/html\r\n\
Content-Transfer-Encoding: base64\r\n\r\nPHA+aGk8L3A+\r\n--c--\r\n--b\r\n\
Content-Type: message/rfc822\r\n\r\nFrom: a@b.c\r\nSubject: inner\r\n\r\nForwarded\r\n--b--\r\n";

/// A WARC file of a chunked response and a conversion, to be cut anywhere.
fn warc() -> Vec<u8> {
    let http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=koi8-r\r\n\
                 Transfer-Encoding: chunked\r\n\r\n5\r\n<p>\xF0\xD2\r\n3\r\n</p\r\n0\r\n\r\n";
    let mut out = Vec::new();
    for (kind, block) in [("response", &http[..]), ("conversion", &b"plain words"[..])] {
        out.extend_from_slice(
            format!(
                "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: http://a/{kind}\r\n\
                 Content-Type: application/http\r\nContent-Length: {}\r\n\r\n",
                block.len()
            )
            .as_bytes(),
        );
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
    }
    out
}

fn read_warc(bytes: &[u8]) -> usize {
    let mut reader = WarcReader::new(bytes);
    let mut n = 0;
    while let Ok(Some(_)) = reader.next_item() {
        n += 1;
        assert!(n <= bytes.len() + 1, "the reader goes on without reading");
    }
    n
}

/// The WARC file of [`warc`] as a `.warc.gz`: one gzip member a record.
fn warc_gz() -> Vec<u8> {
    let whole = warc();
    let second = memchr::memmem::find(&whole[1..], b"WARC/1.0").expect("two records") + 1;
    [&whole[..second], &whole[second..]]
        .iter()
        .flat_map(|record| {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut gz, record).unwrap();
            gz.finish().unwrap()
        })
        .collect()
}

/// Reads the gzip members of `bytes` to their end: how many bytes and damaged members.
fn read_members(bytes: &[u8]) -> (usize, usize) {
    let mut members = GzipMembers::new(bytes);
    let (mut read, mut damaged) = (0, 0);
    let mut piece = [0u8; 512];
    loop {
        match members.read(&mut piece) {
            Ok(0) => return (read, damaged),
            Ok(n) => read += n,
            Err(e) => {
                assert!(DamagedMember::of(&e).is_some(), "{e}");
                damaged += 1;
            }
        }
        assert!(
            damaged <= bytes.len() + 1,
            "the reader goes on without reading"
        );
    }
}

fn read_mbox(bytes: &[u8]) {
    for message in MboxMessages::new(bytes) {
        let Ok((_, message)) = message else { break };
        let _ = read_mail(&message);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_decode_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        for kind in [TextKind::Html, TextKind::Plain] {
            let decoded = decode(bytes.clone(), kind, None);
            if let Ok(text) = std::str::from_utf8(&bytes) {
                if !bytes.starts_with(b"\xEF\xBB\xBF") && !bytes.contains(&0x1B) && !bytes.contains(&0) {
                    prop_assert_eq!(decoded.text.as_str(), text);
                }
            }
        }
        let _ = prescan(&bytes);
        let _ = read_mail(&bytes);
        read_mbox(&bytes);
        read_warc(&bytes);
        let mut text = String::new();
        let malformed = std::sync::Arc::default();
        let mut reader = Utf8Reader::new(&bytes[..], encoding_rs::SHIFT_JIS, false, malformed);
        prop_assert!(reader.read_to_string(&mut text).is_ok());
    }

    #[test]
    fn meta_prefixes_and_random_tails_decode_without_a_panic(
        head in "<(meta|META|!--|a|/x|\\?)[ a-z=\"'/;-]{0,40}(charset=[a-z0-9_-]{0,12})?[ >\"']{0,3}",
        tail in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&tail);
        let _ = prescan(&bytes);
        let _ = decode(bytes, TextKind::Html, None);
    }

    #[test]
    fn truncated_mail_and_warc_read_without_a_panic(cut in 0usize..2000, flip in any::<u8>(), at in 0usize..2000) {
        let mut mail = MAIL[..cut.min(MAIL.len())].to_vec();
        if let Some(byte) = mail.get_mut(at % MAIL.len().max(1)) {
            *byte ^= flip;
        }
        let _ = read_mail(&mail);
        read_mbox(&[&b"From a@b Tue Jun  3 10:00:00 2025\n"[..], &mail].concat());
        let whole = warc();
        let mut cut_warc = whole[..cut.min(whole.len())].to_vec();
        if let Some(byte) = cut_warc.get_mut(at % whole.len()) {
            *byte ^= flip;
        }
        read_warc(&cut_warc);
        let whole_gz = warc_gz();
        let mut cut_gz = whole_gz[..cut.min(whole_gz.len())].to_vec();
        if let Some(byte) = cut_gz.get_mut(at % whole_gz.len()) {
            *byte ^= flip;
        }
        let (_, damaged) = read_members(&cut_gz);
        prop_assert!(damaged <= 2, "{damaged} reports for one damage");
    }

    #[test]
    fn random_bytes_as_gzip_members_come_to_an_end(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let (read, _) = read_members(&bytes);
        prop_assert!(read <= 600 * 1032, "{read} bytes out of {} in", bytes.len());
        let magic_led: Vec<u8> = bytes.iter().flat_map(|&b| [0x1f, 0x8b, 0x08, b]).collect();
        read_members(&magic_led);
    }
}

/// A page's text, article and canonical words, as the HTML path makes them.
fn read_html(text: &str) {
    let page = html_to_text(text);
    assert_eq!(
        page_words(text),
        megashingle::canonicalize::html::count_words(&page)
    );
    let _ = main_text(text, page_words(text));
    let config = CanonConfig {
        html: HtmlMode::Always,
        ..CanonConfig::default()
    };
    let _ = Canonicalizer::new(&config).words(text);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_as_html_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..800)) {
        read_html(&decode(bytes.clone(), TextKind::Html, None).text);
        read_html(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn random_markup_never_panics(
        html in "(<|</|>|/>|<!--|-->|<!|<!\\[CDATA\\[|\\]\\]>|<\\?|&|&#|&#x|;|=|\"|'|[a-z]{1,8}|[0-9]{1,4}|script|title|textarea|plaintext|svg|math|style|template|iframe|xmp|noscript| |\n|\r|\0|\u{FFFD}|ё|國){0,120}",
    ) {
        read_html(&html);
    }
}

#[test]
fn the_uncut_samples_read_whole() {
    let mail = read_mail(MAIL).expect("a message");
    assert!(
        mail.text.contains("Café owners — welcome it"),
        "{}",
        mail.text
    );
    assert!(
        mail.text.contains("Subject: Оперативные новости"),
        "{}",
        mail.text
    );
    assert!(mail.text.ends_with("Forwarded"), "{}", mail.text);
    assert_eq!(read_warc(&warc()), 2);
    assert_eq!(read_members(&warc_gz()), (warc().len(), 0));
}
