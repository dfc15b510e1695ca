"""A plain ``java -cp`` JVM holding Hive 3.1.3's or 4.1.0's jars, driven over stdin/stdout.

Hive 3 and 4 cannot run inside pyspark's JVM (its jars hold Hive 2.3), so each version gets a JVM
of its own: the jars come from :func:`hive_jvm.classpath`, our small Java helpers
(``java/common`` plus ``java/<version>``) are compiled against them on first use (cached under
``.build/hive_jvm/classes-<version>``), and ``hivejvm.Server`` answers one JSON line per request
(see ``java/common/hivejvm/Server.java``). Hive's and Hadoop's logging goes to a log file.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

from . import BUILD_DIR, HiveJvmError, classpath

__all__ = ["HiveJvm", "HiveCallError", "build", "java_flags"]

log = logging.getLogger(__name__)
_HERE = Path(__file__).resolve().parent
JAVA_DIR = _HERE / "java"

#: the module openings Spark passes to Java 17 (launcher's JavaModuleOptions), which Hive's
#: reflection (Kryo, DataNucleus, ORC's Hadoop shims) needs as well
_OPENS = ["java.base/java.lang", "java.base/java.lang.invoke", "java.base/java.lang.reflect",
          "java.base/java.io", "java.base/java.net", "java.base/java.nio", "java.base/java.util",
          "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic",
          "java.base/java.util.regex", "java.base/jdk.internal.ref", "java.base/sun.nio.ch",
          "java.base/sun.nio.cs", "java.base/sun.security.action", "java.base/sun.util.calendar",
          "java.base/java.text", "java.base/java.time", "java.sql/java.sql"]


class HiveCallError(HiveJvmError):
    """A call into the Hive JVM failed; the message carries the Java exception chain."""


def java_flags() -> list[str]:
    return [f"--add-opens={m}=ALL-UNNAMED" for m in _OPENS]


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise HiveJvmError(f"{name} not found (set JAVA_HOME or PATH)")
    return found


def build(name: str) -> tuple[Path, list[Path]]:
    """Compile the helpers for Hive ``name`` (once per source + classpath); returns
    (classes directory, Hive's jars)."""
    from hive_ref import compile_java

    jars = classpath(name)
    sources = sorted((JAVA_DIR / "common").rglob("*.java")) + sorted((JAVA_DIR / name).rglob("*.java"))
    classes = compile_java(sources, BUILD_DIR / "hive_jvm" / f"classes-{name}",
                           Path("hivejvm") / "Server.class", classpath=jars)
    return classes, jars


def build_boot() -> Path:
    """The system class loader of the Hive JVMs (``java/boot``; needs no jars)."""
    from hive_ref import compile_java

    return compile_java(sorted((JAVA_DIR / "boot").rglob("*.java")),
                        BUILD_DIR / "hive_jvm" / "classes-boot",
                        Path("hivejvm") / "boot" / "HiveLoader.class", classpath=[])


class HiveJvm:
    """One running JVM of Hive ``name``; :meth:`call` sends a request and returns its result."""

    def __init__(self, name: str, proc: subprocess.Popen, log_path: Path):
        self.name, self._proc, self.log_path = name, proc, log_path
        self._lock = threading.Lock()
        self._closed = False
        #: the Hive version and jars that answered (Acid.ping)
        self.info: dict = self.call("Acid.ping")

    @classmethod
    def start(cls, name: str, *, memory: str = "768m", extra_flags: tuple = ()) -> "HiveJvm":
        classes, jars = build(name)
        boot = build_boot()
        log_dir = BUILD_DIR / "hive_jvm" / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        log_path = log_dir / f"{name}-{os.getpid()}.log"
        cmd = [_tool("java"), f"-Xmx{memory}", "-XX:+UseSerialGC", "-Duser.timezone=UTC",
               "-Dlog4j2.configurationFile=" + str(JAVA_DIR / "log4j2.properties"),
               *java_flags(), *extra_flags,
               # Hive's jars and our helpers load through HiveLoader (java/boot: why)
               "-Djava.system.class.loader=hivejvm.boot.HiveLoader",
               "-Dhivejvm.classpath=" + os.pathsep.join([str(classes), *map(str, jars)]),
               "-cp", str(boot), "hivejvm.Server"]
        with open(log_path, "wb") as logf:
            proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=logf, cwd=str(BUILD_DIR))
        try:
            return cls(name, proc, log_path)
        except BaseException:
            _stop(proc)
            raise

    @property
    def pid(self) -> int:
        return self._proc.pid

    def call(self, op: str, spec: Optional[dict] = None) -> Any:
        """Run ``op`` (``"Class.method"`` of the Java helper) on ``spec``; returns its result."""
        line = json.dumps({"op": op, "spec": spec or {}}, allow_nan=True) + "\n"
        with self._lock:
            if self._closed:
                raise HiveCallError(f"the Hive {self.name} JVM is closed")
            try:
                self._proc.stdin.write(line.encode("utf-8"))
                self._proc.stdin.flush()
                answer = self._proc.stdout.readline()
            except (BrokenPipeError, OSError) as e:
                raise HiveCallError(f"the Hive {self.name} JVM is gone ({e}); see {self.log_path}")
        if not answer:
            raise HiveCallError(f"the Hive {self.name} JVM ended (exit {self._proc.poll()}) "
                                f"during {op}; see {self.log_path}")
        out = json.loads(answer)
        if not out["ok"]:
            raise HiveCallError(f"Hive {self.name} {op}: {out['error']}")
        return out["result"]

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _stop(self._proc)

    def __enter__(self) -> "HiveJvm":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _stop(proc: subprocess.Popen) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()  # the server exits when its stdin closes
    except OSError:
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        log.warning("Hive JVM %s did not end; killing it", proc.pid)
        proc.kill()
        proc.wait(timeout=10)
