"""Writing insert-only (micro-managed) tables without Spark: ``write_table`` in path mode.

* Randomized histories of appends, static and dynamic overwrites (ORC and Parquet, partitioned or
  not, bucketed or not) compared with a Python model at EVERY write id, read back through the
  reader at that snapshot.
* The on-disk layout against the spec's naming rules (docs/format.md §9, Hive's FileSinkOperator):
  ``delta_W_W_SSSS`` / ``base_W`` holding plain files named ``NNNNNN_0``, no ACID columns, no
  ``bucket_`` files, no ``_orc_acid_version``, a file in every base even with no rows.
* Table creation and adoption: options checked, a Hive-written insert-only table (the corpus' Hive
  3.1 plain ORC file in a delta) adopted as insert-only, a killed writer leaving nothing visible.
"""
from __future__ import annotations

import datetime as dt
import decimal
import multiprocessing as mp
import os
import random
import shutil
import signal
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

from acid_files import write_orc_file, write_parquet_file
from corpus_location import corpus_table
from insert_only_layout import FILE_RE, apply_write, check_layout
from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.layout import load_layout
from spark_hive_acid.exceptions import InvalidOptionError, UnsupportedOperationError
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.txn import pathlog

MAX = 9223372036854775807
MM = {"tableProperties": "transactional_properties=insert_only"}
SCHEMA = pa.schema([
    ("id", pa.int64()), ("Name", pa.string()), ("amount", pa.decimal128(12, 2)),
    ("ts", pa.timestamp("us")), ("day", pa.date32()), ("flag", pa.bool_()),
    ("score", pa.float64()), ("tags", pa.list_(pa.int32())), ("raw", pa.binary()),
    ("p", pa.string()),
])
EXTREME_TS = [dt.datetime(1, 1, 1), dt.datetime(1582, 10, 4, 23, 59, 59, 999999),
              dt.datetime(1969, 12, 31, 23, 59, 59), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]


def _value(rng: random.Random, i: int) -> dict:
    def maybe(v):
        return None if rng.random() < 0.1 else v
    return {
        "id": i, "Name": maybe(rng.choice(["a", "é", "", "x y", "long" * 5])),
        "amount": maybe(decimal.Decimal(rng.randrange(-10**9, 10**9)).scaleb(-2)),
        "ts": maybe(rng.choice(EXTREME_TS) if rng.random() < 0.2 else
                    dt.datetime(2020, 1, 1) + dt.timedelta(microseconds=rng.randrange(10**13))),
        "day": maybe(dt.date(1, 1, 1) + dt.timedelta(days=rng.randrange(3_652_000))),
        "flag": maybe(rng.random() < 0.5), "score": maybe(rng.uniform(-1e6, 1e6)),
        "tags": maybe([rng.randrange(100) for _ in range(rng.randrange(3))]),
        "raw": maybe(bytes(rng.randrange(256) for _ in range(rng.randrange(4)))),
        "p": rng.choice(["x", "y", "z/1", None]),
    }


def _key(row: dict) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in row.items()))


def _snapshot(path: str, w: int) -> Counter:
    got = read_table(path, validWriteIds=f"default.t:{w}:{MAX}::").to_pylist()
    return Counter(_key(r) for r in got)


class Model:
    """What each write id's snapshot holds: rows per partition value."""

    def __init__(self, partitioned: bool):
        self.partitioned = partitioned
        self.parts: dict = {}
        self.history: list[Counter] = [Counter()]  # index = write id

    def apply(self, op: str, rows: list[dict]) -> None:
        if not self.partitioned and op == "dynamic":
            op = "overwrite"  # a table without partitions is replaced whole, rows or not
        self.parts = apply_write(self.parts, op, rows,
                                 (lambda r: r["p"]) if self.partitioned else (lambda r: ""))
        self.history.append(Counter(_key(r) for rs in self.parts.values() for r in rs))


CASES = [  # (file format, partitioned, bucketed, seed)
    ("orc", False, False, 1), ("orc", True, False, 2), ("orc", True, True, 3),
    ("parquet", False, False, 4), ("parquet", True, False, 5), ("parquet", False, True, 6),
]


@pytest.mark.parametrize("fmt,partitioned,bucketed,seed", CASES)
def test_random_histories_read_back_at_every_write_id(tmp_path, fmt, partitioned, bucketed, seed):
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    model = Model(partitioned)
    next_id = 0
    ops = ["append"] + [rng.choice(["append", "append", "overwrite", "dynamic"]) for _ in range(7)]
    schema = SCHEMA if partitioned else SCHEMA.remove(SCHEMA.get_field_index("p"))
    for step, op in enumerate(ops):
        n = rng.choice([0, 1, 5, 40]) if step else rng.randrange(5, 40)
        rows = [_value(rng, next_id + i) for i in range(n)]
        next_id += n
        if not partitioned:
            rows = [{k: v for k, v in r.items() if k != "p"} for r in rows]
        data = pa.Table.from_pylist(rows, schema=schema)
        create = dict(partition_by=["p"] if partitioned else None,
                      bucket_by=["id"] if bucketed else None, num_buckets=3 if bucketed else None,
                      options={"fileFormat": fmt, **MM})
        # several record batches, so a file gets several writes (Parquet: buffered row groups)
        write_table(data.to_batches(max_chunksize=7) or data, path,
                    mode="append" if op == "append" else "overwrite",
                    partition_overwrite_mode="dynamic" if op == "dynamic" else "static",
                    **(create if step == 0 else {}))
        model.apply(op, rows)
        for w in range(1, len(model.history)):
            assert _snapshot(path, w) == model.history[w], f"{op} #{step}: snapshot {w}"
    layout = load_layout(LocalFileSystem(), path)
    assert layout.insert_only and layout.file_format == fmt
    check_layout(Path(path), fmt, [f.name.lower() for f in SCHEMA if f.name != "p"],
                 (["id"], ["bigint"], 3, 2) if bucketed else None)


