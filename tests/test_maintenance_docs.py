"""docs/maintenance.md's quick start runs as it is: every ``python`` and ``bash`` block of that
section, in order, in fresh processes (nothing but the venv, as a user runs them), and prints what
the page shows."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "maintenance.md"


def quick_start_blocks() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(python|bash)\n(.*?)```", section, flags=re.S)


@pytest.mark.spark
def test_the_quick_start_runs_as_is(tmp_path):
    blocks = quick_start_blocks()
    assert [lang for lang, _ in blocks] == ["python", "bash", "python", "bash"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    outs = []
    for lang, code in blocks:
        cmd = [sys.executable, "-c", code] if lang == "python" else ["bash", "-c", code]
        done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{lang} block failed:\n{code}\n{done.stderr[-3000:]}"
        outs.append(done.stdout)
    first, shell, spark, fix = outs
    assert first.splitlines() == [
        "/tmp/hiveacid-warehouse-demo/orders healthy {'major': 2, 'minor': 0}",
        "/tmp/hiveacid-warehouse-demo/customers healthy {'major': 0, 'minor': 0}"]
    assert "exit status: 1" in shell
    assert "  major (initiator) of 2: day=2024-01-01: 12 delta directories > 10 and no base;" in shell
    assert "/tmp/hiveacid-warehouse-demo/orders: 2 partition(s) compacted; vacuum removed 24" in shell
    assert shell.rstrip().splitlines()[-2:] == [
        'hiveacid_table_active_deltas{table="/tmp/hiveacid-warehouse-demo/customers"} 3',
        'hiveacid_table_active_deltas{table="/tmp/hiveacid-warehouse-demo/orders"} 0']
    assert spark.splitlines()[-2:] == [
        "[2, 3]", "trinodb/trino#31302 (open; Trino 483 drops the file, deleted rows come back)"]
    assert "trino: wrong rows: a delete delta the snapshot reads holds bucket_N_A" in fix
    assert fix.count("exit status: 1") == 1 and fix.rstrip().endswith(
        "exit status: 0\n_hiveacid_table.json\n_hiveacid_txnlog\nbase_0000002")
    assert "--fix: 1 partition(s) compacted in 1 table(s), 0 failed" in fix
