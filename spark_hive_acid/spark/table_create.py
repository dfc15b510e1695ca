"""``HiveAcidTable.create``: an empty table with a schema, partitioning and bucketing, at a path
(path mode: ``tableops.create``) or registered in a Hive Metastore (``catalog.hms.create_table``).
Spark's ``char(n)`` / ``varchar(n)`` columns keep their Hive types (docs/writing.md, "char and
varchar")."""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping, Optional

import pyarrow as pa
from pyspark.sql.types import (
    ArrayType, CharType, DataType, MapType, StructType, VarcharType,
)

from .. import options as opt
from ..acid.types import arrow_to_hive, hive_to_arrow
from ..catalog import MetastoreTable, TableRef
from ..catalog.hms import create_table
from ..exceptions import InvalidOptionError
from ..tableops.create import create_path_table
from ..write.options import WriteOptions


def looks_like_path(name: str) -> bool:
    """A path or URI (``/data/t``, ``./t``, ``hdfs://nn/t``, ``s3a://b/t``), not ``db.table``."""
    return "/" in name or name.startswith(("~", ".")) or "://" in name or name.startswith("file:")


def hive_type(dt: DataType) -> str:
    """The Hive type of a Spark type; ``char(n)`` / ``varchar(n)`` as declared."""
    if isinstance(dt, CharType):
        return f"char({dt.length})"
    if isinstance(dt, VarcharType):
        return f"varchar({dt.length})"
    if isinstance(dt, StructType):
        return "struct<" + ",".join(f"{f.name}:{hive_type(f.dataType)}" for f in dt.fields) + ">"
    if isinstance(dt, ArrayType):
        return f"array<{hive_type(dt.elementType)}>"
    if isinstance(dt, MapType):
        return f"map<{hive_type(dt.keyType)},{hive_type(dt.valueType)}>"
    from pyspark.sql.pandas.types import to_arrow_type
    return arrow_to_hive(to_arrow_type(dt, timezone="UTC"), "")


def struct_of(schema: Any) -> StructType:
    if isinstance(schema, str):
        try:
            schema = StructType.fromDDL(schema)
        except Exception as e:  # noqa: BLE001 - Spark's parse error, said in our words
            raise InvalidOptionError(f"create(): cannot parse the schema {schema!r}: {e}") from e
    if not isinstance(schema, StructType):
        raise InvalidOptionError("create() needs schema= a StructType or a DDL string "
                                 "('id int, name string')")
    return schema


def _cols(v: Any) -> Optional[str]:
    return v if v is None or isinstance(v, str) else ",".join(v)


def create(spark_conf: Mapping[str, str], name: str, schema: Any, *, partitionBy: Any = None,
           bucketBy: Any = None, numBuckets: Optional[int] = None,
           properties: Optional[Mapping[str, str]] = None, location: Optional[str] = None,
           bucketingVersion: Optional[int] = None, compression: Optional[str] = None,
           ifNotExists: bool = False, options: Optional[Mapping[str, str]] = None) -> TableRef:
    """The table ``create`` made (see ``HiveAcidTable.create``)."""
    struct = struct_of(schema)
    columns = [(f.name, hive_type(f.dataType)) for f in struct.fields]
    given = {"partitionBy": _cols(partitionBy), "bucketBy": _cols(bucketBy),
             "numBuckets": numBuckets, "bucketingVersion": bucketingVersion,
             "compression": compression}
    creation = {k: str(v) for k, v in given.items() if v is not None}
    if looks_like_path(name):
        if location is not None:
            raise InvalidOptionError(f"create({name!r}, location=...): a path-mode table is its "
                                     "path; location is for tables of a metastore")
        props = {"tableProperties": json.dumps(dict(properties))} if properties else {}
        return create_path_table(name, columns, options={**opt.lowered(options), **creation,
                                                         **props},
                                 if_not_exists=ifNotExists)
    wopts = WriteOptions.parse(creation, require_path=False)
    wopts = dataclasses.replace(wopts, table_properties=dict(properties or {}))
    table = MetastoreTable.from_options({**opt.lowered(options), "table": name}, spark_conf)
    arrow = pa.schema([pa.field(n, hive_to_arrow(t, n)) for n, t in columns])
    create_table(table, arrow, wopts, location=location, if_not_exists=ifNotExists,
                 columns=columns)
    return table


def column_list(columns: Any) -> list[tuple[str, str]]:
    """``addColumns``' argument as (name, Hive type) pairs: a DDL string, a StructType, or
    pairs (Hive types)."""
    if isinstance(columns, (str, StructType)):
        return [(f.name, hive_type(f.dataType)) for f in struct_of(columns).fields]
    try:
        return [(str(n), str(t)) for n, t in columns]
    except (TypeError, ValueError) as e:
        raise InvalidOptionError(
            "addColumns takes a DDL string ('note string, qty int'), a StructType or (name, "
            f"Hive type) pairs, not {columns!r}") from e
