"""``python -m megashingle.spark``: the command line. Options as ``megashingle cluster`` names
them (and with ``--dedup``, as ``megashingle dedup`` does); Spark started quietly (its log in a
temporary file unless ``--debug``); the story table (or the kept records, and the removed ones)
written to temporary siblings of the output folders and moved into place once all are written;
one line on stderr for a failure, with the exit codes of the command (0, 1 when records were
skipped, 2). Spark runs in this process (``--master``, with ``--conf`` settings as spark-submit
takes them) or on a Spark Connect server (``--remote sc://HOST:PORT``): the job is the same.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import uuid
import warnings
from typing import List, Optional, Union

from megashingle import Config, InputError

from .common import DEFAULT_MAX_GROUP, DEFAULT_MAX_LOCAL_PAIRS, _is_remote_session, _one_line, log
from .dedup import DedupResult, check_dedup_config, dedup_files, plan_dedup_inputs
from .inputs import _is_remote, plan_inputs
from .job import Result, cluster_files


def _start_quietly(builder, log_path: str):
    """Starts Spark with the JVM's stderr (Spark's log, its workers' output) going to
    ``log_path``; this process's own stderr is left as it was."""
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.dup2(fd, 2)
        return builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m megashingle.spark",
        description="Cluster documents into stories on Apache Spark, as `megashingle cluster` does.",
    )
    parser.add_argument(
        "--input",
        required=True,
        action="append",
        help="what `megashingle cluster` reads (a folder of .txt/.html/.htm/.eml files, such a file, "
        "CSV with a header, JSONL; each also .gz/.zst) or Parquet (a file or a folder of them); "
        "repeat for several inputs read as one collection",
    )
    parser.add_argument(
        "--output", required=True, help="folder for the result (refused if it exists, unless --overwrite)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace the output folder if it exists")
    runs_on = parser.add_mutually_exclusive_group()
    runs_on.add_argument(
        "--master",
        default=None,
        help="Spark master URL, e.g. local[2] or spark://HOST:7077 (default: as spark-submit sets it, else local[*])",
    )
    runs_on.add_argument(
        "--remote",
        default=None,
        metavar="sc://HOST:PORT",
        help="run through a Spark Connect server instead of a Spark of this process (needs megashingle[connect])",
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting, as spark-submit's --conf, e.g. spark.archives=env.tar.gz#environment; repeatable",
    )
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--text-column", default="text")
    parser.add_argument(
        "--input-format",
        choices=["csv", "jsonl", "parquet"],
        default=None,
        help="format of record files whose extension says nothing (default: as the command guesses)",
    )
    parser.add_argument(
        "--format",
        choices=["csv", "parquet", "jsonl"],
        default=None,
        help="output format (CSV part files each have a header); default: CSV for stories, Parquet with --dedup",
    )
    parser.add_argument(
        "--dedup",
        action="store_true",
        help="write the input records (CSV, JSONL or Parquet) with each story's duplicates left out, every "
        "column kept, as `megashingle dedup` does, instead of the stories",
    )
    parser.add_argument(
        "--dropped",
        default=None,
        metavar="PATH",
        help="with --dedup: folder for the removed records (doc_id, duplicate_of, similarity, jaccard, "
        "containment), in --format",
    )
    parser.add_argument(
        "--keep",
        choices=["representative", "first", "longest", "earliest"],
        default=None,
        help="with --dedup: which record of each story is kept (dedup.keep; default representative): the "
        "one with the most distinct shingles, the one read first, the one with the most words, or the one "
        "with the earliest time (--time-column; records without a time come last)",
    )
    parser.add_argument(
        "--time-column",
        default=None,
        metavar="NAME",
        help="with --dedup --keep earliest: CSV or Parquet column, or JSONL field, holding each record's "
        "time (RFC 3339 or YYYY-MM-DD, a date-time without an offset taken as UTC; Parquet timestamps and "
        "dates as they are); a record whose time is not a date is reported and skipped",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="T",
        help="with --dedup: a member is removed when its Jaccard with the kept record, or the share of its "
        "shingles in it, is at least T (dedup.threshold; default 0.5)",
    )
    parser.add_argument("-c", "--config", default=None, help="pipeline.toml")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one key, e.g. cluster.min-similarity=0.4",
    )
    parser.add_argument(
        "--max-local-pairs",
        type=int,
        default=DEFAULT_MAX_LOCAL_PAIRS,
        metavar="N",
        help="groups found by one union-find on the driver up to N candidate pairs, in distributed rounds beyond (default 50000000)",
    )
    parser.add_argument(
        "--max-group",
        type=int,
        default=DEFAULT_MAX_GROUP,
        metavar="N",
        help="a group of candidates is clustered on one executor up to N documents; a larger one is split first by the pairs that can link (default 500000)",
    )
    parser.add_argument("--debug", action="store_true", help="show Spark's log and full stack traces")
    args = parser.parse_args(argv)

    if not log.handlers:  # what was found, on stderr; other loggers are left as they are
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("megashingle.spark: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)

    def fail(message: str) -> int:
        print(f"megashingle.spark: error: {message}", file=sys.stderr)
        return 2

    try:
        config = Config.from_file(args.config) if args.config else Config()
        for setting in args.set:
            if "=" not in setting:
                raise ValueError(f"--set {setting}: expected KEY=VALUE, e.g. cluster.min-similarity=0.4")
            key, value = setting.split("=", 1)
            config = config.replace({key.strip(): _setting_value(value.strip())})
        if args.keep is not None:
            config = config.replace({"dedup.keep": args.keep})
        if args.threshold is not None:
            config = config.replace({"dedup.threshold": args.threshold})
    except ValueError as e:
        return fail(str(e))
    if not args.dedup:
        for option, given in (
            ("--dropped", args.dropped),
            ("--keep", args.keep),
            ("--threshold", args.threshold),
            ("--time-column", args.time_column),
        ):
            if given is not None:
                return fail(f"{option} goes with --dedup: add --dedup to deduplicate, or leave {option} out")
    fmt = args.format or ("parquet" if args.dedup else "csv")
    outputs = [("--output", args.output)] + ([("--dropped", args.dropped)] if args.dropped is not None else [])
    try:
        folders = [_output_folder(option, path, args.overwrite) for option, path in outputs]
        if len(folders) == 2 and folders[0] == folders[1]:
            raise InputError(
                f"{args.dropped}: --dropped names the --output folder: give the removed records a folder of their own"
            )
        if args.dedup:
            check_dedup_config(config, args.time_column)
            plan_dedup_inputs(args.input, args.input_format)  # missing, unreadable or unfit inputs
        else:
            plan_inputs(args.input, args.input_format)  # missing or unreadable inputs, before Spark starts
    except InputError as e:
        return fail(str(e))

    try:
        settings = [_conf_setting(setting) for setting in args.conf]
    except InputError as e:
        return fail(str(e))
    if not args.debug:
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
    spark_log = None
    try:
        if args.remote:
            spark, owned = _connect(args.remote, settings), True
        else:
            spark, owned, spark_log = _start(args.master, settings, args.debug)
    except Exception as e:  # noqa: BLE001
        if args.debug:
            raise
        said = _one_line(e) if not isinstance(e, InputError) else str(e)
        return fail(f"Spark does not start: {said}" + (f" (Spark's log: {spark_log})" if spark_log else ""))
    failed = False
    code = 0
    try:
        paths = args.input if _in_this_process(spark) else [_absolute(path) for path in args.input]
        options = dict(input_format=args.input_format, max_local_pairs=args.max_local_pairs, max_group=args.max_group)
        result: Union[DedupResult, Result]
        if args.dedup:
            result = dedup_files(
                spark, paths, args.id_column, args.text_column, config, time_col=args.time_column, **options
            )
        else:
            result = cluster_files(spark, paths, args.id_column, args.text_column, config, **options)
        if isinstance(result, DedupResult):
            # Timestamps written as Parquet's own (microseconds), as they were read.
            spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
            tables = [result.kept, result.dropped]
        else:
            tables = [result.table]
        staged = []
        for table, folder in zip(tables, folders):
            target = f"{folder}.partial-{uuid.uuid4().hex[:8]}" if _is_local(folder) else folder
            _write(table, target, fmt, local=_is_local(folder))
            staged.append((target, folder))
        for target, folder in staged:
            if target != folder:
                if os.path.exists(folder):
                    shutil.rmtree(folder)
                os.rename(target, folder)
        census = result.census
        ignored = f"; {result.inputs.ignored} files left out for their extension" if result.inputs.ignored else ""
        repeated = f" ({len(census.dropped)} for a repeated id)" if len(census.dropped) else ""
        written = " and ".join(path for _, path in outputs)
        print(f"megashingle.spark: {result.summary()}{repeated}{ignored}; written to {written}", file=sys.stderr)
        code = 1 if census.skipped else 0
    except InputError as e:
        if args.debug:
            raise
        return fail(str(e))
    except Exception as e:  # noqa: BLE001
        if args.debug:
            raise
        failed = True
        where = f"Spark's log: {spark_log}" if spark_log else "--debug shows Spark's log"
        return fail(f"{_one_line(e)} ({where}; --debug shows the stack trace)")
    finally:
        for folder in folders:
            if _is_local(folder):
                for leftover in _partials(folder):
                    shutil.rmtree(leftover, ignore_errors=True)
        if owned:
            spark.stop()
        if spark_log and not failed:
            try:
                os.remove(spark_log)
            except OSError:
                pass
    return code


def _conf_setting(setting: str) -> tuple:
    """A ``--conf KEY=VALUE`` as (key, value)."""
    key, equals, value = setting.partition("=")
    if not equals or not key.strip():
        raise InputError(f"--conf {setting}: expected KEY=VALUE, e.g. spark.executor.memory=4g")
    return key.strip(), value.strip()


# The setting that has the JVM talk to the Python workers over Unix domain sockets (Spark 4.1 and
# later; earlier versions ignore it).
UNIX_SOCKETS = "spark.python.unix.domain.socket.enabled"


def _session_settings(master: Optional[str], settings: list) -> list:
    """The ``--conf`` settings of a session the job starts, with Unix domain sockets between
    the JVM and its Python workers when ``master`` is local and the settings leave them
    unsaid. Over TCP on the loopback, the kernel drops segments when a receiving socket is
    full and sends them again; a worker's connection was seen to stall that way until TCP gave
    up, after about 15 minutes (the kernel's TCPAbortOnTimeout), and the task failed. Unix
    sockets never drop a segment, and are as fast."""
    if master and master.startswith("local") and all(key != UNIX_SOCKETS for key, _ in settings):
        return [*settings, (UNIX_SOCKETS, "true")]
    return settings


def _start(master: Optional[str], settings: list, debug: bool):
    """A classic session (Spark in this process's JVM, reaching ``master``): the session,
    whether the job owns it (and stops it at the end), and the file Spark's log goes to."""
    from pyspark.sql import SparkSession

    owned = SparkSession.getActiveSession() is None
    builder = (
        SparkSession.builder.appName("megashingle")
        .config("spark.ui.showConsoleProgress", "false")
        # The job sets its partitions itself; adaptive execution would run each query stage as
        # a Spark job of its own.
        .config("spark.sql.adaptive.enabled", "false")
    )
    for key, value in _session_settings(master, settings):
        builder = builder.config(key, value)
    if master:
        builder = builder.master(master)
    if owned and not debug:
        spark_log = os.path.join(tempfile.gettempdir(), f"megashingle-spark-{os.getpid()}.log")
        return _start_quietly(builder, spark_log), owned, spark_log
    return builder.getOrCreate(), owned, None


def _connect(url: str, settings: list):
    """A Spark Connect session on the server at ``url`` (``sc://HOST:PORT``), with the job's
    settings and the user's ``--conf`` ones set in it (SQL settings only: the server's own are
    its)."""
    if not url.startswith("sc://"):
        raise InputError(f"--remote {url}: expected a Spark Connect URL, sc://HOST:PORT")
    _check_reachable(url)
    from pyspark.sql import SparkSession

    try:
        import grpc  # noqa: F401  (Spark Connect's client needs it, and pyspark does not bring it)
    except ImportError as e:
        raise InputError(
            f"--remote needs Spark Connect's client ({e}): install the connect extra (it takes pyspark 4), "
            'pip install "./python[spark,connect]"'
        ) from None
    _check_answers(url)
    try:
        spark = SparkSession.builder.remote(url).getOrCreate()
        for key, value in [("spark.sql.adaptive.enabled", "false")] + settings:
            spark.conf.set(key, value)
    except Exception as e:  # noqa: BLE001  (the client's, wrapping the gRPC call's status)
        said = _one_line(e)
        if said.startswith("UNIMPLEMENTED:"):
            raise InputError(
                f"--remote {url}: the gRPC server there is not a Spark Connect server ({said}); check the port"
            ) from None
        raise
    return spark


def _check_reachable(url: str, seconds: float = 10.0) -> None:
    """Refuses a Spark Connect URL whose server does not answer (the client would retry for
    minutes): its host and port (15002 when none is given) must accept a connection."""
    import socket
    from urllib.parse import urlparse

    try:
        parsed = urlparse("http://" + url[len("sc://") :].split("/", 1)[0])
        host, port = parsed.hostname, parsed.port or 15002
    except ValueError as e:
        raise InputError(f"--remote {url}: not a Spark Connect URL ({e}); expected sc://HOST:PORT") from None
    if not host:
        raise InputError(f"--remote {url}: no host; expected sc://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=seconds).close()
    except OSError as e:
        raise InputError(
            f"--remote {url}: no Spark Connect server answers at {host}:{port} ({e.strerror or e}); "
            "start one, or check the host and port"
        ) from None


def _check_answers(url: str, seconds: float = 10.0) -> None:
    """Refuses a Spark Connect URL whose host and port accept a connection but do not answer
    as a gRPC server does (another service there: the client would retry for minutes). The
    channel is the client's own, with the URL's parameters (TLS, token)."""
    import grpc
    from pyspark.sql.connect.client import core

    # pyspark 4 names the builder of sc:// URLs DefaultChannelBuilder; 3.5, ChannelBuilder.
    builder = getattr(core, "DefaultChannelBuilder", None) or getattr(core, "ChannelBuilder")  # noqa: B009
    try:
        channel = builder(url).toChannel()
    except Exception as e:  # noqa: BLE001
        raise InputError(f"--remote {url}: not a Spark Connect URL ({_one_line(e)}); expected sc://HOST:PORT") from None
    try:
        grpc.channel_ready_future(channel).result(timeout=seconds)
    except grpc.FutureTimeoutError:
        raise InputError(
            f"--remote {url}: the server there accepts connections but does not answer as a Spark Connect "
            f"server (no gRPC answer in {seconds:.0f} s); check the host and port"
        ) from None
    finally:
        channel.close()


def _is_local(folder: str) -> bool:
    return not _is_remote(folder)


def _output_folder(option: str, path: str, overwrite: bool) -> str:
    """An output folder as the job writes it: a local path normalized (``stories/`` names the
    folder ``stories``, so that its temporary sibling is not inside it), refused when it exists
    (unless ``overwrite``) or cannot be made; a remote URL as it is."""
    if _is_remote(path):
        return path
    local = os.path.normpath(path[len("file://") :] if path.startswith("file://") else path)
    if os.path.exists(local) and not overwrite:
        name = "output" if option == "--output" else "--dropped"
        raise InputError(f"{path}: the {name} folder exists; give another {option} or --overwrite to replace it")
    if os.path.exists(local) and not os.path.isdir(local):
        raise InputError(f"{path}: a file, not a folder: give {option} a folder to write")
    parent = os.path.dirname(os.path.abspath(local))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise InputError(f"{path}: cannot be made: {parent} is a file, not a folder; give {option} another path")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot be made: {parent} is not writable; give {option} another path")
    return os.path.abspath(local)


def _in_this_process(spark) -> bool:
    """Whether the executors run beside the driver, in its folder (local mode): elsewhere
    (a cluster, a Spark Connect server) relative paths would name other files."""
    return not _is_remote_session(spark) and spark.sparkContext.master.startswith("local")


def _absolute(path: str) -> str:
    """A local input path made absolute, for executors that do not run in this folder."""
    if _is_remote(path):
        return path
    return os.path.abspath(path[len("file://") :] if path.startswith("file://") else path)


def _write(table, target: str, fmt: str, local: bool) -> None:
    """Writes a table to a folder of part files in ``fmt``: CSV with a header in each part
    (similarities with four decimals, as the command writes them), JSONL or Parquet."""
    from pyspark.sql import functions as F

    writer_mode = "error" if local else "overwrite"
    if fmt == "csv":
        for column in ("similarity", "jaccard", "containment"):
            if column in table.columns and dict(table.dtypes)[column] == "double":
                table = table.withColumn(column, F.when(F.col(column).isNotNull(), F.format_string("%.4f", column)))
        table.write.mode(writer_mode).csv(target, header=True, emptyValue="", nullValue="")
    elif fmt == "jsonl":
        table.write.mode(writer_mode).json(target)
    else:
        table.write.mode(writer_mode).parquet(target)


def _partials(output: str) -> List[str]:
    parent = os.path.dirname(os.path.abspath(output)) or "."
    base = os.path.basename(os.path.abspath(output)) + ".partial-"
    try:
        return [os.path.join(parent, n) for n in os.listdir(parent) if n.startswith(base)]
    except OSError:
        return []


def _setting_value(text: str):
    """A --set value as the setting's type: bool, int, float, a list (TOML), else a string."""
    if text in ("true", "false"):
        return text == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.startswith("["):
        import json

        try:
            return json.loads(text)
        except ValueError:
            pass
    return text.strip('"')
