"""Timing with warm-up and medians; candidates and baselines interleaved so noise hits both."""
from __future__ import annotations

import gc
import statistics
import time
from typing import Callable, Mapping


class Elapsed(float):
    """Return this from a case to report a time measured inside it (e.g. without a setup step)."""


def measure(cases: Mapping[str, Callable[[], object]], reps: int = 3, warmup: int = 1,
            log=None) -> dict[str, dict]:
    """Run every case ``warmup`` times, then ``reps`` rounds of all cases in turn.

    Returns ``{name: {"median_s", "min_s", "times_s", "result"}}``; ``result`` is the last
    return value (used for correctness checks). A case that raises is recorded with ``error``.
    """
    out: dict[str, dict] = {name: {"times_s": []} for name in cases}
    failed: set[str] = set()
    for round_ in range(warmup + reps):
        for name, fn in cases.items():
            if name in failed:
                continue
            gc.collect()
            t0 = time.perf_counter()
            try:
                result = fn()
            except Exception as e:  # noqa: BLE001 - a failing case must not stop the others
                out[name]["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
                failed.add(name)
                if log:
                    log(f"  {name}: FAILED {out[name]['error']}")
                continue
            dt = time.perf_counter() - t0
            if isinstance(result, Elapsed):
                dt = float(result)
            out[name]["result"] = result
            if round_ >= warmup:
                out[name]["times_s"].append(round(dt, 4))
            if log:
                log(f"  {name}: {dt:.3f}s{' (warm-up)' if round_ < warmup else ''}")
    for name, rec in out.items():
        if rec["times_s"]:
            rec["median_s"] = round(statistics.median(rec["times_s"]), 4)
            rec["min_s"] = min(rec["times_s"])
    return out


def ratio(a: dict, b: dict) -> float | None:
    if not a or not b or "median_s" not in a or "median_s" not in b or not b["median_s"]:
        return None
    return round(a["median_s"] / b["median_s"], 3)
