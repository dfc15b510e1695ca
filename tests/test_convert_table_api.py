"""The table API of the conversion (``HiveAcidTable.convertTo*`` / ``mirrorTo*`` /
``mirrorStream``) on the suite's SparkSession: DML made by Spark, converted, mirrored, and the
mirror as a ``Trigger.AvailableNow`` stream."""
from __future__ import annotations

from collections import Counter

import pytest

from convert_model import iceberg_props
from spark_hive_acid import HiveAcidTable
from spark_hive_acid.conversion import delta_target, iceberg_target

pytest.importorskip("pyiceberg")
pytest.importorskip("deltalake")
pytestmark = pytest.mark.spark


def _rows(target, version):
    import pyarrow as pa

    t = pa.Table.from_batches(list(target.read(version.ref)))
    return Counter(zip(t.column("id").to_pylist(), t.column("s").to_pylist(),
                       t.column("p").to_pylist()))


def test_convert_and_mirror_from_spark(spark, tmp_path):
    path = str(tmp_path / "hive")
    df = spark.createDataFrame([(i, f"s{i}", i % 3) for i in range(30)], "id int, s string, p int")
    df.write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    t = HiveAcidTable.forPath(spark, path)
    t.delete("id < 5")
    t.update("id = 7", set={"s": "'seven'"})
    delta = str(tmp_path / "delta")
    done = t.convertToDelta(delta)
    assert done["verdict"]["ok"] and done["write_id"] == 3
    assert [s["operation"] for s in done["steps"]] == ["create", "delete", "update"]
    ice = t.convertToIceberg(iceberg_props(tmp_path), "db.t")
    assert ice["verdict"]["ok"] and len(ice["steps"]) == 3

    want = Counter((i, "seven" if i == 7 else f"s{i}", i % 3) for i in range(5, 30))
    for target in (delta_target(delta), iceberg_target(iceberg_props(tmp_path), "db.t")):
        assert _rows(target, target.versions()[-1]) == want

    spark.createDataFrame([(100, "new", 1)], "id int, s string, p int") \
        .write.format("hiveacid").mode("append").save(path)
    t.delete("id = 8")
    assert [s["writeId"] for s in t.mirrorToDelta(delta)["steps"]] == [4, 5]
    assert [s["writeId"] for s in t.mirrorToIceberg(iceberg_props(tmp_path), "db.t")["steps"]] \
        == [4, 5]
    want[(100, "new", 1)] += 1
    del want[(8, "s8", 2)]
    for target in (delta_target(delta), iceberg_target(iceberg_props(tmp_path), "db.t")):
        assert _rows(target, target.versions()[-1]) == want


def test_mirror_stream_available_now(spark, tmp_path):
    path = str(tmp_path / "hive")
    spark.createDataFrame([(i, f"s{i}", i % 2) for i in range(10)], "id int, s string, p int") \
        .write.format("hiveacid").mode("append").option("partitionBy", "p").save(path)
    t = HiveAcidTable.forPath(spark, path)
    delta = str(tmp_path / "delta")
    q = t.mirrorStream(str(tmp_path / "chk"), delta=delta)
    q.awaitTermination(120)
    assert delta_target(delta).last_write_id() == 1
    t.delete("id = 3")
    spark.createDataFrame([(50, "x", 0)], "id int, s string, p int") \
        .write.format("hiveacid").mode("append").save(path)
    t.mirrorStream(str(tmp_path / "chk"), delta=delta).awaitTermination(120)
    target = delta_target(delta)
    assert [v.write_id for v in target.versions()] == [1, 2, 3]
    assert _rows(target, target.versions()[-1]) == Counter(
        [(i, f"s{i}", i % 2) for i in range(10) if i != 3] + [(50, "x", 0)])


def test_the_example_runs_as_is(tmp_path):
    """examples/convert.py (docs/convert.md points to it), as a user runs it."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    out = subprocess.run([sys.executable, str(root / "examples" / "convert.py"),
                          str(tmp_path / "work")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    assert "write id 1: create\nwrite id 2: delete\nwrite id 3: update\nverdict: equal" in text
    assert "Delta version 2 = Hive write id 3 (update)" in text
    assert "rows as of write id 1: 6" in text
    assert "Delta: write ids [4, 5] applied, verdict equal" in text
    assert "Iceberg: write ids [4, 5] applied, verdict equal" in text
    assert "Delta rows now: 5" in text  # 6 - 1 deleted + 1 inserted - 1 deleted
