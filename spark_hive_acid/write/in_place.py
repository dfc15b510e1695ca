"""Writes on stores without rename (object stores): every file at its final name.

Where ``fs.writes_in_place`` (S3), a write renames nothing (docs/writing.md, "Object stores"):

* A task writes each file whose name is its own (``delta_W_W_S/bucket_N`` with N or S its task
  index, a delete file of the one task that gets its (partition, writer id)) straight to that
  name, with a conditional create: it appears whole on close or not at all, and never replaces
  another file. A second attempt of the same task finding its name taken (an earlier attempt
  placed it, then failed) keeps that file and reports it (:func:`existing_summary`). Files
  several tasks share a name for (a bucketed overwrite's ``base_W/bucket_N``) are staged and
  merged into place by the commit, as elsewhere.
* W's directories are invisible until W commits (every reader honours the snapshot; the write id
  is unique to W), so nothing needs moving: the commit record (path mode) or ``commit_txn``
  makes them visible all at once.
* An abort removes them: :func:`remove_write_dirs` finds W's directories by name, including
  those a killed job's tasks wrote before the commit recorded any intent.

Compaction outputs are named by the compactor's high watermark, not by their transaction, and
are written in place too; a claim file (:data:`CLAIM_FILE`) in each output directory says which
compaction owns it (``compaction.runner``), so an abort's sweep never takes one.
"""
from __future__ import annotations

import json
import logging
from typing import Optional

import pyarrow.orc as po
import pyarrow.parquet as pq

from ..acid.names import ParsedDir
from ..acid.partition_tree import walk_partitions
from ..exceptions import HiveAcidError, PathNotFoundError
from ..io.filesystem import FileSystem

log = logging.getLogger(__name__)

#: In a compaction's output directory written in place: ``{"compaction": id}`` (hidden name).
CLAIM_FILE = "_hiveacid_claim"


def final_path(fs: FileSystem, table_path: str, partition: str, dir_name: str,
               file_name: str) -> str:
    """Where a file of ``partition`` (relative, ``k=v/...``; '' unpartitioned) ends up."""
    return fs.join(table_path, *([partition] if partition else []), dir_name, file_name)


def existing_summary(fs: FileSystem, path: str, *, deletes: bool = False,
                     file_format: str = "orc") -> tuple[int, int]:
    """``(inserts, deletes)`` of a file another attempt of the same task placed: its ACID stats,
    else its row count."""
    with fs.open_input(path) as f:
        if file_format == "parquet":
            rows = pq.ParquetFile(f).metadata.num_rows
            return rows, 0
        orc = po.ORCFile(f)
        stats = orc.metadata.get(b"hive.acid.stats") if orc.metadata else None
        rows = orc.nrows
    if stats:
        ins, _, dels = (int(v) for v in stats.decode("ascii").split(","))
        return ins, dels
    return (0, rows) if deletes else (rows, 0)


def _owned_by_write(d: ParsedDir, write_id: int) -> bool:
    """``d`` is one of write id W's own directories: ``base_W``, ``delta_W_W_S``,
    ``delete_delta_W_W_S`` (a statement id: compactions write none), no visibility suffix."""
    if d.min_write_id != write_id or d.max_write_id != write_id or d.visibility_txn:
        return False
    return d.is_base or d.statement_id >= 0


def write_dirs(fs: FileSystem, table_path: str, write_id: int) -> list[str]:
    """Write id W's directories under ``table_path`` (one walk of the partitions), leaving out
    any that a compaction claimed (a major compaction's ``base_H`` may have H = an aborted W)."""
    try:
        tree = walk_partitions(fs, table_path)
    except PathNotFoundError:
        return []
    out = []
    for d in tree.acid_dirs():
        if _owned_by_write(d, write_id) and not (d.is_base and fs.exists(fs.join(d.path,
                                                                               CLAIM_FILE))):
            out.append(d.path)
    return out


def remove_write_dirs(fs: FileSystem, table_path: str, write_id: int) -> list[str]:
    """Remove write id W's directories (W aborted: see the module docstring); returns them.
    Never raises: an abort's cleanup must not hide its outcome (leftovers are invisible, and
    vacuum removes aborted directories)."""
    try:
        dirs = write_dirs(fs, table_path, write_id)
        for d in dirs:
            fs.delete(d, recursive=True)
    except (HiveAcidError, OSError) as e:
        log.warning("Could not remove the directories of aborted write id %d in %s: %s",
                    write_id, table_path, e)
        return []
    if dirs:
        log.info("Removed %d directories of aborted write id %d in %s", len(dirs), write_id,
                 table_path)
    return dirs


def claim(fs: FileSystem, directory: str, owner: int) -> bool:
    """Claim a compaction output directory for compaction ``owner`` (create-if-absent)."""
    return fs.create_exclusive(fs.join(directory, CLAIM_FILE),
                               json.dumps({"compaction": int(owner)}).encode("ascii"))


def claimed_by(fs: FileSystem, directory: str) -> Optional[int]:
    """The compaction that claimed ``directory``, or None."""
    try:
        return int(json.loads(fs.read_bytes(fs.join(directory, CLAIM_FILE)))["compaction"])
    except (HiveAcidError, OSError, ValueError, KeyError, TypeError):
        return None
