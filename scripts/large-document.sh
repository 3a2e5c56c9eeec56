#!/usr/bin/env bash
# Peak memory of `megashingle cluster` on very large single documents.
#
#   scripts/large-document.sh [BINARY]   (default: builds and uses target/release/megashingle)
#
# Generates, once, under target/large-document/ (Python 3 standard library only, fixed seed):
#   - plain-100.txt   100 MB of plain text: paragraphs of ~80-character lines, words drawn
#                     from a 60,000-word vocabulary (a quarter Cyrillic), so most shingles are
#                     distinct as in real text;
#   - page-100.html   100 MB of HTML: the same kind of text in <p> elements inside <article>,
#                     with inline tags, links, entities, and navigation, scripts and footers
#                     every few hundred paragraphs;
#   - two-200/        two 200 MB plain-text documents (a folder of two .txt files);
#   - record-100.csv and record-100.jsonl: plain-100.txt as the text of one CSV and one JSONL
#                     record.
# Then runs `megashingle cluster` on each under GNU time (default configuration, output to
# /dev/null; the two-document folder with -j 2 as well as -j 1) and prints the peak RSS in MB
# and as a multiple of the input's size, and the wall time, after a run on a one-line
# document (what the binary costs before any text). Each run takes a few seconds to half a
# minute in a release build; the whole script about two minutes once the inputs exist
# (generating them takes a few minutes more, once).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [ $# -gt 0 ]; then
  bin=$1
else
  echo "large-document.sh: building (release)" >&2
  cargo build --release --quiet
  bin=$root/target/release/megashingle
fi
[ -x /usr/bin/time ] || { echo "large-document.sh: /usr/bin/time (GNU time) is missing; apt-get install time" >&2; exit 2; }
dir=target/large-document
mkdir -p "$dir/two-200" "$dir/tiny"

generate() { # KIND MB OUT SEED
  python3 - "$@" <<'PY'
import json, random, sys
kind, mb, out, seed = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = random.Random(seed)
latin, cyrillic = "abcdefghijklmnoprstuvwy", "абвгдежзиклмнопрстуфхцчшыэюя"
def word(alphabet):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(2, 9)))
vocabulary = [word(cyrillic if i % 4 == 0 else latin) for i in range(60000)]
cumulative, total = [], 0.0
for i in range(len(vocabulary)):
    total += 1 / (i + 10)  # Zipf-like word frequencies
    cumulative.append(total)
target = mb * 1_000_000
def paragraph():
    words = rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(40, 160))
    words[0] = words[0].capitalize()
    lines, line, width = [], [], 0
    for w in words:
        line.append(w)
        width += len(w) + 1
        if width > 78:
            lines.append(" ".join(line))
            line, width = [], 0
    lines.append(" ".join(line) + ".")
    return lines
def plain():
    size = 0
    while size < target:
        text = "\n".join(paragraph()) + "\n\n"
        size += len(text.encode())
        yield text
def html():
    yield "<!DOCTYPE html><html><head><title>Large page</title></head><body>\n"
    yield "<nav><a href=/>Home</a> | <a href=/w>World</a> | <a href=/s>Sport</a></nav>\n<article>\n"
    size, n = 0, 0
    while size < target:
        n += 1
        lines = paragraph()
        lines[1] = lines[1].replace(" ", " <b>", 1) + "</b> &amp; <a href=/x>link</a>&nbsp;here"
        text = "<p>" + "\n".join(lines) + "</p>\n"
        if n % 300 == 0:
            text += "<div class=share><a href=/f>Share</a> <a href=/t>Tweet</a></div>\n<script>var x = 1;</script>\n"
        size += len(text.encode())
        yield text
    yield "</article>\n<footer>&copy; Large page</footer></body></html>\n"
with open(out, "w", encoding="utf-8") as f:
    if kind == "csv":
        f.write("id,text\nlarge,\"")
        for t in plain():
            f.write(t.replace('"', '""'))
        f.write('"\n')
    elif kind == "jsonl":
        f.write('{"id": "large", "text": "')
        for t in plain():
            f.write(json.dumps(t, ensure_ascii=False)[1:-1])
        f.write('"}\n')
    else:
        for t in (html() if kind == "html" else plain()):
            f.write(t)
PY
}
make_once() { # OUT KIND MB SEED
  if [ ! -s "$1" ]; then
    echo "large-document.sh: generating $1" >&2
    generate "$2" "$3" "$1.tmp" "$4"
    mv "$1.tmp" "$1"
  fi
}
make_once "$dir/plain-100.txt" plain 100 1
make_once "$dir/page-100.html" html 100 2
make_once "$dir/two-200/a.txt" plain 200 3
make_once "$dir/two-200/b.txt" plain 200 4
make_once "$dir/record-100.csv" csv 100 1
make_once "$dir/record-100.jsonl" jsonl 100 1
echo "A line of a few words, far fewer than any document here." >"$dir/tiny/tiny.txt"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-24s %8s %10s %13s %8s %9s\n' input threads "input MB" "peak RSS MB" "× input" seconds
measure() { # LABEL THREADS INPUT
  local bytes
  bytes=$(du -b -L -s "$3" | cut -f1)
  /usr/bin/time -v -o "$work/time" "$bin" cluster "$3" --quiet -j "$2" >/dev/null 2>"$work/err" || {
    cat "$work/err" "$work/time" >&2
    echo "large-document.sh: megashingle cluster $3 failed" >&2
    exit 1
  }
  awk -v l="$1" -v t="$2" -v b="$bytes" '
    /Elapsed \(wall clock\)/ { n = split($NF, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i] }
    /Maximum resident set size/ { rss = $NF * 1024 }
    END {
      ratio = b >= 1e6 ? sprintf("%.2f", rss / b) : "-"
      printf "%-24s %8s %10.1f %13.1f %8s %9.2f\n", l, t, b / 1e6, rss / 1e6, ratio, s
    }' "$work/time"
}
measure "one-line document" 1 "$dir/tiny"
measure "plain text 100 MB" 1 "$dir/plain-100.txt"
measure "HTML 100 MB" 1 "$dir/page-100.html"
measure "CSV record 100 MB" 1 "$dir/record-100.csv"
measure "JSONL record 100 MB" 1 "$dir/record-100.jsonl"
measure "two texts of 200 MB" 1 "$dir/two-200"
measure "two texts of 200 MB" 2 "$dir/two-200"
