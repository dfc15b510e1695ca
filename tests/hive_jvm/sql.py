"""Hive 3.1 / 4.1's SQL engine in local mode (``java/common/hivejvm/Sql.java``), for tests that
let Hive itself write tables: its embedded driver over an embedded Derby metastore, the
DbTxnManager, MapReduce's local runner in the JVM, and the compactor's Worker run on demand.

One engine per JVM (Hive keeps its session in statics), in a directory of its own; the same
JVM also answers the oracle calls of :class:`~hive_jvm.oracle.HiveOracle` (:attr:`oracle`).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Optional

from .oracle import HiveOracle
from .server import HiveJvm

__all__ = ["HiveSql", "parse_row"]


def parse_row(line: str, types: tuple) -> tuple:
    """One row as Hive's driver prints it (tab-separated; ``NULL``; a struct as JSON) into
    Python values: ``types`` holds ``"json"``, ``"int"`` or ``"str"`` per column."""
    out = []
    for text, t in zip(line.split("\t"), types):
        if text == "NULL" and t != "json":
            out.append(None)
        elif t == "json":
            d = json.loads(text)
            out.append((d["writeid"], d["bucketid"], d["rowid"]))
        elif t == "int":
            out.append(int(text))
        else:
            out.append(text)
    return tuple(out)


class HiveSql:
    """A started SQL engine of Hive ``name`` (``"hive31"`` / ``"hive41"``)."""

    def __init__(self, jvm: HiveJvm, root: Path):
        self.jvm, self.root = jvm, root
        self.name = jvm.name
        self.oracle = HiveOracle(jvm)
        self.version = self.oracle.version
        self.warehouse = Path(jvm.call("Sql.start", {"dir": str(root)})["warehouse"][len("file:"):])

    @classmethod
    def start(cls, name: str, root: Optional[os.PathLike] = None) -> "HiveSql":
        root = Path(root or tempfile.mkdtemp(prefix=f"hive-sql-{name}-"))
        jvm = HiveJvm.start(name, memory="1500m")
        try:
            return cls(jvm, root)
        except BaseException:
            jvm.close()
            raise

    def close(self) -> None:
        self.jvm.close()

    def run(self, *statements: str) -> list:
        """Run statements in turn; the printed rows of each (``[]`` for DDL / DML)."""
        return self.jvm.call("Sql.run", {"statements": list(statements)})

    def query(self, sql: str, types: tuple) -> list[tuple]:
        return [parse_row(r, types) for r in self.run(sql)[0]]

    def write_ids(self, table: str) -> str:
        """The table's ValidWriteIdList now (``db.table:HWM:minOpen:open:aborted``)."""
        return self.jvm.call("Sql.writeIds", {"table": table})

    def compact(self, table: str, kind: str, partition: Optional[str] = None) -> str:
        """``ALTER TABLE ... COMPACT`` and one pass of Hive's compactor Worker; returns the
        compaction's state as SHOW COMPACTIONS prints it (``ready for cleaning`` when done)."""
        where = f" PARTITION ({partition})" if partition else ""
        self.run(f"ALTER TABLE {table}{where} COMPACT '{kind}'")
        self.jvm.call("Sql.worker")
        rows = self.run("SHOW COMPACTIONS")[0]
        mine = [r.split("\t") for r in rows if f"\t{table.split('.')[-1]}\t" in f"\t{r}\t"]
        return mine[-1][5].strip() if mine else "not queued"

    def table_dir(self, table: str) -> Path:
        return self.warehouse / table
