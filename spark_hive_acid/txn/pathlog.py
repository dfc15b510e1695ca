"""A path-mode transaction: write ids, commit order and snapshots without a metastore.

The log's layout and records are in :mod:`spark_hive_acid.acid.log_records`; reading it is
:mod:`spark_hive_acid.acid.logstate`. The only atomic primitive used is
:meth:`FileSystem.create_exclusive` (create if absent):

* **Allocation.** ``W = 1 + the highest write id the log knows``; the first allocation on a table
  also counts the ``base_*/delta_*`` names already there, so tables Hive wrote can be appended
  to. Two writers that pick the same W race on ``writeids/W.json``; the loser tries ``W+1``.
* **Commit / abort.** A writer reads the newest record ``n`` and creates ``n+1``. Each record
  carries the *cumulative* state (terminated id ranges, aborted ids), so a reader needs one
  listing of ``writeids/``, one of ``events/`` and one small file. Because every terminal record
  goes through this chain, "first committer wins" is exact: a committer checks conflicts against
  every record after its own snapshot, and if someone slipped in first its create fails and it
  checks again.
* **Checkpoints** fold records and remove their files (:mod:`.logmaint`). So that a removed name
  is never claimed twice, every create is checked after it succeeds (:mod:`.log_append`).
* **Snapshot.** High watermark = the largest allocated id; allocated ids that are not terminated
  are *open*, and aborted ids are *aborted*; both are exceptions. Directories renamed into the
  table before the commit record exists therefore stay invisible, and so does anything a killed
  writer left behind. Ids that are not in the log (below the first allocated one, written by
  Hive) are committed.

Damage: a commit or abort record that cannot be read, or fails its checksum, is never taken as
"open" nor skipped: readers and writers stop with TransactionLogDamagedError naming the file, and
nobody aborts anything on its account. :mod:`.log_repair` rebuilds it.

Stale writers: a write id that shows no sign of life (allocation time, heartbeat) for longer than
its timeout is aborted by the next writer (:func:`abort_stale`), which also removes its staging
files and any directories it had begun to rename into the table. A compaction heartbeats every
``KEEPALIVE_EVERY_S`` while it runs, so its timeout is a few heartbeats
(``COMPACTION_TIMEOUT_S``): a killed compaction stops holding compaction and streams back soon.
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional, Sequence

from ..acid.layout import STAGING_DIR, staging_dir  # noqa: F401  (the log's callers use them)
from ..acid.log_records import (
    ABORTED,
    COMMITTED,
    LOG_DIR,
    OPEN,
    Cumulative,
    Intent,
    LogLayout,
    Terminal,
    encode,
)
from ..acid.logstate import (  # noqa: F401  (the log's reading side, re-exported)
    DEFAULT_TIMEOUT_S,
    UNREADABLE_RECORD_GRACE_S,
    LogState,
    history,
    load_state,
    read_allocation,
    read_body,
    read_events,
    read_snapshot,
)
from ..acid.snapshot import ValidIdList
from ..exceptions import AlreadyCommittedError, CommitConflictError, StorageError
from ..io.filesystem import FileSystem
from ..acid.partition_tree import walk_partitions
from ..write.in_place import remove_write_dirs
from ..write.staging import remove_staging
from .base import ONCE_PROPERTY, CommitOutcome, Transaction, WriteSet
from .conflicts import conflict, legacy_write_set, write_set_of_record
from .keepalive import KeepAliveThread, TaskHeartbeat
from .log_append import allocate, append
from .logmaint import roll_back_in_place
from .log_repair import repair_log  # noqa: F401  (part of the log's API)

log = logging.getLogger(__name__)
KEEPALIVE_EVERY_S = 60.0
#: The timeout of a compaction's write id: it heartbeats every KEEPALIVE_EVERY_S while it runs.
COMPACTION_TIMEOUT_S = 5 * KEEPALIVE_EVERY_S
COMPACTION_OPERATION = "compact"

__all__ = ["ABORTED", "COMMITTED", "OPEN", "LOG_DIR", "PathTransaction", "begin", "commit",
           "abort", "cleanup", "heartbeat", "record_intent", "abort_stale", "repair_log",
           "history", "load_state", "read_events", "read_snapshot", "max_write_id_in_dirs"]


@dataclass
class PathTransaction(Transaction):
    """An open write id of the path-mode log (picklable: it is its own handle)."""

    table_path: str
    write_id: int
    operation: str
    snapshot: Optional[ValidIdList]  # None: everything present was committed
    snapshot_seq: int
    timeout_s: float = DEFAULT_TIMEOUT_S
    started_at: float = field(default_factory=time.time)
    fs: Optional[FileSystem] = None

    @property
    def snapshot_string(self) -> str:
        """The ``validWriteIds`` option string that reads exactly this transaction's snapshot."""
        return self.read_snapshot()[0].to_string()

    def read_snapshot(self) -> tuple[ValidIdList, ValidIdList]:
        snap = self.snapshot or ValidIdList.of(self.write_id - 1)
        return snap, ValidIdList.all_valid()

    def _fs(self) -> FileSystem:
        if self.fs is None:
            raise StorageError(f"Write id {self.write_id} of {self.table_path} has no file system")
        return self.fs

    # -- staying alive ------------------------------------------------------------------------
    def beat(self) -> None:
        heartbeat(self._fs(), self.table_path, self.write_id)

    def abort_orphan(self, reason: str) -> None:
        self.abort(reason)

    @contextlib.contextmanager
    def keep_alive(self) -> Iterator[None]:
        keeper = KeepAliveThread(self, KEEPALIVE_EVERY_S,
                                 f"hiveacid-heartbeat-{self.write_id}").start()
        try:
            yield
        finally:
            keeper.stop()

    def handle(self) -> "PathTransaction":
        return self

    def resume(self) -> "PathTransaction":
        return self

    def task_heartbeat(self) -> TaskHeartbeat:
        return TaskHeartbeat(self, KEEPALIVE_EVERY_S)

    # -- committing ---------------------------------------------------------------------------
    def record_intent(self, dirs: Sequence[str]) -> None:
        record_intent(self._fs(), self.table_path, self.write_id, dirs)

    def commit(self, outcome: CommitOutcome, *, write_set: Optional[WriteSet] = None,
               properties: Optional[Mapping[str, str]] = None) -> None:
        commit(self._fs(), self, partitions=outcome.partitions, metrics=outcome.metrics,
               write_set=write_set, properties=properties)
        cleanup(self._fs(), self.table_path, self.write_id, published=False)

    def abort(self, reason: str = "") -> None:
        abort(self._fs(), self.table_path, self.write_id, reason)


