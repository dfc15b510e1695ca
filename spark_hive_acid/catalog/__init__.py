"""Table references: a directory (path mode) or a table named in a Hive Metastore (see :mod:`.base`)."""
from __future__ import annotations

from typing import Mapping, Optional

from .. import options as opt
from ..exceptions import InvalidOptionError
from .base import TableRef
from .hms import MetastoreTable
from .path import PathTable

__all__ = ["MetastoreTable", "PathTable", "TableRef", "table_ref"]


def table_ref(options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None, *,
              in_worker: bool = False) -> TableRef:
    """The table the options name: option ``table`` (a metastore table) or ``path``."""
    path, table = opt.get_str(options, "path"), opt.get_str(options, "table")
    if path and table:
        raise InvalidOptionError(f"Give either a path ({path}) or option table ({table}), not both")
    if table:
        return MetastoreTable.from_options(options, spark_conf, in_worker=in_worker)
    if not path:
        raise InvalidOptionError(
            "No table given: use .save('/path/to/table') / .load('/path/to/table'), or "
            ".option('table', 'db.tbl') with a metastore (option metastoreUri)")
    return PathTable(path, options)
