"""A path-mode transaction log: write ids, commit order and snapshots without a metastore.

Layout (a hidden directory at the table root, ignored by Hive, Trino and our reader)::

    _hiveacid_txnlog/
      writeids/<W:019d>.json     allocation of write id W (created exclusively), states "open"
      events/<seq:019d>.json     terminal records (committed / aborted) in one total order
      heartbeats/<W:019d>        last sign of life of W's writer (overwritten, best effort)
      intents/<W:019d>.json      table directories W's commit is about to create (for cleanup)

The only atomic primitive used is :meth:`FileSystem.create_exclusive`:

* **Allocation.** ``W = 1 + max(ids in writeids/)``; the first allocation on a table also scans the
  ``base_*/delta_*`` names already there, so tables Hive wrote can be appended to. Two writers that
  pick the same W race on ``writeids/W.json``; the loser tries ``W+1``.
* **Commit / abort.** A writer reads the latest event ``n`` and exclusively creates ``n+1``. Each
  event carries the *cumulative* state (terminated id ranges, aborted ids), so a reader needs one
  listing of ``writeids/``, one of ``events/`` and one small file. Because all terminal records go
  through this chain, "first committer wins" is exact: a committer checks conflicts against every
  event after its own snapshot, and if someone slipped in first its exclusive create fails and it
  checks again.
* **Snapshot.** High watermark = the largest allocated id; allocated ids that are not terminated are
  *open*, and aborted ids are *aborted*; both are exceptions. Directories renamed into the table
  before the commit record exists therefore stay invisible, and so does anything a killed writer
  left behind. Ids that are not in the log (below the first allocated one, written by Hive) are
  committed.

Damage: every record carries a checksum (:func:`~spark_hive_acid.acid.logstate.encode_record`). A
commit or abort record that cannot be read, or fails its checksum, is never taken as "open" nor
skipped: readers and writers stop with TransactionLogDamagedError naming the file, and nobody
aborts anything on its account. :func:`repair_log` rebuilds it (from the records after it, or from
what the user says the write was), or the file is restored from a backup.

Stale writers: a write id that shows no sign of life (allocation time, heartbeat) for longer than its
timeout is aborted by the next writer (:func:`abort_stale`), which also removes its staging files and
any directories it had begun to rename into the table.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional, Sequence

from ..acid.layout import STAGING_DIR, staging_dir  # noqa: F401  (the log's callers use them)
from ..acid.snapshot import ValidIdList
from ..exceptions import (
    AlreadyCommittedError,
    CommitConflictError,
    InvalidOptionError,
    StorageError,
    TransactionLogDamagedError,
)
from ..io.filesystem import FileSystem
from ..read.listing import walk_partitions
from .base import ONCE_PROPERTY, CommitOutcome, Transaction, WriteSet
from .conflicts import conflict, legacy_write_set, write_set_of_record
from ..write.staging import remove_staging
from .keepalive import KeepAliveThread, TaskHeartbeat
from ..acid.logstate import (  # noqa: F401  (the log's reading side, re-exported)
    ABORTED,
    COMMITTED,
    DEFAULT_TIMEOUT_S,
    LOG_DIR,
    OPEN,
    UNREADABLE_RECORD_GRACE_S,
    _EVENTS,
    _HEARTBEATS,
    _INTENTS,
    _MAX_RETRIES,
    _WRITEIDS,
    LogState,
    _latest_event,
    _merge_ranges,
    _numbered,
    _read_json,
    encode_record,
    read_event,
    _sub,
    history,
    load_state,
    log_dir,
    read_events,
    read_snapshot,
)

log = logging.getLogger(__name__)
KEEPALIVE_EVERY_S = 60.0


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


Transaction = PathTransaction  # noqa: F811  (the log's own name for it, in tests and tools)


# --- allocation ------------------------------------------------------------------------------------
def max_write_id_in_dirs(fs: FileSystem, table_path: str) -> int:
    """The largest write id named by any base/delta/delete_delta directory of the table."""
    return max((d.max_write_id for d in walk_partitions(fs, table_path).acid_dirs()), default=0)


def begin(fs: FileSystem, table_path: str, operation: str, *,
          timeout_s: float = DEFAULT_TIMEOUT_S) -> PathTransaction:
    """Allocate a new write id and record it as open; also aborts stale open ids."""
    for kind in (_WRITEIDS, _EVENTS, _HEARTBEATS, _INTENTS):
        fs.mkdirs(_sub(fs, table_path, kind))
    try:
        abort_stale(fs, table_path)
    except Exception as e:  # never let housekeeping fail a write
        log.warning("Could not abort stale transactions of %s: %s", table_path, e)
    state = load_state(fs, table_path) or LogState()
    candidate = state.high_watermark + 1
    if not state.allocated:
        candidate = max(candidate, max_write_id_in_dirs(fs, table_path) + 1)
    record = {"operation": operation, "startedAt": time.time(), "timeoutSeconds": timeout_s,
              "host": socket.gethostname(), "pid": os.getpid(), "snapshotSeq": state.seq}
    for _ in range(_MAX_RETRIES):
        record["writeId"] = candidate
        path = _sub(fs, table_path, _WRITEIDS, f"{candidate:019d}.json")
        if fs.create_exclusive(path, encode_record(record)):
            log.info("Allocated write id %d (%s) on %s", candidate, operation, table_path)
            return PathTransaction(table_path, candidate, operation, state.snapshot(), state.seq,
                                   timeout_s, record["startedAt"], fs)
        candidate += 1
    raise StorageError(f"Could not allocate a write id in {log_dir(fs, table_path)}")


def heartbeat(fs: FileSystem, table_path: str, write_id: int) -> None:
    """Tell other writers that W is alive (best effort, never raises)."""
    try:
        fs.write_bytes(_sub(fs, table_path, _HEARTBEATS, f"{write_id:019d}"),
                       repr(time.time()).encode("ascii"))
    except Exception as e:  # noqa: BLE001 - a missed heartbeat must not fail a task
        log.debug("Heartbeat of write id %d failed: %s", write_id, e)


def record_intent(fs: FileSystem, table_path: str, write_id: int, dirs: Sequence[str]) -> None:
    """Remember the table directories W is about to create, so an abort can remove them."""
    fs.write_bytes(_sub(fs, table_path, _INTENTS, f"{write_id:019d}.json"),
                   encode_record({"writeId": write_id, "dirs": list(dirs)}))


# --- terminal records ------------------------------------------------------------------------------
def _append_event(fs: FileSystem, table_path: str, write_id: int, state_name: str,
                  payload: dict, check=None) -> int:
    """Append a terminal record for W to the event chain; returns its seq.

    ``check(events_since_snapshot)`` runs before every attempt and may raise to refuse the record.
    Raises CommitConflictError if W already has a terminal record of the other kind.
    """
    for _ in range(_MAX_RETRIES):
        seqs = _numbered(fs, _sub(fs, table_path, _EVENTS), ".json")
        seq, ev = _latest_event(fs, table_path, seqs)  # a damaged newest record raises
        nxt = seq + 1
        cum = ev["cumulative"] if ev else {"terminated": [], "aborted": []}
        terminated = _merge_ranges(tuple(r) for r in cum["terminated"])
        aborted = set(int(a) for a in cum["aborted"])
        if any(lo <= write_id <= hi for lo, hi in terminated):
            was = ABORTED if write_id in aborted else COMMITTED
            if was == state_name:
                return seq
            raise CommitConflictError(
                f"Write id {write_id} of {table_path} was already {was} "
                + ("(its writer was idle longer than its timeout and another writer aborted it); "
                   "nothing was committed, run the job again" if was == ABORTED else
                   "and cannot be aborted now"))
        if check is not None:
            check(seq)
        if state_name == ABORTED:
            aborted.add(write_id)
        record = dict(payload, seq=nxt, writeId=write_id, state=state_name, time=time.time(),
                      cumulative={"terminated": [list(r) for r in
                                                 _merge_ranges(terminated + ((write_id, write_id),))],
                                  "aborted": sorted(aborted)})
        path = _sub(fs, table_path, _EVENTS, f"{nxt:019d}.json")
        if fs.create_exclusive(path, encode_record(record)):
            return nxt
    raise StorageError(f"Could not append to the transaction log of {table_path}")


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

    def check(latest_seq: int) -> None:
        for ev in read_events(fs, table, after_seq=txn.snapshot_seq):
            if ev["seq"] > latest_seq or ev.get("state") != COMMITTED:
                continue
            if once is not None and (ev.get("properties") or {}).get(ONCE_PROPERTY) == once:
                raise AlreadyCommittedError(
                    f"Write id {ev['writeId']} of {table} already committed {once}; write id "
                    f"{txn.write_id} is aborted instead")
            if txn.snapshot is not None and txn.snapshot.is_valid(ev["writeId"]):
                continue
            why = conflict(ws, txn.write_id, write_set_of_record(ev), ev["writeId"])
            if why:
                raise CommitConflictError(
                    f"Write id {txn.write_id} ({txn.operation}) on {table} conflicts with write id "
                    f"{ev['writeId']} ({ev.get('operation')}), which committed first: {why}. "
                    "Nothing was written; run the operation again.")

    payload = {"operation": txn.operation, "partitions": sorted(set(partitions)),
               "dmlPartitions": sorted(ws.deleted), "metrics": metrics or {},
               "writeSet": ws.to_json()}
    if properties:
        payload["properties"] = dict(properties)
    try:
        seq = _append_event(fs, table, txn.write_id, COMMITTED, payload, check)
    except CommitConflictError:
        abort(fs, txn.table_path, txn.write_id, "commit conflict")
        raise
    log.info("Committed write id %d (%s) on %s", txn.write_id, txn.operation, table)
    return seq


def abort(fs: FileSystem, table_path: str, write_id: int, reason: str = "") -> None:
    """Mark W aborted (idempotent) and remove what it staged or began to publish."""
    try:
        _append_event(fs, table_path, write_id, ABORTED, {"reason": reason})
    except CommitConflictError:
        log.warning("Write id %d of %s had already committed; not aborting", write_id, table_path)
        return
    cleanup(fs, table_path, write_id)
    log.info("Aborted write id %d on %s (%s)", write_id, table_path, reason)


def cleanup(fs: FileSystem, table_path: str, write_id: int, *, published: bool = True) -> None:
    """Delete W's staging directory and (for aborted ids) the table directories it created."""
    remove_staging(fs, table_path, write_id)
    intent = _sub(fs, table_path, _INTENTS, f"{write_id:019d}.json")
    rec = _read_json(fs, intent)
    if published and rec:
        for d in rec.get("dirs", []):
            fs.delete(d, recursive=True)
    fs.delete(intent)
    fs.delete(_sub(fs, table_path, _HEARTBEATS, f"{write_id:019d}"))


