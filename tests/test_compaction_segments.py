"""One ``bucket_N`` file written in segments and concatenated at the stripe level
(``write/orc_concat.py``, ``write/acid_file.concat_acid_files``, ``compaction/segments.py``).

The concatenation of segment files must be indistinguishable from one writer's file of the same
events, except for where stripes end: pyarrow, pyorc and Hive 2.3's own reader read the same rows
and ROW__IDs, for every codec and every column type (nulls included); the file-level statistics
are those of the single file; each stripe keeps its own statistics (stripe skipping in our reader
still right); the key index lists every stripe's last key.
"""
from __future__ import annotations

import datetime
import decimal
import logging
import os
import random
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pyorc
import pytest

from hive_ref.fixtures import hive_ref  # noqa: F401
from spark_hive_acid.acid.layout import TableLayout
from spark_hive_acid.compaction import segments
from spark_hive_acid.compaction.plan import Unit, exact_type
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.read.plan import FileSlice
from spark_hive_acid.direct import read_table
from spark_hive_acid.write.acid_file import (AcidFileWriter, concat_acid_files,
                                             write_acid_version_file)
from spark_hive_acid.write.schema import row_type_of

COLUMNS = [("id", "bigint"), ("b", "boolean"), ("ti", "tinyint"), ("si", "smallint"),
           ("i", "int"), ("f", "float"), ("d", "double"), ("dec", "decimal(12,2)"),
           ("s", "string"), ("dt", "date"), ("ts", "timestamp"), ("bin", "binary"),
           ("arr", "array<int>"), ("m", "map<string,int>"), ("st", "struct<x:int,y:string>")]
ROWS = 3000
BUCKET = 536870912  # bucket property of writer 0
CODECS = ["NONE", "ZLIB", "SNAPPY", "ZSTD", "LZ4"]


def _rows(rng: random.Random, n: int) -> pa.Table:
    """``n`` random rows of every type, about 10% nulls in every column."""
    def maybe(v):
        return None if rng.random() < 0.1 else v

    epoch = datetime.datetime(1970, 1, 1)
    data = {
        "id": list(range(n)),
        "b": [maybe(rng.random() < 0.5) for _ in range(n)],
        "ti": [maybe(rng.randrange(-128, 128)) for _ in range(n)],
        "si": [maybe(rng.randrange(-30000, 30000)) for _ in range(n)],
        "i": [maybe(rng.randrange(-2**31, 2**31)) for _ in range(n)],
        "f": [maybe(rng.uniform(-1e3, 1e3)) for _ in range(n)],
        "d": [maybe(rng.uniform(-1e9, 1e9)) for _ in range(n)],
        "dec": [maybe(decimal.Decimal(rng.randrange(-10**11, 10**11)) / 100) for _ in range(n)],
        "s": [maybe(f"s{rng.randrange(10**6)}") for _ in range(n)],
        "dt": [maybe(datetime.date(1990, 1, 1) + datetime.timedelta(days=rng.randrange(20000)))
               for _ in range(n)],
        "ts": [maybe(epoch + datetime.timedelta(seconds=rng.randrange(2 * 10**9),
                                                microseconds=rng.randrange(10**6)))
               for _ in range(n)],
        "bin": [maybe(bytes(rng.randrange(256) for _ in range(rng.randrange(5)))) for _ in range(n)],
        "arr": [maybe([maybe(rng.randrange(100)) for _ in range(rng.randrange(3))]) for _ in range(n)],
        "m": [maybe({f"k{j}": rng.randrange(100) for j in range(rng.randrange(3))}) for _ in range(n)],
        # null structs too: the ACID writer works around pyarrow's ORC writer, which misplaces
        # the fields of a struct nested in ``row`` after a null one (write/nested_nulls.py)
        "st": [maybe({"x": maybe(rng.randrange(100)), "y": maybe(f"y{rng.randrange(9)}")})
               for _ in range(n)],
    }
    row_type = exact_type(row_type_of(TableLayout(columns=COLUMNS)))
    return pa.table({f.name: pa.array(data[f.name], f.type) for f in row_type})


