"""Spark as the converted tables' reader: the Iceberg Spark runtime and Delta's Spark package.

Neither publishes a build for Spark 4.3 (the suite's PySpark): both fail to link there. They are
run on PySpark 4.1.4, installed on first use by pip into ``.build/lake_spark/`` (``--target``:
it shadows the venv's PySpark only in the reader's subprocess, via PYTHONPATH), with the jars of
``tests/hive_jvm/lakes/pom.xml`` from Maven Central. :func:`read_versions` runs
``lake_spark_reader.py`` once for a list of reads and returns each read's rows as Arrow.
Only the tests use this; nothing here is shipped.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc

import hive_jvm

PYSPARK_VERSION = "4.1.4"
PY4J_VERSION = "0.10.9.9"
HERE = Path(__file__).resolve().parent
TARGET = hive_jvm.BUILD_DIR / "lake_spark" / f"pyspark-{PYSPARK_VERSION}"


class LakeSparkError(RuntimeError):
    """PySpark 4.1 or the readers' jars could not be installed."""


def install() -> Path:
    """PySpark 4.1.4 in ``.build/lake_spark`` (pip, once; about 500 MB)."""
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    with open(TARGET.parent / "install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = TARGET / ".installed"
        if not done.exists():
            tmp = TARGET.with_suffix(".tmp")
            subprocess.run(["rm", "-rf", str(tmp)], check=True)
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                   str(tmp), f"pyspark=={PYSPARK_VERSION}", f"py4j=={PY4J_VERSION}"]
            out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if out.returncode != 0:
                raise LakeSparkError(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
            subprocess.run(["rm", "-rf", str(TARGET)], check=True)
            tmp.rename(TARGET)
            done.touch()
    return TARGET


def jars() -> list[Path]:
    try:
        return hive_jvm.classpath("lakes")
    except hive_jvm.HiveJvmError as e:
        raise LakeSparkError(str(e)) from e


def read_versions(reads: list[dict], out_dir: Path) -> list[pa.Table]:
    """Run the Spark reader on ``reads`` (see lake_spark_reader.py) and return their rows."""
    site = install()
    job = out_dir / "job.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    job.write_text(json.dumps({"jars": [str(j) for j in jars()], "reads": reads,
                               "out": str(out_dir)}))
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYSPARK_PYTHON",
                                                           "PYSPARK_DRIVER_PYTHON")}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, str(HERE / "lake_spark_reader.py"), str(job)],
                          capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        raise AssertionError(f"the Spark reader failed:\n{done.stderr[-6000:]}")
    out = []
    for i in range(len(reads)):
        with ipc.open_file(out_dir / f"{i}.arrow") as f:
            out.append(f.read_all())
    return out
