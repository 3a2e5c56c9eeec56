"""The Spark job beyond local mode, as a data team runs it, on processes the tests start on
localhost from pyspark's own wheel and stop at the end (their process groups killed, whatever
the outcome): a standalone master with two workers, each with its own work folder, reached with
``--master spark://...`` and the package shipped to the executors in a packed virtual
environment (docs/SPARK.md, On a cluster), and an executor Python without megashingle, which
ends the job with one line; and a Spark Connect server reached with ``--remote sc://...``,
and executors there without megashingle. The stories must be the command's, and each failure
one line. Nothing is downloaded: where pyspark's wheel carries no Spark Connect server
(pyspark 3.5), those tests skip and say so."""

import csv
import glob
import io
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT, _java_missing

pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed")
pytest.importorskip("pandas", reason="pandas is not installed")
pytest.importorskip("pyarrow", reason="pyarrow is not installed")

NEWS = "fixtures/news"  # relative: executors elsewhere must still find it (the job makes it absolute)
TRACES = ("Traceback", "Py4J", "py4j", "at org.apache", "Exception in", "JVM stacktrace")
# Small settings for a small input: few shuffle partitions, executors within the workers' 1 GB.
SMALL = ["--conf", "spark.sql.shuffle.partitions=4", "--conf", "spark.executor.memory=512m"]
STARTUP_SECONDS = 240


def _skip(reason):
    print(f"skipping: {reason}")
    pytest.skip(reason)


def _spark_home():
    reason = _java_missing()
    if reason:
        _skip(f"the Spark cluster tests: {reason}")
    return os.path.dirname(os.path.abspath(pyspark.__file__))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(command, log, env=None):
    """A process in a session (and process group) of its own, its output in ``log``."""
    with open(log, "wb") as out:
        return subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True
        )


def _stop(processes):
    """Kills the process groups (the JVMs, their executors and Python workers)."""
    for p in processes:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def _wait_for(ready, processes, logs, what):
    deadline = time.monotonic() + STARTUP_SECONDS
    while not ready():
        for p, log in zip(processes, logs):
            if p.poll() is not None:
                pytest.fail(f"{what} ended (exit {p.returncode}): {open(log, errors='replace').read()[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not ready in {STARTUP_SECONDS} s: {open(logs[-1], errors='replace').read()[-2000:]}")
        time.sleep(0.5)


def _user_env():
    """The environment a user runs the job from: no PySpark or Spark variable set."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK", "SPARK"))}


def _run(*args):
    """``python -m megashingle.spark`` from this environment, in the repository's folder."""
    return subprocess.run(
        [sys.executable, "-m", "megashingle.spark", *map(str, args)],
        capture_output=True, text=True, env=_user_env(), cwd=ROOT, timeout=900,
    )


def _job_rows(out):
    rows = set()
    for part in sorted(glob.glob(os.path.join(str(out), "part-*.csv"))):
        with open(part, newline="", encoding="utf-8") as f:
            rows |= {tuple(r.values()) for r in csv.DictReader(f)}
    return rows


def _command_rows(cli):
    done = subprocess.run([str(cli), "cluster", NEWS, "-q"], capture_output=True, text=True, cwd=ROOT, check=True)
    return {tuple(r.values()) for r in csv.DictReader(io.StringIO(done.stdout))}


def _clean(stderr):
    for trace in TRACES:
        assert trace not in stderr, stderr


