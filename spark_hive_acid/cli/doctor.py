"""``hiveacid doctor``: the health of tables, a warehouse, or a whole metastore (docs/maintenance.md).

Exit status: 0 nothing needs action, 1 something does (the report says what), 2 the command could
not run. ``--fix`` runs the smallest safe repair (a major compaction of exactly the partitions
with a layout another engine misreads or refuses, or above Hive's delta thresholds, then a
vacuum), then looks again: the exit status is that of the second look.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys

from ..catalog import TableRef
from ..maintenance.doctor import DEFAULT_CONCURRENCY, DoctorSettings, doctor
from ..maintenance.maintain import DEFAULT_RETENTION_HOURS, MaintainSettings, maintain
from ..progress import Progress
from ..maintenance.render import prometheus, text
from .warehouse_args import add_common, engines_of, options_of, positive, refs_of, thresholds_of

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="the health of many tables: deltas, cleans, other "
                                      "engines, the metastore's compactions")
    add_common(p)
    p.add_argument("--prometheus", action="store_true",
                   help="Prometheus text exposition format (for a textfile collector)")
    p.add_argument("--all-partitions", action="store_true",
                   help="list every partition in --json, not only the flagged ones")
    p.add_argument("--limit", type=int, default=20, help="flagged partitions shown per table")
    p.add_argument("--fix", action="store_true",
                   help="major-compact the flagged partitions, then vacuum, then look again")
    p.add_argument("--retention-hours", type=float, default=DEFAULT_RETENTION_HOURS,
                   help="--fix's vacuum: how long a replaced directory is kept (default 168)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options = options_of(args)
    refs = refs_of(args, options)
    settings = DoctorSettings(thresholds_of(args), engines_of(args),
                              positive(args, "concurrency", DEFAULT_CONCURRENCY),
                              "all" if args.all_partitions else "flagged")
    report = _look(refs, settings, quiet=args.json or args.prometheus)
    if args.fix and report["needsAction"]:
        fix = maintain(refs, MaintainSettings(
            initiator=False, takeover=False, fix=True, engines=settings.engines,
            thresholds=settings.thresholds, concurrency=settings.concurrency,
            retention_hours=args.retention_hours, progress=not (args.json or args.prometheus)))
        report = _look(refs, settings, quiet=True)
        report["fix"] = fix
    if args.prometheus:
        sys.stdout.write(prometheus(report))
    elif args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        for line in text(report, args.limit):
            print(line)
        if "fix" in report:
            s = report["fix"]["summary"]
            print(f"--fix: {s['partitionsCompacted']} partition(s) compacted in "
                  f"{s['tables'] - s['tablesFailed']} table(s), {s['tablesFailed']} failed")
    return 1 if report["needsAction"] else 0


def _look(refs: list[TableRef], settings: DoctorSettings, quiet: bool) -> dict:
    bar = Progress("doctor", len(refs), "tables", enabled=not quiet and len(refs) > 1)
    report = doctor(refs, settings, lambda what, n: bar.advance(n, what))
    bar.close()
    return report
