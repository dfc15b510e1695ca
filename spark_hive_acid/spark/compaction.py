"""Spark glue of compaction: the units of a compaction (``compaction.plan.Unit``, one output file
each) run as Spark tasks, one task per unit; everything else is ``spark_hive_acid.compaction``."""
from __future__ import annotations

from typing import Sequence

from pyspark.sql import SparkSession

from ..compaction.plan import Unit
from ..compaction.rewrite import UnitResult
from ..compaction.runner import RunUnits, UnitContext
from .job_progress import run_with_progress


def spark_runner(spark: SparkSession) -> RunUnits:
    """A ``run_units`` for ``compaction.runner.compact`` that runs each unit as a Spark task."""
    def run(units: Sequence[Unit], ctx: UnitContext) -> list[UnitResult]:
        if not units:
            return []
        rdd = spark.sparkContext.parallelize(list(units), len(units))
        return run_with_progress(spark, f"compaction: {len(units)} output file(s)",
                                 rdd.map(ctx.run).collect)
    return run