@pytest.fixture(scope="module", autouse=True)
def _terminated_like_interrupted():
    """A SIGTERM to pytest (a CI job's timeout) ends the tests as Ctrl-C does, so that the
    fixtures' finalizers still stop the processes they started, which run in sessions of
    their own."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    yield
    signal.signal(signal.SIGTERM, previous)


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A standalone master and two workers (one core, 1 GB and a work folder each): the
    master's URL and the workers' folders."""
    home = _spark_home()
    spark_class = os.path.join(home, "bin", "spark-class")
    folder = tmp_path_factory.mktemp("standalone")
    env = _user_env()
    master = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(_free_port())]
    logs = [str(folder / name) for name in ("master.log", "worker-1.log", "worker-2.log")]
    works = [folder / f"work-{n}" for n in (1, 2)]
    processes = []
    try:
        processes.append(_start([spark_class, *master, "--webui-port", "0"], logs[0], env))
        _wait_for(lambda: "I have been elected leader" in open(logs[0], errors="replace").read(), processes, logs, "the master")
        # The master's URL as it says it (the port it took, should the one asked for be taken since).
        url = re.search(r"Starting Spark master at (spark://\S+)", open(logs[0], errors="replace").read()).group(1)
        for n, (work, log) in enumerate(zip(works, logs[1:]), 1):
            # Its executors' work folders (and the packed environment unpacked there) and their
            # temporary files (shuffle, blocks) are the test's, not the machine's /tmp.
            work.mkdir()
            settings = folder / f"worker-{n}.conf"
            settings.write_text(f"spark.local.dir {folder / f'local-{n}'}\n")
            worker = ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "1"]
            worker += ["--memory", "1g", "--webui-port", "0", "--work-dir", str(work), "--properties-file", str(settings)]
            processes.append(_start([spark_class, *worker], log, env))

        def registered():
            return all("Successfully registered with master" in open(log, errors="replace").read() for log in logs[1:])

        _wait_for(registered, processes, logs, "the workers")
        yield url, works
    finally:
        _stop(processes)
        for work in works:  # each executor unpacked the environment there
            shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def packed_environment(tmp_path_factory):
    """This virtual environment packed with venv-pack, as docs/SPARK.md packs one: every
    package but pyspark (the executors take Spark's own)."""
    if sys.prefix == sys.base_prefix:
        _skip("the tests do not run in a virtual environment, which the cluster test packs")
    import megashingle

    for module in (megashingle, pytest.importorskip("numpy"), pytest.importorskip("pyarrow")):
        if not os.path.abspath(module.__file__).startswith(os.path.abspath(sys.prefix) + os.sep):
            _skip(f"{module.__name__} is not installed in {sys.prefix} (an editable or borrowed install cannot be packed)")
    venv_pack = os.path.join(sys.prefix, "bin", "venv-pack")
    if not os.path.exists(venv_pack):
        _skip(f"venv-pack is not installed in {sys.prefix} (pip install venv-pack)")
    out = tmp_path_factory.mktemp("packed") / "env.tar.gz"
    done = subprocess.run(
        [venv_pack, "-p", sys.prefix, "-o", str(out), "--exclude", "lib/python*/site-packages/pyspark/*"]
        + ["--compress-level", "1"],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_a_standalone_cluster_gives_the_commands_stories(standalone, packed_environment, cli, tmp_path):
    out = tmp_path / "stories"
    started = time.monotonic()
    url, works = standalone
    done = _run(
        "--master", url, "--input", NEWS, "--output", out,
        "--conf", f"spark.archives={packed_environment}#environment",
        "--conf", "spark.pyspark.python=./environment/bin/python", *SMALL,
    )
    print(f"the job on the standalone cluster: {time.monotonic() - started:.1f} s")
    assert done.returncode == 0, done.stderr
    _clean(done.stderr)
    got = _job_rows(out)
    assert len(got) == 44
    assert got == _command_rows(cli)
    # Each executor ran in its worker's own folder, and unpacked the environment there.
    for work in works:
        assert glob.glob(str(work / "app-*" / "*" / "environment" / "bin" / "python")), f"{work}: no environment"


def test_executors_without_megashingle_end_the_job_with_one_line(standalone, tmp_path):
    plain = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True)
    done = _run(
        "--master", standalone[0], "--input", NEWS, "--output", tmp_path / "stories",
        "--conf", f"spark.pyspark.python={plain}/bin/python", *SMALL,
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("megashingle.spark: error: the executors' Python cannot import megashingle"), done.stderr
    assert "No module named 'megashingle'" in lines[0]
    assert "spark.archives=env.tar.gz#environment" in lines[0] and "docs/SPARK.md" in lines[0]
    _clean(done.stderr)
    assert not (tmp_path / "stories").exists()


def test_an_executor_python_that_does_not_start_is_one_line(tmp_path):
    # spark.pyspark.python is the executors' Python in local mode too; a path with no Python.
    _spark_home()
    missing = tmp_path / "nowhere" / "bin" / "python"
    done = _run(
        "--master", "local[2]", "--input", NEWS, "--output", tmp_path / "stories",
        "--conf", f"spark.pyspark.python={missing}",
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"megashingle.spark: error: the executors' Python ({missing}) does not start"), lines[0]
    assert "No such file or directory" in lines[0] and "docs/SPARK.md" in lines[0], lines[0]
    _clean(done.stderr)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server from pyspark's wheel (local[2]; its Python workers run this
    interpreter, named by the server's spark.sql.execution.pyspark.python, as a service's
    have megashingle installed; no environment variable set): its ``sc://`` URL."""
    home = _spark_home()
    if not glob.glob(os.path.join(home, "jars", "spark-connect_*.jar")):
        _skip(f"pyspark {pyspark.__version__}'s wheel carries no Spark Connect server, and nothing is downloaded")
    try:
        import grpc  # noqa: F401
    except ImportError:
        _skip("Spark Connect's client is not installed (pip install './python[spark,connect]')")
    port = _free_port()
    folder = tmp_path_factory.mktemp("connect")
    log = str(folder / "server.log")
    command = [
        os.path.join(home, "bin", "spark-submit"),
        "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--master", "local[2]",
        "--conf", f"spark.sql.execution.pyspark.python={sys.executable}",
        "--conf", f"spark.connect.grpc.binding.port={port}",
        "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf", "spark.ui.enabled=false",
        "--conf", f"spark.local.dir={folder / 'local'}",
    ]
    processes = []
    try:
        processes.append(_start(command, log, _user_env()))

        def listening():
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", port)) == 0

        _wait_for(listening, processes, [log], "the Spark Connect server")
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(processes)


