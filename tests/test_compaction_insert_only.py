"""Compaction of insert-only (MM) tables, ORC and Parquet: a random history of appends and
overwrites (partitioned, and bucketed) with minor and major compactions and vacuums; after every
step our read equals the model, and so does Hive 3.1 and 4.1's own insert-only read
(tests/hive_jvm, ``HiveInputFormat.processPathsForMmRead`` + the table's input format); after
every compaction and vacuum Hive 2.3 (its getAcidState picks each partition's directories, its
plain ORC / Parquet reader reads them) reads the same rows too."""
from __future__ import annotations

import os
import random
from collections import Counter

import pyarrow as pa
import pytest

from hive_ref import valid_txns
from hive_ref.fixtures import hive_ref  # noqa: F401
from hive_jvm.fixtures import newer_hives  # noqa: F401
from hive_jvm.oracle import snapshot_write_ids
from spark_hive_acid import write_table
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.direct import read_table

pytestmark = [pytest.mark.hive, pytest.mark.hive31, pytest.mark.hive41]
COLUMNS = [("id", "bigint"), ("v", "string")]


def _hive(hive_ref, root: str, fmt: str) -> Counter:  # noqa: F811
    snap = load_state(LocalFileSystem(), root).snapshot()
    txns = valid_txns(snap.high_watermark, snap.exceptions, snap.min_open_or_none)
    got: Counter = Counter()
    for part in sorted(os.listdir(root)):
        if not part.startswith("p="):
            continue
        state = hive_ref.acid_state(os.path.join(root, part), txns)
        dirs = ([state["base"]] if state["base"] else []) + [d["path"] for d in state["deltas"]]
        if dirs:
            rows = hive_ref.read_plain([os.path.join(root, part, d) for d in dirs], COLUMNS, fmt)
            got.update((i, v, int(part[2:])) for i, v in rows)
    return got


def _newer(hive, root: str, fmt: str) -> Counter:
    wl = snapshot_write_ids(load_state(LocalFileSystem(), root).snapshot())
    got: Counter = Counter()
    for part in sorted(os.listdir(root)):
        if part.startswith("p="):
            _, rows = hive.read_mm(os.path.join(root, part), COLUMNS, write_ids=wl, fmt=fmt)
            got.update((i, v, int(part[2:])) for i, v in rows)
    return got


@pytest.mark.parametrize("fmt,buckets,seed", [("orc", 0, 31), ("parquet", 2, 32)])
def test_insert_only_history_with_compactions(hive_ref, newer_hives, tmp_path, fmt, buckets,  # noqa: F811
                                              seed):
    rng = random.Random(seed)
    path = str(tmp_path / "t")
    opts = {"fileFormat": fmt, "tableProperties": "transactional_properties=insert_only"}
    model: Counter = Counter()
    next_id = 0
    log = []
    for step in range(16):
        op = "append" if step < 2 else rng.choice(["append", "append", "overwrite", "minor",
                                                  "major", "vacuum"])
        if op in ("append", "overwrite"):
            n = rng.randrange(1, 8)
            p = rng.randrange(3)
            rows = [(next_id + i, f"v{rng.randrange(99)}", p if op == "overwrite" else rng.randrange(3))
                    for i in range(n)]
            next_id += n
            write_table(pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                                  "v": [r[1] for r in rows],
                                  "p": pa.array([r[2] for r in rows], pa.int32())}), path,
                        mode=op if op == "append" else "overwrite", partition_by=["p"],
                        partition_overwrite_mode="dynamic",
                        bucket_by=["id"] if buckets else None, num_buckets=buckets or None,
                        options=opts)
            if op == "overwrite":
                model = Counter({r: c for r, c in model.items() if r[2] != p})
            model.update(rows)
            log.append(f"{op} {len(rows)} p={p if op == 'overwrite' else '*'}")
        elif op == "vacuum":
            vacuum(LocalFileSystem(), path, retention_hours=0, staging_grace_s=0)
            log.append("vacuum")
        else:
            m = compact(PathTable(path), op)
            log.append(f"{op} -> {m.get('outputs')}")
        t = read_table(path)
        got = Counter(zip(t.column("id").to_pylist(), t.column("v").to_pylist(),
                          t.column("p").to_pylist()))
        assert got == model, f"step {step} ({op}): {log}"
        for hive in newer_hives:
            assert _newer(hive, path, fmt) == model, f"step {step} ({op}): {hive}; {log}"
        if op in ("minor", "major", "vacuum"):
            assert _hive(hive_ref, path, fmt) == model, f"step {step} ({op}): Hive; {log}"
    assert any(x.startswith("major -> ['p=") for x in log) and any(x.startswith("minor -> ['p=") for x in log)
    for part in os.listdir(path):
        base = [d for d in os.listdir(os.path.join(path, part)) if d.startswith("base_")] \
            if part.startswith("p=") else []
        for b in base:
            names = os.listdir(os.path.join(path, part, b))
            assert all(n == "_metadata_acid" or n.endswith("_0") for n in names)
