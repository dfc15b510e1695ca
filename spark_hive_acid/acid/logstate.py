"""Reading the path-mode transaction log: its state, snapshots, records and history.

The records and their layout are in :mod:`.log_records`; :mod:`spark_hive_acid.txn.pathlog`
writes them and states the protocol. What a reader relies on (docs/writing.md, "The log's
invariants"):

* the record file with the highest sequence number is always a real record, never removed while
  it is the highest: the newest file alone gives the log's state (its ``cumulative`` field);
* a checkpoint folds records before their files go, and checkpoint numbers only grow: a complete
  read of the chain is the newest checkpoint ``c`` plus the files after ``c``, taken while ``c``
  stayed the newest checkpoint (:func:`read_events` checks it again after listing, and reads
  again when a checkpoint came in between). Files at or below ``c`` are ignored: they are folded,
  or void (a writer's create that reused a folded name, which that writer removes).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

from ..exceptions import PathNotFoundError, StorageError, TransactionLogDamagedError
from ..io.filesystem import FileSystem
from .log_records import (
    ABORTED,
    COMMITTED,
    INSTALL_DONE_SUFFIX,
    INSTALL_SUFFIX,
    OPEN,
    Allocation,
    Checkpoint,
    Cumulative,
    Install,
    InstallDone,
    LogLayout,
    Terminal,
    decode,
)
from .snapshot import ValidIdList

log = logging.getLogger(__name__)

__all__ = [
    "ABORTED", "COMMITTED", "OPEN", "DEFAULT_TIMEOUT_S", "EVENT_WRITE_GRACE_S",
    "UNREADABLE_RECORD_GRACE_S", "LogState", "load_state", "read_snapshot", "read_event",
    "read_events", "events_newest_first", "latest_checkpoint", "latest_checkpoint_seq",
    "state_after", "history", "read_allocation", "install_names", "read_install",
    "read_install_done", "installs_in_progress",
]

DEFAULT_TIMEOUT_S = 3600.0
#: How long a reader waits for the newest record to become readable before calling it damaged: on
#: file systems where a new file is visible before its content (HDFS), a commit being written.
EVENT_WRITE_GRACE_S = 5.0
#: An allocation record still unreadable after this long belongs to a writer that died at once.
UNREADABLE_RECORD_GRACE_S = 5.0
#: Reads of the whole chain retried while checkpoints keep folding records under them.
_CONSISTENT_READ_RETRIES = 50


# --- state ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LogState:
    """What the log says at one point of its chain of records."""

    allocated: frozenset[int] = frozenset()  # write ids with an allocation record
    seq: int = 0  # the record the terminal states come from (0: none yet)
    cumulative: Cumulative = Cumulative()

    @property
    def high_watermark(self) -> int:
        return max(self.allocated, default=0)

    def is_terminated(self, w: int) -> bool:
        return self.cumulative.state_of(w) is not None

    def state_of(self, w: int) -> str:
        """COMMITTED, ABORTED or OPEN. Ids the log never allocated (below its first one: written
        by Hive) and ids whose allocation record a checkpoint folded are terminated."""
        ended = self.cumulative.state_of(w)
        if ended is not None:
            return ended
        return OPEN if w in self.allocated else COMMITTED

    @property
    def open_ids(self) -> list[int]:
        return sorted(w for w in self.allocated if not self.is_terminated(w))

    @property
    def aborted(self) -> frozenset[int]:
        return self.cumulative.aborted

    def snapshot(self, table_name: str = "") -> Optional[ValidIdList]:
        if not self.allocated:
            return None
        hwm = self.high_watermark
        return ValidIdList.of(hwm, self.open_ids, sorted(w for w in self.aborted if w <= hwm),
                              table_name=table_name)


# --- single records -------------------------------------------------------------------------------
def read_body(fs: FileSystem, path: str) -> Optional[dict]:
    """A record that may be missing or damaged without consequence (heartbeats, intents,
    allocation records read for display); None then."""
    try:
        return decode(fs.read_bytes(path))
    except (ValueError, StorageError):
        return None


def read_allocation(fs: FileSystem, table_path: str, write_id: int) -> Optional[Allocation]:
    body = read_body(fs, LogLayout(fs, table_path).allocation(write_id))
    try:
        return None if body is None else Allocation.from_json(body, write_id)
    except (ValueError, TypeError):
        return None


def read_event(fs: FileSystem, table_path: str, seq: int, wait_s: float = 0.0) -> Terminal:
    """Record ``seq`` of the chain; TransactionLogDamagedError when it cannot be read within
    ``wait_s`` seconds (the newest record may still be being written)."""
    path = LogLayout(fs, table_path).event(seq)
    deadline = time.time() + wait_s
    while True:
        try:
            ev = Terminal.from_json(decode(fs.read_bytes(path)), need_cumulative=True)
            if ev.seq != seq:
                raise ValueError(f"it says it is record {ev.seq}")
            return ev
        except (ValueError, TypeError, StorageError) as e:
            problem = str(e)
        if time.time() >= deadline:
            break
        time.sleep(0.05)
    raise TransactionLogDamagedError(
        f"Transaction log record {path} of {table_path} is damaged: {problem}. It records the "
        "commit or abort of one write, so the table's snapshot cannot be known without it; "
        "nothing was read or written. Restore the file from a backup or a file-system snapshot, "
        "or repair the log with spark_hive_acid.txn.pathlog.repair_log(fs, table_path) "
        "(HiveAcidTable.repairTransactionLog()), which rebuilds the record from the ones after it "
        "or, when it is the newest, from the write id and state you tell it.")


def _read_unless_folded(fs: FileSystem, table_path: str, seq: int, checkpoint_seq: int,
                        wait_s: float) -> Optional[Terminal]:
    """Record ``seq``, or None when a checkpoint newer than ``checkpoint_seq`` appeared meanwhile
    (it may have folded the file away). Waits ``wait_s`` for a record being written only when
    no checkpoint explains a failed read."""
    for wait in (0.0, wait_s):
        try:
            return read_event(fs, table_path, seq, wait)
        except TransactionLogDamagedError:
            if latest_checkpoint_seq(fs, table_path) != checkpoint_seq:
                return None
            if wait_s <= 0 or wait:
                raise
    raise AssertionError("unreachable")


def newest_event(fs: FileSystem, table_path: str) -> Optional[Terminal]:
    """The newest record (waiting for one being written); None when there is none yet."""
    layout = LogLayout(fs, table_path)
    for _ in range(_CONSISTENT_READ_RETRIES):
        c = latest_checkpoint_seq(fs, table_path)
        seqs = layout.numbered(layout.events_dir)
        if not seqs:
            return None
        ev = _read_unless_folded(fs, table_path, seqs[-1], c, EVENT_WRITE_GRACE_S)
        if ev is not None:
            return ev
    raise StorageError(f"Could not read the newest record of the log of {table_path}: "
                       "checkpoints kept folding records while it was read; try again")


def load_state(fs: FileSystem, table_path: str) -> Optional[LogState]:
    """The log's current state, or None when the table has no transaction log. The allocation
    records are listed before the newest record is read: an id allocated after that listing is
    above every listed one, so it is outside the snapshot rather than mistaken for committed."""
    layout = LogLayout(fs, table_path)
    if not layout.exists():
        return None
    allocated = frozenset(layout.numbered(layout.writeids_dir))
    ev = newest_event(fs, table_path)
    if ev is None or ev.cumulative is None:
        return LogState(allocated=allocated)
    return LogState(allocated=allocated, seq=ev.seq, cumulative=ev.cumulative)


def read_snapshot(fs: FileSystem, table_path: str) -> Optional[ValidIdList]:
    """The committed snapshot of a path-mode table: open (uncommitted) and aborted write ids are
    exceptions. None when the table has no log, i.e. everything present is committed."""
    state = load_state(fs, table_path)
    return None if state is None else state.snapshot()


# --- checkpoints and the whole chain ---------------------------------------------------------------
def latest_checkpoint_seq(fs: FileSystem, table_path: str) -> int:
    """The sequence number of the newest checkpoint (0: none), from one listing."""
    layout = LogLayout(fs, table_path)
    seqs = layout.numbered(layout.checkpoints_dir)
    return seqs[-1] if seqs else 0


def _read_checkpoint(fs: FileSystem, table_path: str, seq: int) -> Optional[Checkpoint]:
    """Checkpoint ``seq``; None when it is gone (a newer one replaced it). A checkpoint is created
    whole, so one that does not parse is damaged: TransactionLogDamagedError."""
    path = LogLayout(fs, table_path).checkpoint(seq)
    try:
        data = fs.read_bytes(path)
    except StorageError:
        return None
    try:
        return Checkpoint.from_json(decode(data))
    except (ValueError, TypeError) as e:
        raise TransactionLogDamagedError(
            f"Transaction log checkpoint {path} of {table_path} is damaged: {e}. It holds the "
            "commit records folded into it; restore it from a backup.") from None


def latest_checkpoint(fs: FileSystem, table_path: str) -> Optional[Checkpoint]:
    """The newest checkpoint, or None."""
    for _ in range(_CONSISTENT_READ_RETRIES):
        seq = latest_checkpoint_seq(fs, table_path)
        if not seq:
            return None
        cp = _read_checkpoint(fs, table_path, seq)
        if cp is not None:
            return cp
    raise StorageError(f"Could not read the newest log checkpoint of {table_path}: checkpoints "
                       "kept being replaced while it was read")


def _gap_error(table_path: str, seqs: Sequence[int], first: int) -> TransactionLogDamagedError:
    expected = set(range(first, (seqs[-1] if seqs else first - 1) + 1))
    missing = sorted(expected - set(seqs))
    return TransactionLogDamagedError(
        f"Transaction log of {table_path} misses record(s) {missing[:10]}: a record file was "
        "removed by hand or by a tool that does not know the log. Restore it from a backup.")


def read_events(fs: FileSystem, table_path: str, after_seq: int = 0) -> list[Terminal]:
    """Every record with seq > ``after_seq``, in commit order (a damaged one raises
    TransactionLogDamagedError: the caller would otherwise decide on a guess). Records folded
    into the newest checkpoint come from it, without their ``cumulative`` field."""
    layout = LogLayout(fs, table_path)
    for _ in range(_CONSISTENT_READ_RETRIES):
        c = latest_checkpoint_seq(fs, table_path)
        cp = _read_checkpoint(fs, table_path, c) if c > after_seq else None
        if c > after_seq and cp is None:
            continue  # replaced while we looked
        first = max(c, after_seq) + 1
        seqs = [s for s in layout.numbered(layout.events_dir) if s >= first]
        files = []
        for s in seqs:
            ev = _read_unless_folded(fs, table_path, s, c,
                                     EVENT_WRITE_GRACE_S if s == seqs[-1] else 0.0)
            if ev is None:
                break
            files.append(ev)
        if len(files) < len(seqs) or latest_checkpoint_seq(fs, table_path) != c:
            continue  # a checkpoint folded records meanwhile: the listing may miss some
        if seqs != list(range(first, first + len(seqs))):
            raise _gap_error(table_path, seqs, first)
        folded = [e for e in cp.events if e.seq > after_seq] if cp is not None else []
        return folded + files
    raise StorageError(f"Could not read the transaction log of {table_path} consistently: "
                       "checkpoints kept folding records while it was read; try again")


def events_newest_first(fs: FileSystem, table_path: str) -> Iterator[Terminal]:
    """The records newest first, read one at a time, for a caller that stops at the newest record
    of some kind: the record files, then those folded into the newest checkpoint. If a checkpoint
    folds files away meanwhile, the rest comes from :func:`read_events`."""
    layout = LogLayout(fs, table_path)
    c = latest_checkpoint_seq(fs, table_path)
    seqs = [q for q in layout.numbered(layout.events_dir) if q > c]
    oldest_yielded: Optional[int] = None
    complete = True
    for i, seq in enumerate(reversed(seqs)):
        ev = _read_unless_folded(fs, table_path, seq, c, EVENT_WRITE_GRACE_S if i == 0 else 0.0)
        if ev is None:
            complete = False
            break
        oldest_yielded = seq
        yield ev
    if complete and latest_checkpoint_seq(fs, table_path) == c:  # the listing was complete
        if seqs != list(range(c + 1, c + 1 + len(seqs))):
            raise _gap_error(table_path, seqs, c + 1)
        cp = _read_checkpoint(fs, table_path, c) if c else None
        if not c or cp is not None:
            yield from reversed(cp.events if cp is not None else ())
            return
    for ev in reversed(read_events(fs, table_path)):  # a checkpoint came in between
        if oldest_yielded is None or ev.seq < oldest_yielded:
            yield ev


def state_after(events: Sequence[Terminal], seq: int, first_write_id: int) -> LogState:
    """The log's state right after record ``seq`` of the complete chain ``events``: the write ids
    terminated by then; ids from ``first_write_id`` (the log's first) up to the highest of them
    that were not terminated yet were open (allocations are handed out in order)."""
    cum = Cumulative()
    for ev in events:
        if ev.seq > seq:
            break
        cum = cum.with_record(ev.write_id, ev.state)
    top = max((hi for _, hi in cum.terminated), default=0)
    return LogState(allocated=frozenset(range(min(first_write_id, top), top + 1)) if top else
                    frozenset(), seq=seq, cumulative=cum)


def first_write_id(state: LogState, events: Sequence[Terminal]) -> int:
    """The first write id this log allocated (ids below it were written by Hive before)."""
    ids = [min(state.allocated)] if state.allocated else []
    ids += [lo for lo, _ in state.cumulative.terminated[:1]]
    ids += [ev.write_id for ev in events[:1]]
    return min(ids, default=1)


def history(fs: FileSystem, table_path: str) -> list[dict]:
    """One entry per write id in the log (newest first): state, operation, partitions, metrics."""
    state = load_state(fs, table_path)
    if state is None:
        return []
    events = read_events(fs, table_path)
    cp = latest_checkpoint(fs, table_path)
    folded = dict(cp.allocations) if cp is not None else {}
    by_id: dict[int, dict] = {}
    for w in state.allocated | folded.keys():
        rec = folded.get(w) or read_allocation(fs, table_path, w)
        by_id[w] = {"writeId": w, "state": state.state_of(w),
                    "operation": rec.operation if rec else None,
                    "startedAt": rec.started_at if rec else None, "finishedAt": None,
                    "partitions": [], "metrics": {}, "reason": None}
    for ev in events:
        if ev.seq > state.seq:
            continue
        entry = by_id.setdefault(ev.write_id, {"writeId": ev.write_id})
        entry.setdefault("state", ev.state)
        entry.update({"finishedAt": ev.time, "partitions": list(ev.partitions),
                      "metrics": dict(ev.metrics), "reason": ev.reason,
                      "operation": ev.operation or entry.get("operation")})
    return sorted(by_id.values(), key=lambda e: -e["writeId"])


# --- compaction installs ---------------------------------------------------------------------------
def install_names(fs: FileSystem, table_path: str) -> frozenset[str]:
    """The names in ``installs/`` (one listing; empty when there is none)."""
    try:
        return frozenset(c.name for c in fs.list_dir(LogLayout(fs, table_path).installs_dir))
    except (PathNotFoundError, StorageError):
        return frozenset()


def read_install(fs: FileSystem, table_path: str, write_id: int) -> Optional[Install]:
    body = read_body(fs, LogLayout(fs, table_path).install(write_id))
    try:
        return None if body is None else Install.from_json(body)
    except (ValueError, TypeError):
        return None


def read_install_done(fs: FileSystem, table_path: str, write_id: int) -> Optional[InstallDone]:
    body = read_body(fs, LogLayout(fs, table_path).install_done(write_id))
    try:
        return None if body is None else InstallDone.from_json(body)
    except (ValueError, TypeError):
        return None


def _install_ids(names: frozenset[str], suffix: str) -> set[int]:
    return {int(n[: -len(suffix)]) for n in names
            if n.endswith(suffix) and n[: -len(suffix)].isdigit()}


def installs_in_progress(fs: FileSystem, table_path: str, names: frozenset[str]
                         ) -> dict[int, Install]:
    """``{W: install}`` of the installs named in ``names`` that have no ``.done`` yet (one that
    cannot be read yet is being written: its renames have not started)."""
    started = _install_ids(names, INSTALL_SUFFIX) - _install_ids(names, INSTALL_DONE_SUFFIX)
    return {w: read_install(fs, table_path, w) or Install(w, 0.0, ()) for w in sorted(started)}


def installs_done(fs: FileSystem, table_path: str, names: frozenset[str]
                  ) -> dict[int, tuple[Install, Optional[InstallDone]]]:
    """``{W: (install, its done record)}`` of the finished installs named in ``names``."""
    done = _install_ids(names, INSTALL_SUFFIX) & _install_ids(names, INSTALL_DONE_SUFFIX)
    out = {}
    for w in sorted(done):
        rec = read_install(fs, table_path, w)
        if rec is not None:
            out[w] = (rec, read_install_done(fs, table_path, w))
    return out
