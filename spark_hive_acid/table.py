"""The user-facing table API, shaped like delta-spark's ``DeltaTable``.

::

    t = HiveAcidTable.forPath(spark, "/warehouse/orders")
    t.delete("status = 'cancelled'")
    t.update("id = 7", set={"qty": "qty + 1"})
    (t.alias("t").merge(updates.alias("s"), "t.id = s.id")
        .whenMatchedUpdate(set={"qty": "s.qty"})
        .whenNotMatchedInsertAll()
        .execute())
    t.history().show()

Each DML call is one transaction (one write id): it reads the table at the snapshot taken when the
write id was allocated, writes delete/insert events, and commits all at once or not at all.
"""
from __future__ import annotations

import datetime as _dt
import logging
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from .acid import txnlog
from .acid.layout import TableLayout, load_layout
from .exceptions import (CardinalityViolationError, InvalidOptionError, NotAnAcidTableError,
                         TableNotFoundError)
from .io.registry import get_filesystem
from .write import dml
from .write.options import WriteOptions
from .write.spark_writer import spark_to_arrow_schema, table_spec
from .write.table_setup import has_acid_dirs, resolve_table

log = logging.getLogger(__name__)

ColumnOrStr = Union[Column, str]
# load(columns=None): the DML target at the transaction's snapshot, with row__id, aliased; with
# ``columns``, only those (plus row__id) are read
TargetLoader = Callable[..., DataFrame]
DEFAULT_ALIAS = "target"


def _col(c: Optional[ColumnOrStr]) -> Column:
    if c is None:
        return F.lit(True)
    if isinstance(c, str):
        return F.expr(c)
    if isinstance(c, Column):
        return c
    raise InvalidOptionError(f"A condition or value must be a SQL string or a Column, not {type(c).__name__}")


def _value(v: Any) -> Column:
    if isinstance(v, (str, Column)):
        return _col(v)
    return F.lit(v)


def ensure_registered(spark: SparkSession) -> None:
    """Register the ``hiveacid`` format on this session unless it already is."""
    if getattr(spark, "_hiveacid_registered", False):
        return
    from .datasource import HiveAcidDataSource
    try:
        spark.dataSource.register(HiveAcidDataSource)
    except Exception as e:  # noqa: BLE001 - already registered (statically or by the user)
        log.debug("hiveacid registration: %s", e)
    try:
        spark._hiveacid_registered = True  # type: ignore[attr-defined]
    except AttributeError:
        pass


