"""Tests that need the real HDFS cluster or the S3 server are skipped, with the reason, when the
server cannot start, except under CI=true, where they fail (CI must never pass by skipping them).

Each case runs pytest in a subprocess on a real test with the real conftest, the server made
unable to start: no JDK on the PATH (HDFS), moto not importable (S3)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HDFS_TEST = "tests/test_webhdfs.py::test_create_exclusive[hdfs]"
S3_TEST = "tests/test_s3_read.py::test_conditional_create_is_confirmed_on_the_server"


def _pytest(selected: str, tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    hidden = tmp_path / "hidden"
    (hidden / "moto").mkdir(parents=True)
    (hidden / "moto" / "__init__.py").write_text('raise ImportError("moto hidden by the test")\n')
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "JAVA_HOME", "PYTHONPATH")}
    env["PATH"] = str(Path(sys.executable).parent)  # no java, javac or mvn
    env["PYTHONPATH"] = str(hidden)
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsf",
                           "-o", "addopts=", selected], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("selected, what", [(HDFS_TEST, "HDFS MiniDFSCluster"),
                                            (S3_TEST, "S3 server (moto)")])
@pytest.mark.parametrize("ci", [False, True])
def test_a_server_that_cannot_start_skips_or_fails_under_ci(tmp_path, selected, what, ci):
    done = _pytest(selected, tmp_path, ci)
    summary = done.stdout.strip().splitlines()[-1]
    if ci:
        # pytest.fail in a fixture counts as an error: either way the run fails
        assert done.returncode == 1 and re.search(r"\b1 (failed|error)\b", summary), \
            done.stdout[-3000:]
        assert f"{what} unavailable" in done.stdout and "CI=true" in done.stdout
    else:
        assert done.returncode == 0 and re.search(r"\b1 skipped\b", summary), done.stdout[-3000:]
        assert "passed" not in summary
        skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
        assert skips and f"{what} unavailable" in skips[0], skips


def _processes_writing_under(root: Path) -> list[int]:
    """PIDs with a file open under ``root`` (the servers' logs are their stdout)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd).startswith(str(root)) for fd in (proc / "fd").iterdir()):
                pids.append(int(proc.name))
        except OSError:  # gone meanwhile, or not ours to look at
            continue
    return pids


@pytest.mark.hdfs
@pytest.mark.s3
@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc")
def test_no_server_outlives_its_session(tmp_path):
    """A session that started the HDFS cluster and the S3 server leaves no process behind."""
    base = tmp_path / "session"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "-o", "addopts=", f"--basetemp={base}", HDFS_TEST, S3_TEST],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout[-3000:]
    assert (base / "minihdfs0" / "minihdfs.log").exists()  # both really ran there
    assert (base / "s3_server0" / "moto_server.log").exists()
    assert _processes_writing_under(base) == []
