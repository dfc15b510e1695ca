"""What the object-store test servers (moto, Azurite, fake-gcs-server) share: one process on a
free port of 127.0.0.1, its output in a log, waited for until it answers, stopped by PID; and one
server per test session, shared by reference count (:class:`SessionServer`).
"""
from __future__ import annotations

import atexit
import logging
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable, Generic, Iterator, Mapping, Optional, TypeVar

from service_required import unavailable

log = logging.getLogger(__name__)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerProcess:
    """A server process on ``self.port``; subclasses name it (``name``), say what goes wrong
    (``failure``, a RuntimeError subclass) and call :meth:`launch`."""

    name = "server"
    failure: type[RuntimeError] = RuntimeError

    def __init__(self, base_dir: Path, log_name: str) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.port = free_port()
        self.log_path = self.base_dir / log_name
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def launch(self, cmd: list[str], ready: Callable[[], bool], timeout: float,
               env: Optional[Mapping[str, str]] = None) -> None:
        """Start ``cmd`` (output to the log) and wait until ``ready()``; ``failure`` with the
        log's tail when it exits or is not ready within ``timeout`` seconds."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL,
                                            env=dict(env) if env is not None else None)
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise self.failure(f"{self.name} exited with code {code}; log {self.log_path}:\n"
                                   f"{self.log_tail()}")
            try:
                if ready():
                    log.info("%s up on port %d (pid %d)", self.name, self.port, self.pid)
                    return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise self.failure(f"{self.name} not up within {timeout:.0f} s; log {self.log_path}:\n"
                           f"{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL, by PID."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        log.info("stopping %s pid %d", self.name, proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


S = TypeVar("S", bound=ServerProcess)


class SessionServer(Generic[S]):
    """ONE running server per test session, shared by reference count; when it cannot start,
    the tests needing it are skipped with the reason (failed under ``CI=true``)."""

    def __init__(self, what: str, start: Callable[[Path], S], failure: type[Exception]) -> None:
        self.what, self.start, self.failure = what, start, failure
        self._guard = threading.Lock()
        self._shared: Optional[S] = None
        self._users = 0
        self._reason: Optional[str] = None

    def acquire(self, base_dir: Path) -> S:
        with self._guard:
            if self._shared is None:
                self._shared = self.start(base_dir)
            self._users += 1
            return self._shared

    def release(self) -> None:
        with self._guard:
            self._users -= 1
            if self._users <= 0 and self._shared is not None:
                self._shared.stop()
                self._shared, self._users = None, 0

    def session(self, base_dir: Callable[[], Path]) -> Iterator[S]:
        """The body of a session fixture: ``yield from server.session(lambda: tmp.mktemp(..))``."""
        if self._reason is not None:
            unavailable(self.what, self._reason)
        try:
            server = self.acquire(base_dir())
        except self.failure as e:
            self._reason = str(e)
            unavailable(self.what, self._reason)
        try:
            yield server
        finally:
            self.release()
