"""Ctrl-C during a long call: `megashingle.cluster` raises KeyboardInterrupt within a second of
a SIGINT that comes while the documents are read and shingled, and the package works as before
afterwards. The case runs in a child process sent a real SIGINT. (Once every document is in,
the sketching and clustering check at each document or slice of pairs; the corpus
statistics' two counts finish first.)"""

import signal
import subprocess
import sys
import time

import pytest

CHILD = r"""
import random, signal, sys, time
import megashingle

# Python keeps SIGINT ignored when it starts with it ignored (a job started in the background
# by a shell that is not interactive): the child takes Ctrl-C as a terminal's program does.
signal.signal(signal.SIGINT, signal.default_int_handler)

rng = random.Random(7)
vocab = [f"w{i}" for i in range(5000)]
n = int(sys.argv[1])
texts = [" ".join(rng.choices(vocab, k=80)) for _ in range(n)]
ids = [f"d{i}" for i in range(n)]
print("ready", time.monotonic(), flush=True)
try:
    megashingle.cluster(ids, texts)
    print("finished", time.monotonic(), flush=True)
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
rows = megashingle.cluster(["a", "b"], [" ".join(vocab[:40]), " ".join(vocab[:40])])
print("after", rows[0]["cluster_size"], flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_stops_a_long_cluster_within_a_second():
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, "300000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = child.stdout.readline().split()
        assert ready and ready[0] == "ready", child.stderr.read()
        time.sleep(0.1)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        ended = child.stdout.readline().split()
        assert ended, child.stderr.read()
        assert ended[0] == "interrupted", f"the call ended as {ended[0]!r} before the signal"
        assert float(ended[1]) - sent < 1.0, f"stopped {float(ended[1]) - sent:.2f} s after SIGINT"
        assert child.stdout.readline().split() == ["after", "2"]
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
