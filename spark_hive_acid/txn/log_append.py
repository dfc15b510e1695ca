"""The two names a path-mode writer claims, and how it knows a claim is really its own.

A writer claims a write id (``writeids/<W>.json``) and, to commit or abort, the next record of
the chain (``events/<seq>.json``), each by creating the file if absent. A log checkpoint removes
the files of records it folded (:func:`~spark_hive_acid.txn.logmaint.checkpoint_log`), so a
writer acting on an old view of the log can create a name that was taken before: its create
succeeds, and the record it wrote is not part of the log ("void"). Such a writer would lose a
commit that returned success, or share its write id with another writer. So every create is
checked after it succeeds, and a void one is removed and the next name tried:

* **record ``seq``** is fresh unless a checkpoint numbered ``seq`` or higher exists (checkpoints
  only grow, and a record file is removed only after a checkpoint folded it), or, when one does,
  unless that checkpoint folded this very record (its ``nonce``);
* **write id ``W``** is fresh unless the newest record says W has ended: an allocation file is
  removed only once its write id ended and a checkpoint folded that end, and every record carries
  all ends so far. (A fresh W that another writer aborted meanwhile as stale is given up too.)

Both checks read after the create, so nothing the check relies on can change in between in a
way that hides a reuse. Docs: docs/writing.md, "The log's invariants".
"""
from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from typing import Callable, Optional

from ..acid.log_records import ABORTED, Allocation, Cumulative, LogLayout, Terminal, encode
from ..acid.logstate import (
    LogState,
    latest_checkpoint,
    latest_checkpoint_seq,
    load_state,
    newest_event,
)
from ..exceptions import CommitConflictError, StorageError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 10_000


def new_nonce() -> str:
    return uuid.uuid4().hex


def allocate(fs: FileSystem, table_path: str, operation: str, timeout_s: float,
             floor: Callable[[], int]) -> tuple[Allocation, LogState]:
    """Claim the next write id; returns its allocation record and the log's state read before
    (the writer's snapshot). ``floor()`` is the highest write id already in the table's
    directories, asked only for a log's first allocation (a table Hive wrote)."""
    layout = LogLayout(fs, table_path)
    state = load_state(fs, table_path) or LogState()
    top = max(state.high_watermark, max((hi for _, hi in state.cumulative.terminated), default=0))
    candidate = top + 1 if top else floor() + 1
    for _ in range(MAX_ATTEMPTS):
        rec = Allocation(candidate, operation, time.time(), timeout_s, socket.gethostname(),
                         os.getpid(), state.seq, new_nonce())
        if fs.create_exclusive(layout.allocation(candidate), encode(rec.to_json())):
            newest = newest_event(fs, table_path)
            ended = newest.cumulative.state_of(candidate) if newest and newest.cumulative else None
            if ended is None:
                log.info("Allocated write id %d (%s) on %s", candidate, operation, table_path)
                return rec, state
            log.warning("Write id %d of %s was handed out before (its record was folded into a "
                        "checkpoint): trying the next one", candidate, table_path)
            fs.delete(layout.allocation(candidate))
        candidate += 1
    raise StorageError(f"Could not allocate a write id in {layout.root}")


def _fresh(fs: FileSystem, table_path: str, rec: Terminal) -> bool:
    """Whether record ``rec``, just created, is part of the chain (see the module docstring)."""
    if latest_checkpoint_seq(fs, table_path) < rec.seq:
        return True
    cp = latest_checkpoint(fs, table_path)
    folded = cp.event(rec.seq) if cp is not None else None
    return folded is not None and folded.nonce == rec.nonce


def append(fs: FileSystem, table_path: str, write_id: int, state: str,
           make: Callable[[int, Cumulative, str], Terminal],
           check: Optional[Callable[[int], None]] = None) -> int:
    """Append W's terminal record (``make(seq, cumulative, nonce)`` builds it) to the chain;
    returns its seq. ``check(newest_seq)`` runs before every attempt and may raise to refuse.
    Idempotent for W's own state; CommitConflictError when W already ended the other way."""
    layout = LogLayout(fs, table_path)
    for _ in range(MAX_ATTEMPTS):
        newest = newest_event(fs, table_path)  # a damaged newest record raises
        seq = newest.seq if newest is not None else 0
        cum = newest.cumulative if newest is not None and newest.cumulative else Cumulative()
        was = cum.state_of(write_id)
        if was == state:
            return seq
        if was is not None:
            raise CommitConflictError(
                f"Write id {write_id} of {table_path} was already {was} "
                + ("(its writer was idle longer than its timeout and another writer aborted it); "
                   "nothing was committed, run the job again" if was == ABORTED else
                   "and cannot be aborted now"))
        if check is not None:
            check(seq)
        rec = make(seq + 1, cum.with_record(write_id, state), new_nonce())
        if not fs.create_exclusive(layout.event(rec.seq), encode(rec.to_json())):
            continue
        if _fresh(fs, table_path, rec):
            return rec.seq
        log.warning("Record %d of the log of %s had been taken and folded into a checkpoint "
                    "before this writer created it again: removed, appending after the newest",
                    rec.seq, table_path)
        fs.delete(layout.event(rec.seq))
    raise StorageError(f"Could not append to the transaction log of {table_path}")


__all__ = ["allocate", "append", "new_nonce", "MAX_ATTEMPTS"]