class HiveAcidTable:
    """A Hive ACID table in a directory (path mode, ``forPath``) or named in the Hive Metastore
    (``forName`` / ``create``; see ``spark_hive_acid.write.metastore_mode``)."""

    def __init__(self, spark: SparkSession, path: str, options: Optional[Mapping[str, str]] = None,
                 alias: Optional[str] = None):
        self._spark = spark
        self._path = path
        self._options = {str(k).lower(): str(v) for k, v in (options or {}).items()}
        self._alias = alias
        self._fs, self._fs_path = get_filesystem(path, self._options)

    # --- construction ------------------------------------------------------------------------------
    @classmethod
    def forPath(cls, spark: SparkSession, path: str,
                options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """The table at ``path``; raises if there is no Hive ACID table there."""
        fs, p = get_filesystem(path, options or {})
        if not fs.exists(p):
            raise TableNotFoundError(f"No table at {path}")
        if load_layout(fs, p) is None and not has_acid_dirs(fs, p):
            raise NotAnAcidTableError(f"{path} is not a Hive ACID table")
        ensure_registered(spark)
        return cls(spark, path, options)

    @classmethod
    def forName(cls, spark: SparkSession, name: str,
                options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """The Hive ACID table ``db.tbl`` (or ``tbl`` in ``default``) of the Hive Metastore.

        The metastore is the ``metastoreUri`` option, else the Spark conf
        ``spark.hadoop.hive.metastore.uris``, else ``hive.metastore.uris`` in
        ``$HIVE_CONF_DIR/hive-site.xml``. Other options: ``metastoreTimeout``,
        ``lockWaitTimeout``, ``heartbeatInterval`` (docs/metastore.md). Raises TableNotFoundError,
        NotAnAcidTableError, MetastoreUnavailableError (naming the URI).
        """
        from .write.metastore_mode import for_name
        return for_name(spark, name, options)

    @classmethod
    def create(cls, spark: SparkSession, name: str, schema: Any, *,
               partitionBy: Optional[Any] = None, bucketBy: Optional[Any] = None,
               numBuckets: Optional[int] = None, properties: Optional[Mapping[str, str]] = None,
               location: Optional[str] = None, bucketingVersion: Optional[int] = None,
               compression: Optional[str] = None, ifNotExists: bool = False,
               options: Optional[Mapping[str, str]] = None) -> "HiveAcidTable":
        """Register a transactional (full-ACID, ORC) table in the Hive Metastore and return it.

        ``schema``: a StructType or DDL string with every column, partition columns included;
        ``partitionBy`` / ``bucketBy``: column names (list or comma-separated); ``location``:
        default the metastore's warehouse directory. Hive 2.x metastores accept full-ACID tables
        only when bucketed (``bucketBy`` + ``numBuckets``).
        """
        from .write.metastore_mode import create_table
        return create_table(spark, name, schema, partitionBy=partitionBy, bucketBy=bucketBy,
                            numBuckets=numBuckets, properties=properties, location=location,
                            bucketingVersion=bucketingVersion, compression=compression,
                            ifNotExists=ifNotExists, options=options)

    def alias(self, name: str) -> "HiveAcidTable":
        """The same table under an alias usable in conditions (``"t.id = s.id"``)."""
        return HiveAcidTable(self._spark, self._path, self._options, name)

    # --- reading -----------------------------------------------------------------------------------
    def _reader(self):
        return self._spark.read.format("hiveacid").options(**self._options)

    def _load(self, reader) -> DataFrame:
        return reader.load(self._path)

    def toDF(self) -> DataFrame:
        """The table's current committed snapshot as a DataFrame."""
        df = self._load(self._reader())
        return df.alias(self._alias) if self._alias else df

    def count(self) -> int:
        """The number of rows in the current snapshot, without handing Spark the rows.

        ``toDF().count()`` makes the source produce every row (and, since PySpark's Python data
        sources cannot prune columns, every column) only for Spark to count them. This reads with
        option ``countRows``: each task applies the deletes to the ACID keys alone (not decoded
        where stripe statistics prove them) and returns one number."""
        total = self._load(self._reader().option("countRows", "true")).agg(F.sum("row_count")).first()[0]
        return int(total or 0)

    def history(self) -> DataFrame:
        """One row per write id, newest first: writeId, state (committed/aborted/open), operation,
        startedAt, finishedAt, partitions, numInsertedRows, numDeletedRows, reason."""
        def ts(x):
            return _dt.datetime.fromtimestamp(x, tz=_dt.timezone.utc) if x else None
        rows = [(h["writeId"], h["state"], h.get("operation"), ts(h.get("startedAt")),
                 ts(h.get("finishedAt")), list(h.get("partitions") or []),
                 (h.get("metrics") or {}).get("numInsertedRows"),
                 (h.get("metrics") or {}).get("numDeletedRows"), h.get("reason"))
                for h in txnlog.history(self._fs, self._fs_path)]
        schema = ("writeId long, state string, operation string, startedAt timestamp, "
                  "finishedAt timestamp, partitions array<string>, numInsertedRows long, "
                  "numDeletedRows long, reason string")
        return self._spark.createDataFrame(rows, schema)

    # --- DML ---------------------------------------------------------------------------------------
    def _layout(self) -> TableLayout:
        layout = load_layout(self._fs, self._fs_path)
        if layout is None:  # a Hive-written table: adopt it with the columns the reader sees
            schema = spark_to_arrow_schema(self._load(self._reader()).schema)
            layout, _ = resolve_table(self._fs, self._fs_path, WriteOptions(path=self._path), schema)
        return layout

    def _target_reader(self, columns: Optional[Sequence[str]]):
        """The reader of a DML target: with row__id; only ``columns`` (plus row__id) if given."""
        reader = self._reader().option("includeRowId", "true")
        if columns is not None:
            reader = reader.option("columns", ",".join([dml.ROW_ID, *columns]))
        return reader

    def _target(self, txn: txnlog.Transaction, columns: Optional[Sequence[str]] = None) -> DataFrame:
        reader = self._target_reader(columns).option("validWriteIds", txn.snapshot_string)
        return self._load(reader).alias(self._alias or DEFAULT_ALIAS)

    def _run(self, operation: str, build) -> dict:
        """One transaction: allocate W, build the plan from the snapshot, write, commit."""
        layout = self._layout()
        spec = table_spec(self._fs_path, layout)
        timeout = float(self._options.get("txntimeoutseconds", txnlog.DEFAULT_TIMEOUT_S))
        txn = txnlog.begin(self._fs, self._fs_path, operation, timeout_s=timeout)
        try:
            with dml.heartbeats(self._fs, self._fs_path, txn.write_id):
                plan = build(lambda columns=None: self._target(txn, columns), spec)
                result = dml.run_dml(self._spark, self._path, self._options, self._fs, spec,
                                     layout, txn, plan)
        except BaseException:
            txnlog.abort(self._fs, self._fs_path, txn.write_id, f"{operation} failed")
            raise
        log.info("%s committed as write id %d: %s", operation, txn.write_id, result.metrics)
        return dict(result.metrics, writeId=txn.write_id)

    @staticmethod
    def _names(spec) -> list[str]:
        return dml.table_data_names(spec)

    @staticmethod
    def _events(t: DataFrame, del_stmt, ins_stmt, spec, values: Mapping[str, Column]) -> list[Column]:
        cols = [t[dml.ROW_ID]["writeId"].alias(dml.OWID), t[dml.ROW_ID]["bucketId"].alias(dml.BP),
                t[dml.ROW_ID]["rowId"].alias(dml.RID),
                _lit_int(del_stmt).alias(dml.DEL_STMT), _lit_int(ins_stmt).alias(dml.INS_STMT)]
        cols += [t[p].alias(dml.OLD_PREFIX + p) for p in spec.partition_names]
        cols += [values[n].alias(n) for n in dml.table_data_names(spec)]
        return cols

    def _resolve_set(self, t: DataFrame, set: Mapping[str, Any], what: str) -> dict[str, Column]:
        names = {n.lower(): n for n in t.columns if n != dml.ROW_ID}
        out = {}
        for k, v in set.items():
            if k.lower() not in names:
                raise InvalidOptionError(
                    f"{what} names unknown column '{k}'; the table has {', '.join(names.values())}")
            out[names[k.lower()]] = _value(v)
        return out

    def delete(self, condition: Optional[ColumnOrStr] = None) -> dict:
        """Delete the rows matching ``condition`` (all rows when None). Returns metrics.

        Delete events carry no row, so the target is read with only ``row__id``, the partition
        columns and the columns the condition reads (the Python source gets no column pruning
        from Spark; without this a DELETE would decode every column).
        """
        def build(load: TargetLoader, spec):
            full = load()
            used = [] if condition is None else referenced_columns(full, _col(condition))
            t = full if used is None else load(_union(used, spec.partition_names))
            rows = t.filter(_col(condition)) if condition is not None else t
            types = dict(full.dtypes)
            nulls = {n: F.lit(None).cast(types[n]) for n in self._names(spec)}
            return rows.select(self._events(t, 0, None, spec, nulls))
        return self._run("delete", build)

    def update(self, condition: Optional[ColumnOrStr] = None,
               set: Optional[Mapping[str, Any]] = None) -> dict:
        """Set columns of the rows matching ``condition``: ``set={"col": "expr" or Column}``.

        Split-update: each row is deleted (``delete_delta_W_W_0``) and re-inserted with its new
        values (``delta_W_W_1``). Changing partition or bucketing columns moves the row to the
        right partition / bucket.
        """
        if not set:
            raise InvalidOptionError("update() needs set={column: expression}")

        def build(load: TargetLoader, spec):
            t = load()
            changes = self._resolve_set(t, set, "update(set=...)")
            types = dict(t.dtypes)
            values = {n: (changes[n].cast(types[n]) if n in changes else t[n]) for n in self._names(spec)}
            rows = t.filter(_col(condition)) if condition is not None else t
            return rows.select(self._events(t, 0, 1, spec, values))
        return self._run("update", build)

    def merge(self, source: DataFrame, condition: ColumnOrStr) -> "HiveAcidMergeBuilder":
        """Start a MERGE of ``source`` into this table on ``condition``; see HiveAcidMergeBuilder."""
        return HiveAcidMergeBuilder(self, source, condition)

    def abortStaleTransactions(self, olderThanSeconds: Optional[float] = None) -> list[int]:
        """Abort open write ids idle longer than their timeout (or ``olderThanSeconds``), removing
        their files. Returns the aborted ids."""
        return txnlog.abort_stale(self._fs, self._fs_path, timeout_s=olderThanSeconds)


def _lit_int(v: Optional[int]) -> Column:
    return F.lit(v).cast("int")


def _union(first: Sequence[str], then: Sequence[str]) -> list[str]:
    seen = {n.lower() for n in first}
    return list(first) + [n for n in then if n.lower() not in seen]


def referenced_columns(df: DataFrame, condition: Column) -> Optional[list[str]]:
    """The columns of ``df`` that ``condition`` reads, from Spark's analyzed plan, in ``df``'s
    order; ``row__id`` excluded (the target always has it). None when they cannot be told (e.g.
    Spark Connect has no JVM plan): callers then read every column."""
    names = referenced_names(df, [condition], [])
    by_lower = {c.lower(): c for c in df.columns}
    if names is None or not names <= set(by_lower):
        return None
    return [c for c in df.columns if c.lower() in names and c != dml.ROW_ID]


def referenced_names(df: DataFrame, conditions: Sequence[Column],
                     values: Sequence[Column]) -> Optional[set[str]]:
    """Lower-case names of the columns that ``conditions`` (as filters of ``df``) and ``values``
    (as projections of it) read, from Spark's analyzed plans; None when they cannot be told."""
    names: set[str] = set()
    try:
        for expr, kind in [(c, "Filter") for c in conditions] + [(v, "Project") for v in values]:
            plan = (df.filter(expr) if kind == "Filter" else df.select(expr))._jdf \
                .queryExecution().analyzed()
            if plan.getClass().getSimpleName() != kind:
                return None
            refs = plan.references().toSeq()
            names.update(refs.apply(i).name().lower() for i in range(refs.size()))
    except Exception as e:  # noqa: BLE001 - an invalid expression fails again, with Spark's message
        log.debug("columns of the expressions not known (%s); reading every column", e)
        return None
    return names


class HiveAcidMergeBuilder:
    """Builds a MERGE; immutable: every ``whenX`` returns a new builder. ``execute()`` runs it.

    Clause rules (as in delta-spark):

    * ``whenMatched*`` clauses apply to target rows matched by a source row, ``whenNotMatched*`` to
      source rows that match no target row. Within each group the clauses are tried **in the
      order given** and the first whose condition holds wins; rows no clause accepts are left
      unchanged (matched) or not inserted (not matched).
    * In each group only the **last** clause may omit its condition.
    * If any ``whenMatched*`` clause exists, every target row may match at most one source row;
      otherwise the MERGE raises CardinalityViolationError and writes nothing.
    * Conditions and values are SQL strings or Columns; refer to the target through its alias
      (``table.alias("t")``, ``"target"`` by default) and to the source through the source
      DataFrame's own alias.

    Hive gives each branch its own statement id: deletes of updated rows go to
    ``delete_delta_W_W_0000``, deleted rows to ``delete_delta_W_W_0001``, new versions of updated
    rows to ``delta_W_W_0002`` and inserted rows to ``delta_W_W_0003``.
    """

    _UPDATE_DEL, _DELETE_DEL, _UPDATE_INS, _INSERT_INS = 0, 1, 2, 3

    def __init__(self, table: HiveAcidTable, source: DataFrame, condition: ColumnOrStr,
                 matched: tuple = (), not_matched: tuple = ()):
        self._table, self._source, self._condition = table, source, condition
        self._matched = matched  # ((kind, condition, set|None), ...) kind: update|updateAll|delete
        self._not_matched = not_matched  # ((kind, condition, values|None), ...) insert|insertAll

    def _with(self, matched=None, not_matched=None) -> "HiveAcidMergeBuilder":
        return HiveAcidMergeBuilder(self._table, self._source, self._condition,
                                    self._matched if matched is None else matched,
                                    self._not_matched if not_matched is None else not_matched)

    @staticmethod
    def _check_order(clauses: tuple, group: str) -> None:
        if clauses and clauses[-1][1] is None:
            raise InvalidOptionError(
                f"A {group} clause without a condition must be the last {group} clause")

    def _add_matched(self, clause: tuple) -> "HiveAcidMergeBuilder":
        self._check_order(self._matched, "whenMatched")
        return self._with(matched=self._matched + (clause,))

    def _add_not_matched(self, clause: tuple) -> "HiveAcidMergeBuilder":
        self._check_order(self._not_matched, "whenNotMatched")
        return self._with(not_matched=self._not_matched + (clause,))

    def whenMatchedUpdate(self, condition: Optional[ColumnOrStr] = None,
                          set: Optional[Mapping[str, Any]] = None) -> "HiveAcidMergeBuilder":
        if not set:
            raise InvalidOptionError("whenMatchedUpdate needs set={column: expression}")
        return self._add_matched(("update", condition, dict(set)))

    def whenMatchedUpdateAll(self, condition: Optional[ColumnOrStr] = None) -> "HiveAcidMergeBuilder":
        return self._add_matched(("updateAll", condition, None))

    def whenMatchedDelete(self, condition: Optional[ColumnOrStr] = None) -> "HiveAcidMergeBuilder":
        return self._add_matched(("delete", condition, None))

    def whenNotMatchedInsert(self, condition: Optional[ColumnOrStr] = None,
                             values: Optional[Mapping[str, Any]] = None) -> "HiveAcidMergeBuilder":
        if not values:
            raise InvalidOptionError("whenNotMatchedInsert needs values={column: expression}")
        return self._add_not_matched(("insert", condition, dict(values)))

    def whenNotMatchedInsertAll(self, condition: Optional[ColumnOrStr] = None) -> "HiveAcidMergeBuilder":
        return self._add_not_matched(("insertAll", condition, None))

    # --- execution ---------------------------------------------------------------------------------
    def _source_all(self, names: list[str], what: str) -> dict[str, Column]:
        src = {c.lower(): c for c in self._source.columns}
        missing = [n for n in names if n.lower() not in src]
        if missing:
            raise InvalidOptionError(
                f"{what} needs every table column in the source; missing: {', '.join(missing)}")
        return {n: self._source[src[n.lower()]] for n in names}

    def execute(self) -> dict:
        """Run the MERGE as one transaction. Returns metrics (rows inserted/deleted, write id)."""
        if not self._matched and not self._not_matched:
            raise InvalidOptionError("A MERGE needs at least one whenMatched/whenNotMatched clause")
        table = self._table

        def build(load: TargetLoader, spec):
            full = load()
            names = dml.table_data_names(spec)
            types = dict(full.dtypes)
            needed = self._target_columns(full, spec)
            t = full if needed is None else load(needed)
            marker = "__hiveacid_matched"
            target = t.withColumn(marker, F.lit(True))
            how = "left" if self._not_matched else "inner"
            joined = self._source.join(target, _col(self._condition), how)
            is_matched = target[marker].isNotNull()
            if self._matched:
                self._check_cardinality(joined, target, spec.partition_names)
            action = None
            values: dict[str, Column] = {n: None for n in names}  # type: ignore[misc]
            dels, ins = None, None

            def add(chain, cond, val):
                return F.when(cond, val) if chain is None else chain.when(cond, val)

            for i, (kind, cond, setting) in enumerate(self._matched):
                action = add(action, is_matched & _col(cond), F.lit(i))
            for k, (kind, cond, setting) in enumerate(self._not_matched):
                action = add(action, ~is_matched & _col(cond), F.lit(100 + k))
            act = F.col("__hiveacid_action")
            for i, (kind, cond, setting) in enumerate(self._matched):
                if kind == "delete":
                    dels = add(dels, act == i, F.lit(self._DELETE_DEL))
                    continue
                dels = add(dels, act == i, F.lit(self._UPDATE_DEL))
                ins = add(ins, act == i, F.lit(self._UPDATE_INS))
                given = (self._source_all(names, "whenMatchedUpdateAll") if kind == "updateAll"
                         else table._resolve_set(full, setting, "whenMatchedUpdate(set=...)"))
                for n in names:
                    v = given[n].cast(types[n]) if n in given else target[n]
                    values[n] = add(values[n], act == i, v)
            for k, (kind, cond, setting) in enumerate(self._not_matched):
                ins = add(ins, act == 100 + k, F.lit(self._INSERT_INS))
                given = (self._source_all(names, "whenNotMatchedInsertAll") if kind == "insertAll"
                         else table._resolve_set(full, setting, "whenNotMatchedInsert(values=...)"))
                for n in names:
                    v = given[n].cast(types[n]) if n in given else F.lit(None).cast(types[n])
                    values[n] = add(values[n], act == 100 + k, v)
            rows = joined.withColumn("__hiveacid_action", action).filter(act.isNotNull())
            cols = [target[dml.ROW_ID]["writeId"].alias(dml.OWID),
                    target[dml.ROW_ID]["bucketId"].alias(dml.BP),
                    target[dml.ROW_ID]["rowId"].alias(dml.RID),
                    (dels if dels is not None else F.lit(None)).cast("int").alias(dml.DEL_STMT),
                    (ins if ins is not None else F.lit(None)).cast("int").alias(dml.INS_STMT)]
            cols += [target[p].alias(dml.OLD_PREFIX + p) for p in spec.partition_names]
            cols += [(values[n] if values[n] is not None else F.lit(None).cast(types[n])).alias(n)
                     for n in names]
            return rows.select(cols)

        return table._run("merge", build)

    def _target_columns(self, full: DataFrame, spec) -> Optional[list[str]]:
        """The target columns a MERGE whose matched clauses only delete must read: those its
        expressions name (on either side: a superset, so every name resolves as on the full
        target) and the partition columns. None (read every column) when a matched clause
        updates, since new row versions carry every column."""
        if any(kind != "delete" for kind, _, _ in self._matched):
            return None
        conditions = [_col(self._condition)] + [
            _col(cond) for _, cond, _ in self._matched + self._not_matched if cond is not None]
        values = [_value(v) for kind, _, given in self._not_matched if kind == "insert"
                  for v in given.values()]
        names = referenced_names(self._source.join(full, conditions[0], "left"), conditions, values)
        if names is None:
            return None
        used = [c for c in full.columns if c.lower() in names and c != dml.ROW_ID]
        return _union(used, spec.partition_names)

    @staticmethod
    def _check_cardinality(joined: DataFrame, target: DataFrame, partitions) -> None:
        # ROW__ID is unique within a partition directory, so the key includes the partition values
        marker = "__hiveacid_matched"
        key = [target[dml.ROW_ID]] + [target[p] for p in partitions]
        dup = (joined.filter(target[marker].isNotNull())
               .groupBy(*key).count().filter(F.col("count") > 1).limit(1).collect())
        if dup:
            rid = dup[0][0]
            raise CardinalityViolationError(
                f"MERGE matched target row {tuple(rid)} (writeId, bucketId, rowId) with "
                f"{dup[0]['count']} source rows; each target row may match at most one source row. "
                "Deduplicate the source. Nothing was written.")
