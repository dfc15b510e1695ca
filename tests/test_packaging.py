"""The wheel a user builds: Apache-2.0 as an SPDX expression (PEP 639) with the LICENSE file,
`py.typed` (PEP 561), and no warning from the build backend.

Built with pip, as a user would (`pip wheel --no-deps`, build isolation: pip fetches the
`[build-system]` requirements like `make venv` does), from a copy of the sources in a temp dir so
the build never writes into the repository."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.cfg", "README.md", "LICENSE", "spark_hive_acid", "pyspark_hiveacid")


def test_wheel_ships_license_and_py_typed_without_build_warnings(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif path.exists():
            shutil.copy2(path, src / name)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path / "dist"),
                           str(src)], capture_output=True, text=True, timeout=600, env=env)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    warnings = re.findall(r"\w+Warning\b.*", output)  # e.g. "BuildBackendWarning: ... is deprecated"
    assert not warnings, warnings

    (wheel,) = (tmp_path / "dist").glob("spark_hive_acid-*.whl")
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        assert "spark_hive_acid/py.typed" in names
        (license_file,) = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/licenses/LICENSE", n)]
        assert whl.read(license_file) == (ROOT / "LICENSE").read_bytes()
        (metadata,) = [n for n in names if re.fullmatch(r"[^/]+\.dist-info/METADATA", n)]
        headers = whl.read(metadata).decode().split("\n\n", 1)[0].splitlines()
    assert "License-Expression: Apache-2.0" in headers and "License-File: LICENSE" in headers
    assert not [h for h in headers if h.startswith(("License:", "Classifier: License"))]


def test_license_is_the_apache_2_0_text():
    text = (ROOT / "LICENSE").read_text()
    header = r"\s*Apache License\s+Version 2\.0, January 2004\s+http://www\.apache\.org/licenses/"
    assert re.match(header, text)
    assert "END OF TERMS AND CONDITIONS" in text and text.count("\n") > 180
