"""The staging directory of a write id: opened before any task stages, removed when the write ends.

Tasks stage their files under ``<table>/_hiveacid_staging/<W>/`` (hidden from every reader). When
a Spark job fails, Spark aborts it while sibling tasks may still be running: a task that finishes
after the abort removed the staging directory would leave its files (and the directories it
created) behind. So the driver opens W's directory with a marker before the tasks start
(:func:`open_staging`), the abort removes the marker first (:func:`remove_staging`), and each task,
once its files are closed, checks the marker (:func:`keep_or_discard`): gone means the job was
aborted, and the task removes what it staged. Checking after the files are closed leaves no window:
if the marker is still there, the abort has not begun and will remove the task's files itself.
"""
from __future__ import annotations

import logging

from ..acid.layout import STAGING_DIR, staging_dir
from ..exceptions import TransactionAbortedError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

#: Present while W's tasks may stage; removed first when W ends.
OPEN_MARKER = "_open"


def open_staging(fs: FileSystem, table_path: str, write_id: int) -> str:
    """Create W's staging directory with its marker (before any task stages); returns it."""
    root = staging_dir(fs, table_path, write_id)
    for attempt in range(3):  # a concurrent writer may remove the empty parent meanwhile
        try:
            fs.mkdirs(root)
            fs.write_bytes(fs.join(root, OPEN_MARKER), b"")
            return root
        except FileNotFoundError:
            if attempt == 2:
                raise
    return root


def remove_staging(fs: FileSystem, table_path: str, write_id: int) -> None:
    """Remove W's staging directory (marker first, so that tasks still running see the end), and
    the parent ``_hiveacid_staging`` when no other write uses it. Never raises: cleanup must not
    hide the real outcome."""
    root = staging_dir(fs, table_path, write_id)
    try:
        fs.delete(fs.join(root, OPEN_MARKER))
        fs.delete(root, recursive=True)
    except Exception as e:  # noqa: BLE001
        log.warning("could not remove %s: %s", root, e)
        return
    _remove_if_empty(fs, fs.join(table_path, STAGING_DIR))


def remove_staged(fs: FileSystem, path: str) -> None:
    """Remove one directory of the staging area (a compaction's output, say) and the area itself
    when nothing else is staged there. Never raises."""
    try:
        fs.delete(path, recursive=True)
    except Exception as e:  # noqa: BLE001 - cleanup must not hide the real outcome
        log.warning("could not remove %s: %s", path, e)
        return
    parent = path.rstrip("/").rsplit("/", 1)[0]
    if parent.rsplit("/", 1)[-1] == STAGING_DIR:
        _remove_if_empty(fs, parent)


def keep_or_discard(fs: FileSystem, table_path: str, write_id: int, task_dir: str) -> None:
    """Called by a task once its staged files (under ``task_dir``) are closed: when W's staging
    was removed meanwhile (the job was aborted), remove them and raise TransactionAbortedError."""
    root = staging_dir(fs, table_path, write_id)
    if fs.exists(fs.join(root, OPEN_MARKER)):
        return
    fs.delete(task_dir, recursive=True)
    _remove_if_empty(fs, root)
    _remove_if_empty(fs, fs.join(table_path, STAGING_DIR))
    raise TransactionAbortedError(
        f"Write id {write_id} of {table_path} ended while this task was staging; its files were "
        "removed")


def _remove_if_empty(fs: FileSystem, path: str) -> None:
    try:
        if fs.exists(path) and not fs.list_dir(path):
            fs.delete(path)
    except Exception as e:  # noqa: BLE001 - another writer just used it: leave it
        log.debug("left %s: %s", path, e)
