"""The Python examples of the documentation, run: the README's (on the corpus that the README's
`scripts/gen-corpus 1000 corpus.csv` makes from the fixtures) prints what the README shows
after it, and the API tour of docs/PYTHON.md runs on the news fixtures."""

import contextlib
import io
import os
import re
import subprocess

from conftest import ROOT

BLOCK = re.compile(r"^```python\n(.*?)^```\n(?:\n```text\n(.*?)^```\n)?", re.S | re.M)


def python_blocks(path):
    """The ```python blocks of a Markdown file, each with the ```text block right after it
    (what it prints), or an empty string."""
    return BLOCK.findall(path.read_text(encoding="utf-8"))


def run_in(folder, code):
    """Runs `code` as a script in `folder` and gives what it printed and its names."""
    names = {"__name__": "__main__"}
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "<documentation>", "exec"), names)
    finally:
        os.chdir(cwd)
    return printed.getvalue(), names


def test_the_readme_python_example_prints_what_the_readme_shows(tmp_path):
    examples = [(code, shown) for code, shown in python_blocks(ROOT / "README.md") if shown]
    assert len(examples) == 1, "the README has one Python example with its output"
    code, shown = examples[0]
    assert "megashingle.dedup(" in code
    # The README runs it in the repository after `scripts/gen-corpus 1000 corpus.csv`; here
    # the scripts and fixtures are linked into a scratch folder, so the corpus is made from the
    # fixtures wherever the repository is.
    for name in ("fixtures", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name)
    subprocess.run(["scripts/gen-corpus", "1000", "corpus.csv"], cwd=tmp_path, check=True, capture_output=True)
    printed, _ = run_in(tmp_path, code)
    assert printed == shown


def test_the_api_tour_of_python_md_runs_on_the_fixtures(tmp_path):
    code, _ = python_blocks(ROOT / "docs" / "PYTHON.md")[0]
    assert "megashingle.Index(" in code and "sketch_batch(" in code
    news = ROOT / "fixtures" / "news"
    files = sorted(p for p in news.rglob("*") if p.is_file())
    ids = [p.relative_to(news).as_posix() for p in files]
    texts = [p.read_text(encoding="utf-8") for p in files]
    first, heavy = news / "en" / "flood-original.txt", news / "en" / "flood-courier.html"
    names = {
        "ids": ids,
        "texts": texts,
        "a": first.read_text(encoding="utf-8"),
        "b": heavy.read_text(encoding="utf-8"),
        "text": first.read_text(encoding="utf-8"),
    }
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code, "docs/PYTHON.md", "exec"), names)
    finally:
        os.chdir(cwd)
    assert len(names["rows"]) == len(ids) == 44
    assert {row["doc_id"] for row in names["dropped"]} <= set(ids)
    assert names["batch"]["minima"].shape[0] == len(ids)
    assert (tmp_path / "stories.db").exists()
