"""``python -m megashingle.spark``: runs the job's command line (see ``command``)."""

import sys

from megashingle.spark.command import main

sys.exit(main())
