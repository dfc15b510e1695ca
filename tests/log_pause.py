"""A local file system that stops one thread at one chosen step, so a test can let another
writer (or a checkpoint) run in exactly that window, then let the first go on: the interleavings
of issue 25 forced deterministically with the library's own code on both sides.

It is served under the scheme ``pausefs://`` (``pausefs:///abs/path``), so the library's own
entry points (``write_table``, ``PathTable``) use it when given such a URI.
"""
from __future__ import annotations

import threading
from typing import Callable, Mapping, Optional

from spark_hive_acid.io.filesystem import LocalFileSystem
from spark_hive_acid.io.registry import register_filesystem

SCHEME = "pausefs"


class Pause:
    """One stop: ``reached`` is set when a thread stops there; :meth:`release` lets it go."""

    def __init__(self, match: Callable[[str, str], bool]) -> None:
        self.match = match
        self.reached = threading.Event()
        self._go = threading.Event()
        self.path: Optional[str] = None

    def release(self) -> None:
        self._go.set()

    def wait_reached(self, timeout: float = 60.0) -> bool:
        return self.reached.wait(timeout)


class PausingFileSystem(LocalFileSystem):
    """Operations matching a pending :class:`Pause` stop (each pause once) until released."""

    def __init__(self) -> None:
        self._pauses: list[Pause] = []
        self._lock = threading.Lock()

    def pause_at(self, match: Callable[[str, str], bool]) -> Pause:
        """Stop the first later call whose (operation, path) matches: ``create_exclusive``,
        ``list_dir``, ``read_bytes`` or ``delete``."""
        pause = Pause(match)
        with self._lock:
            self._pauses.append(pause)
        return pause

    def _maybe_pause(self, op: str, path: str) -> None:
        with self._lock:
            hit = next((p for p in self._pauses if p.match(op, path)), None)
            if hit is not None:
                self._pauses.remove(hit)
        if hit is not None:
            hit.path = path
            hit.reached.set()
            if not hit._go.wait(120):
                raise TimeoutError(f"{op}({path}) was never released")

    def create_exclusive(self, path: str, data: bytes) -> bool:
        self._maybe_pause("create_exclusive", path)
        return super().create_exclusive(path, data)

    def list_dir(self, path: str):
        self._maybe_pause("list_dir", path)
        return super().list_dir(path)

    def read_bytes(self, path: str, length: Optional[int] = None) -> bytes:
        self._maybe_pause("read_bytes", path)
        return super().read_bytes(path, length)

    def delete(self, path: str, recursive: bool = False) -> None:
        self._maybe_pause("delete", path)
        super().delete(path, recursive)


_current: list[PausingFileSystem] = []


def install() -> PausingFileSystem:
    """A fresh pausing file system, served from now on for ``pausefs://`` URIs."""
    fs = PausingFileSystem()
    _current[:] = [fs]

    def factory(uri: str, options: Mapping[str, str]) -> tuple[PausingFileSystem, str]:
        return _current[0], uri[len(SCHEME) + 3:]

    register_filesystem(SCHEME, factory)
    return fs


def uri(path: str) -> str:
    return f"{SCHEME}://{path}"


def in_thread(target: Callable[[], object]) -> tuple[threading.Thread, list]:
    """Run ``target`` in a thread; the list receives its result or its exception."""
    out: list = []

    def run() -> None:
        try:
            out.append(target())
        except BaseException as e:  # noqa: BLE001 - handed to the test
            out.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, out
