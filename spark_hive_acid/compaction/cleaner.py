"""``vacuum``: remove what compaction (or a newer base) made obsolete, and aborted directories.

What goes, per partition (Hive's Cleaner, ``AcidUtils.getAcidState`` at the current snapshot):

* **obsolete** directories and original files: hidden under a newer base or a covering compacted
  delta. They go only once what hides them has been visible for ``retention_hours``: a reader that
  planned its snapshot before that moment may still open them, so ``retention_hours`` bounds how
  long a read (or a time-travel read of an older snapshot) may run. The moment is the commit time
  the path-mode log records for the base's write id, or for a compacted directory the moment its
  compaction's install ended (the output became visible then; for a compaction that died after
  its commit, when a later compaction or vacuum finished its install). When a hider is unknown to the log (written by Hive), nothing says how long it has
  been visible: only ``retention_hours=0`` removes what it hides.
* **aborted** directories: never read by any snapshot (a write id is aborted only after being
  open, and open ids are not read), so they go at once.
* leftover staging directories of ended write ids (a killed writer or compaction), once their
  end is ``STAGING_GRACE_S`` old.

It also checkpoints the path-mode log (``txn.logmaint.checkpoint_log``) when at least
``CHECKPOINT_MIN_RECORDS`` records are new, so the log keeps a bounded number of files.

Directories of open write ids are never touched. Deleting is idempotent and a half-deleted
obsolete directory is still obsolete (selection is by name), so a killed vacuum is harmless.
Metastore tables: ``compaction.hms_clean`` adds the metastore's rule (no open transaction or lock
older than the compaction).
"""
from __future__ import annotations

import logging
import math
import re
import time
from dataclasses import dataclass, field
from typing import Optional

from ..acid.layout import STAGING_DIR
from ..acid.logstate import (
    ABORTED, LogState, install_names, installs_in_progress, load_state, read_events,
)
from ..acid.snapshot import ValidIdList
from ..acid.state import AcidState
from ..exceptions import InvalidOptionError, PathNotFoundError
from ..io.filesystem import FileSystem
from ..read.listing import list_table
from ..txn.logmaint import (
    checkpoint_log,
    finish_interrupted_installs,
    install_visible_since,
    prune_installs,
)
from ..write.staging import remove_staged

log = logging.getLogger(__name__)

DEFAULT_RETENTION_HOURS = 168.0
STAGING_GRACE_S = 600.0
CHECKPOINT_MIN_RECORDS = 10  # vacuum folds the log's records once at least this many are new
_STAGED = re.compile(r"^(\d{19})(-compaction)?$")


@dataclass
class VacuumResult:
    dry_run: bool
    obsolete: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    staging: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # obsolete, but within the retention
    bytes: int = 0
    log_checkpoint: Optional[int] = None  # seq of the log checkpoint written, if any

    @property
    def removed(self) -> list[str]:
        return self.obsolete + self.aborted + self.staging

    def to_json(self) -> dict:
        return {"dryRun": self.dry_run, "removed": sorted(self.removed),
                "obsolete": sorted(self.obsolete), "aborted": sorted(self.aborted),
                "staging": sorted(self.staging), "kept": sorted(self.kept),
                "numRemoved": len(self.removed), "bytesRemoved": self.bytes,
                "logCheckpoint": self.log_checkpoint}


def check_retention(retention_hours: float) -> float:
    """A number of hours >= 0 (a bool, NaN or infinity is a mistake, not a retention)."""
    if isinstance(retention_hours, bool):
        raise InvalidOptionError(f"retentionHours={retention_hours!r} is not a number of hours")
    try:
        value = float(retention_hours)
    except (TypeError, ValueError):
        raise InvalidOptionError(f"retentionHours={retention_hours!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise InvalidOptionError(f"retentionHours={retention_hours!r} must be a finite number "
                                 "of hours >= 0")
    return value


def check_dry_run(dry_run: object) -> bool:
    """``dryRun`` must be a bool: a string such as 'no' would otherwise count as True."""
    if not isinstance(dry_run, bool):
        raise InvalidOptionError(f"dryRun={dry_run!r} must be True or False")
    return dry_run


