"""Leaving Hive ACID: convert or mirror a table to Iceberg or Delta, history included
(docs/convert.md).

::

    from spark_hive_acid import convert, mirror
    from spark_hive_acid.conversion import iceberg_target, delta_target

    convert("/warehouse/sales", delta_target("/lake/sales"))                   # once
    mirror("/warehouse/sales", delta_target("/lake/sales"))                    # again and again
    convert("db.sales", iceberg_target({"type": "sql", "uri": "sqlite:////lake/cat.db",
                                        "warehouse": "file:///lake"}, "db.sales"),
            options={"metastoreUri": "thrift://hms:9083"})

No Spark is needed (the rows are read and written in this process, by threads);
``HiveAcidTable.convertToIceberg`` / ``convertToDelta`` / ``mirrorTo*`` are the same from Spark.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Union

from .. import options as opt
from ..catalog import TableRef, table_ref
from ..exceptions import InvalidOptionError
from .run import CONVERT, MIRROR, ConvertResult, Progress, run
from .target import Target

__all__ = ["ConvertResult", "Target", "convert", "delta_target", "iceberg_target", "mirror",
           "source_ref"]

TargetLike = Union[Target, str]


def iceberg_target(catalog: Any, identifier: str) -> Target:
    """Table ``identifier`` of an Iceberg catalog: a pyiceberg ``Catalog``, or the properties to
    load one (``{"type": "sql", "uri": "sqlite:///cat.db", "warehouse": "file:///lake"}``;
    ``type`` ``hive`` or ``rest`` for a Hive Metastore or a REST catalog)."""
    from .iceberg import IcebergTarget

    return IcebergTarget(catalog, identifier)


def delta_target(path: str, storage_options: Optional[Mapping[str, str]] = None) -> Target:
    """The Delta table at ``path`` (local, ``file://``, or a URI deltalake takes)."""
    from .delta import DeltaTarget

    return DeltaTarget(path, dict(storage_options) if storage_options else None)


def source_ref(source: Union[str, TableRef], options: Optional[Mapping[str, str]] = None
               ) -> TableRef:
    """The Hive table: a :class:`TableRef`, a path, or ``db.table`` with option metastoreUri."""
    if isinstance(source, TableRef):
        return source
    opt.check_known(options, "convert")
    given = opt.lowered(options)
    if opt.get_str(given, "metastoreUri") and "/" not in source and ":" not in source:
        return table_ref({**given, "table": source})
    return table_ref({**given, "path": source})


def _target(target: TargetLike) -> Target:
    if isinstance(target, Target):
        return target
    if isinstance(target, str):
        return delta_target(target)
    raise InvalidOptionError("target: iceberg_target(catalog, 'db.table') or "
                             "delta_target('/path'), or a path (a Delta table)")


def _go(mode: str, source: Union[str, TableRef], target: TargetLike, *, history: bool,
        verify: bool, options: Optional[Mapping[str, str]], up_to: Optional[int],
        workers: int, progress: Optional[Progress], samples: int) -> ConvertResult:
    ref = source_ref(source, options)
    tgt = _target(target)
    result = run(ref, tgt, mode, history=history, up_to=up_to, workers=workers,
                 progress=progress)
    if verify:
        from .verdict import verdict

        result.verdict = verdict(ref, tgt, samples=samples)
    return result


def convert(source: Union[str, TableRef], target: TargetLike, *, history: bool = True,
            verify: bool = True, options: Optional[Mapping[str, str]] = None,
            up_to: Optional[int] = None, workers: int = 2, progress: Optional[Progress] = None,
            samples: int = 3) -> ConvertResult:
    """Convert the Hive ACID table ``source`` into a new ``target`` table: one target snapshot
    per committed write id (``history=False``: one snapshot, the table now), then compare the
    target with our read of the table (``verify``; the result's ``verdict``)."""
    return _go(CONVERT, source, target, history=history, verify=verify, options=options,
               up_to=up_to, workers=workers, progress=progress, samples=samples)


def mirror(source: Union[str, TableRef], target: TargetLike, *, history: bool = True,
           verify: bool = True, options: Optional[Mapping[str, str]] = None,
           up_to: Optional[int] = None, workers: int = 2, progress: Optional[Progress] = None,
           samples: int = 3) -> ConvertResult:
    """Convert on the first run; afterwards apply the write ids committed since the last run,
    exactly once (the last one applied is in the target's own metadata)."""
    return _go(MIRROR, source, target, history=history, verify=verify, options=options,
               up_to=up_to, workers=workers, progress=progress, samples=samples)