def test_overwrite_with_no_rows_leaves_one_empty_file_per_base(tmp_path):
    path = str(tmp_path / "t")
    data = pa.table({"id": [1, 2, 3], "p": ["a", "b", "b"]})
    write_table(data, path, partition_by=["p"], options={"fileFormat": "parquet", **MM})
    write_table(data.slice(0, 0), path, mode="overwrite")  # static: every partition emptied
    for p in ("a", "b"):
        base = tmp_path / "t" / f"p={p}" / "base_0000002"
        assert sorted(os.listdir(base)) == ["000000_0"]
        assert pq.ParquetFile(base / "000000_0").metadata.num_rows == 0
    assert read_table(path).num_rows == 0
    assert read_table(path, validWriteIds=f"default.t:1:{MAX}::").num_rows == 3


def test_layout_matches_hive_names_and_formats(tmp_path):
    """The naming rules, checked on a table with appends, overwrites and buckets (the randomized
    test checks them too; this one also checks what a reader of the files sees)."""
    path = tmp_path / "t"
    data = pa.table({"ID": pa.array([1, 2, 3, 4], pa.int32()), "v": ["a", "b", "c", "d"]})
    write_table(data, str(path), bucket_by=["ID"], num_buckets=4, options=MM)
    write_table(data, str(path))
    write_table(data, str(path), mode="overwrite")
    assert check_layout(path, "orc", ["id", "v"], (["id"], ["int"], 4, 2)) >= 3
    dirs = sorted(n for n in os.listdir(path) if not n.startswith("_"))
    assert dirs == ["base_0000003", "delta_0000001_0000001_0000", "delta_0000002_0000002_0000"]
    # bucketed: one file per bucket, named by the bucket (Hive's replaceTaskIdFromFilename)
    names = sorted(os.listdir(path / "base_0000003"))
    assert names and all(FILE_RE.match(n) for n in names)
    assert sum(po.ORCFile(path / "base_0000003" / n).nrows for n in names) == 4
    assert not any(n.startswith(("bucket_", "_orc_acid")) for d in dirs
                   for n in os.listdir(path / d))


def test_creation_options_are_checked(tmp_path):
    data = pa.table({"id": [1]})
    with pytest.raises(InvalidOptionError, match="full-ACID tables are always ORC"):
        write_table(data, str(tmp_path / "a"), options={"fileFormat": "parquet"})
    with pytest.raises(InvalidOptionError, match="fileFormat='avro'"):
        write_table(data, str(tmp_path / "b"), options={"fileFormat": "avro", **MM})
    with pytest.raises(InvalidOptionError, match="LZ4"):
        write_table(data, str(tmp_path / "c"),
                    options={"fileFormat": "parquet", "compression": "LZ4", **MM})
    with pytest.raises(InvalidOptionError, match="transactional_properties='bogus'"):
        write_table(data, str(tmp_path / "d"),
                    options={"tableProperties": "transactional_properties=bogus"})
    for name in "abcd":
        assert not (tmp_path / name / "_hiveacid_table.json").exists()
    mm = str(tmp_path / "mm")
    write_table(data, mm, options={"fileFormat": "parquet", **MM})
    with pytest.raises(InvalidOptionError, match="stores parquet files, not orc"):
        write_table(data, mm, options={"fileFormat": "orc"})
    full = str(tmp_path / "full")
    write_table(data, full)
    with pytest.raises(InvalidOptionError, match="is a full-ACID table"):
        write_table(data, full, options=MM)
    assert read_table(mm).num_rows == 1 and read_table(full).num_rows == 1


def test_parquet_compression_is_written(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": list(range(100))}), path,
                options={"fileFormat": "parquet", "compression": "ZSTD", **MM})
    f = next((tmp_path / "t").glob("delta_*/000000_0"))
    assert pq.ParquetFile(f).metadata.row_group(0).column(0).compression == "ZSTD"
    write_table(pa.table({"id": [1]}), str(tmp_path / "d"), options={"fileFormat": "parquet", **MM})
    g = next((tmp_path / "d").glob("delta_*/000000_0"))
    assert pq.ParquetFile(g).metadata.row_group(0).column(0).compression == "SNAPPY"


