"""Publish and commit: the one commit path of every writer, for either kind of transaction.

1. ``txn.register_partitions``: the partitions written become known where the catalog needs them
   (the metastore: new partitions and the transaction's dynamic-partition write set), before any
   file of the write is in a table directory. Hive 3.1's Initiator deletes an aborted
   transaction that wrote nothing it knows of (no ``TXN_COMPONENTS``: a dynamic-partition write
   before ``add_dynamic_partitions``), and its write id then counts as committed: files published
   before that call by a writer that died would become visible (fixed in Hive 4, HIVE-21052).
2. :func:`~spark_hive_acid.write.publish.publish` records the directories it is about to create
   (``txn.record_intent``), creates them and renames the staged files into them. The write id is
   still uncommitted, so no snapshot reads them yet.
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
from typing import Callable, Iterable, Mapping, Optional, Sequence

from ..acid.names import parse_acid_dir
from ..acid.partition_condition import PartitionCondition
from ..exceptions import HiveAcidError
from ..io.filesystem import FileSystem
from ..acid.layout import staging_dir
from ..write.publish import CommitResult, publish
from ..write.staging import remove_staged, remove_staging
from ..write.task_writer import StagedFile, TableSpec
from .logmaint import begin_install, end_install, roll_back_in_place
from .base import DML_OPERATIONS, CommitOutcome, Transaction, WriteSet
from .abort import abort_and_clean

log = logging.getLogger(__name__)
COMPACTION_STAGING_SUFFIX = "-compaction"


def commit_write(fs: FileSystem, table: TableSpec, txn: Transaction,
                 staged: Iterable[StagedFile], *, empty_bases: Sequence[str] = (),
                 dml_partitions: Optional[Sequence[str]] = None, static_overwrite: bool = False,
                 inserts_unmatched: bool = False,
                 properties: Optional[Mapping[str, str]] = None,
                 replaced: Optional[PartitionCondition] = None,
                 reads_table: bool = False, keep_staging: bool = False) -> CommitResult:
    """Publish ``staged`` and commit ``txn`` (see the module docstring); returns what was committed.

    ``empty_bases``: partitions that get a ``base_W`` holding one empty ACID file (an overwrite of
    a partition that received no rows). What the write changes, for the conflict rules, is read
    from the staged files; ``dml_partitions`` (where it deletes rows; default: where it staged
    delete events), ``static_overwrite`` (it replaces the whole table) and ``inserts_unmatched``
    (a MERGE inserting rows no target row matched) complete it; ``replaced`` is the region a
    static partition overwrite, truncate or dropPartitions replaces, and ``reads_table`` marks a
    write computed from rows it read (as DML operations are). ``properties`` are recorded
    with the commit (``Transaction.commit``). ``keep_staging``: the staging directory (and its
    intents) stays, for a transaction that commits later (``txn.hms_multi``: one ``commit_txn``
    for several tables); its owner removes it.
    """
    staged = list(staged)
    write_set = _write_set(txn, staged, empty_bases, dml_partitions, static_overwrite,
                           inserts_unmatched, replaced, reads_table)
    try:
        written = sorted({f.partition for f in staged if f.partition}
                         | {p for p in empty_bases if p})
        dirs = txn.partition_dirs(written)  # before registering: new ones get default locations
        txn.register_partitions(written)
        result = publish(fs, table, txn, staged, empty_bases=empty_bases, partition_dirs=dirs)
        txn.commit(result, write_set=write_set, properties=properties)
    except BaseException as e:
        if not isinstance(e, HiveAcidError):
            log.error("Commit of write id %d on %s failed: %s", txn.write_id, table.table_path, e)
        abort_and_clean(fs, table.table_path, txn, f"commit failed: {type(e).__name__}: {e}")
        raise
    if not keep_staging:
        remove_staging(fs, table.table_path, txn.write_id)
    log.info("Write id %d (%s) committed on %s: %s", txn.write_id, txn.operation,
             table.table_path, result.metrics)
    return result


def _write_set(txn: Transaction, staged: Sequence[StagedFile], empty: Sequence[str],
               dml_partitions: Optional[Sequence[str]], static_overwrite: bool,
               inserts_unmatched: bool, replaced: Optional[PartitionCondition] = None,
               reads_table: bool = False) -> WriteSet:
    bases = {f.partition for f in staged if _is_base(f.dir_name)}
    return WriteSet(
        inserted=frozenset(f.partition for f in staged if f.inserts and not _is_base(f.dir_name)),
        deleted=frozenset(dml_partitions if dml_partitions is not None
                          else (f.partition for f in staged if f.deletes)),
        overwritten=frozenset(bases | set(empty)), static_overwrite=static_overwrite,
        reads_table=reads_table or txn.operation in DML_OPERATIONS,
        inserts_unmatched=inserts_unmatched,
        replaced=None if replaced is None else replaced.to_json())


def _is_base(dir_name: str) -> bool:
    parsed = parse_acid_dir(dir_name)
    return parsed is not None and parsed.is_base


def empty_bases(txn: Transaction, fs: FileSystem, table: TableSpec, staged: Sequence[StagedFile],
                *, replace_all: bool, region: Optional[PartitionCondition] = None,
                ensure: Sequence[str] = ()) -> list[str]:
    """The partitions an INSERT OVERWRITE replaces with an empty base: the unpartitioned table
    itself when it got no rows; with ``replace_all`` (a static overwrite), every partition that
    existed and got no rows; with ``region`` (a static partition overwrite), every partition
    that existed inside it and got no rows, and the partitions ``ensure`` names (a full partition
    spec: Hive 4 creates that partition even when no row arrives)."""
    written = {f.partition for f in staged}
    if not table.partition_names:
        return [] if "" in written else [""]
    if not replace_all and region is None:
        return []
    existing = txn.existing_partitions(fs, len(table.partition_names))
    out = [p for p in existing if p not in written
           and (replace_all or (region is not None and region.matches_name(p)))]
    return out + [p for p in ensure if p not in written and p not in out]


def compaction_staging_dir(fs: FileSystem, table_path: str, write_id: int) -> str:
    """Where a compaction stages its output: beside the write staging directory, which a
    transaction's commit removes, because this one must outlive the commit until the renames."""
    return staging_dir(fs, table_path, write_id) + COMPACTION_STAGING_SUFFIX


