"""Write operations of every kind, built from the library's own writer and commit primitives (no
Spark, so hundreds of concurrent rounds fit in a test), each split into ``prepare`` (begin the
transaction, read its snapshot, stage its files: what a job does) and ``commit``, plus the model of
what it does to a table's rows. Tests interleave them on real threads and judge the result by the
serial-order yardstick."""
from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
import pyarrow as pa

from spark_hive_acid import read_table, write_table
from spark_hive_acid.acid.layout import staging_dir
from spark_hive_acid.acid.partition_condition import PartitionCondition
from spark_hive_acid.catalog import PathTable
from spark_hive_acid.txn.committer import commit_write, empty_bases
from spark_hive_acid.tableops.restore_plan import partitions_to_restore
from spark_hive_acid.write.replace_region import Replacement
from spark_hive_acid.write.schema import map_columns
from spark_hive_acid.write.task_writer import (DeleteWriter, InsertTarget, TableSpec,
                                               stage_batches)

Row = tuple[int, int, int]  # (id, v, p)
#: the rows tests start from (version 1 of every table: what a restore goes back to)
INITIAL_ROWS: list[Row] = [(i, 0, i % 3) for i in range(6)]
KINDS = ("append", "static", "dynamic", "delete", "update", "merge")
#: operations that replace partitions: a static partition overwrite (replaceWhere), truncate and
#: dropPartitions (tests/write/test_concurrency_partitions.py)
REPLACING = ("partition", "truncate", "drop", "restore")
PARTITION_COLUMNS = [("p", "int")]


def table_rows(path: str) -> Counter:
    t = read_table(path)
    return Counter(zip(t.column("id").to_pylist(), t.column("v").to_pylist(),
                       t.column("p").to_pylist()))


def new_table(path: str, rows: list[Row]) -> None:
    write_table(_arrow(rows), path, partition_by=["p"])


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()),
                     "v": pa.array([r[1] for r in rows], pa.int64()),
                     "p": pa.array([r[2] for r in rows], pa.int32())})