# --- allocation ------------------------------------------------------------------------------------
def max_write_id_in_dirs(fs: FileSystem, table_path: str) -> int:
    """The largest write id named by any base/delta/delete_delta directory of the table."""
    return max((d.max_write_id for d in walk_partitions(fs, table_path).acid_dirs()), default=0)


def begin(fs: FileSystem, table_path: str, operation: str, *,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> PathTransaction:
    """Allocate a new write id and record it as open; also aborts stale open ids."""
    for d in LogLayout(fs, table_path).writer_dirs():
        fs.mkdirs(d)
    try:
        abort_stale(fs, table_path)
    except Exception as e:  # never let housekeeping fail a write
        log.warning("Could not abort stale transactions of %s: %s", table_path, e)
    if operation == COMPACTION_OPERATION:
        timeout_s = min(timeout_s, COMPACTION_TIMEOUT_S)
    rec, state = allocate(fs, table_path, operation, timeout_s,
                          lambda: max_write_id_in_dirs(fs, table_path))
    return PathTransaction(table_path, rec.write_id, operation, state.snapshot(), state.seq,
                           timeout_s, rec.started_at, fs)


def heartbeat(fs: FileSystem, table_path: str, write_id: int) -> None:
    """Tell other writers that W is alive (best effort, never raises)."""
    try:
        fs.write_bytes(LogLayout(fs, table_path).heartbeat(write_id),
                       repr(time.time()).encode("ascii"))
    except Exception as e:  # noqa: BLE001 - a missed heartbeat must not fail a task
        log.debug("Heartbeat of write id %d failed: %s", write_id, e)


def record_intent(fs: FileSystem, table_path: str, write_id: int, dirs: Sequence[str]) -> None:
    """Remember the table directories W is about to create, so an abort can remove them."""
    fs.write_bytes(LogLayout(fs, table_path).intent(write_id),
                   encode(Intent(write_id, tuple(dirs)).to_json()))


# --- terminal records ------------------------------------------------------------------------------
def commit(fs: FileSystem, txn: PathTransaction, *, partitions: Sequence[str] = (),
           dml_partitions: Sequence[str] = (), metrics: Optional[dict] = None,
           write_set: Optional[WriteSet] = None,
           properties: Optional[Mapping[str, str]] = None) -> int:
    """Commit W, unless a write W's snapshot did not see committed first and conflicts with it
    (``txn.conflicts``): then CommitConflictError, and W is aborted instead. ``write_set`` says
    what W changes (without it: read from the operation, ``partitions`` and ``dml_partitions``,
    the partitions where W deletes rows). ``properties`` go into the commit record; one named
    ``ONCE_PROPERTY`` makes the commit fail with AlreadyCommittedError (W aborted) when a record
    after W's snapshot carries the same value (the caller checks the records before it)."""
    table = txn.table_path
    ws = write_set or legacy_write_set(txn.operation, partitions, dml_partitions)
    once = (properties or {}).get(ONCE_PROPERTY)

    def check(newest_seq: int) -> None:
        for ev in read_events(fs, table, after_seq=txn.snapshot_seq):
            if ev.seq > newest_seq or not ev.committed:
                continue
            if once is not None and ev.properties.get(ONCE_PROPERTY) == once:
                raise AlreadyCommittedError(
                    f"Write id {ev.write_id} of {table} already committed {once}; write id "
                    f"{txn.write_id} is aborted instead")
            if txn.snapshot is not None and txn.snapshot.is_valid(ev.write_id):
                continue
            why = conflict(ws, txn.write_id, write_set_of_record(ev), ev.write_id)
            if why:
                raise CommitConflictError(
                    f"Write id {txn.write_id} ({txn.operation}) on {table} conflicts with write id "
                    f"{ev.write_id} ({ev.operation}), which committed first: {why}. "
                    "Nothing was written; run the operation again.")

    def make(seq: int, cum: Cumulative, nonce: str) -> Terminal:
        return Terminal(seq, txn.write_id, COMMITTED, time.time(), txn.operation,
                        tuple(sorted(set(partitions))), tuple(sorted(ws.deleted)),
                        dict(metrics or {}), ws.to_json(), dict(properties or {}), None, nonce,
                        cum)

    try:
        seq = append(fs, table, txn.write_id, COMMITTED, make, check)
    except CommitConflictError:
        abort(fs, txn.table_path, txn.write_id, "commit conflict")
        raise
    log.info("Committed write id %d (%s) on %s", txn.write_id, txn.operation, table)
    return seq


def abort(fs: FileSystem, table_path: str, write_id: int, reason: str = "") -> None:
    """Mark W aborted (idempotent) and remove what it staged or began to publish."""
    def make(seq: int, cum: Cumulative, nonce: str) -> Terminal:
        return Terminal(seq, write_id, ABORTED, time.time(), reason=reason, nonce=nonce,
                        cumulative=cum)

    try:
        append(fs, table_path, write_id, ABORTED, make)
    except CommitConflictError:
        log.warning("Write id %d of %s had already committed; not aborting", write_id, table_path)
        return
    cleanup(fs, table_path, write_id)
    log.info("Aborted write id %d on %s (%s)", write_id, table_path, reason)


def cleanup(fs: FileSystem, table_path: str, write_id: int, *, published: bool = True) -> None:
    """Delete W's staging directory and (for aborted ids) the table directories it created: those
    its intent names and, on a store that writes in place, every directory named for W (its tasks
    wrote there before any intent: ``write.in_place``)."""
    layout = LogLayout(fs, table_path)
    remove_staging(fs, table_path, write_id)
    body = read_body(fs, layout.intent(write_id))
    if published and body:
        for d in Intent.from_json(body).dirs:
            fs.delete(d, recursive=True)
    if published and fs.writes_in_place:
        remove_write_dirs(fs, table_path, write_id)
        roll_back_in_place(fs, table_path, write_id)  # a compaction's output written in place
    fs.delete(layout.intent(write_id))
    fs.delete(layout.heartbeat(write_id))


# --- stale writers ---------------------------------------------------------------------------------
def _last_sign_of_life(fs: FileSystem, table_path: str, w: int) -> tuple[float, float]:
    """(last sign of life, timeout) of W, waiting briefly for a record that is being written."""
    deadline = time.time() + UNREADABLE_RECORD_GRACE_S
    rec = read_allocation(fs, table_path, w)
    while rec is None and time.time() < deadline:
        time.sleep(0.01)
        rec = read_allocation(fs, table_path, w)
    if rec is None:  # its allocator died between creating and writing the record
        return 0.0, 0.0
    last = rec.started_at
    try:
        last = max(last, float(fs.read_bytes(LogLayout(fs, table_path).heartbeat(w))))
    except (StorageError, ValueError, OSError):
        pass
    return last, rec.timeout_s


def abort_stale(fs: FileSystem, table_path: str, now: Optional[float] = None,
                timeout_s: Optional[float] = None) -> list[int]:
    """Abort open write ids whose writer showed no sign of life for longer than its timeout
    (``timeout_s`` overrides each id's own). Returns the aborted ids."""
    state = load_state(fs, table_path)
    if state is None:
        return []
    now = time.time() if now is None else now
    out = []
    for w in state.open_ids:
        last, timeout = _last_sign_of_life(fs, table_path, w)
        if now - last > (timeout if timeout_s is None else timeout_s):
            log.warning("Aborting stale write id %d of %s (idle %.0f s)", w, table_path, now - last)
            abort(fs, table_path, w, "stale: writer idle longer than its timeout")
            out.append(w)
    return out
