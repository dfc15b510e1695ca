"""Keeping a metastore transaction alive, and ending it when its owner cannot.

:class:`HmsBeat` is the transaction's sign of life (a thread of the owner, or a detached keep-alive
process, runs it). The process outlives its owner on purpose: if the owner dies (kill -9 of the
Spark driver, mid-publish included), or gives up aborting because the metastore cannot be reached,
the process keeps trying to abort until the metastore confirms, and then removes what the write
left in the table (its staging directory and the directories it had begun to publish, listed in
the staging directory's intents file). A transaction is never left open holding its lock because
its writer is gone.
"""
from __future__ import annotations

import json
import logging
from typing import Any, Mapping, Optional, Protocol, Sequence

from .. import options as opt
from ..acid.layout import staging_dir
from ..exceptions import HiveAcidError, MetastoreError, TransactionAbortedError
from ..io.registry import get_filesystem
from ..metastore.client import MetastoreClient
from ..metastore.connection import DEFAULT_TIMEOUT_S
from ..write.in_place import remove_write_dirs
from ..write.staging import remove_staging
from .keepalive import KeepAliveProcess, spawn_keepalive_process

log = logging.getLogger(__name__)

INTENTS_FILE = "_intents.json"


class KeptTransaction(Protocol):
    """What a keep-alive process needs of an open transaction (``txn.hms.TransactionHandle``)."""

    @property
    def uris(self) -> tuple[str, ...]: ...

    @property
    def db(self) -> str: ...

    @property
    def table(self) -> str: ...

    @property
    def txn_id(self) -> int: ...

    @property
    def write_id(self) -> int: ...

    @property
    def lock_id(self) -> Optional[int]: ...

    @property
    def options(self) -> Mapping[str, str]: ...

    @property
    def location(self) -> Optional[str]:
        """The table's location: where its write left files."""


class WriteLeftovers:
    """Where a metastore write stages and publishes: enough to clean up after it (picklable,
    JSON-able: the keep-alive process gets it on its command line)."""

    def __init__(self, location: str, options: Mapping[str, str], write_id: int):
        self.location, self.options, self.write_id = location, dict(options), int(write_id)

    def _fs(self) -> tuple[Any, str, str]:
        """The file system, the table's path there and W's staging directory."""
        fs, path = get_filesystem(self.location, self.options)
        return fs, path, staging_dir(fs, path, self.write_id)

    def record_intent(self, dirs: Sequence[str]) -> None:
        """Write down the directories the commit is about to create, where a process other than
        the writer can find them."""
        fs, _, stage = self._fs()
        fs.mkdirs(stage)
        fs.write_bytes(fs.join(stage, INTENTS_FILE), json.dumps(list(dirs)).encode("utf-8"))

    def remove(self, published: bool) -> None:
        """Delete the staging directory and, if ``published`` (the write is known not to have
        committed), the directories it published. Failures are logged, not raised."""
        try:
            fs, path, stage = self._fs()
            dirs: list[str] = []
            if published:
                try:
                    dirs = json.loads(fs.read_bytes(fs.join(stage, INTENTS_FILE)).decode("utf-8"))
                except (HiveAcidError, ValueError):
                    dirs = []
            for d in dirs:
                fs.delete(d, recursive=True)
            if published and fs.writes_in_place:  # tasks wrote in place before any intent
                dirs += remove_write_dirs(fs, path, self.write_id)
            remove_staging(fs, path, self.write_id)
            if dirs:
                log.info("removed the %d directories write id %d had published", len(dirs),
                         self.write_id)
        except Exception as e:  # noqa: BLE001 - cleanup must not hide the real outcome
            log.warning("could not clean up after write id %d in %s: %s", self.write_id,
                        self.location, e)

    def to_json(self) -> dict:
        return {"location": self.location, "options": self.options, "write_id": self.write_id}


def abort_and_clean(client: MetastoreClient, txn_id: int,
                    leftovers: Optional[WriteLeftovers]) -> bool:
    """Abort ``txn_id``; True once it is certainly not open any more (False: the metastore could
    not be reached, try again). What it published is removed only when this call aborted it: a
    transaction already gone may have committed."""
    try:
        client.abort_txn(txn_id)
    except TransactionAbortedError:
        log.info("txn %d was already aborted, committed or gone", txn_id)
        if leftovers is not None:
            leftovers.remove(published=False)
        return True
    except MetastoreError as e:
        log.warning("could not abort txn %d yet: %s", txn_id, e)
        return False
    log.info("aborted txn %d", txn_id)
    if leftovers is not None:
        leftovers.remove(published=True)
    return True


class HmsBeat:
    """The metastore's sign of life for one transaction and its lock (see :class:`.keepalive.Beat`).

    Hive checks the lock before the transaction: once the lock is unknown (released with an
    aborted transaction, or never taken) only the transaction is heartbeated, which tells whether
    it is gone.
    """

    def __init__(self, uris: Sequence[str] | str, txn: int, lock: Optional[int] = None,
                 timeout: float = DEFAULT_TIMEOUT_S,
                 client: Optional[MetastoreClient] = None,
                 leftovers: Optional[Mapping[str, Any]] = None):
        self.uris, self.txn, self.lock, self.timeout = uris, int(txn), lock, timeout
        self._client = client
        self._owns_client = client is None
        self.leftovers = WriteLeftovers(**leftovers) if leftovers else None

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

    def abort_orphan(self, reason: str) -> bool:
        log.warning("aborting txn %d: %s", self.txn, reason)
        return abort_and_clean(self.client, self.txn, self.leftovers)

    def close(self) -> None:
        if self._owns_client and self._client is not None:
            self._client.close()


def spawn_keepalive(handle: KeptTransaction, interval: float,
                    owner: tuple[int, Optional[int]]) -> KeepAliveProcess:
    """A detached process heartbeating ``handle``'s transaction every ``interval`` s while
    ``owner`` (pid, start time) lives; if the owner dies first, or asks it to, it aborts the
    transaction (retrying until the metastore confirms) and removes what the write left."""
    leftovers = (WriteLeftovers(handle.location, handle.options, handle.write_id).to_json()
                 if handle.location else None)
    return spawn_keepalive_process(
        f"{__name__}:HmsBeat",
        {"uris": list(handle.uris), "txn": handle.txn_id, "lock": handle.lock_id,
         "timeout": opt.value(handle.options, "metastoreTimeout"),
         "leftovers": leftovers},
        interval, owner, f"{handle.db}.{handle.table}")
