"""Spark glue of the warehouse tools (docs/maintenance.md): ``maintain`` runs every compaction's
units as Spark tasks (``spark.compaction.spark_runner``), several tables' jobs at once;
``doctor`` needs no Spark (it reads listings) and is here for symmetry."""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from pyspark.sql import SparkSession

from .. import options as opt
from ..catalog.base import TableRef
from ..maintenance.compat import parse_engines
from ..maintenance.doctor import DoctorSettings, doctor as _doctor
from ..maintenance.health import Thresholds
from ..maintenance.maintain import MaintainSettings, maintain as _maintain
from ..maintenance.targets import Targets, resolve
from ._compat import library_errors
from .compaction import spark_runner
from .table import spark_conf_of

Names = Union[str, Sequence[str], None]


def _list(v: Names) -> list[str]:
    return [] if v is None else [v] if isinstance(v, str) else list(v)


def _refs(spark: SparkSession, database: Names, tables: Names, paths: Names,
          warehouse: Names, all_databases: bool, options: Optional[Mapping[str, str]]
          ) -> list[TableRef]:
    opt.check_known(options, "spark_hive_acid.maintain")
    merged = dict(opt.lowered(options))
    conf = spark_conf_of(spark)
    if (database or tables or all_databases) and "metastoreuri" not in merged and conf:
        from ..metastore.uris import resolve_metastore_uris

        merged["metastoreuri"] = ",".join(resolve_metastore_uris(merged, conf))
    return resolve(Targets(paths=_list(paths), warehouses=_list(warehouse), tables=_list(tables),
                           databases=_list(database), all_databases=all_databases,
                           options=merged))


def maintain(spark: SparkSession, database: Names = None, tables: Names = None,
             paths: Names = None, *, warehouse: Names = None, allDatabases: bool = False,
             dryRun: bool = False, concurrency: int = 2, batch: int = 500,
             retentionHours: float = 168.0, vacuum: bool = True, takeover: bool = True,
             fix: bool = False, engines: Names = None,
             thresholds: Optional[Mapping[str, Any]] = None,
             options: Optional[Mapping[str, str]] = None, progress: bool = True
             ) -> dict[str, Any]:
    """Apply Hive's Initiator rules to every table and partition named (a metastore
    ``database`` (or glob), ``tables`` by name, table ``paths``, a ``warehouse`` directory, or
    ``allDatabases``) and run the compactions and vacuums they call for as Spark jobs,
    ``concurrency`` tables at once; ``dryRun=True`` returns the plan only. Returns the report
    (docs/maintenance.md)."""
    refs = _refs(spark, database, tables, paths, warehouse, allDatabases, options)
    settings = MaintainSettings(
        takeover=takeover, fix=fix, engines=parse_engines(engines),
        thresholds=Thresholds().with_overrides(thresholds), vacuum=vacuum, batch=batch,
        dry_run=dryRun, concurrency=concurrency, retention_hours=retentionHours,
        progress=progress)
    with library_errors():
        return _maintain(refs, settings, run_units=spark_runner(spark),
                         parallelism=spark.sparkContext.defaultParallelism)


def doctor(spark: SparkSession, database: Names = None, tables: Names = None,
           paths: Names = None, *, warehouse: Names = None, allDatabases: bool = False,
           engines: Names = None, thresholds: Optional[Mapping[str, Any]] = None,
           allPartitions: bool = False, options: Optional[Mapping[str, str]] = None
           ) -> dict[str, Any]:
    """``hiveacid doctor`` for the tables named (as :func:`maintain` names them); the report."""
    refs = _refs(spark, database, tables, paths, warehouse, allDatabases, options)
    settings = DoctorSettings(Thresholds().with_overrides(thresholds), parse_engines(engines),
                              partitions="all" if allPartitions else "flagged")
    return _doctor(refs, settings)