# --- adopting a Hive-written insert-only table -----------------------------------------------------
def test_hive_written_insert_only_orc_table_is_adopted_as_insert_only(tmp_path):
    """The corpus' Hive 3.1 plain ORC file (a CTAS output, what Hive writes into an insert-only
    table) in ``delta_1_1_0000``: our append adds a plain file beside it, and both read back."""
    src = corpus_table("alltypes_original") / "000000_0"
    table = tmp_path / "t"
    (table / "delta_0000001_0000001_0000").mkdir(parents=True)
    shutil.copy(src, table / "delta_0000001_0000001_0000" / "000000_0")
    hive = po.ORCFile(src).read()
    mine = hive.slice(0, 10).set_column(0, "id", pa.array(range(-10, 0), pa.int32()))
    mine = mine.cast(pa.schema([pa.field(f.name, pa.timestamp("us") if f.name == "timestamp_col"
                                         else f.type) for f in mine.schema]))
    write_table(mine, str(table))
    layout = load_layout(LocalFileSystem(), str(table))
    assert layout.insert_only and layout.file_format == "orc"
    new = table / "delta_0000002_0000002_0000" / "000000_0"
    assert po.ORCFile(new).schema.names == hive.schema.names  # same plain schema as Hive's file
    got = read_table(str(table))
    assert got.num_rows == 7300 + 10
    assert sorted(got.column("id").to_pylist())[:10] == list(range(-10, 0))
    assert read_table(str(table), validWriteIds=f"default.t:1:{MAX}::").num_rows == 7300


def test_adoption_detects_parquet_and_refuses_text(tmp_path):
    t = tmp_path / "pq"
    write_parquet_file(t / "p=1" / "delta_0000001_0000001_0000" / "000000_0", {"id": [1, 2]})
    write_table(pa.table({"id": [3], "p": [1]}), str(t))
    assert load_layout(LocalFileSystem(), str(t)).file_format == "parquet"
    assert sorted(read_table(str(t)).column("id").to_pylist()) == [1, 2, 3]
    assert (t / "p=1" / "delta_0000002_0000002_0000" / "000000_0").read_bytes()[:4] == b"PAR1"

    text = tmp_path / "text"
    (text / "delta_0000001_0000001_0000").mkdir(parents=True)
    (text / "delta_0000001_0000001_0000" / "000000_0").write_text("1\n2\n")
    with pytest.raises(UnsupportedOperationError, match="neither ORC nor Parquet"):
        write_table(pa.table({"id": [3]}), str(text))
    assert not (text / "_hiveacid_table.json").exists()

    orc = tmp_path / "orc"
    write_orc_file(orc / "delta_0000001_0000001_0000" / "000000_0", "struct<id:bigint>", [(1,)])
    with pytest.raises(InvalidOptionError, match="insert-only table, not transactional_properties"):
        write_table(pa.table({"id": [3]}), str(orc),
                    options={"tableProperties": "transactional_properties=default"})


# --- a killed writer -----------------------------------------------------------------------------
def _killed_after_publish(path: str) -> None:
    from spark_hive_acid.acid.layout import staging_dir
    from spark_hive_acid.catalog import PathTable
    from spark_hive_acid.write.publish import publish
    from spark_hive_acid.write.schema import map_columns
    from spark_hive_acid.write.task_writer import InsertTarget, TableSpec, stage_batches

    fs = LocalFileSystem()
    ref = PathTable(path, {"txnTimeoutSeconds": "0.5"})
    layout = ref.layout()
    spec = TableSpec.of(path, layout)
    txn = ref.begin("overwrite")
    data = pa.table({"id": [100, 101], "p": ["a", "c"]})
    staged = stage_batches(fs, spec, InsertTarget(txn.write_id, base=True),
                           map_columns(layout, data.schema), data.to_batches(),
                           fs.join(staging_dir(fs, path, txn.write_id), "direct"), 0)
    publish(fs, spec, txn, staged)  # base_2 with plain files is in the table; no commit record
    os.kill(os.getpid(), signal.SIGKILL)


def test_killed_writer_leaves_the_table_as_before(tmp_path):
    path = str(tmp_path / "t")
    write_table(pa.table({"id": [1, 2], "p": ["a", "b"]}), path, partition_by=["p"],
                options={"fileFormat": "parquet", **MM})
    p = mp.get_context("fork").Process(target=_killed_after_publish, args=(path,))
    p.start()
    p.join(60)
    assert p.exitcode == -signal.SIGKILL
    assert (tmp_path / "t" / "p=a" / "base_0000002" / "000000_0").exists()
    assert sorted(read_table(path).column("id").to_pylist()) == [1, 2]
    time.sleep(0.6)  # past the dead writer's timeout: the next writer aborts it
    write_table(pa.table({"id": [3], "p": ["a"]}), path)
    assert sorted(read_table(path).column("id").to_pylist()) == [1, 2, 3]
    assert pathlog.read_snapshot(LocalFileSystem(), path).is_aborted(2)
    assert not (tmp_path / "t" / "p=a" / "base_0000002").exists()
