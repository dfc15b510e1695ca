"""Hive's own SQL engine (3.1.3 / 4.1.0, MapReduce in local mode) run against a test metastore:
``java/HiveSql.java`` in a JVM of its own, one per call (15-30 s: every statement that reads
data runs a local MapReduce job).

    rows = run_sql("hive41", metastore.uri, tmp_path, ["select count(*) from t"])[0]["rows"]

Each result is ``{"sql": ..., "rows": [tab-separated lines]}`` or ``{"sql": ..., "error": ...}``.
"""
from __future__ import annotations

import json
import logging
import os
import subprocess
from pathlib import Path
from typing import Sequence

from . import schema
from .server import JAVA17_OPENS, LOG4J2, java_executable

log = logging.getLogger(__name__)
SOURCE = Path(__file__).resolve().parent / "java" / "HiveSql.java"


def run_sql(version: str, uri: str, work_dir: Path, statements: Sequence[str],
            timeout: float = 600.0) -> list[dict]:
    """Run ``statements`` one after the other in one Hive session; their results, in order."""
    jars = schema.hive_jars(version)
    classes = schema.java_classes(SOURCE, version, jars)
    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    log4j = work_dir / "log4j2-hive-sql.properties"
    log4j.write_text(LOG4J2, encoding="utf-8")
    jar_list = work_dir / "hive-jars.txt"  # HiveSql loads Hive from these (a URLClassLoader)
    jar_list.write_text(os.pathsep.join(map(str, jars)), encoding="utf-8")
    cmd = [java_executable(), "-Xmx1g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
           *JAVA17_OPENS, f"-Dlog4j.configurationFile={log4j}",
           f"-Dlog4j2.configurationFile={log4j}", f"-Dhive.log.dir={work_dir}",
           "-Dhive.log.file=hive-sql.log", "-Duser.timezone=UTC",
           "-cp", str(classes), "HiveSql", str(jar_list), uri, str(work_dir / "scratch"),
           *statements]
    env = dict(os.environ)
    env.pop("HIVE_CONF_DIR", None)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=work_dir,
                          env=env, stdin=subprocess.DEVNULL)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"sql"')]
    if len(results) != len(statements):
        raise RuntimeError(f"Hive {version} SQL run ended with code {done.returncode} after "
                           f"{len(results)} of {len(statements)} statements; log "
                           f"{work_dir / 'hive-sql.log'}\n{done.stderr[-4000:]}")
    return results


def rows(result: dict) -> list[str]:
    """The result's rows; a statement Hive refused raises with its message."""
    if "error" in result:
        raise AssertionError(f"Hive refused {result['sql']!r}: {result['error']}")
    return list(result["rows"])


def answered_from_stats(explain: dict) -> bool:
    """Whether Hive's plan for a query answers it from the metastore's statistics alone
    (``StatsOptimizer``: a fetch of constants, no table scan)."""
    plan = "\n".join(rows(explain))
    return "TableScan" not in plan and "Fetch Operator" in plan
