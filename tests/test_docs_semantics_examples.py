"""The examples of docs/writing.md's (and docs/sql.md's) sections on creating empty tables, static partition overwrite,
truncate / drop partitions / restore, schema changes and several operations in one transaction run as-is, in order, in one session; an
expression whose line ends with a comment holding a Python value (``# [9]``) must give it."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("Creating an empty table", "Static partition overwrite",
            "Truncate, drop partitions, restore", "Schema changes",
            "Several operations in one transaction")


def _blocks(text: str) -> list[str]:
    out = []
    for title in SECTIONS:
        body = re.split(r"\n##+ ", text.split(f"\n### {title}\n", 1)[1], maxsplit=1)[0]
        out += re.findall(r"```python\n(.*?)```", body, flags=re.S)
    return out


def _run(block: str, env: dict) -> int:
    """Run ``block``; returns how many results were checked against their comments."""
    lines = block.splitlines()
    checked = 0
    for stmt in ast.parse(block).body:
        code = compile(ast.Module([stmt], []), "<docs>", "exec")
        last = lines[stmt.end_lineno - 1]
        comment = last[last.find("  #") + 3:].split(";")[0].strip() if "  #" in last else ""
        try:
            want = ast.literal_eval(comment) if comment else None
        except (ValueError, SyntaxError):
            want = None
        if isinstance(stmt, ast.Expr) and want is not None:
            got = eval(compile(ast.Expression(stmt.value), "<docs>", "eval"), env)
            assert got == want, f"{ast.unparse(stmt)} gave {got!r}, the docs say {want!r}"
            checked += 1
        else:
            exec(code, env)
    return checked


@pytest.mark.spark
def test_the_writing_docs_examples_run_as_is(spark, tmp_path):
    text = (ROOT / "docs" / "writing.md").read_text(encoding="utf-8")
    blocks = _blocks(text)
    assert len(blocks) == 6
    env = {"spark": spark}
    checked = sum(_run(b.replace("/tmp/hiveacid-docs", str(tmp_path)), env) for b in blocks)
    assert checked >= 6


@pytest.mark.spark
def test_the_sql_docs_example_of_an_empty_table_runs_as_is(spark, tmp_path):
    text = (ROOT / "docs" / "sql.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                 if "orders_new" in b)
    env = {"spark": spark}
    _run(block.replace("/tmp/hiveacid-docs", str(tmp_path)), env)
    rows = env["sha"].sql(spark, "SELECT * FROM orders_new").collect()
    assert [tuple(r) for r in rows] == [(1, "kiwi", "2024-01-01")]
