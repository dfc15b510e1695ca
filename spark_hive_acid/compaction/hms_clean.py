"""``vacuum`` of a table named in a Hive Metastore: Hive's Cleaner rule, then the retention.

What the current snapshot's ``getAcidState`` calls obsolete in a partition goes only when

* what hides it (a base or compacted delta) was installed by a compaction of ours, whose install
  record (``txn.committer.commit_compaction``) holds the global txn high watermark C just after
  its commit: no transaction still open has an id <= C, and no lock on the table is held by a
  transaction <= C (or, without a transaction, was acquired before the install), so no reader
  that could have planned before the output existed is still running (Hive 3's Cleaner waits
  for such locks, Hive 4's for such transactions); and the install is ``retention_hours`` old;
* or, when the hider is unknown (written by Hive, or by an INSERT OVERWRITE), only with
  ``retention_hours=0`` and no open transaction or lock on the table at all.

Aborted directories go at once (no snapshot reads an aborted transaction's files). Leftover
staging of a killed compaction is not removed here (its age is not known without a log).
"""
from __future__ import annotations

import logging
import time
from typing import Any, Optional, Sequence

from ..acid.log_records import Install
from ..acid.logstate import install_names, installs_done
from ..acid.state import AcidState
from ..catalog.hms import MetastoreTable
from ..io.filesystem import FileSystem
from ..metastore.model import LockInfo
from ..txn.logmaint import finish_interrupted_installs
from .cleaner import VacuumResult, check_dry_run, check_retention, size_on_disk

log = logging.getLogger(__name__)


def installed_dirs(fs: FileSystem, table_path: str) -> dict[str, tuple[Install, float, bool]]:
    """Final directory -> (the install record of the finished compaction that created it, when
    that install ended: the output became visible then, whether it ended late: finished by
    another process after the compaction died)."""
    out = {}
    for rec, done in installs_done(fs, table_path, install_names(fs, table_path)).values():
        for _, final in rec.pairs:
            out[final.rstrip("/")] = (rec, done.time if done is not None else rec.time,
                                      bool(done is not None and done.late))
    return out


def why_kept(st: AcidState, installs: dict[str, tuple[Install, float, bool]],
             open_ids: Sequence[int], locks: Sequence[LockInfo], now: float, retention_s: float
             ) -> Optional[str]:
    """Why the obsolete directories of a partition must stay (None: they may go)."""
    hiders = ([st.base] if st.base is not None else []) + [
        d for d in st.deltas + st.delete_deltas
        if d.statement_id < 0 or d.min_write_id != d.max_write_id]
    for d in hiders:
        found = installs.get(d.path.rstrip("/"))
        if found is None or "txnHighWatermark" not in found[0].extra:
            if retention_s > 0:
                return f"{d.name} was not made by a compaction of ours: only retentionHours=0"
            if open_ids or locks:
                return f"{d.name} has no known age, and transactions or locks are open"
            continue
        rec, visible_since, late = found
        # a late install became visible after transactions above its commit's high watermark
        # began: any of them may have planned a read of what it replaced
        # an install in place (object stores) recorded no watermark after its commit either
        c = int(rec.extra["txnHighWatermark"]) if not (late or "txnHighWatermark" not in rec.extra) \
            else max(open_ids, default=0)
        if now - visible_since < retention_s:
            return f"{d.name} is younger than the retention"
        older = [t for t in open_ids if t <= c]
        if older:
            return f"transaction {older[0]} is open and may read what {d.name} replaced"
        for lk in locks:
            if (lk.txn_id and lk.txn_id <= c) or (
                    not lk.txn_id and (lk.acquired_ms or 0) / 1000.0 < visible_since):
                return f"lock {lk.lock_id} (txn {lk.txn_id}) predates {d.name}"
    return None


def vacuum_metastore_table(table: MetastoreTable, retention_hours: float, dry_run: bool,
                           now: Optional[float] = None) -> dict[str, Any]:
    """Clean a metastore table (see the module docstring); the result as ``VacuumResult``'s
    JSON, plus ``reasons`` (partition -> why its obsolete directories were kept)."""
    retention_s = check_retention(retention_hours) * 3600.0
    dry_run = check_dry_run(dry_run)
    now = time.time() if now is None else now
    fs, location = table.location()
    if not dry_run:
        finish_interrupted_installs(fs, location, state_of=table.compaction_state)
    scan = table.scan()
    with table.client() as c:
        open_ids = c.txn_states().open_ids
        locks = c.show_locks(table.db, table.name)
    installs = installed_dirs(fs, location)
    result = VacuumResult(dry_run)
    reasons = {}
    for pl in scan.plan.partitions:
        st = pl.state
        result.aborted.extend(st.aborted)
        if not st.obsolete:
            continue
        why = why_kept(st, installs, open_ids, locks, now, retention_s)
        if why is None:
            result.obsolete.extend(st.obsolete)
        else:
            result.kept.extend(st.obsolete)
            reasons[pl.path] = why
    result.bytes = sum(size_on_disk(fs, p) for p in result.removed)
    if not dry_run:
        for p in result.removed:
            fs.delete(p, recursive=True)
        log.info("vacuum of %s removed %d directories/files; kept %d (%s)", table.display,
                 len(result.removed), len(result.kept), reasons)
    return {**result.to_json(), "reasons": reasons}
