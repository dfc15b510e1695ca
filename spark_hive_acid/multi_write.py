"""Several operations in one transaction, without Spark (issue 26; docs/writing.md, "Several
operations in one transaction")::

    with spark_hive_acid.transaction(metastoreUri=uri) as tx:
        tx.append("db.t", rows)
        tx.overwrite("db.t", other_rows, partition={"c": 2})
        tx.delete("db.u", pc.field("id") < 10)

Each statement stages its files as it runs (statement ids 0, 1, 2... of its table's one write id,
as Hive's multi-insert numbers them); the block's clean exit publishes every table's files and
commits once; an exception inside the block aborts everything, and nothing of it is ever visible.

* Metastore mode (``metastoreUri``): ONE metastore transaction (``txn.hms_multi.HmsGroup``), a
  write id and a lock per table, one ``commit_txn``: atomic across tables, readers never see
  half of it.
* Path mode (tables by path): one table only, several statements under one write id committed by
  one log record. Two path-mode tables keep two logs, and no single record commits both: refused.

Rules of the same table within one transaction: an overwrite must not replace a partition another
statement of the transaction writes (before or after it), and a delete is refused on a table
already written in the transaction (its rows are read at the transaction's snapshot, which does
not hold the transaction's own rows).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import options as opt
from .acid.layout import staging_dir
from .acid.names import ROW_ID_COLUMN
from .acid.partition_condition import PartitionCondition
from .catalog import TableRef, metastore_table, table_ref
from .direct import ArrowData, PlannedWrite, plan_write, stage_write
from .exceptions import InvalidOptionError, UnsupportedOperationError
from .io.filesystem import FileSystem
from .metastore.snapshots import txn_list_from_open_txns
from .metastore.uris import OPTION_URI
from .txn.base import Transaction
from .txn.hms_multi import HmsGroup, JoinedTransaction
from .txn.session import WriteSession
from .write.staging import remove_staging
from .write.task_writer import DeleteWriter, StagedFile, TableSpec

__all__ = ["transaction", "MultiTransaction", "read_tables"]

log = logging.getLogger(__name__)


def transaction(metastoreUri: Optional[str] = None, **options: Any) -> "MultiTransaction":
    """A transaction for several operations: ``with transaction(metastoreUri=uri) as tx:`` (tables
    by ``db.name``, any number of them) or ``with transaction() as tx:`` (one table by path).
    ``options``: write options every statement gets (``lockWaitTimeout``, storage options...)."""
    given = {k: str(v) for k, v in options.items()}
    if metastoreUri:
        given[OPTION_URI] = metastoreUri
    return MultiTransaction(given)


@dataclass
class _Statement:
    kind: str  # append | overwrite | delete
    staged: list[StagedFile]
    empty: list[str] = field(default_factory=list)
    region: Optional[PartitionCondition] = None  # a static partition overwrite's region
    replace_all: bool = False  # an overwrite of the whole table

    @property
    def touched(self) -> set[str]:
        return {f.partition for f in self.staged} | set(self.empty)

    def replaces(self, partition: str) -> bool:
        if self.kind != "overwrite":
            return False
        if self.replace_all:
            return True
        if self.region is not None:
            return self.region.matches_name(partition)
        return partition in self.touched  # a dynamic overwrite: what it wrote


@dataclass
class _TableWrite:
    ref: TableRef
    fs: FileSystem
    location: str
    txn: Transaction
    session: WriteSession
    spec: TableSpec
    joined: Optional[JoinedTransaction] = None
    statements: list[_Statement] = field(default_factory=list)


class MultiTransaction:
    """See the module docstring; made by :func:`transaction`."""

    def __init__(self, options: Mapping[str, str]):
        self.options = opt.lowered(options)
        self.metastore = bool(self.options.get(OPTION_URI.lower()))
        self.group: Optional[HmsGroup] = None
        self.tables: dict[str, _TableWrite] = {}
        self.state = "new"

    # --- the block ------------------------------------------------------------------------------
    def __enter__(self) -> "MultiTransaction":
        if self.state != "new":
            raise InvalidOptionError("A transaction() block runs once; open a new one")
        self.state = "open"
        if self.metastore:
            self.group = HmsGroup.from_options(self.options)
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        if exc is None:
            try:
                self._commit()
            except BaseException as e:
                self._end(e)
                raise
            self._end(None)
        else:
            self._end(exc)

    # --- statements -----------------------------------------------------------------------------
    def append(self, table: str, data: ArrowData, **kwargs: Any) -> int:
        """``INSERT INTO table``: ``data`` as ``write_table`` takes it (keyword arguments as
        there: ``partition_by``, ``options``...). Returns the rows staged."""
        return self._write(table, data, "append", None, kwargs)

    def overwrite(self, table: str, data: ArrowData, partition: Optional[Mapping[str, Any]] = None,
                  **kwargs: Any) -> int:
        """``INSERT OVERWRITE table [PARTITION (...)]``: the whole table, or with ``partition``
        the partitions it names (``write_table(mode="overwrite", partition=...)``)."""
        return self._write(table, data, "overwrite", partition, kwargs)

    def delete(self, table: str, condition: pc.Expression) -> int:
        """``DELETE FROM table WHERE condition``; ``condition``: a ``pyarrow.compute`` expression
        (``pc.field("id") < 10``). Rows are read at the transaction's snapshot, in this process.
        Returns the rows deleted."""
        deleted, _ = self._delete_matching(table, condition, "delete")
        return deleted

    def update(self, table: str, condition: pc.Expression,
               set: Mapping[str, pc.Expression]) -> int:  # noqa: A002 - delta-spark's name
        """``UPDATE table SET col = expr, ... WHERE condition`` (expressions of ``pyarrow.compute``,
        ``{"name": pc.field("name") + "!"}`` or plain values), as Hive 4 writes it: the old rows'
        delete events, then the new rows as the next statement of the same write id. Partition
        and bucketing columns cannot be set (Hive refuses that too). Returns the rows updated."""
        if not isinstance(set, Mapping) or not set:
            raise InvalidOptionError("transaction().update: set= needs {column: expression, ...}")
        updated, rows = self._delete_matching(table, condition, "update", set)
        if updated:
            self._write(table, rows, "append", None, {})
        return updated

    def _delete_matching(self, table: str, condition: pc.Expression, what: str,
                         assignments: Optional[Mapping[str, Any]] = None
                         ) -> tuple[int, pa.Table]:
        """Delete events for the rows ``condition`` selects (statement ``n`` of the table's write
        id); with ``assignments``, also those rows with the new values (to insert)."""
        if not isinstance(condition, pc.Expression):
            raise InvalidOptionError(
                f"transaction().{what}: the condition must be a pyarrow.compute expression, e.g. "
                f"pc.field('id') < 10, not {type(condition).__name__}; SQL conditions need Spark "
                f"(HiveAcidTable.{what}, a transaction of its own)")
        ref = self._ref(table)
        known = self.tables.get(self._key(ref))
        if known is not None and any(s.kind != "delete" for s in known.statements):
            raise UnsupportedOperationError(
                f"transaction(): {ref.display} was already written in this transaction; {what} "
                "reads the table at the transaction's snapshot, without the rows written in it, so "
                "it is refused after a write to the same table (delete or update first, then "
                "write)")
        layout = ref.layout()
        if layout.insert_only:
            raise UnsupportedOperationError(
                f"{ref.display} is an insert-only table: it has no row ids, rows cannot be "
                f"{what}d")
        new_values = _assignments(layout, assignments, ref.display) if assignments else None
        tw = self._table(ref, "update" if assignments else "delete",
                         TableSpec.of(ref.location()[1], layout))
        write_ids, txns = tw.txn.read_snapshot()
        scan = ref.scan({"validWriteIds": write_ids.to_string(),
                         "validTxns": txns.to_string(), "includeRowId": "true"})
        stmt = len(tw.statements)
        writer = DeleteWriter(tw.fs, tw.spec, tw.txn.write_id, stmt,
                              tw.fs.join(staging_dir(tw.fs, tw.location, tw.txn.write_id),
                                         f"delete-{stmt}"))
        rows: list[pa.Table] = []
        _, batches = scan.batches()
        for batch in batches:
            hit = pa.Table.from_batches([batch]).filter(condition)
            if not hit.num_rows:
                continue
            ids = hit.column(ROW_ID_COLUMN).combine_chunks()
            owid, bucket, row = (np.asarray(ids.field(n).to_numpy(zero_copy_only=False))
                                 for n in ("writeId", "bucketId", "rowId"))
            writer.write(owid, bucket, row,
                         [hit.column(n).combine_chunks() for n in tw.spec.partition_names])
            if new_values is not None:
                rows.append(_with_new_values(hit.drop_columns([ROW_ID_COLUMN]), new_values))
        staged = writer.close()
        tw.statements.append(_Statement("delete", staged))
        count = sum(f.deletes for f in staged)
        return count, (pa.concat_tables(rows) if rows else pa.table({}))

    def read(self, table: str, columns: Optional[Sequence[str]] = None) -> pa.Table:
        """``table`` at the transaction's snapshot (metastore mode: every table of the transaction
        at one ValidTxnList). It does not show the transaction's own statements: they become
        visible together, at its commit."""
        ref = self._ref(table)
        known = self.tables.get(self._key(ref))
        if self.group is not None:
            db, name = (ref.full_name or "").split(".", 1)
            write_ids, txns = self.group.read_snapshot(db, name)
        elif known is not None:
            write_ids, txns = known.txn.read_snapshot()
        else:
            return ref.scan().to_arrow(columns)
        return ref.scan({"validWriteIds": write_ids.to_string(),
                         "validTxns": txns.to_string()}).to_arrow(columns)

    # --- internals ------------------------------------------------------------------------------
    def _ref(self, table: str) -> TableRef:
        self._require_open()
        return table_ref({**self.options, **self._names(table)})

    def _names(self, table: str) -> dict[str, str]:
        """``{"table": ...}`` or ``{"path": ...}``: names in metastore mode, paths otherwise."""
        is_path = "/" in table or "://" in table
        if self.metastore and is_path:
            raise UnsupportedOperationError(
                f"transaction(metastoreUri=...) writes tables of that metastore, by name: "
                f"{table!r} is a path, whose table keeps its own log and cannot commit with the "
                "metastore's transaction")
        if not self.metastore and not is_path:
            raise InvalidOptionError(
                f"transaction() without metastoreUri writes a table by path; {table!r} is not "
                "one (a table by name needs transaction(metastoreUri=...))")
        return {"table": table} if self.metastore else {"path": table}

    @staticmethod
    def _key(ref: TableRef) -> str:
        return (ref.full_name or ref.location()[1]).lower()

    def _require_open(self) -> None:
        if self.state != "open":
            raise InvalidOptionError(f"This transaction is {self.state}: use it inside its "
                                     "`with transaction(...) as tx:` block")

    def _write(self, table: str, data: ArrowData, mode: str,
               partition: Optional[Mapping[str, Any]], kwargs: dict[str, Any]) -> int:
        names = self._names(table)
        self._require_open()
        planned = plan_write(data, names.get("path"), table=names.get("table"), mode=mode,
                             partition=partition,
                             options={**self.options, **opt.lowered(kwargs.pop("options", None))},
                             **kwargs)
        tw = self._table(planned.ref, planned.operation, planned.spec)
        stmt = len(tw.statements)
        staged, empty = stage_write(planned, tw.txn, stmt)
        new = _Statement(mode, staged, empty, planned.region, planned.replace_all)
        _check_overlap(planned, tw.statements, new)
        tw.statements.append(new)
        return sum(f.inserts for f in staged)

    def _table(self, ref: TableRef, operation: str, spec: TableSpec) -> _TableWrite:
        """The table's part of the transaction, joined now if this is its first statement."""
        key = self._key(ref)
        tw = self.tables.get(key)
        if tw is not None:
            if tw.joined is not None:
                tw.joined.lock_for(operation)
            tw.spec = spec
            return tw
        if not self.metastore and self.tables:
            raise UnsupportedOperationError(
                f"transaction(): {ref.display} is a second path-mode table; each keeps its own "
                f"log, so no single commit covers both ({', '.join(self.tables)}). Write several "
                "tables atomically through a Hive Metastore: transaction(metastoreUri=...)")
        joined = None
        if self.group is not None:
            joined = metastore_table(ref, "transaction(metastoreUri=...)").join(self.group,
                                                                                 operation)
            txn: Transaction = joined
        else:
            txn = ref.begin(operation)
        fs, location = ref.location()
        session = WriteSession(fs, location, txn, f"transaction on {ref.display}")
        session.__enter__()
        tw = _TableWrite(ref, fs, location, txn, session, spec, joined)
        self.tables[key] = tw
        return tw

    def _commit(self) -> None:
        self.state = "committing"
        for tw in self.tables.values():
            stmts = tw.statements
            regions = [s.region for s in stmts if s.region is not None]
            tw.session.commit(
                tw.spec, [f for s in stmts for f in s.staged],
                empty_bases=sorted({p for s in stmts for p in s.empty}),
                static_overwrite=any(s.replace_all for s in stmts),
                replaced=regions[0] if len(regions) == 1 else None,
                reads_table=any(s.kind == "delete" for s in stmts),
                keep_staging=self.group is not None)
        if self.group is not None:
            self.group.commit()
            for tw in self.tables.values():
                remove_staging(tw.fs, tw.location, tw.txn.write_id)
        self.state = "committed"
        log.info("transaction committed: %s", {k: len(t.statements) for k, t in self.tables.items()})

    def _end(self, error: Optional[BaseException]) -> None:
        """Stop the keep-alives; after a failure, abort everything and clean up (idempotent)."""
        for tw in self.tables.values():  # on an error, the first one aborts the transaction
            try:
                tw.session.__exit__(type(error) if error else None, error, None)
            except BaseException as e:  # noqa: BLE001 - the first error matters more
                if e is not error:
                    log.warning("ending the write of %s: %s", tw.ref.display, e)
        if error is not None:
            self.state = "aborted"
            if self.group is not None:
                self.group.abort(f"{type(error).__name__}: {error}")
            for tw in self.tables.values():
                if not tw.txn.commit_state_unknown:
                    remove_staging(tw.fs, tw.location, tw.txn.write_id)
        if self.group is not None:
            self.group.close()


