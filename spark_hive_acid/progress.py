"""Progress of long operations, the one mechanism every caller uses: compaction units, DML tasks,
``write_table`` batches, the ``hiveacid`` command's scans.

A :class:`Progress` counts what is done of a total (``partitions``, ``files``, ``tasks``...):

* it logs INFO lines on the ``spark_hive_acid.progress`` logger: when it starts, at most every
  ``log_every_s`` seconds, and when it ends (with the time taken), so a job's log shows how far an
  operation got;
* on a terminal (its stream, stderr by default, is a TTY) it also draws a one-line bar, redrawn
  at most ten times a second and erased when the operation ends, so the command's own output
  stays clean. ``HIVEACID_PROGRESS=0`` turns the bar off, ``HIVEACID_PROGRESS=1`` draws it on
  any stream.

The total may be unknown (None: only the count is shown) or grow (Spark stages submitted later).
Counting is thread-safe (``hiveacid maintain`` runs tables in parallel); ``enabled=False`` keeps it
silent (``--no-progress``).
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from types import TracebackType
from typing import Callable, Iterable, Iterator, Optional, TextIO, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

ENV = "HIVEACID_PROGRESS"
BAR_WIDTH = 24
REDRAW_S = 0.1


def bar_wanted(stream: TextIO) -> bool:
    """Draw a bar on ``stream``: a terminal, unless ``HIVEACID_PROGRESS`` says otherwise."""
    setting = os.environ.get(ENV, "").strip()
    if setting in ("0", "1"):
        return setting == "1"
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


class Progress:
    """See the module docstring. Use as a context manager, or call :meth:`finish`."""

    def __init__(self, what: str, total: Optional[int], unit: str, *,
                 stream: Optional[TextIO] = None, bar: Optional[bool] = None,
                 log_every_s: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 enabled: bool = True):
        self.what, self.total, self.unit = what, total, unit
        self.done = 0
        self.failed = 0
        self.item = ""  # the last thing done (a table, a partition), shown on the bar
        self.enabled = enabled
        self._lock = threading.RLock()
        self.stream = stream if stream is not None else sys.stderr
        self.bar = enabled and (bar_wanted(self.stream) if bar is None else bar)
        self.log_every_s = log_every_s
        self.clock = clock
        self.started = clock()
        self._logged = self.started
        self._drawn = float("-inf")
        self._finished = False
        if enabled:
            log.info("%s: started, %s", what, self.text())

    # --- counting ---------------------------------------------------------------------------------
    def advance(self, n: int = 1, item: str = "", failed: bool = False) -> None:
        """``n`` more done (``item``: what, shown on the bar; ``failed``: counted as failed)."""
        with self._lock:
            self.failed += int(failed)
            self.item = item or self.item
            self.update(self.done + n)

    def update(self, done: int, total: Optional[int] = None) -> None:
        """``done`` so far (and a new ``total``, when it became known or grew)."""
        with self._lock:
            self.done = done
            if total is not None:
                self.total = total
            if not self.enabled:
                return
            now = self.clock()
            if now - self._logged >= self.log_every_s:
                self._logged = now
                log.info("%s: %s", self.what, self.text())
            if self.bar and now - self._drawn >= REDRAW_S:
                self._drawn = now
                self._draw()

    def iterate(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, counting one per item as it is taken."""
        for item in items:
            yield item
            self.advance()

    # --- the end ----------------------------------------------------------------------------------
    def finish(self, failed: bool = False) -> None:
        with self._lock:
            if self._finished:
                return
            self._finished = True
            if not self.enabled:
                return
            if self.bar:
                self._write("\r" + " " * self._width() + "\r")
            elapsed = self.clock() - self.started
            log.info("%s: %s, %s in %.1f s", self.what, "failed" if failed else "done",
                     self.text(), elapsed)

    close = finish

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, kind: Optional[type], error: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.finish(failed=error is not None)

    # --- text -------------------------------------------------------------------------------------
    def text(self) -> str:
        """``3/10 partitions (30%)``, or ``3 batches`` with no total."""
        fail = f", {self.failed} failed" if self.failed else ""
        if self.total is None:
            return f"{self.done} {self.unit}{fail}"
        pct = 100 * self.done // self.total if self.total else 100
        return f"{self.done}/{self.total} {self.unit} ({pct}%{fail})"

    def _line(self) -> str:
        if self.total:
            filled = min(BAR_WIDTH, BAR_WIDTH * self.done // self.total)
            line = f"{self.what} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {self.text()}"
        else:
            line = f"{self.what} {self.text()}"
        return f"{line} {self.item}"[:160] if self.item else line

    def _width(self) -> int:
        return len(self._line()) + 8

    def _draw(self) -> None:
        line = self._line()
        self._write("\r" + line + " " * 4)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal never fails the operation
            self.bar = False
