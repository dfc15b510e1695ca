"""MERGE: the builder shaped like delta-spark's ``DeltaMergeBuilder``."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..exceptions import CardinalityViolationError, InvalidOptionError
from . import dml
from ._compat import plan_references
from .dml_check import analysis_only
from .expressions import ColumnOrStr
from .expressions import to_column as _col
from .expressions import to_value as _value
from .expressions import union_names as _union
from .statement import Statement, resolve_set


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

    def __init__(self, table: Statement, source: DataFrame, condition: ColumnOrStr,
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

        def build(load: dml.TargetLoader, spec):
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
            if self._matched and not analysis_only(load):
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
                         else resolve_set(full, setting, "whenMatchedUpdate(set=...)"))
                for n in names:
                    v = given[n].cast(types[n]) if n in given else target[n]
                    values[n] = add(values[n], act == i, v)
            for k, (kind, cond, setting) in enumerate(self._not_matched):
                ins = add(ins, act == 100 + k, F.lit(self._INSERT_INS))
                given = (self._source_all(names, "whenNotMatchedInsertAll") if kind == "insertAll"
                         else resolve_set(full, setting, "whenNotMatchedInsert(values=...)"))
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

        return table.run("merge", build, inserts_unmatched=bool(self._not_matched))

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
        names = plan_references(self._source.join(full, conditions[0], "left"), conditions, values)
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
