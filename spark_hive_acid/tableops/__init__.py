"""Operations on a whole table, without Spark: truncate and drop partitions (ACID: a new empty
base), create an empty path-mode table. ``HiveAcidTable`` calls them; so can scripts."""
from __future__ import annotations

from .create import create_path_table
from .replace import drop_partitions, truncate

__all__ = ["create_path_table", "drop_partitions", "truncate"]
