"""Compatibility path (one release): the table API lives in :mod:`spark_hive_acid.spark.table`."""
from __future__ import annotations

from .spark.expressions import referenced_columns  # noqa: F401
from .spark.merge import HiveAcidMergeBuilder  # noqa: F401
from .spark.table import HiveAcidTable, ensure_registered  # noqa: F401
