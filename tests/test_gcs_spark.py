"""Reads of ``gs://`` that cannot reach their endpoint end with an error, not a 15-minute wait
(marker ``gcs``; tests/gcs_server).

pyarrow's GCS client retries a failing request for 15 minutes by default, sleeping between tries.
A Spark worker that does not get the emulator's address (``STORAGE_EMULATOR_HOST`` set in the
driver after the JVM started never reaches the Python workers, which the JVM forks from its own
environment) goes to Google's endpoint instead, and the query sat idle after planning:
``gcsRetryTimeLimit`` bounds it (10 s for an emulator, else 60 s).
"""
from __future__ import annotations

import datetime as dt
import socket
import time

import pyarrow as pa
import pytest

from spark_hive_acid import write_table
from spark_hive_acid.exceptions import StorageError
from spark_hive_acid.io import gcs_settings
from spark_hive_acid.io.registry import get_filesystem

pytestmark = pytest.mark.gcs


def test_retry_time_limit_defaults_and_option():
    limit = lambda options, env: gcs_settings.resolve(options, env).arrow_kwargs()[  # noqa: E731
        "retry_time_limit"]
    assert limit({}, {}) == dt.timedelta(seconds=60)
    assert limit({}, {"STORAGE_EMULATOR_HOST": "127.0.0.1:4443"}) == dt.timedelta(seconds=10)
    assert limit({"fs.gs.storage.root.url": "http://127.0.0.1:4443",
                  "gcsRetryTimeLimit": "2.5"}, {}) == dt.timedelta(seconds=2.5)


def test_unreachable_emulator_fails_within_its_retry_limit():
    """Connection refused is retried by pyarrow; an emulator's reads give up after 10 s."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    fs, path = get_filesystem("gs://bucket/t", {"fs.gs.storage.root.url":
                                                f"http://127.0.0.1:{port}"})
    started = time.monotonic()
    with pytest.raises(StorageError):
        fs.status(path)
    assert time.monotonic() - started < 60


@pytest.mark.spark
def test_spark_read_without_the_endpoint_fails_instead_of_hanging(spark, gcs, monkeypatch):
    """The reproduction of the hang: the endpoint only in the driver's environment, set after
    Spark started; the workers go to Google's endpoint and now give up."""
    uri = gcs.uri("w/t")
    write_table(pa.table({"id": [1, 2]}), uri, mode="append", options=gcs.options())
    for k, v in gcs.environment().items():
        monkeypatch.setenv(k, v)
    started = time.monotonic()
    with pytest.raises(Exception, match="(?i)gs://|storage|retry"):
        spark.read.format("hiveacid").option("gcsRetryTimeLimit", "3").load(uri).collect()
    assert time.monotonic() - started < 120
    got = spark.read.format("hiveacid").options(**gcs.options()).load(uri).collect()  # options
    assert sorted(r["id"] for r in got) == [1, 2]  # travel to the workers
