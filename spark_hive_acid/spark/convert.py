"""Spark glue of the conversion to Iceberg / Delta (``spark_hive_acid.conversion``): the table
API's ``convertTo*`` / ``mirrorTo*`` and the mirror as a Spark stream.

The conversion itself runs in the driver (in-process readers and writers, by threads); the stream
only triggers it: each micro-batch of the table's own streaming source (``Trigger.AvailableNow``
or a processing-time trigger) mirrors every write id committed so far, exactly once, whatever
Spark's checkpoint says (the last applied write id is in the target's own metadata)."""
from __future__ import annotations

import logging
from typing import Any, Mapping, Optional

from pyspark.sql import DataFrame, SparkSession

from ..catalog import TableRef
from ..conversion import convert, delta_target, iceberg_target, mirror
from ..conversion.target import Target

log = logging.getLogger(__name__)


def iceberg(catalog: Any, identifier: str) -> Target:
    return iceberg_target(catalog, identifier)


def delta(path: str, storage_options: Optional[Mapping[str, str]] = None) -> Target:
    return delta_target(path, storage_options)


def run(ref: TableRef, target: Target, *, mirror_mode: bool, history: bool = True,
        verify: bool = True, samples: int = 3) -> dict:
    """Convert (or mirror) ``ref`` into ``target``; the result as a dict (``verdict`` included)."""
    go = mirror if mirror_mode else convert
    return go(ref, target, history=history, verify=verify, samples=samples).to_dict()


def mirror_stream(spark: SparkSession, ref: TableRef, reader_options: Mapping[str, str],
                  target: Target, checkpoint: str, trigger: Optional[dict] = None,
                  verify: bool = False) -> Any:
    """Start a stream that mirrors ``ref`` into ``target`` on each micro-batch; ``trigger``:
    keyword arguments of ``DataStreamWriter.trigger`` (default ``availableNow=True``). Returns
    the StreamingQuery."""
    source = (spark.readStream.format("hiveacid").options(**reader_options)
              .option("skipChangeCommits", "true").option("maxWriteIdsPerTrigger", "1000000"))
    df = source.load()
    columns = df.columns[:1]  # the batch's rows are not used: read one column of them

    def each(batch: DataFrame, batch_id: int) -> None:
        result = mirror(ref, target, verify=verify)
        log.info("mirror batch %d of %s: write id %s -> %s (%d steps)", batch_id, ref.display,
                 result.previous_write_id, result.write_id, len(result.steps))

    writer = (df.select(*columns).writeStream.foreachBatch(each)
              .option("checkpointLocation", checkpoint))
    return writer.trigger(**(trigger or {"availableNow": True})).start()
