"""What a SQL user is told when Spark's catalog is used with ``hiveacid``: PySpark 4.3 hands a
Python data source no options for a catalog table after ``CREATE TABLE`` (and ``saveAsTable`` /
``insertInto`` without a path), so such a table cannot work; the route that does is a temporary
view (:mod:`.sql_views`, docs/sql.md)."""
from __future__ import annotations

from typing import Mapping

from ..exceptions import InvalidOptionError

#: what to do instead of a catalog table (the messages of every refusal quote it)
ROUTE = ("use a temporary view, defined again before each statement so that it sees every "
         "commit: from PySpark, spark_hive_acid.register_view(spark, 'orders', '/path/to/table') "
         "then spark_hive_acid.sql(spark, 'SELECT ... FROM orders' / 'INSERT INTO orders ...'); "
         "in plain SQL, CREATE OR REPLACE TEMPORARY VIEW orders USING hiveacid OPTIONS "
         "(path '/path/to/table') before the statements (docs/sql.md)")


def refuse_catalog_table(options: Mapping[str, str]) -> None:
    """Raised from ``schema()`` when Spark creates a catalog table (``CREATE TABLE ... USING
    hiveacid`` with no column list: Spark passes ``provider``); later statements on such a table
    would get no options."""
    keys = {str(k).lower() for k in options}
    if "provider" in keys:
        where = options.get("location") or options.get("path") or "the table"
        raise InvalidOptionError(
            f"CREATE TABLE ... USING hiveacid does not work in PySpark 4.3: Spark gives a "
            "Python data source no options for a catalog table after CREATE, so SELECT and "
            f"INSERT could not find {where}. Instead, {ROUTE}")
