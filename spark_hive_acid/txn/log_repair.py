"""Rebuilding a damaged record of the path-mode log (``HiveAcidTable.repairTransactionLog``)."""
from __future__ import annotations

import logging
import time
from typing import Optional

from ..acid.log_records import (
    ABORTED,
    COMMITTED,
    Cumulative,
    LogLayout,
    Terminal,
    encode,
    in_ranges,
)
from ..acid.logstate import read_event
from ..exceptions import InvalidOptionError, StorageError, TransactionLogDamagedError
from ..io.filesystem import FileSystem
from .log_append import new_nonce

log = logging.getLogger(__name__)


def repair_log(fs: FileSystem, table_path: str, write_id: Optional[int] = None,
               state: Optional[str] = None) -> Optional[int]:
    """Rewrite the damaged record of the chain, if there is one; returns its seq (None when
    nothing was damaged).

    Each record carries the cumulative state, so a damaged record followed by a readable one is
    rebuilt exactly: its write id is the one the later records terminate and the earlier ones do
    not. The newest record has no such witness: then ``write_id`` and ``state`` (``"committed"`` or
    ``"aborted"``) must say what it recorded (InvalidOptionError lists the candidates: the write
    ids that are allocated and not terminated before it).
    """
    layout = LogLayout(fs, table_path)
    seqs = layout.numbered(layout.events_dir)
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
    before = read_event(fs, table_path, seq - 1) if seq - 1 in seqs else None
    prev = before.cumulative if before is not None and before.cumulative else Cumulative()
    if seq != seqs[-1]:
        after = read_event(fs, table_path, seq + 1)
        cum = after.cumulative or Cumulative()
        ids = [w for lo, hi in cum.terminated for w in range(lo, hi + 1)
               if w != after.write_id and not in_ranges(prev.terminated, w)]
        if len(ids) != 1:
            raise InvalidOptionError(
                f"Cannot rebuild transaction log record {seq} of {table_path} from the records "
                f"around it (candidates {ids}); restore it from a backup")
        write_id, state = ids[0], ABORTED if ids[0] in cum.aborted else COMMITTED
    elif write_id is None or state not in (COMMITTED, ABORTED):
        open_ids = [w for w in layout.numbered(layout.writeids_dir)
                    if not in_ranges(prev.terminated, w)]
        raise InvalidOptionError(
            f"Transaction log record {seq} of {table_path} is the newest and damaged: nothing "
            f"says which write it ended or how. Say it: write_id= one of {open_ids} (allocated, "
            "not ended before it) and state='committed' or 'aborted' (if its directories are in "
            "the table and its job reported success, it committed)")
    record = Terminal(seq, write_id, state, time.time(), reason="rebuilt by repair_log",
                      nonce=new_nonce(), cumulative=prev.with_record(write_id, state))
    body = record.to_json()
    if state == ABORTED:  # what a repaired record has always said: it does not know the rest
        body.update({"operation": None, "partitions": [], "dmlPartitions": [], "metrics": {}})
    path = layout.event(seq)
    fs.delete(path)
    if not fs.create_exclusive(path, encode(body)):
        raise StorageError(f"Could not rewrite {path}")
    log.warning("Rebuilt transaction log record %s: write id %d %s", path, write_id, state)
    return seq
