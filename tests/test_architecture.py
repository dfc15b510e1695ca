"""The package keeps its shape: layers the folders show, no import cycles, pyspark only in
``spark/``, small modules, old import paths that still work, docstrings that cite files that exist.
The import graph is read from the source (``tests/architecture.py``); imports inside functions
count."""
from __future__ import annotations

import importlib
import re

import pytest

import architecture as arch

MODULE_LINE_LIMIT = 520  # "about 500 lines"


@pytest.fixture(scope="module")
def modules():
    return arch.scan()


def test_no_import_cycles(modules):
    assert arch.cycles(modules) == []


def test_no_two_modules_import_each_other(modules):
    """Not even for type hints only: the shared piece goes where both can import it (issue 21)."""
    assert arch.mutual_imports(modules) == []


def test_the_checker_sees_modules_importing_each_other_for_types_only(tmp_path):
    pkg = tmp_path / arch.PACKAGE
    (pkg / "io").mkdir(parents=True)
    for p in (pkg, pkg / "io"):
        (p / "__init__.py").write_text("")
    (pkg / "io" / "a.py").write_text("from .b import B\n")
    (pkg / "io" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\n")
    (pkg / "io" / "c.py").write_text("def f():\n    from . import a\n")
    mods = arch.scan(tmp_path)
    assert arch.cycles(mods) == []  # no cycle at run time
    assert arch.mutual_imports(mods) == [(f"{arch.PACKAGE}.io.a", f"{arch.PACKAGE}.io.b")]


def test_no_layer_imports_a_higher_one(modules):
    assert arch.upward_imports(modules) == []


def test_read_write_and_metastore_keep_apart(modules):
    """Issue 21's contracts: read/ never opens the metastore, write/ never reaches into read/."""
    assert arch.forbidden_imports(modules) == []


def test_only_the_catalog_tells_table_kinds_apart():
    assert arch.kind_checks_outside_catalog() == []


def test_only_the_spark_package_imports_pyspark(modules):
    assert arch.pyspark_outside_spark(modules) == []


def test_every_package_has_a_layer(modules):
    unplaced = sorted({m.split(".")[1] for m in modules if m.count(".") >= 1}
                      - set(arch.LAYERS) - {n.split(".")[1] for n in arch.COMPAT_MODULES})
    assert unplaced == []


def test_modules_stay_small(modules):
    assert arch.oversized(modules, MODULE_LINE_LIMIT) == []


def test_the_checker_sees_cycles_and_upward_imports_inside_functions(tmp_path):
    """The checks above can fail: a cycle closed by a function-level import, an upward import and
    a pyspark import outside spark/ are all reported."""
    pkg = tmp_path / arch.PACKAGE
    (pkg / "acid").mkdir(parents=True)
    (pkg / "read").mkdir()
    for p in (pkg, pkg / "acid", pkg / "read"):
        (p / "__init__.py").write_text("")
    (pkg / "acid" / "a.py").write_text("def f():\n    from ..read import b\n    import pyspark\n")
    (pkg / "read" / "b.py").write_text("from ..acid import a\n")
    mods = arch.scan(tmp_path)
    assert arch.cycles(mods) == [[f"{arch.PACKAGE}.acid.a", f"{arch.PACKAGE}.read.b"]]
    assert [u.split(" imports ")[1].split(" ")[0] for u in arch.upward_imports(mods)] == \
        [f"{arch.PACKAGE}.read.b"]
    assert arch.pyspark_outside_spark(mods) == [f"{arch.PACKAGE}.acid.a:3 imports pyspark"]


def test_the_checker_sees_forbidden_imports_and_kind_checks(tmp_path):
    pkg = tmp_path / arch.PACKAGE
    for d in ("read", "metastore", "spark"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "metastore" / "m.py").write_text("X = 1\n")
    (pkg / "read" / "r.py").write_text("def f():\n    from ..metastore import m\n")
    (pkg / "spark" / "s.py").write_text("def g(t):\n    return isinstance(t, PathTable)\n")
    mods = arch.scan(tmp_path)
    assert arch.forbidden_imports(mods) == [
        f"{arch.PACKAGE}.read.r:2 imports {arch.PACKAGE}.metastore.m (read must not import "
        "metastore)"]
    assert arch.kind_checks_outside_catalog(tmp_path) == [
        f"{arch.PACKAGE}/spark/s.py:2: isinstance(t, PathTable)"]


@pytest.mark.parametrize("old, new, name", [
    ("spark_hive_acid.table", "spark_hive_acid.spark.table", "HiveAcidTable"),
    ("spark_hive_acid.table", "spark_hive_acid.spark.table", "ensure_registered"),
    ("spark_hive_acid.datasource", "spark_hive_acid.spark.datasource", "HiveAcidDataSource"),
    ("spark_hive_acid.metastore", "spark_hive_acid.txn.hms", "write_transaction"),
    ("spark_hive_acid.metastore", "spark_hive_acid.txn.hms", "TransactionHandle"),
    ("spark_hive_acid.metastore.transaction", "spark_hive_acid.txn.hms", "write_transaction"),
    ("spark_hive_acid.metastore.errors", "spark_hive_acid.exceptions", "WriteConflictError"),
])
def test_old_import_paths_still_work(old, new, name):
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), name)


def test_metastore_transaction_keeps_its_public_name():
    from spark_hive_acid.metastore import Transaction
    from spark_hive_acid.txn.hms import HmsTransaction

    assert Transaction is HmsTransaction


def test_every_error_class_derives_from_the_root_and_lives_in_one_module():
    import spark_hive_acid.exceptions as exc
    from spark_hive_acid.exceptions import HiveAcidError

    defined = []
    for path in (arch.ROOT / arch.PACKAGE).rglob("*.py"):
        for m in re.finditer(r"^class (\w+)\((.*)\):", path.read_text(), re.M):
            if m.group(1).endswith("Error") or "Error" in m.group(2) or "Exception" in m.group(2):
                defined.append((path.relative_to(arch.ROOT).as_posix(), m.group(1)))
    assert {p for p, _ in defined} == {f"{arch.PACKAGE}/exceptions.py"}
    assert all(issubclass(getattr(exc, n), HiveAcidError) for _, n in defined)


def test_docstrings_cite_files_that_exist():
    missing = []
    for path in (arch.ROOT / arch.PACKAGE).rglob("*.py"):
        for ref in re.findall(r"\b((?:docs|notes)/[\w./-]+\.md)", path.read_text()):
            if not (arch.ROOT / ref).is_file():
                missing.append(f"{path.relative_to(arch.ROOT)} cites {ref}")
        if "hive-acid-format.md" in path.read_text():
            missing.append(f"{path.relative_to(arch.ROOT)} cites hive-acid-format.md (not in the repo)")
    assert missing == []
