"""Read a Hive ACID table with Spark: the whole table, a snapshot, row ids, a column subset,
a fast count.

Usage: python examples/read_table.py [--skip-without-corpus] [WAREHOUSE_DIR]

The table is `nation25k` from the Hive-written corpus (Hive 3 wrote it: a base with 25,000 rows and
two delete deltas). The corpus is not part of the repository: if WAREHOUSE_DIR has no `nation25k`
table yet, it is copied there from $HIVE_ACID_CORPUS (default: ../shared/corpus beside the
repository). Without either, the script stops with exit code 2, or, with --skip-without-corpus
(what `make demo` passes), says so and exits 0.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

HERE = Path(__file__).resolve().parent


def corpus_table() -> Path:
    """nation25k in the corpus named by $HIVE_ACID_CORPUS, or in ../shared/corpus beside the repository."""
    corpus = os.environ.get("HIVE_ACID_CORPUS", "").strip()
    return (Path(corpus).expanduser().absolute() if corpus
            else HERE.parent.parent / "shared" / "corpus") / "nation25k"


def main(warehouse: str, skip_without_corpus: bool = False) -> int:
    table = Path(warehouse) / "nation25k"
    if not table.exists():
        source = corpus_table()
        if not source.is_dir():
            print(f"No table at {table} and no Hive-written corpus table at {source} to copy it from: "
                  "set HIVE_ACID_CORPUS to the corpus directory.", file=sys.stderr)
            if skip_without_corpus:
                print("examples/read_table.py skipped (it needs the Hive-written corpus).", file=sys.stderr)
                return 0
            return 2
        table.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(source, table)
    spark = (SparkSession.builder.master("local[2]").appName("hiveacid-read-example")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    # 1. Everything committed: the two delete deltas remove nations 5 and 19.
    df = spark.read.format("hiveacid").load(str(table))
    print(f"rows visible now: {df.count()}")
    df.groupBy("n_regionkey").count().orderBy("n_regionkey").show()

    # 2. A snapshot: write ids up to 3 only (the delete of nation 19 is not visible yet).
    old = (spark.read.format("hiveacid")
           .option("validWriteIds", "default.nation25k:3:9223372036854775807::")
           .load(str(table)))
    print(f"rows at write id 3: {old.count()}")

    # 3. Hive's ROW__ID of each row, and only the columns we need.
    ids = (spark.read.format("hiveacid").option("includeRowId", "true")
           .option("columns", "row__id,n_name").load(str(table)))
    ids.filter("n_name = 'BRAZIL' and row__id.rowId < 2003").show(truncate=False)

    # 4. A fast count: each Spark task applies the deletes and returns one number, not its rows.
    from spark_hive_acid.table import HiveAcidTable

    print(f"HiveAcidTable.count(): {HiveAcidTable.forPath(spark, str(table)).count()}")
    spark.stop()
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser(description="Read a Hive-written ACID table with Spark.")
    parser.add_argument("warehouse", nargs="?", default="warehouse",
                        help="folder that holds (or receives a copy of) the nation25k table")
    parser.add_argument("--skip-without-corpus", action="store_true",
                        help="exit 0 with a note, instead of 2, when there is no table and no corpus")
    args = parser.parse_args()
    sys.exit(main(args.warehouse, args.skip_without_corpus))
