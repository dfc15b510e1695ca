"""A table and its Python model, driven by random operations, for the compaction tests.

Every write goes through the library's own Spark-free writers and the one commit path
(``write_table``; ``DeleteWriter`` / ``InsertWriter`` + ``commit_write`` for DELETE and UPDATE,
both statements of an UPDATE in one write id as Hive 3 writes it). The model is a dict
``id -> (v, p)``; ids are unique, so a row's identity survives updates.
"""
from __future__ import annotations

import random
from collections import Counter
from typing import Optional

import numpy as np
import pyarrow as pa

from spark_hive_acid.acid.layout import load_layout
from spark_hive_acid.acid.logstate import load_state
from spark_hive_acid.catalog.path import PathTable
from spark_hive_acid.compaction.cleaner import vacuum
from spark_hive_acid.compaction.runner import compact
from spark_hive_acid.direct import write_table
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.direct import read_table
from spark_hive_acid.txn import pathlog
from spark_hive_acid.txn.committer import commit_write
from spark_hive_acid.write.task_writer import DeleteWriter, InsertTarget, InsertWriter, TableSpec

COLUMNS = [("id", "bigint"), ("v", "string")]
#: what ``ModelTable.compact`` passes as ``parallelism`` (tests force segmented output with it)
PARALLELISM = 1


