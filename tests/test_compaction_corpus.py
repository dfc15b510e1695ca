"""Tables Hive wrote (the corpus) compacted again by us: same rows and ROW__IDs, output as Hive's
compactor writes it, and Hive 2.3's reader reads our output identically."""
from __future__ import annotations

import os
from collections import Counter

import pyarrow.orc as po
import pytest

from hive_ref.fixtures import hive_ref  # noqa: F401
from spark_hive_acid.acid.layout import TableLayout, save_layout
from spark_hive_acid.acid.types import arrow_to_hive
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.direct import read_table

NATION = [("n_nationkey", "int"), ("n_name", "string"), ("n_regionkey", "int"),
          ("n_comment", "string")]


def _rows(path, key):
    t = read_table(path, includeRowId="true").to_pylist()
    return Counter((tuple(r["row__id"].values()), tuple(r[k] for k, _ in key)) for r in t)


@pytest.mark.hive
def test_nation25k_minor_then_major(corpus_copy, hive_ref):  # noqa: F811
    path = corpus_copy("nation25k")
    before = _rows(path, NATION)
    assert sum(before.values()) == 23_000
    m = compact(PathTable(path), "minor")
    assert m["outputs"] == ["delete_delta_0000003_0000004", "delta_0000003_0000004"]
    assert m["deleteEventsWritten"] == 2000 and _rows(path, NATION) == before
    orc = po.ORCFile(f"{path}/delete_delta_0000003_0000004/bucket_00000")
    keys = orc.read(columns=["originalTransaction", "bucket", "rowId", "currentTransaction"])
    rid, cur = keys.column("rowId").to_pylist(), keys.column("currentTransaction").to_pylist()
    assert rid == list(range(5000, 6000)) + list(range(19000, 20000))  # merged, sorted
    assert cur == [3] * 1000 + [4] * 1000  # copied verbatim
    assert orc.metadata[b"hive.acid.stats"] == b"0,0,2000"
    m = compact(PathTable(path), "major")
    base = f"{path}/base_{m['highWatermark']:07d}"
    assert m["rowsWritten"] == 23_000 and _rows(path, NATION) == before
    meta = po.ORCFile(f"{base}/bucket_00000").metadata
    assert meta[b"hive.acid.stats"] == b"23000,0,0"
    assert meta[b"hive.acid.key.index"].decode().endswith("2,536870912,24999;")
    got = hive_ref.read(path, NATION, bucket_count=1)
    assert Counter((tuple(r), tuple(v)) for r, v in got) == before
    vacuum(LocalFileSystem(), path, retention_hours=0)
    assert sorted(os.listdir(path)) == ["_hiveacid_table.json", "_hiveacid_txnlog",
                                        os.path.basename(base)]
    assert _rows(path, NATION) == before


def test_single_col_minor_compacted_deltas_compacted_again(corpus_copy):
    path = corpus_copy("single_col_minor")
    m = compact(PathTable(path), "minor")
    assert m["outputs"] == ["delete_delta_0000002_0000007", "delta_0000002_0000007"]
    assert read_table(path).num_rows == 0
    assert read_table(path, validWriteIds="default.t:7:9223372036854775807::").num_rows == 0
    m = compact(PathTable(path), "major")
    assert m["rowsWritten"] == 0 and read_table(path).num_rows == 0


def test_original_file_keeps_its_synthetic_row_ids(corpus_copy):
    path = corpus_copy("alltypes_original")
    schema = po.ORCFile(f"{path}/000000_0").schema  # converted to transactional: mark it ACID
    save_layout(LocalFileSystem(), path, TableLayout(
        columns=[(f.name, arrow_to_hive(f.type)) for f in schema]))
    t = read_table(path, includeRowId="true")
    before = Counter((tuple(r["row__id"].values()), r["id"], r["timestamp_col"]) for r in t.to_pylist())
    compact(PathTable(path), "major")
    after_t = read_table(path, includeRowId="true")
    after = Counter((tuple(r["row__id"].values()), r["id"], r["timestamp_col"])
                    for r in after_t.to_pylist())
    assert after == before and sum(after.values()) == 7300
    ids = {r["id"]: r["row__id"]["rowId"] for r in after_t.to_pylist() if r["id"] < 10}
    assert [ids[i] for i in range(10)] == list(range(4030, 4040))
    assert any(n.startswith("base_") for n in os.listdir(path))
