"""``python -m spark_hive_acid``: the ``hiveacid`` command-line tool (spark_hive_acid/cli)."""
import sys

from .cli import main

sys.exit(main())
