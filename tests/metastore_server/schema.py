"""The pieces a Hive 3.1 / 4.1 test metastore needs besides its jars: Hive's Derby schema script
and our Java helpers (``java/MetastoreLauncher.java``, ``java/HiveSql.java``) compiled against
the version's jars.

The schema scripts come from Maven Central's ``hive-standalone-metastore-server-4.0.1-bin.tar.gz``
(Hive's metastore distribution; its ``scripts/metastore/upgrade/derby`` holds every version's
``hive-schema-X.derby.sql``). Maven Central has no 4.1.0 distribution, so Hive 4.1 starts from the
4.0.0 script minus the column-statistics columns Hive 4.1's own JDO mapping (``package.jdo`` in
hive-exec-4.1.0.jar) no longer has: TAB_COL_STATS and PART_COL_STATS lost their CAT_NAME,
DB_NAME, TABLE_NAME (and PARTITION_NAME) copies (HIVE-27725), which are NOT NULL in 4.0.0 and
would make every column-statistics write fail.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Sequence

import hive_jvm

DISTRIBUTION = "org.apache.hive:hive-standalone-metastore-server:4.0.1:tar.gz:bin"
BUILD_DIR = hive_jvm.BUILD_DIR / "metastore_server"
LAUNCHER = Path(__file__).resolve().parent / "java" / "MetastoreLauncher.java"

#: version -> (schema script, columns to drop after it)
SCHEMAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "hive31": ("hive-schema-3.1.0.derby.sql", ()),
    "hive41": ("hive-schema-4.0.0.derby.sql", (
        "TAB_COL_STATS.CAT_NAME", "TAB_COL_STATS.DB_NAME", "TAB_COL_STATS.TABLE_NAME",
        "PART_COL_STATS.CAT_NAME", "PART_COL_STATS.DB_NAME", "PART_COL_STATS.TABLE_NAME",
        "PART_COL_STATS.PARTITION_NAME")),
}


def hive_jars(version: str) -> list[Path]:
    """The jars of ``version`` (tests/hive_jvm), minus ``slf4j-reload4j``: Hive 4.1's classpath
    has two SLF4J bindings, and log4j2's must win (our log4j2 configuration)."""
    return [j for j in hive_jvm.classpath(version) if not j.name.startswith("slf4j-reload4j")]


def schema_script(version: str) -> Path:
    """Hive's Derby schema script for ``version``, extracted once under ``.build``."""
    name = SCHEMAS[version][0]
    out = BUILD_DIR / "schema" / name
    if out.exists():
        return out
    tarball = hive_jvm.artifact(DISTRIBUTION)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tarball) as tar:
        member = next((m for m in tar.getmembers()
                       if m.name.endswith(f"scripts/metastore/upgrade/derby/{name}")), None)
        if member is None:
            raise hive_jvm.HiveJvmError(f"{name} is not in {tarball}")
        data = tar.extractfile(member)
        assert data is not None
        tmp = out.with_suffix(".tmp")
        tmp.write_bytes(data.read())
        tmp.replace(out)
    return out


def dropped_columns(version: str) -> tuple[str, ...]:
    return SCHEMAS[version][1]


def launcher_classes(version: str, classpath: Sequence[Path]) -> Path:
    """``MetastoreLauncher`` compiled against ``classpath`` (once per source hash)."""
    return java_classes(LAUNCHER, version, classpath)


def java_classes(source: Path, version: str, classpath: Sequence[Path]) -> Path:
    """The Java helper ``source`` (one class, no package) compiled against the jars of
    ``version`` (once per source hash); returns its classes directory."""
    digest = hashlib.sha256(source.read_bytes() + version.encode()).hexdigest()[:16]
    classes = BUILD_DIR / source.stem / f"{version}-{digest}"
    if (classes / f"{source.stem}.class").exists():
        return classes
    classes.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".launcher-", dir=classes.parent))
    try:
        cmd = [_javac(), "-nowarn", "-encoding", "UTF-8", "-d", str(tmp),
               "-cp", os.pathsep.join(map(str, classpath)), str(source)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise hive_jvm.HiveJvmError(f"javac failed:\n{done.stdout}\n{done.stderr}")
        try:
            os.rename(tmp, classes)
        except OSError:
            if not (classes / f"{source.stem}.class").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return classes


def _javac() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "javac").exists():
        return str(Path(home) / "bin" / "javac")
    found = shutil.which("javac")
    if not found:
        raise hive_jvm.HiveJvmError("javac not found (set JAVA_HOME or PATH)")
    return found
