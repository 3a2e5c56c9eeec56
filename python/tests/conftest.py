"""Shared fixtures: the CLI binary (built by `cargo test`/`cargo build` in the root crate), the
dev benchmarks and a Spark session in local[2] (for the Spark tests: java must run), each
skipped with a printed reason when absent."""

import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The shared benchmarks beside the repository (or beside the folder of its worktrees).
DEV = next(
    (p / "shared" / "data" / "rewrites-dev" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "data").is_dir()),
    ROOT.parent / "shared" / "data" / "rewrites-dev",
)

STORY = (
    "the regional council approved the new budget for public transport on monday after "
    "three hours of debate about bus routes fares and the night service to the suburbs"
)


def _cli():
    # The newest build of the repository's binary, so that a stale release build left from
    # an older checkout is not compared against the package built from this one.
    built = [ROOT / "target" / profile / "megashingle" for profile in ("release", "debug")]
    built = [path for path in built if path.exists()]
    if built:
        return max(built, key=lambda path: path.stat().st_mtime)
    found = shutil.which("megashingle")
    return pathlib.Path(found) if found else None


@pytest.fixture(scope="session")
def cli():
    path = _cli()
    if path is None:
        print("skipping: no megashingle binary (run `cargo build` in the repository root)")
        pytest.skip("no megashingle binary: run `cargo build` in the repository root")
    return path


@pytest.fixture(scope="session")
def dev_docs():
    docs = DEV / "docs.csv"
    if not docs.exists():
        print(f"skipping: {docs} is absent")
        pytest.skip(f"{docs} is absent")
    return docs


def run_cli(cli, *args, **kwargs):
    return subprocess.run([str(cli), *map(str, args)], check=True, capture_output=True, text=True, **kwargs)


def _java_missing():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "java is not installed"
    try:
        subprocess.run(["java", "-version"], check=True, capture_output=True, timeout=60)
    except Exception as e:  # noqa: BLE001
        return f"java does not run: {e}"
    return None


@pytest.fixture(scope="module")
def spark():
    reason = _java_missing()
    if reason:
        print(f"skipping the Spark tests: {reason}")
        pytest.skip(reason)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("megashingle-tests")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def warc_resource(uri, date, text):
    """A WARC ``resource`` record of ``uri``, dated ``date``, holding ``text`` as plain text."""
    body = text.encode("utf-8")
    head = (
        f"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {date}\r\n"
        f"Content-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body + b"\r\n\r\n"


def warc_gz_with_a_damaged_member(texts):
    """A ``.warc.gz`` of one gzip member a record (``http://a/1``, ``http://a/2``, ...) whose
    second member has corrupt bytes in its middle, and that member's offset in the file and
    the next one's."""
    import gzip

    members = [gzip.compress(warc_resource(f"http://a/{i + 1}", "2025-06-03T10:00:00Z", t)) for i, t in enumerate(texts)]
    damaged = bytearray(members[1])
    middle = len(damaged) // 2
    damaged[middle : middle + 8] = b"\xff" * 8
    data = members[0] + bytes(damaged) + b"".join(members[2:])
    return data, len(members[0]), len(members[0]) + len(members[1])