def _write(path: str, rows: pa.Table, lo: int, hi: int, codec: str) -> None:
    """Events ``lo:hi`` of ``rows`` (ROW__IDs: write 1 for the first half of the rows, then
    write 2), 400 rows a stripe or so."""
    writer = AcidFileWriter(LocalFileSystem(), path, pa.struct(list(rows.schema)),
                            compression=codec, stripe_size=1024)
    ids = np.arange(lo, hi)
    owid = np.where(ids < ROWS // 2, 1, 2)
    rid = np.where(ids < ROWS // 2, ids, ids - ROWS // 2)
    for a in range(lo, hi, 400):
        b = min(a + 400, hi)
        writer.write_keyed_inserts(owid[a - lo:b - lo], np.full(b - a, BUCKET), rid[a - lo:b - lo],
                                   rows.slice(a, b - a))
    writer.close()


def _stripe_keys(path: str) -> list[tuple[int, int, int]]:
    orc = po.ORCFile(path)
    out = []
    for i in range(orc.nstripes):
        t = orc.read_stripe(i, columns=["originalTransaction", "bucket", "rowId"])
        out.append(tuple(int(t.column(c)[t.num_rows - 1].as_py()) for c in range(3)))
    return out


def _table_dir(root, name: str, bucket_file: str) -> str:
    """A table directory whose base holds ``bucket_file`` as its ``bucket_00000``."""
    base = os.path.join(str(root), name, "base_0000002")
    os.makedirs(base)
    shutil.copy(bucket_file, os.path.join(base, "bucket_00000"))
    write_acid_version_file(LocalFileSystem(), base)
    return os.path.dirname(base)


@pytest.mark.hive
@pytest.mark.parametrize("codec", CODECS)
def test_concatenated_segments_read_as_one_writers_file(hive_ref, tmp_path, codec,  # noqa: F811
                                                         monkeypatch):
    rows = _rows(random.Random(codec), ROWS)
    single = str(tmp_path / "single")
    _write(single, rows, 0, ROWS, codec)
    cuts = [0, 700, 700, 1900, ROWS]  # an empty segment too
    parts = [str(tmp_path / f"seg{k}") for k in range(len(cuts) - 1)]
    for p, lo, hi in zip(parts, cuts, cuts[1:]):
        _write(p, rows, lo, hi, codec)
    target = str(tmp_path / "bucket_00000")
    summary = concat_acid_files(LocalFileSystem(), parts, target)
    assert (summary.inserts, summary.deletes) == (ROWS, 0)

    # rows and ACID columns: pyarrow and pyorc
    got, want = po.ORCFile(target), po.ORCFile(single)
    assert got.compression == want.compression
    assert got.read().equals(want.read())
    with open(target, "rb") as a, open(single, "rb") as b:
        assert list(pyorc.Reader(a)) == list(pyorc.Reader(b))
    # footer metadata: one key per stripe, the stripe's last key; stats; version
    keys = _stripe_keys(target)
    assert len(keys) == got.nstripes == sum(po.ORCFile(p).nstripes for p in parts) >= 3
    meta = got.metadata
    assert meta[b"hive.acid.key.index"] == "".join("%d,%d,%d;" % k for k in keys).encode()
    assert meta[b"hive.acid.stats"] == f"{ROWS},0,0".encode()
    assert meta[b"hive.acid.version"] == b"2"
    # file-level statistics as one writer's; every stripe keeps its own
    with open(target, "rb") as a, open(single, "rb") as b:
        ra, rb = pyorc.Reader(a), pyorc.Reader(b)
        for col in range(1, len(ra.schema.fields) + len(COLUMNS) + 16):
            try:
                sa, sb = ra[col].statistics, rb[col].statistics
            except IndexError:
                break
            if "sum" in sb and isinstance(sb["sum"], float):
                assert sa.pop("sum") == pytest.approx(sb.pop("sum"), rel=1e-9)
            assert sa == sb, f"column {col} ({codec})"
        assert col > len(COLUMNS)
        id_col = 7  # operation..currentTransaction, row, then row.id
        for i in range(ra.num_of_stripes):
            st = ra.read_stripe(i)
            ids = [r[5][0] for r in st]
            stats = st[id_col].statistics
            assert (stats["minimum"], stats["maximum"], stats["number_of_values"]) == (
                min(ids), max(ids), len(ids))
    # Hive 2.3's reader and ours, on a table whose base is the file
    ours = _table_dir(tmp_path, "concat", target)
    theirs = _table_dir(tmp_path, "one", single)
    hive = hive_ref.read(ours, COLUMNS, sort=True)
    assert len(hive) == ROWS and hive == hive_ref.read(theirs, COLUMNS, sort=True)
    assert hive[-1][0] == (2, BUCKET, ROWS - ROWS // 2 - 1)
    assert read_table(ours).sort_by("id").equals(read_table(theirs).sort_by("id"))
    # stripe skipping in our reader, by the concatenated file's stripe statistics
    got_ids, read = _filtered_ids(ours, monkeypatch)
    assert got_ids == list(range(1234, 1500))
    ranges = [(min(i), max(i)) for i in _stripe_ids(target)]
    assert read == [n for n, (lo, hi) in enumerate(ranges) if hi >= 1234 and lo < 1500]
    assert len(read) < len(ranges)
    # the Metadata section's stripe statistics (what Hive's split elimination reads; pyorc and
    # our reader use the row index) in stripe order: ids of each stripe
    assert _metadata_id_ranges(target) == ranges


def _metadata_id_ranges(path: str) -> list[tuple[int, int]]:
    """(min, max) of row.id in each StripeStatistics of the file's Metadata section."""
    from spark_hive_acid.io.protobuf import fields, payload, read_varint
    from spark_hive_acid.write.orc_tail import read_tail

    def sub(raw: bytes, num: int) -> bytes:
        return next(payload(r) for n, _, r in fields(raw) if n == num)

    def sint(raw: bytes, num: int) -> int:
        v = read_varint(next(r for n, _, r in fields(raw) if n == num), 0)[0]
        return (v >> 1) ^ -(v & 1)

    with open(path, "rb") as f:
        metadata = read_tail(f).decoded_metadata()
    out = []
    for _, _, stripe in fields(metadata):  # StripeStatistics{colStats = 1}
        col = [payload(r) for _, _, r in fields(payload(stripe))][7]  # row.id
        ints = sub(col, 2)  # intStatistics
        out.append((sint(ints, 1), sint(ints, 2)))
    return out


def _stripe_ids(path: str) -> list[list[int]]:
    orc = po.ORCFile(path)
    return [[r["id"] for r in orc.read_stripe(n, columns=["row"]).column(0).to_pylist() if r]
            for n in range(orc.nstripes)]


def _filtered_ids(table: str, monkeypatch) -> tuple[list[int], list[int]]:
    """ids where 1234 <= id < 1500 read by our reader, and the stripes it decoded."""
    from pyspark.sql.datasource import GreaterThanOrEqual, LessThan

    from spark_hive_acid.read.pushdown import DataPredicate, compile_filter
    from spark_hive_acid.read.reader import TaskReader
    from spark_hive_acid.catalog import open_scan

    scan = open_scan({"path": table})
    types = {c.name.lower(): c.type for c in scan.data_columns}
    conds = (compile_filter(GreaterThanOrEqual(("id",), 1234), types),
             compile_filter(LessThan(("id",), 1500), types))
    pred = DataPredicate(conds, tuple((c.name.lower(), i) for i, c in enumerate(scan.data_columns)))
    schema = pa.schema([pa.field(c.name, c.type) for c in scan.data_columns])
    reader = TaskReader(scan.fs, scan.read_spec(schema, pred, pred.column_indexes))
    read: list[int] = []
    original = po.ORCFile.read_stripe

    def spy(self, n, columns=None):
        read.append(n)
        return original(self, n, columns=columns)

    monkeypatch.setattr(po.ORCFile, "read_stripe", spy)
    ids = sorted(r["id"] for t in scan.tasks() for b in reader.read(t) for r in b.to_pylist())
    monkeypatch.undo()
    return ids, sorted(read)


def _fake_unit(sizes: list[int], name: str = "bucket_00000") -> Unit:
    slices = tuple(FileSlice(f"/t/delta_{k}/bucket_00000", size, "acid", 0, 0, k, k)
                   for k, size in enumerate(sizes))
    return Unit("", "base_0000009", 0, f"/stage/base_0000009/{name}", slices)


def test_only_big_units_are_cut_by_their_share_of_the_cores(monkeypatch):
    mb = 1 << 20
    small = _fake_unit([10 * mb, 10 * mb])
    big = _fake_unit([40 * mb] * 4, "bucket_00001")  # 160 MB
    fs = LocalFileSystem()
    work = segments.plan_work(fs, [big, small], parallelism=2)
    assert [w.segmented for w in work] == [True, False]
    assert [[s.dir_min_write_id for s in p.slices] for p in work[0].parts] == [[0, 1], [2, 3]]
    assert [p.path for p in work[0].parts] == ["/stage/base_0000009/.bucket_00001.segment-000",
                                                "/stage/base_0000009/.bucket_00001.segment-001"]
    assert work[1].parts == (small,)
    # 4 cores: 160 MB of 180 MB -> 4 * 0.89 = 3.6 -> min(4, 3 (one per 64 MB), 4) = 3 segments
    work = segments.plan_work(fs, [big, _fake_unit([20 * mb], "bucket_00002")], parallelism=4)
    assert len(work[0].parts) == 3 and not work[1].segmented
    assert not segments.plan_work(fs, [big], parallelism=1)[0].segmented
    assert not segments.plan_work(fs, [big], parallelism=4, segmentable=False)[0].segmented


def test_segments_out_of_key_order_are_written_again_whole(tmp_path, monkeypatch, caplog):
    """A file whose events break ROW__ID order across a segment boundary (a foreign writer):
    the segments are not joined, the unit is written again whole and sorted."""
    from spark_hive_acid.catalog.path import PathTable
    from spark_hive_acid.compaction.runner import compact
    from spark_hive_acid.direct import write_table

    path = str(tmp_path / "t")
    for k in range(3):
        write_table(pa.table({"id": pa.array(range(k * 5, k * 5 + 5), pa.int64())}), path)
    third = [d for d in sorted(os.listdir(path)) if d.startswith("delta_")][2]
    foreign = os.path.join(path, third, "bucket_00000")
    os.remove(foreign)  # rewritten with keys of write 1, after those delta 1 holds
    w = AcidFileWriter(LocalFileSystem(), foreign, pa.struct([pa.field("id", pa.int64())]))
    w.write_keyed_inserts(np.ones(5, np.int64), np.full(5, BUCKET), np.arange(100, 105),
                          pa.table({"id": pa.array(range(10, 15), pa.int64())}))
    w.close()
    monkeypatch.setattr(segments, "SEGMENT_MIN_BYTES", 1)
    with caplog.at_level(logging.WARNING):
        compact(PathTable(path), "major", parallelism=3)
    assert "writing it again in one task (segment" in caplog.text
    base = [d for d in os.listdir(path) if d.startswith("base_")][0]
    t = po.ORCFile(os.path.join(path, base, "bucket_00000")).read()
    keys = list(zip(t.column("originalTransaction").to_pylist(), t.column("rowId").to_pylist()))
    assert keys == sorted(keys) and len(keys) == 15
    assert [k for k in keys if k[1] >= 100] == [(1, r) for r in range(100, 105)]
    assert not [n for n in os.listdir(os.path.join(path, base)) if "segment" in n]
