#!/usr/bin/env python3
"""Generates a large, deterministic, news-like corpus for performance measurements.

    scripts/gen-corpus N OUT.csv [SEED] [--truth TRUTH.csv] [--base DOCS.csv]
                       [--large-families | --running-stories]

Writes a CSV `id,text` of N documents, about 2.5 KB each on average, the same bytes for the same
N and SEED (default 1) and options. OUT.csv `-` writes to standard output (pipe it into
`megashingle cluster -` or `zstd`). Python 3 standard library only.

Base texts are the `text` column of ../shared/data/rewrites-dev/docs.csv (one text per true
cluster when truth.csv lies beside it) when that file exists, else the files under
fixtures/news/; `--base DOCS.csv` names another such file (e.g. that one from a checkout whose
../shared is elsewhere). HTML is stripped crudely. From the base texts' sentences and word stream, each
cluster gets a new original story: a few pool sentences kept whole (each used about twice in
the whole corpus), the rest new sentences made of random word pairs of the pool's word stream,
so stories stay distinct however large N is while word frequencies stay those of real text.
The cluster's other members are variants of it: word substitutions, sentence drops and
reorders, truncation to the lead, sometimes a new title.

The mix, by design:
- cluster sizes: 70% of clusters are singletons, the rest follow a power law (p ~ s^-2.5)
  from 2 up to 50 documents, so about 37% of documents are singletons, 36% are in clusters of
  2-5 and 8% in clusters of 20-50;
- about a quarter of the documents are Cyrillic (ru/uk/bg, as the base pool allows), the rest
  English;
- about a tenth are HTML pages in one of a few site templates (header, nav, related links,
  footer, cookie banner, scripts and styles);
- about 30% carry the same ~60-word legal disclaimer paragraph;
- ids are scrambled, and output order is locally shuffled, so a cluster's members are neither
  adjacent in id order nor always adjacent in the file.

`--large-families` makes a corpus of large copy families instead, the worst case for memory:
half the clusters are singletons, the rest follow p ~ s^-1.6 from 2 up to 2,000 documents
(wire copy picked up by hundreds of sites), and half of a cluster's other members are verbatim
copies of its original (in their own page template, with or without the disclaimer) rather
than rewrites. Without it the output is byte for byte what it always was.

`--running-stories` makes the families of a news desk's running stories: as
`--large-families`, but up to 300 documents a family (a war, an election, a disaster: follow-ups,
rewrites and syndicated copies). `scripts/split-nights` deals such a corpus into nights in
which the stories grow night after night.

The output is streamed: memory stays flat whatever N is. A one-line summary goes to stderr.
`--truth FILE` also writes `id,cluster_id` for scoring the clustering.
"""

import array
import bisect
import csv
import html
import math
import operator
import os
import random
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CYRILLIC_SHARE = 0.25
HTML_SHARE = 0.10
DISCLAIMER_SHARE = 0.30
SINGLETON_CLUSTERS = 0.70
MAX_CLUSTER = 50
# Mean article body in bytes; HTML templates and the disclaimer bring the mean to ~2.5 KB.
BODY_MEAN_BYTES = 2090
BODY_SIGMA = 0.55
SHUFFLE_WINDOW = 2048
# A 4-byte unsigned array type, for random indices drawn from random bytes.
INDEX_TYPE = next(t for t in "IL" if array.array(t).itemsize == 4)

DISCLAIMER = (
    "Disclaimer: This article is provided for general information only and does not "
    "constitute legal, financial or professional advice. While every effort has been made to "
    "ensure accuracy at the time of publication, the publisher accepts no liability for any "
    "loss or damage arising from reliance on its contents. Reproduction in whole or in part "
    "without prior written permission is prohibited. All rights reserved."
)

