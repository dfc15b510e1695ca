"""Reading the path-mode transaction log: its state, snapshots, events and history.

The log is this library's own on-disk record of a path-mode table's write ids (a hidden
``_hiveacid_txnlog`` directory that Hive, Trino and Impala ignore). Readers take their snapshot
from it; :mod:`spark_hive_acid.txn.pathlog`, which writes it, describes its layout and protocol.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Sequence

from .snapshot import ValidIdList
from ..exceptions import PathNotFoundError, StorageError, TransactionLogDamagedError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

LOG_DIR = "_hiveacid_txnlog"
_WRITEIDS, _EVENTS, _HEARTBEATS, _INTENTS = "writeids", "events", "heartbeats", "intents"

COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"
DEFAULT_TIMEOUT_S = 3600.0
#: How long a reader waits for the newest event to become readable before calling it damaged: on
#: file systems where a new file is visible before its content (HDFS), a commit being written.
EVENT_WRITE_GRACE_S = 5.0
#: An allocation record still unreadable after this long belongs to a writer that died at once.
UNREADABLE_RECORD_GRACE_S = 5.0
CHECKSUM = "checksum"
_MAX_RETRIES = 10_000


# --- state ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LogState:
    """What the log says at one point of its event chain."""

    allocated: frozenset[int] = frozenset()
    seq: int = 0  # the event the terminal states come from (0: none yet)
    terminated: tuple[tuple[int, int], ...] = ()  # sorted, merged inclusive ranges
    aborted: frozenset[int] = frozenset()

    @property
    def high_watermark(self) -> int:
        return max(self.allocated, default=0)

    def is_terminated(self, w: int) -> bool:
        return any(lo <= w <= hi for lo, hi in self.terminated)

    def state_of(self, w: int) -> str:
        if w in self.aborted:
            return ABORTED
        if self.is_terminated(w):
            return COMMITTED
        return OPEN if w in self.allocated else COMMITTED

    @property
    def open_ids(self) -> list[int]:
        return sorted(w for w in self.allocated if not self.is_terminated(w))

    def snapshot(self, table_name: str = "") -> Optional[ValidIdList]:
        if not self.allocated:
            return None
        return ValidIdList.of(self.high_watermark, self.open_ids,
                              sorted(w for w in self.aborted if w <= self.high_watermark),
                              table_name=table_name)


def _merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


# --- paths ---------------------------------------------------------------------------------------
def log_dir(fs: FileSystem, table_path: str) -> str:
    return fs.join(table_path, LOG_DIR)


def _sub(fs: FileSystem, table_path: str, kind: str, name: str = "") -> str:
    base = fs.join(log_dir(fs, table_path), kind)
    return fs.join(base, name) if name else base


def _numbered(fs: FileSystem, path: str, suffix: str) -> list[int]:
    try:
        children = fs.list_dir(path)
    except PathNotFoundError:
        return []
    out = []
    for c in children:
        stem = c.name[: -len(suffix)] if suffix and c.name.endswith(suffix) else c.name
        if stem.isdigit() and (not suffix or c.name.endswith(suffix)):
            out.append(int(stem))
    return sorted(out)


# --- records -------------------------------------------------------------------------------------
def encode_record(record: dict) -> bytes:
    """A log record as stored: JSON with a SHA-256 checksum of its canonical form, so damage is
    detected rather than guessed."""
    body = {k: v for k, v in record.items() if k != CHECKSUM}
    return json.dumps({**body, CHECKSUM: _checksum(body)}).encode("utf-8")


def _checksum(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def decode_record(data: bytes) -> dict:
    """The record stored in ``data``; ValueError (saying what is wrong) when it is damaged.
    Records written before checksums existed are accepted when they parse."""
    if not data:
        raise ValueError("it is empty")
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"it is not valid JSON ({e})") from None
    if not isinstance(record, dict):
        raise ValueError("it is not a JSON object")
    stored = record.pop(CHECKSUM, None)
    if stored is not None and stored != _checksum(record):
        raise ValueError("its checksum does not match its content")
    return record


def _read_json(fs: FileSystem, path: str) -> Optional[dict]:
    """A record that may be missing or damaged without consequence (heartbeats, intents,
    allocation records read for display); None then."""
    try:
        return decode_record(fs.read_bytes(path))
    except (ValueError, StorageError):
        return None


def read_event(fs: FileSystem, table_path: str, seq: int, wait_s: float = 0.0) -> dict:
    """Event ``seq`` of the chain; TransactionLogDamagedError when it cannot be read within
    ``wait_s`` seconds (the newest event may still be being written)."""
    path = _sub(fs, table_path, _EVENTS, f"{seq:019d}.json")
    deadline = time.time() + wait_s
    while True:
        try:
            record = decode_record(fs.read_bytes(path))
            if not isinstance(record.get("cumulative"), dict) or record.get("seq") != seq \
                    or not isinstance(record.get("writeId"), int):
                raise ValueError("it lacks the fields of a commit/abort record")
            return record
        except (ValueError, StorageError) as e:
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


def _latest_event(fs: FileSystem, table_path: str, seqs: Sequence[int],
                  wait_s: float = EVENT_WRITE_GRACE_S) -> tuple[int, Optional[dict]]:
    """The newest event (waiting ``wait_s`` for one being written); (0, None) without events."""
    if not seqs:
        return 0, None
    return seqs[-1], read_event(fs, table_path, seqs[-1], wait_s)


def load_state(fs: FileSystem, table_path: str) -> Optional[LogState]:
    """The log's current state, or None when the table has no transaction log."""
    if not fs.exists(log_dir(fs, table_path)):
        return None
    allocated = frozenset(_numbered(fs, _sub(fs, table_path, _WRITEIDS), ".json"))
    seqs = _numbered(fs, _sub(fs, table_path, _EVENTS), ".json")
    seq, ev = _latest_event(fs, table_path, seqs)
    if ev is None:
        return LogState(allocated=allocated)
    cum = ev["cumulative"]
    return LogState(allocated=allocated, seq=seq,
                    terminated=_merge_ranges(tuple(r) for r in cum.get("terminated", [])),
                    aborted=frozenset(int(a) for a in cum.get("aborted", [])))


