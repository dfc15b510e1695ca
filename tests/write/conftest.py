"""Fixtures of the writer tests. The session-scoped ``spark`` fixture comes from tests/conftest.py."""
from __future__ import annotations

import pyarrow as pa
import pytest

from spark_hive_acid.io.filesystem import LocalFileSystem


@pytest.fixture
def acid_spark(spark):
    """The shared SparkSession with the ``hiveacid`` format registered."""
    from spark_hive_acid.spark.table import ensure_registered

    ensure_registered(spark)
    return spark


@pytest.fixture
def fs() -> LocalFileSystem:
    return LocalFileSystem()


ROW_TYPE = pa.struct([("id", pa.int64()), ("name", pa.string())])
