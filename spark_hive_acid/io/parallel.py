"""Listing many directories at once: the planner's bottleneck on a remote file system.

On HDFS every ``list_dir`` is a NameNode round trip (a few milliseconds on a real cluster), so a
table with thousands of partitions spends seconds listing them one after the other. A thread pool
overlaps those round trips; see docs/storage.md for measurements.
"""
from __future__ import annotations

import logging
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Iterable

from ..exceptions import PathNotFoundError
from .filesystem import FileStatus, FileSystem

_log = logging.getLogger(__name__)


def list_dirs_parallel(fs: FileSystem, paths: Iterable[str], max_workers: int = 16, *,
                       missing_ok: bool = False) -> dict[str, list[FileStatus]]:
    """``{path: fs.list_dir(path)}`` for every path, listed by up to ``max_workers`` threads.

    The result keeps the order of ``paths`` (duplicates listed once). The first error is raised
    and the listings not yet started are cancelled; with ``missing_ok`` a directory that does not
    exist (dropped meanwhile) lists as empty instead.
    """
    todo = list(dict.fromkeys(paths))

    def one(path: str) -> list[FileStatus]:
        try:
            return fs.list_dir(path)
        except PathNotFoundError:
            if missing_ok:
                return []
            raise

    if not todo:
        return {}
    workers = max(1, min(int(max_workers), len(todo)))
    if workers == 1:
        return {p: one(p) for p in todo}
    _log.debug("Listing %d directories with %d threads", len(todo), workers)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hive-acid-list") as pool:
        futures = {p: pool.submit(one, p) for p in todo}
        done, _ = wait(futures.values(), return_when=FIRST_EXCEPTION)
        for f in done:
            error = f.exception()
            if error is not None:
                for other in futures.values():
                    other.cancel()
                raise error
        return {p: futures[p].result() for p in todo}
