"""A streaming query the kill tests run in a subprocess (and kill): the JSON files of an input
directory, one file per micro-batch, into a hiveacid table (path, or metastore with --table).

    python driver.py INPUT CHECKPOINT (--path DIR | --table db.t --metastore URI) [--buckets N]
"""
import argparse
import os
import sys

from pyspark.sql import SparkSession

import spark_hive_acid

ap = argparse.ArgumentParser()
ap.add_argument("input")
ap.add_argument("checkpoint")
ap.add_argument("--path")
ap.add_argument("--table")
ap.add_argument("--metastore")
ap.add_argument("--partition-by")
ap.add_argument("--buckets", type=int, default=0)
args = ap.parse_args()

spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
spark_hive_acid.register(spark)
src = (spark.readStream.schema("id BIGINT, part STRING").option("maxFilesPerTrigger", 1)
       .json(args.input))
w = src.writeStream.format("hiveacid").option("checkpointLocation", args.checkpoint)
if args.partition_by:
    w = w.option("partitionBy", args.partition_by)
if args.buckets:
    w = w.option("bucketBy", "id").option("numBuckets", str(args.buckets))
if args.table:
    w = w.option("table", args.table).option("metastoreUri", args.metastore)
q = w.trigger(availableNow=True).start(args.path) if args.path else \
    w.trigger(availableNow=True).start()
q.awaitTermination()
spark.stop()
print("DRIVER-DONE", file=sys.stderr)
os._exit(0)
