"""A GCS server on 127.0.0.1: fake-gcs-server 1.56.1 (Go, github.com/fsouza/fake-gcs-server),
one process per test session, stopped by PID.

The first use builds it with ``go install github.com/fsouza/fake-gcs-server@v1.56.1`` into
``.build/gcs/bin`` (a few minutes; Go is needed: ``go`` on the PATH or ``/usr/local/go/bin/go``;
the Go module proxy must be reachable), with GOPATH, GOCACHE and GOMODCACHE under ``.build/gcs``
too, so nothing lands outside the repository; later runs reuse the binary. It serves the JSON API
over http from memory (``-backend memory``), anonymous, and honours ``ifGenerationMatch=0``.
"""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

from server_process import ServerProcess

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = ROOT / ".build" / "gcs"
MODULE = "github.com/fsouza/fake-gcs-server"
VERSION = "v1.56.1"


class GcsServerError(RuntimeError):
    """The server could not be built or started; the message says why."""


def go_binary() -> str:
    found = shutil.which("go") or ("/usr/local/go/bin/go"
                                   if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if found is None:
        raise GcsServerError("Go is needed to build fake-gcs-server (tests/gcs_server): no `go` "
                             "on the PATH nor /usr/local/go/bin/go")
    return found


def install(target: Path = BUILD_DIR) -> Path:
    """``go install`` of the pinned fake-gcs-server into ``target/bin`` (skipped when built);
    returns the executable."""
    exe = target / "bin" / "fake-gcs-server"
    stamp = target / ".installed-version"
    if exe.exists() and stamp.exists() and stamp.read_text() == VERSION:
        return exe
    go = go_binary()
    target.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOBIN": str(target / "bin"), "GOPATH": str(target / "gopath"),
           "GOCACHE": str(target / "gocache"), "GOMODCACHE": str(target / "gomodcache"),
           "GOFLAGS": "-modcacherw", "CGO_ENABLED": "0"}
    log.info("building fake-gcs-server %s into %s (go install)", VERSION, target)
    res = subprocess.run([go, "install", f"{MODULE}@{VERSION}"], env=env, capture_output=True,
                         text=True, timeout=1800)
    if res.returncode != 0 or not exe.exists():
        raise GcsServerError(f"go install {MODULE}@{VERSION} failed ({res.returncode}): "
                             f"{(res.stderr or res.stdout)[-2000:]}")
    stamp.write_text(VERSION)
    return exe


class GcsServer(ServerProcess):
    """``fake-gcs-server`` on a free port of 127.0.0.1, its log under ``base_dir``."""

    name = "GCS server (fake-gcs-server)"
    failure = GcsServerError

    def __init__(self, base_dir: Path) -> None:
        super().__init__(base_dir, "fake-gcs-server.log")

    @property
    def endpoint(self) -> str:
        """The JSON API's root URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "GcsServer":
        exe = install()
        import requests

        self.launch([str(exe), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port),
                     "-backend", "memory", "-log-level", "warn"],
                    lambda: requests.get(f"{self.endpoint}/storage/v1/b",
                                         timeout=1).status_code == 200, timeout)
        return self
