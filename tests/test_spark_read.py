"""Spark-level reads: partitions, every type, row ids, column subsets, pushdown on and off."""
import datetime
import decimal
import os
import zoneinfo

import pyorc
import pytest
from pyspark.sql import Row
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from spark_hive_acid.exceptions import InvalidOptionError

pytestmark = pytest.mark.spark
UTC = zoneinfo.ZoneInfo("UTC")
ACID = "struct<operation:int,originalTransaction:bigint,bucket:int,rowId:bigint,currentTransaction:bigint,row:{row}>"


def bp(n, s=0):
    return (1 << 29) | (n << 16) | s


def write_events(path, row_type, events):
    """An ACID event file written with pyorc (independent of the project's writer)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        with pyorc.Writer(f, ACID.format(row=row_type), timezone=UTC) as w:
            for e in events:
                w.write(e)
            last = events[-1] if events else None
            w.set_user_metadata(**{
                "hive.acid.key.index": (f"{last[1]},{last[2]},{last[3]};" if last else "").encode(),
                "hive.acid.stats": f"{sum(e[0] == 0 for e in events)},0,{sum(e[0] == 2 for e in events)}".encode(),
                "hive.acid.version": b"2"})


def inserts(w, rows, bucket=0, stmt=0):
    return [(0, w, bp(bucket, stmt), i, w, r) for i, r in enumerate(rows)]


@pytest.fixture
def partitioned_table(tmp_path):
    """Partitions ds=<date string>/k=<int>, one escaped value and the default partition."""
    t = tmp_path / "sales"
    rt = "struct<id:int,name:string>"
    layout = {
        "ds=2024-01-01/k=1": [(1, "a"), (2, "b")],
        "ds=2024-01-01/k=2": [(3, "c")],
        "ds=2024-01%3A02/k=1": [(4, "d")],
        "ds=__HIVE_DEFAULT_PARTITION__/k=3": [(5, "e")],
    }
    for part, rows in layout.items():
        write_events(str(t / part / "delta_0000001_0000001_0000" / "bucket_00000"), rt, inserts(1, rows))
    # delete id 2 (rowId 1 of ds=2024-01-01/k=1)
    write_events(str(t / "ds=2024-01-01/k=1" / "delete_delta_0000002_0000002_0000" / "bucket_00000"), rt,
                 [(2, 1, bp(0), 1, 2, None)])
    return str(t)


def test_partitions_discovered_typed_and_unescaped(spark, partitioned_table):
    df = spark.read.format("hiveacid").load(partitioned_table)
    assert [f.name for f in df.schema] == ["id", "name", "ds", "k"]
    assert df.schema["k"].dataType == IntegerType() and df.schema["ds"].dataType == StringType()
    rows = sorted(df.collect(), key=lambda r: r.id)
    assert [(r.id, r.ds, r.k) for r in rows] == [
        (1, "2024-01-01", 1), (3, "2024-01-01", 2), (4, "2024-01:02", 1), (5, None, 3)]


@pytest.mark.parametrize("pushdown", ["false", "true"])
def test_filters_equal_with_and_without_pushdown(spark, partitioned_table, pushdown):
    spark.conf.set("spark.sql.python.filterPushdown.enabled", pushdown)
    try:
        df = spark.read.format("hiveacid").load(partitioned_table)
        assert sorted(r.id for r in df.filter("k = 1").collect()) == [1, 4]
        assert sorted(r.id for r in df.filter("ds is null").collect()) == [5]
        assert sorted(r.id for r in df.filter("name in ('a','c','e') and k <> 3").collect()) == [1, 3]
        assert sorted(r.id for r in df.filter("not (id in (1, 3))").collect()) == [4, 5]
        assert sorted(r.id for r in df.filter("name like 'd%' or id = 5").collect()) == [4, 5]
        assert df.filter("id > 2 and ds = '2024-01-01'").count() == 1
    finally:
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "false")


def test_pushdown_prunes_partitions(spark, partitioned_table):
    from spark_hive_acid.spark.datasource import HiveAcidPushdownReader
    from spark_hive_acid.catalog import open_scan
    from pyspark.sql.datasource import EqualTo, GreaterThan

    scan = open_scan({"path": partitioned_table})
    schema = StructType([StructField("id", IntegerType()), StructField("k", IntegerType())])
    reader = HiveAcidPushdownReader(scan, schema)
    left = list(reader.pushFilters([EqualTo(("k",), 2), GreaterThan(("id",), 0)]))
    assert left == []
    parts = reader.partitions()
    paths = {s.path for p in parts for s in p.task.slices}
    assert len(paths) == 1 and "k=2" in next(iter(paths))


def test_include_row_id_and_columns_option(spark, partitioned_table):
    df = (spark.read.format("hiveacid").option("includeRowId", "true")
          .option("columns", "row__id,name,k").load(partitioned_table))
    assert [f.name for f in df.schema] == ["row__id", "name", "k"]
    row = df.filter("name = 'd'").collect()[0]
    assert row.row__id == Row(writeId=1, bucketId=536870912, rowId=0) and row.k == 1


def test_user_schema_subset(spark, partitioned_table):
    df = spark.read.format("hiveacid").schema("name string, k bigint").load(partitioned_table)
    assert df.schema["k"].dataType == LongType()
    assert sorted((r.name, r.k) for r in df.collect()) == [("a", 1), ("c", 2), ("d", 1), ("e", 3)]


def test_every_type(spark, tmp_path):
    rt = ("struct<b:boolean,ti:tinyint,si:smallint,i:int,bi:bigint,f:float,d:double,dec:decimal(38,10),"
          "s:string,c:char(5),vc:varchar(10),bin:binary,dt:date,ts:timestamp,arr:array<int>,"
          "m:map<string,double>,st:struct<x:int,y:string>>")
    full = (True, -128, -32768, -2147483648, -9223372036854775808, 1.5, 2.25,
            decimal.Decimal("12345678901234567890.0123456789"), "héllo ☃ 日本", "ab   ", "vc",
            b"\x00\xff", datetime.date(1500, 2, 28), datetime.datetime(1400, 1, 1, 12, 30, 15, 123456, tzinfo=UTC),
            [1, None, 3], {"k": 1.0}, (7, "z"))
    nulls = tuple([None] * 17)
    modern = (False, 127, 32767, 2147483647, 9223372036854775807, -0.0, 1e300,
              decimal.Decimal("-0.0000000001"), "", "x    ", "", b"", datetime.date(2024, 2, 29),
              datetime.datetime(3000, 4, 11, 0, 0, tzinfo=UTC), [], {}, (None, None))
    write_events(str(tmp_path / "t" / "delta_0000001_0000001_0000" / "bucket_00000"), rt,
                 inserts(1, [full, nulls, modern]))
    df = spark.read.format("hiveacid").load(str(tmp_path / "t"))
    types = {f.name: f.dataType.simpleString() for f in df.schema}
    assert types == {"b": "boolean", "ti": "tinyint", "si": "smallint", "i": "int", "bi": "bigint",
                     "f": "float", "d": "double", "dec": "decimal(38,10)", "s": "string", "c": "string",
                     "vc": "string", "bin": "binary", "dt": "date", "ts": "timestamp_ntz",
                     "arr": "array<int>", "m": "map<string,double>", "st": "struct<x:int,y:string>"}
    rows = sorted(df.collect(), key=lambda r: (r.i is None, r.i or 0))
    r0 = rows[0]
    assert r0.dec == decimal.Decimal("12345678901234567890.0123456789")
    assert r0.s == "héllo ☃ 日本" and r0.c.rstrip() == "ab" and r0.bin == bytearray(b"\x00\xff")
    assert r0.dt == datetime.date(1500, 2, 28)
    assert r0.ts == datetime.datetime(1400, 1, 1, 12, 30, 15, 123456)
    assert r0.arr == [1, None, 3] and r0.m == {"k": 1.0} and r0.st == Row(x=7, y="z")
    assert rows[1].bi == 9223372036854775807 and rows[1].dt == datetime.date(2024, 2, 29)
    assert all(v is None for v in rows[2])


def test_auto_registration_module():
    import pyspark_hiveacid
    from spark_hive_acid.spark.datasource import HiveAcidDataSource

    assert pyspark_hiveacid.DefaultSource is HiveAcidDataSource
    assert pyspark_hiveacid.DefaultSource.name() == "hiveacid"


def test_empty_snapshot_reads_as_empty_dataframe(spark, partitioned_table):
    reader = spark.read.format("hiveacid").option("validWriteIds", "db.t:0:9223372036854775807::")
    df = reader.load(partitioned_table)  # nothing visible: the schema still comes from the files
    assert [f.name for f in df.schema] == ["id", "name", "ds", "k"]
    assert df.count() == 0
    assert reader.schema("id int").load(partitioned_table).count() == 0
    from spark_hive_acid.spark.table import HiveAcidTable

    # a HiveAcidTable is the table now (its DML, snapshot() and detail() could not honour a fixed
    # snapshot): the option is refused (issue 26), toDF(version=...) reads an older one
    with pytest.raises(InvalidOptionError, match="forPath: option validWriteIds is not one of"):
        HiveAcidTable.forPath(spark, partitioned_table,
                              options={"validWriteIds": "db.t:0:9223372036854775807::"})
    assert HiveAcidTable.forPath(spark, partitioned_table).count() == 4


def test_spark_submit_finds_the_format_without_register(tmp_path, corpus_copy):
    """The `pyspark_hiveacid` module makes the format available to a fresh spark-submit job run
    from outside the repository (an editable install too, issue 14 §4), and HiveAcidTable does not
    register it again over the static one (no WARN ... replaced a statically registered data
    source, issue 14 §6)."""
    import subprocess
    import sys
    from pathlib import Path

    table = corpus_copy("single_col")
    script = tmp_path / "job.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "from spark_hive_acid import HiveAcidTable\n"
        "spark = SparkSession.builder.getOrCreate()\n"
        f"n = spark.read.format('hiveacid').option('validWriteIds', 'd.t:3:{2**63 - 1}::').load({table!r}).count()\n"
        "print('ROWS', n)\n"
        f"print('TABLE', HiveAcidTable.forPath(spark, {table!r}).count())\n"
        "spark.stop()\n")
    submit = Path(sys.executable).parent / "spark-submit"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYSPARK_PYTHON"] = sys.executable
    done = subprocess.run([str(submit), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
                           str(script)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=str(tmp_path))
    assert "ROWS 1" in done.stdout and "TABLE 0" in done.stdout, done.stderr[-3000:]
    assert "registered data source" not in done.stderr


def test_python_workers_find_the_module_from_outside_the_repository(tmp_path):
    """Spark's workers look data sources up with pkgutil.iter_modules(): an editable install's
    import hook is invisible to it, a path entry is not (pyproject.toml package-dir)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import pkgutil; print(sorted(m.name for m in pkgutil.iter_modules() if m.name.startswith('pyspark_')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(tmp_path), env=env, timeout=120)
    assert "pyspark_hiveacid" in done.stdout, done.stdout + done.stderr


def test_empty_user_schema_counts_rows_after_deletes(spark, partitioned_table):
    """A zero-column read (what ``count()`` needs) still applies delete events: 5 inserted, 1 deleted."""
    df = spark.read.format("hiveacid").schema(StructType([])).load(partitioned_table)
    assert df.count() == 4
    assert df.filter("true").count() == 4


def test_zero_column_in_process_read_counts_rows_after_deletes(partitioned_table):
    from spark_hive_acid.catalog import open_scan

    table = open_scan({"path": partitioned_table}).to_arrow(columns=[])
    assert table.num_columns == 0 and table.num_rows == 4


def test_count_rows_option_counts_per_task_after_deletes(spark, partitioned_table):
    df = spark.read.format("hiveacid").option("countRows", "true").load(partitioned_table)
    assert [(f.name, f.dataType, f.nullable) for f in df.schema] == [("row_count", LongType(), False)]
    assert sum(r.row_count for r in df.collect()) == 4
    one = (spark.read.format("hiveacid").option("countRows", "true")
           .option("validWriteIds", "default.sales:1:9223372036854775807::").load(partitioned_table))
    assert sum(r.row_count for r in one.collect()) == 5  # before the delete (write id 2)


def test_count_rows_refuses_columns_and_user_schemas(spark, partitioned_table):
    with pytest.raises(Exception, match="countRows=true reads one column, row_count"):
        (spark.read.format("hiveacid").option("countRows", "true").option("columns", "name")
         .load(partitioned_table).collect())
    with pytest.raises(Exception, match="drop the user schema"):
        (spark.read.format("hiveacid").option("countRows", "true").schema("name string")
         .load(partitioned_table).collect())
