"""An S3-compatible server on 127.0.0.1: moto's ``moto_server`` (PyPI ``moto[server]``, in the
test extras), one process per test session, stopped by PID.

moto implements the S3 REST API in memory (buckets, objects, ranged GETs, ListObjectsV2,
multipart uploads, conditional ``PutObject`` with ``If-None-Match: *``). Its access log (one line
per request: method, path, status) is the request log the tests count round trips with.
"""
from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)

ACCESS_KEY = "test-access-key"
SECRET_KEY = "test-secret-key"
REGION = "us-east-1"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # werkzeug colours some status lines
_LINE = re.compile(r'"(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP/[\d.]+" (\d{3})')


class S3ServerError(RuntimeError):
    """The server could not start; the message carries its log."""


@dataclass(frozen=True)
class LoggedRequest:
    """One request the server answered."""

    method: str
    path: str  # "/bucket/key?query"
    status: int


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class S3Server:
    """``moto_server`` on a free port of 127.0.0.1, its log under ``base_dir``."""

    def __init__(self, base_dir: Path) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.port = free_port()
        self.log_path = self.base_dir / "moto_server.log"
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def start(self, timeout: float = 60.0) -> "S3Server":
        self.base_dir.mkdir(parents=True, exist_ok=True)
        try:
            import moto.server  # noqa: F401
        except ImportError as e:
            raise S3ServerError(f"moto[server] is not installed ({e}); it is in the test extras: "
                                "pip install -e '.[test]'") from e
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=env)
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise S3ServerError(f"moto_server exited with code {code}; log {self.log_path}:\n"
                                    f"{self.log_tail()}")
            try:
                import requests

                if requests.get(self.endpoint + "/moto-api/", timeout=1).status_code < 500:
                    log.info("S3 server (moto) up at %s (pid %d)", self.endpoint, self.pid)
                    return self
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise S3ServerError(f"moto_server not up within {timeout:.0f} s; log {self.log_path}:\n"
                            f"{self.log_tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL, by PID."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        log.info("stopping moto_server pid %d", proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def log_mark(self) -> int:
        """A position in the request log (see :meth:`requests_since`)."""
        return self.log_path.stat().st_size if self.log_path.exists() else 0

    def requests_since(self, mark: int, settle: float = 0.2) -> list[LoggedRequest]:
        """The requests answered since ``mark`` (waits ``settle`` s for the log to be written)."""
        time.sleep(settle)
        with open(self.log_path, "rb") as f:
            f.seek(mark)
            text = _ANSI.sub("", f.read().decode("utf-8", "replace"))
        return [LoggedRequest(m.group(1), m.group(2), int(m.group(3)))
                for m in _LINE.finditer(text) if not m.group(2).startswith("/moto-api")]

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def __enter__(self) -> "S3Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
