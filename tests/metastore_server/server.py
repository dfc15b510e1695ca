"""A real Hive Metastore Thrift server: 2.3.10 from the jars inside the pyspark wheel, 3.1.3 or
4.1.0 from Maven Central (tests/hive_jvm) with Hive's compactor threads on.

One server per version per pytest session (see :mod:`metastore_server.fixtures`). It keeps its
Derby database, warehouse, ``hive-site.xml`` and log under one directory, listens on a free port
chosen on 127.0.0.1 (Hive binds the wildcard address; clients connect to 127.0.0.1 only) and is
stopped by PID. What differs per version: :mod:`metastore_server.versions`.

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

from .versions import SPECS, ServerLayout

log = logging.getLogger(__name__)

MAIN_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStore"
LAUNCHER_CLASS = "MetastoreLauncher"  # java/MetastoreLauncher.java: schema, then MAIN_CLASS
#: what Hadoop / Hive 3-4 reflect into on Java 17 (the flags spark-submit passes too)
JAVA17_OPENS = [f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
    "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
    "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "java.util.regex",
    "sun.nio.ch", "sun.nio.cs", "sun.security.action", "sun.util.calendar")]


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


def hive_site_settings(base_dir: Path, version: str = "hive23") -> dict[str, str]:
    """Every setting a metastore of ``version`` with the DbTxnManager needs here (notes §2)."""
    return SPECS[version].settings(ServerLayout(base_dir))


#: Hive 3.1 / 4.1: their own log, INFO and up, to <base>/hive.log (log4j2 otherwise prints only
#: errors to the console)
LOG4J2 = """status = WARN
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:hive.log.dir}/${sys:hive.log.file}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{ISO8601} %5p [%t] %c{2}: %m%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.dn.name = DataNucleus
logger.dn.level = WARN
logger.dn2.name = org.datanucleus
logger.dn2.level = WARN
"""


def write_hive_site(path: Path, settings: Mapping[str, str]) -> None:
    """Write a Hadoop-style configuration XML file."""
    props = "\n".join(
        f"  <property><name>{escape(k)}</name><value>{escape(v)}</value></property>"
        for k, v in settings.items())
    path.write_text(f'<?xml version="1.0"?>\n<configuration>\n{props}\n</configuration>\n',
                    encoding="utf-8")


class MetastoreServer:
    """A Hive Metastore process (``version``: ``hive23``, ``hive31`` or ``hive41``) with its own
    Derby database under ``base_dir``."""

    def __init__(self, base_dir: Path, *, port: Optional[int] = None,
                 extra_settings: Optional[Mapping[str, str]] = None, heap: Optional[str] = None,
                 extra_classpath: Sequence[Path] = (), version: str = "hive23") -> None:
        if version not in SPECS:
            raise ValueError(f"unknown metastore version {version!r}; known {sorted(SPECS)}")
        self.version = version
        self.base_dir = Path(base_dir).resolve()
        self.port = port or free_port()
        self.conf_dir = self.base_dir / "conf"
        self.warehouse = self.base_dir / "warehouse"
        self.log_path = self.base_dir / "metastore.log"
        self.settings = hive_site_settings(self.base_dir, version)
        self.settings.update(extra_settings or {})
        self.heap = heap or ("512m" if version == "hive23" else "1g")
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

    @property
    def label(self) -> str:
        """``2.3.10``, ``3.1.3`` or ``4.1.0``."""
        return SPECS[self.version].label

    def command(self) -> list[str]:
        # C1-only JIT and the serial GC: start-up is 3-4x faster on a small, busy machine.
        jvm = [java_executable(), f"-Xmx{self.heap}", "-XX:TieredStopAtLevel=1",
               "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true",
               f"-Dderby.stream.error.file={self.base_dir / 'derby.log'}",
               "-Dderby.locks.deadlockTrace=true", "-Dderby.locks.monitor=true",
               # Hive's own log4j2 file (hive-log4j2.properties in hive-common) goes here, not
               # to /tmp/<user>/hive.log.
               f"-Dhive.log.dir={self.base_dir}", "-Dhive.log.file=hive.log"]
        if self.version == "hive23":
            classpath = [*map(str, self.extra_classpath), str(self.conf_dir),
                         str(pyspark_jars_dir() / "*")]
            return [*jvm, "-cp", os.pathsep.join(classpath), MAIN_CLASS, "-p", str(self.port)]
        from . import schema

        jars = schema.hive_jars(self.version)
        classes = schema.launcher_classes(self.version, jars)
        classpath = [*map(str, self.extra_classpath), str(self.conf_dir), str(classes),
                     *map(str, jars)]
        args = [ServerLayout(self.base_dir).derby_url, str(schema.schema_script(self.version))]
        drops = schema.dropped_columns(self.version)
        if drops:
            args += ["--drop-columns", ",".join(drops)]
        log4j = self.conf_dir / "log4j2-test.properties"
        return [*jvm, *JAVA17_OPENS, f"-Dlog4j.configurationFile={log4j}",
                f"-Dlog4j2.configurationFile={log4j}", "-cp", os.pathsep.join(classpath),
                LAUNCHER_CLASS, *args,
                "--", "-p", str(self.port)]

    def start(self, timeout: float = 240.0) -> "MetastoreServer":
        """Start the process and wait until the port accepts connections."""
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        self.warehouse.mkdir(parents=True, exist_ok=True)
        write_hive_site(self.conf_dir / "hive-site.xml", self.settings)
        (self.conf_dir / "log4j2-test.properties").write_text(LOG4J2, encoding="utf-8")
        env = dict(os.environ)
        env.pop("HIVE_CONF_DIR", None)
        env["HADOOP_USER_NAME"] = env.get("HADOOP_USER_NAME", os.environ.get("USER", "hive"))
        command = self.command()  # may fetch jars and compile the launcher first
        log.info("starting Hive Metastore %s on 127.0.0.1:%d (log %s)", self.label, self.port,
                 self.log_path)
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, cwd=self.base_dir, env=env)
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Hive Metastore {self.label} exited with code {self.process.returncode} "
                                   f"during start-up; log {self.log_path}:\n{self.log_tail()}")
            if _port_open("127.0.0.1", self.port):
                log.info("Hive Metastore %s up: %s (pid %d)", self.label, self.uri,
                         self.process.pid)
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
