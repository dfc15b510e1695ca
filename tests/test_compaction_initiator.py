"""Hive's Initiator rules (compaction.initiator), Spark-free, on tables built for each rule:
the delta count (strictly more than the threshold), the delta/base size ratio, no base, the
per-table overrides and no_auto_compaction, insert-only tables; the result is JSON-able."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from spark_hive_acid import write_table
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.initiator import decide_for_table
from spark_hive_acid.compaction.runner import compact, compact_if_needed


def _table(path, appends, rows=5, props=None, base_rows=0, **kw):
    opts = {"tableProperties": json.dumps(props)} if props else {}
    if base_rows:  # random values: a base that compresses badly, so its size is its row count
        ids = np.random.default_rng(5).integers(0, 1 << 62, base_rows)
        write_table(pa.table({"id": pa.array(ids, pa.int64())}), path, options=opts, **kw)
        compact(PathTable(path), "major")
    for k in range(appends):
        write_table(pa.table({"id": pa.array(range(k * rows, k * rows + rows), pa.int64())}),
                    path, options=opts, **kw)
    return PathTable(path)


def test_delta_count_rule(tmp_path):
    t = _table(str(tmp_path / "a"), 10)
    (d,) = decide_for_table(t)
    assert (d["decision"], d["deltas"], d["base"]) == (None, 10, None)  # 10 is not more than 10
    json.dumps(d)
    _table(str(tmp_path / "a"), 1)
    (d,) = decide_for_table(t)
    assert (d["decision"], d["deltas"]) == ("major", 11) and "no base" in d["reason"]


def test_ratio_rule_and_minor_with_a_base(tmp_path):
    t = _table(str(tmp_path / "b"), 0, base_rows=200_000)
    _table(str(tmp_path / "b"), 11, rows=1)  # 11 tiny deltas over a big base: minor
    (d,) = decide_for_table(t)
    assert d["decision"] == "minor" and d["ratio"] < 0.1 and d["base"].startswith("base_")
    got = compact_if_needed(t)
    assert got["minor"]["partitions"] == [""] and got["major"] is None
    big = np.random.default_rng(6).integers(0, 1 << 62, 50_000)  # a quarter of the base
    write_table(pa.table({"id": pa.array(big, pa.int64())}), str(tmp_path / "b"))
    (d,) = decide_for_table(t)
    assert d["decision"] == "major" and d["ratio"] > 0.1


def test_table_overrides_and_no_auto_compaction(tmp_path):
    t = _table(str(tmp_path / "c"), 3,
               props={"compactorthreshold.hive.compactor.delta.num.threshold": "2"})
    assert decide_for_table(t)[0]["decision"] == "major"
    assert decide_for_table(t)[0]["thresholds"]["hive.compactor.delta.num.threshold"] == 2
    t = _table(str(tmp_path / "d"), 12, props={"NO_AUTO_COMPACTION": "True"})
    (d,) = decide_for_table(t)
    assert d["decision"] is None and "no_auto_compaction" in d["reason"]
    assert compact_if_needed(t)["major"] is None


def test_insert_only_tables_get_major(tmp_path):
    mm = {"transactional_properties": "insert_only"}
    t = _table(str(tmp_path / "e"), 0, base_rows=100_000, props=mm)
    _table(str(tmp_path / "e"), 11, rows=1, props=mm)
    (d,) = decide_for_table(t)
    assert d["decision"] == "major" and "insert-only" in d["reason"]