def _check_overlap(planned: PlannedWrite, earlier: Sequence[_Statement], new: _Statement) -> None:
    """An overwrite may not replace a partition another statement of the table writes."""
    for old in earlier:
        clash = sorted({p for p in new.touched if old.replaces(p)}
                       | {p for p in old.touched if new.replaces(p)})
        if clash:
            shown = ", ".join(p or "(the table)" for p in clash[:5])
            raise UnsupportedOperationError(
                f"transaction(): this {new.kind} of {planned.ref.display} and an earlier {old.kind}"
                f" in the same transaction both write {shown}, and one of them is an overwrite "
                "that replaces it: make it one overwrite (or write those partitions in separate "
                "transactions). Nothing was committed.")


def read_tables(tables: Iterable[str], **options: Any) -> dict[str, pa.Table]:
    """Several tables of one metastore (``metastoreUri=...``) read at ONE ValidTxnList: no
    transaction is seen committed in one table and not in another."""
    given = opt.lowered({k: str(v) for k, v in options.items()})
    group = HmsGroup.from_options(given)
    try:
        txns = txn_list_from_open_txns(group.client.txn_states())
        out = {}
        for name in tables:
            ref = table_ref({**given, "table": name})
            db, tbl = (ref.full_name or "").split(".", 1)
            write_ids, _ = group.client.read_snapshot(db, tbl, txns=txns)
            out[name] = ref.scan({"validWriteIds": write_ids.to_string(),
                                  "validTxns": txns.to_string()}).to_arrow()
        return out
    finally:
        group.client.close()


