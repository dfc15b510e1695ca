"""The SQL route: a name for a table that ``SELECT``, ``INSERT INTO`` and ``INSERT OVERWRITE`` work
through, and where every statement sees every commit made before it started.

What PySpark 4.3 does with a Python data source in SQL (verified; docs/sql.md):

* ``CREATE TABLE t USING hiveacid LOCATION ...``: later statements on ``t`` hand the source no
  options at all, so it cannot know which table it is; refused at CREATE (see
  :func:`refuse_catalog_table`) where Spark lets the source see it.
* ``CREATE TEMPORARY VIEW v USING hiveacid OPTIONS (path ...)``: ``INSERT INTO v`` works, but
  Spark plans the view's read once and keeps that plan: every later ``SELECT`` returns the
  snapshot of the first one.

So a view is the name, and it is defined again right before each statement that uses it:
:func:`register_view` remembers the view on the session, :func:`sql` re-creates the views a
statement names, then runs it. Refusals of catalog tables: :mod:`.sql_route`.
"""
from __future__ import annotations

import re
from typing import Any, Mapping, Optional

from .. import options as opt
from ..exceptions import InvalidOptionError
from ..catalog.hms import resolve_uris
from .datasource import FORMAT_NAME
from .sql_route import ROUTE  # noqa: F401  (re-exported: the route the docs give)
from .table import ensure_registered, spark_conf_of

_VIEWS = "_hiveacid_sql_views"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _views(spark: Any) -> dict[str, dict[str, str]]:
    views = getattr(spark, _VIEWS, None)
    if views is None:
        views = {}
        setattr(spark, _VIEWS, views)
    return views


def _define(spark: Any, name: str, options: Mapping[str, str]) -> None:
    body = ", ".join(f"`{k}` {_quote(v)}" for k, v in sorted(options.items()))
    spark.sql(f"CREATE OR REPLACE TEMPORARY VIEW `{name}` USING {FORMAT_NAME} OPTIONS ({body})")


def register_view(spark: Any, name: str, path: Optional[str] = None, *,
                  table: Optional[str] = None,
                  options: Optional[Mapping[str, str]] = None) -> None:
    """Name the table at ``path`` (or the metastore table ``table``) ``name`` for SQL through
    :func:`sql`. ``options``: read/write options of the table (``metastoreUri``, storage)."""
    if not _NAME.fullmatch(name):
        raise InvalidOptionError(f"register_view: '{name}' is not a plain view name "
                                 "(letters, digits, _)")
    if (path is None) == (table is None):
        raise InvalidOptionError("register_view needs a path or table='db.tbl' (one of them)")
    opt.check_entry(options, "register_view")
    ensure_registered(spark)
    given = {**opt.lowered(options), **({"path": path} if path else {"table": str(table)})}
    if table is not None and not opt.get_str(given, "metastoreUri"):
        # the view's reads run in Spark's workers, which do not see the Spark conf
        given["metastoreuri"] = resolve_uris(given, spark_conf_of(spark))
    _define(spark, name, given)  # fails here when the table cannot be read
    _views(spark)[name.lower()] = given


def sql(spark: Any, statement: str) -> Any:
    """``spark.sql(statement)`` after defining again every view of :func:`register_view` the
    statement names, so that it reads the table's current snapshot."""
    views = _views(spark)
    if views:
        words = {w.lower() for w in _NAME.findall(statement)}
        for name, given in views.items():
            if name in words:
                _define(spark, name, given)
    return spark.sql(statement)
