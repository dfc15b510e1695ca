"""A DML statement is analysed before its transaction begins: a condition or SET expression that
does not analyse (an unknown column, a type error) fails with Spark's message and no write id is
allocated. The statement's plan is built once over an empty target with the table's columns:
Spark analyses a DataFrame when it is created, and nothing is read."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_type
from pyspark.sql.types import StructField, StructType

from ..acid.layout import TableLayout
from ..acid.types import hive_to_arrow, normalize_read_type
from ..exceptions import UnsupportedTypeError
from ..read.reader import ROW_ID_TYPE
from ..acid.names import ROW_ID_COLUMN
from ..write.task_writer import TableSpec


def target_schema(layout: TableLayout) -> Optional[StructType]:
    """The DML target as its reader returns it (row__id, data, partition columns); None when a
    column has a type the reader cannot return (the read then fails with its own message)."""
    fields = [StructField(ROW_ID_COLUMN, from_arrow_type(ROW_ID_TYPE), True)]
    try:
        for name, hive_type in layout.columns + layout.partition_columns:
            arrow = normalize_read_type(hive_to_arrow(hive_type, name), name)
            fields.append(StructField(name, from_arrow_type(arrow), True))
    except UnsupportedTypeError:
        return None
    return StructType(fields)


def analyse(spark: SparkSession, layout: TableLayout, spec: TableSpec, alias: str,
            build: Callable[..., DataFrame]) -> None:
    """Build the statement's plan over an empty target; raises what Spark raises."""
    schema = target_schema(layout)
    if schema is None:
        return
    empty = spark.createDataFrame([], schema)

    def load(columns: Optional[Sequence[str]] = None) -> DataFrame:
        df = empty if columns is None else empty.select(ROW_ID_COLUMN, *columns)
        return df.alias(alias)
    setattr(load, "analysis_only", True)  # no job: see merge's cardinality (analysis_only below)
    build(load, spec)


def analysis_only(load: Any) -> bool:
    return bool(getattr(load, "analysis_only", False))
