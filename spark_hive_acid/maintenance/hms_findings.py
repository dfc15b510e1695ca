"""What the metastore says about compaction: its queue and history, transactions and locks.

One :class:`MetastoreView` per metastore and run: one ``show_compact``, one
``get_open_txns_info``, one ``show_locks`` and a few ``get_config_value`` calls, whatever the
number of tables (each table's findings are filtered from them locally).

Per table (:meth:`MetastoreView.table_findings`):

* compactions ``failed``, ``did not initiate`` (Hive 2.3 says ``attempted``), and ``working``
  longer than ``hive.compactor.worker.timeout`` (stuck: Hive 3's house keeper reverts such entries
  to ``initiated`` only while a Worker runs; default 86400 s);
* partitions Hive **stopped compacting**: the newest ``hive.compactor.initiator.failed.compacts
  .threshold`` (default 2) finished compactions of the partition all failed. Hive's Initiator
  (``CompactionTxnHandler.checkFailedCompactions``: finished entries other than ``attempted``,
  newest first) then never schedules it again; Hive 4 retries after
  ``hive.compactor.initiator.failed.retry.time`` (HIVE-24602), Hive 2.3 and 3.1 never do;
* compactions ``initiated`` or ``working``: Hive's compactor owns the partition (``maintain``
  never races it);
* locks on the table, and the metastore's open and aborted transactions (global: Hive keeps no
  per-table list over Thrift).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from ..exceptions import MetastoreError, MetastoreUnavailableError
from ..metastore.client import MetastoreClient
from ..metastore.connection import parse_hive_time
from ..metastore.model import CompactionInfo, LockInfo, OpenTxnsInfo

log = logging.getLogger(__name__)

FAILED, SUCCEEDED = "failed", "succeeded"
NOT_INITIATED = ("did not initiate", "attempted")  # Hive 3+ / Hive 2.3 names of state 'a'
QUEUED = ("initiated", "working")
FAILED_THRESHOLD_KEY = "hive.compactor.initiator.failed.compacts.threshold"
WORKER_TIMEOUT_KEY = "hive.compactor.worker.timeout"
DEFAULT_FAILED_THRESHOLD = 2
DEFAULT_WORKER_TIMEOUT_S = 86400.0


def _norm(state: Optional[str]) -> str:
    return (state or "").strip().lower()


@dataclass
class MetastoreView:
    """One metastore's compaction queue/history, transactions and locks, read once."""

    uri: str
    compactions: list[CompactionInfo] = field(default_factory=list)
    txns: OpenTxnsInfo = field(default_factory=lambda: OpenTxnsInfo(0, ()))
    locks: list[LockInfo] = field(default_factory=list)
    failed_threshold: int = DEFAULT_FAILED_THRESHOLD
    worker_timeout_s: float = DEFAULT_WORKER_TIMEOUT_S
    now: float = field(default_factory=time.time)

    @classmethod
    def load(cls, client: MetastoreClient) -> "MetastoreView":
        view = cls(client.uri or "", client.compactions(), client.get_open_txns_info(),
                   client.show_locks())
        view.failed_threshold = int(_config(client, FAILED_THRESHOLD_KEY,
                                            str(DEFAULT_FAILED_THRESHOLD)))
        view.worker_timeout_s = parse_hive_time(_config(client, WORKER_TIMEOUT_KEY, "86400s"))
        return view

    # --- per table --------------------------------------------------------------------------------
    def of_table(self, db: str, table: str) -> list[CompactionInfo]:
        """The table's compactions, oldest first (by id; Hive 2.3 entries without one keep their
        order)."""
        mine = [c for c in self.compactions
                if _norm(c.db) == db.lower() and _norm(c.table) == table.lower()]
        return sorted(mine, key=lambda c: (c.id is None, c.id or 0))

    def stopped_partitions(self, db: str, table: str) -> dict[str, list[CompactionInfo]]:
        """Partition ('' = the table) -> its newest failures, where Hive stopped compacting."""
        by_part: dict[str, list[CompactionInfo]] = {}
        for c in self.of_table(db, table):
            if _norm(c.state) in (FAILED, SUCCEEDED):
                by_part.setdefault(c.partition or "", []).append(c)
        n = max(self.failed_threshold, 1)
        return {p: cs[-n:] for p, cs in by_part.items()
                if len(cs) >= n and all(_norm(c.state) == FAILED for c in cs[-n:])}

    def busy_partitions(self, db: str, table: str) -> dict[str, CompactionInfo]:
        """Partition -> Hive's compaction of it that is queued or running."""
        return {c.partition or "": c for c in self.of_table(db, table)
                if _norm(c.state) in QUEUED}

    def stuck(self, c: CompactionInfo) -> bool:
        return (_norm(c.state) == "working" and c.start_ms is not None
                and self.now - c.start_ms / 1000.0 > self.worker_timeout_s)

    def table_findings(self, db: str, table: str) -> dict[str, Any]:
        mine = self.of_table(db, table)
        failed = [c for c in mine if _norm(c.state) == FAILED]
        not_init = [c for c in mine if _norm(c.state) in NOT_INITIATED]
        stuck = [c for c in mine if self.stuck(c)]
        locks = [lk for lk in self.locks if _norm(lk.db) == db.lower()
                 and _norm(lk.table) == table.lower()]
        stopped = self.stopped_partitions(db, table)
        return {
            "failed": [_compaction_json(c, self.now) for c in failed],
            "didNotInitiate": [_compaction_json(c, self.now) for c in not_init],
            "stuckWorking": [_compaction_json(c, self.now) for c in stuck],
            "queued": [_compaction_json(c, self.now) for c in mine if _norm(c.state) in QUEUED],
            "stoppedPartitions": sorted(stopped),
            "locks": [_lock_json(lk, self.now) for lk in locks],
        }

    def summary(self) -> dict[str, Any]:
        """The metastore-wide part: transactions, thresholds read from the server."""
        open_txns = [t for t in self.txns.txns if t.is_open]
        oldest = min(open_txns, key=lambda t: t.txn_id, default=None)
        return {
            "uri": self.uri, "openTxns": len(open_txns),
            "abortedTxns": len(self.txns.aborted_ids),
            "oldestOpenTxn": None if oldest is None else {
                "txnId": oldest.txn_id, "user": oldest.user, "host": oldest.hostname,
                "ageSeconds": _age(oldest.started_ms, self.now)},
            "locks": len(self.locks),
            "failedCompactsThreshold": self.failed_threshold,
            "workerTimeoutSeconds": self.worker_timeout_s,
        }


def _config(client: MetastoreClient, key: str, default: str) -> str:
    """A server setting; the default when the server will not tell (older Hives refuse some)."""
    try:
        return client.get_config_value(key, default)
    except MetastoreUnavailableError:
        raise
    except MetastoreError as e:
        log.debug("%s: cannot read %s (%s); assuming %s", client.uri, key, e, default)
        return default


def _age(ms: Optional[int], now: float) -> Optional[float]:
    return None if not ms else round(max(now - ms / 1000.0, 0.0), 1)


def _compaction_json(c: CompactionInfo, now: float) -> dict[str, Any]:
    return {"id": c.id, "partition": c.partition, "type": (c.type or "").lower(),
            "state": c.state, "workerId": c.worker_id, "ageSeconds": _age(c.start_ms, now),
            "endMs": c.end_ms}


def _lock_json(lk: LockInfo, now: float) -> dict[str, Any]:
    return {"lockId": lk.lock_id, "txnId": lk.txn_id or None, "type": lk.type,
            "state": lk.state, "partition": lk.partition, "user": lk.user,
            "host": lk.hostname, "ageSeconds": _age(lk.acquired_ms, now)}