def compaction_id(txn: Transaction) -> int:
    """What names a compaction's staging and install records: its write id in path mode; in a
    metastore, where a compaction allocates no write id, its txn id."""
    return txn.write_id  # a metastore compaction's is its txn id (``txn.hms_lifecycle``)


def commit_compaction(fs: FileSystem, table_path: str, txn: Transaction, outcome: CommitOutcome,
                      installs: Sequence[tuple[str, str]], compacted: Sequence[str],
                      txn_high_watermark: Optional[Callable[[], Optional[int]]] = None
                      ) -> list[str]:
    """Commit a compaction and make its output visible: the compaction-shaped commit of the one
    protocol (``docs/compaction.md``).

    A compaction changes no row, so its directories are not published under the transaction's
    write id (which no directory of it carries): ``txn.commit`` runs first, with a write set that
    makes two compactions of one partition conflict (the second fails, nothing of it stays);
    then each staged directory is renamed into place (``installs``: (staged, final) pairs),
    announced first in the log's ``installs/`` so that readers see all of them or none (a minor
    compaction's two directories are not one rename; ``read.listing.listing_without_installs``).
    ``txn_high_watermark()`` (metastore mode) gives the global txn high watermark just after the
    commit, recorded with the install: a transaction at or below it may have planned a read
    before the output existed (vacuum's rule, ``compaction.hms_clean``). If a final directory
    already exists (a compaction of the same snapshot made it, or a dead one half-installed it,
    hidden until its install is finished), nothing of this one is installed. A crash between the
    commit and the last rename leaves the table as before for readers; the next compaction or
    vacuum finishes the renames (``logmaint.finish_interrupted_installs``). The staging directory
    is removed only once the install is done. Returns the directories installed."""
    in_place = bool(installs) and all(staged == "" for staged, _ in installs)
    try:
        txn.commit(outcome, write_set=WriteSet(compacted=frozenset(compacted)))
    except BaseException as e:
        abort_and_clean(fs, table_path, txn, f"compaction commit failed: {type(e).__name__}: {e}",
                        staged_dir=compaction_staging_dir(fs, table_path, compaction_id(txn)))
        if in_place:
            roll_back_in_place(fs, table_path, compaction_id(txn))
        raise
    if in_place:  # written into place before the commit, hidden by its install until now
        end_install(fs, table_path, compaction_id(txn))
        log.info("Compaction %s committed on %s: %s", txn.ids(), table_path, outcome.metrics)
        return [final for _, final in installs]
    installed: list[str] = []
    existing = [f for _, f in installs if fs.exists(f)]
    if existing:
        # made by a compaction of the same snapshot, or half-installed by a dead one (hidden
        # until that install is finished): installing the rest could show half of either
        log.warning("%s already exist(s): this compaction's output is not installed (another "
                    "compaction made it, or its unfinished install is completed later)", existing)
    elif installs:
        hwm = txn_high_watermark() if txn_high_watermark is not None else None
        extra = {} if hwm is None else {"txnHighWatermark": hwm}
        # readers hide them until the end
        begin_install(fs, table_path, compaction_id(txn), installs, **extra)
        for staged, final in installs:
            fs.rename(staged, final)
            installed.append(final)
        end_install(fs, table_path, compaction_id(txn))
    remove_staged(fs, compaction_staging_dir(fs, table_path, compaction_id(txn)))
    log.info("Compaction %s committed on %s: %s", txn.ids(), table_path, outcome.metrics)
    return installed
