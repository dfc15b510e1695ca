"""A real HDFS (Hadoop 3.5.0's MiniDFSCluster: NameNode + DataNodes, WebHDFS on) on 127.0.0.1.

The jars come from ``tests/hive_jvm/hadoop/pom.xml`` (Maven, cached in ``.build/m2``); the small
launcher ``java/MiniHdfs.java`` is compiled with ``javac`` on first use into
``.build/hdfs_cluster/<hash>/``. The process keeps its blocks and metadata under one directory,
listens on ports the OS picks (written to ``<dir>/ready.json`` once the cluster is up), and stops
when its standard input closes or when it is signalled; :meth:`MiniHdfsCluster.stop` does both, by
PID.
"""
from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional

log = logging.getLogger(__name__)

_HERE = Path(__file__).resolve().parent
JAVA_SOURCE = _HERE / "java" / "MiniHdfs.java"
MAIN_CLASS = "hdfscluster.MiniHdfs"
BUILD_DIR = _HERE.parents[1] / ".build" / "hdfs_cluster"
HADOOP_VERSION = "3.5.0"  # tests/hive_jvm/hadoop/pom.xml (pyspark 4.3's Hadoop too)


class HdfsClusterError(RuntimeError):
    """The cluster could not be built or started; the message says why (with its log)."""


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise HdfsClusterError(f"{name} not found (set JAVA_HOME or put a JDK on the PATH)")
    return found


def hadoop_classpath() -> list[Path]:
    """Hadoop's MiniDFSCluster jars, resolved by Maven on first use."""
    import hive_jvm

    try:
        return hive_jvm.classpath("hadoop")
    except hive_jvm.HiveJvmError as e:
        raise HdfsClusterError(f"Hadoop {HADOOP_VERSION} jars unavailable: {e}") from e


def build_launcher(jars: list[Path]) -> Path:
    """Compile ``MiniHdfs.java`` once per source hash; returns its classes directory."""
    digest = hashlib.sha256(JAVA_SOURCE.read_bytes() + HADOOP_VERSION.encode()).hexdigest()[:16]
    classes = BUILD_DIR / digest / "classes"
    if (classes / "hdfscluster" / "MiniHdfs.class").exists():
        return classes
    (BUILD_DIR / digest).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".classes-", dir=BUILD_DIR / digest))
    try:
        cmd = [_tool("javac"), "-nowarn", "-encoding", "UTF-8", "-d", str(tmp),
               "-cp", os.pathsep.join(map(str, jars)), str(JAVA_SOURCE)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise HdfsClusterError(f"javac failed:\n{done.stdout}\n{done.stderr}")
        try:
            os.rename(tmp, classes)
        except OSError:
            if not (classes / "hdfscluster" / "MiniHdfs.class").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return classes


class MiniHdfsCluster:
    """One MiniDFSCluster process with its data under ``base_dir``.

    ``block_size`` is small on purpose (1 MiB, the NameNode's minimum): test files then span
    several blocks, as table files do on a real cluster.
    """

    def __init__(self, base_dir: Path, *, data_nodes: int = 1, block_size: int = 1 << 20,
                 heap: str = "512m", settings: Optional[dict[str, str]] = None) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.data_nodes = data_nodes
        self.block_size = block_size
        self.heap = heap
        #: Hadoop settings on top of the launcher's (hdfs-site keys)
        self.settings = dict(settings or {})
        self.log_path = self.base_dir / "minihdfs.log"
        self.ready_path = self.base_dir / "ready.json"
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.rpc_port = 0
        self.http_port = 0
        self.datanode_http_ports: list[int] = []
        self.superuser = ""

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid if self.process else None

    @property
    def url(self) -> str:
        """The NameNode's HTTP address (WebHDFS): ``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.http_port}"

    def command(self, classes: Path, jars: list[Path]) -> list[str]:
        cp = os.pathsep.join([str(classes), *map(str, jars)])
        # C1 only and the serial GC: a faster start on a small, busy machine
        return [_tool("java"), f"-Xmx{self.heap}", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Djava.net.preferIPv4Stack=true",
                *(f"-Dminihdfs.conf.{k}={v}" for k, v in sorted(self.settings.items())),
                "-cp", cp, MAIN_CLASS, str(self.base_dir / "dfs"),
                "0", "0", str(self.data_nodes), str(self.block_size)]

    def start(self, timeout: float = 180.0) -> "MiniHdfsCluster":
        jars = hadoop_classpath()
        classes = build_launcher(jars)
        (self.base_dir / "dfs").mkdir(parents=True, exist_ok=True)
        self.ready_path = self.base_dir / "dfs" / "ready.json"
        self.ready_path.unlink(missing_ok=True)
        env = dict(os.environ)
        env.pop("HADOOP_CONF_DIR", None)  # a machine's own cluster settings must not leak in
        env.pop("HADOOP_USER_NAME", None)
        log.info("starting MiniDFSCluster (Hadoop %s) in %s", HADOOP_VERSION, self.base_dir)
        t0 = time.monotonic()
        with open(self.log_path, "ab") as out:
            self.process = subprocess.Popen(self.command(classes, jars), stdin=subprocess.PIPE,
                                            stdout=out, stderr=subprocess.STDOUT,
                                            cwd=self.base_dir, env=env)
        atexit.register(self.stop)
        deadline = t0 + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.process = None
                raise HdfsClusterError(f"MiniDFSCluster exited with code {code} during start-up; "
                                       f"log {self.log_path}:\n{self.log_tail()}")
            if self.ready_path.exists():
                ready = json.loads(self.ready_path.read_text())
                self.rpc_port = int(ready["rpcPort"])
                self.http_port = int(ready["httpPort"])
                self.datanode_http_ports = [int(p) for p in ready["dataNodeHttpPorts"]]
                self.superuser = str(ready["user"])
                log.info("MiniDFSCluster up in %.1f s: rpc 127.0.0.1:%d, http %s (pid %d)",
                         time.monotonic() - t0, self.rpc_port, self.url, self.process.pid)
                return self
            time.sleep(0.2)
        self.stop()
        raise HdfsClusterError(f"MiniDFSCluster not ready within {timeout:.0f} s; "
                               f"log {self.log_path}:\n{self.log_tail()}")

    def stop(self, timeout: float = 30.0) -> None:
        """Close its standard input (a clean shutdown), then SIGTERM, then SIGKILL, by PID."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        log.info("stopping MiniDFSCluster pid %d", proc.pid)
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout / 2)
            return
        except (subprocess.TimeoutExpired, OSError):
            pass
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout / 2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> "MiniHdfsCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
