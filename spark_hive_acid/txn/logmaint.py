"""Maintenance of the path-mode log: compaction installs and checkpoints.

* **Installs** (``installs/<W>.json`` then ``<W>.done``): a compaction announces the directory
  renames that make its output visible, so readers see all of them or none
  (``read.listing.listing_without_installs``); an install left unfinished by a killed compaction
  is finished (rolled forward) later.
* **Checkpoints** (``checkpoints/<seq>.json``): the log's terminal and allocation records folded
  into one file, so the log keeps a bounded number of files (``acid.logstate`` reads them).
"""
from __future__ import annotations

import logging
import time
from typing import Optional, Sequence

from ..acid.logstate import (
    _CHECKPOINTS,
    _EVENTS,
    _INSTALLS,
    _WRITEIDS,
    INSTALL_DONE_SUFFIX,
    INSTALL_SUFFIX,
    _numbered,
    _read_json,
    _sub,
    encode_record,
    install_names,
    install_record,
    installs_in_progress,
    latest_checkpoint,
    load_state,
    read_events,
)
from ..exceptions import StorageError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

# --- compaction installs (``acid.logstate`` describes the markers) ------------------------------
INSTALL_STALE_S = 300.0  # an install unfinished for this long belongs to a dead compaction
INSTALL_KEEP_S = 3600.0  # finished install markers are removed after this long


def _install_path(fs: FileSystem, table_path: str, name: str) -> str:
    return _sub(fs, table_path, _INSTALLS, name)


def begin_install(fs: FileSystem, table_path: str, write_id: int,
                  pairs: Sequence[tuple[str, str]], **extra) -> None:
    """Announce compaction W's directory renames (readers hide the final directories until
    :func:`end_install`)."""
    fs.mkdirs(_sub(fs, table_path, _INSTALLS))
    record = {"writeId": write_id, "time": time.time(), "pairs": [list(p) for p in pairs], **extra}
    if not fs.create_exclusive(_install_path(fs, table_path, f"{write_id:019d}{INSTALL_SUFFIX}"),
                               encode_record(record)):
        raise StorageError(f"Install of compaction write id {write_id} on {table_path} was "
                           "already announced")


def end_install(fs: FileSystem, table_path: str, write_id: int) -> None:
    fs.create_exclusive(_install_path(fs, table_path, f"{write_id:019d}{INSTALL_DONE_SUFFIX}"),
                        encode_record({"writeId": write_id, "time": time.time()}))


def finish_interrupted_installs(fs: FileSystem, table_path: str,
                                older_than_s: float = INSTALL_STALE_S) -> list[int]:
    """Complete the installs of compactions that died between their commit and their last rename
    (their output is committed and correct: roll forward), then mark them done. An install whose
    staged output is gone cannot be completed: the directories it had renamed (hidden all along)
    are removed instead. Returns their write (or txn) ids."""
    names = install_names(fs, table_path)
    done = []
    for w, rec in sorted(installs_in_progress(fs, table_path, names).items()):
        if time.time() - float(rec.get("time", 0.0)) < older_than_s:
            continue
        pairs = rec.get("pairs", [])
        if all(fs.exists(final) or fs.exists(staged) for staged, final in pairs):
            for staged, final in pairs:
                if not fs.exists(final):
                    fs.rename(staged, final)
            log.warning("Finished the install of compaction %d on %s (it died after committing)",
                        w, table_path)
        else:
            for _, final in pairs:
                fs.delete(final, recursive=True)
            log.warning("Rolled back the unfinished install of compaction %d on %s: its staged "
                        "output is gone", w, table_path)
        end_install(fs, table_path, w)
        done.append(w)
    return done


def prune_installs(fs: FileSystem, table_path: str, older_than_s: float = INSTALL_KEEP_S) -> None:
    """Remove the markers of installs finished more than ``older_than_s`` ago."""
    names = install_names(fs, table_path)
    for n in names:
        if not n.endswith(INSTALL_DONE_SUFFIX):
            continue
        rec = install_record(fs, table_path, n) or {}
        if time.time() - float(rec.get("time", 0.0)) >= older_than_s:
            stem = n[: -len(INSTALL_DONE_SUFFIX)]
            fs.delete(_install_path(fs, table_path, stem + INSTALL_SUFFIX))
            fs.delete(_install_path(fs, table_path, n))


# --- checkpoints (``acid.logstate`` reads them) ------------------------------------------------------
def checkpoint_log(fs: FileSystem, table_path: str, min_records: int = 1) -> Optional[int]:
    """Fold the log's terminal records (all but the newest, which writers read) and the
    allocation records of their write ids into ``checkpoints/<seq>.json``, then remove those files
    and older checkpoints; returns the checkpoint's seq (None: fewer than ``min_records`` to fold).

    Nothing is lost: every record keeps its content (minus the cumulative state, which the newest
    record carries), and readers take folded records from the checkpoint (``read_events``,
    ``history``). Crash-safe: the checkpoint appears whole before anything is removed, readers
    prefer it to the files it folded, and a reader that loses a file to a concurrent checkpoint
    reads it again from there. Kept: the newest record, the allocation record of the highest
    write id (the next allocation counts from it), and everything of open write ids."""
    seqs = _numbered(fs, _sub(fs, table_path, _EVENTS), ".json")
    old = latest_checkpoint(fs, table_path)
    old_seq = int(old["seq"]) if old else 0
    if len(seqs) < 2:
        return None
    upto = seqs[-2]
    if len([s for s in seqs if old_seq < s <= upto]) < max(min_records, 1):
        return None
    events = [e for e in read_events(fs, table_path) if e["seq"] <= upto]
    state = load_state(fs, table_path)
    allocations = dict((old or {}).get("allocations", {}))
    folded_ids = sorted({int(e["writeId"]) for e in events})
    for w in folded_ids:
        rec = _read_json(fs, _sub(fs, table_path, _WRITEIDS, f"{w:019d}.json"))
        if rec is not None:
            allocations[str(w)] = rec
    record = {"seq": upto, "time": time.time(),
              "events": [{k: v for k, v in e.items() if k != "cumulative"} for e in events],
              "allocations": allocations}
    fs.mkdirs(_sub(fs, table_path, _CHECKPOINTS))
    if not fs.create_exclusive(_sub(fs, table_path, _CHECKPOINTS, f"{upto:019d}.json"),
                               encode_record(record)):
        return None  # another process checkpointed up to the same record
    for seq in seqs:
        if seq <= upto:
            fs.delete(_sub(fs, table_path, _EVENTS, f"{seq:019d}.json"))
    keep = state.high_watermark if state is not None else 0
    for w in folded_ids:
        if w != keep and state is not None and state.is_terminated(w):
            fs.delete(_sub(fs, table_path, _WRITEIDS, f"{w:019d}.json"))
    for seq in _numbered(fs, _sub(fs, table_path, _CHECKPOINTS), ".json"):
        if seq < upto:
            fs.delete(_sub(fs, table_path, _CHECKPOINTS, f"{seq:019d}.json"))
    log.info("Checkpointed the transaction log of %s up to record %d (%d records)", table_path,
             upto, len(events))
    return upto
