//! Real bytes through `canon`: a page in each legacy charset, declared by `<meta charset>`, by
//! `<meta http-equiv>` or not at all, plain text with a byte order mark, in UTF-16 or in an
//! undeclared legacy charset, and mails as MIME (quoted-printable, base64, alternatives, mixed
//! parts with an attachment, RFC 2047 headers, a windows-1251 body) give the words of their
//! UTF-8 form. The bytes are made here with `encoding_rs`'s encoders from the UTF-8 texts below.

#[allow(dead_code)]
mod common;

use std::path::Path;

use common::{megashingle, stdout_of, temp};

/// A news paragraph in each language, and the charset its pages were written in.
const PAGES: [(&str, &str); 12] = [
    ("windows-1251", "Правительство объявило сегодня о новых мерах поддержки малого бизнеса в регионах. Министр финансов сообщил журналистам, что программа начнёт работать уже в следующем месяце и охватит более двадцати тысяч предприятий."),
    ("koi8-r", "Городской совет утвердил план ремонта мостов через реку. Работы начнутся весной, а движение транспорта будет частично ограничено на время строительства, сообщили в пресс-службе мэрии."),
    ("shift_jis", "政府は本日、地方の中小企業を支援する新たな対策を発表した。財務大臣は記者団に対し、この計画は来月から始まり、二万社以上が対象になると述べた。"),
    ("euc-jp", "市議会は川に架かる橋の修理計画を承認した。工事は春に始まり、建設期間中は交通が一部制限されると市の広報担当者が明らかにした。"),
    ("gb18030", "政府今天宣布了支持各地区小企业的新措施。财政部长对记者表示，该计划将于下个月开始实施，覆盖两万多家企业。"),
    ("big5", "市議會批准了河上橋樑的維修計劃。工程將於春季開始，施工期間交通將受到部分限制，市政府發言人表示。"),
    ("euc-kr", "정부는 오늘 지역 중소기업을 지원하기 위한 새로운 대책을 발표했다. 재무장관은 기자들에게 이 계획이 다음 달부터 시작되어 이만 개 이상의 기업이 혜택을 받을 것이라고 말했다."),
    ("windows-1252", "Le gouvernement a annoncé aujourd'hui de nouvelles mesures de soutien aux petites entreprises des régions. Le ministre des Finances a déclaré que le programme débutera dès le mois prochain et concernera plus de vingt mille sociétés françaises."),
    ("windows-1253", "Η κυβέρνηση ανακοίνωσε σήμερα νέα μέτρα στήριξης των μικρών επιχειρήσεων στις περιφέρειες. Ο υπουργός Οικονομικών δήλωσε ότι το πρόγραμμα θα ξεκινήσει τον επόμενο μήνα."),
    ("windows-1254", "Hükümet bugün bölgelerdeki küçük işletmeleri desteklemek için yeni önlemler açıkladı. Maliye bakanı gazetecilere programın önümüzdeki ay başlayacağını ve yirmi binden fazla şirketi kapsayacağını söyledi."),
    ("windows-1256", "أعلنت الحكومة اليوم عن إجراءات جديدة لدعم الشركات الصغيرة في المناطق. وقال وزير المالية للصحفيين إن البرنامج سيبدأ الشهر المقبل وسيشمل أكثر من عشرين ألف شركة."),
    ("windows-1258", "Chính phủ hôm nay công bố các biện pháp mới hỗ trợ doanh nghiệp nhỏ ở các địa phương. Bộ trưởng Tài chính cho biết chương trình sẽ bắt đầu vào tháng tới và áp dụng cho hơn hai mươi nghìn công ty."),
];

/// `text` in the charset `label`; for windows-1258, a Vietnamese letter it lacks is written as
/// a letter it has and combining tone marks, as that charset writes them.
fn encoded(text: &str, label: &str) -> Vec<u8> {
    let encoding = encoding_rs::Encoding::for_label(label.as_bytes()).expect("a label");
    let text: String = if label == "windows-1258" {
        text.chars().map(|c| as_windows_1258(c, encoding)).collect()
    } else {
        text.to_owned()
    };
    let (bytes, _, unmappable) = encoding.encode(&text);
    assert!(!unmappable, "{label} cannot write {text}");
    bytes.into_owned()
}

