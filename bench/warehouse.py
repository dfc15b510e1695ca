"""A generated warehouse for the maintenance benchmark: many tables of many partitions, each
partition one of the layouts an operator meets (``LAYOUTS``), laid out as Hive writes them (no
transaction log: the snapshot is everything present).

Every file is a valid ACID (or original) ORC file so that a real ``maintain`` can compact them;
the data files are written once per 50 tables (``_templates``, beside the warehouse) and
hard-linked into their partitions, so 20,000 partitions take seconds to make. Write ids per table: a compacted base
``base_0000010`` (write ids 1..10), deltas 11..22; a partition without a base has deltas 1..12.
"""
from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po

from .gen import BP, ROW_TYPE, delete_events, insert_events, row_chunk

#: (layout, share of the partitions)
LAYOUTS = (("healthy", 0.60), ("minor", 0.15), ("major", 0.10), ("obsolete", 0.08),
           ("attempt_id", 0.04), ("original", 0.03))
VERSION = b"2"
MARKER = b'{"thisFileVersion":"0","dataFormat":"compacted"}'


def _orc(path: Path, table: pa.Table) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with po.ORCWriter(str(path), compression="zlib") as w:
        w.write(table)


def templates(root: Path, seed: int) -> Path:
    """One table's files: a base of 60,000 rows of write id 1 (about 2 MB: deltas are small next
    to it, as in a table that is compacted), deltas 1..22 (2 rows each), a delete delta of
    write id 11 (deleting the base's first row), an original file (20,000 rows)."""
    root.mkdir(parents=True, exist_ok=True)
    _orc(root / "base", insert_events(1, 0, row_chunk(0, 60_000, seed)))
    for w in range(1, 23):
        _orc(root / f"delta_{w}", insert_events(w, 0, row_chunk(1000 * w, 2, seed)))
    _orc(root / "delete_11", delete_events(np.array([1]), np.array([0]), 11))
    _orc(root / "original", pa.Table.from_struct_array(row_chunk(900_000, 20_000, seed)))
    (root / "version").write_bytes(VERSION)
    (root / "marker").write_bytes(MARKER)
    return root


def _dir(part: Path, name: str, src: Path, tpl: Path, *, file: str = "bucket_00000",
         marker: bool = False) -> None:
    d = part / name
    d.mkdir()
    os.link(src, d / file)
    (d / "_orc_acid_version").write_bytes(VERSION)  # tiny: written (a file has <65,000 links)
    if marker:
        (d / "_metadata_acid").write_bytes(MARKER)


def _base(part: Path, tpl: Path) -> None:
    _dir(part, "base_0000010", tpl / "base", tpl, marker=True)


def _delta(part: Path, w: int, tpl: Path) -> None:
    _dir(part, f"delta_{w:07d}_{w:07d}_0000", tpl / f"delta_{w}", tpl)


def partition(part: Path, layout: str, tpl: Path) -> None:
    part.mkdir(parents=True)
    if layout == "healthy":
        _base(part, tpl)
        for w in (11, 12):
            _delta(part, w, tpl)
    elif layout == "minor":  # a base and 12 small deltas: the Initiator says minor
        _base(part, tpl)
        for w in range(11, 23):
            _delta(part, w, tpl)
    elif layout == "major":  # 12 deltas and no base: the Initiator says major
        for w in range(1, 13):
            _delta(part, w, tpl)
    elif layout == "obsolete":  # deltas a compaction already replaced, waiting for a clean
        _base(part, tpl)
        for w in range(3, 10):
            _delta(part, w, tpl)
        _delta(part, 11, tpl)
    elif layout == "attempt_id":  # trinodb/trino#31302
        _base(part, tpl)
        _dir(part, "delete_delta_0000011_0000011_0000", tpl / "delete_11", tpl,
             file="bucket_00000_1")
        _delta(part, 12, tpl)
    elif layout == "original":  # converted to ACID, never major-compacted
        os.link(tpl / "original", part / "000000_0")
        for w in (11, 12):
            _delta(part, w, tpl)
    else:
        raise ValueError(layout)


def generate(root: Path, tables: int, partitions_per_table: int, seed: int = 7) -> list[Path]:
    """``tables`` table directories under ``root/warehouse`` (``t0000`` ...), each with
    ``partitions_per_table`` partitions ``p=0`` ...; layouts drawn with the shares of
    ``LAYOUTS``. Returns the table paths."""
    wh, tpl_root = root / "warehouse", root / "_templates"
    if root.exists():
        shutil.rmtree(root)
    rng = random.Random(seed)
    names = [n for n, _ in LAYOUTS]
    weights = [w for _, w in LAYOUTS]
    out = []
    tpl = tpl_root
    for t in range(tables):
        if t % 50 == 0:  # one set of files per 50 tables (ext4 allows 65,000 links a file)
            tpl = templates(tpl_root / f"set{t // 50}", seed)
        table = wh / f"t{t:04d}"
        for p in range(partitions_per_table):
            partition(table / f"p={p}", rng.choices(names, weights)[0], tpl)
        out.append(table)
    return out


HIVE_COLUMNS = [("id", "bigint"), ("qty", "int"), ("name", "string"), ("price", "double"),
                ("ts", "timestamp"), ("amount", "decimal(18,2)")]
assert [f.name for f in ROW_TYPE] == [c for c, _ in HIVE_COLUMNS] and BP == 536870912
