"""Keeping a metastore transaction alive: its heartbeat, in a thread or a detached process."""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Optional, Sequence

from .. import options as opt
from ..exceptions import MetastoreError, TransactionAbortedError
from ..metastore.client import MetastoreClient
from ..metastore.connection import DEFAULT_TIMEOUT_S
from .keepalive import KeepAliveProcess, spawn_keepalive_process

if TYPE_CHECKING:
    from .hms import TransactionHandle

log = logging.getLogger(__name__)

class HmsBeat:
    """The metastore's sign of life for one transaction and its lock (see :class:`.keepalive.Beat`).

    Hive checks the lock before the transaction: once the lock is unknown (released with an
    aborted transaction, or never taken) only the transaction is heartbeated, which tells whether
    it is gone.
    """

    def __init__(self, uris: Sequence[str] | str, txn: int, lock: Optional[int] = None,
                 timeout: float = DEFAULT_TIMEOUT_S,
                 client: Optional[MetastoreClient] = None):
        self.uris, self.txn, self.lock, self.timeout = uris, int(txn), lock, timeout
        self._client = client
        self._owns_client = client is None

    @property
    def client(self) -> MetastoreClient:
        if self._client is None:
            self._client = MetastoreClient(self.uris, timeout=self.timeout)
        return self._client

    def beat(self) -> None:
        try:
            self.client.heartbeat(self.txn, self.lock)
        except TransactionAbortedError:
            raise
        except MetastoreError as e:
            if self.lock is None or "NoSuchLock" not in str(e):
                raise
            log.debug("heartbeat: lock %s unknown; heartbeating txn %d only", self.lock, self.txn)
            self.lock = None
            self.client.heartbeat(self.txn, None)

    def abort_orphan(self, reason: str) -> None:
        log.warning("aborting txn %d: %s", self.txn, reason)
        self.client.abort_txn(self.txn)

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()


def spawn_keepalive(handle: "TransactionHandle", interval: float,
                    owner: tuple[int, Optional[int]]) -> KeepAliveProcess:
    """A detached process heartbeating ``handle``'s transaction every ``interval`` s while
    ``owner`` (pid, start time) lives; it aborts the transaction if the owner dies first."""
    return spawn_keepalive_process(
        f"{__name__}:HmsBeat",
        {"uris": list(handle.uris), "txn": handle.txn_id, "lock": handle.lock_id,
         "timeout": opt.get_seconds(handle.options, "metastoreTimeout", DEFAULT_TIMEOUT_S)},
        interval, owner, f"{handle.db}.{handle.table}")
