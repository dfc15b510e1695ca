"""The path-mode transaction log on disk: its layout and its records, typed.

A path-mode table keeps its write ids in a hidden directory at the table root, which Hive, Trino
and Impala ignore (names starting with ``_``)::

    _hiveacid_txnlog/
      writeids/<W:019d>.json      Allocation: write id W was handed out (created exclusively)
      events/<seq:019d>.json      Terminal: W committed or aborted, in one total order
      checkpoints/<seq:019d>.json Checkpoint: every Terminal up to seq and their Allocations
      heartbeats/<W:019d>         last sign of life of W's writer (a float, overwritten)
      intents/<W:019d>.json       Intent: the table directories W's commit is about to create
      installs/<W:019d>.json      Install: the renames that make compaction W's output visible
      installs/<W:019d>.done      InstallDone: ... all done

Every record is JSON with a SHA-256 checksum of its canonical form (:func:`encode`), so damage
is detected, never guessed. The keys on disk are camelCase and never change meaning; records of
earlier versions (without checksum, nonce or write set) still decode. The protocol that writes
these records, and the invariants it keeps, are in :mod:`spark_hive_acid.txn.pathlog` and
docs/writing.md; :mod:`spark_hive_acid.acid.logstate` reads them.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Optional

from ..exceptions import PathNotFoundError
from ..io.filesystem import FileSystem

LOG_DIR = "_hiveacid_txnlog"
COMMITTED, ABORTED, OPEN = "committed", "aborted", "open"
CHECKSUM = "checksum"
INSTALL_SUFFIX, INSTALL_DONE_SUFFIX = ".json", ".done"

Ranges = tuple[tuple[int, int], ...]


def merge_ranges(ranges: Iterable[Iterable[int]]) -> Ranges:
    """Sorted, merged inclusive ranges (adjacent ones joined)."""
    out: list[list[int]] = []
    for lo, hi in sorted((int(a), int(b)) for a, b in ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return tuple((a, b) for a, b in out)


def in_ranges(ranges: Ranges, w: int) -> bool:
    return any(lo <= w <= hi for lo, hi in ranges)


# --- encoding ------------------------------------------------------------------------------------
def _checksum(body: Mapping[str, Any]) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def encode(body: Mapping[str, Any]) -> bytes:
    """A record's JSON body as stored, with its checksum."""
    plain = {k: v for k, v in body.items() if k != CHECKSUM}
    return json.dumps({**plain, CHECKSUM: _checksum(plain)}).encode("utf-8")


def decode(data: bytes) -> dict[str, Any]:
    """The JSON body stored in ``data``; ValueError (saying what is wrong) when it is damaged.
    Records written before checksums existed are accepted when they parse."""
    if not data:
        raise ValueError("it is empty")
    try:
        body = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"it is not valid JSON ({e})") from None
    if not isinstance(body, dict):
        raise ValueError("it is not a JSON object")
    stored = body.pop(CHECKSUM, None)
    if stored is not None and stored != _checksum(body):
        raise ValueError("its checksum does not match its content")
    return body


def _int(body: Mapping[str, Any], key: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"its field {key!r} is not an integer ({value!r})")
    return value


# --- records -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Allocation:
    """``writeids/<W>.json``: write id W handed out to one writer."""

    write_id: int
    operation: Optional[str] = None
    started_at: float = 0.0
    timeout_s: float = 3600.0
    host: str = ""
    pid: int = 0
    snapshot_seq: int = 0
    nonce: str = ""  # tells the allocator's own record from another's with the same name

    def to_json(self) -> dict[str, Any]:
        return {"writeId": self.write_id, "operation": self.operation,
                "startedAt": self.started_at, "timeoutSeconds": self.timeout_s,
                "host": self.host, "pid": self.pid, "snapshotSeq": self.snapshot_seq,
                "nonce": self.nonce}

    @classmethod
    def from_json(cls, body: Mapping[str, Any], write_id: Optional[int] = None) -> "Allocation":
        """``write_id``: the one its file name says, for a record that does not say it."""
        w = write_id if write_id is not None and "writeId" not in body else _int(body, "writeId")
        return cls(w, body.get("operation"),
                   float(body.get("startedAt") or 0.0),
                   float(body.get("timeoutSeconds") or 3600.0), str(body.get("host") or ""),
                   int(body.get("pid") or 0), int(body.get("snapshotSeq") or 0),
                   str(body.get("nonce") or ""))


