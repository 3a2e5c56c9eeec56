//! `megashingle report` and `index report`: the page holds every story and member, tables and
//! indexes give their stories, bad input gets one clear error line and leaves no file; and,
//! in headless Chromium (skipped with a printed reason where it is not installed), the page
//! runs its own script and nothing of hostile documents: each payload tries to change
//! `document.title` or to add an element whose id starts with `pwned`, and neither may happen.
//! The filter and the side-by-side view are driven through the URL fragment the script reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// Shared with the other test targets; not every helper is used here.
#[allow(dead_code)]
mod common;
use common::{megashingle, single_error_line, stderr_lines, temp};

/// The page's title; a payload that ran would change it.
const TITLE: &str = "Stories: megashingle report";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn news() -> PathBuf {
    root().join("fixtures").join("news")
}

/// Runs `report` (or `index report`) in `dir` with `args` and returns the page.
fn report(dir: &Path, args: &[&str]) -> String {
    let output = megashingle(dir)
        .args(args)
        .output()
        .expect("run megashingle");
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let at = args.iter().position(|a| *a == "-o").expect("an -o");
    std::fs::read_to_string(dir.join(args[at + 1])).expect("the report")
}

/// One story of a page as written: its members' ids and row numbers.
#[derive(Debug, Clone, PartialEq)]
struct PageStory {
    index: usize,
    members: Vec<String>,
}

/// The stories of a page as written, read from its markup (one story a line, one member row
/// a line): members' ids as shown, entities decoded. A story's line shows its
/// representative's id; each other member has a row.
fn stories_of(page: &str) -> Vec<PageStory> {
    let mut stories = Vec::new();
    for line in page.lines() {
        let story = line
            .strip_prefix("<details id=s")
            .or_else(|| line.strip_prefix("<p id=s"));
        if let Some(rest) = story {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            stories.push(PageStory {
                index: digits.parse().expect("a story number"),
                members: vec![between(line, "<bdi>", "</bdi>")],
            });
        } else if line.starts_with("<tr class=") {
            let story = stories.last_mut().expect("rows follow their story");
            let cells = &line[line.find('>').unwrap()..];
            story.members.push(between(cells, "<td>", "<td>"));
        }
    }
    stories
}

/// The text between the first `open` of a line and the next `close`, entities decoded.
fn between(line: &str, open: &str, close: &str) -> String {
    let start = line.find(open).expect("an id") + open.len();
    let end = start + line[start..].find(close).expect("an id's end");
    decode(&line[start..end])
}

fn decode(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

/// The ids of the fixtures, as `cluster` names the files of a folder.
fn fixture_ids() -> BTreeSet<String> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeSet<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
            } else {
                let id = path.strip_prefix(base).unwrap().to_string_lossy();
                out.insert(id.replace('\\', "/"));
            }
        }
    }
    let mut ids = BTreeSet::new();
    walk(&news(), &news(), &mut ids);
    ids
}

#[test]
fn the_report_shows_every_story_and_member_of_the_fixtures() {
    let dir = temp();
    let news = news();
    let page = report(
        dir.path(),
        &["report", news.to_str().unwrap(), "-o", "r.html", "-q"],
    );
    let stories = stories_of(&page);
    let shown: BTreeSet<String> = stories.iter().flat_map(|s| s.members.clone()).collect();
    assert_eq!(shown, fixture_ids());
    assert_eq!(stories.iter().map(|s| s.members.len()).sum::<usize>(), 44);
    // The nine stories of the fixtures come first, larger first, each under its
    // representative; then the single documents.
    let sizes: Vec<usize> = stories.iter().map(|s| s.members.len()).collect();
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]), "{sizes:?}");
    assert_eq!(sizes.iter().filter(|&&n| n > 1).count(), 9);
    // Each member's similarity and how it joined are on its row.
    assert!(page.contains("<details id=s0><summary><b>5</b><bdi>en/flood-newsletter.eml</bdi>"));
    assert!(page.matches("<td>direct · 0.").count() >= 20);
    // Without JavaScript, the page reads as written: only the controls and the side-by-side
    // view, which the script fills, are hidden.
    assert!(page.contains("<html lang=\"en\">\n"));
    let body = &page[page.find("<body>").unwrap()..page.find("<script type=").unwrap()];
    assert_eq!(body.matches(" hidden>").count(), 2);
    assert!(page.contains("<section id=\"controls\" class=\"controls\" hidden>"));
    assert!(page.contains("<aside id=\"view\" hidden></aside>"));
    // The side-by-side data holds exact comparisons with the shared passages.
    assert!(page.contains("<script type=\"application/json\" id=\"data\">{\"k\":3,"));
}

