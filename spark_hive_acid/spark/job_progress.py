"""Progress of the Spark jobs a library call runs (compaction units, DML tasks), reported through
the one progress mechanism (:class:`spark_hive_acid.progress.Progress`).

The call's action (``collect()``) runs in the calling thread as before; a helper thread reads
Spark's status tracker every half second: the tasks completed of the tasks of every stage of the
jobs the action started. The jobs are told apart by their job group: the caller's, if it set one
(jobs that existed before are left out), else one set for the call and removed after it.
"""
from __future__ import annotations

import logging
import threading
import uuid
from typing import Any, Callable, Optional, TypeVar

from ..progress import Progress

log = logging.getLogger(__name__)
T = TypeVar("T")

GROUP_PROPERTY = "spark.jobGroup.id"
POLL_S = 0.5


def run_with_progress(spark: Any, what: str, action: Callable[[], T]) -> T:
    """``action()`` (a Spark action), reporting the tasks of the jobs it runs as ``what``."""
    try:
        sc = spark.sparkContext
        group: Optional[str] = sc.getLocalProperty(GROUP_PROPERTY)
    except Exception:  # noqa: BLE001 - Spark Connect: no status tracker to read
        return action()
    own = group is None
    if group is None:
        group = f"hiveacid-{uuid.uuid4().hex[:12]}"
        sc.setJobGroup(group, what)
    before = set(sc.statusTracker().getJobIdsForGroup(group))
    stop = threading.Event()
    progress = Progress(what, None, "tasks")

    def poll() -> None:
        while not stop.wait(POLL_S):
            _report(sc, group, before, progress)

    poller = threading.Thread(target=poll, name="hiveacid-progress", daemon=True)
    poller.start()
    failed = True
    try:
        result = action()
        failed = False
        return result
    finally:
        stop.set()
        poller.join()
        if not failed:  # every task it needed ran (skipped stages count as done)
            _report(sc, group, before, progress)
            progress.update(progress.total or progress.done)
        progress.finish(failed=failed)
        if own:
            sc.setLocalProperty(GROUP_PROPERTY, None)
            sc.setLocalProperty("spark.job.description", None)


def _report(sc: Any, group: str, before: set[int], progress: Progress) -> None:
    """Tasks completed of all tasks of the group's new jobs' known stages."""
    try:
        tracker = sc.statusTracker()
        done = total = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id) if job_id not in before else None
            for stage_id in (job.stageIds if job is not None else ()):
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        if total:
            progress.update(done, total)
    except Exception as e:  # noqa: BLE001 - progress never fails the operation
        log.debug("progress of %s not available: %s", progress.what, e)
