"""Progress of a long run: a bar on a terminal, log lines otherwise.

``Progress(total, what)``; :meth:`advance` from any thread. On a terminal (``stream.isatty()``)
one line is redrawn in place (count, bar, rate, time left, the last item); elsewhere (a log file,
a CI job, Spark's driver log) an INFO log line is written at most every ``interval`` seconds and
at the end, so a long run shows it is alive without flooding the log.
"""
from __future__ import annotations

import logging
import sys
import threading
import time
from typing import Optional, TextIO

log = logging.getLogger(__name__)
BAR = 24


class Progress:
    def __init__(self, total: int, what: str, *, stream: Optional[TextIO] = None,
                 tty: Optional[bool] = None, interval: float = 10.0, enabled: bool = True):
        self.total, self.what = max(int(total), 0), what
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.interval = interval
        self.enabled = enabled
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self._last_log = self.started
        self._logged_end = False
        self._lock = threading.Lock()

    def advance(self, n: int = 1, item: str = "", failed: bool = False) -> None:
        with self._lock:
            self.done += n
            self.failed += int(failed)
            if not self.enabled:
                return
            now = time.monotonic()
            if self.tty:
                self.stream.write("\r" + self._line(item)[:160].ljust(100))
                self.stream.flush()
            elif now - self._last_log >= self.interval or self.done >= self.total:
                self._last_log = now
                self._logged_end = self.done >= self.total
                log.info("%s", self._line(item))

    def _line(self, item: str) -> str:
        elapsed = time.monotonic() - self.started
        frac = self.done / self.total if self.total else 1.0
        filled = int(BAR * min(frac, 1.0))
        rate = self.done / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        bar = "#" * filled + "-" * (BAR - filled)
        fail = f", {self.failed} failed" if self.failed else ""
        return (f"{self.what} [{bar}] {self.done}/{self.total} ({frac:.0%}{fail}) "
                f"{elapsed:.0f}s elapsed, ~{left:.0f}s left {item}")

    def close(self) -> None:
        with self._lock:
            if not self.enabled:
                return
            if self.tty:
                self.stream.write("\r" + self._line("done").ljust(100) + "\n")
                self.stream.flush()
            elif not self._logged_end:
                log.info("%s", self._line("done"))
