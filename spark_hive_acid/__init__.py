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
           "transaction", "read_tables", "register_view", "sql", "convert", "mirror",
           "maintain", "doctor", "__version__"]


def register(spark: Any) -> None:
    """Register the ``hiveacid`` format on a SparkSession (needed only where Spark's own lookup
    missed it, e.g. a session created before the package was installed). Raises WorkerPythonError
    when Spark's Python workers run an interpreter without the package (PYSPARK_PYTHON)."""
    from .spark.datasource import HiveAcidDataSource
    from .spark.worker_python import check_worker_python

    check_worker_python(spark)  # a worker without the package: say what to set, now
    spark.dataSource.register(HiveAcidDataSource)


def __dir__() -> list[str]:
    """The module's names with the lazily imported ones (``dir()``, tab completion)."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    if name == "HiveAcidTable":
        from .spark.table import HiveAcidTable

        return HiveAcidTable
    if name in ("register_view", "sql"):
        from .spark import sql_views

        return getattr(sql_views, name)
    if name in ("convert", "mirror"):  # to Iceberg / Delta, without Spark (docs/convert.md)
        from . import conversion

        return getattr(conversion, name)
    if name in ("maintain", "doctor"):  # the warehouse tools (docs/maintenance.md)
        from .spark import maintenance

        return getattr(maintenance, name)
    if name in ("transaction", "read_tables"):
        from . import multi_write

        return getattr(multi_write, name)
    if name in ("read_table", "write_table"):
        from . import direct

        return getattr(direct, name)
    raise AttributeError(name)
