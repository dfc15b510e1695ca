"""A real Hive Metastore 2.3.10 Thrift server, run from the jars inside the pyspark wheel.

One server per pytest session (see :mod:`metastore_server.fixtures`). It keeps its Derby database,
warehouse, ``hive-site.xml`` and log under one directory, listens on a free port chosen on
127.0.0.1 (Hive 2.3 binds the wildcard address, it has no bind-host setting; clients connect to
127.0.0.1 only) and is stopped by PID.

Settings and traps: shared/notes/hive-2.3-inside-pyspark.md §2.
"""
from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Mapping, Optional, Sequence
from xml.sax.saxutils import escape

log = logging.getLogger(__name__)

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"


def pyspark_jars_dir() -> Path:
    """The ``jars/`` folder of the pyspark wheel (holds Hive 2.3.10, Derby, DataNucleus)."""
    import pyspark

    jars = Path(pyspark.__file__).resolve().parent / "jars"
    if not any(jars.glob("hive-metastore-*.jar")):
        raise RuntimeError(f"No hive-metastore jar in {jars}; is this a full pyspark install?")
    return jars


def java_executable() -> str:
    """``$JAVA_HOME/bin/java`` when set, else ``java`` on the PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if not found:
        raise RuntimeError("No java found (set JAVA_HOME or put java on the PATH)")
    return found


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hive_site_settings(base_dir: Path) -> dict[str, str]:
    """Every setting a Hive 2.3 metastore with the DbTxnManager needs here (notes §2)."""
    return {
        "javax.jdo.option.ConnectionURL":
            f"jdbc:derby:;databaseName={base_dir / 'metastore_db'};create=true",
        "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": (base_dir / "warehouse").as_uri(),
        "hive.support.concurrency": "true",
        "hive.txn.manager": "org.apache.hadoop.hive.ql.lockmgr.DbTxnManager",
        "hive.compactor.initiator.on": "false",
        "hive.compactor.worker.threads": "0",
        # Trap: the async logger needs com.lmax.disruptor, which is not in the pyspark jars.
        "hive.async.log.enabled": "false",
        # Trap: the default BoneCP is not in the pyspark jars; the first txn call would die.
        "datanucleus.connectionPoolingType": "HikariCP",
        # Creates TXNS, HIVE_LOCKS, COMPACTION_QUEUE... lazily (TxnDbUtil.prepDb). Side effect:
        # every lock component must carry an explicit operationType.
        "hive.in.test": "true",
        "hive.metastore.event.db.notification.api.auth": "false",
        # A new Derby database is created from scratch anyway: skip DataNucleus' validation.
        "datanucleus.schema.validateTables": "false",
        "datanucleus.schema.validateColumns": "false",
        "datanucleus.schema.validateConstraints": "false",
    }


def write_hive_site(path: Path, settings: Mapping[str, str]) -> None:
    """Write a Hadoop-style configuration XML file."""
    props = "\n".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
        for k, v in settings.items())
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{props}\n</configuration>\n',
                    encoding="utf-8")


class MetastoreServer:
    """A Hive Metastore 2.3.10 process with its own Derby database under ``base_dir``."""

    def __init__(self, base_dir: Path, *, port: Optional[int] = None,
                 extra_settings: Optional[Mapping[str, str]] = None, heap: str = "512m",
                 extra_classpath: Sequence[Path] = ()) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.port = port or free_port()
        self.conf_dir = self.base_dir / "conf"
        self.warehouse = self.base_dir / "warehouse"
        self.log_path = self.base_dir / "metastore.log"
        self.settings = hive_site_settings(self.base_dir)
        self.settings.update(extra_settings or {})
        self.heap = heap
        #: put before the pyspark jars (a class here replaces Hive's own of the same name)
        self.extra_classpath = [Path(p) for p in extra_classpath]
        self.process: Optional[subprocess.Popen[bytes]] = None

    @property
    def uri(self) -> str:
        """``thrift://127.0.0.1:PORT``."""
        return f"thrift://127.0.0.1:{self.port}"

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    def command(self) -> list[str]:
        classpath = os.pathsep.join([*map(str, self.extra_classpath), str(self.conf_dir),
                                     str(pyspark_jars_dir() / "*")])
        # C1-only JIT and the serial GC: start-up is 3-4x faster on a small, busy machine.
        return [java_executable(), f"-Xmx{self.heap}", "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
                f"-Dderby.stream.error.file={self.base_dir / 'derby.log'}",
                # Hive's own log4j2 file (hive-log4j2.properties in hive-common) goes here, not
                # to /tmp/<user>/hive.log.
                f"-Dhive.log.dir={self.base_dir}", "-Dhive.log.file=hive.log",
                "-cp", classpath, MAIN_CLASS, "-p", str(self.port)]

    def start(self, timeout: float = 120.0) -> "MetastoreServer":
        """Start the process and wait until the port accepts connections."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
        write_hive_site(self.conf_dir / "hive-site.xml", self.settings)
        env = dict(os.environ)
        env.pop("HIVE_CONF_DIR", None)
        env["HADOOP_USER_NAME"] = env.get("HADOOP_USER_NAME", os.environ.get("USER", "hive"))
        log.info("starting Hive Metastore 2.3.10 on 127.0.0.1:%d (log %s)", self.port,
                 self.log_path)
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(self.command(), stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.base_dir, env=env)
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Hive Metastore exited with code {self.process.returncode} "
                                   f"during start-up; log {self.log_path}:\n{self.log_tail()}")
            if _port_open("127.0.0.1", self.port):
                log.info("Hive Metastore up: %s (pid %d)", self.uri, self.process.pid)
                return self
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"Hive Metastore did not open port {self.port} within {timeout:.0f} s; "
                           f"log {self.log_path}:\n{self.log_tail()}")

    def stop(self, timeout: float = 20.0) -> None:
        """Stop the server by its PID (SIGTERM, then SIGKILL)."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        log.info("stopping Hive Metastore pid %d", proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    @property
    def hive_log_path(self) -> Path:
        """Hive's own log (errors behind 'Internal error processing ...' answers)."""
        return self.base_dir / "hive.log"

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the process output and of Hive's log."""
        out = []
        for path in (self.log_path, self.hive_log_path):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            out.append(f"--- {path} ---\n" + "\n".join(text.splitlines()[-lines:]))
        return "\n".join(out) or "(no log)"

    def __enter__(self) -> "MetastoreServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
