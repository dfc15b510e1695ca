"""Every PySpark internal the connector relies on, in one place.

PySpark 4.3's public API leaves a few gaps; each is bridged here with an internal whose breakage a
PySpark upgrade must not hide. ``tests/test_pyspark_compat.py`` exercises each one and fails loudly
when it stops working:

* :func:`pushdown_enabled` - whether the planning worker enabled filter pushdown (a local
  variable of PySpark's planning code; not passed to the data source);
* :func:`map_in_arrow` - ``mapInArrow`` without pandas (PySpark builds its UDF through
  ``pandas_udf``, which refuses to run without pandas although the Arrow path never uses it);
* :func:`plan_references` - the columns an expression reads, from the JVM's analyzed plan;
* :func:`in_spark_worker` / :func:`driver_process` - whether this process is a PySpark worker and
  which process is the Spark driver whose death ends the job (environment and ``/proc``);
* :func:`mark_session` / :func:`session_marked` - a flag kept on a SparkSession object;
* :func:`library_errors` (:func:`library_error`) - the library's own exception class back from the text of the error
  Spark raises when a data source call failed in a Python worker (the Python type is lost there);
* :func:`data_source_exists` - whether a session already knows a data source name (statically
  registered ``pyspark_*`` packages included), from the JVM's DataSourceManager.
* :func:`in_stream_commit_worker` - whether ``DataSource.streamWriter`` is being called by the
  worker that commits a micro-batch (PySpark calls it there too, not only when planning);
* :func:`stream_batch_of_task` - the streaming query id and micro-batch id of an executor task
  (local properties Spark's micro-batch execution sets).
"""
from __future__ import annotations

import logging
import os
import re
import sys
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator, Optional, Sequence

from .. import exceptions

from ..txn.processes import process_info, this_process
from .worker_python import worker_python_error

log = logging.getLogger(__name__)


def pushdown_enabled() -> bool:
    """Whether Spark enabled filter pushdown for the current planning call.

    PySpark 4.3 refuses a reader that implements ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false, but does not tell the data source the
    setting. The planning worker holds it in a local variable ``enable_pushdown`` of a caller's
    frame; if it cannot be found (another PySpark version) pushdown is simply not offered, which is
    always correct.
    """
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        value = frame.f_locals.get("enable_pushdown")
        if isinstance(value, bool):
            return value
        frame = frame.f_back
    return False


