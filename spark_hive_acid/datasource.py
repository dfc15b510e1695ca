"""Compatibility path (one release): the data source lives in :mod:`spark_hive_acid.spark.datasource`."""
from __future__ import annotations

from .spark.datasource import (  # noqa: F401
    FORMAT_NAME,
    HiveAcidDataSource,
    HiveAcidPartition,
    HiveAcidPushdownReader,
    HiveAcidReader,
)
