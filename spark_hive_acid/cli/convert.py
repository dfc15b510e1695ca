"""``hiveacid convert`` and ``hiveacid mirror``: a Hive ACID table into Iceberg or Delta, without
Spark (docs/convert.md)::

    hiveacid convert /warehouse/sales --delta /lake/sales
    hiveacid convert db.sales --metastore-uri thrift://hms:9083 \\
        --iceberg-table db.sales --catalog type=sql --catalog uri=sqlite:////lake/cat.db \\
        --catalog warehouse=file:///lake
    hiveacid mirror /warehouse/sales --delta /lake/sales          # again: only what is new

Exit code 0: converted and the verdict found the target equal to the Hive table; 1: the verdict
found a difference; 2: the command could not run.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..exceptions import InvalidOptionError
from .key_values import key_values


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    for name, what in (("convert", "convert into a new Iceberg or Delta table, history kept"),
                       ("mirror", "convert on the first run, then apply what is new")):
        p = sub.add_parser(name, parents=[common], help=what)
        p.add_argument("--delta", metavar="PATH", help="the Delta table (path or URI)")
        p.add_argument("--iceberg-table", metavar="DB.TABLE", help="the Iceberg table")
        p.add_argument("--catalog", action="append", default=[], metavar="KEY=VALUE",
                       help="a property of the pyiceberg catalog (type=sql, uri=..., "
                            "warehouse=...; type=hive or rest)")
        p.add_argument("--no-history", action="store_true",
                       help="one snapshot: the table now (convert only)")
        p.add_argument("--no-verify", action="store_true", help="skip the verdict")
        p.add_argument("--samples", type=int, default=3,
                       help="earlier versions the verdict checks besides the latest")
        p.add_argument("--json", action="store_true", help="machine-readable output")


def _target(args: argparse.Namespace) -> Any:
    from ..conversion import delta_target, iceberg_target

    if bool(args.delta) == bool(args.iceberg_table):
        raise InvalidOptionError("give the target: --delta PATH or --iceberg-table DB.TABLE "
                                 "(with --catalog KEY=VALUE ...)")
    if args.delta:
        return delta_target(args.delta)
    props = key_values(args.catalog, "--catalog")
    if not props:
        raise InvalidOptionError("--iceberg-table needs the catalog: --catalog type=sql "
                                 "--catalog uri=sqlite:///cat.db --catalog warehouse=file:///lake")
    return iceberg_target(props, args.iceberg_table)


def run(args: argparse.Namespace, ref: Any) -> int:
    from ..conversion import convert, mirror

    go = mirror if args.command == "mirror" else convert
    if args.no_history and args.command == "mirror":
        raise InvalidOptionError("--no-history is for convert (a mirror keeps every write id)")
    result = go(ref, _target(args), history=not args.no_history, verify=not args.no_verify,
                samples=args.samples)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, default=str))
    else:
        print(f"{result.source} -> {result.target}: write id {result.previous_write_id} -> "
              f"{result.write_id}, {len(result.steps)} commit(s), {result.rows_written} rows "
              f"written in {result.seconds:.1f} s")
        if result.collapsed_up_to is not None:
            print(f"history up to write id {result.collapsed_up_to} is in one snapshot")
        if result.skipped:
            print(f"write ids that changed no row: {result.skipped}")
        if result.verdict is not None:
            print(result.verdict)
    if result.verdict is not None and not result.verdict.ok:
        print("hiveacid: the target differs from the Hive table (see above)", file=sys.stderr)
        return 1
    return 0