@dataclass
class Op:
    kind: str
    rows: list[Row] = field(default_factory=list)  # append / overwrite / merge source
    ids: frozenset[int] = frozenset()  # delete / update
    parts: frozenset[int] = frozenset()  # partition / drop: the partitions replaced
    _commit: Optional[Callable[[], None]] = None
    write_id: Optional[int] = None  # once begun

    def __repr__(self) -> str:
        if self.kind in REPLACING:
            return f"{self.kind}(p in {sorted(self.parts)}: {self.rows})"
        return f"{self.kind}({sorted(self.ids) or self.rows})"

    # -- the model --------------------------------------------------------------------------
    def apply(self, rows: list[Row]) -> list[Row]:
        if self.kind == "append":
            return rows + self.rows
        if self.kind == "static":
            return list(self.rows)
        if self.kind == "truncate":
            return []
        if self.kind == "restore":  # to version 1: the table as new_table made it
            return list(self.rows)
        if self.kind in ("partition", "drop"):
            return [r for r in rows if r[2] not in self.parts] + self.rows
        if self.kind == "dynamic":
            parts = {r[2] for r in self.rows}
            return [r for r in rows if r[2] not in parts] + self.rows
        if self.kind == "delete":
            return [r for r in rows if r[0] not in self.ids]
        if self.kind == "update":
            return [(i, v + 1, p) if i in self.ids else (i, v, p) for i, v, p in rows]
        source = {r[0]: r for r in self.rows}  # merge: upsert by id
        out = [(i, source[i][1], p) if i in source else (i, v, p) for i, v, p in rows]
        present = {r[0] for r in rows}
        return out + [r for r in self.rows if r[0] not in present]

    # -- the real thing ---------------------------------------------------------------------
    def prepare(self, path: str) -> None:
        """Begin, read, stage: everything but the commit (kept in ``self._commit``)."""
        ref = PathTable(path)
        layout = ref.layout()
        fs, location = ref.location()
        spec = TableSpec.of(location, layout)
        op = {"append": "append", "static": "overwrite", "dynamic": "overwrite",
              "partition": "overwrite", "drop": "dropPartitions"}.get(self.kind, self.kind)
        txn = ref.begin(op)
        self.write_id = txn.write_id
        stage = fs.join(staging_dir(fs, location, txn.write_id), "t")
        mapping = map_columns(layout, _arrow(self.rows or [(0, 0, 0)]).schema)
        if self.kind == "restore":
            self._prepare_restore(ref, spec, txn, mapping, stage)
            return
        if self.kind in REPLACING:
            region = None if self.kind == "truncate" else PartitionCondition.parse(
                f"p IN ({', '.join(map(str, sorted(self.parts)))})", PARTITION_COLUMNS)
            rep = None if region is None else Replacement(region, "replaceWhere")
            staged = stage_batches(fs, spec, InsertTarget(txn.write_id, 0, base=True,
                                                          replacement=rep), mapping,
                                   _arrow(self.rows).to_batches(), stage, 0)
            empty = empty_bases(txn, fs, spec, staged, replace_all=region is None, region=region)
            self._commit = lambda: commit_write(fs, spec, txn, staged, empty_bases=empty,
                                                static_overwrite=region is None, replaced=region)
            return
        if self.kind in ("append", "static", "dynamic"):
            base = self.kind != "append"
            staged = stage_batches(fs, spec, InsertTarget(txn.write_id, 0, base=base), mapping,
                                   _arrow(self.rows).to_batches(), stage, 0)
            static = self.kind == "static"
            empty = empty_bases(txn, fs, spec, staged, replace_all=static) if base else []
            self._commit = lambda: commit_write(fs, spec, txn, staged, empty_bases=empty,
                                                static_overwrite=static)
            return
        target = read_table(path, includeRowId="true", validWriteIds=txn.snapshot_string)
        ids = np.asarray(target.column("id").to_pylist(), dtype=np.int64)
        if self.kind == "merge":
            source = {r[0]: r for r in self.rows}
            hit = np.isin(ids, list(source))
            present = set(ids.tolist())
            inserts = [r for r in self.rows if r[0] not in present]
        else:
            hit = np.isin(ids, list(self.ids))
            inserts = []
        staged = []
        if hit.any():
            rid = target.column("row__id").combine_chunks()
            deleter = DeleteWriter(fs, spec, txn.write_id, 0, stage)
            deleter.write(np.asarray(rid.field("writeId"))[hit], np.asarray(rid.field("bucketId"))[hit],
                          np.asarray(rid.field("rowId"))[hit],
                          [pa.array(np.asarray(target.column("p").to_pylist())[hit], pa.int32())])
            staged += deleter.close()
            old = target.filter(pa.array(hit))
            new_v = [source[i][1] for i in old.column("id").to_pylist()] if self.kind == "merge" \
                else [v + 1 for v in old.column("v").to_pylist()]
            versions = list(zip(old.column("id").to_pylist(), new_v, old.column("p").to_pylist()))
            if self.kind != "delete":
                staged += stage_batches(fs, spec, InsertTarget(txn.write_id, 1), mapping,
                                        _arrow(versions).to_batches(), stage + "u", 0)
        if inserts:
            staged += stage_batches(fs, spec, InsertTarget(txn.write_id, 2), mapping,
                                    _arrow(inserts).to_batches(), stage + "i", 0)
        unmatched = self.kind == "merge"
        self._commit = lambda: commit_write(fs, spec, txn, staged, inserts_unmatched=unmatched)

    def _prepare_restore(self, ref: PathTable, spec: TableSpec, txn, mapping, stage: str) -> None:
        """What ``HiveAcidTable.restoreToVersion(1)`` does, without Spark: the partitions changed
        since version 1 rewritten with their rows at version 1."""
        fs = ref.location()[0]
        now = ref.scan({"validWriteIds": txn.snapshot_string})
        then = ref.scan({"versionAsOf": "1"})
        parts = partitions_to_restore(now.plan, then.plan, 1)
        old = read_table(ref.uri, versionAsOf="1")
        keep = [p in {f"p={x}" for x in (0, 1, 2, 3)} and p in parts
                for p in (f"p={x}" for x in old.column("p").to_pylist())]
        rows = old.filter(pa.array(keep, pa.bool_()))
        staged = stage_batches(fs, spec, InsertTarget(txn.write_id, 0, base=True), mapping,
                               rows.to_batches(), stage, 0)
        written = {f.partition for f in staged}
        empty = [p for p in parts if p not in written]
        self._commit = lambda: commit_write(fs, spec, txn, staged, empty_bases=empty,
                                            reads_table=True)

    def commit(self) -> None:
        assert self._commit is not None
        self._commit()


def random_op(kind: str, rng: random.Random) -> Op:
    def rows(n: int, parts=(0, 1, 2, 3)) -> list[Row]:
        ids = rng.sample(range(10), n)
        return [(i, rng.randrange(100, 200), rng.choice(parts)) for i in ids]

    if kind == "truncate":
        return Op(kind)
    if kind == "restore":
        return Op(kind, list(INITIAL_ROWS))
    if kind in ("partition", "drop"):
        parts = frozenset(rng.sample(range(4), rng.randint(1, 2)))
        return Op(kind, rows(rng.randint(0, 2), tuple(parts)) if kind == "partition" else [],
                  parts=parts)

    if kind in ("append", "static", "dynamic", "merge"):
        return Op(kind, rows(rng.randint(1, 3)))
    return Op(kind, ids=frozenset(rng.sample(range(10), rng.randint(1, 4))))


def serial_results(initial: list[Row], ops: list[Op]) -> list[Counter]:
    """The table after the operations in each possible order."""
    out = []
    for order in itertools.permutations(ops):
        rows = list(initial)
        for op in order:
            rows = op.apply(rows)
        out.append(Counter(rows))
    return out