class ModelTable:
    """A path-mode table at ``path`` and the rows it must hold."""

    def __init__(self, path: str, rng: random.Random, *, partitioned: bool = False,
                 buckets: int = 0, bucketing_version: int = 2):
        self.path, self.rng = path, rng
        self.partitioned, self.buckets = partitioned, buckets
        self.bucketing_version = bucketing_version
        # any URI the library serves (a local path, s3a://...): its file system and path there
        self.fs, self.location = get_filesystem(path)
        self.model: dict[int, tuple[str, int]] = {}
        self.next_id = 0
        self.log: list[str] = []  # the operations, for failure messages

    # --- writes -----------------------------------------------------------------------------------
    def _rows(self, n: int, p: Optional[int] = None) -> dict[int, tuple[str, int]]:
        out = {}
        for _ in range(n):
            out[self.next_id] = (f"v{self.rng.randrange(1000)}",
                                 self.rng.randrange(3) if p is None else p)
            self.next_id += 1
        return out

    def _arrow(self, rows: dict[int, tuple[str, int]]) -> pa.Table:
        cols = {"id": pa.array(list(rows), pa.int64()), "v": pa.array([v for v, _ in rows.values()])}
        if self.partitioned:
            cols["p"] = pa.array([p for _, p in rows.values()], pa.int32())
        return pa.table(cols)

    def _write(self, rows, mode="append", dynamic=False) -> None:
        write_table(self._arrow(rows), self.path, mode=mode,
                    partition_by=["p"] if self.partitioned else None,
                    bucket_by=["id"] if self.buckets else None,
                    num_buckets=self.buckets or None,
                    partition_overwrite_mode="dynamic" if dynamic else "static",
                    options={"bucketingVersion": str(self.bucketing_version)})

    def append(self) -> None:
        rows = self._rows(self.rng.randrange(1, 15))
        self._write(rows)
        self.model.update(rows)
        self.log.append(f"append {len(rows)}")

    def overwrite(self) -> None:
        if self.partitioned:
            p = self.rng.randrange(3)
            rows = self._rows(self.rng.randrange(1, 8), p)
            self._write(rows, "overwrite", dynamic=True)
            self.model = {i: r for i, r in self.model.items() if r[1] != p}
        else:
            rows = self._rows(self.rng.randrange(1, 8))
            self._write(rows, "overwrite")
            self.model = {}
        self.model.update(rows)
        self.log.append(f"overwrite {len(rows)}")

    def _targets(self) -> list[int]:
        ids = sorted(self.model)
        return self.rng.sample(ids, min(len(ids), self.rng.randrange(1, 6))) if ids else []

    def _row_ids(self, ids: list[int]):
        tab = read_table(self.path, includeRowId="true")
        keep = np.isin(np.asarray(tab.column("id").to_pylist(), dtype=np.int64), ids)
        rid = tab.column("row__id").combine_chunks()
        parts = ([pa.array(np.asarray(tab.column("p").to_pylist(), dtype=np.int32)[keep])]
                 if self.partitioned else [])
        return (np.asarray(rid.field("writeId"))[keep], np.asarray(rid.field("bucketId"))[keep],
                np.asarray(rid.field("rowId"))[keep], parts)

    def _dml(self, op: str, ids: list[int], new: Optional[dict] = None) -> None:
        fs, t = self.fs, self.location
        spec = TableSpec.of(t, load_layout(fs, t))
        owid, bp, rid, parts = self._row_ids(ids)
        txn = pathlog.begin(fs, t, op)
        stage = pathlog.staging_dir(fs, t, txn.write_id)
        dw = DeleteWriter(fs, spec, txn.write_id, 0, stage + "/d")
        dw.write(owid, bp, rid, parts)
        staged = dw.close()
        if new:
            iw = InsertWriter(fs, spec, InsertTarget(txn.write_id, 1), stage + "/i", 0)
            tab = self._arrow(new)
            iw.write(pa.record_batch([tab.column("id").combine_chunks(),
                                      tab.column("v").combine_chunks()], names=["id", "v"]),
                     [tab.column("p").combine_chunks()] if self.partitioned else [])
            staged += iw.close()
        touched = sorted({f.partition for f in staged})
        commit_write(fs, spec, txn, staged, dml_partitions=touched)

    def delete(self) -> None:
        ids = self._targets()
        if not ids:
            return
        self._dml("delete", ids)
        for i in ids:
            del self.model[i]
        self.log.append(f"delete {ids}")

    def update(self) -> None:
        ids = self._targets()
        if not ids:
            return
        new = {i: (self.model[i][0] + "u", self.model[i][1]) for i in ids}
        self._dml("update", ids, new)
        self.model.update(new)
        self.log.append(f"update {ids}")

    def merge(self) -> None:
        """A MERGE's effect in one write id: matched rows updated, unmatched source rows inserted
        (delete events in statement 0, the new rows in statement 1, as Hive 3 writes it)."""
        ids = self._targets()
        new = {i: (self.model[i][0] + "m", self.model[i][1]) for i in ids}
        new.update(self._rows(self.rng.randrange(1, 4)))
        self._dml("merge", ids, new)
        self.model.update(new)
        self.log.append(f"merge {ids} + {len(new) - len(ids)} new")

    def compact(self, kind: str, partitions=None) -> dict:
        m = compact(PathTable(self.path), kind, partitions, parallelism=PARALLELISM)
        self.log.append(f"compact {kind} {partitions or ''} -> {m.get('outputs')}")
        return m

    def vacuum(self) -> dict:
        r = vacuum(self.fs, self.location, retention_hours=0, staging_grace_s=0).to_json()
        self.log.append(f"vacuum -> {r['numRemoved']} removed")
        return r

    # --- reads ------------------------------------------------------------------------------------
    def ours(self, **options: str) -> Counter:
        """(ROW__ID, (id, v), p) of every row our reader returns (``options``: e.g. a snapshot)."""
        tab = read_table(self.path, includeRowId="true", **options)
        rid = tab.column("row__id").to_pylist()
        ids, vs = tab.column("id").to_pylist(), tab.column("v").to_pylist()
        ps = tab.column("p").to_pylist() if self.partitioned else [0] * len(ids)
        return Counter(((r["writeId"], r["bucketId"], r["rowId"]), (i, v), p)
                       for r, i, v, p in zip(rid, ids, vs, ps))

    def expected(self) -> Counter:
        return Counter((i, v, p if self.partitioned else 0) for i, (v, p) in self.model.items())

    def values(self, rows: Counter) -> Counter:
        return Counter({(k[1][0], k[1][1], k[2]): n for k, n in rows.items()})

    def partition_dirs(self) -> list[tuple[str, int]]:
        if not self.partitioned:
            return [(self.path, 0)]
        return [(f"{self.path}/p={p}", p) for p in range(3)
                if self.fs.exists(f"{self.path}/p={p}")]

    def hive_txns(self) -> str:
        from hive_ref import valid_txns

        state = load_state(self.fs, self.location)
        snap = state.snapshot()
        min_open = snap.min_open_or_none
        return valid_txns(snap.high_watermark, snap.exceptions, min_open)

    def hive3_rows(self, oracle, *, vectorized: bool = False, snapshot: Optional[str] = None,
                   bucket_count: Optional[int] = None) -> Counter:
        """What Hive 3.1 / 4.1's own reader (tests/hive_jvm) returns, as :meth:`ours` does, at
        the log's snapshot (or ``snapshot``, the library's string) on each partition."""
        from hive_jvm.oracle import snapshot_write_ids
        from spark_hive_acid.acid.snapshot import parse_write_ids

        snap = (parse_write_ids(snapshot) if snapshot
                else load_state(self.fs, self.location).snapshot())
        wl = snapshot_write_ids(snap)
        out = Counter()
        for d, p in self.partition_dirs():
            for rid, vals in oracle.read(d, COLUMNS, write_ids=wl, vectorized=vectorized,
                                         bucket_count=bucket_count or self.buckets or 1):
                out[(tuple(rid), tuple(vals), p)] += 1
        return out

    def hive_rows(self, hive_ref, bucket_count: Optional[int] = None) -> Counter:
        out = Counter()
        txns = self.hive_txns()
        for d, p in self.partition_dirs():
            for rid, vals in hive_ref.read(d, COLUMNS, valid_txns=txns,
                                           bucket_count=bucket_count or self.buckets or 1):
                out[(tuple(rid), tuple(vals), p)] += 1
        return out