def map_in_arrow(df: Any, func: Callable, schema: str) -> Any:
    """``df.mapInArrow(func, schema)``, also where pandas is not installed.

    Without pandas the same UDF is built through PySpark's internal ``_create_udf`` and applied
    through the JVM DataFrame's ``mapInArrow`` (the Python worker needs no pandas either).
    """
    try:
        import pandas  # noqa: F401
        return df.mapInArrow(func, schema)
    except ImportError:
        pass
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import _create_udf
    from pyspark.util import PythonEvalType

    udf = _create_udf(func, schema, PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    col = udf(*[df[c] for c in df.columns])
    return DataFrame(df._jdf.mapInArrow(col._jc, False, None), df.sparkSession)


def plan_references(df: Any, conditions: Sequence[Any], values: Sequence[Any]
                    ) -> Optional[set[str]]:
    """Lower-case names of the columns that ``conditions`` (as filters of ``df``) and ``values``
    (as projections of it) read, from Spark's analyzed plans; None when they cannot be told (e.g.
    Spark Connect has no JVM plan, or an expression does not analyse)."""
    names: set[str] = set()
    try:
        for expr, kind in [(c, "Filter") for c in conditions] + [(v, "Project") for v in values]:
            plan = (df.filter(expr) if kind == "Filter" else df.select(expr))._jdf \
                .queryExecution().analyzed()
            if plan.getClass().getSimpleName() != kind:
                return None
            refs = plan.references().toSeq()
            names.update(refs.apply(i).name().lower() for i in range(refs.size()))
    except Exception as e:  # noqa: BLE001 - an invalid expression fails again, with Spark's message
        log.debug("columns of the expressions not known (%s); reading every column", e)
        return None
    return names


def in_spark_worker() -> bool:
    """True in a Python worker that Spark started (planning, executor or commit worker)."""
    return (os.environ.get("SPARK_PYTHON_RUNTIME") == "PYTHON_WORKER"
            or "PYTHON_WORKER_FACTORY_SECRET" in os.environ)


def driver_process() -> tuple[int, Optional[int]]:
    """``(pid, start time)`` of the process whose death ends the job: in a Spark Python worker the
    driver JVM (the nearest ``java`` ancestor; else the worker's parent, the PySpark daemon, which
    exits with the JVM); elsewhere this process."""
    if not in_spark_worker():
        return this_process()
    pid = os.getppid()
    for _ in range(12):
        info = process_info(pid) if pid > 1 else None
        if info is None:
            break
        if info.command.lower().startswith("java"):
            return pid, info.start
        pid = info.parent
    parent = os.getppid()
    info = process_info(parent)
    return parent, info.start if info else None


_MARK = "_hiveacid_registered"


def session_marked(spark: Any) -> bool:
    return bool(getattr(spark, _MARK, False))


def mark_session(spark: Any) -> None:
    try:
        setattr(spark, _MARK, True)
    except AttributeError:
        pass


def data_source_exists(spark: Any, name: str) -> Optional[bool]:
    """Whether ``spark`` resolves the format ``name`` already (registered at runtime, or found
    statically: a ``pyspark_*`` package with a ``DefaultSource``); None when it cannot be told
    (e.g. Spark Connect)."""
    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()
        return bool(manager.dataSourceExists(name))
    except Exception as e:  # noqa: BLE001 - no JVM session, or another PySpark version
        log.debug("data source lookup of %s not available: %s", name, e)
        return None


_LIBRARY_ERROR = re.compile(r"spark_hive_acid\.exceptions\.(\w+): ([^\n]*)")


def library_error(error: BaseException) -> Optional[exceptions.HiveAcidError]:
    """The library exception a Spark error carries in its text (the last one named), or None."""
    found = _LIBRARY_ERROR.findall(str(error))
    if not found:
        return None
    name, message = found[-1]
    cls = getattr(exceptions, name, None)
    if not (isinstance(cls, type) and issubclass(cls, exceptions.HiveAcidError)):
        return None
    return cls(message)


@contextmanager
def library_errors() -> Iterator[None]:
    """Re-raise an error from a data source call in a Spark worker as the library's own class
    (chained to Spark's), so driver-side callers can catch it."""
    try:
        yield
    except exceptions.HiveAcidError:
        raise
    except Exception as e:
        err = library_error(e) or worker_python_error(str(e))
        if err is None:
            raise
        raise err from e
STREAM_COMMIT_WORKER = "python_streaming_sink_runner"
QUERY_ID_PROPERTY = "sql.streaming.queryId"
BATCH_ID_PROPERTY = "streaming.sql.batchId"


def in_stream_commit_worker() -> bool:
    """True when called (through any depth) from PySpark's streaming commit worker, which builds a
    fresh ``streamWriter`` only to call ``commit``/``abort`` on it. Should the module be renamed,
    this is False and a planning-time writer is built there: a wasted write id, never a wrong
    result (the sink finds its transaction in the commit messages)."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if STREAM_COMMIT_WORKER in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


def stream_batch_of_task() -> tuple[Optional[str], Optional[int]]:
    """``(query id, batch id)`` of the streaming micro-batch this executor task belongs to
    (``(None, None)`` outside a streaming query)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    if ctx is None:
        return None, None
    query, batch = ctx.getLocalProperty(QUERY_ID_PROPERTY), ctx.getLocalProperty(BATCH_ID_PROPERTY)
    return query, int(batch) if batch is not None else None
