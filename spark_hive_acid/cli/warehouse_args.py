"""The arguments ``hiveacid doctor`` and ``hiveacid maintain`` share: which tables (paths, a
warehouse directory, names, databases, everything), the metastore, options, engines, thresholds,
concurrency."""
from __future__ import annotations

import argparse
from typing import Any

from .. import options as opt
from ..catalog.base import TableRef
from ..exceptions import InvalidOptionError
from ..maintenance.compat import ENGINES, parse_engines
from ..maintenance.health import Thresholds
from ..maintenance.targets import Targets, resolve
from .key_values import command_options
from .target import is_table_name


def add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("tables", nargs="*", metavar="TABLE",
                   help="table directories (paths or URIs) and/or db.table names")
    p.add_argument("--warehouse", action="append", default=[], metavar="DIR",
                   help="every table directory below DIR (and below its *.db directories)")
    p.add_argument("--database", action="append", default=[], metavar="DB",
                   help="every ACID table of a metastore database (a glob: sales_*)")
    p.add_argument("--all", action="store_true", help="every ACID table of the metastore")
    p.add_argument("--metastore-uri", help="thrift://host:9083 (else hive-site.xml)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="any read option (webhdfsUrl, hdfsUser, metastoreTimeout ...)")
    p.add_argument("--engines", help=f"engines to check, comma-separated (default all: "
                                     f"{','.join(ENGINES)})")
    p.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE",
                   help="override a health threshold: activeDeltas, obsoleteDeltas, "
                        "smallDeltas (counts, default 100), smallDeltaPct (0.01), "
                        "smallFileBytes")
    p.add_argument("--concurrency", type=int, help="tables looked at (or compacted) at once")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("-v", "--verbose", action="store_true", help="log what is done")


def options_of(args: argparse.Namespace) -> dict[str, str]:
    out = command_options(args)
    opt.check_known(out, f"hiveacid {args.command} -o", (opt.READ, opt.METASTORE, opt.STORAGE))
    return out


def refs_of(args: argparse.Namespace, options: dict[str, str]) -> list[TableRef]:
    paths = [t for t in args.tables if not is_table_name(t, options)]
    names = [t for t in args.tables if t not in paths]
    return resolve(Targets(paths=paths, warehouses=args.warehouse, tables=names,
                           databases=args.database, all_databases=args.all, options=options))


def thresholds_of(args: argparse.Namespace) -> Thresholds:
    overrides: dict[str, Any] = {}
    for item in args.threshold:
        key, sep, value = item.partition("=")
        if not sep:
            raise InvalidOptionError(f"--threshold {item!r}: write NAME=VALUE "
                                     "(e.g. activeDeltas=50)")
        overrides[key.strip()] = value.strip()
    return Thresholds().with_overrides(overrides)


def engines_of(args: argparse.Namespace) -> tuple[str, ...]:
    return parse_engines(args.engines)


def positive(args: argparse.Namespace, name: str, default: int) -> int:
    value = getattr(args, name)
    if value is None:
        return default
    if value < 1:
        raise InvalidOptionError(f"--{name.replace('_', '-')} must be a positive number, "
                                 f"not {value}")
    return value
