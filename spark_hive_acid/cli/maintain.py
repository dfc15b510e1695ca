"""``hiveacid maintain``: Hive's Initiator rules applied to every table and partition, and the
compactions and vacuums they call for, run in this process (docs/maintenance.md;
``spark_hive_acid.maintain(spark, ...)`` runs them as Spark jobs).

Exit status: 0 the plan ran (or, with ``--dry-run``, was printed), 1 a table failed or a partition
Hive gave up on could not be taken over (the report says why), 2 the command could not run.
"""
from __future__ import annotations

import argparse
import json
import logging

from ..maintenance.maintain import DEFAULT_CONCURRENCY, DEFAULT_RETENTION_HOURS, \
    MaintainSettings, maintain
from ..maintenance.planner import DEFAULT_BATCH
from .warehouse_args import add_common, engines_of, options_of, positive, refs_of, thresholds_of

log = logging.getLogger(__name__)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("maintain", help="compact and vacuum every table that needs it "
                                        "(Hive's Initiator rules)")
    add_common(p)
    p.add_argument("--dry-run", action="store_true", help="print the plan, change nothing")
    p.add_argument("--batch", type=int, help=f"partitions per compaction transaction "
                                             f"(default {DEFAULT_BATCH})")
    p.add_argument("--retention-hours", type=float, default=DEFAULT_RETENTION_HOURS,
                   help="vacuum: how long a replaced directory is kept (default 168)")
    p.add_argument("--no-vacuum", action="store_true", help="compact only")
    p.add_argument("--no-takeover", action="store_true",
                   help="leave partitions Hive stopped compacting alone")
    p.add_argument("--fix", action="store_true",
                   help="also major-compact partitions other engines misread or that exceed "
                        "Hive's delta thresholds (as doctor --fix)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar / lines")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options = options_of(args)
    refs = refs_of(args, options)
    settings = MaintainSettings(
        takeover=not args.no_takeover, fix=args.fix, engines=engines_of(args),
        thresholds=thresholds_of(args), vacuum=not args.no_vacuum,
        batch=positive(args, "batch", DEFAULT_BATCH), dry_run=args.dry_run,
        concurrency=positive(args, "concurrency", DEFAULT_CONCURRENCY),
        retention_hours=args.retention_hours, progress=not args.no_progress)
    if settings.progress:  # progress lines are INFO records when stderr is not a terminal
        logging.getLogger("spark_hive_acid.progress").setLevel(logging.INFO)
    report = maintain(refs, settings)
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        for line in render(report):
            print(line)
    return 0 if report["ok"] else 1


def render(report: dict) -> list[str]:
    lines = []
    for t in report["tables"]:
        head = f"{t['table']}: "
        if t.get("error"):
            lines.append(head + f"FAILED: {t['error']}")
        elif report["dryRun"]:
            lines.append(head + (f"{t['partitionsToCompact']} partition(s) to compact"
                                 if t["partitionsToCompact"] else "nothing to compact")
                         + (", then vacuum" if t["vacuum"] else ""))
        else:
            v = t.get("vacuumed")
            lines.append(head + f"{t['partitionsCompacted']} partition(s) compacted"
                         + (f"; vacuum removed {v['removed']} ({v['kept']} kept)" if v else ""))
        for c in t["compactions"]:
            if report["dryRun"]:
                first = sorted(c["why"].items())[:3]
                more = len(c["partitions"]) - len(first)
                lines.append(f"  {c['kind']} ({c['source']}) of {len(c['partitions'])}: "
                             + "; ".join(f"{p or '(table)'}: {w}" for p, w in first)
                             + (f"; ... {more} more" if more > 0 else ""))
        for part, why in sorted(t.get("skipped", {}).items())[:10]:
            lines.append(f"  skipped {part or '(table)'}: {why}")
        for part, why in sorted(t.get("notTakenOver", {}).items()):
            lines.append(f"  not taken over {part or '(table)'}: {why}")
    s = report["summary"]
    verb, n = (("to compact", s["partitionsPlanned"]) if report["dryRun"]
               else ("compacted", s["partitionsCompacted"]))
    lines.append(f"{s['tables']} table(s): {n} partition(s) {verb}, {s['tablesFailed']} "
                 f"table(s) failed; planned in "
                 f"{report['planSeconds']} s, {report['durationSeconds']} s in all")
    return lines
