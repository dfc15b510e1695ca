"""The commands that change a table (no Spark): ``create``, ``truncate``, ``drop-partitions``,
``add-columns``. Each is one transaction of the library's (docs/cli.md, docs/writing.md); the
result is printed as JSON."""
from __future__ import annotations

import argparse
import json
from typing import Any, Mapping

from ..acid.types import parse_column_list
from ..catalog import MetastoreTable, PathTable, TableRef
from ..exceptions import InvalidOptionError
from ..tableops import create_path_table, drop_partitions, truncate
from .target import is_table_name

COMMANDS = ("create", "truncate", "drop-partitions", "add-columns")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    c = sub.add_parser("create", parents=[common], help="create an empty path-mode table")
    c.add_argument("schema", help="every column as Hive DDL: 'id int, name varchar(20), day string'")
    c.add_argument("--partition-by", default="", help="comma-separated partition columns")
    c.add_argument("--bucket-by", default="", help="comma-separated CLUSTERED BY columns")
    c.add_argument("--num-buckets", type=int, help="bucket count (with --bucket-by)")
    c.add_argument("--if-not-exists", action="store_true", help="a table there is fine")
    sub.add_parser("truncate", parents=[common],
                   help="empty the table as one ACID write (older versions keep their rows)")
    d = sub.add_parser("drop-partitions", parents=[common],
                       help="empty the partitions a condition selects, as one ACID write")
    d.add_argument("condition", help="SQL on the partition columns: \"day < '2024-01-01'\"")
    a = sub.add_parser("add-columns", parents=[common], help="ALTER TABLE ... ADD COLUMNS")
    a.add_argument("columns", help="new columns as Hive DDL: 'note string, qty int'")


def _ddl(columns: Any) -> list[str]:
    return [f"{n} {t}" for n, t in columns]


def _ref(location: str, options: Mapping[str, str]) -> TableRef:
    if is_table_name(location, options):
        return MetastoreTable.from_options({**options, "table": location})
    return PathTable.existing(location, options)


def run(args: argparse.Namespace, options: Mapping[str, str]) -> int:
    """Run one of :data:`COMMANDS`; prints what it did as JSON."""
    if args.command == "create":
        if is_table_name(args.table, options):
            raise InvalidOptionError(
                f"hiveacid create makes path-mode tables; {args.table} names a metastore table: "
                "create it with Hive (CREATE TABLE ... TBLPROPERTIES ('transactional'='true')) "
                "or HiveAcidTable.create(spark, 'db.table', ...)")
        split = [x.strip() for x in args.partition_by.split(",") if x.strip()]
        bucket = [x.strip() for x in args.bucket_by.split(",") if x.strip()]
        ref = create_path_table(args.table, args.schema, partition_by=split, bucket_by=bucket,
                                num_buckets=args.num_buckets, options=options,
                                if_not_exists=args.if_not_exists)
        layout = ref.layout()
        out: dict[str, Any] = {"table": args.table, "columns": _ddl(layout.columns),
                               "partitionColumns": _ddl(layout.partition_columns),
                               "bucketColumns": layout.bucket_columns,
                               "numBuckets": layout.num_buckets}
    elif args.command == "truncate":
        out = truncate(_ref(args.table, options))
    elif args.command == "drop-partitions":
        out = drop_partitions(_ref(args.table, options), args.condition)
    else:
        layout = _ref(args.table, options).add_columns(parse_column_list(args.columns))
        out = {"table": args.table, "columns": _ddl(layout.columns)}
    print(json.dumps(out, indent=2, default=str))
    return 0
