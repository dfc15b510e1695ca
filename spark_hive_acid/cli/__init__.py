"""``hiveacid``: a command-line tool for a Hive ACID table, without Spark (docs/cli.md).

::

    hiveacid inspect  PATH|DB.TABLE [--snapshot S] [--json]   what each partition's snapshot reads
    hiveacid history  PATH|DB.TABLE [--limit N] [--json]      one line per write id
    hiveacid snapshot PATH|DB.TABLE                           the current ValidWriteIdList
    hiveacid validate PATH|DB.TABLE [--json]                  every file checked; exit 1 on problems
    hiveacid create   PATH "id int, day string" [--partition-by day]   an empty table
    hiveacid truncate PATH|DB.TABLE                           empty it (one ACID write)
    hiveacid drop-partitions PATH|DB.TABLE "day < '2024-02-01'"   empty those partitions
    hiveacid add-columns PATH|DB.TABLE "note string"          ALTER TABLE ... ADD COLUMNS
    hiveacid convert  PATH|DB.TABLE --delta PATH | --iceberg-table T --catalog K=V ...
    hiveacid mirror   (the same)                              into Iceberg / Delta (docs/convert.md)
    hiveacid doctor   [TABLE...] [--warehouse DIR] [--database DB] [--all] [--json|--prometheus]
    hiveacid maintain [TABLE...] [--warehouse DIR] [--database DB] [--all] [--dry-run]

A table is a directory (any URI the library reads: local, hdfs://, webhdfs://, s3://...) or, with
``--metastore-uri`` (or hive-site.xml in ``$HIVE_CONF_DIR``), ``db.table`` of a Hive Metastore.
``-o key=value`` passes any option of the registry (``webhdfsUrl``, ``hdfsUser`` ...). Exit codes:
0 fine, 1 validate found problems, 2 the command could not run (the message says why).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import importlib.metadata
import json
import logging
import sys
from typing import Optional, Sequence

from .. import options as opt
from ..exceptions import HiveAcidError, InvalidOptionError
from . import convert, table_commands
from .key_values import command_options
from .inspect import inspect_table, render
from .target import SNAPSHOT_OPTIONS, Target, open_target
from .validate import validate_table

log = logging.getLogger(__name__)


def docs_link() -> str:
    """Where the documentation is: the package's ``Documentation`` (or ``Homepage``) project URL;
    the wheel ships no docs/ folder."""
    try:
        urls = importlib.metadata.metadata("spark-hive-acid").get_all("Project-URL") or []
    except importlib.metadata.PackageNotFoundError:
        urls = []
    named = dict(u.split(", ", 1) for u in urls if ", " in u)
    url = named.get("Documentation") or named.get("Homepage")
    return url or ("docs/cli.md of the spark-hive-acid source (the project's repository; the "
                   "installed package does not include its docs)")


def _version() -> str:
    try:
        return importlib.metadata.version("spark-hive-acid")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hiveacid", description=__doc__.split("\n\n")[0].replace(" (docs/cli.md)", ""),
        epilog=f"Documentation: {docs_link()}")
    p.add_argument("--version", action="version",
                   version=f"hiveacid (spark-hive-acid) {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("table", help="table directory (path or URI), or db.table with a metastore")
    common.add_argument("--metastore-uri", help="thrift://host:9083: TABLE is a metastore table")
    common.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="any read option (webhdfsUrl, hdfsUser, metastoreTimeout ...)")
    common.add_argument("-v", "--verbose", action="store_true", help="log what is done")
    i = sub.add_parser("inspect", parents=[common], help="per partition: what the snapshot reads")
    i.add_argument("--snapshot", help="a ValidWriteIdList string (default: the current one)")
    i.add_argument("--json", action="store_true", help="machine-readable output")
    h = sub.add_parser("history", parents=[common], help="one line per write id, newest first")
    h.add_argument("--limit", type=int, help="at most this many write ids")
    h.add_argument("--json", action="store_true")
    sub.add_parser("snapshot", parents=[common], help="print the current snapshot string")
    v = sub.add_parser("validate", parents=[common], help="check every file; exit 1 on problems")
    v.add_argument("--json", action="store_true")
    table_commands.add_parsers(sub, common)
    convert.add_parsers(sub, common)
    from . import doctor, maintain  # many tables at once (docs/maintenance.md)

    doctor.add_parser(sub)
    maintain.add_parser(sub)
    return p


def _options(args: argparse.Namespace) -> dict[str, str]:
    out = command_options(args)
    opt.check_entry(out, "hiveacid -o")
    if args.command in ("history", "validate"):
        chosen = [n for n in SNAPSHOT_OPTIONS if opt.get_str(out, n) is not None]
        if chosen:
            raise InvalidOptionError(
                f"hiveacid {args.command} looks at every write id and file, not at one snapshot: "
                f"-o {chosen[0]} is for inspect and snapshot")
    return out


def _time(t: Optional[float]) -> str:
    if not t:
        return "-"
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _history(args: argparse.Namespace, target: Target) -> int:
    entries = target.ref.history()
    if args.limit is not None:
        if args.limit < 1:
            raise InvalidOptionError("--limit must be a positive number")
        entries = entries[:args.limit]
    if args.json:
        print(json.dumps(entries, indent=2, default=str))
        return 0
    print(f"{'writeId':>8}  {'state':<9}  {'operation':<16}  {'finished (UTC)':<19}  rows+/-  "
          "partitions / reason")
    for h in entries:
        m = h.get("metrics") or {}
        counts = (f"{m.get('numInsertedRows', '?')}/{m.get('numDeletedRows', '?')}"
                  if m else "-")
        parts = ",".join(h.get("partitions") or [])
        extra = "  ".join(x for x in (parts, h.get("reason") or "") if x)
        print(f"{h['writeId']:>8}  {h['state']:<9}  {str(h.get('operation') or '-'):<16}  "
              f"{_time(h.get('finishedAt')):<19}  {counts:<7}  {extra}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command in table_commands.COMMANDS:
            return table_commands.run(args, _options(args))
        if args.command in ("convert", "mirror"):
            from ..conversion import source_ref

            return convert.run(args, source_ref(args.table, _options(args)))
        if hasattr(args, "run"):  # doctor, maintain: many tables
            return args.run(args)
        target = open_target(args.table, _options(args), getattr(args, "snapshot", None))
        if args.command == "snapshot":
            print(target.write_ids.to_string())
            return 0
        if args.command == "history":
            return _history(args, target)
        if args.command == "inspect":
            report = inspect_table(target)
            print(json.dumps(report, indent=2) if args.json else "\n".join(render(report)))
            return 0
        result = validate_table(target)
        if args.json:
            print(json.dumps({"table": target.display, "filesChecked": result.files,
                              "problems": result.problems}, indent=2))
        else:
            for line in result.problems:
                print(line)
            print(f"{target.display}: {result.files} file(s) checked, "
                  f"{len(result.problems)} problem(s)", file=sys.stderr)
        return 1 if result.problems else 0
    except HiveAcidError as e:
        print(f"hiveacid: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
