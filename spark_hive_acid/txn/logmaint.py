"""Maintenance of the path-mode log: compaction installs and checkpoints.

* **Installs** (``installs/<W>.json`` then ``<W>.done``): a compaction announces the directory
  renames that make its output visible, so readers see all of them or none
  (``read.listing.listing_without_installs``); an install left unfinished by a killed compaction
  is finished (rolled forward) later, and its ``.done`` then says so (``late``): the output became
  visible only then, which is what vacuum's retention counts from.
* **Checkpoints** (``checkpoints/<seq>.json``): the log's records folded into one file, so the log
  keeps a bounded number of files (``acid.logstate`` reads them).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Callable, Optional, Sequence

from ..acid.log_records import (
    COMMITTED,
    OPEN,
    Allocation,
    Checkpoint,
    Install,
    InstallDone,
    LogLayout,
    encode,
)
from ..acid.logstate import (
    install_names,
    installs_done,
    installs_in_progress,
    latest_checkpoint,
    load_state,
    read_allocation,
    read_events,
)
from ..exceptions import CommitConflictError, StorageError
from ..io.filesystem import FileSystem
from ..write.in_place import claim, claimed_by

log = logging.getLogger(__name__)

# --- compaction installs ---------------------------------------------------------------------------
INSTALL_STALE_S = 300.0  # an install unfinished for this long belongs to a dead compaction
INSTALL_KEEP_S = 3600.0  # finished install markers are removed after this long
#: An install that ended later than this after it began was finished late (a dead compaction's):
#: its ``.done`` is kept, because the output's visibility counts from it.
INSTALL_PROMPT_S = 60.0


def begin_install(fs: FileSystem, table_path: str, write_id: int,
                  pairs: Sequence[tuple[str, str]], **extra: Any) -> None:
    """Announce compaction W's directory renames (readers hide the final directories until
    :func:`end_install`)."""
    layout = LogLayout(fs, table_path)
    fs.mkdirs(layout.installs_dir)
    record = Install(write_id, time.time(), tuple((str(a), str(b)) for a, b in pairs), extra)
    if not fs.create_exclusive(layout.install(write_id), encode(record.to_json())):
        raise StorageError(f"Install of compaction write id {write_id} on {table_path} was "
                           "already announced")


def end_install(fs: FileSystem, table_path: str, write_id: int, late: bool = False) -> None:
    fs.create_exclusive(LogLayout(fs, table_path).install_done(write_id),
                        encode(InstallDone(write_id, time.time(), late).to_json()))


# --- installs in place (object stores: no rename) -------------------------------------------------
#: ``installs/<W>.ready``: every output of in-place compaction W is written whole (before commit)
READY_SUFFIX = ".ready"


def ready_path(fs: FileSystem, table_path: str, write_id: int) -> str:
    return LogLayout(fs, table_path).install(write_id)[: -len(".json")] + READY_SUFFIX


def begin_in_place_install(fs: FileSystem, table_path: str, write_id: int,
                           finals: Sequence[str], **extra: Any) -> None:
    """Before compaction W writes its output straight into ``finals`` (a store without rename):
    announce them, so readers hide them until :func:`end_install`, then claim each (CommitConflict
    error when another compaction holds one: it made the same output). Nothing is written into a
    final directory before both."""
    begin_install(fs, table_path, write_id, [("", f) for f in finals], inPlace=True, **extra)
    for f in finals:
        if not claim(fs, f, write_id):
            raise CommitConflictError(
                f"{f} is being written by another compaction (its claim exists): this one did "
                "nothing; run it again later")


def mark_ready(fs: FileSystem, table_path: str, write_id: int) -> None:
    """Every output of in-place compaction W is complete (written before its commit): a later
    process may finish the install once W committed."""
    fs.write_bytes(ready_path(fs, table_path, write_id), encode({"writeId": write_id,
                                                                 "time": time.time()}))


def roll_back_install(fs: FileSystem, table_path: str, write_id: int, rec: Install) -> None:
    """Remove what in-place compaction W wrote (only directories it claimed) and end its
    install: its output never became visible."""
    for _, final in rec.pairs:
        if claimed_by(fs, final) in (write_id, None):
            fs.delete(final, recursive=True)
    end_install(fs, table_path, write_id, late=True)
    log.warning("Rolled back the in-place install of compaction %d on %s", write_id, table_path)


def roll_back_in_place(fs: FileSystem, table_path: str, write_id: int) -> None:
    """Roll back compaction W's in-place install, if it has one that is not done (W aborted or
    failed). Never raises: cleanup must not hide the outcome."""
    try:
        names = install_names(fs, table_path)
        rec = installs_in_progress(fs, table_path, names).get(write_id)
        if rec is not None and rec.extra.get("inPlace"):
            roll_back_install(fs, table_path, write_id, rec)
    except Exception as e:  # noqa: BLE001 - leftovers stay hidden; the next vacuum retries
        log.warning("Could not roll back the install of compaction %d on %s: %s", write_id,
                    table_path, e)


def _finish_in_place(fs: FileSystem, table_path: str, w: int, rec: Install,
                     state_of: Callable[[int], str]) -> bool:
    """Finish or roll back an in-place install whose compaction is gone; False while its
    compaction is still open (it may be running)."""
    state = state_of(w)
    if state == OPEN:
        return False
    if state == COMMITTED and fs.exists(ready_path(fs, table_path, w)):
        end_install(fs, table_path, w, late=True)  # committed after its output was whole
        log.warning("Finished the install of compaction %d on %s (it died after committing)",
                    w, table_path)
    else:
        roll_back_install(fs, table_path, w, rec)
    return True


def finish_interrupted_installs(fs: FileSystem, table_path: str,
                                older_than_s: float = INSTALL_STALE_S,
                                state_of: Optional[Callable[[int], str]] = None) -> list[int]:
    """Complete the installs of compactions that died between their commit and their last rename
    (their output is committed and correct: roll forward), then mark them done. An install whose
    staged output is gone cannot be completed: the directories it had renamed (hidden all along)
    are removed instead. An install in place (object stores) is left alone while its compaction
    is open (``state_of(W)``: OPEN / COMMITTED / ABORTED; default: the path-mode log), then
    finished when it committed after marking its output whole, and rolled back otherwise,
    whatever its age. Returns their write (or txn) ids."""
    names = install_names(fs, table_path)
    done = []
    if state_of is None:
        def state_of(w: int) -> str:
            st = load_state(fs, table_path)
            return st.state_of(w) if st is not None else OPEN
    for w, rec in installs_in_progress(fs, table_path, names).items():
        if rec.extra.get("inPlace"):  # decided by its compaction's state, not by its age
            if _finish_in_place(fs, table_path, w, rec, state_of):
                done.append(w)
            continue
        if time.time() - rec.time < older_than_s:
            continue
        if all(fs.exists(final) or fs.exists(staged) for staged, final in rec.pairs):
            for staged, final in rec.pairs:
                if not fs.exists(final):
                    fs.rename(staged, final)
            log.warning("Finished the install of compaction %d on %s (it died after committing)",
                        w, table_path)
        else:
            for _, final in rec.pairs:
                fs.delete(final, recursive=True)
            log.warning("Rolled back the unfinished install of compaction %d on %s: its staged "
                        "output is gone", w, table_path)
        end_install(fs, table_path, w, late=True)
        done.append(w)
    return done


def install_visible_since(fs: FileSystem, table_path: str) -> dict[str, float]:
    """Final directory -> when the finished install that made it visible ended."""
    out = {}
    for rec, done in installs_done(fs, table_path, install_names(fs, table_path)).values():
        for _, final in rec.pairs:
            out[final.rstrip("/")] = done.time if done is not None else rec.time
    return out


def prune_installs(fs: FileSystem, table_path: str, older_than_s: float = INSTALL_KEEP_S) -> None:
    """Remove the markers of installs finished promptly more than ``older_than_s`` ago (their
    output became visible with their commit). Installs finished late are kept: their ``.done``
    is when their output became visible."""
    layout = LogLayout(fs, table_path)
    for w, (rec, done) in installs_done(fs, table_path, install_names(fs, table_path)).items():
        if done is None or done.late or done.time - rec.time > INSTALL_PROMPT_S:
            continue
        if time.time() - done.time >= older_than_s:
            fs.delete(layout.install(w))
            fs.delete(ready_path(fs, table_path, w))
            fs.delete(layout.install_done(w))


# --- checkpoints (``acid.logstate`` reads them) ------------------------------------------------------
def checkpoint_log(fs: FileSystem, table_path: str, min_records: int = 1) -> Optional[int]:
    """Fold the log's records (all but the newest, which writers read) and the allocation records
    of their write ids into ``checkpoints/<seq>.json``, then remove those files and older
    checkpoints; returns the checkpoint's seq (None: fewer than ``min_records`` to fold).

    Nothing is lost: every record keeps its content (minus the cumulative state, which the newest
    record carries), and readers take folded records from the checkpoint (``read_events``,
    ``history``). Crash-safe: the checkpoint appears whole before anything is removed, readers
    prefer it to the files it folded, and a reader that loses a file to a concurrent checkpoint
    reads it again from there. Writers check every name they create against the checkpoints
    (``txn.log_append``), so a removed name is never claimed twice. Kept: the newest record, the
    allocation record of the highest write id (the next allocation counts from it), and
    everything of open write ids."""
    layout = LogLayout(fs, table_path)
    seqs = layout.numbered(layout.events_dir)
    old = latest_checkpoint(fs, table_path)
    old_seq = old.seq if old is not None else 0
    if len(seqs) < 2:
        return None
    upto = seqs[-2]
    if len([s for s in seqs if old_seq < s <= upto]) < max(min_records, 1):
        return None
    events = tuple(e.folded() for e in read_events(fs, table_path) if e.seq <= upto)
    if not events or events[-1].seq != upto:
        return None  # another checkpoint moved on meanwhile
    state = load_state(fs, table_path)
    folded_ids = sorted({e.write_id for e in events})
    allocations: dict[int, Allocation] = {}
    for w in folded_ids:
        rec = read_allocation(fs, table_path, w)
        if rec is not None:
            allocations[w] = rec
    newest_cp = latest_checkpoint(fs, table_path)  # also what a concurrent checkpoint kept
    if newest_cp is not None and newest_cp.seq >= upto:
        return None  # another process checkpointed as far meanwhile
    for base in (old, newest_cp):
        for w, rec in (base.allocations if base is not None else {}).items():
            allocations.setdefault(w, rec)
    fs.mkdirs(layout.checkpoints_dir)
    record = Checkpoint(upto, time.time(), events, allocations)
    if not fs.create_exclusive(layout.checkpoint(upto), encode(record.to_json())):
        return None  # another process checkpointed up to the same record
    for seq in seqs:
        if seq <= upto:
            fs.delete(layout.event(seq))
    keep = state.high_watermark if state is not None else 0
    for w in folded_ids:
        if w != keep and state is not None and state.is_terminated(w):
            fs.delete(layout.allocation(w))
    for seq in layout.numbered(layout.checkpoints_dir):
        if seq < upto:
            fs.delete(layout.checkpoint(seq))
    log.info("Checkpointed the transaction log of %s up to record %d (%d records)", table_path,
             upto, len(events))
    return upto