def test_spark_connect_gives_the_commands_stories(connect_server, cli, tmp_path):
    out = tmp_path / "stories"
    started = time.monotonic()
    done = _run("--remote", connect_server, "--input", NEWS, "--output", out, "--conf", "spark.sql.shuffle.partitions=4")
    print(f"the job through Spark Connect: {time.monotonic() - started:.1f} s")
    assert done.returncode == 0, done.stderr
    _clean(done.stderr)
    got = _job_rows(out)
    assert len(got) == 44
    assert got == _command_rows(cli)


def test_an_unreachable_connect_server_is_one_line(tmp_path):
    port = _free_port()  # closed again: nothing listens there
    for url, wanted in [
        (f"sc://127.0.0.1:{port}", f"no Spark Connect server answers at 127.0.0.1:{port} (Connection refused)"),
        ("sc://127.0.0.1:port", "not a Spark Connect URL"),
        ("sc://:15002", "no host; expected sc://HOST:PORT"),
        ("http://127.0.0.1:15002", "expected a Spark Connect URL, sc://HOST:PORT"),
    ]:
        started = time.monotonic()
        done = _run("--remote", url, "--input", NEWS, "--output", tmp_path / "stories")
        assert done.returncode == 2, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and wanted in lines[0], done.stderr
        assert time.monotonic() - started < 60
    assert not (tmp_path / "stories").exists()


def test_a_port_that_is_not_spark_connect_is_one_line(tmp_path):
    # Something listens there, but not Spark Connect: a service that answers in HTTP/1.1, and
    # a gRPC server without Spark Connect's service. The client would retry for minutes.
    try:
        import grpc
    except ImportError:
        _skip("Spark Connect's client is not installed (pip install './python[spark,connect]')")
    from concurrent import futures

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)

    def answer_in_http():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed at the end of the test
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=answer_in_http, daemon=True).start()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        for port, wanted in [
            (listener.getsockname()[1], "accepts connections but does not answer as a Spark Connect server"),
            (grpc_port, "the gRPC server there is not a Spark Connect server (UNIMPLEMENTED"),
        ]:
            started = time.monotonic()
            done = _run("--remote", f"sc://127.0.0.1:{port}", "--input", NEWS, "--output", tmp_path / "stories")
            assert done.returncode == 2, done.stderr
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            assert len(lines) == 1 and wanted in lines[0], done.stderr
            _clean(done.stderr)
            assert time.monotonic() - started < 60
    finally:
        server.stop(None)
        listener.close()
    assert not (tmp_path / "stories").exists()