def repair_log(fs: FileSystem, table_path: str, write_id: Optional[int] = None,
               state: Optional[str] = None) -> Optional[int]:
    """Rewrite the damaged record of the event chain, if there is one; returns its seq (None when
    nothing was damaged).

    Each record carries the cumulative state, so a damaged record followed by a readable one is
    rebuilt exactly: its write id is the one the later records terminate and the earlier ones do
    not. The newest record has no such witness: then ``write_id`` and ``state`` (``"committed"`` or
    ``"aborted"``) must say what it recorded (InvalidOptionError lists the candidates: the write
    ids that are allocated and not terminated before it).
    """
    seqs = _numbered(fs, _sub(fs, table_path, _EVENTS), ".json")
    damaged = []
    for seq in seqs:
        try:
            read_event(fs, table_path, seq)
        except TransactionLogDamagedError:
            damaged.append(seq)
    if not damaged:
        return None
    seq = damaged[0]
    if len(damaged) > 1 and damaged[1] == seq + 1:
        raise InvalidOptionError(
            f"Transaction log records {damaged} of {table_path} are damaged one after another: "
            "restore them from a backup (each needs the next one to be rebuilt)")
    before = read_event(fs, table_path, seq - 1) if seq > 1 else None
    prev_terminated = _merge_ranges(tuple(r) for r in (before or {}).get(
        "cumulative", {}).get("terminated", []))
    prev_aborted = set(int(a) for a in (before or {}).get("cumulative", {}).get("aborted", []))
    if seq != seqs[-1]:
        after = read_event(fs, table_path, seq + 1)
        cum = after["cumulative"]
        after_terminated = _merge_ranges(tuple(r) for r in cum["terminated"])
        ids = [w for lo, hi in after_terminated for w in range(lo, hi + 1)
               if w != after["writeId"] and not any(a <= w <= b for a, b in prev_terminated)]
        if len(ids) != 1:
            raise InvalidOptionError(
                f"Cannot rebuild transaction log record {seq} of {table_path} from the records "
                f"around it (candidates {ids}); restore it from a backup")
        write_id, state = ids[0], ABORTED if ids[0] in cum["aborted"] else COMMITTED
    elif write_id is None or state not in (COMMITTED, ABORTED):
        allocated = _numbered(fs, _sub(fs, table_path, _WRITEIDS), ".json")
        open_ids = [w for w in allocated if not any(a <= w <= b for a, b in prev_terminated)]
        raise InvalidOptionError(
            f"Transaction log record {seq} of {table_path} is the newest and damaged: nothing "
            f"says which write it ended or how. Say it: write_id= one of {open_ids} (allocated, "
            "not ended before it) and state='committed' or 'aborted' (if its directories are in "
            "the table and its job reported success, it committed)")
    aborted = prev_aborted | ({write_id} if state == ABORTED else set())
    record = {"seq": seq, "writeId": write_id, "state": state, "time": time.time(),
              "reason": "rebuilt by repair_log", "operation": None, "partitions": [],
              "dmlPartitions": [], "metrics": {},
              "cumulative": {"terminated": [list(r) for r in
                                            _merge_ranges(prev_terminated + ((write_id, write_id),))],
                             "aborted": sorted(aborted)}}
    path = _sub(fs, table_path, _EVENTS, f"{seq:019d}.json")
    fs.delete(path)
    if not fs.create_exclusive(path, encode_record(record)):
        raise StorageError(f"Could not rewrite {path}")
    log.warning("Rebuilt transaction log record %s: write id %d %s", path, write_id, state)
    return seq


def _last_sign_of_life(fs: FileSystem, table_path: str, w: int) -> tuple[float, float]:
    """(last sign of life, timeout) of W, waiting briefly for a record that is being written."""
    path = _sub(fs, table_path, _WRITEIDS, f"{w:019d}.json")
    deadline = time.time() + UNREADABLE_RECORD_GRACE_S
    rec = _read_json(fs, path)
    while rec is None and time.time() < deadline:
        time.sleep(0.01)
        rec = _read_json(fs, path)
    if rec is None:  # its allocator died between creating and writing the record
        return 0.0, 0.0
    last = float(rec.get("startedAt", 0.0))
    timeout = float(rec.get("timeoutSeconds", DEFAULT_TIMEOUT_S))
    try:
        last = max(last, float(fs.read_bytes(_sub(fs, table_path, _HEARTBEATS, f"{w:019d}"))))
    except (StorageError, ValueError, OSError):
        pass
    return last, timeout


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
