"""An Azure Blob server on 127.0.0.1: Azurite 3.37.0 (npm ``azurite``, the emulator Microsoft
publishes), one process per test session, stopped by PID.

``package.json`` and ``package-lock.json`` here pin it; the first use installs them with
``npm ci`` into ``.build/azurite`` (about a minute; node and npm are needed), later runs reuse
that copy while the lock file is unchanged. Azurite runs in memory (``--inMemoryPersistence``)
with its well-known development account ``devstoreaccount1``.
"""
from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

from server_process import ServerProcess

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INSTALL_DIR = ROOT / ".build" / "azurite"
ACCOUNT = "devstoreaccount1"
#: Azurite's published development key (not a secret: the same in every Azurite)
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


class AzureServerError(RuntimeError):
    """The server could not be installed or started; the message says why."""


def install(target: Path = INSTALL_DIR) -> Path:
    """``npm ci`` of the pinned Azurite into ``target`` (skipped when the lock is unchanged);
    returns the ``azurite-blob`` executable."""
    exe = target / "node_modules" / ".bin" / "azurite-blob"
    lock = (HERE / "package-lock.json").read_bytes()
    stamp = target / ".installed-lock"
    if exe.exists() and stamp.exists() and stamp.read_bytes() == lock:
        return exe
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        raise AzureServerError("node and npm are needed to install Azurite (tests/azure_server)")
    target.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(HERE / name, target / name)
    log.info("installing Azurite into %s (npm ci)", target)
    res = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target,
                         capture_output=True, text=True, timeout=900)
    if res.returncode != 0 or not exe.exists():
        raise AzureServerError(f"npm ci of Azurite failed ({res.returncode}): "
                               f"{(res.stderr or res.stdout)[-2000:]}")
    stamp.write_bytes(lock)
    return exe


class AzureServer(ServerProcess):
    """``azurite-blob`` on a free port of 127.0.0.1, its log under ``base_dir``."""

    name = "Azure Blob server (Azurite)"
    failure = AzureServerError

    def __init__(self, base_dir: Path) -> None:
        super().__init__(base_dir, "azurite.log")

    @property
    def endpoint(self) -> str:
        """The Blob service URL of the development account."""
        return f"http://127.0.0.1:{self.port}/{ACCOUNT}"

    def start(self, timeout: float = 60.0) -> "AzureServer":
        exe = install()
        self.base_dir.mkdir(parents=True, exist_ok=True)
        self.launch([str(exe), "--blobHost", "127.0.0.1", "--blobPort", str(self.port),
                     "--inMemoryPersistence", "--skipApiVersionCheck", "--disableProductStyleUrl",
                     "--debug", str(self.base_dir / "azurite-debug.log")],
                    lambda: b"successfully listens" in self.log_path.read_bytes(), timeout)
        return self
