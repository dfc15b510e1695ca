"""Reading the path-mode transaction log: its state, snapshots, events and history.

The log is this library's own on-disk record of a path-mode table's write ids (a hidden
``_hiveacid_txnlog`` directory that Hive, Trino and Impala ignore). Readers take their snapshot
from it; :mod:`spark_hive_acid.txn.pathlog`, which writes it, describes its layout and protocol.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from .snapshot import ValidIdList
from ..exceptions import PathNotFoundError, StorageError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

LOG_DIR = "_hiveacid_txnlog"
_WRITEIDS, _EVENTS, _HEARTBEATS, _INTENTS = "writeids", "events", "heartbeats", "intents"

COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"
DEFAULT_TIMEOUT_S = 3600.0
#: An event file still unreadable after this long belongs to a writer that died mid-write.
VOID_EVENT_AFTER_S = 30.0
#: An allocation record still unreadable after this long belongs to a writer that died at once.
UNREADABLE_RECORD_GRACE_S = 5.0
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


def _read_json(fs: FileSystem, path: str) -> Optional[dict]:
    try:
        data = fs.read_bytes(path)
        return json.loads(data.decode("utf-8")) if data else None
    except (ValueError, UnicodeDecodeError, StorageError):
        return None


# --- reading ---------------------------------------------------------------------------------------
def _latest_event(fs: FileSystem, table_path: str, seqs: Sequence[int],
                  wait_s: float = 1.0) -> tuple[int, Optional[dict]]:
    """The latest readable event. An unreadable last event is being written right now: wait a
    little, then fall back to the one before (an older but consistent state)."""
    for seq in reversed(seqs):
        path = _sub(fs, table_path, _EVENTS, f"{seq:019d}.json")
        deadline = time.time() + wait_s
        while True:
            ev = _read_json(fs, path)
            if ev is not None and "cumulative" in ev:
                return seq, ev
            if time.time() >= deadline:
                break
            time.sleep(0.01)
        log.warning("Transaction log event %s is unreadable; using the one before it", path)
        wait_s = 0.0
    return 0, None


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


def read_snapshot(fs: FileSystem, table_path: str) -> Optional[ValidIdList]:
    """The committed snapshot of a path-mode table: open (uncommitted) and aborted write ids are
    exceptions. None when the table has no log, i.e. everything present is committed."""
    state = load_state(fs, table_path)
    return None if state is None else state.snapshot()


def read_events(fs: FileSystem, table_path: str, after_seq: int = 0) -> list[dict]:
    """Every readable terminal record with seq > ``after_seq``, in commit order."""
    out = []
    for seq in _numbered(fs, _sub(fs, table_path, _EVENTS), ".json"):
        if seq <= after_seq:
            continue
        ev = _read_json(fs, _sub(fs, table_path, _EVENTS, f"{seq:019d}.json"))
        if ev is not None:
            out.append(ev)
    return out


def history(fs: FileSystem, table_path: str) -> list[dict]:
    """One entry per write id in the log (newest first): state, operation, partitions, metrics."""
    state = load_state(fs, table_path)
    if state is None:
        return []
    by_id: dict[int, dict] = {}
    for w in state.allocated:
        rec = _read_json(fs, _sub(fs, table_path, _WRITEIDS, f"{w:019d}.json")) or {}
        by_id[w] = {"writeId": w, "state": state.state_of(w), "operation": rec.get("operation"),
                    "startedAt": rec.get("startedAt"), "finishedAt": None, "partitions": [],
                    "metrics": {}, "reason": None}
    for ev in read_events(fs, table_path):
        if ev["seq"] > state.seq:
            continue
        entry = by_id.setdefault(ev["writeId"], {"writeId": ev["writeId"]})
        entry.update({"finishedAt": ev.get("time"), "partitions": ev.get("partitions", []),
                      "metrics": ev.get("metrics", {}), "reason": ev.get("reason"),
                      "operation": ev.get("operation") or entry.get("operation")})
    return sorted(by_id.values(), key=lambda e: -e["writeId"])