#[test]
fn the_same_stories_come_from_a_clusters_table() {
    let dir = temp();
    let news = news();
    let news = news.to_str().unwrap();
    let clustered = report(dir.path(), &["report", news, "-o", "a.html", "-q"]);
    megashingle(dir.path())
        .args(["cluster", news, "-o", "clusters.csv", "-q"])
        .assert()
        .success();
    let args = ["report", news, "--clusters", "clusters.csv", "-o", "b.html"];
    let tabled = report(dir.path(), &args);
    assert_eq!(stories_of(&clustered), stories_of(&tabled));
    // How each member joined is known only when the report clustered.
    assert!(tabled.contains("<td>not known<td"));
    assert!(!clustered.contains("<td>not known<td"));
    assert!(tabled.contains("stories as the table <bdi>clusters.csv</bdi> gives them"));
}

#[test]
fn a_table_that_does_not_cover_the_inputs_is_refused() {
    let dir = temp();
    let news = news();
    let news = news.to_str().unwrap();
    std::fs::write(
        dir.path().join("part.csv"),
        "doc_id,cluster_id\nen/bus-original.txt,x\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("r.html"), "an earlier report").unwrap();
    let output = megashingle(dir.path())
        .args(["report", news, "--clusters", "part.csv", "-o", "r.html"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = single_error_line(&output);
    assert!(
        line.ends_with(
            "43 of the inputs' documents are not in part.csv, such as \"en/atlas-courier.html\"; give the table made from these inputs"
        ),
        "{line}"
    );
    // Nothing was written over the earlier report.
    let kept = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    assert_eq!(kept, "an earlier report");
    std::fs::write(dir.path().join("bad.csv"), "id,story\na,b\n").unwrap();
    let output = megashingle(dir.path())
        .args(["report", news, "--clusters", "bad.csv", "-o", "r.html"])
        .output()
        .unwrap();
    let line = single_error_line(&output);
    assert!(line.ends_with("columns found: id, story"), "{line}");
}

#[test]
fn stdin_cannot_be_reported() {
    let dir = temp();
    let output = megashingle(dir.path())
        .args(["report", "-", "-o", "r.html"])
        .write_stdin("id,text\na,one two three four\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let line = single_error_line(&output);
    assert!(
        line.contains("stdin cannot be read twice: save it to a file"),
        "{line}"
    );
    assert!(!dir.path().join("r.html").exists());
}

#[test]
fn columns_and_times_are_shown_with_each_document() {
    let dir = temp();
    let text = "the river burst its banks after three days of rain and the town was flooded";
    let csv = format!(
        "id,text,published,site\na,\"{text}\",2026-11-30,<b>Herald</b>\nb,\"{text} again\",2026-11-29T10:00:00Z,Courier\n"
    );
    std::fs::write(dir.path().join("in.csv"), csv).unwrap();
    let args = [
        "report",
        "in.csv",
        "--time-column",
        "published",
        "--column",
        "site",
        "-o",
        "r.html",
    ];
    let page = report(dir.path(), &args);
    assert!(page.contains("<th>published<th>site<th>text"), "{page}");
    assert!(page.contains("<td>2026-11-30T00:00:00Z<td>&lt;b&gt;Herald&lt;/b&gt;<td"));
    // The representative's, in its story's summary.
    assert!(page.contains("<small>2026-11-29T10:00:00Z · Courier</small>"));
    let output = megashingle(dir.path())
        .args(["report", "in.csv", "--column", "source", "-o", "r.html"])
        .output()
        .unwrap();
    let line = single_error_line(&output);
    assert!(
        line.ends_with(
            "no column `source` (one of the columns asked for); columns found: id, text, \
             published, site; check the names given to --column"
        ),
        "{line}"
    );
}

#[test]
fn the_index_reports_the_stories_of_a_night() {
    let dir = temp();
    let news = news();
    let news = news.to_str().unwrap();
    megashingle(dir.path())
        .args([
            "index",
            "add",
            "--db",
            "stories.db",
            news,
            "-o",
            "added.csv",
            "-q",
        ])
        .assert()
        .success();
    let args = [
        "index",
        "report",
        "--db",
        "stories.db",
        news,
        "-o",
        "r.html",
        "-q",
    ];
    let page = report(dir.path(), &args);
    let stories = stories_of(&page);
    let shown: BTreeSet<String> = stories.iter().flat_map(|s| s.members.clone()).collect();
    assert_eq!(shown, fixture_ids());
    assert!(page.contains("stories of the index <bdi>stories.db</bdi>"));
    // Each story is named as the index names it: after the document that founded it.
    let founders: BTreeSet<String> = page
        .lines()
        .filter_map(|l| l.split("<small>story ").nth(1))
        .map(|rest| rest[..rest.find("</small>").unwrap()].to_owned())
        .collect();
    let added = std::fs::read_to_string(dir.path().join("added.csv")).unwrap();
    for founder in &founders {
        assert!(
            added.contains(&format!(",{founder},true,")),
            "{founder} founded no story"
        );
    }
    assert!(!founders.is_empty());
    // Documents not added are named.
    std::fs::write(
        dir.path().join("new.txt"),
        "a new text about something else entirely",
    )
    .unwrap();
    let output = megashingle(dir.path())
        .args([
            "index",
            "report",
            "--db",
            "stories.db",
            "new.txt",
            "-o",
            "r2.html",
        ])
        .output()
        .unwrap();
    let line = single_error_line(&output);
    assert!(
        line.ends_with("1 of the inputs' documents are not in the index stories.db, such as \"new.txt\"; add them with `megashingle index add` first"),
        "{line}"
    );
    assert!(!dir.path().join("r2.html").exists());
}

// ---------------------------------------------------------------------------------------------
// In a browser

/// Chromium, when installed.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Loads `page` (with `fragment`, the part of the URL after `#`) in headless Chromium and
/// returns the DOM once loaded (the page's script has run by then). `extra` are more flags.
fn dump_dom(browser: &Path, page: &Path, fragment: &str, extra: &[&str]) -> String {
    let profile = temp();
    let url = format!("file://{}#{fragment}", page.display());
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .args(["--dump-dom", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let mut stdout = child.stdout.take().expect("a pipe");
    let reader = std::thread::spawn(move || {
        let mut dom = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut dom).map(|_| dom)
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().expect("wait for chromium").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chromium did not finish with {url} in 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader
        .join()
        .expect("the reader")
        .expect("chromium's output")
}

/// An element's attributes: names and values.
type Attributes = Vec<(String, String)>;

/// The start tags of a serialized DOM, each as its name and its attributes, the content of
/// `<script>` and `<style>` skipped (raw text). Text never holds a raw `<`: the serializer
/// escapes it.
fn tags(dom: &str) -> Vec<(String, Attributes)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = dom[at..].find('<') {
        at += offset + 1;
        let rest = &dom[at..];
        if !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = rest[..name_end].to_ascii_lowercase();
        // Attributes up to the tag's end, minding quoted values.
        let mut attributes = Vec::new();
        let (mut i, bytes) = (name_end, rest.as_bytes());
        while i < bytes.len() && bytes[i] != b'>' {
            if bytes[i].is_ascii_whitespace() || bytes[i] == b'/' {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && !b" \t\n=>/".contains(&bytes[i]) {
                i += 1;
            }
            let name = rest[start..i].to_ascii_lowercase();
            let mut value = "";
            if i < bytes.len() && bytes[i] == b'=' {
                i += 1;
                let from;
                if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
                    let quote = bytes[i];
                    i += 1;
                    from = i;
                    while i < bytes.len() && bytes[i] != quote {
                        i += 1;
                    }
                    value = &rest[from..i];
                    i += 1;
                } else {
                    from = i;
                    while i < bytes.len() && !bytes[i].is_ascii_whitespace() && bytes[i] != b'>' {
                        i += 1;
                    }
                    value = &rest[from..i];
                }
            }
            attributes.push((name, value.to_owned()));
        }
        at += i;
        if name == "script" || name == "style" {
            let close = format!("</{name}");
            at += dom[at..].find(&close).unwrap_or(dom.len() - at);
        }
        found.push((name, attributes));
    }
    found
}

/// Elements of the page: anything else in a DOM came from a document.
const PAGE_TAGS: [&str; 44] = [
    "html",
    "head",
    "meta",
    "title",
    "style",
    "script",
    "body",
    "header",
    "h1",
    "h2",
    "h3",
    "p",
    "section",
    "dl",
    "div",
    "dt",
    "dd",
    "figure",
    "figcaption",
    "svg",
    "rect",
    "line",
    "text",
    "details",
    "summary",
    "pre",
    "input",
    "label",
    "span",
    "button",
    "main",
    "b",
    "bdi",
    "small",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "aside",
    "footer",
    "mark",
    "br",
];

/// Checks that no payload ran and no document markup became an element: the title is the
/// page's, every element is one the page makes, no element has an event handler or an
/// attribute that names `pwned`, and there are the page's two scripts and one style sheet
/// only.
fn assert_nothing_ran(dom: &str) {
    assert!(
        dom.contains(&format!("<title>{TITLE}</title>")),
        "the title changed: {}",
        &dom[..dom.len().min(2000)]
    );
    let found = tags(dom);
    for (name, attributes) in &found {
        assert!(
            PAGE_TAGS.contains(&name.as_str()),
            "a <{name}> element: {attributes:?}"
        );
        for (attribute, value) in attributes {
            assert!(!attribute.starts_with("on"), "<{name} {attribute}>");
            let named = value.to_ascii_lowercase().contains("pwned");
            assert!(!named, "<{name} {attribute}={value:?}>");
        }
    }
    let count = |tag: &str| found.iter().filter(|(n, _)| n == tag).count();
    assert_eq!((count("script"), count("style")), (2, 1));
}

/// The class attribute of the element whose id is `id`.
fn classes_of(dom: &str, id: &str) -> String {
    let marker = format!(" id=\"{id}\"");
    let at = dom
        .find(&marker)
        .unwrap_or_else(|| panic!("no element {id}"));
    let tag_start = dom[..at].rfind('<').unwrap();
    let tag = &dom[tag_start..at + dom[at..].find('>').unwrap()];
    tag.split("class=\"")
        .nth(1)
        .map(|c| c[..c.find('"').unwrap()].to_owned())
        .unwrap_or_default()
}

/// Hostile documents: payloads in ids, texts (as text of a page, its entities decoded, so
/// they reach the page as text), and a column. Each tries to change the title or to add an
/// element whose id starts with `pwned`. Three of them copy a story of the fixtures, so they
/// join it and are compared with its representative.
fn hostile_csv(flood: &str) -> String {
    let payloads = [
        "<img src=x onerror=\"document.title='PWNED-1'\">",
        "<svg onload=\"document.body.appendChild(document.createElement('i')).id='pwned-2'\">",
        "</script><script>document.title='PWNED-3'</script>",
        "<!--<script>document.title='PWNED-4'</script>-->",
        "</textarea><img src=x onerror=\"document.title='PWNED-5'\">",
        "<a id=\"pwned-6\" href=\"javascript:document.title='PWNED-6'\">click me</a>",
        "</style><div id=\"pwned-7\">styled</div>",
        "\"><iframe id=\"pwned-8\" src=\"javascript:parent.document.title='PWNED-8'\"></iframe>",
        "<meta http-equiv=\"refresh\" content=\"0;url=javascript:document.title='PWNED-9'\">",
        "\u{2028}\u{2029}'-document.title='PWNED-10'-'",
    ];
    let all = payloads.join(" ");
    // As page text: the entities are decoded into the visible text.
    let escaped = html_escape::encode_text(&all).to_string();
    let field = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut rows = vec!["id,text,source".to_owned()];
    let mut row = |id: &str, text: &str, source: &str| {
        rows.push(format!("{},{},{}", field(id), field(text), field(source)));
    };
    // A copy of a story with the payloads in its lead, then one with them past the lead (in
    // the data block), then a plain-text copy (html never guesses: no tags).
    row(
        "<script>document.title='PWNED-id'</script>",
        &format!(
            "<html><body><p>zebracorn {escaped}</p><p>{}</p></body></html>",
            html_escape::encode_text(flood)
        ),
        "<img src=x onerror=\"document.title='PWNED-source'\">",
    );
    row(
        "\"><img src=x onerror=\"document.body.appendChild(document.createElement('b')).id='pwned-id'\">",
        &format!("<html><body><p>{}</p><p>{escaped}</p></body></html>", html_escape::encode_text(flood)),
        "plain",
    );
    row(
        "evil\u{202E}lmth.exe\u{200B}\u{2066}",
        &format!("{flood}\n\n{}", all.replace(['<', '>'], " ")),
        "rtl",
    );
    // A document alone, with the payloads in its lead.
    row(
        "javascript:document.title='PWNED-alone'",
        &format!("<p>{escaped} and nothing else of any story at all here</p>"),
        "</textarea>",
    );
    rows.join("\n") + "\n"
}

#[test]
fn hostile_documents_show_as_text_and_never_run_in_a_browser() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium); the browser tests did not run");
        return;
    };
    let dir = temp();
    let flood = std::fs::read_to_string(news().join("en/flood-original.txt")).unwrap();
    std::fs::write(dir.path().join("hostile.csv"), hostile_csv(&flood)).unwrap();
    let news = news();
    let args = [
        "report",
        news.to_str().unwrap(),
        "hostile.csv",
        "--column",
        "source",
        "-o",
        "r.html",
        "-q",
    ];
    let page = report(dir.path(), &args);
    let path = dir.path().join("r.html");
    let stories = stories_of(&page);
    let documents: usize = stories.iter().map(|s| s.members.len()).sum();
    assert_eq!(documents, 44 + 4);
    // The three copies joined the flood story, and the lone one stands alone.
    let flood_story = stories
        .iter()
        .find(|s| s.members.iter().any(|m| m == "en/flood-original.txt"))
        .unwrap();
    for id in ["<script>document.title='PWNED-id'</script>", "\"><img src=x onerror=\"document.body.appendChild(document.createElement('b')).id='pwned-id'\">"] {
        assert!(flood_story.members.iter().any(|m| m == id), "{flood_story:?}");
    }

    // Without a filter: the script ran, paged the stories, and nothing else ran.
    let dom = dump_dom(&browser, &path, "", &[]);
    assert_nothing_ran(&dom);
    assert!(
        dom.contains("<html lang=\"en\" class=\"paged\" data-parsed=\"")
            && dom.contains(" data-ready=\""),
        "the page's script did not run: {}",
        &dom[..dom.len().min(3000)]
    );
    assert!(!dom.contains("data-error"));
    // Every story and every member is in the DOM.
    for story in &stories {
        assert!(dom.contains(&format!(" id=\"s{}\"", story.index)));
        for member in story.members.iter().filter(|m| !m.starts_with("evil")) {
            let shown = html_escape::encode_text(member);
            let (in_line, in_row) = (format!("<bdi>{shown}</bdi>"), format!("<td>{shown}</td>"));
            let found = dom.contains(&in_line) || dom.contains(&in_row);
            assert!(found, "member {member:?} is not in the DOM");
        }
    }
    // The RTL override and zero-width characters of an id show as code points.
    assert!(dom.contains("evil<span class=\"cp\">U+202E</span>lmth.exe<span class=\"cp\">U+200B</span><span class=\"cp\">U+2066</span></"));
    // The payloads are there as text.
    assert!(dom.contains("&lt;img src=x onerror=\"document.title='PWNED-1'\"&gt;"));

    // The filter: one story holds "zebracorn", and only it is shown, its member marked.
    let dom = dump_dom(&browser, &path, "q=zebracorn", &[]);
    assert_nothing_ran(&dom);
    let on: Vec<usize> = stories
        .iter()
        .filter(|s| {
            classes_of(&dom, &format!("s{}", s.index))
                .split(' ')
                .any(|c| c == "on")
        })
        .map(|s| s.index)
        .collect();
    assert_eq!(on, [flood_story.index]);
    assert!(
        dom.contains(" hit\"") || dom.contains("\"hit\""),
        "no member marked"
    );
    let count = format!("stories 1–1 of 1 matching ({} in all)", stories.len());
    assert!(
        dom.contains(&count),
        "{}",
        &dom[dom.find("id=\"count\"").unwrap()..][..200]
    );
    // By size: only stories of 6 or more.
    let dom = dump_dom(&browser, &path, "size=6", &[]);
    for s in &stories {
        let shown = classes_of(&dom, &format!("s{}", s.index))
            .split(' ')
            .any(|c| c == "on");
        assert_eq!(
            shown,
            s.members.len() >= 6,
            "story {} of {}",
            s.index,
            s.members.len()
        );
    }

    // Side by side: each hostile member of the flood story with its representative.
    for (position, member) in flood_story.members.iter().enumerate().skip(1) {
        let dom = dump_dom(
            &browser,
            &path,
            &format!("view={}.{position}", flood_story.index),
            &[],
        );
        assert_nothing_ran(&dom);
        let view = &dom[dom.find("<aside id=\"view\"").expect("the view")..];
        let view = &view[..view.find("</aside>").unwrap()];
        assert!(
            !view.starts_with("<aside id=\"view\" hidden"),
            "the view is closed"
        );
        assert!(
            view.contains("<mark>"),
            "no shared passage marked for {member:?}"
        );
        assert!(view.contains("exact Jaccard"));
    }
}

#[test]
fn the_tag_reader_sees_through_quotes_and_skips_scripts() {
    let dom = "<p a=\"x>y\" onclick=z>t &lt;b id=\"q\"&gt;</p><script>if (a<b) {}</script><i>";
    let found = tags(dom);
    let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["p", "script", "i"]);
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    assert_eq!(found[0].1, [pair("a", "x>y"), pair("onclick", "z")]);
}

#[test]
fn stderr_names_the_report() {
    let dir = temp();
    let news = news();
    let output = megashingle(dir.path())
        .args(["report", news.to_str().unwrap(), "-o", "r.html"])
        .output()
        .unwrap();
    let lines = stderr_lines(&output);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("megashingle: report of 44 documents in 15 stories (9 of 2 or more) written to r.html ("),
        "{}",
        lines[0]
    );
}

/// The `on` members and stories of a dumped DOM: the elements whose class has `on`.
fn shown_count(dom: &str, tag: &str) -> usize {
    tags(dom)
        .iter()
        .filter(|(name, attributes)| {
            name == tag
                && (attributes.iter()).any(|(a, v)| a == "class" && v.split(' ').any(|c| c == "on"))
        })
        .count()
}

#[test]
fn large_stories_and_the_story_list_page_in_a_browser() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium); the browser tests did not run");
        return;
    };
    // One story of 130 copies of a text, each with one word of its own, and 60 documents
    // alone: 61 stories, more than a page of 50, and a story of more than 100 members.
    let dir = temp();
    let base: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
    let mut csv = String::from("id,text\n");
    for copy in 0..130 {
        let mut words = base.clone();
        words[(copy * 7) % 200] = format!("own{copy}");
        csv.push_str(&format!("copy-{copy:03},{}\n", words.join(" ")));
    }
    for alone in 0..60 {
        let words: Vec<String> = (0..40).map(|j| format!("a{alone}x{j}")).collect();
        csv.push_str(&format!("alone-{alone:02},{}\n", words.join(" ")));
    }
    std::fs::write(dir.path().join("in.csv"), csv).unwrap();
    let page = report(dir.path(), &["report", "in.csv", "-o", "r.html", "-q"]);
    let stories = stories_of(&page);
    assert_eq!(stories.len(), 61);
    assert_eq!(stories[0].members.len(), 130);
    let path = dir.path().join("r.html");
    // The first page of stories, with the large story open: its first 100 rows (members 2
    // to 101) are shown, and a pager says so.
    let dom = dump_dom(&browser, &path, "open=0", &[]);
    assert_nothing_ran(&dom);
    assert_eq!(shown_count(&dom, "details") + shown_count(&dom, "p"), 50);
    assert_eq!(shown_count(&dom, "tr"), 100);
    assert!(dom.contains("members 2–101 of 130"), "no pager");
    // The second page holds the last 11 stories.
    let dom = dump_dom(&browser, &path, "page=2", &[]);
    assert_eq!(shown_count(&dom, "details") + shown_count(&dom, "p"), 11);
    assert!(dom.contains("stories 51–61 of 61"));
    // A filter that finds a member past the first 100 rows opens its page of members.
    let far = &stories[0].members[120];
    let dom = dump_dom(&browser, &path, &format!("q={far}"), &[]);
    assert!(
        dom.contains("members 102–130 of 130"),
        "the hit's page is not shown"
    );
    assert_eq!(shown_count(&dom, "tr"), 29);
}

