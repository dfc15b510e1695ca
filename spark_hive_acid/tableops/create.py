"""Creating an empty path-mode table: columns (partition columns included), partitioning,
bucketing, properties, without writing a row (``CREATE TABLE ... STORED AS ORC TBLPROPERTIES
('transactional'='true')`` for a directory). Only the layout file is written; the first write
allocates write id 1, and readers meanwhile see the declared columns and no rows."""
from __future__ import annotations

import logging
from typing import Any, Mapping, Optional, Sequence, Union

import pyarrow as pa

from .. import options as opt
from ..acid.types import arrow_to_hive, parse_column_list
from ..catalog import PathTable
from ..exceptions import InvalidOptionError
from ..write.options import WriteOptions
from ..write.table_setup import create_layout, layout_from_columns

log = logging.getLogger(__name__)

#: columns as Hive DDL ("id int, c char(5)"), an Arrow schema, or (name, Hive type) pairs
ColumnsArg = Union[str, pa.Schema, Sequence[tuple[str, str]]]


def columns_of(schema: ColumnsArg) -> list[tuple[str, str]]:
    """``schema`` as (name, Hive type) pairs."""
    if isinstance(schema, str):
        return parse_column_list(schema)
    if isinstance(schema, pa.Schema):
        return [(f.name, arrow_to_hive(f.type, f.name)) for f in schema]
    out = [(str(n), str(t)) for n, t in schema]
    return parse_column_list(", ".join(f"`{n}` {t}" for n, t in out)) if out else []


def create_path_table(path: str, schema: ColumnsArg, *,
                      partition_by: Optional[Sequence[str]] = None,
                      bucket_by: Optional[Sequence[str]] = None, num_buckets: Optional[int] = None,
                      options: Optional[Mapping[str, Any]] = None,
                      if_not_exists: bool = False) -> PathTable:
    """Create an empty table at ``path`` (see the module docstring) and return its reference.

    ``options``: the other creation options (``bucketingVersion``, ``compression``,
    ``tableProperties``, ``fileFormat``) and storage options. A table already there is an
    InvalidOptionError, unless ``if_not_exists`` (it is then returned as it is)."""
    opt.check_known(options, "create")
    given = {**opt.lowered({k: str(v) for k, v in (options or {}).items()}),
             **opt.lowered({k: v for k, v in {
                 "path": path,
                 "partitionBy": ",".join(partition_by) if partition_by else None,
                 "bucketBy": ",".join(bucket_by) if bucket_by else None,
                 "numBuckets": None if num_buckets is None else str(num_buckets)}.items()
                 if v is not None})}
    ref = PathTable(path, given)
    layout = layout_from_columns(WriteOptions.parse(ref.options), columns_of(schema))
    if create_layout(ref.fs, ref.path, layout):
        log.info("Created the empty table %s: %s", path, layout.columns + layout.partition_columns)
        return ref
    if if_not_exists:
        return PathTable.existing(path, given)
    raise InvalidOptionError(
        f"{path} already holds a table (or other files); use HiveAcidTable.forPath, or "
        "create(..., ifNotExists=True)")
