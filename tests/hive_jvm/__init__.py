"""Real Hive 3.1.3 and 4.1.0 for the test suite, fetched from Maven Central on first use.

Each version has a small ``pom.xml`` beside this file. :func:`classpath` resolves it with Maven
into a repository under ``.build/m2`` (so a second run downloads nothing) and returns the jars
as a classpath list; the result is cached in ``.build/hive_jvm/<name>.classpath`` keyed by the
pom's hash, so an edited pom is resolved again. ``make jvm-deps`` does the same ahead of time.

Only the tests use this: nothing here is shipped with the package.
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

__all__ = ["VERSIONS", "OTHER_POMS", "HiveJvmError", "artifact", "classpath", "pom_path"]

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parents[1]
BUILD_DIR = ROOT / ".build"
LOCAL_REPO = BUILD_DIR / "m2"
CACHE_DIR = BUILD_DIR / "hive_jvm"

#: pytest marker / short name -> the folder of its pom
VERSIONS = {"hive31": "3.1.3", "hive41": "4.1.0"}
#: other jar sets resolved the same way (not Hive versions): folder -> version
OTHER_POMS = {"hadoop": "3.5.0",  # MiniDFSCluster for tests/hdfs_cluster
              "lakes": "iceberg 1.12.0, delta 4.4.0",  # the conversion targets' Spark readers
              "s3a": "3.5.0"}  # Hadoop's S3A client, for a metastore with tables on S3


class HiveJvmError(RuntimeError):
    """The jars of a Hive version could not be resolved; the message carries Maven's output."""


def pom_path(name: str) -> Path:
    if name not in VERSIONS and name not in OTHER_POMS:
        raise KeyError(f"unknown Hive version {name!r}; known: {sorted(VERSIONS)} "
                       f"(and {sorted(OTHER_POMS)})")
    return _HERE / name / "pom.xml"


def _mvn() -> str:
    found = shutil.which("mvn")
    if not found:
        raise HiveJvmError("Maven (mvn) is not on the PATH; it fetches Hive's jars for the tests")
    return found


def classpath(name: str) -> list[Path]:
    """The jars of Hive ``name`` (``"hive31"`` or ``"hive41"``; or a name in OTHER_POMS),
    resolving them on first use."""
    pom = pom_path(name)
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:16]
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    out = CACHE_DIR / f"{name}-{digest}.classpath"
    with open(CACHE_DIR / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two pytest processes resolve once
        if not out.exists():
            _resolve(pom, out)
    jars = [Path(p) for p in out.read_text().split(os.pathsep) if p]
    missing = [j for j in jars if not j.exists()]
    if missing:  # the local repository was cleaned: resolve again
        out.unlink()
        return classpath(name)
    return jars


def _resolve(pom: Path, out: Path) -> None:
    tmp = out.with_suffix(".tmp")
    cmd = [_mvn(), "-B", "-q", "-f", str(pom), f"-Dmaven.repo.local={LOCAL_REPO}",
           "dependency:build-classpath", f"-Dmdep.outputFile={tmp}"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0 or not tmp.exists():
        raise HiveJvmError(f"Resolving {pom} failed ({' '.join(cmd)}):\n"
                           f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    tmp.replace(out)


def artifact(coordinate: str) -> Path:
    """One artifact from Maven Central (``group:artifact:version[:type[:classifier]]``, not its
    dependencies) in the local repository under ``.build/m2``; fetched on first use."""
    group, name, version, *rest = coordinate.split(":")
    kind = rest[0] if rest else "jar"
    classifier = f"-{rest[1]}" if len(rest) > 1 else ""
    path = (LOCAL_REPO / group.replace(".", "/") / name / version
            / f"{name}-{version}{classifier}.{kind}")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / "artifacts.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            cmd = [_mvn(), "-B", "-q", f"-Dmaven.repo.local={LOCAL_REPO}",
                   "dependency:get", f"-Dartifact={coordinate}", "-Dtransitive=false"]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            if done.returncode != 0 or not path.exists():
                raise HiveJvmError(f"Fetching {coordinate} failed ({' '.join(cmd)}):\n"
                                   f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return path
