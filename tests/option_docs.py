"""The option tables of docs/*.md, generated from the registry (``spark_hive_acid.options``).

A table is written between ``<!-- options: name1 name2 ... -->`` and ``<!-- /options -->``; its
rows are the registry's (name, default, meaning) of those options, in that order. ``make docs``
rewrites every such table (``python tests/option_docs.py``); ``tests/test_option_names.py`` fails
when one is out of date, so the docs cannot drift from the options the code takes.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spark_hive_acid import options as opt  # noqa: E402

BLOCK = re.compile(r"(<!-- options: ([^>]*?) -->\n)(.*?)(<!-- /options -->)", re.S)


def render(text: str) -> str:
    """``text`` with every option table regenerated."""
    def table(m: re.Match) -> str:
        rows = opt.markdown_rows(m.group(2).split())
        return m.group(1) + "\n".join(rows) + "\n" + m.group(4)
    return BLOCK.sub(table, text)


def documented(text: str) -> list[str]:
    """The options the tables of ``text`` list."""
    return [n for m in BLOCK.finditer(text) for n in m.group(2).split()]


def doc_files() -> list[Path]:
    return sorted((ROOT / "docs").glob("*.md"))


def main() -> None:
    for path in doc_files():
        text = path.read_text(encoding="utf-8")
        new = render(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote the option tables of {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
