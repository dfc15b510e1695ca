"""The health verdict of a partition and a table, against Hive's delta thresholds (HIVE-24974).

Hive 4's ACID metrics (``DeltaFilesMetricReporter``, later ``AcidMetricService``) report a
table or partition when it has more than ``hive.txn.acid.metrics.delta.num.threshold`` (100)
active deltas, more than ``hive.txn.acid.metrics.obsolete.delta.num.threshold`` (100) obsolete
deltas waiting for the Cleaner, or more than the first threshold of *small* deltas, a delta being
small when its size is below ``hive.txn.acid.metrics.delta.pct.threshold`` (0.01) of the base.
Hive also skips deltas younger than ``hive.txn.acid.metrics.delta.check.threshold`` (300 s);
listings carry no ages here, so every delta counts. Each threshold can be overridden
(:class:`Thresholds`).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from typing import Any, Mapping, Optional

from ..exceptions import InvalidOptionError
from .facts import PartitionFacts

HEALTHY, NEEDS_ACTION = "healthy", "needs action"

_NAMES = {"activeDeltas": "active_deltas", "obsoleteDeltas": "obsolete_deltas",
          "smallDeltas": "small_deltas", "smallDeltaPct": "small_delta_pct",
          "smallFileBytes": "small_file_bytes"}


@dataclass(frozen=True)
class Thresholds:
    """Hive's defaults (HIVE-24974); a partition exceeds one when its count is *above* it."""

    active_deltas: int = 100  # hive.txn.acid.metrics.delta.num.threshold
    obsolete_deltas: int = 100  # hive.txn.acid.metrics.obsolete.delta.num.threshold
    small_deltas: int = 100  # small deltas, counted against the delta.num threshold
    small_delta_pct: float = 0.01  # hive.txn.acid.metrics.delta.pct.threshold
    small_file_bytes: int = 1 << 20  # reported, not judged (Hive has no such threshold)

    def with_overrides(self, overrides: Optional[Mapping[str, Any]]) -> "Thresholds":
        """These thresholds with ``{"activeDeltas": 50, ...}`` applied (camelCase names, or the
        field names); a bad name or value is an error naming it."""
        out = self
        for key, raw in (overrides or {}).items():
            name = _NAMES.get(str(key), str(key))
            if name not in _NAMES.values():
                raise InvalidOptionError(
                    f"Unknown threshold '{key}': the thresholds are {', '.join(_NAMES)}")
            try:
                value = float(raw) if name == "small_delta_pct" else int(str(raw))
            except ValueError:
                raise InvalidOptionError(f"Threshold {key}={raw!r} is not a number") from None
            if isinstance(value, float) and not (math.isfinite(value) and 0 <= value <= 1):
                raise InvalidOptionError(f"Threshold {key}={raw!r} must be a fraction in [0, 1]")
            if isinstance(value, int) and value < 0:
                raise InvalidOptionError(f"Threshold {key}={raw!r} must be >= 0")
            changes: dict[str, Any] = {name: value}
            out = replace(out, **changes)
        return out

    def to_json(self) -> dict[str, Any]:
        inverse = {v: k for k, v in _NAMES.items()}
        return {inverse[k]: v for k, v in asdict(self).items()}


def partition_exceeds(p: PartitionFacts, t: Thresholds) -> list[str]:
    """The thresholds ``p`` exceeds, each as a sentence."""
    out = []
    if p.active_deltas > t.active_deltas:
        out.append(f"{p.active_deltas} active deltas > {t.active_deltas}")
    if p.obsolete_deltas > t.obsolete_deltas:
        out.append(f"{p.obsolete_deltas} obsolete deltas > {t.obsolete_deltas}")
    if p.small_deltas > t.small_deltas:
        out.append(f"{p.small_deltas} deltas smaller than {t.small_delta_pct:g} of the base > "
                   f"{t.small_deltas}")
    return out
