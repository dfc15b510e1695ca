"""One DML statement (DELETE, UPDATE, MERGE) of ``HiveAcidTable``: the target read at the
statement's snapshot, the plan analysed before a write id exists, then one transaction
(``spark.dml.run_dml``). ``HiveAcidTable`` and ``HiveAcidMergeBuilder`` both build their plans
here, so neither reaches into the other."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from pyspark.sql import Column, DataFrame, SparkSession

from ..catalog import TableRef
from ..exceptions import InvalidOptionError
from ..write.task_writer import TableSpec
from . import dml
from ._compat import library_errors
from .datasource import FORMAT_NAME
from .dml_check import analyse
from .expressions import int_literal, to_value
from .writer import spark_to_arrow_schema

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Statement:
    """The target of DML statements: the table, the session, and the alias conditions use."""

    spark: SparkSession
    table: TableRef
    alias: str

    def reader(self) -> Any:
        return self.spark.read.format(FORMAT_NAME).options(**self.table.reader_options())

    def target_reader(self, columns: Optional[Sequence[str]]) -> Any:
        """The reader of a DML target: with row__id; only ``columns`` (plus row__id) if given."""
        reader = self.reader().option("includeRowId", "true")
        if columns is not None:
            reader = reader.option("columns", ",".join([dml.ROW_ID, *columns]))
        return reader

    def schema(self) -> Any:
        """The table's columns as its reader sees them (adopts a Hive-written path table)."""
        with library_errors():
            return spark_to_arrow_schema(self.reader().load().schema)

    def run(self, operation: str, build: Callable[[dml.TargetLoader, Any], DataFrame], *,
            inserts_unmatched: bool = False) -> dict:
        """One transaction: begin, build the plan from its snapshot, write, commit."""
        def load_at(write_ids: str, txns: str, columns: Optional[Sequence[str]]) -> DataFrame:
            reader = (self.target_reader(columns).option("validWriteIds", write_ids)
                      .option("validTxns", txns))
            with library_errors():
                return reader.load().alias(self.alias)

        layout = self.table.layout(self.schema)
        analyse(self.spark, layout, TableSpec.of(self.table.location()[1], layout), self.alias,
                build)  # before any write id is allocated
        with library_errors():
            metrics = dml.run_dml(self.table, operation, layout, load_at, build,
                                  inserts_unmatched=inserts_unmatched)
        log.info("%s on %s committed: %s", operation, self.table.display, metrics)
        return metrics


def event_columns(t: DataFrame, del_stmt: Optional[int], ins_stmt: Optional[int], spec: Any,
                  values: Mapping[str, Column]) -> list[Column]:
    """The plan's columns (``spark.dml``'s layout) of the target rows ``t``: their ROW__ID, the
    statements deleting / inserting them, their old partition values and new ``values``."""
    cols = [t[dml.ROW_ID]["writeId"].alias(dml.OWID), t[dml.ROW_ID]["bucketId"].alias(dml.BP),
            t[dml.ROW_ID]["rowId"].alias(dml.RID),
            int_literal(del_stmt).alias(dml.DEL_STMT), int_literal(ins_stmt).alias(dml.INS_STMT)]
    cols += [t[p].alias(dml.OLD_PREFIX + p) for p in spec.partition_names]
    cols += [values[n].alias(n) for n in dml.table_data_names(spec)]
    return cols


def resolve_set(t: DataFrame, set: Mapping[str, Any], what: str) -> dict[str, Column]:
    """``set={column: expression}`` with the table's spelling of each column (unknown columns
    are an InvalidOptionError naming them)."""
    names = {n.lower(): n for n in t.columns if n != dml.ROW_ID}
    out = {}
    for k, v in set.items():
        if k.lower() not in names:
            raise InvalidOptionError(
                f"{what} names unknown column '{k}'; the table has {', '.join(names.values())}")
        out[names[k.lower()]] = to_value(v)
    return out
