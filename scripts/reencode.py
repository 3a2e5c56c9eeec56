#!/usr/bin/env python3
"""Re-encodes a benchmark split (a docs.csv of id,text in UTF-8) the way the world sends it.

Writes OUT/files/ (one file a document) and OUT/crawl.warc.gz (one gzip member a record):

- pages (texts that start with `<`): in the legacy charset of their script (windows-1251 or
  KOI8-R for Cyrillic, Shift_JIS or EUC-JP for Japanese, GB18030 or Big5 for Chinese, EUC-KR,
  windows-1252/1253/1254/1256/1258), declared by `<meta charset>`, by `<meta http-equiv>` or not
  at all (the page's own UTF-8 declaration taken out); characters the charset lacks are written
  as character references, as browsers submit them. In the WARC: HTTP responses whose
  Content-Type carries the charset, some chunked and gzipped.
- other texts, alternately: mails (MIME, quoted-printable, base64 or 8bit, in UTF-8 or the
  legacy charset, a quarter multipart/alternative with an HTML alternative) and plain text
  (UTF-8, UTF-8 with a BOM, UTF-16LE with a BOM, an undeclared legacy charset). In the WARC:
  conversion (WET) records.

Each choice is made from a hash of the document's id, so a run is reproducible. File names are
the ids with an extension; WARC target URIs are https://example.org/ID.

Usage: scripts/reencode.py DOCS.csv OUT
"""

import base64
import csv
import gzip
import hashlib
import html
import io
import os
import quopri
import re
import sys
import unicodedata

csv.field_size_limit(1 << 30)

# Legacy charsets by script: (first choice, second choice).
LEGACY = [
    (re.compile("[\u3040-\u30ff]"), ("shift_jis", "euc_jp")),
    (re.compile("[\uac00-\ud7af]"), ("euc_kr", "euc_kr")),
    (re.compile("[\u4e00-\u9fff]"), ("gb18030", "big5")),
    (re.compile("[\u0400-\u04ff]"), ("cp1251", "koi8_r")),
    (re.compile("[\u0370-\u03ff]"), ("cp1253", "cp1253")),
    (re.compile("[\u0600-\u06ff]"), ("cp1256", "cp1256")),
    (re.compile("[ğışĞİŞ]"), ("cp1254", "cp1254")),
    (re.compile("[ơưđƠƯĐ\u1ea0-\u1ef9]"), ("cp1258", "cp1258")),
]

# Python codec names as the Encoding Standard labels them.
LABEL = {
    "shift_jis": "Shift_JIS", "euc_jp": "EUC-JP", "euc_kr": "EUC-KR", "gb18030": "GB18030",
    "big5": "Big5", "cp1251": "windows-1251", "koi8_r": "KOI8-R", "cp1253": "windows-1253",
    "cp1256": "windows-1256", "cp1254": "windows-1254", "cp1258": "windows-1258",
    "cp1252": "windows-1252", "utf-8": "utf-8",
}

# A page's own charset declarations (`<meta charset>`, `<meta http-equiv>`).
DECLARATION = re.compile(r"<meta\b[^>]*charset[^>]*>", re.IGNORECASE)


