"""The DataFrames ``HiveAcidTable.history()`` and ``HiveAcidTable.detail()`` return (the facts
come from the catalog layer: ``catalog.base.TableRef.history``, ``catalog.detail``)."""
from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

from pyspark.sql import DataFrame, SparkSession

from ..catalog.base import TableRef
from ..catalog.detail import table_detail
from ..exceptions import InvalidOptionError

HISTORY_SCHEMA = ("writeId long, state string, operation string, startedAt timestamp, "
                  "finishedAt timestamp, partitions array<string>, numInsertedRows long, "
                  "numDeletedRows long, reason string")
DETAIL_SCHEMA = ("name string, location string, format string, kind string, fileFormat string, "
                 "columns array<string>, partitionColumns array<string>, "
                 "bucketColumns array<string>, numBuckets int, numPartitions long, numFiles long, "
                 "sizeInBytes long, currentWriteId long, openWriteIds array<long>, "
                 "abortedWriteIds array<long>, snapshot string")


def _ts(x: Optional[float]) -> Optional[_dt.datetime]:
    return _dt.datetime.fromtimestamp(x, tz=_dt.timezone.utc) if x else None


def history_frame(spark: SparkSession, ref: TableRef, limit: Optional[int] = None) -> DataFrame:
    """One row per write id, newest first; at most ``limit`` rows."""
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise InvalidOptionError(f"history(limit={limit!r}): give a positive number of rows")
    entries = ref.history()
    if limit is not None:
        entries = entries[:limit]
    rows = [(h["writeId"], h["state"], h.get("operation"), _ts(h.get("startedAt")),
             _ts(h.get("finishedAt")), list(h.get("partitions") or []),
             (h.get("metrics") or {}).get("numInsertedRows"),
             (h.get("metrics") or {}).get("numDeletedRows"), h.get("reason"))
            for h in entries]
    return spark.createDataFrame(rows, HISTORY_SCHEMA)


def detail_frame(spark: SparkSession, ref: TableRef) -> DataFrame:
    """One row: the table's facts (``catalog.detail.table_detail``)."""
    d: dict[str, Any] = table_detail(ref)
    names = [f.split(" ")[0] for f in DETAIL_SCHEMA.split(", ")]
    return spark.createDataFrame([tuple(d[n] for n in names)], DETAIL_SCHEMA)