@dataclass(frozen=True)
class Cumulative:
    """The log's terminal states right after one record: every write id terminated so far, and
    which of them aborted. Carried by each record file, so the newest file alone gives them."""

    terminated: Ranges = ()
    aborted: frozenset[int] = frozenset()

    def with_record(self, write_id: int, state: str) -> "Cumulative":
        return Cumulative(merge_ranges(self.terminated + ((write_id, write_id),)),
                          self.aborted | ({write_id} if state == ABORTED else frozenset()))

    def state_of(self, write_id: int) -> Optional[str]:
        """COMMITTED / ABORTED, or None when not terminated."""
        if not in_ranges(self.terminated, write_id):
            return None
        return ABORTED if write_id in self.aborted else COMMITTED

    def to_json(self) -> dict[str, Any]:
        return {"terminated": [list(r) for r in self.terminated], "aborted": sorted(self.aborted)}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Cumulative":
        return cls(merge_ranges(tuple(r) for r in body.get("terminated", [])),
                   frozenset(int(a) for a in body.get("aborted", [])))


@dataclass(frozen=True)
class Terminal:
    """``events/<seq>.json``: write id W committed or aborted; ``seq`` orders all of them.

    ``cumulative`` is None for a record read from a checkpoint (only record files carry it)."""

    seq: int
    write_id: int
    state: str
    time: float = 0.0
    operation: Optional[str] = None
    partitions: tuple[str, ...] = ()
    dml_partitions: tuple[str, ...] = ()
    metrics: Mapping[str, Any] = field(default_factory=dict)
    write_set: Optional[Mapping[str, Any]] = None  # txn.base.WriteSet.to_json(); None: legacy
    properties: Mapping[str, str] = field(default_factory=dict)
    reason: Optional[str] = None
    nonce: str = ""
    cumulative: Optional[Cumulative] = None

    @property
    def committed(self) -> bool:
        return self.state == COMMITTED

    @property
    def outputs(self) -> tuple[str, ...]:
        """The directories a compaction's commit made (``metrics.outputs``)."""
        return tuple((self.metrics or {}).get("outputs") or ())

    def folded(self) -> "Terminal":
        """This record as a checkpoint keeps it (without the cumulative state)."""
        return replace(self, cumulative=None)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"seq": self.seq, "writeId": self.write_id, "state": self.state,
                                "time": self.time, "nonce": self.nonce}
        if self.reason is not None:
            body["reason"] = self.reason
        if self.state == COMMITTED or self.operation is not None:
            body.update({"operation": self.operation, "partitions": list(self.partitions),
                         "dmlPartitions": list(self.dml_partitions),
                         "metrics": dict(self.metrics)})
        if self.write_set is not None:
            body["writeSet"] = dict(self.write_set)
        if self.properties:
            body["properties"] = dict(self.properties)
        if self.cumulative is not None:
            body["cumulative"] = self.cumulative.to_json()
        return body

    @classmethod
    def from_json(cls, body: Mapping[str, Any], *, need_cumulative: bool) -> "Terminal":
        seq, write_id = _int(body, "seq"), _int(body, "writeId")
        state = body.get("state")
        if state not in (COMMITTED, ABORTED):
            raise ValueError(f"its state {state!r} is neither committed nor aborted")
        cum = body.get("cumulative")
        if need_cumulative and not isinstance(cum, dict):
            raise ValueError("it lacks the cumulative state of a commit/abort record")
        return cls(seq, write_id, state, float(body.get("time") or 0.0), body.get("operation"),
                   tuple(body.get("partitions") or ()), tuple(body.get("dmlPartitions") or ()),
                   dict(body.get("metrics") or {}),
                   dict(body["writeSet"]) if isinstance(body.get("writeSet"), dict) else None,
                   {str(k): str(v) for k, v in (body.get("properties") or {}).items()},
                   body.get("reason"), str(body.get("nonce") or ""),
                   Cumulative.from_json(cum) if isinstance(cum, dict) else None)


@dataclass(frozen=True)
class Checkpoint:
    """``checkpoints/<seq>.json``: every Terminal up to ``seq`` (folded, in order) and the
    Allocations of their write ids, so their files can be removed without losing anything."""

    seq: int
    time: float
    events: tuple[Terminal, ...] = ()
    allocations: Mapping[int, Allocation] = field(default_factory=dict)

    def event(self, seq: int) -> Optional[Terminal]:
        for ev in self.events:
            if ev.seq == seq:
                return ev
        return None

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "time": self.time,
                "events": [e.folded().to_json() for e in self.events],
                "allocations": {str(w): a.to_json() for w, a in sorted(self.allocations.items())}}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Checkpoint":
        allocations: dict[int, Allocation] = {}
        for w, rec in (body.get("allocations") or {}).items():
            try:
                allocations[int(w)] = Allocation.from_json(rec)
            except (ValueError, TypeError):
                continue  # a record that was unreadable when folded: history shows less
        return cls(_int(body, "seq"), float(body.get("time") or 0.0),
                   tuple(Terminal.from_json(e, need_cumulative=False)
                         for e in body.get("events", [])), allocations)


