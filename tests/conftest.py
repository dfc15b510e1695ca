"""Shared fixtures: one SparkSession per test session, corpus copies in temp dirs
(``corpus_location``: found through ``HIVE_ACID_CORPUS``)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from corpus_location import corpus_copy  # noqa: F401  (a Hive-written corpus table in a temp dir)
from hdfs_cluster.fixtures import hdfs, hdfs_cluster  # noqa: F401  (a real HDFS: MiniDFSCluster)
from webhdfs_targets import webhdfs_target  # noqa: F401  (the WebHDFS double, then the real HDFS)
from storage_targets import storage_target  # noqa: F401  (double, real HDFS, S3 server)
from s3_server.fixtures import s3, s3_server  # noqa: F401  (an S3 server: moto on 127.0.0.1)
from azure_server.fixtures import azure, azure_server  # noqa: F401  (Azure Blob: Azurite)
from gcs_server.fixtures import gcs, gcs_server  # noqa: F401  (GCS: fake-gcs-server)
from hive_ref.fixtures import hive_ref  # noqa: F401  (session-scoped Hive 2.3 reference JVM)
from hive_jvm.fixtures import hive31, hive41, hive3_oracle, newer_hives  # noqa: F401  (Hive 3.1 / 4.1)
from metastore_server.fixtures import metastore  # noqa: F401  (session-scoped real Hive Metastore)

ROOT = Path(__file__).resolve().parent.parent

# Spark's Python workers must run this interpreter (the venv's), not the system Python.
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("spark-hive-acid-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", str(ROOT / ".build" / "spark-warehouse"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