/// A letter as windows-1258 can write it: itself, else its base letter composed with one of
/// its marks and the other marks combining (`ệ` as `ê` and a combining dot below), else fully
/// decomposed.
fn as_windows_1258(c: char, encoding: &'static encoding_rs::Encoding) -> String {
    use unicode_normalization::UnicodeNormalization;
    let writable = |s: &str| !encoding.encode(s).2;
    let one = c.to_string();
    if writable(&one) {
        return one;
    }
    let parts: Vec<char> = one.nfd().collect();
    for mark in 1..parts.len() {
        let base: String = [parts[0], parts[mark]]
            .iter()
            .collect::<String>()
            .nfc()
            .collect();
        let others: String = (parts[1..].iter().enumerate())
            .filter(|&(i, _)| i + 1 != mark)
            .map(|(_, c)| c)
            .collect();
        if base.chars().count() == 1 && writable(&base) && writable(&others) {
            return base + &others;
        }
    }
    parts.into_iter().collect()
}

fn page(head: &str, paragraph: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html><head>{head}<title>News</title></head>\n<body><article><p>{paragraph}</p></article></body></html>\n"
    )
}

/// `canon FILE` (with `args`) in `dir`: its standard output, which must be a success.
fn canon(dir: &Path, file: &str, args: &[&str]) -> String {
    let output = megashingle(dir)
        .arg("canon")
        .arg(file)
        .args(args)
        .output()
        .expect("runs");
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    stdout_of(&output)
}

#[test]
fn a_page_in_each_legacy_charset_gives_the_words_of_its_utf8_form() {
    let dir = temp();
    for (label, paragraph) in PAGES {
        std::fs::write(dir.path().join("utf8.html"), page("", paragraph)).unwrap();
        let expected = canon(dir.path(), "utf8.html", &[]);
        assert!(expected.split(' ').count() > 10, "{label}: {expected}");
        let declarations = [
            (
                "meta",
                format!("<meta charset=\"{label}\">"),
                "declared by a <meta> element in the first 1024 bytes",
            ),
            (
                "http-equiv",
                format!(
                    "<meta http-equiv=\"Content-Type\" content=\"text/html; charset={label}\">"
                ),
                "declared by a <meta> element in the first 1024 bytes",
            ),
            (
                "undeclared",
                String::new(),
                "nothing declared; detected from the bytes",
            ),
        ];
        for (how, head, reason) in declarations {
            let file = format!("{label}-{how}.html");
            std::fs::write(
                dir.path().join(&file),
                encoded(&page(&head, paragraph), label),
            )
            .unwrap();
            let explained = canon(dir.path(), &file, &["--explain"]);
            let (words, decoded) = explained
                .split_once("\ndecoded:\n")
                .expect("an explanation");
            assert_eq!(format!("{words}"), expected, "{file}");
            let mut name = encoding_rs::Encoding::for_label(label.as_bytes())
                .unwrap()
                .name();
            // The detector names the supersets: KOI8-U holds KOI8-R, GBK is GB18030's
            // two-byte part.
            if how == "undeclared" {
                name = match name {
                    "KOI8-R" => "KOI8-U",
                    "gb18030" => "GBK",
                    other => other,
                };
            }
            assert_eq!(decoded, format!("  - {name}, {reason}\n"), "{file}");
        }
    }
}