@dataclass(frozen=True)
class Intent:
    """``intents/<W>.json``: table directories W's commit is about to create (for its abort)."""

    write_id: int
    dirs: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"writeId": self.write_id, "dirs": list(self.dirs)}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Intent":
        return cls(_int(body, "writeId"), tuple(str(d) for d in body.get("dirs", [])))


@dataclass(frozen=True)
class Install:
    """``installs/<W>.json``: the (staged, final) renames that make compaction W's output
    visible; readers hide the final directories until ``<W>.done`` exists."""

    write_id: int
    time: float
    pairs: tuple[tuple[str, str], ...]
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {**self.extra, "writeId": self.write_id, "time": self.time,
                "pairs": [list(p) for p in self.pairs]}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Install":
        extra = {k: v for k, v in body.items() if k not in ("writeId", "time", "pairs")}
        return cls(_int(body, "writeId"), float(body.get("time") or 0.0),
                   tuple((str(a), str(b)) for a, b in body.get("pairs", [])), extra)


@dataclass(frozen=True)
class InstallDone:
    """``installs/<W>.done``: every rename of the install is done (at ``time``)."""

    write_id: int
    time: float
    late: bool = False  # finished by a later process (the compaction died after its commit)

    def to_json(self) -> dict[str, Any]:
        return {"writeId": self.write_id, "time": self.time, "late": self.late}

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "InstallDone":
        return cls(_int(body, "writeId"), float(body.get("time") or 0.0), bool(body.get("late")))


# --- layout --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LogLayout:
    """Where each record of one table's log lives."""

    fs: FileSystem
    table_path: str

    @property
    def root(self) -> str:
        return self.fs.join(self.table_path, LOG_DIR)

    def _dir(self, kind: str) -> str:
        return self.fs.join(self.root, kind)

    @property
    def writeids_dir(self) -> str:
        return self._dir("writeids")

    @property
    def events_dir(self) -> str:
        return self._dir("events")

    @property
    def checkpoints_dir(self) -> str:
        return self._dir("checkpoints")

    @property
    def heartbeats_dir(self) -> str:
        return self._dir("heartbeats")

    @property
    def intents_dir(self) -> str:
        return self._dir("intents")

    @property
    def installs_dir(self) -> str:
        return self._dir("installs")

    def allocation(self, write_id: int) -> str:
        return self.fs.join(self.writeids_dir, f"{write_id:019d}.json")

    def event(self, seq: int) -> str:
        return self.fs.join(self.events_dir, f"{seq:019d}.json")

    def checkpoint(self, seq: int) -> str:
        return self.fs.join(self.checkpoints_dir, f"{seq:019d}.json")

    def heartbeat(self, write_id: int) -> str:
        return self.fs.join(self.heartbeats_dir, f"{write_id:019d}")

    def intent(self, write_id: int) -> str:
        return self.fs.join(self.intents_dir, f"{write_id:019d}.json")

    def install(self, write_id: int) -> str:
        return self.fs.join(self.installs_dir, f"{write_id:019d}{INSTALL_SUFFIX}")

    def install_done(self, write_id: int) -> str:
        return self.fs.join(self.installs_dir, f"{write_id:019d}{INSTALL_DONE_SUFFIX}")

    def writer_dirs(self) -> tuple[str, ...]:
        """The directories a writer needs before its first record."""
        return (self.writeids_dir, self.events_dir, self.heartbeats_dir, self.intents_dir)

    def exists(self) -> bool:
        return self.fs.exists(self.root)

    def numbered(self, directory: str, suffix: str = ".json") -> list[int]:
        """The numbers naming ``<n><suffix>`` files in ``directory``, ascending."""
        try:
            children = self.fs.list_dir(directory)
        except PathNotFoundError:
            return []
        out = []
        for c in children:
            if suffix and not c.name.endswith(suffix):
                continue
            stem = c.name[: -len(suffix)] if suffix else c.name
            if stem.isdigit():
                out.append(int(stem))
        return sorted(out)
