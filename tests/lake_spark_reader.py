"""Run by tests/lake_spark.py under PySpark 4.1 (not imported by the suite): read each table
version of a job with Spark's Iceberg runtime / Delta package and save its rows as Arrow IPC.

A job (JSON): ``{"jars": [...], "out": DIR, "reads": [read, ...]}``; a read is
``{"format": "delta", "path": P, "version": V}`` or ``{"format": "iceberg", "catalog": NAME,
"catalog_db": SQLITE_FILE, "warehouse": URI, "table": "db.t", "snapshot": ID}``; read i goes to ``DIR/i.arrow``.
"""
import json
import sys

import pyarrow as pa
import pyarrow.ipc as ipc
from pyspark.sql import SparkSession


def main(job_path: str) -> None:
    job = json.load(open(job_path))
    builder = (SparkSession.builder.master("local[2]").appName("lake-readers")
               .config("spark.ui.enabled", "false")
               .config("spark.jars", ",".join(job["jars"]))
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.extensions",
                       "io.delta.sql.DeltaSparkSessionExtension,"
                       "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
               .config("spark.sql.catalog.spark_catalog",
                       "org.apache.spark.sql.delta.catalog.DeltaCatalog")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.databricks.delta.snapshotPartitions", "2")
               .config("spark.default.parallelism", "2"))
    catalogs = {r["catalog"]: (r["catalog_db"], r["warehouse"]) for r in job["reads"]
                if r["format"] == "iceberg"}
    for name, (db, warehouse) in sorted(catalogs.items()):
        # Iceberg's JDBC catalog reads the rows of the catalog of its own name: the Spark
        # catalog bears the pyiceberg catalog's name
        builder = (builder.config(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
                   .config(f"spark.sql.catalog.{name}.type", "jdbc")
                   .config(f"spark.sql.catalog.{name}.uri", f"jdbc:sqlite:{db}")
                   .config(f"spark.sql.catalog.{name}.warehouse", warehouse))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    for i, r in enumerate(job["reads"]):
        if r["format"] == "delta":
            df = spark.read.format("delta").option("versionAsOf", r["version"]).load(r["path"])
        else:
            df = spark.read.option("versionAsOf", str(r["snapshot"])).table(
                f"{r['catalog']}.{r['table']}")
        table = df.toArrow()
        with ipc.new_file(f"{job['out']}/{i}.arrow", table.schema) as w:
            w.write_table(table)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