# Site templates: (language, name, tagline, nav items, related heading, footer, cookie text).
SITES = [
    ("en", "The Daily Herald", "Independent news since 1887",
     ["Home", "World", "Politics", "Business", "Sport", "Culture", "Opinion", "Weather"],
     "Most read",
     "© The Daily Herald Media Group. Registered office: 12 Market Street. "
     "Contact the newsroom: news@dailyherald.example. Terms of use · Privacy policy",
     "We use cookies to personalise content and ads, to provide social media features and to "
     "analyse our traffic. By continuing to browse you agree to our use of cookies."),
    ("en", "Northgate Courier", "Your region, every day",
     ["News", "Local", "Crime", "Property", "Jobs", "Motors", "Announcements"],
     "Related stories",
     "Northgate Courier is a member of the Independent Press Standards Organisation. "
     "Subscribe to our newsletter · Advertise with us · Contact us",
     "This website uses cookies to improve your experience. Accept all cookies or manage "
     "your preferences in the settings."),
    ("en", "Westfield Post", "News that matters to you",
     ["Latest", "US", "World", "Tech", "Science", "Health", "Entertainment", "Video"],
     "More from Westfield Post",
     "Copyright Westfield Post Inc. All rights reserved. Do not sell my personal "
     "information · Accessibility · Sitemap",
     "Westfield Post and our partners use cookies and similar technologies for analytics "
     "and advertising. Click accept to continue."),
    ("ru", "Городской вестник", "Новости города и области",
     ["Главная", "Город", "Политика", "Экономика", "Происшествия", "Спорт", "Культура"],
     "Читайте также",
     "© Городской вестник. Сетевое издание зарегистрировано Роскомнадзором. "
     "При использовании материалов ссылка на сайт обязательна.",
     "Мы используем файлы cookie, чтобы сайт работал лучше. Оставаясь на сайте, вы "
     "соглашаетесь с политикой конфиденциальности."),
    ("uk", "Край.Інфо", "Новини вашого краю",
     ["Головна", "Новини", "Політика", "Економіка", "Спорт", "Культура", "Погода"],
     "Читайте також",
     "© Край.Інфо. Усі права захищені. Використання матеріалів дозволяється за умови "
     "посилання на сайт.",
     "Ми використовуємо файли cookie для покращення роботи сайту. Продовжуючи перегляд, "
     "ви погоджуєтеся з нашою політикою."),
    ("bg", "Новини Днес", "Актуално от страната и света",
     ["Начало", "България", "Свят", "Икономика", "Спорт", "Култура", "Времето"],
     "Най-четени",
     "© Новини Днес. Всички права запазени. Условия за ползване · Поверителност",
     "Този сайт използва бисквитки, за да подобри вашето преживяване. Продължавайки, вие се "
     "съгласявате с използването им."),
]

BYLINES = {
    "en": ["By staff reporter", "By our correspondent", "Agency report", "By the news desk"],
    "ru": ["Корреспондент издания", "По материалам агентств", "Отдел новостей"],
    "uk": ["Кореспондент видання", "За матеріалами агенцій", "Відділ новин"],
    "bg": ["Репортер на изданието", "По материали на агенции", "Редакция новини"],
}