def _assignments(layout: Any, assignments: Mapping[str, Any], table: str
                 ) -> dict[str, pc.Expression]:
    """``set=`` checked against the table: data columns only, each an expression (a plain value
    becomes a scalar)."""
    data = {n.lower(): n for n, _ in layout.columns}
    fixed = {n.lower() for n, _ in layout.partition_columns} | {
        b.lower() for b in (layout.bucket_columns or [])}
    out: dict[str, pc.Expression] = {}
    for name, value in assignments.items():
        key = str(name).lower()
        if key in fixed:
            raise UnsupportedOperationError(
                f"transaction().update of {table}: {name} is a partition or bucketing column; "
                "Hive cannot update those either (delete the rows and insert them instead)")
        if key not in data:
            raise InvalidOptionError(f"transaction().update of {table}: no column {name!r} "
                                     f"(columns: {', '.join(data.values())})")
        out[data[key]] = value if isinstance(value, pc.Expression) else pc.scalar(value)
    return out


def _with_new_values(rows: pa.Table, new_values: Mapping[str, pc.Expression]) -> pa.Table:
    """``rows`` with the assigned columns computed (cast back to the column's type)."""
    import pyarrow.dataset as pads

    columns: dict[str, pc.Expression] = {}
    for field in rows.schema:
        expr = new_values.get(field.name)
        columns[field.name] = (pc.field(field.name) if expr is None
                               else expr.cast(field.type))
    return pads.dataset(rows).to_table(columns=columns)
