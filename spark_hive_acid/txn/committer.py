"""Publish and commit: the one commit path of every writer, for either kind of transaction.

1. :func:`~spark_hive_acid.write.publish.publish` records the directories it is about to create
   (``txn.record_intent``), creates them and renames the staged files into them. The write id is
   still uncommitted, so no snapshot reads them yet.
2. ``txn.register_partitions``: the partitions written become known where the catalog needs them
   (the metastore: new partitions and the transaction's dynamic-partition write set).
3. ``txn.commit``: from this instant the whole write is visible, all at once; the conflict rules
   of the transaction apply here (a concurrent commit that conflicts makes this one fail, and
   nothing of it stays).

On any failure before the commit went through, the transaction is aborted, which removes the
directories it published. When the outcome of the commit itself is unknown (the metastore
connection broke during ``commit_txn``), or an abort cannot be confirmed, nothing is removed: the
files may be committed, and whoever finishes the abort (the keep-alive process) finds what was
published in the staging directory's intents. Otherwise the staging directory is removed.
"""
from __future__ import annotations

import logging
from typing import Iterable, Mapping, Optional, Sequence

from ..acid.names import parse_acid_dir
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem
from ..acid.layout import staging_dir
from ..write.publish import CommitResult, publish
from ..write.task_writer import StagedFile, TableSpec
from .base import DML_OPERATIONS, Transaction, WriteSet

log = logging.getLogger(__name__)


def commit_write(fs: FileSystem, table: TableSpec, txn: Transaction,
                 staged: Iterable[StagedFile], *, empty_bases: Sequence[str] = (),
                 dml_partitions: Optional[Sequence[str]] = None, static_overwrite: bool = False,
                 inserts_unmatched: bool = False,
                 properties: Optional[Mapping[str, str]] = None) -> CommitResult:
    """Publish ``staged`` and commit ``txn`` (see the module docstring); returns what was committed.

    ``empty_bases``: partitions that get a ``base_W`` holding one empty ACID file (an overwrite of
    a partition that received no rows). What the write changes, for the conflict rules, is read
    from the staged files; ``dml_partitions`` (where it deletes rows; default: where it staged
    delete events), ``static_overwrite`` (it replaces the whole table) and ``inserts_unmatched``
    (a MERGE inserting rows no target row matched) complete it. ``properties`` are recorded
    with the commit (``Transaction.commit``).
    """
    staged = list(staged)
    write_set = _write_set(txn, staged, empty_bases, dml_partitions, static_overwrite,
                           inserts_unmatched)
    try:
        result = publish(fs, table, txn, staged, empty_bases=empty_bases,
                         partition_dirs=txn.partition_dirs())
        txn.register_partitions([p for p in result.partitions if p])
        txn.commit(result, write_set=write_set, properties=properties)
    except BaseException as e:
        if not isinstance(e, HiveAcidError):
            log.error("Commit of write id %d on %s failed: %s", txn.write_id, table.table_path, e)
        confirmed = False
        if not txn.commit_state_unknown:
            try:
                confirmed = txn.abort(f"commit failed: {type(e).__name__}: {e}") is not False
            except Exception as e2:  # noqa: BLE001 - the original error matters more
                log.error("Could not abort write id %d: %s", txn.write_id, e2)
        if confirmed:  # else whoever finishes the abort needs the intents staging holds
            remove_quietly(fs, staging_dir(fs, table.table_path, txn.write_id))
        raise
    remove_quietly(fs, staging_dir(fs, table.table_path, txn.write_id))
    log.info("Write id %d (%s) committed on %s: %s", txn.write_id, txn.operation,
             table.table_path, result.metrics)
    return result


def _write_set(txn: Transaction, staged: Sequence[StagedFile], empty: Sequence[str],
               dml_partitions: Optional[Sequence[str]], static_overwrite: bool,
               inserts_unmatched: bool) -> WriteSet:
    bases = {f.partition for f in staged if _is_base(f.dir_name)}
    return WriteSet(
        inserted=frozenset(f.partition for f in staged if f.inserts and not _is_base(f.dir_name)),
        deleted=frozenset(dml_partitions if dml_partitions is not None
                          else (f.partition for f in staged if f.deletes)),
        overwritten=frozenset(bases | set(empty)), static_overwrite=static_overwrite,
        reads_table=txn.operation in DML_OPERATIONS, inserts_unmatched=inserts_unmatched)


def _is_base(dir_name: str) -> bool:
    parsed = parse_acid_dir(dir_name)
    return parsed is not None and parsed.is_base


def empty_bases(txn: Transaction, fs: FileSystem, table: TableSpec, staged: Sequence[StagedFile],
                *, replace_all: bool) -> list[str]:
    """The partitions an INSERT OVERWRITE replaces with an empty base: the unpartitioned table
    itself when it got no rows; with ``replace_all`` (a static overwrite), every partition that
    existed and got no rows."""
    written = {f.partition for f in staged}
    if not table.partition_names:
        return [] if "" in written else [""]
    if not replace_all:
        return []
    return [p for p in txn.existing_partitions(fs, len(table.partition_names)) if p not in written]


def remove_quietly(fs: FileSystem, path: str) -> None:
    """Remove a directory tree; a failure is logged, never raised (cleanup must not hide the
    real outcome)."""
    try:
        fs.delete(path, recursive=True)
    except Exception as e:  # noqa: BLE001
        log.warning("could not remove %s: %s", path, e)