def test_remote_without_the_connect_client_is_one_line(tmp_path, monkeypatch, capfd):
    # The server answers (a socket listens), but Spark Connect's client (grpc) is not installed.
    import megashingle.spark

    monkeypatch.setitem(sys.modules, "grpc", None)  # import grpc fails, as where it is missing
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        url = f"sc://127.0.0.1:{listener.getsockname()[1]}"
        code = megashingle.spark.main(["--remote", url, "--input", NEWS, "--output", str(tmp_path / "stories")])
    err = capfd.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "--remote needs Spark Connect's client" in lines[0], err
    assert 'pip install "./python[spark,connect]"' in lines[0], err
    _clean(err)
    assert not (tmp_path / "stories").exists()


def test_a_conf_that_is_not_key_equals_value_is_one_line(tmp_path):
    done = _run("--input", NEWS, "--output", tmp_path / "stories", "--conf", "spark.executor.memory")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == ["megashingle.spark: error: --conf spark.executor.memory: expected KEY=VALUE, e.g. spark.executor.memory=4g"]
    assert not (tmp_path / "stories").exists()


def test_remote_and_master_are_exclusive():
    done = _run("--remote", "sc://127.0.0.1:1", "--master", "local[2]", "--input", NEWS, "--output", "x")
    assert done.returncode == 2
    assert "not allowed with argument" in done.stderr
    assert not os.path.exists(os.path.join(ROOT, "x"))


def test_spark_connect_dedup_keeps_the_commands_records(connect_server, tmp_path):
    import pyarrow.parquet as pq

    import megashingle
    from conftest import STORY

    texts = [
        STORY,
        STORY + " and the mayor",
        "a recipe for bread with flour water salt and yeast baked in a hot oven for forty minutes",
        STORY.replace("monday", "tuesday") + " while the opposition asked for a referendum",
    ]
    ids = [f"r{i}" for i in range(len(texts))]
    docs = tmp_path / "docs.csv"
    with docs.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("id", "text", "source"), *[(i, t, f"feed-{i}") for i, t in zip(ids, texts)]])
    removed = {r["doc_id"]: r["duplicate_of"] for r in megashingle.dedup(ids, texts)}
    assert removed, "the records have duplicates to remove"
    out, dropped = tmp_path / "kept", tmp_path / "dropped"
    done = _run("--remote", connect_server, "--dedup", "--input", docs, "--output", out, "--dropped", dropped)
    assert done.returncode == 0, done.stderr
    _clean(done.stderr)
    kept = pq.read_table(str(out))
    assert kept.column_names == ["id", "text", "source"]
    assert sorted(kept.column("id").to_pylist()) == sorted(set(ids) - set(removed))
    got = {r["doc_id"]: r["duplicate_of"] for r in pq.read_table(str(dropped)).to_pylist()}
    assert got == removed


def test_spark_connect_executors_without_megashingle_end_the_job_with_one_line(connect_server, tmp_path):
    # The session names its executors' Python (spark.sql.execution.pyspark.python, a session
    # setting on Spark Connect): one without megashingle, then one that does not exist.
    plain = tmp_path / "plain"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(plain)], check=True)
    missing = tmp_path / "nowhere" / "bin" / "python"
    for python, wanted, why in [
        (plain / "bin" / "python", "the executors' Python cannot import megashingle", "No module named 'megashingle'"),
        (missing, "the executors' Python does not start or cannot import megashingle", "No such file or directory"),
    ]:
        done = _run(
            "--remote", connect_server, "--input", NEWS, "--output", tmp_path / "stories",
            "--conf", f"spark.sql.execution.pyspark.python={python}",
        )
        assert done.returncode == 2, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"megashingle.spark: error: {wanted}"), lines[0]
        assert why in lines[0], lines[0]
        assert "spark.sql.execution.pyspark.python=PATH" in lines[0] and "Through Spark Connect" in lines[0], lines[0]
        _clean(done.stderr)
    assert not (tmp_path / "stories").exists()
