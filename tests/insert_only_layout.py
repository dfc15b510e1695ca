"""Shared by the insert-only writer tests: the on-disk rules of insert-only tables
(docs/format.md §9; Hive's FileSinkOperator for MM writes) checked on a table directory, and the
model of what a write does to a table's rows."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Optional, Sequence

import pyarrow.orc as po
import pyarrow.parquet as pq

from spark_hive_acid.acid.bucketing import bucket_ids

BASE_RE = re.compile(r"^base_(\d{7})$")
DELTA_RE = re.compile(r"^delta_(\d{7})_(\d{7})_(\d{4})$")
FILE_RE = re.compile(r"^(\d{6})_0$")


def apply_write(parts: dict, op: str, rows: list, key: Callable[[dict], object]) -> dict:
    """The table's rows per partition (``key(row)``) after one write: ``op`` is ``append``,
    ``dynamic`` (an overwrite of the partitions in the data) or ``overwrite`` (static: the whole
    table)."""
    by_part: dict = {}
    for r in rows:
        by_part.setdefault(key(r), []).append(r)
    if op == "append":
        out = {k: list(v) for k, v in parts.items()}
        for k, v in by_part.items():
            out.setdefault(k, []).extend(v)
        return out
    if op == "dynamic":
        return {**parts, **by_part}
    return by_part


Bucketing = tuple  # (columns, Hive types, number of buckets, bucketing version)


def check_layout(root: Path, fmt: str, names: Sequence[str],
                 bucketing: Optional[Bucketing] = None) -> int:
    """Every data directory and file below ``root`` follows docs/format.md §9 (``names``: the
    data columns, lower case); returns the number of data files."""
    files = 0
    for leaf, dirs, filenames in os.walk(root):
        rel = Path(leaf).relative_to(root)
        if any(part.startswith(("_", ".")) for part in rel.parts):
            continue
        if BASE_RE.match(Path(leaf).name) or DELTA_RE.match(Path(leaf).name):
            m = DELTA_RE.match(Path(leaf).name)
            if m:
                assert m.group(1) == m.group(2), leaf
            assert dirs == [], f"no subdirectories in {leaf}"
            assert filenames, f"{leaf}: never an empty directory"
            for name in filenames:
                assert FILE_RE.match(name), f"{leaf}/{name} is not Hive's NNNNNN_0"
                check_file(Path(leaf) / name, fmt, names, bucketing)
                files += 1
            continue
        for d in dirs:
            if d.startswith(("_", ".")):
                continue
            assert "=" in d or BASE_RE.match(d) or DELTA_RE.match(d), f"unexpected dir {leaf}/{d}"
            assert not d.startswith("delete_delta"), "insert-only tables have no delete deltas"
        for name in filenames:
            assert name.startswith(("_", ".")), f"stray file {leaf}/{name}"
    return files


def check_file(path: Path, fmt: str, names: Sequence[str],
               bucketing: Optional[Bucketing] = None) -> None:
    """One data file: the table's format, its columns only (no ACID event struct), Hive's
    names; Parquet timestamps INT96; in a bucketed table, only rows of the bucket it is named by."""
    head = path.read_bytes()[:4]
    keys = list(bucketing[0]) if bucketing else []
    if fmt == "parquet":
        assert head == b"PAR1", path
        f = pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
        assert f.schema_arrow.names == list(names), f"{path}: plain columns, Hive's names"
        for i, field in enumerate(f.schema_arrow):
            if field.type == "timestamp[us]":
                assert f.schema.column(i).physical_type == "INT96", f"{path}: {field.name}"
        table = f.read(columns=keys)
    else:
        assert head[:3] == b"ORC", path
        f = po.ORCFile(path)
        assert b"hive.acid.key.index" not in f.metadata, f"{path}: no ACID key index"
        assert f.schema.names == list(names), f"{path}: plain columns, Hive's names"
        # (pyarrow cannot decode ORC timestamps beyond 2262: read the bucket keys only)
        table = f.read(columns=keys) if keys else None
    if bucketing and table.num_rows:
        cols, types, num_buckets, version = bucketing
        n = int(FILE_RE.match(path.name).group(1))
        buckets = bucket_ids([table.column(c) for c in cols], list(types), num_buckets, version,
                             names=tuple(cols))
        assert set(buckets.tolist()) == {n}, f"{path} holds rows of other buckets"
