"""The verdict: is the target, at a version, the Hive table at that version's write id?

The target is read by its own library (pyiceberg / deltalake), the Hive table by our reader at the
same write id; both are reduced to counts and order-insensitive row-hash sums per partition
(``conversion.rowhash``), compared partition by partition. The target's latest version is always
checked, and a sample of its earlier ones.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional, Sequence

import numpy as np
import pyarrow as pa

from ..catalog import TableRef
from ..read.ranges import snapshot_at
from ..read.reader import TaskReader
from .changes import first_version
from .rowhash import row_hashes
from .target import Target, Version

log = logging.getLogger(__name__)

Signature = dict[tuple, tuple[int, int, int]]  # partition values -> (rows, sum low, sum high)


@dataclass
class VersionCheck:
    write_id: int
    target_version: Any
    hive_rows: int
    target_rows: int
    differing_partitions: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return not self.differing_partitions

    def to_dict(self) -> dict[str, Any]:
        return {"writeId": self.write_id, "targetVersion": self.target_version,
                "hiveRows": self.hive_rows, "targetRows": self.target_rows, "equal": self.equal,
                "differingPartitions": self.differing_partitions}


@dataclass
class Verdict:
    checks: list[VersionCheck]

    @property
    def ok(self) -> bool:
        return all(c.equal for c in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.to_dict() for c in self.checks]}

    def __str__(self) -> str:
        lines = []
        for c in self.checks:
            state = "equal" if c.equal else "DIFFERENT in " + ", ".join(c.differing_partitions)
            lines.append(f"write id {c.write_id} (target version {c.target_version}): "
                         f"{c.hive_rows} rows in Hive, {c.target_rows} in the target: {state}")
        return "\n".join(lines)


def signature(batches: Iterable[pa.RecordBatch], schema: pa.Schema,
              partition_columns: Sequence[str]) -> Signature:
    """Rows and row-hash sums per partition (values of ``partition_columns``) of ``batches``,
    each cast to ``schema`` (column order and types) first."""
    out: dict[tuple, list[int]] = {}
    for batch in batches:
        if batch.num_rows == 0:
            continue
        table = pa.Table.from_batches([batch]).select(schema.names)
        if not table.schema.equals(schema):
            table = table.cast(schema)
        h = row_hashes(table)
        t = pa.table({"__lo": pa.array(h & np.uint64(0xFFFFFFFF)),
                      "__hi": pa.array(h >> np.uint64(32)),
                      **{f"__p{i}": table.column(c) for i, c in enumerate(partition_columns)}})
        keys = [f"__p{i}" for i in range(len(partition_columns))]
        grouped = t.group_by(keys).aggregate([("__lo", "count"), ("__lo", "sum"),
                                              ("__hi", "sum")]) if keys else None
        if grouped is None:
            rows = [((), t.num_rows, int(h.__and__(np.uint64(0xFFFFFFFF)).sum(dtype=np.uint64)),
                     int((h >> np.uint64(32)).sum(dtype=np.uint64)))]
        else:
            cols = grouped.to_pydict()
            rows = [(tuple(cols[k][i] for k in keys), cols["__lo_count"][i], cols["__lo_sum"][i],
                     cols["__hi_sum"][i]) for i in range(grouped.num_rows)]
        for part, n, lo, hi in rows:
            acc = out.setdefault(part, [0, 0, 0])
            acc[0] += int(n)
            acc[1] += int(lo)
            acc[2] += int(hi)
    return {k: (v[0], v[1], v[2]) for k, v in out.items()}


def _hive_batches(ref: TableRef, write_id: int) -> Iterable[pa.RecordBatch]:
    now = ref.scan()
    scan = now.at(snapshot_at(now.write_ids, write_id))
    schema = pa.schema([pa.field(c.name, c.type) for c in scan.all_columns(False)])
    reader = TaskReader(scan.fs, scan.read_spec(schema))
    for task in scan.tasks():
        yield from reader.read(task)


def check_version(ref: TableRef, target: Target, version: Version) -> VersionCheck:
    now = ref.scan().at(snapshot_at(ref.snapshot(), version.write_id))
    schema = pa.schema([pa.field(c.name, c.type) for c in now.all_columns(False)])
    parts = [c.name for c in now.partition_columns]
    ours = signature(_hive_batches(ref, version.write_id), schema, parts)
    theirs = signature(target.read(version.ref), schema, parts)
    differing = sorted(str(dict(zip(parts, k))) if parts else "(table)"
                       for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    return VersionCheck(version.write_id, version.ref, sum(v[0] for v in ours.values()),
                        sum(v[0] for v in theirs.values()), differing)


def verdict(ref: TableRef, target: Target, samples: int = 3,
            versions: Optional[Sequence[Version]] = None) -> Verdict:
    """Compare the target's latest version and ``samples`` earlier ones (evenly spread) with
    our read of ``ref`` at their write ids; ``versions``: exactly these instead."""
    if versions is None:
        oldest = first_version(ref.scan())  # below it Hive's history is compacted away
        every = [v for v in target.versions() if v.write_id >= oldest]
        latest = target.current()
        if latest is None:
            return Verdict([])
        if not every or every[-1].ref != latest.ref:  # written since by something else
            every.append(latest)
        earlier = every[:-1]
        picks = sorted({int(i) for i in np.linspace(0, len(earlier) - 1, samples)}) \
            if earlier and samples > 0 else []
        versions = [earlier[i] for i in picks] + [every[-1]]
    checks = [check_version(ref, target, v) for v in versions]
    for c in checks:
        (log.info if c.equal else log.error)("verdict %s: %s", target.display,
                                             Verdict([c]))
    return Verdict(checks)
