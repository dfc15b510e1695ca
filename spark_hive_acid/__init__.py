"""spark-hive-acid: read and write Apache Hive ACID tables from PySpark 4.

``spark.read.format("hiveacid").load(path)`` works once the package is installed (Spark finds
``pyspark_hiveacid.DefaultSource``); :func:`register` registers the source explicitly.
"""
from __future__ import annotations

from .exceptions import HiveAcidError

__version__ = "0.1.0"
__all__ = ["register", "HiveAcidError", "HiveAcidTable", "read_table", "__version__"]


def register(spark) -> None:
    """Register the ``hiveacid`` format on a SparkSession (needed only where the package is not
    importable by Spark's Python workers at JVM start, e.g. a session created before install)."""
    from .datasource import HiveAcidDataSource

    spark.dataSource.register(HiveAcidDataSource)


def __getattr__(name: str):
    if name == "HiveAcidTable":
        from .table import HiveAcidTable

        return HiveAcidTable
    if name == "read_table":
        from .read.scan import read_table

        return read_table
    raise AttributeError(name)
