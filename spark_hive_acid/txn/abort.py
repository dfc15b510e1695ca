"""The one rule for ending a write that failed (docs/writing.md): abort its transaction, and
remove its staged files only once the abort is confirmed.

When the outcome of the commit is unknown (the metastore connection broke during ``commit_txn``),
or the abort cannot be confirmed (the metastore is out of reach), nothing is removed: the files
may be committed, and whoever finishes the abort later (the keep-alive process, the next writer's
stale rule) needs the intents that staging holds. Every writer ends a failed write here
(``txn.session.WriteSession``, ``txn.committer``, the Spark writer, the streaming sink,
compaction).
"""
from __future__ import annotations

import logging
from typing import Optional, Protocol

from ..io.filesystem import FileSystem
from ..write.staging import remove_staged, remove_staging

log = logging.getLogger(__name__)


class Abortable(Protocol):
    """A transaction or its handle: something that aborts, saying whether that is confirmed."""

    @property
    def write_id(self) -> int: ...

    def abort(self, reason: str) -> Optional[bool]: ...


def abort_and_clean(fs: FileSystem, table_path: str, txn: Abortable, reason: str, *,
                    staged_dir: Optional[str] = None) -> bool:
    """Abort ``txn`` and, once that is confirmed, remove its staging (``staged_dir``: a staging
    directory of its own, a compaction's). Returns whether the abort was confirmed. Never raises
    for the abort itself: the error that led here matters more."""
    if getattr(txn, "commit_state_unknown", False):
        log.error("Write id %s of %s: the outcome of its commit is unknown; nothing is aborted "
                  "or removed (%s)", txn.write_id, table_path, reason)
        return False
    try:
        confirmed = txn.abort(reason) is not False
    except Exception as e:  # noqa: BLE001 - the original error matters more
        log.error("Could not abort write id %s of %s: %s", txn.write_id, table_path, e)
        confirmed = False
    if confirmed:
        if staged_dir is not None:
            remove_staged(fs, staged_dir)
        elif txn.write_id is not None:
            remove_staging(fs, table_path, txn.write_id)
    return confirmed
