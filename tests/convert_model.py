"""Shared by the conversion tests: a random Hive ACID history with its model of every write id's
rows (``compaction_ops.ModelTable``: every write through the library's own writers and commit
path), and the targets' own readers (pyiceberg, deltalake) to compare with it."""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pyarrow as pa

from compaction_ops import ModelTable
from spark_hive_acid.catalog.path import PathTable

OPS = ("append", "append", "append", "delete", "update", "merge", "overwrite")


class History:
    """A ModelTable and ``at[w]``: the model's rows after each committed write id ``w``."""

    def __init__(self, path: Path, seed: int, *, partitioned: bool = False, buckets: int = 0):
        self.rng = random.Random(seed)
        self.table = ModelTable(str(path), self.rng, partitioned=partitioned, buckets=buckets)
        self.at: dict[int, Counter] = {}

    @property
    def path(self) -> str:
        return self.table.path

    def current(self) -> int:
        return PathTable(self.path).snapshot().high_watermark

    def do(self, op: str) -> None:
        if op in ("minor", "major"):
            self.table.compact(op)
        elif op == "vacuum":
            self.table.vacuum()
        else:
            getattr(self.table, op)()
        if self.table.model or self.at or op in ("append", "overwrite"):
            self.at[self.current()] = self.table.expected()

    def random_ops(self, n: int, compactions: bool = False) -> None:
        ops = OPS + (("minor", "major") if compactions else ())
        for _ in range(n):
            op = self.rng.choice(ops)
            if op in ("minor", "major") and not self.table.model:
                op = "append"
            self.do(op)

    def model_at(self, write_id: int) -> Counter:
        """The rows after ``write_id`` (the last committed write id at or below it)."""
        return self.at[max(w for w in self.at if w <= write_id)]


def rows(batches, partitioned: bool) -> Counter:
    """(id, v, p) of the rows read (p = 0 unpartitioned), as the model keeps them."""
    table = pa.Table.from_batches(list(batches)) if not isinstance(batches, pa.Table) else batches
    if table.num_rows == 0:
        return Counter()
    ids, vs = table.column("id").to_pylist(), table.column("v").to_pylist()
    ps = table.column("p").to_pylist() if partitioned else [0] * len(ids)
    return Counter(zip(ids, vs, ps))


def iceberg_props(tmp_path: Path) -> dict:
    """pyiceberg's SQL catalog on a SQLite file: a real catalog without a server."""
    return {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db",
            "warehouse": f"file://{tmp_path}/iceberg"}
