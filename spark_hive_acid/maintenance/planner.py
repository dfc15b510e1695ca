"""What ``maintain`` (and ``doctor --fix``) will do to one table: its compactions and vacuum.

From the table's scan (``maintenance.scan``, listings only):

* **Hive's Initiator rules** per partition (``compaction.initiator``): ``major`` or ``minor``
  where ``compactIfNeeded`` would compact;
* **metastore tables**: partitions Hive's compactor is working on, or has queued, are skipped
  (``maintain`` never races Hive's Worker); partitions Hive *stopped compacting* after repeated
  failures (``maintenance.hms_findings``) are taken over with the kind Hive last tried, once the
  cause is gone (``maintenance.takeover``, checked when the run reaches them);
* **fix** (``doctor --fix``): a major compaction of exactly the partitions whose layout another
  engine misreads or refuses (``maintenance.compat``) or that exceed Hive's delta thresholds
  (``maintenance.health``).

Partitions are compacted ``batch`` at a time (one compaction transaction each): the unit of
progress, and of what a killed run leaves done.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from ..catalog.base import TableRef
from .compat import ENGINES, partition_findings
from .health import Thresholds, partition_exceeds
from .hms_findings import MetastoreView
from .facts import PartitionFacts
from .scan import TableFacts

DEFAULT_BATCH = 500
INITIATOR, TAKEOVER, FIX = "initiator", "takeover", "fix"


@dataclass
class Compaction:
    """One compaction transaction to run: ``kind`` of ``partitions`` (relative names as
    ``compaction.runner.compact`` takes them), each with why."""

    kind: str
    partitions: list[str]
    why: dict[str, str]
    source: str = INITIATOR  # INITIATOR | TAKEOVER | FIX

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "partitions": self.partitions, "source": self.source,
                "why": self.why}


@dataclass
class TablePlan:
    table: str
    ref: TableRef
    compactions: list[Compaction] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # partition -> why not now
    vacuum: bool = False
    obsolete: int = 0  # directories waiting for a clean now
    error: Optional[str] = None

    @property
    def partitions(self) -> int:
        return sum(len(c.partitions) for c in self.compactions)

    def to_json(self) -> dict[str, Any]:
        out = {"table": self.table, "compactions": [c.to_json() for c in self.compactions],
               "partitionsToCompact": self.partitions, "skipped": self.skipped,
               "vacuum": self.vacuum, "obsoleteNow": self.obsolete}
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class PlanSettings:
    initiator: bool = True  # apply Hive's Initiator rules
    takeover: bool = True  # metastore: partitions Hive stopped compacting
    fix: bool = False  # doctor --fix: compatibility and thresholds
    engines: Sequence[str] = ENGINES
    thresholds: Thresholds = field(default_factory=Thresholds)
    vacuum: bool = True
    batch: int = DEFAULT_BATCH


def plan_table(facts: TableFacts, settings: PlanSettings,
               view: Optional[MetastoreView] = None) -> TablePlan:
    """The plan of one scanned table (see the module docstring)."""
    plan = TablePlan(facts.name, facts.ref)
    by_kind: dict[tuple[str, str], dict[str, str]] = {}
    busy: dict[str, Any] = {}
    stopped: dict[str, list] = {}
    if view is not None and facts.ref.full_name:
        db, _, name = facts.ref.full_name.partition(".")
        busy = view.busy_partitions(db, name)
        stopped = view.stopped_partitions(db, name) if settings.takeover else {}
    for p in facts.partitions:
        if p.path.rstrip("/") in facts.installing:
            plan.skipped[p.rel] = (
                f"compaction {facts.installing[p.path.rstrip('/')]}'s output is being installed "
                "(if that compaction died, the next run finishes it 5 minutes after it began)")
            continue
        if p.partition in busy:
            c = busy[p.partition]
            plan.skipped[p.rel] = (f"Hive's compactor has a {(c.type or '').lower()} compaction "
                                   f"of it {c.state} (id {c.id}): not raced")
            continue
        if p.partition in stopped and would_change(p, (stopped[p.partition][-1].type or "major")):
            last = stopped[p.partition][-1]
            kind = (last.type or "major").lower()
            by_kind.setdefault((kind, TAKEOVER), {})[p.rel] = (
                f"Hive stopped compacting it after {len(stopped[p.partition])} failed "
                f"{kind} compaction(s) (last id {last.id})")
            continue
        if settings.fix:
            exceeds = partition_exceeds(p, settings.thresholds)
            broken = [f for f in partition_findings(p.evidence, settings.engines) if f["fix"]]
            if exceeds or broken:
                why = "; ".join(exceeds + [f"{f['engine']} {f['effect']} ({f['rule']})"
                                           for f in broken])
                by_kind.setdefault(("major", FIX), {})[p.rel] = why
                continue
        decision = p.decision.get("decision")
        if settings.initiator and decision in ("major", "minor"):
            by_kind.setdefault((decision, INITIATOR), {})[p.rel] = p.decision["reason"]
    for (kind, source), reasons in sorted(by_kind.items(), key=lambda kv: _order(kv[0])):
        names = sorted(reasons)
        for i in range(0, len(names), max(1, settings.batch)):
            chunk = names[i:i + settings.batch]
            plan.compactions.append(Compaction(kind, chunk, {n: reasons[n] for n in chunk},
                                               source))
    plan.obsolete = sum(p.obsolete + p.aborted for p in facts.partitions)
    plan.vacuum = settings.vacuum and bool(plan.compactions or plan.obsolete)
    return plan


def would_change(p: PartitionFacts, kind: str) -> bool:
    """Whether a ``kind`` compaction of ``p`` has anything to do (``compaction.plan``: a major
    one needs deltas or original files, a minor one two deltas at least)."""
    if kind.lower() == "minor":
        return p.active_deltas >= 2
    return p.active_deltas > 0 or p.original_files > 0


def _order(key: tuple[str, str]) -> tuple[int, int]:
    kind, source = key
    return ({TAKEOVER: 0, FIX: 1, INITIATOR: 2}[source], 0 if kind == "major" else 1)
