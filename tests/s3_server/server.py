"""An S3-compatible server on 127.0.0.1: moto's ``moto_server`` (PyPI ``moto[server]``, in the
test extras), one process per test session, stopped by PID.

moto implements the S3 REST API in memory (buckets, objects, ranged GETs, ListObjectsV2,
multipart uploads, conditional ``PutObject`` with ``If-None-Match: *``). Its access log (one line
per request: method, path, status) is the request log the tests count round trips with.
"""
from __future__ import annotations

import logging
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from server_process import ServerProcess, free_port  # noqa: F401  (free_port: used by others)

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


class S3Server(ServerProcess):
    """``moto_server`` on a free port of 127.0.0.1, its log under ``base_dir``."""

    name = "S3 server (moto)"
    failure = S3ServerError

    def __init__(self, base_dir: Path) -> None:
        super().__init__(base_dir, "moto_server.log")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "S3Server":
        try:
            import moto.server  # noqa: F401
        except ImportError as e:
            raise S3ServerError(f"moto[server] is not installed ({e}); it is in the test extras: "
                                "pip install -e '.[test]'") from e
        import requests

        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.launch([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
                    lambda: requests.get(self.endpoint + "/moto-api/", timeout=1).status_code
                    < 500, timeout, env)
        return self

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

    def __enter__(self) -> "S3Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
