"""Read a Hive ACID table with Spark: the whole table, a snapshot, row ids, a column subset,
a fast count.

Usage: python examples/read_table.py [WAREHOUSE_DIR]

If WAREHOUSE_DIR has no `nation25k` table yet, the Hive-written table from ../shared/corpus is
copied there first (Hive 3 wrote it: a base with 25,000 rows and two delete deltas).
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpus" / "nation25k"


def main(warehouse: str) -> None:
    table = Path(warehouse) / "nation25k"
    if not table.exists():
        if not CORPUS.exists():
            sys.exit(f"No table at {table} and no corpus at {CORPUS} to copy it from")
        table.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(CORPUS, table)
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


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main(sys.argv[1] if len(sys.argv) > 1 else "warehouse")
