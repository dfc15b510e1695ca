"""SQL through a view, time travel and the hiveacid command-line tool, on a table in a folder.

    .venv/bin/python examples/sql_time_travel_cli.py [table_dir]   (default: ./warehouse/sql_demo)
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers use this venv

from pyspark.sql import SparkSession  # noqa: E402

import spark_hive_acid as sha  # noqa: E402
from spark_hive_acid import HiveAcidTable  # noqa: E402


def main() -> None:
    path = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "warehouse/sql_demo")
    shutil.rmtree(path, ignore_errors=True)
    spark = (SparkSession.builder.master("local[2]").appName("hiveacid-sql-demo")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")

    # 1. a table, written with the DataFrame API (write id 1)
    spark.createDataFrame([(1, "apple", 3), (2, "pear", 1)], "id int, item string, qty int") \
        .write.format("hiveacid").mode("append").save(path)
    time.sleep(1.1)
    before_sql = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())  # UTC
    time.sleep(1.1)

    # 2. SQL through a view defined again before each statement (docs/sql.md)
    sha.register_view(spark, "orders", path)
    sha.sql(spark, "INSERT INTO orders VALUES (3, 'plum', 7)")                      # write id 2
    spark.createDataFrame([(4, "fig", 2)], "id int, item string, qty int").createOrReplaceTempView("new")
    sha.sql(spark, "INSERT INTO orders SELECT * FROM new")                         # write id 3
    print("\n=== SELECT through the view: every commit so far ===")
    sha.sql(spark, "SELECT * FROM orders ORDER BY id").show()

    # 3. DML and time travel
    t = HiveAcidTable.forPath(spark, path)
    t.delete("qty < 2")                                                             # write id 4
    print(f"=== {t!r}: now, as of write id 2, and as of {before_sql} UTC ===")
    t.toDF().orderBy("id").show()
    t.toDF(version=2).orderBy("id").show()
    spark.read.format("hiveacid").option("timestampAsOf", before_sql).load(path).orderBy("id").show()
    print("snapshot:", t.snapshot())
    t.history().select("writeId", "state", "operation", "numInsertedRows", "numDeletedRows").show()
    t.detail().select("location", "numFiles", "sizeInBytes", "currentWriteId").show(truncate=False)

    # 4. a typo is an error naming the option meant
    try:
        spark.read.format("hiveacid").option("versionAsOff", 2).load(path).count()
    except Exception as e:  # noqa: BLE001 - Spark wraps the library's UnknownOptionError
        print("typo refused:", [line for line in str(e).splitlines() if "did you mean" in line][0])
    spark.stop()

    # 5. the command-line tool: no Spark needed
    for command in ("inspect", "history", "validate"):
        print(f"\n$ hiveacid {command} {path}")
        done = subprocess.run([sys.executable, "-m", "spark_hive_acid", command, path])
        if done.returncode != 0:
            raise SystemExit(f"hiveacid {command} failed with exit code {done.returncode}")


if __name__ == "__main__":
    main()