def state_at_event(fs: FileSystem, table_path: str, event: dict) -> LogState:
    """The log's state right after terminal record ``event``: the write ids terminated by then
    (its cumulative ranges); ids allocated but not terminated below the newest terminated one
    were open then (ids allocated later are above it)."""
    cum = event["cumulative"]
    terminated = _merge_ranges(tuple(r) for r in cum.get("terminated", []))
    top = max((hi for _, hi in terminated), default=0)
    allocated = frozenset(w for w in _numbered(fs, _sub(fs, table_path, _WRITEIDS), ".json")
                          if w <= top) | frozenset({top} if top else ())
    return LogState(allocated=allocated, seq=int(event["seq"]), terminated=terminated,
                    aborted=frozenset(int(a) for a in cum.get("aborted", [])))


def read_snapshot(fs: FileSystem, table_path: str) -> Optional[ValidIdList]:
    """The committed snapshot of a path-mode table: open (uncommitted) and aborted write ids are
    exceptions. None when the table has no log, i.e. everything present is committed."""
    state = load_state(fs, table_path)
    return None if state is None else state.snapshot()


def read_events(fs: FileSystem, table_path: str, after_seq: int = 0) -> list[dict]:
    """Every terminal record with seq > ``after_seq``, in commit order (a damaged one raises
    TransactionLogDamagedError: the caller would otherwise decide on a guess). Records folded
    into the newest checkpoint come from it, without their ``cumulative`` field."""
    for attempt in range(_CHECKPOINT_RETRIES):
        cp = latest_checkpoint(fs, table_path)
        cp_seq = int(cp["seq"]) if cp else 0
        folded = [e for e in (cp or {}).get("events", []) if e["seq"] > after_seq]
        seqs = [s for s in _numbered(fs, _sub(fs, table_path, _EVENTS), ".json")
                if s > max(after_seq, cp_seq)]
        try:
            return folded + [read_event(fs, table_path, seq,
                                        EVENT_WRITE_GRACE_S if seq == seqs[-1] else 0.0)
                             for seq in seqs]
        except TransactionLogDamagedError:
            if attempt == _CHECKPOINT_RETRIES - 1 or not _checkpointed_since(fs, table_path,
                                                                             cp_seq):
                raise  # not a record a concurrent checkpoint folded away: really damaged
    raise AssertionError("unreachable")


# --- checkpoints ----------------------------------------------------------------------------------
#: ``checkpoints/<seq>.json``: every terminal record up to ``seq`` (minus ``cumulative``) and the
#: allocation records of their write ids, written by ``txn.logmaint.checkpoint_log`` before it
#: removes those files; so the log keeps a bounded number of files and every record's content.
_CHECKPOINTS = "checkpoints"
_CHECKPOINT_RETRIES = 5


def latest_checkpoint(fs: FileSystem, table_path: str) -> Optional[dict]:
    """The newest checkpoint, or None. A checkpoint is created whole (``create_exclusive``), so
    one that cannot be read is damaged: TransactionLogDamagedError (the records it folded are
    gone from ``events/``)."""
    for _ in range(_CHECKPOINT_RETRIES):
        seqs = _numbered(fs, _sub(fs, table_path, _CHECKPOINTS), ".json")
        if not seqs:
            return None
        path = _sub(fs, table_path, _CHECKPOINTS, f"{seqs[-1]:019d}.json")
        if not fs.exists(path):
            continue  # replaced by a newer one meanwhile
        try:
            return decode_record(fs.read_bytes(path))
        except StorageError:
            continue
        except ValueError as e:
            raise TransactionLogDamagedError(
                f"Transaction log checkpoint {path} of {table_path} is damaged: {e}. It holds the "
                "commit records folded into it; restore it from a backup.") from None
    return None