def choice(doc_id, salt, n):
    """A number in 0..n-1 from the id, for one kind of choice."""
    digest = hashlib.sha256(f"{salt}:{doc_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % n


def legacy_codec(text, doc_id):
    """The legacy charset of the text's script."""
    for pattern, codecs in LEGACY:
        if pattern.search(text):
            return codecs[choice(doc_id, "codec", 2)]
    return "cp1252"


def encode(text, codec, references):
    """Text in `codec`; characters it lacks as character references (pages) or None."""
    if codec == "cp1258":
        text = unicodedata.normalize("NFD", text)
    try:
        return text.encode(codec)
    except UnicodeEncodeError:
        if references:
            return text.encode(codec, errors="xmlcharrefreplace")
        return None


def page_bytes(doc_id, text):
    """A page's bytes, its charset (label) and how it is declared."""
    codec = legacy_codec(text, doc_id)
    how = ["meta", "http-equiv", "none"][choice(doc_id, "declare", 3)]
    declaration = {
        "meta": f'<meta charset="{LABEL[codec]}">',
        "http-equiv": f'<meta http-equiv="Content-Type" content="text/html; charset={LABEL[codec]}">',
        "none": "",
    }[how]
    found = DECLARATION.search(text)
    if found:
        rest = DECLARATION.sub("", text[found.end():])
        text = text[:found.start()] + declaration + rest
    elif declaration:
        text = declaration + text
    return encode(text, codec, True), LABEL[codec], how


def mail_bytes(doc_id, text):
    """A MIME message whose body is the text."""
    codec = legacy_codec(text, doc_id) if choice(doc_id, "mailcs", 2) else "utf-8"
    body = encode(text, codec, False)
    if body is None:
        codec, body = "utf-8", text.encode("utf-8")
    cte = ["quoted-printable", "base64", "8bit"][choice(doc_id, "cte", 3)]
    encoded = {
        "quoted-printable": lambda b: quopri.encodestring(b),
        "base64": lambda b: base64.encodebytes(b),
        "8bit": lambda b: b,
    }[cte]
    headers = (
        f"From: desk@example.org\nTo: list@example.org\nSubject: Story {doc_id}\n"
        f"Date: Tue, 03 Jun 2025 10:00:00 +0000\nMessage-ID: <{doc_id}@example.org>\n"
        "MIME-Version: 1.0\n"
    ).encode()
    plain = (
        f"Content-Type: text/plain; charset={LABEL[codec]}\n"
        f"Content-Transfer-Encoding: {cte}\n\n"
    ).encode() + encoded(body)
    if choice(doc_id, "alternative", 4) == 0:
        page = "<html><body>" + "".join(
            f"<p>{html.escape(p)}</p>" for p in text.split("\n\n")
        ) + "</body></html>"
        alternative = (
            b"Content-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
            + base64.encodebytes(page.encode())
        )
        boundary = f"=_{hashlib.sha256(doc_id.encode()).hexdigest()[:16]}"
        return headers + (
            f'Content-Type: multipart/alternative; boundary="{boundary}"\n\n--{boundary}\n'
        ).encode() + plain + f"\n--{boundary}\n".encode() + alternative + f"\n--{boundary}--\n".encode()
    return headers + plain


def text_bytes(doc_id, text):
    """Plain text as UTF-8, with a BOM, UTF-16LE with a BOM, or an undeclared legacy charset."""
    form = choice(doc_id, "plain", 4)
    if form == 1:
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if form == 2:
        return b"\xff\xfe" + text.encode("utf-16-le")
    if form == 3:
        legacy = encode(text, legacy_codec(text, doc_id), False)
        if legacy is not None:
            return legacy
    return text.encode("utf-8")


def starts_with_header_lines(text):
    """True when the text's first line is `Name: value`, which a mail reader would take apart."""
    return re.match(r"[A-Za-z0-9-]+:", text) is not None


def warc_record(kind, uri, content_type, block):
    """One WARC record, gzipped as a member of its own."""
    head = (
        f"WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\n"
        f"WARC-Date: 2025-06-03T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:{hashlib.md5(uri.encode()).hexdigest()}>\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(block)}\r\n\r\n"
    ).encode()
    return gzip.compress(head + block + b"\r\n\r\n", mtime=0)


def http_response(doc_id, page, label):
    """An HTTP response holding the page, chunked and gzipped for one in three."""
    headers = f"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset={label}\r\n"
    body = page
    if choice(doc_id, "http", 3) == 0:
        body = gzip.compress(page, mtime=0)
        chunks = b"".join(
            f"{len(body[i:i + 4096]):x}\r\n".encode() + body[i:i + 4096] + b"\r\n"
            for i in range(0, len(body), 4096)
        )
        headers += "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
        body = chunks + b"0\r\n\r\n"
    return (headers + "\r\n").encode() + body


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    docs, out = sys.argv[1], sys.argv[2]
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    forms = {}
    with open(docs, newline="", encoding="utf-8") as f, open(
        os.path.join(out, "crawl.warc.gz"), "wb"
    ) as warc:
        for row in csv.DictReader(f):
            doc_id, text = row["id"], row["text"]
            uri = f"https://example.org/{doc_id}"
            if text.lstrip().startswith("<"):
                page, label, how = page_bytes(doc_id, text)
                name, data, form = f"{doc_id}.html", page, f"page {how}"
                warc.write(warc_record("response", uri, "application/http; msgtype=response",
                                       http_response(doc_id, page, label)))
            elif choice(doc_id, "mail", 2) == 0 and not starts_with_header_lines(text):
                name, data, form = f"{doc_id}.eml", mail_bytes(doc_id, text), "mail"
                warc.write(warc_record("conversion", uri, "text/plain", text.encode("utf-8")))
            else:
                name, data, form = f"{doc_id}.txt", text_bytes(doc_id, text), "text"
                warc.write(warc_record("conversion", uri, "text/plain", text.encode("utf-8")))
            with open(os.path.join(files, name), "wb") as g:
                g.write(data)
            forms[form] = forms.get(form, 0) + 1
    print(", ".join(f"{n} {form}" for form, n in sorted(forms.items())))


if __name__ == "__main__":
    main()