def vacuum(fs: FileSystem, table_path: str, *, retention_hours: float = DEFAULT_RETENTION_HOURS,
           dry_run: bool = False, now: Optional[float] = None,
           staging_grace_s: float = STAGING_GRACE_S) -> VacuumResult:
    """Clean a path-mode table (see the module docstring)."""
    retention_s = check_retention(retention_hours) * 3600.0
    dry_run = check_dry_run(dry_run)
    now = time.time() if now is None else now
    state = load_state(fs, table_path)
    snapshot = state.snapshot() if state is not None else None
    write_ids = snapshot or ValidIdList.all_valid()
    if not dry_run:
        finish_interrupted_installs(fs, table_path)
        prune_installs(fs, table_path)
    times, outputs = _commit_times(fs, table_path) if state is not None else ({}, {})
    result = VacuumResult(dry_run)
    _, listings = list_table(fs, table_path, write_ids, ValidIdList.all_valid(), False)
    root = table_path.rstrip("/")
    for pl in listings:
        st = pl.state
        rel = "" if pl.path.rstrip("/") == root else pl.path.rstrip("/")[len(root):].lstrip("/")
        result.aborted.extend(st.aborted)
        if not st.obsolete:
            continue
        since = _visible_since(st, rel, times, outputs)
        for p in st.obsolete:
            (result.obsolete if since is None and retention_s == 0
             or since is not None and now - since >= retention_s else result.kept).append(p)
    if state is not None:
        result.staging = _stale_staging(fs, table_path, state, times, now, staging_grace_s)
    sizes = {p: size_on_disk(fs, p) for p in result.removed}
    result.bytes = sum(sizes.values())
    if not dry_run:
        for p in result.removed:
            if p in result.staging:
                remove_staged(fs, p)  # and the staging area itself once empty
            else:
                fs.delete(p, recursive=True)
        if state is not None:
            result.log_checkpoint = checkpoint_log(fs, table_path, CHECKPOINT_MIN_RECORDS)
        log.info("vacuum of %s removed %d directories/files (%d bytes); kept %d within the "
                 "retention", table_path, len(result.removed), result.bytes, len(result.kept))
    return result


def _commit_times(fs: FileSystem, table_path: str) -> tuple[dict[int, tuple[str, float]],
                                                              dict[str, float]]:
    """(write id -> (state, time of its terminal record), output directory -> when it became
    visible: the end of its compaction's install, else that compaction's commit time)."""
    times: dict[int, tuple[str, float]] = {}
    outputs: dict[str, float] = {}
    installed = install_visible_since(fs, table_path)
    for ev in read_events(fs, table_path):
        times[ev.write_id] = (ev.state, ev.time)
        for out in ev.outputs:
            done = installed.get(fs.join(table_path, out).rstrip("/"), ev.time)
            outputs[out] = max(ev.time, done)
    return times, outputs


def _visible_since(st: AcidState, rel: str, times: dict[int, tuple[str, float]],
                   outputs: dict[str, float]) -> Optional[float]:
    """When the directories that hide the obsolete ones became visible (the newest of their
    times); None when one of them is unknown to the log (written by Hive)."""
    hiders = ([st.base] if st.base is not None else []) + [
        d for d in st.deltas + st.delete_deltas if d.statement_id < 0 or d.min_write_id != d.max_write_id]
    newest = 0.0
    for d in hiders:
        key = f"{rel}/{d.name}" if rel else d.name
        if key in outputs:
            newest = max(newest, outputs[key])
        elif d.is_base and d.write_id in times:
            newest = max(newest, times[d.write_id][1])
        else:
            return None
    return newest


def _stale_staging(fs: FileSystem, table_path: str, state: LogState, times: dict[int, tuple[str, float]],
                   now: float, grace_s: float) -> list[str]:
    root = fs.join(table_path, STAGING_DIR)
    try:
        children = fs.list_dir(root)
    except PathNotFoundError:
        return []
    busy = set(installs_in_progress(fs, table_path, install_names(fs, table_path)))
    out = []
    for c in children:
        m = _STAGED.match(c.name)
        if not m:
            continue
        w = int(m.group(1))
        if w in busy:
            continue  # an unfinished install still needs it (finish_interrupted_installs)
        if w in times and now - times[w][1] >= grace_s and state.is_terminated(w):
            out.append(c.path)
    return out


def size_on_disk(fs: FileSystem, path: str) -> int:
    st = fs.status(path)
    if st is None:
        return 0
    if not st.is_dir:
        return st.size
    try:
        return sum(size_on_disk(fs, c.path) if c.is_dir else c.size for c in fs.list_dir(path))
    except PathNotFoundError:
        return 0



def remove_aborted_compaction_staging(fs: FileSystem, table_path: str) -> list[str]:
    """Remove the staged output of compactions whose write id is aborted (a killed compaction,
    aborted as stale by the next writer): an aborted compaction never installs anything. Path
    mode; best effort (returns what was removed)."""
    state = load_state(fs, table_path)
    if state is None:
        return []
    try:
        children = fs.list_dir(fs.join(table_path, STAGING_DIR))
    except PathNotFoundError:
        return []
    out = []
    for c in children:
        m = _STAGED.match(c.name)
        if m and m.group(2) and state.state_of(int(m.group(1))) == ABORTED:
            remove_staged(fs, c.path)
            out.append(c.path)
    return out
