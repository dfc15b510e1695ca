"""Leave Hive ACID without losing anything: a table with inserts, a DELETE and an UPDATE is
converted to Delta and to Iceberg (one version per write id), time-travelled there, then
mirrored after Hive writes more. Needs nothing outside the repository (``make venv``)::

    python examples/convert.py [WORK_DIR]
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers use this venv

import deltalake  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

from spark_hive_acid import HiveAcidTable, register  # noqa: E402

work = Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()).resolve()
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("ERROR")
register(spark)

# a Hive ACID table: write ids 1 (insert), 2 (delete), 3 (update)
hive = str(work / "hive" / "orders")
(spark.createDataFrame([(i, f"item{i}", 10 * i, "2024-01-0" + str(1 + i % 2)) for i in range(6)],
                       "id int, item string, qty int, day string")
 .write.format("hiveacid").mode("append").option("partitionBy", "day").save(hive))
orders = HiveAcidTable.forPath(spark, hive)
orders.delete("id = 0")
orders.update("id = 1", set={"qty": "qty + 1"})

# Delta: one version per write id, verified against our read of Hive
result = orders.convertToDelta(str(work / "delta" / "orders"))
print("=== to Delta ===")
for step in result["steps"]:
    print(f"write id {step['writeId']}: {step['operation']}")
print("verdict:", "equal" if result["verdict"]["ok"] else "DIFFERENT")

dt = deltalake.DeltaTable(str(work / "delta" / "orders"))
for entry in sorted(dt.history(), key=lambda e: e["version"]):
    print(f"Delta version {entry['version']} = Hive write id {entry['hive.write-id']} "
          f"({entry['hive.operation']})")
as_of_1 = deltalake.DeltaTable(str(work / "delta" / "orders"), version=0).to_pyarrow_table()
print("rows as of write id 1:", as_of_1.num_rows)

# Iceberg: pyiceberg's SQL catalog on a SQLite file (no server)
catalog = {"type": "sql", "uri": f"sqlite:///{work}/iceberg.db", "warehouse": f"file://{work}/ice"}
result = orders.convertToIceberg(catalog, "sales.orders")
print("=== to Iceberg ===")
print("snapshots:", len(result["steps"]), "verdict:", result["verdict"]["ok"])

# Hive keeps writing; each mirror run applies only what is new, exactly once
spark.createDataFrame([(9, "item9", 90, "2024-01-01")], "id int, item string, qty int, day string") \
    .write.format("hiveacid").mode("append").save(hive)
orders.delete("id = 2")
print("=== mirror ===")
for name, done in (("Delta", orders.mirrorToDelta(str(work / "delta" / "orders"))),
                   ("Iceberg", orders.mirrorToIceberg(catalog, "sales.orders"))):
    print(f"{name}: write ids {[s['writeId'] for s in done['steps']]} applied, "
          f"verdict {'equal' if done['verdict']['ok'] else 'DIFFERENT'}")
print("Delta rows now:", deltalake.DeltaTable(str(work / "delta" / "orders")).to_pyarrow_table()
      .num_rows)
spark.stop()
