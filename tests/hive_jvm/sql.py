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

from . import BUILD_DIR, LOCAL_REPO, HiveJvmError
from .oracle import HiveOracle
from .server import HiveJvm

__all__ = ["HiveSql", "parse_row"]

#: Hive 4.1's metastore needs Hive's Derby schema script for its transaction tables. Maven
#: Central has Hive's metastore distribution for 4.0.1 (its scripts hold every version's
#: hive-schema-X.derby.sql), none for 4.1.0: Hive 4.1 starts from the 4.0.0 script minus the
#: column-statistics columns its own JDO mapping (package.jdo in hive-exec-4.1.0.jar) no longer
#: has (HIVE-27725), which are NOT NULL there and would make every statistics write fail.
#: (Branch i20-hms's tests/metastore_server/schema.py does the same for the metastore servers;
#: one of the two should go when both are merged.)
_DISTRIBUTION = ("org.apache.hive", "hive-standalone-metastore-server", "4.0.1", "bin", "tar.gz")
_SCRIPT = "hive-schema-4.0.0.derby.sql"
_DROPPED = ("TAB_COL_STATS.CAT_NAME", "TAB_COL_STATS.DB_NAME", "TAB_COL_STATS.TABLE_NAME",
            "PART_COL_STATS.CAT_NAME", "PART_COL_STATS.DB_NAME", "PART_COL_STATS.TABLE_NAME",
            "PART_COL_STATS.PARTITION_NAME")


def _hive41_schema() -> dict:
    """The engine settings that create Hive 4.1's metastore schema (script fetched once)."""
    import fcntl
    import shutil
    import subprocess
    import tarfile

    out = BUILD_DIR / "hive_jvm" / "schema" / _SCRIPT
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / "schema.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.exists():
            group, name, version, classifier, kind = _DISTRIBUTION
            tarball = (LOCAL_REPO / group.replace(".", "/") / name / version
                       / f"{name}-{version}-{classifier}.{kind}")
            if not tarball.exists():
                cmd = [shutil.which("mvn") or "mvn", "-B", "-q", f"-Dmaven.repo.local={LOCAL_REPO}",
                       "dependency:get", f"-Dartifact={group}:{name}:{version}:{kind}:{classifier}",
                       "-Dtransitive=false"]
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
                if done.returncode != 0 or not tarball.exists():
                    raise HiveJvmError(f"Fetching {tarball.name} failed:\n{done.stdout[-3000:]}"
                                       f"\n{done.stderr[-3000:]}")
            with tarfile.open(tarball) as tar:
                member = next((m for m in tar.getmembers()
                               if m.name.endswith(f"scripts/metastore/upgrade/derby/{_SCRIPT}")),
                              None)
                if member is None:
                    raise HiveJvmError(f"{_SCRIPT} is not in {tarball}")
                tmp = out.with_suffix(".tmp")
                tmp.write_bytes(tar.extractfile(member).read())
                tmp.replace(out)
    return {"hivejvm.schema.script": str(out), "hivejvm.schema.drop.columns": ",".join(_DROPPED)}


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
        conf = _hive41_schema() if jvm.name == "hive41" else {}
        started = jvm.call("Sql.start", {"dir": str(root), "conf": conf})
        self.warehouse = Path(started["warehouse"][len("file:"):])

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