def _checkpointed_since(fs: FileSystem, table_path: str, cp_seq: int) -> bool:
    """Whether a checkpoint newer than ``cp_seq`` exists: a record file that went missing or
    broke while being read was then folded away by it, not damaged."""
    newer = latest_checkpoint(fs, table_path)
    return newer is not None and int(newer["seq"]) > cp_seq


def events_newest_first(fs: FileSystem, table_path: str) -> Iterator[dict]:
    """The terminal records newest first, read one at a time, for a caller that stops at the
    newest record of some kind: the record files, then those folded into the newest checkpoint
    (a damaged record raises TransactionLogDamagedError). If a concurrent checkpoint folds files
    away meanwhile, the rest comes from :func:`read_events`."""
    cp = latest_checkpoint(fs, table_path)
    cp_seq = int(cp["seq"]) if cp else 0
    seqs = [q for q in _numbered(fs, _sub(fs, table_path, _EVENTS), ".json") if q > cp_seq]
    oldest_yielded = None
    try:
        for i, seq in enumerate(reversed(seqs)):
            ev = read_event(fs, table_path, seq, EVENT_WRITE_GRACE_S if i == 0 else 0.0)
            oldest_yielded = seq
            yield ev
    except TransactionLogDamagedError:
        if not _checkpointed_since(fs, table_path, cp_seq):
            raise  # not folded away by a checkpoint: really damaged
        for ev in reversed(read_events(fs, table_path)):
            if oldest_yielded is None or ev["seq"] < oldest_yielded:
                yield ev
        return
    yield from reversed((cp or {}).get("events", []))


def history(fs: FileSystem, table_path: str) -> list[dict]:
    """One entry per write id in the log (newest first): state, operation, partitions, metrics."""
    state = load_state(fs, table_path)
    if state is None:
        return []
    by_id: dict[int, dict] = {}
    cp = latest_checkpoint(fs, table_path)
    folded = {int(w): rec for w, rec in (cp or {}).get("allocations", {}).items()}
    for w in state.allocated | folded.keys():
        rec = folded.get(w) or _read_json(fs, _sub(fs, table_path, _WRITEIDS, f"{w:019d}.json")) or {}
        by_id[w] = {"writeId": w, "state": state.state_of(w), "operation": rec.get("operation"),
                    "startedAt": rec.get("startedAt"), "finishedAt": None, "partitions": [],
                    "metrics": {}, "reason": None}
    for ev in read_events(fs, table_path):
        if ev["seq"] > state.seq:
            continue
        entry = by_id.setdefault(ev["writeId"], {"writeId": ev["writeId"]})
        entry.setdefault("state", ev.get("state"))
        entry.update({"finishedAt": ev.get("time"), "partitions": ev.get("partitions", []),
                      "metrics": ev.get("metrics", {}), "reason": ev.get("reason"),
                      "operation": ev.get("operation") or entry.get("operation")})
    return sorted(by_id.values(), key=lambda e: -e["writeId"])




# --- compaction installs ---------------------------------------------------------------------------
#: ``installs/<W>.json`` lists the (staged, final) directory renames of compaction W's output;
#: ``installs/<W>.done`` appears once all of them are done. Readers hide the final directories of
#: an install without ``.done`` (txn.committer.commit_compaction; read.listing.list_table).
_INSTALLS = "installs"
INSTALL_SUFFIX, INSTALL_DONE_SUFFIX = ".json", ".done"


def install_names(fs: FileSystem, table_path: str) -> frozenset[str]:
    """The names in ``installs/`` (one listing; empty when there is none)."""
    try:
        return frozenset(c.name for c in fs.list_dir(_sub(fs, table_path, _INSTALLS)))
    except (PathNotFoundError, StorageError):
        return frozenset()


def install_record(fs: FileSystem, table_path: str, name: str) -> Optional[dict]:
    return _read_json(fs, _sub(fs, table_path, _INSTALLS, name))


def installs_in_progress(fs: FileSystem, table_path: str, names: frozenset[str]
                         ) -> dict[int, dict]:
    """``{W: record}`` of the installs named in ``names`` that have no ``.done`` yet."""
    out = {}
    for n in names:
        if n.endswith(INSTALL_SUFFIX):
            stem = n[: -len(INSTALL_SUFFIX)]
            if stem.isdigit() and stem + INSTALL_DONE_SUFFIX not in names:
                rec = install_record(fs, table_path, n)
                # unreadable while being written: its renames have not started
                out[int(stem)] = rec or {"pairs": []}
    return out