TITLE_PUNCTUATION = str.maketrans("", "", ".,;:!?\"«»“”()")
TAG_BLOCK = re.compile(r"<(script|style)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
TAG_BREAK = re.compile(r"<\s*/?\s*(p|br|div|h[1-6]|li|tr|article|section|header|footer)\b[^>]*>", re.I)
TAG_ANY = re.compile(r"<[^>]{0,2000}>")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")
LETTER = re.compile(r"[^\W\d_]")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
GOOD_TOKEN = re.compile(r"^[\w'’«»\"“”„(),.:;!?–—-]{1,24}$")


def strip_html(text):
    """Crude HTML to text: drops scripts, styles and comments, breaks lines at blocks."""
    if "<" not in text:
        return html.unescape(text) if "&" in text else text
    text = TAG_BLOCK.sub(" ", text)
    text = TAG_BREAK.sub("\n", text)
    text = TAG_ANY.sub(" ", text)
    return html.unescape(text)


def strip_mail_headers(text):
    """Drops an RFC 5322 header block at the start of an .eml file."""
    head, sep, body = text.replace("\r\n", "\n").partition("\n\n")
    if sep and re.match(r"^[A-Za-z-]+:", head):
        return body
    return text


def language_of(text):
    sample = text[:4000]
    letters = len(LETTER.findall(sample))
    cyrillic = len(CYRILLIC.findall(sample))
    if letters == 0 or cyrillic < 0.3 * letters:
        return "en"
    if re.search(r"[іїєґІЇЄҐ]", sample):
        return "uk"
    if re.search(r"[ыэЫЭ]", sample):
        return "ru"
    if "ъ" in sample:
        return "bg"
    return "ru"


def base_texts(docs=None):
    """The base texts and where they came from: `docs` (a CSV with a text column), else
    ../shared/data/rewrites-dev/docs.csv when it exists, else fixtures/news/."""
    if docs is not None and not os.path.isfile(docs):
        sys.exit(f"gen-corpus: --base {docs}: no such file")
    docs = docs or os.path.join(ROOT, "..", "shared", "data", "rewrites-dev", "docs.csv")
    data = os.path.dirname(docs)
    if os.path.isfile(docs):
        csv.field_size_limit(1 << 30)
        cluster_of = {}
        truth = os.path.join(data, "truth.csv")
        if os.path.isfile(truth):
            with open(truth, encoding="utf-8", newline="") as f:
                cluster_of = {r["id"]: r["cluster_id"] for r in csv.DictReader(f)}
        seen, texts = set(), []
        with open(docs, encoding="utf-8", newline="") as f:
            for row in csv.DictReader(f):
                cluster = cluster_of.get(row.get("id"))
                if cluster is not None:
                    if cluster in seen:
                        continue
                    seen.add(cluster)
                texts.append(strip_html(row["text"]))
        return texts, os.path.normpath(docs)
    folder = os.path.join(ROOT, "fixtures", "news")
    texts = []
    for directory, subdirs, files in sorted(os.walk(folder)):
        subdirs.sort()
        for name in sorted(files):
            if not name.endswith((".txt", ".html", ".htm", ".eml")):
                continue
            with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as f:
                text = f.read().lstrip("\ufeff")
            if name.endswith(".eml"):
                text = strip_mail_headers(text)
            texts.append(strip_html(text))
    if not texts:
        sys.exit(f"gen-corpus: no base texts: neither {docs} nor {folder} has any")
    return texts, os.path.relpath(folder, ROOT)


class Pool:
    """One language's material: its word stream and its whole sentences."""

    def __init__(self):
        self.tokens = []
        self.sentences = []

    def add(self, text):
        for line in text.splitlines():
            words = line.split()
            if not words:
                continue
            good = [w for w in words if GOOD_TOKEN.match(w) and LETTER.search(w)]
            self.tokens.extend(good)
            if len(good) < len(words):
                continue
            for sentence in SENTENCE_END.split(line):
                words = sentence.split()
                if 6 <= len(words) <= 40:
                    self.sentences.append(words)

    def finish(self):
        tokens = self.tokens
        self.n = len(tokens)
        # Word pairs of the stream: new sentences are runs of random pairs, so each 3-word
        # shingle that spans two pairs is new, and word frequencies stay those of the pool.
        self.pairs = tuple(f"{a} {b}" for a, b in zip(tokens, tokens[1:]))
        total = sum(len(t.encode("utf-8")) + 1 for t in tokens)
        self.bytes_per_word = total / max(1, self.n)


def build_pools(texts):
    pools = {}
    for text in texts:
        pools.setdefault(language_of(text), Pool()).add(text)
    pools = {lang: p for lang, p in pools.items() if len(p.tokens) >= 200}
    for p in pools.values():
        p.finish()
    if "en" not in pools:
        sys.exit("gen-corpus: the base texts hold too few English words")
    return pools


# The --large-families mix: (singleton share, largest cluster, size exponent, copy share).
STANDARD_FAMILIES = (SINGLETON_CLUSTERS, MAX_CLUSTER, 2.5, 0.0)
LARGE_FAMILIES = (0.5, 2000, 1.6, 0.5)
RUNNING_FAMILIES = (0.5, 300, 1.6, 0.5)


class Generator:
    def __init__(self, pools, seed, n_docs, families=STANDARD_FAMILIES):
        self.rng = random.Random(seed)
        self.singletons, max_cluster, exponent, self.copy_share = families
        self.pools = pools
        cyrillic = sorted(lang for lang in pools if lang != "en")
        weights = [len(pools[lang].tokens) for lang in cyrillic]
        total = sum(weights)
        self.languages = ["en"] + cyrillic
        share = CYRILLIC_SHARE if cyrillic else 0.0
        cumulative, acc = [], 1.0 - share
        cumulative.append(acc)
        for w in weights:
            acc += share * w / total
            cumulative.append(acc)
        self.language_cum = cumulative
        # Cluster sizes: singletons, else p(s) ~ s^-2.5 for s in 2..MAX_CLUSTER.
        sizes = list(range(2, max_cluster + 1))
        weights = [s ** -exponent for s in sizes]
        acc, self.size_cum = 0.0, []
        for w in weights:
            acc += w / sum(weights)
            self.size_cum.append(acc)
        self.sizes = sizes
        mean_size = self.singletons + (1 - self.singletons) * sum(
            s * w for s, w in zip(sizes, weights)) / sum(weights)
        expected_sentences = n_docs / mean_size * BODY_MEAN_BYTES / 150
        # Whole pool sentences are kept in a story at a rate that uses each about twice
        # overall, so stories stay distinct at any N (the rest are made of word pairs).
        pool_sentences = sum(len(p.sentences) for p in pools.values())
        self.verbatim = min(0.3, 2.0 * pool_sentences / max(1.0, expected_sentences))
        self.sites = {}
        for site in SITES:
            self.sites.setdefault(site[0], []).append(site)

    def language(self):
        i = bisect.bisect(self.language_cum, self.rng.random())
        return self.languages[min(i, len(self.languages) - 1)]

    def cluster_size(self):
        if self.rng.random() < self.singletons:
            return 1
        return self.sizes[min(len(self.sizes) - 1, bisect.bisect(self.size_cum, self.rng.random()))]

    def pick(self, table, k):
        """`k` >= 2 random items of `table` (a tuple): faster than random.choices."""
        n = len(table)
        indices = array.array(INDEX_TYPE, self.rng.randbytes(4 * k))
        return operator.itemgetter(*[(i * n) >> 32 for i in indices])(table)

    def title(self, pool):
        title = " ".join(self.pick(pool.pairs, 3 + int(self.rng.random() * 3)))
        title = title.translate(TITLE_PUNCTUATION)
        return title[:1].upper() + title[1:]

    def story(self, lang):
        """A new original: a title and paragraphs of sentences. A sentence is a list of chunks:
        words (a pool sentence kept whole) or word pairs (a new sentence)."""
        rng = self.rng
        pool = self.pools[lang]
        target = math.exp(math.log(BODY_MEAN_BYTES) - BODY_SIGMA ** 2 / 2
                          + BODY_SIGMA * rng.gauss(0, 1))
        target = min(max(target, 250), 25000)
        words_needed = target / pool.bytes_per_word
        chunks, used = self.pick(pool.pairs, int(words_needed / 2) + 16), 0
        paragraphs, words = [], 0
        while words < words_needed:
            paragraph = []
            for _ in range(2 + int(rng.random() * 4)):
                if pool.sentences and rng.random() < self.verbatim:
                    sentence = list(pool.sentences[int(rng.random() * len(pool.sentences))])
                    words += len(sentence)
                else:
                    k = 4 + int(rng.random() * 11)
                    if used + k > len(chunks):
                        chunks, used = self.pick(pool.pairs, 64), 0
                    sentence = list(chunks[used:used + k])
                    used += k
                    words += 2 * k
                    first, last = sentence[0], sentence[-1]
                    sentence[0] = first[:1].upper() + first[1:]
                    if last[-1] not in ".!?":
                        sentence[-1] = last.rstrip(",;:") + "."
                paragraph.append(sentence)
                if words >= words_needed:
                    break
            paragraphs.append(paragraph)
        return {"lang": lang, "title": self.title(pool), "paragraphs": paragraphs}

    def variant(self, story):
        """A rewrite: light, medium or heavy edits."""
        rng = self.rng
        pool = self.pools[story["lang"]]
        level = rng.random()
        paragraphs = [[list(s) for s in p] for p in story["paragraphs"]]
        if level < 0.4:  # light
            sub_rate, drop, swaps, truncate = rng.uniform(0.0, 0.02), 0.0, 0, None
        elif level < 0.8:  # medium
            sub_rate, drop, swaps = rng.uniform(0.02, 0.05), 0.05, 1
            truncate = rng.uniform(0.7, 0.9) if rng.random() < 0.15 else None
        else:  # heavy
            sub_rate, drop, swaps = rng.uniform(0.05, 0.10), 0.12, 3
            truncate = rng.uniform(0.4, 0.75) if rng.random() < 0.5 else None
        if drop:
            paragraphs = [[s for s in p if rng.random() >= drop] or p[:1] for p in paragraphs]
        for _ in range(swaps):
            p = paragraphs[int(rng.random() * len(paragraphs))]
            if len(p) > 1:
                i = int(rng.random() * (len(p) - 1))
                p[i], p[i + 1] = p[i + 1], p[i]
        if swaps >= 3 and len(paragraphs) > 2:
            moved = paragraphs.pop(1 + int(rng.random() * (len(paragraphs) - 1)))
            paragraphs.insert(int(rng.random() * len(paragraphs)), moved)
        if truncate is not None:
            keep = max(1, round(len(paragraphs) * truncate))
            paragraphs = paragraphs[:keep]
        # Word substitutions: a chunk (a word, or a pair of words) is replaced by a random
        # one of the same kind.
        sentences = [s for p in paragraphs for s in p]
        chunks = sum(len(s) for s in sentences)
        for _ in range(int(1.5 * chunks * sub_rate + rng.random())):
            s = sentences[int(rng.random() * len(sentences))]
            j = int(rng.random() * len(s))
            if " " in s[j]:
                s[j] = pool.pairs[int(rng.random() * len(pool.pairs))]
            else:
                s[j] = pool.tokens[int(rng.random() * pool.n)]
        title = story["title"]
        if rng.random() < 0.3:
            title = self.title(pool)
        return {"lang": story["lang"], "title": title, "paragraphs": paragraphs}

    def render(self, story, disclaimer):
        """The document text: plain text, or (HTML_SHARE) a site page."""
        rng = self.rng
        lang = story["lang"]
        paragraphs = [" ".join(" ".join(s) for s in p) for p in story["paragraphs"]]
        byline = rng.choice(BYLINES.get(lang, BYLINES["en"]))
        if rng.random() < HTML_SHARE:
            return self.page(story, paragraphs, byline, disclaimer), True
        parts = [story["title"]]
        if rng.random() < 0.5:
            parts.append(byline)
        parts.extend(paragraphs)
        if disclaimer:
            parts.append(DISCLAIMER)
        return "\n\n".join(parts), False

    def page(self, story, paragraphs, byline, disclaimer):
        rng = self.rng
        lang = story["lang"]
        site = rng.choice(self.sites.get(lang) or self.sites["en"])
        _, name, tagline, nav, related_heading, footer, cookie = site
        pool = self.pools[lang]
        esc = html.escape
        slug = name.lower().replace(" ", "-")
        out = [
            f'<!DOCTYPE html>\n<html lang="{site[0]}">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{esc(story['title'])} | {esc(name)}</title>\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            "<style>body{font-family:Georgia,serif;margin:0}.nav a{margin:0 8px}"
            ".cookie{position:fixed;bottom:0}</style>\n"
            "<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push"
            f"(arguments)}}gtag('js',new Date());gtag('config','{slug}');</script>\n"
            "</head>\n<body>\n"
            f'<header class="site-header"><a class="logo" href="/">{esc(name)}</a>'
            f'<p class="tagline">{esc(tagline)}</p></header>\n<nav class="nav"><ul>',
            "".join(f'<li><a href="/{i}">{esc(item)}</a></li>' for i, item in enumerate(nav)),
            "</ul></nav>\n<main>\n<article>\n",
            f"<h1>{esc(story['title'])}</h1>\n",
            f'<p class="byline">{esc(byline)} &middot; {rng.randint(1, 28)}.'
            f"{rng.randint(1, 12):02d}.2025</p>\n",
        ]
        out.extend(f"<p>{esc(p)}</p>\n" for p in paragraphs)
        if disclaimer:
            out.append(f'<p class="disclaimer">{esc(DISCLAIMER)}</p>\n')
        out.append(f'</article>\n<aside class="related"><h3>{esc(related_heading)}</h3><ul>')
        for _ in range(4 + int(rng.random() * 3)):
            out.append(f'<li><a href="/news/{rng.randint(10000, 99999)}">'
                       f"{esc(self.title(pool))}</a></li>")
        out.append(
            f'</ul></aside>\n</main>\n<footer class="site-footer"><p>{esc(footer)}</p></footer>\n'
            f'<div class="cookie cookie-banner" id="cookie-consent"><p>{esc(cookie)}</p>'
            "<button>OK</button></div>\n</body>\n</html>\n")
        return "".join(out)


def main(argv):
    args, truth_path, base_path, families = [], None, None, STANDARD_FAMILIES
    i = 0
    while i < len(argv):
        if argv[i] == "--truth" and i + 1 < len(argv):
            truth_path = argv[i + 1]
            i += 2
        elif argv[i] == "--base" and i + 1 < len(argv):
            base_path = argv[i + 1]
            i += 2
        elif argv[i] == "--large-families":
            families = LARGE_FAMILIES
            i += 1
        elif argv[i] == "--running-stories":
            families = RUNNING_FAMILIES
            i += 1
        elif argv[i] in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            args.append(argv[i])
            i += 1
    if len(args) not in (2, 3) or not args[0].isdigit() or (len(args) == 3 and not args[2].isdigit()):
        print("usage: gen-corpus N OUT.csv [SEED] [--truth TRUTH.csv] [--base DOCS.csv] "
              "[--large-families | --running-stories]", file=sys.stderr)
        return 2
    n_docs, out_path = int(args[0]), args[1]
    seed = int(args[2]) if len(args) == 3 else 1
    started = time.time()
    texts, source = base_texts(base_path)
    pools = build_pools(texts)
    gen = Generator(pools, seed, n_docs, families)
    rng = gen.rng

    if out_path == "-":
        temp_path = None
        out = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="", buffering=1 << 20,
                   closefd=False)
    else:
        directory = os.path.dirname(os.path.abspath(out_path))
        os.makedirs(directory, exist_ok=True)
        temp_path = out_path + ".part"
        out = open(temp_path, "w", encoding="utf-8", newline="", buffering=1 << 20)
    out.write("id,text\n")
    truth = None
    if truth_path:
        truth = csv.writer(open(truth_path, "w", encoding="utf-8", newline="", buffering=1 << 20),
                           lineterminator="\n")
        truth.writerow(["id", "cluster_id"])

    window = []
    written = [len("id,text\n")]
    counts = {"cyrillic": 0, "html": 0, "disclaimer": 0}
    clusters = multi = largest = 0
    made = 0

    def emit(row):
        # A window of documents shuffled in place: cluster members are spread in the file.
        if len(window) < SHUFFLE_WINDOW:
            window.append(row)
            return
        j = int(rng.random() * SHUFFLE_WINDOW)
        row, window[j] = window[j], row
        write(row)

    def write(row):
        # Ids need no quoting; texts are always quoted (RFC 4180).
        line = f'{row[0]},"{row[1].replace(chr(34), chr(34) * 2)}"\n'
        out.write(line)
        if temp_path is None:
            written[0] += len(line.encode("utf-8"))

    while made < n_docs:
        size = min(gen.cluster_size(), n_docs - made)
        clusters += 1
        multi += size > 1
        largest = max(largest, size)
        lang = gen.language()
        story = gen.story(lang)
        cluster_id = None
        for member in range(size):
            if member == 0 or (gen.copy_share and rng.random() < gen.copy_share):
                version = story
            else:
                version = gen.variant(story)
            disclaimer = rng.random() < DISCLAIMER_SHARE
            text, is_html = gen.render(version, disclaimer)
            # Scrambled ids: a bijection of the document number, so id order != cluster order.
            doc_id = f"doc-{(made * 0x9E3779B1) & 0xFFFFFFFF:08x}"
            if cluster_id is None:
                cluster_id = doc_id
            if truth is not None:
                truth.writerow([doc_id, cluster_id])
            counts["cyrillic"] += lang != "en"
            counts["html"] += is_html
            counts["disclaimer"] += disclaimer
            made += 1
            emit([doc_id, text])
    for row in window:
        write(row)
    out.close()
    if temp_path is None:
        file_mb = written[0] / 1e6
    else:
        os.replace(temp_path, out_path)
        file_mb = os.path.getsize(out_path) / 1e6
    n = max(1, n_docs)
    print(
        f"gen-corpus: {n_docs} documents, {file_mb:.1f} MB ({1000 * file_mb / n:.2f} KB/doc), {clusters} clusters ({multi} of 2+, largest {largest}); "
        f"{100 * counts['cyrillic'] / n:.1f}% Cyrillic, {100 * counts['html'] / n:.1f}% HTML, "
        f"{100 * counts['disclaimer'] / n:.1f}% disclaimer; seed {seed}; base {source}; "
        f"{time.time() - started:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
