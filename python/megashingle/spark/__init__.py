"""megashingle on Apache Spark: the stories of a corpus larger than one machine.

``python -m megashingle.spark --input PATH --output DIR`` reads what ``megashingle cluster``
reads, with the same ids: folders of ``.txt``/``.html``/``.htm``/``.eml`` files (id: the path
relative to the folder), single such files (id: the file name), mail archives (``.mbox``: a
document a message, id its ``Message-ID``) and WARC files (``.warc``: a document a page or
text, id its ``WARC-Target-URI``), in folders or alone, CSV with a header and JSONL (each also
``.gz``/``.zst``), and Parquet (Spark's reader). Several ``--input`` are one collection; a
repeated id keeps its first record in input order, and a repeated ``WARC-Target-URI`` its
newest record by ``WARC-Date``, as the command does.

Record and document files are listed on the driver and read on the executors with the
library's own readers (``RecordReader``); texts never pass through the JVM, and each text is
read and shingled once. Every document gets a number, (file position << 32) | record number,
used for all shuffles instead of its id.

The passes, each over the Rust library:

1. reading: each record's id, number and shingle sets (``Sketcher.shingle_packed``: main
   set, page set, word count and lead, one binary value per document), kept; repeated ids,
   counts and the reports of skipped records come to the driver (a shuffle of ids only);
2. document frequency: each batch's page sets counted, its counts sent as one binary row a
   range of the key space, and each range summed in one task; the shingles in at least
   ``boilerplate.min-documents`` pages sent to the executors with the functions that use
   them;
3. story frequency (``boilerplate.min-stories``): a first clustering, its pairs verified from
   the minima only (``cluster.verify = "estimate"``), as the command makes it; the shingles
   found in at least ``min-stories`` of its stories join the boilerplate (one shuffle of
   each batch's distinct (shingle, story) pairs, a binary row a range of shingles);
4. sketches (``Sketcher.sketch_sets_packed``: from the kept sets, one binary value per
   document) and candidate keys; the sketches are hash-partitioned by document number once
   and kept;
5. candidate pairs of document numbers from the keys, with the library's bucket rules (all
   pairs up to ``ALL_PAIRS_BUCKET`` documents, a star from the smallest id up to
   ``cluster.max-bucket``);
6. groups: the connected components of the candidate pairs, by one union-find on the driver
   when they are at most ``--max-local-pairs`` (default 50 million), else large-star /
   small-star rounds (Kiveris et al., 2014). Every link lies inside a group, so every story
   does. A group of more than ``--max-group`` documents is split into the components of its
   verified links (each pair verified where the first document's sketch is);
7. each group clustered on one executor exactly as the command clusters documents
   (``cluster_group``): the grouped documents partitioned by group, sorted, and each
   partition's groups clustered in turn (one Rust call per group); lone documents stay alone.
   Each sketch moves once, to its group; no pair is verified across the network.

The first clustering (steps 4 to 7 with sketches without their sets) and the final one share
the code. With ``--dedup`` (``dedup_files``), step 7 also deduplicates each story by the
library's rule (``dedup_group_packed``; for ``--keep earliest``, by the times read in pass 1
from ``--time-column``), and the kept ids are joined back onto the input rows
as Spark's readers give them, every column kept.

The modules, in the order the passes run: ``inputs`` (what is read), ``reading`` (pass 1),
``frequency`` (passes 2 and 3), ``candidates`` (sketches, candidate pairs, their checks),
``components`` (groups), ``placement`` (groups clustered), ``job`` (the entry points), ``dedup``
(the records kept), ``command``
(the command line; ``__main__`` runs it), with ``common`` and ``workers`` beside them. Every rule
the command also applies (the bucket rule, verification's prefilter, what a file is read as, the
packed forms of sets and sketches) is the library's, called through the extension.

The job runs in a classic session (``--master local[*]``, ``spark://HOST:7077``, ``yarn``, with
``--conf`` settings as spark-submit takes them) and through Spark Connect (``--remote
sc://HOST:PORT``, with the ``connect`` extra) alike: it uses DataFrames only, never the
SparkContext's RDDs or broadcast variables, and checks first that the executors can import
megashingle (``workers``). On a cluster the executors need the package: docs/SPARK.md, "On a
cluster", ships it as a packed virtual environment (``spark.archives`` and
``spark.pyspark.python``).

Errors the user can act on are ``megashingle.InputError`` (also ``megashingle.spark.InputError``).

Adaptive query execution is turned off in the job's own session: the job sets its partitions
itself, and adaptive execution would run every query stage as a Spark job of its own.
"""

from megashingle import InputError

from .command import main
from .common import DEFAULT_MAX_GROUP, DEFAULT_MAX_LOCAL_PAIRS
from .components import _components
from .dedup import DedupResult, dedup_files
from .inputs import Inputs, plan_inputs
from .job import Result, cluster, cluster_files

__all__ = ["InputError", "cluster", "cluster_files", "dedup_files", "main"]
__all__ += [
    "DEFAULT_MAX_GROUP",
    "DEFAULT_MAX_LOCAL_PAIRS",
    "DedupResult",
    "Inputs",
    "Result",
    "plan_inputs",
    "_components",
]
