"""Driver side: publish staged files into the table, then commit the write id.

Order matters for atomicity (path mode):

1. record the directories about to be created (``intents``), so an abort can remove them;
2. create ``base_W`` / ``delta_W_W_S`` / ``delete_delta_W_W_S`` directories and rename the staged
   files into them. W is still *open* in the transaction log, so every reader that takes its
   snapshot from the log ignores these directories, however many partitions are involved;
3. append the commit record: from this instant the whole write is visible, all at once.

If anything fails before step 3 the write id is aborted and its directories removed.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.orc as po

from ..acid import bucket_codec, txnlog
from ..acid.names import base_dir_name, bucket_file_name, is_hidden, parse_acid_dir
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem
from .acid_file import BASE_STRIPE_SIZE, AcidFileWriter, write_acid_version_file, write_empty_file
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


def list_partitions(fs: FileSystem, table_path: str, depth: int) -> list[str]:
    """Relative leaf partition directories that exist (``['']`` for an unpartitioned table)."""
    if depth == 0:
        return [""]
    level = [""]
    for _ in range(depth):
        nxt = []
        for rel in level:
            base = fs.join(table_path, rel) if rel else table_path
            for c in fs.list_dir(base):
                if c.is_dir and not is_hidden(c.name) and "=" in c.name and parse_acid_dir(c.name) is None:
                    nxt.append(f"{rel}/{c.name}" if rel else c.name)
        level = nxt
    return sorted(level)


def _merge_group(fs: FileSystem, table: TableSpec, files: Sequence[StagedFile], stage_root: str,
                 write_id: int) -> StagedFile:
    """Several tasks staged the same (partition, directory, N): rewrite them as one file."""
    first = files[0]
    path = fs.join(stage_root, "_merged", *([first.partition] if first.partition else []),
                   first.dir_name, bucket_file_name(first.bucket))
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
        bp = bucket_codec.encode(first.bucket, stmt)
        for f in files:
            orc = po.ORCFile(fs.open_input(f.path))
            for i in range(orc.nstripes):
                row = orc.read_stripe(i, columns=["row"]).column(0)
                w.write_inserts(_struct_to_batch(row), write_id, bp)
    s = w.close()
    log.info("Merged %d staged files into %s", len(files), path)
    return StagedFile(first.partition, first.dir_name, first.bucket, s.path, s.inserts, s.deletes)


def _struct_to_batch(row: pa.Array) -> pa.RecordBatch:
    if isinstance(row, pa.ChunkedArray):
        row = row.combine_chunks()
    return pa.RecordBatch.from_arrays(row.flatten(), names=[f.name for f in row.type])


def publish(fs: FileSystem, table: TableSpec, txn: txnlog.Transaction, staged: Iterable[StagedFile],
            *, empty_bases: Sequence[str] = (), partition_dirs: Optional[Mapping[str, str]] = None,
            record_intent: Optional[Callable[[list[str]], None]] = None) -> CommitResult:
    """Move staged files into their final directories (steps 1-2 of the module docstring).

    ``empty_bases``: partitions that get a ``base_W`` holding one empty ACID file (insert overwrite
    of a partition that received no rows).

    ``txn`` only needs a ``write_id``. ``partition_dirs`` maps a relative partition path
    (``k=v/k2=v2``) to its directory when it is not below the table (metastore partitions with
    their own location). ``record_intent(dirs)`` replaces the path-mode log's intent record (the
    metastore mode keeps the list in memory instead of writing ``_hiveacid_txnlog``).
    """
    W = txn.write_id
    groups: dict[tuple[str, str, int], list[StagedFile]] = defaultdict(list)
    for f in staged:
        groups[(f.partition, f.dir_name, f.bucket)].append(f)
    stage_root = txnlog.staging_dir(fs, table.table_path, W)
    final: list[StagedFile] = []
    for key in sorted(groups):
        files = groups[key]
        final.append(files[0] if len(files) == 1 else _merge_group(fs, table, files, stage_root, W))
    bases = [p for p in empty_bases if (p, base_dir_name(W)) not in {(f.partition, f.dir_name) for f in final}]

    def abs_dir(partition: str, dir_name: str) -> str:
        if partition and partition_dirs and partition in partition_dirs:
            return fs.join(partition_dirs[partition], dir_name)
        return fs.join(table.table_path, partition, dir_name) if partition \
            else fs.join(table.table_path, dir_name)

    dirs = sorted({abs_dir(f.partition, f.dir_name) for f in final}
                  | {abs_dir(p, base_dir_name(W)) for p in bases})
    if record_intent is None:
        txnlog.record_intent(fs, table.table_path, W, dirs)
    else:
        record_intent(dirs)
    for d in dirs:
        fs.mkdirs(d)
        write_acid_version_file(fs, d)
    result = CommitResult(W)
    for f in final:
        fs.rename(f.path, fs.join(abs_dir(f.partition, f.dir_name), bucket_file_name(f.bucket)))
        result.inserted += f.inserts
        result.deleted += f.deletes
        result.files += 1
    for p in bases:
        write_empty_file(fs, fs.join(abs_dir(p, base_dir_name(W)), bucket_file_name(0)),
                         table.row_type, table.compression)
        result.files += 1
    result.partitions = sorted({f.partition for f in final} | set(bases))
    return result


def commit_write(fs: FileSystem, table: TableSpec, txn: txnlog.Transaction,
                 staged: Iterable[StagedFile], *, empty_bases: Sequence[str] = (),
                 dml_partitions: Optional[Sequence[str]] = None) -> CommitResult:
    """Publish and commit; on any failure abort W (removing what was published) and re-raise."""
    try:
        result = publish(fs, table, txn, staged, empty_bases=empty_bases)
        dml = sorted(set(dml_partitions)) if dml_partitions is not None else []
        txnlog.commit(fs, txn, partitions=result.partitions, dml_partitions=dml,
                      metrics=result.metrics)
    except BaseException as e:
        if not isinstance(e, HiveAcidError):
            log.error("Commit of write id %d on %s failed: %s", txn.write_id, table.table_path, e)
        try:
            txnlog.abort(fs, table.table_path, txn.write_id, f"commit failed: {e}")
        except Exception as e2:  # noqa: BLE001
            log.error("Could not abort write id %d: %s", txn.write_id, e2)
        raise
    txnlog.cleanup(fs, table.table_path, txn.write_id, published=False)
    return result
