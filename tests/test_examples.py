"""The streaming example runs as-is (docs/streaming.md and the README point to it): a subprocess
with nothing but the venv, as a user would run it; its output shows every input row once after
a restarted ingest stream, one write id per micro-batch, and the change feed of an UPDATE and a
DELETE."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.spark
def test_streaming_example(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "streaming.py"),
                          str(tmp_path / "work")], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout
    table = text.split("=== the table after two runs of the ingest stream ===")[1]
    table = table.split("writeId")[0]
    ids = [int(m) for m in re.findall(r"^\|\s*(\d+)\|item", table, flags=re.M)]
    assert sorted(ids) == [n * 10 + i for n in range(4) for i in range(3)]  # each row once
    assert re.search(r"\|\s*4\|\s*append\|\[day=2024-01-02\]\|\s*3\|", text)
    feed = text.split("=== change feed of write ids 5 to 6 (a batch read) ===")[1]
    assert re.search(r"\|1\s*\|item1\|200\|2024-01-01\|update_postimage\s*\|5", feed)
    assert re.search(r"\|1\s*\|item1\|2\s*\|2024-01-01\|update_preimage\s*\|5", feed)
    assert re.search(r"\|2\s*\|item2\|3\s*\|2024-01-01\|delete\s*\|6", feed)
    stream = text.split("=== change feed as a stream ===")[1]
    assert stream.count("micro-batch") == 3
