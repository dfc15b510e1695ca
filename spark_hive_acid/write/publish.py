"""Publishing a write's staged files under their final names (the first half of a commit).

Tasks stage their files under ``<table>/_hiveacid_staging/<W>/`` (hidden). :func:`publish` records the
table directories it is about to create (so an abort can remove them), creates ``base_W`` /
``delta_W_W_S`` / ``delete_delta_W_W_S`` directories and renames the staged files into them. W is
still uncommitted, so no snapshot reads these directories yet, however many partitions they span;
the transaction's commit (``spark_hive_acid.txn.committer``) makes them visible all at once.

On a store that writes in place (object stores, ``write.in_place``) most files are at their final
names already (their tasks put them there); files several tasks staged under one name are merged
straight into place, and a lone staged file of such a name is copied in (S3 ``CopyObject``).
Nothing is renamed.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
import pyarrow.orc as po

from ..acid import bucket_codec
from ..acid.layout import staging_dir
from ..acid.names import base_dir_name, parse_acid_dir
from ..io.filesystem import FileSystem
from .acid_file import (
    BASE_STRIPE_SIZE,
    AcidFileWriter,
    copy_insert_events,
    write_acid_version_file,
    write_empty_file,
)
from .plain_file import merge_plain_files, write_empty_plain_file
from .task_writer import StagedFile, TableSpec

log = logging.getLogger(__name__)



@dataclass
class CommitResult:
    write_id: int
    partitions: list[str] = field(default_factory=list)
    inserted: int = 0
    deleted: int = 0
    files: int = 0

    @property
    def metrics(self) -> dict:
        return {"numInsertedRows": self.inserted, "numDeletedRows": self.deleted,
                "numFiles": self.files}


def _merge_group(fs: FileSystem, table: TableSpec, files: Sequence[StagedFile], path: str,
                 write_id: int) -> StagedFile:
    """Several tasks staged the same (partition, directory, N): rewrite them as one file at
    ``path`` (in staging, or its final name on a store that writes in place)."""
    first = files[0]
    if table.insert_only:
        s = merge_plain_files(fs, [f.path for f in files], path, table.row_type,
                              table.file_format, table.compression, BASE_STRIPE_SIZE)
        log.info("Merged %d staged files into %s", len(files), path)
        return StagedFile(first.partition, first.dir_name, first.bucket, s.path, s.inserts)
    parsed = parse_acid_dir(first.dir_name)
    stmt = parsed.stmt_for_pruning if parsed is not None else 0
    w = AcidFileWriter(fs, path, table.row_type, compression=table.compression,
                       stripe_size=BASE_STRIPE_SIZE)
    if any(f.deletes for f in files):
        keys = []
        for f in files:
            t = po.ORCFile(fs.open_input(f.path)).read(
                columns=["originalTransaction", "bucket", "rowId"])
            keys.append([t.column(i).to_numpy() for i in range(3)])
        owid, bp, rid = (np.concatenate([k[i] for k in keys]) for i in range(3))
        order = np.lexsort((rid, bp, owid))
        w.write_deletes(owid[order], bp[order], rid[order], write_id)
    else:
        bucket_property = bucket_codec.encode(first.bucket, stmt)
        for f in files:
            copy_insert_events(fs, f.path, w, write_id, bucket_property)
    s = w.close()
    log.info("Merged %d staged files into %s", len(files), path)
    return StagedFile(first.partition, first.dir_name, first.bucket, s.path, s.inserts, s.deletes)


def publish(fs: FileSystem, table: TableSpec, txn: Any, staged: Iterable[StagedFile],
            *, empty_bases: Sequence[str] = (), partition_dirs: Optional[Mapping[str, str]] = None,
            record_intent: Optional[Callable[[list[str]], None]] = None) -> CommitResult:
    """Move staged files into their final directories (see the module docstring).

    ``empty_bases``: partitions that get a ``base_W`` holding one empty data file (insert overwrite
    of a partition that received no rows).

    ``txn`` needs a ``write_id`` and ``record_intent(dirs)`` (the transaction remembers what an abort
    must remove); ``record_intent`` given here replaces the latter. ``partition_dirs`` maps a
    relative partition path (``k=v/k2=v2``) to its directory when it is not below the table
    (metastore partitions with their own location).
    """
    W = txn.write_id
    groups: dict[tuple[str, str, int], list[StagedFile]] = defaultdict(list)
    for f in staged:
        groups[(f.partition, f.dir_name, f.bucket)].append(f)
    stage_root = staging_dir(fs, table.table_path, W)

    def abs_dir(partition: str, dir_name: str) -> str:
        if partition and partition_dirs and partition in partition_dirs:
            return fs.join(partition_dirs[partition], dir_name)
        return fs.join(table.table_path, partition, dir_name) if partition \
            else fs.join(table.table_path, dir_name)

    def merged_path(f: StagedFile) -> str:
        if fs.writes_in_place:  # written once, at its final name (write.in_place)
            return fs.join(abs_dir(f.partition, f.dir_name), table.data_file_name(f.bucket))
        return fs.join(stage_root, "_merged", *([f.partition] if f.partition else []),
                       f.dir_name, table.data_file_name(f.bucket))

    final: list[StagedFile] = []
    for key in sorted(groups):
        files = groups[key]
        final.append(files[0] if len(files) == 1
                     else _merge_group(fs, table, files, merged_path(files[0]), W))
    bases = [p for p in empty_bases if (p, base_dir_name(W)) not in {(f.partition, f.dir_name) for f in final}]

    dirs = sorted({abs_dir(f.partition, f.dir_name) for f in final}
                  | {abs_dir(p, base_dir_name(W)) for p in bases})
    (txn.record_intent if record_intent is None else record_intent)(dirs)
    for d in dirs:
        fs.mkdirs(d)
        if not table.insert_only:  # insert-only directories hold data files only (Hive's MM writes)
            write_acid_version_file(fs, d)
    result = CommitResult(W)
    for f in final:
        dest = fs.join(abs_dir(f.partition, f.dir_name), table.data_file_name(f.bucket))
        if f.path != dest:  # else written in place by its task, or merged into place above
            if fs.writes_in_place:  # no rename: a staged file of a shared name, copied in
                fs.copy_file(f.path, dest)
                if not f.path.startswith(stage_root.rstrip("/") + "/"):
                    fs.delete(f.path)  # placed below the table, its partition lives elsewhere
            else:
                fs.rename(f.path, dest)
        result.inserted += f.inserts
        result.deleted += f.deletes
        result.files += 1
    for p in bases:
        empty = fs.join(abs_dir(p, base_dir_name(W)), table.data_file_name(0))
        if table.insert_only:
            write_empty_plain_file(fs, empty, table.row_type, table.file_format, table.compression)
        else:
            write_empty_file(fs, empty, table.row_type, table.compression)
        result.files += 1
    result.partitions = sorted({f.partition for f in final} | set(bases))
    return result