#[test]
fn plain_text_with_a_bom_in_utf16_or_in_a_legacy_charset_gives_its_words() {
    let dir = temp();
    for (label, paragraph) in [PAGES[0], PAGES[2], PAGES[7]] {
        std::fs::write(dir.path().join("utf8.txt"), paragraph).unwrap();
        let expected = canon(dir.path(), "utf8.txt", &[]);
        let mut bom = b"\xEF\xBB\xBF".to_vec();
        bom.extend_from_slice(paragraph.as_bytes());
        let little: Vec<u8> = [0xFF, 0xFE]
            .into_iter()
            .chain(paragraph.encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let big: Vec<u8> = [0xFE, 0xFF]
            .into_iter()
            .chain(paragraph.encode_utf16().flat_map(u16::to_be_bytes))
            .collect();
        let forms = [
            ("bom", bom, "UTF-8, from its byte order mark"),
            ("utf16le", little, "UTF-16LE, from its byte order mark"),
            ("utf16be", big, "UTF-16BE, from its byte order mark"),
            (
                "legacy",
                encoded(paragraph, label),
                "nothing declared; detected from the bytes",
            ),
        ];
        for (how, bytes, reason) in forms {
            let file = format!("{label}-{how}.txt");
            std::fs::write(dir.path().join(&file), bytes).unwrap();
            let explained = canon(dir.path(), &file, &["--explain"]);
            let (words, decoded) = explained.split_once("\ndecoded:\n").unwrap();
            assert_eq!(words, expected, "{file}");
            assert!(
                decoded.ends_with(&format!("{reason}\n")),
                "{file}: {decoded}"
            );
        }
    }
}

#[test]
fn compare_decodes_as_canon_does() {
    let dir = temp();
    let (label, paragraph) = PAGES[0];
    std::fs::write(dir.path().join("a.html"), page("", paragraph)).unwrap();
    let head = format!("<meta charset={label}>");
    std::fs::write(
        dir.path().join("b.html"),
        encoded(&page(&head, paragraph), label),
    )
    .unwrap();
    let output = megashingle(dir.path())
        .args(["compare", "a.html", "b.html"])
        .output()
        .unwrap();
    let report = stdout_of(&output);
    assert!(report.contains("Jaccard:           1.0000"), "{report}");
}

#[test]
fn index_query_decodes_as_canon_does() {
    let dir = temp();
    let (label, paragraph) = PAGES[0];
    std::fs::write(dir.path().join("a.html"), page("", paragraph)).unwrap();
    let head = format!("<meta charset={label}>");
    std::fs::write(
        dir.path().join("q.html"),
        encoded(&page(&head, paragraph), label),
    )
    .unwrap();
    let added = megashingle(dir.path())
        .args(["index", "add", "--db", "s.db", "a.html", "-q"])
        .output()
        .unwrap();
    assert!(added.status.success(), "{}", common::stderr_of(&added));
    let output = megashingle(dir.path())
        .args(["index", "query", "--db", "s.db", "q.html"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    let found = stdout_of(&output);
    assert!(found.contains("a.html,a.html,1.0000"), "{found}");
}

/// The words of a mail, with its headers kept (`mail-headers = false`) when `headers`.
fn mail_words(dir: &Path, name: &str, mail: &[u8], headers: bool) -> String {
    std::fs::write(dir.join(name), mail).unwrap();
    let args: &[&str] = if headers {
        &["--set", "canonicalize.mail-headers=false"]
    } else {
        &[]
    };
    canon(dir, name, args)
}

#[test]
fn mails_give_the_words_of_their_text() {
    let dir = temp();
    let dir = dir.path();
    let qp = b"From: desk@example.org\r\nSubject: Cafes\r\nMIME-Version: 1.0\r\n\
               Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n\
               Caf=C3=A9 owners =E2=80=94 welcome it, the mayor said on Tues=\r\nday.\r\n";
    assert_eq!(
        mail_words(dir, "qp.eml", qp, false),
        "café owners welcome it the mayor said on tuesday\n"
    );
    let base64 = b"From: desk@example.org\nSubject: Bridges\nMIME-Version: 1.0\n\
                   Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n\
                   VGhlIGNpdHkgY291bmNpbCBhcHByb3ZlZCB0aGUgYnJpZGdlIHJlcGFpcnMu\n";
    assert_eq!(
        mail_words(dir, "b64.eml", base64, false),
        "the city council approved the bridge repairs\n"
    );
    let alternative = b"From: desk@example.org\nSubject: Ferry\nMIME-Version: 1.0\n\
                        Content-Type: multipart/alternative; boundary=\"xyz\"\n\n\
                        --xyz\nContent-Type: text/plain; charset=utf-8\n\n\
                        The ferry returns to service on Monday.\n\
                        --xyz\nContent-Type: text/html; charset=utf-8\n\n\
                        <html><body><p>The ferry returns to service on Monday.</p></body></html>\n\
                        --xyz--\n";
    assert_eq!(
        mail_words(dir, "alt.eml", alternative, false),
        "the ferry returns to service on monday\n"
    );
    let mixed = b"From: desk@example.org\nSubject: Floods\nMIME-Version: 1.0\n\
                  Content-Type: multipart/mixed; boundary=b\n\n\
                  --b\nContent-Type: text/plain; charset=utf-8\n\nRiver levels rose overnight.\n\
                  --b\nContent-Type: image/png; name=map.png\nContent-Disposition: attachment; filename=map.png\n\
                  Content-Transfer-Encoding: base64\n\niVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n\
                  --b\nContent-Type: text/plain; charset=utf-8\n\nRoads stay closed.\n\
                  --b--\n";
    assert_eq!(
        mail_words(dir, "mixed.eml", mixed, false),
        "river levels rose overnight roads stay closed\n"
    );
    let rfc2047 = b"From: =?utf-8?Q?Pr=C3=A9fecture?= <p@example.org>\n\
                    Subject: =?windows-1251?B?zu/l8ODy6OLt++Ug7e7i7vHy6A==?=\n\n\
                    Body.\n";
    assert_eq!(
        mail_words(dir, "subject.eml", rfc2047, true),
        "from préfecture p example org subject оперативные новости body\n"
    );
    let (body, _, _) = encoding_rs::WINDOWS_1251.encode(PAGES[0].1);
    let mut cp1251 = b"From: desk@example.ru\nSubject: news\nMIME-Version: 1.0\n\
                       Content-Type: text/plain; charset=windows-1251\nContent-Transfer-Encoding: 8bit\n\n"
        .to_vec();
    cp1251.extend_from_slice(&body);
    std::fs::write(dir.join("utf8.txt"), PAGES[0].1).unwrap();
    assert_eq!(
        mail_words(dir, "cp1251.eml", &cp1251, false),
        canon(dir, "utf8.txt", &[])
    );
    let explained = canon(dir, "cp1251.eml", &["--explain"]);
    assert!(
        explained.ends_with(
            "decoded:\n  - text/plain: windows-1251, declared by the transport (Content-Type charset)\n"
        ),
        "{explained}"
    );
}

#[test]
fn every_reading_command_counts_the_malformed_bytes_it_replaced() {
    let dir = temp();
    let folder = dir.path().join("pages");
    std::fs::create_dir(&folder).unwrap();
    let (_, paragraph) = PAGES[7];
    let mut bad = page("<meta charset=utf-8>", paragraph).into_bytes();
    let end = bad.len() - bad.iter().rev().position(|&b| b == b'<').unwrap() - 1;
    bad.splice(end..end, *b" \xC3 ");
    std::fs::write(folder.join("a.html"), bad).unwrap();
    std::fs::write(folder.join("b.html"), page("", paragraph)).unwrap();
    let csv = format!("id,text\n1,{}\n2,{}", PAGES[2].1, PAGES[2].1);
    let mut csv = encoding_rs::SHIFT_JIS.encode(&csv).0.into_owned();
    // 0xFF is no byte of Shift_JIS.
    csv.extend_from_slice(b"\xFF\n");
    std::fs::write(dir.path().join("sjis.csv"), &csv).unwrap();
    let runs: [&[&str]; 5] = [
        &["cluster", "pages"],
        &["reuse", "pages"],
        &["report", "pages", "-o", "r.html"],
        &["index", "add", "--db", "s.db", "pages"],
        &["dedup", "sjis.csv", "--encoding", "shift_jis"],
    ];
    for args in runs {
        let output = megashingle(dir.path()).args(args).output().unwrap();
        let err = common::stderr_of(&output);
        assert!(output.status.success(), "{args:?}: {err}");
        assert!(
            err.contains("; 1 malformed byte sequences read as U+FFFD"),
            "{args:?}: {err}"
        );
    }
}
