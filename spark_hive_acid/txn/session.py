"""One write session: the lifecycle every writer that runs in one process goes through.

``with WriteSession(fs, table_path, txn, "what") as session:`` opens the write id's staging and
keeps the transaction alive while the block stages files; ``session.commit(spec, staged, ...)``
publishes and commits through :func:`~spark_hive_acid.txn.committer.commit_write`. Leaving the
block by an exception before the commit ends the write by the one rule of
:func:`~spark_hive_acid.txn.abort.abort_and_clean` (abort; staged files go only once the abort is
confirmed), which the commit path also follows when the commit itself fails. Writers whose work
spans processes (the Spark writer, the streaming sink) use :func:`abort_and_clean` directly.
"""
from __future__ import annotations

from typing import Any, Optional

from ..io.filesystem import FileSystem
from ..write.publish import CommitResult
from ..write.staging import open_staging
from ..write.task_writer import StagedFile, TableSpec
from .abort import abort_and_clean
from .committer import commit_write


class WriteSession:
    """See the module docstring."""

    def __init__(self, fs: FileSystem, table_path: str, txn: Any, what: str, *,
                 staged_dir: Optional[str] = None, open_stage: bool = True):
        self.fs, self.table_path, self.txn, self.what = fs, table_path, txn, what
        self.staged_dir = staged_dir
        self.open_stage = open_stage
        self._ended = False
        self._keep_alive: Any = None

    def __enter__(self) -> "WriteSession":
        try:
            if self.open_stage:
                open_staging(self.fs, self.table_path, self.txn.write_id)
            self._keep_alive = self.txn.keep_alive()
            self._keep_alive.__enter__()
        except BaseException as e:
            self._fail(e)
            raise
        return self

    def commit(self, table: TableSpec, staged: list[StagedFile], **kwargs: Any) -> CommitResult:
        """Publish ``staged`` and commit (``commit_write``'s keyword arguments); the transaction
        has ended afterwards either way (a failed commit ends it by the same rule)."""
        self._ended = True
        return commit_write(self.fs, table, self.txn, staged, **kwargs)

    def _fail(self, e: BaseException) -> None:
        if not self._ended:
            self._ended = True
            abort_and_clean(self.fs, self.table_path, self.txn,
                            f"{self.what} failed: {type(e).__name__}: {e}",
                            staged_dir=self.staged_dir)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        try:
            if self._keep_alive is not None:
                self._keep_alive.__exit__(exc_type, exc, tb)
        finally:
            if exc is not None:
                self._fail(exc)
