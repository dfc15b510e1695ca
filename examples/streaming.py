"""Streaming into and out of a Hive ACID table, and its change feed.

1. A stream of JSON files is written into a partitioned table, each micro-batch one write id
   (exactly once: a restarted query never writes a batch twice).
2. The table is read as a stream: the current snapshot first, then the rows of each new write id
   (here at most one write id per micro-batch).
3. After an UPDATE and a DELETE, the change feed shows what changed, as a batch read and as a
   stream.

    .venv/bin/python examples/streaming.py [work_dir]      (default: ./warehouse/streaming)
"""
from __future__ import annotations

import json
import os
import shutil
import sys

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers use this venv

from pyspark.sql import SparkSession  # noqa: E402

from spark_hive_acid import HiveAcidTable  # noqa: E402
from spark_hive_acid.table import ensure_registered  # noqa: E402


def add_input_file(folder: str, n: int) -> None:
    """One JSON file of three orders (the stream's input)."""
    with open(os.path.join(folder, f"orders-{n}.json"), "w") as f:
        for i in range(3):
            order = {"id": n * 10 + i, "item": f"item{i}", "qty": i + 1, "day": f"2024-01-0{n % 2 + 1}"}
            f.write(json.dumps(order) + "\n")


def main() -> None:
    work = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "warehouse/streaming")
    shutil.rmtree(work, ignore_errors=True)
    inbox, table = os.path.join(work, "inbox"), os.path.join(work, "orders")
    os.makedirs(inbox)
    spark = (SparkSession.builder.master("local[2]").appName("hiveacid-streaming")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    ensure_registered(spark)

    # 1. the sink: one file per micro-batch, each batch one write id
    def ingest() -> None:
        query = (spark.readStream.schema("id long, item string, qty int, day string")
                 .option("maxFilesPerTrigger", 1).json(inbox)
                 .writeStream.format("hiveacid").option("partitionBy", "day")
                 .option("checkpointLocation", os.path.join(work, "ingest-checkpoint"))
                 .trigger(availableNow=True).start(table))
        query.awaitTermination()

    for n in range(3):
        add_input_file(inbox, n)
    ingest()
    add_input_file(inbox, 3)
    ingest()  # restarted from its checkpoint: only the new file is written
    t = HiveAcidTable.forPath(spark, table)
    print("\n=== the table after two runs of the ingest stream ===")
    t.toDF().orderBy("id").show()
    t.history().select("writeId", "operation", "partitions", "numInsertedRows").show()

    # 2. the source: the snapshot, then new write ids, at most one per micro-batch
    def follow(title: str, **options: str) -> None:
        print(f"\n=== {title} ===")
        reader = spark.readStream.format("hiveacid")
        for k, v in options.items():
            reader = reader.option(k, v)

        def show(df, batch_id):
            print(f"micro-batch {batch_id}:")
            df.orderBy(df.columns[0]).show(truncate=False)

        query = (reader.load(table).writeStream.foreachBatch(show)
                 .option("checkpointLocation", os.path.join(work, f"{title[:6]}-checkpoint"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()

    follow("stream from write id 3", startingVersion="3", maxWriteIdsPerTrigger="1")

    # 3. the change feed: an UPDATE is a pre-image and a post-image, a DELETE the deleted row
    t.update("id = 1", set={"qty": "qty * 100"})
    t.delete("id = 2")
    print("\n=== change feed of write ids 5 to 6 (a batch read) ===")
    (spark.read.format("hiveacid").option("readChangeFeed", "true")
     .option("startingVersion", "5").option("endingVersion", "6").load(table)
     .orderBy("_commit_version", "id").show(truncate=False))
    follow("change feed as a stream", readChangeFeed="true", startingVersion="4")
    spark.stop()


if __name__ == "__main__":
    main()
