"""A Hive Metastore transaction in this process: opened, heartbeated, committed or aborted.

Lifecycle (what Hive's ``DbTxnManager`` does for one statement)::

    open_txns -> allocate_table_write_ids (Hive 3+; the txn id on 2.x) -> lock (poll check_lock
    while WAITING) -> [write files; add_partitions / add_dynamic_partitions] -> commit_txn
    (or abort_txn)

The transaction heartbeats itself and its lock from the moment it is opened (a silent one is
timed out by the metastore after ``hive.txn.timeout``, even while it waits for its lock), at an
interval below that timeout, through the keep-alive mechanism of :mod:`.keepalive`. Used as a
context manager, it begins on entry, aborts on any exception and commits on a clean exit.
The locks it takes are Hive's (:mod:`spark_hive_acid.metastore.locks`); its partitions are
:mod:`.hms_partitions`'; handing it to other processes is :mod:`.hms`'.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from .. import options as opt
from ..acid.partitions import partition_values
from ..acid.snapshot import ValidIdList
from ..exceptions import (
    CommitStateUnknownError,
    InvalidOptionError,
    MetastoreError,
    MetastoreUnavailableError,
    TransactionAbortedError,
)
from ..io.registry import get_filesystem
from ..metastore.client import MetastoreClient
from ..metastore.locks import LockSpec, Operation, acquire_lock, lock_specs
from ..metastore.model import PartitionInfo, TableInfo
from ..metastore.partitions import make_partition_name
from ..metastore.stats import stats_stale_after
from .base import CommitOutcome, Transaction, WriteSet
from .commit_marker import write_markers
from .hms_keepalive import HmsBeat, WriteLeftovers
from .hms_partitions import HmsPartitions, PartitionSpec
from .keepalive import KeepAliveThread

if TYPE_CHECKING:  # typing.Self is 3.11+; mypy knows typing_extensions
    from typing_extensions import Self

log = logging.getLogger(__name__)

DEFAULT_LOCK_TIMEOUT_S: float = opt.default("lockWaitTimeout")
COMPACTION_LOCK_WAIT_S = 2.0  # how long a compaction waits for its locks
MIN_HEARTBEAT_INTERVAL_S = 0.05


class HmsLifecycle(Transaction):
    """One Hive ACID transaction on one table, in this process: opened, heartbeated, committed
    or aborted (:class:`~.hms.HmsTransaction` adds crossing processes).

    Args:
        client: an open-able :class:`MetastoreClient` (closed at the end if ``owns_client``).
        db, tbl: the table written (or read, for ``Operation.READ``).
        operation: an :class:`Operation` or its name (``"insert"``, ``"insert_overwrite"``...).
        table: its :class:`TableInfo` if already fetched.
        partitions: static partitions (specs, value lists or names) to lock instead of the table.
        read_tables: ``(db, tbl)`` pairs also read (SHARED_READ locks), e.g. a MERGE source.
        lock_timeout: seconds to wait for a WAITING lock before LockTimeoutError.
        heartbeat_interval: seconds between heartbeats; default ``hive.txn.timeout / 3``.
        options: file-system options for the table's locations (and what a handle carries).

    ``write_id`` is 0 until :meth:`begin`; a compaction, which allocates no write id, goes by its
    txn id there (its staging, its handle), and its :meth:`ids` name no write id.
    """

    operation: Operation

    def __init__(self, client: MetastoreClient, db: str, tbl: str, operation: Operation | str,
                 *, table: Optional[TableInfo] = None,
                 partitions: Optional[Sequence[PartitionSpec]] = None,
                 read_tables: Sequence[tuple[str, str]] = (),
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S,
                 heartbeat_interval: Optional[float] = None, owns_client: bool = False,
                 options: Optional[Mapping[str, str]] = None) -> None:
        try:
            self.operation = Operation(operation)
        except ValueError as e:
            raise InvalidOptionError(
                f"Unknown operation {operation!r}; expected one of "
                f"{', '.join(o.value for o in Operation)}") from e
        self.client = client
        self.db, self.tbl = db.lower(), tbl.lower()
        self.table = table
        self._partition_args = list(partitions) if partitions else None
        self._read_table_names = list(read_tables)
        self.lock_timeout = float(lock_timeout)
        if self.operation is Operation.COMPACT:  # another compaction running: fail, do not queue
            self.lock_timeout = min(self.lock_timeout, COMPACTION_LOCK_WAIT_S)
        self.heartbeat_interval = heartbeat_interval
        self.owns_client = owns_client
        self.options = opt.lowered(options)
        self.state = "new"
        self.txn_id: Optional[int] = None
        self.write_id = 0
        self.lock_id: Optional[int] = None
        self.lock_specs: list[LockSpec] = []
        self.partitions = HmsPartitions(client, self.db, self.tbl, self.options)
        self._keeper: Optional[KeepAliveThread] = None
        self._published: list[str] = []
        self.location: Optional[str] = table.location if table is not None else None
        self.table_path = ""  # the table's location in its file system's form, known once begun
        self._beat: Optional[HmsBeat] = None

    # -- lifecycle ----------------------------------------------------------------------------
    def begin(self) -> "Self":
        """Open the transaction, allocate the write id and acquire the lock (waiting if needed)."""
        if self.state != "new":
            raise MetastoreError(f"Transaction on {self.full_name} already {self.state}")
        try:
            if self.table is None:
                self.table = self.client.get_table(self.db, self.tbl)
            self.location = self.location or self.table.location
            self.table_path = get_filesystem(self.table.location, self.options)[1]
            read_infos = [self.client.get_table(d, t, require_acid=False)
                          for d, t in self._read_table_names]
            names = None
            if self._partition_args is not None:
                keys = self.table.partition_names
                if not keys:
                    raise InvalidOptionError(f"Table {self.full_name} is not partitioned")
                names = [make_partition_name(keys, partition_values(keys, p))
                         for p in self._partition_args]
            self.lock_specs = lock_specs(self.operation, self.table, names, read_infos,
                                         hive4=self.client.server_kind == "hive4")
            self.txn_id = self.client.open_txn()
            self.state = "open"
            log.info("opened txn %d for %s on %s", self.txn_id, self.operation.value,
                     self.full_name)
            self.start_heartbeat()
            self.write_id = (self.client.allocate_write_id(self.txn_id, self.db, self.tbl)
                             if self.operation.allocates_write_id else self.txn_id)
            self._acquire_lock()
        except BaseException as e:
            if self.state == "open":
                self.abort(reason=f"begin failed: {e}")
            self.close_client()
            raise
        return self

    def commit(self, outcome: Optional[CommitOutcome] = None, *,
               write_set: Optional[WriteSet] = None,
               properties: Optional[Mapping[str, str]] = None) -> None:
        """Commit; WriteConflictError / TransactionAbortedError if the metastore refuses,
        CommitStateUnknownError if the connection broke meanwhile. The metastore decides conflicts
        (``write_set`` unused); ``properties`` go beside the files (``txn.commit_marker``)."""
        self.require_open("commit")
        self.prepare_commit(properties)
        self.commit_txn()

    def prepare_commit(self, properties: Optional[Mapping[str, str]] = None) -> None:
        """A commit before ``commit_txn``: properties beside the files, statistics marked stale
        (Hive 4 answers queries from them; ``txn.hms_multi`` does this per table, then commits
        once)."""
        if properties and self._published and self.location:
            write_markers(get_filesystem(self.location, self.options)[0], self._published,
                          self.write_id, properties)
        if self.operation.allocates_write_id:
            stats_stale_after(self)

    def commit_txn(self) -> None:
        """``commit_txn``, its failures told apart (see :meth:`commit`)."""
        if (lost := self.heartbeat_error) is not None:
            self._finish("aborted")
            raise TransactionAbortedError(f"Transaction {self.txn_id} on {self.full_name} was "
                                          f"lost while running: {lost}") from lost
        self.stop_heartbeat()
        try:
            self.client.commit_txn(self.open_txn_id())
        except TransactionAbortedError:
            self._finish("aborted")
            self._remove_published(confirmed=True)
            raise
        except MetastoreUnavailableError as e:
            self._finish("unknown")
            raise CommitStateUnknownError(
                f"Lost the metastore connection while committing txn {self.txn_id} on "
                f"{self.full_name}: it may or may not have committed ({e})") from e
        except BaseException:
            # Anything else (e.g. a MetaException): the txn is still open; make sure it ends.
            self.abort(reason="commit failed")
            raise
        log.info("committed txn %d on %s", self.txn_id, self.full_name)
        self._finish("committed")

    def abort(self, reason: str = "") -> bool:
        """Abort (idempotent; a no-op once committed or aborted). Releases the locks and removes
        the directories this transaction had published. Returns True once the metastore confirmed
        the transaction is not open; False when it could not be reached, or when a commit's
        outcome is unknown (then a keep-alive process must finish the abort:
        ``KeepAliveProcess.abort``, which retries until the metastore answers)."""
        if self.state != "open":
            self.close_client()
            return self.state in ("aborted", "committed", "new")
        self.stop_heartbeat()
        confirmed = True
        try:
            self.client.abort_txn(self.open_txn_id())
            log.info("aborted txn %d on %s%s", self.txn_id, self.full_name,
                     f" ({reason})" if reason else "")
        except TransactionAbortedError:
            log.info("txn %d was already aborted or gone", self.txn_id)
        except MetastoreError as e:
            confirmed = False
            log.error("could not abort txn %s on %s (%s); it stays open until its keep-alive "
                      "process or the metastore's house keeper ends it", self.txn_id,
                      self.full_name, e)
        self._finish("aborted")
        self._remove_published(confirmed)
        return confirmed

    @property
    def commit_state_unknown(self) -> bool:
        return self.state == "unknown"

    def ids(self) -> dict[str, int]:
        ids = {"txnId": self.txn_id or 0}
        if self.operation.allocates_write_id:
            ids["writeId"] = self.write_id
        return ids

    def __enter__(self) -> "Self":
        if self.state == "new":
            self.begin()
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        if exc is not None:
            self.abort(reason=f"{type(exc).__name__}: {exc}")
        elif self.state == "open":
            self.commit()
        else:
            self.close_client()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError(f"Transaction {self.txn_id} lives on the driver (socket, heartbeat thread) "
                        "and cannot be pickled: send txn.handle() to executors instead")

    # -- during the transaction ---------------------------------------------------------------
    @property
    def full_name(self) -> str:
        return f"{self.db}.{self.tbl}"

    @property
    def dynamic_partition_write(self) -> bool:
        return any(s.dynamic_partition_write for s in self.lock_specs)

    @property
    def heartbeats_sent(self) -> int:
        return self._keeper.beats if self._keeper is not None else 0

    @property
    def heartbeat_error(self) -> Optional[BaseException]:
        return self._keeper.error if self._keeper is not None else None

    def read_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        """``(write_ids, txns)`` as this transaction sees the table (its own writes are valid; a
        compaction, which writes under no write id, sees itself as open: on Hive 2 write ids are
        txn ids, and its high watermark must stay below its own)."""
        self.require_open("read a snapshot")
        own = None if self.operation is Operation.COMPACT else self.txn_id
        return self.client.read_snapshot(self.db, self.tbl, current_txn=own)

    def add_partitions(self, partitions: Sequence[PartitionSpec],
                       locations: Optional[Sequence[Optional[str]]] = None
                       ) -> list[PartitionInfo]:
        """Register partitions written by this transaction (:mod:`.hms_partitions`): the missing
        ones created in the catalog, and, for a dynamic partition write, reported to the
        transaction manager."""
        self.require_open("add partitions")
        infos = self.partitions.add(partitions, locations)
        self.record_partitions([p.name for p in infos])
        return infos

    def record_partitions(self, names: Sequence[str]) -> None:
        """Only the ``add_dynamic_partitions`` half of :meth:`add_partitions`."""
        self.require_open("record partitions")
        self.partitions.record(names, self.open_txn_id(), self.write_id, self.operation,
                               self.dynamic_partition_write)

    @property
    def partitions_written(self) -> list[str]:
        return self.partitions.written

    # -- the transaction interface --------------------------------------------------------------
    def partition_dirs(self, names: Optional[Sequence[str]] = None) -> dict[str, str]:
        """``{partition name: directory}`` of the partitions ``names`` (all when None) the
        metastore knows; only those are asked for."""
        return self.partitions.existing(self._table_info(), names)

    def existing_partitions(self, fs: Any, depth: int) -> list[str]:
        return sorted(self.partition_dirs()) if depth else [""]

    def register_partitions(self, written: Sequence[str]) -> None:
        if not written:
            return
        info = self._table_info()
        new = [p for p in written if not self.partitions.exists(info, p)]
        if new:
            self.add_partitions(new)
        self.record_partitions(list(written))

    def record_intent(self, dirs: Sequence[str]) -> None:
        """Written down in the staging directory too, where a keep-alive process that outlives
        this one finds what to remove."""
        self._published.extend(dirs)
        leftovers = self._leftovers()
        if leftovers is not None:
            leftovers.record_intent(self._published)

    def _leftovers(self) -> Optional[WriteLeftovers]:
        if not self.location or not self.write_id:
            return None
        return WriteLeftovers(self.location, self.options, self.write_id)

    def _remove_published(self, confirmed: bool = True) -> None:
        """Remove what this write published (``confirmed``: the abort is confirmed; without it,
        the directories still go, since this process is aborting and never commits, but the
        intents stay for the keep-alive process that finishes the abort)."""
        leftovers = self._leftovers()
        if leftovers is not None and self._published and confirmed:
            leftovers.remove(published=True)
        elif self._published and self.location:
            fs = get_filesystem(self.location, self.options)[0]
            for d in self._published:
                try:
                    fs.delete(d, recursive=True)
                except Exception as e:  # noqa: BLE001 - cleanup must not hide the outcome
                    log.warning("could not remove %s: %s", d, e)
        self._published = []

    # -- internals ------------------------------------------------------------------------------
    def _table_info(self) -> TableInfo:
        if self.table is None:
            self.table = self.client.get_table(self.db, self.tbl)
        return self.table

    def open_txn_id(self) -> int:
        if self.txn_id is None:
            raise MetastoreError(f"Transaction on {self.full_name} is not open ({self.state})")
        return self.txn_id

    def require_open(self, what: str) -> None:
        if self.state != "open":
            raise MetastoreError(f"Cannot {what}: transaction {self.txn_id} on {self.full_name} "
                                 f"is {self.state}")

    def _acquire_lock(self) -> None:
        def taken(lock_id: int) -> None:  # heartbeat the lock while we wait for it
            self.lock_id = lock_id
            if self._beat is not None:
                self._beat.lock = lock_id

        acquire_lock(self.client, self.lock_specs, self.open_txn_id(),
                     self.lock_timeout, self.full_name, on_requested=taken)

    def start_heartbeat(self) -> None:
        interval = self.heartbeat_interval
        if interval is None:
            interval = self.client.txn_timeout_seconds() / 3.0
        self.heartbeat_interval = max(float(interval), MIN_HEARTBEAT_INTERVAL_S)
        self._beat = HmsBeat(self.client.uris, self.open_txn_id(), self.lock_id,
                             client=self.client)
        self._keeper = KeepAliveThread(self._beat, self.heartbeat_interval,
                                       f"hive-acid-heartbeat-txn{self.txn_id}").start()

    def stop_heartbeat(self) -> None:
        if self._keeper is not None:
            self._keeper.stop(join_s=max(5.0, self.client.timeout))

    def _finish(self, state: str) -> None:
        self.stop_heartbeat()
        self.state = state
        self.close_client()

    def close_client(self) -> None:
        if self.owns_client:
            self.client.close()