// The reuse page

/// The reuse page's title; a payload that ran would change it.
const REUSE_TITLE: &str = "Reuse: megashingle report";

/// A report, a brief that lifts its first paragraph among hostile markup, and an unrelated text.
fn reuse_csv(flood: &str) -> String {
    let lifted: String = flood
        .split_whitespace()
        .take(90)
        .collect::<Vec<_>>()
        .join(" ");
    let brief = format!(
        "In brief: &lt;script&gt;document.title='PWNED-text'&lt;/script&gt; {lifted} &lt;img src=x onerror=\"document.title='PWNED-img'\"&gt;"
    );
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    format!(
        "id,text\n{},{}\n<i id=pwned>brief</i>,{}\nrecipe,{}\n",
        "report",
        quote(flood),
        quote(&brief),
        quote("a recipe for bread with flour water salt and yeast, kneaded, left to rise and baked in a hot oven for forty minutes")
    )
}

#[test]
fn reuse_pairs_show_side_by_side_with_passages_marked_and_nothing_runs() {
    let dir = temp();
    let flood = std::fs::read_to_string(news().join("en/flood-original.txt")).unwrap();
    std::fs::write(dir.path().join("docs.csv"), reuse_csv(&flood)).unwrap();
    let page = report(
        dir.path(),
        &["report", "--reuse", "docs.csv", "-o", "r.html", "-q"],
    );
    // One pair: the brief and the report, the brief's id escaped, passages marked on both.
    assert_eq!(page.matches("<details").count(), 1, "{page}");
    assert!(page.contains("<bdi>&lt;i id=pwned&gt;brief&lt;/i&gt;</bdi> ⇄ <bdi>report</bdi>"));
    let sections: Vec<&str> = page.split("<section>").skip(1).collect();
    assert_eq!(sections.len(), 2);
    for section in &sections {
        assert!(section.contains("<mark>"), "{section}");
    }
    assert!(!page.contains("<script") && !page.contains("<img"));
    assert!(page.contains("3 documents · 1 pairs sharing a passage"));
    // --reuse shows pairs, --clusters stories: not both.
    let output = megashingle(dir.path())
        .args([
            "report",
            "--reuse",
            "docs.csv",
            "--clusters",
            "c.csv",
            "-o",
            "x.html",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--clusters"));
    assert!(!dir.path().join("x.html").exists());

    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium); the browser part did not run");
        return;
    };
    let dom = dump_dom(&browser, &dir.path().join("r.html"), "", &[]);
    assert!(
        dom.contains(&format!("<title>{REUSE_TITLE}</title>")),
        "{dom}"
    );
    let found = tags(&dom);
    for (name, attributes) in &found {
        assert!(
            !matches!(name.as_str(), "script" | "img" | "i"),
            "a <{name}> element: {attributes:?}"
        );
        assert!(attributes
            .iter()
            .all(|(a, v)| !a.starts_with("on") && !v.contains("pwned")));
    }
    assert!(found.iter().filter(|(n, _)| n == "mark").count() >= 2);
}
