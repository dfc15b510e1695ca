"""What differs between the test metastores of Hive 2.3.10, 3.1.3 and 4.1.0: jars, main class,
schema creation and ``hive-site.xml``.

* ``hive23``: the jars inside the pyspark wheel; DataNucleus creates the metastore tables and
  ``hive.in.test`` the transaction tables (shared/notes/hive-2.3-inside-pyspark.md §2). No
  compactor threads (Hive 2.3's compactor lives in hive-exec, which is not in the wheel).
* ``hive31`` / ``hive41``: the jars of tests/hive_jvm (Maven Central), started through
  ``java/MetastoreLauncher.java``, which first creates the schema with Hive's own Derby script
  (:mod:`metastore_server.schema`), as ``schematool -initSchema`` would; ``hive.in.test`` is off
  (production behaviour), and Hive's compactor runs inside the metastore: Initiator, one Worker,
  Cleaner and the house keeping services (timed-out transactions, compaction history).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

#: every version the fixtures know, oldest first
ALL = ("hive23", "hive31", "hive41")
LABELS = {"hive23": "2.3.10", "hive31": "3.1.3", "hive41": "4.1.0"}

#: how often Hive's compactor threads look for work in the test servers
COMPACTOR_SETTINGS = {
    "hive.compactor.initiator.on": "true",
    "hive.compactor.worker.threads": "1",
    "hive.compactor.check.interval": "2s",  # Initiator (default 300 s)
    "hive.compactor.cleaner.run.interval": "1000ms",  # Cleaner (default 5 s)
    "hive.compactor.worker.sleep.time": "1000ms",  # Hive 4: Worker's idle sleep (default 10.8 s)
    "metastore.compactor.worker.sleep.time": "1000ms",
    # a compaction needs only one delta more than a base: small test tables qualify
    "hive.compactor.delta.num.threshold": "10",
    "hive.compactor.delta.pct.threshold": "0.1",
    # Hive 3.1's MR compactor submits to the local job runner in the metastore's JVM
    "mapreduce.framework.name": "local",
    # Hive 4 runs its Workers in HiveServer2 unless told otherwise
    "hive.metastore.runworker.in": "metastore",
    # Hive 4's query-based compactor runs its queries with MapReduce in the same JVM
    "hive.execution.engine": "mr",
    "hive.exec.submitviachild": "false",
    "hive.exec.mode.local.auto": "false",
}


#: Hive 4.1's default metastore.task.threads.remote without Iceberg's service
REMOTE_TASKS = (
    "org.apache.hadoop.hive.metastore.txn.service.AcidHouseKeeperService",
    "org.apache.hadoop.hive.metastore.txn.service.CompactionHouseKeeperService",
    "org.apache.hadoop.hive.metastore.txn.service.AcidTxnCleanerService",
    "org.apache.hadoop.hive.metastore.txn.service.AcidOpenTxnsCounterService",
    "org.apache.hadoop.hive.metastore.MaterializationsRebuildLockCleanerTask",
    "org.apache.hadoop.hive.metastore.PartitionManagementTask",
)


@dataclass(frozen=True)
class ServerLayout:
    """Where one server keeps its things."""

    base_dir: Path

    @property
    def derby_url(self) -> str:
        return f"jdbc:derby:;databaseName={self.base_dir / 'metastore_db'};create=true"

    @property
    def warehouse(self) -> Path:
        return self.base_dir / "warehouse"


def common_settings(layout: ServerLayout) -> dict[str, str]:
    """Settings every version needs (shared/notes/hive-2.3-inside-pyspark.md §2)."""
    return {
        "javax.jdo.option.ConnectionURL": layout.derby_url,
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": layout.warehouse.as_uri(),
        "hive.support.concurrency": "true",
        "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
        # Trap: the async logger needs com.lmax.disruptor, which none of the classpaths has.
        "hive.async.log.enabled": "false",
        "hive.metastore.event.db.notification.api.auth": "false",
    }


def hive23_settings(layout: ServerLayout) -> dict[str, str]:
    return {
        **common_settings(layout),
        "datanucleus.schema.autoCreateAll": "true",
        "hive.compactor.initiator.on": "false",
        "hive.compactor.worker.threads": "0",
        # Trap: the default BoneCP is not in the pyspark jars; the first txn call would die.
        "datanucleus.connectionPoolingType": "HikariCP",
        # Creates TXNS, HIVE_LOCKS, COMPACTION_QUEUE... lazily (TxnDbUtil.prepDb). Side effect:
        # every lock component must carry an explicit operationType.
        "hive.in.test": "true",
        # A new Derby database is created from scratch anyway: skip DataNucleus' validation.
        "datanucleus.schema.validateTables": "false",
        "datanucleus.schema.validateColumns": "false",
        "datanucleus.schema.validateConstraints": "false",
    }


def hive3plus_settings(layout: ServerLayout) -> dict[str, str]:
    return {
        **common_settings(layout),
        "datanucleus.schema.autoCreateAll": "false",  # the launcher ran Hive's schema script
        "hive.metastore.warehouse.external.dir": (layout.base_dir / "external").as_uri(),
        "hive.exec.scratchdir": str(layout.base_dir / "scratch"),
        "hive.exec.local.scratchdir": str(layout.base_dir / "scratch_local"),
        "hive.querylog.location": str(layout.base_dir / "querylog"),
        **COMPACTOR_SETTINGS,
    }


def hive41_settings(layout: ServerLayout) -> dict[str, str]:
    return {
        **hive3plus_settings(layout),
        "hive.metastore.housekeeping.threads.on": "true",
        # Hive 4.1's default list ends with Iceberg's house keeper, which is not in hive-exec: its
        # ClassNotFoundException would stop every house keeping task (the timed-out-txn reaper too)
        "metastore.task.threads.remote": ",".join(REMOTE_TASKS),
    }


@dataclass(frozen=True)
class VersionSpec:
    name: str
    settings: Callable[[ServerLayout], dict[str, str]]

    @property
    def label(self) -> str:
        return LABELS[self.name]


SPECS = {
    "hive23": VersionSpec("hive23", hive23_settings),
    "hive31": VersionSpec("hive31", hive3plus_settings),
    "hive41": VersionSpec("hive41", hive41_settings),
}


def selected_versions() -> tuple[str, ...]:
    """The versions the parametrised ``metastore`` fixture runs: ``$HIVE_ACID_METASTORES``
    (comma-separated, e.g. ``hive23,hive41``), default all of them."""
    raw = os.environ.get("HIVE_ACID_METASTORES", "").strip()
    if not raw:
        return ALL
    names = tuple(v.strip() for v in raw.split(",") if v.strip())
    unknown = [v for v in names if v not in SPECS]
    if unknown:
        raise ValueError(f"HIVE_ACID_METASTORES: unknown {unknown}; known {list(ALL)}")
    return names
