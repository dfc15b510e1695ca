"""spark-hive-acid: read and write Apache Hive ACID tables from PySpark 4.

``spark.read.format("hiveacid").load(path)`` works once the package is installed (Spark finds
``pyspark_hiveacid.DefaultSource``); :func:`register` registers the source explicitly.
Without Spark, ``read_table`` / ``write_table`` read and write in this process, and
``transaction()`` runs several operations as one transaction.
"""
from __future__ import annotations

from typing import Any

from .exceptions import HiveAcidError

__version__ = "0.1.0"
__all__ = ["register", "HiveAcidError", "HiveAcidTable", "read_table", "write_table",
           "transaction", "read_tables", "register_view", "sql", "__version__"]


def register(spark: Any) -> None:
    """Register the ``hiveacid`` format on a SparkSession (needed only where the package is not
    importable by Spark's Python workers at JVM start, e.g. a session created before install)."""
    from .spark.datasource import HiveAcidDataSource

    spark.dataSource.register(HiveAcidDataSource)


def __getattr__(name: str) -> Any:
    if name == "HiveAcidTable":
        from .spark.table import HiveAcidTable

        return HiveAcidTable
    if name in ("register_view", "sql"):
        from .spark import sql_views

        return getattr(sql_views, name)
    if name in ("transaction", "read_tables"):
        from . import multi_write

        return getattr(multi_write, name)
    if name in ("read_table", "write_table"):
        from . import direct

        return getattr(direct, name)
    raise AttributeError(name)
