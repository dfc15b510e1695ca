"""Table references: a directory (path mode) or a table named in a Hive Metastore (see :mod:`.base`)."""
from __future__ import annotations

from typing import Mapping, Optional

from .. import options as opt
from ..read.options import ReadOptions
from ..read.scan import TableScan
from .base import METASTORE_MODE, PATH_MODE, TableRef, state_in_snapshot
from .hms import MetastoreTable, metastore_table
from .path import PathTable

__all__ = ["METASTORE_MODE", "PATH_MODE", "MetastoreTable", "PathTable", "TableRef",
           "metastore_table", "open_scan", "state_in_snapshot", "table_ref"]


def table_ref(options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None, *,
              in_worker: bool = False) -> TableRef:
    """The table the options name: option ``table`` (a metastore table) or ``path``."""
    path, table = opt.path_or_table(options, "use .mode('append').save('/path/to/table') / "
                                             ".load('/path/to/table'), or")
    if table:
        return MetastoreTable.from_options(options, spark_conf, in_worker=in_worker)
    return PathTable(str(path), options)


def open_scan(options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None, *,
              in_worker: bool = False) -> TableScan:
    """The scan read options ask for: the table they name, resolved once, read with them."""
    read = ReadOptions.parse(options)
    return table_ref(options, spark_conf, in_worker=in_worker).scan(read)
