"""Peak RSS of Spark's Python workers (our descendants only: other people's tests run too)."""
from __future__ import annotations

import os
import threading
from typing import Optional


def _ppid(pid: int) -> Optional[int]:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
        return int(data[data.rindex(")") + 2:].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _is_python_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ")
    except OSError:
        return False
    return b"pyspark.daemon" in cmd or b"pyspark.worker" in cmd


def python_workers(root: int) -> list[int]:
    """PIDs of pyspark daemon/worker processes descending from ``root``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if not _is_python_worker(pid):
            continue
        p, hops = pid, 0
        while p and p != 1 and hops < 20:
            if p == root:
                found.append(pid)
                break
            p, hops = _ppid(p), hops + 1
    return found


class WorkerRssSampler:
    """Samples every ``interval`` s the RSS of each Python worker; keeps the largest single one."""

    def __init__(self, root: Optional[int] = None, interval: float = 0.05):
        self.root = root or os.getpid()
        self.interval = interval
        self.peak = 0
        self.workers_seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        pids: list[int] = []
        tick = 0
        while not self._stop.is_set():
            if tick % 10 == 0:  # the process walk is the expensive part: refresh it every 10 ticks
                pids = python_workers(self.root)
                self.workers_seen.update(pids)
            for pid in pids:
                self.peak = max(self.peak, _rss_bytes(pid))
            tick += 1
            self._stop.wait(self.interval)

    def __enter__(self) -> "WorkerRssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
