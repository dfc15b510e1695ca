"""Engine compatibility: which layouts other engines are known to misread or refuse.

Each :class:`Rule` names an engine, the layout (a predicate on a partition's listing evidence,
``maintenance.facts.Evidence``), what the engine does with it, the public reference, how the claim
was confirmed, and what repairs it. ``measured`` claims were reproduced in this repository with the
engine's own reader (Hive 2.3.10 through ``tests/hive_ref``, Hive 3.1.3 and 4.1.0 through
``tests/hive_jvm``: ``tests/test_maintenance_engines.py``); ``source`` claims come from the
engine's code; ``tracker`` claims from its issue tracker only; ``inferred`` ones from reading its
code, not reproduced. docs/maintenance.md lists them all.

A repair is a major compaction (``base_H`` holds every live row with deletes applied, one
``bucket_N`` file per bucket, ``_orc_acid_version``, no ``_vT``, no nested directories); rules
marked ``clean`` also need the directories it made obsolete removed (``vacuum``), because the
engine looks at every directory name, read or not.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from ..exceptions import InvalidOptionError
from .facts import Evidence

ENGINES = ("trino", "impala", "starrocks", "doris", "hive2", "hive3.1", "hive4.1")
WRONG_ROWS, REFUSES = "wrong rows", "refuses the table"
MAJOR, MAJOR_CLEAN = "major compaction", "major compaction, then vacuum"


@dataclass(frozen=True)
class Rule:
    id: str
    engine: str
    layout: str
    effect: str
    reference: str
    confirmed: str  # measured | source | tracker | inferred (see the module docstring)
    fix: Optional[str]  # None: no layout change helps
    examples: Callable[[Evidence], Sequence[str]]
    versions: str = ""

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    def to_json(self, examples: Sequence[str]) -> dict:
        return {"rule": self.id, "engine": self.engine, "effect": self.effect,
                "layout": self.layout, "examples": list(examples), "reference": self.reference,
                "confirmed": self.confirmed, "fix": self.fix, "versions": self.versions or None}


def _nested_any(ev: Evidence) -> list[str]:
    return ev.nested_in_insert + ev.nested_in_delete + ev.nested_unread


_ATTEMPT = "a delete delta the snapshot reads holds bucket_N_A files (a task attempt id)"
_NESTED_INS = "a directory nested in a base or delta the snapshot reads"
_NESTED_DEL = "a directory nested in a delete delta the snapshot reads"
_V = "a base_N_vT / delta_x_y_vT directory (Hive 4's visibility suffix), read or not"

RULES: tuple[Rule, ...] = (
    Rule("attempt-id-delete-files", "trino", _ATTEMPT, WRONG_ROWS,
         "trinodb/trino#31302 (open; Trino 483 drops the file, deleted rows come back)", "tracker",
         MAJOR, lambda e: e.attempt_delete_files),
    Rule("attempt-id-delete-files", "hive2", _ATTEMPT, WRONG_ROWS,
         "Hive 2.3.10 OrcInputFormat opens delete files as bucket_N only (attempt ids in "
         "delete deltas came with Hive 4's direct-insert DELETE/UPDATE, HIVE-23410)", "measured", MAJOR,
         lambda e: e.attempt_delete_files),
    Rule("attempt-id-delete-files", "hive3.1", _ATTEMPT, WRONG_ROWS,
         "Apache Hive 3.1.3 OrcInputFormat, row-by-row and vectorized (HIVE-23410 is Hive 4)",
         "measured", MAJOR, lambda e: e.attempt_delete_files),
    Rule("nested-acid-directory", "trino", "a directory nested in any base/delta/delete delta "
         "(minor compactions run twice leave delta_x_y/delta_x_y)", REFUSES,
         "trinodb/trino#8920, #16315 ('Hive table is corrupt. Found sub-directory'); fixed by "
         "trinodb/trino#20840 (merged 2024-02-26), which ignores them as Hive 3 does", "source",
         MAJOR_CLEAN, _nested_any, versions="before trinodb/trino#20840"),
    Rule("nested-acid-directory", "hive2", _NESTED_INS, REFUSES,
         "Hive 2.3.10 split generation fails (NullPointerException)", "measured", MAJOR,
         lambda e: e.nested_in_insert),
    Rule("nested-acid-directory", "hive4.1", _NESTED_INS, WRONG_ROWS,
         "Hive 4.1.0 OrcInputFormat reads the nested copy too: duplicated rows, deleted rows back",
         "measured", MAJOR, lambda e: e.nested_in_insert),
    Rule("nested-acid-directory", "hive4.1", _NESTED_DEL, REFUSES,
         "Hive 4.1.0 split generation fails ('Duplicate key' merging DeltaFileMetaData)",
         "measured", MAJOR, lambda e: e.nested_in_delete),
    Rule("nested-acid-directory", "impala", _NESTED_INS, WRONG_ROWS,
         "apache/impala fe/.../util/AcidUtils.java filterFilesForAcidState keeps every file "
         "below a chosen delta directory (recursive listing): the nested copy is read too",
         "inferred", MAJOR, lambda e: e.nested_in_insert),
    Rule("visibility-suffix", "hive2", _V, REFUSES,
         "Hive 2.3.10 getAcidState: NumberFormatException on '..._vT' (suffix from HIVE-20823)",
         "measured", MAJOR_CLEAN, lambda e: e.visibility_dirs),
    Rule("visibility-suffix", "hive3.1", _V, REFUSES,
         "Apache Hive 3.1.3 getAcidState: NumberFormatException (HIVE-20823 is Hive 4)",
         "measured", MAJOR_CLEAN, lambda e: e.visibility_dirs),
    Rule("streaming-side-file", "impala", "a bucket_N_flush_length side file (Hive Streaming "
         "still writing, or a writer that died) in a delta that is not aborted", REFUSES,
         "apache/impala fe/.../util/AcidUtils.java: 'Found Hive Streaming side-file'", "source",
         MAJOR, lambda e: e.side_files),
    Rule("streaming-ingest-delta", "trino", "a delta of several write ids from Hive Streaming "
         "(a side file, or an open write id inside its range)", REFUSES,
         "trinodb/trino#4044 (open): tables written by Hive Streaming are not supported; the "
         "exact failure was not reproduced here", "tracker", MAJOR,
         lambda e: e.streaming_deltas),
    Rule("original-files", "doris", "original (pre-ACID) files read without a base", REFUSES,
         "apache/doris fe/.../datasource/hive/AcidUtil.java: 'For no acid table convert to acid, "
         "please COMPACT major'", "source", MAJOR,
         lambda e: ["original files"] if e.original_files else []),
    Rule("acid-v1-directory", "trino", "the base (else the first delta) read has no "
         "_orc_acid_version: written by Hive 2 (ACID v1)", REFUSES,
         "trinodb/trino#2937 (open), check added by trinodb/trino#2989: 'Hive transactional "
         "tables are supported with Hive 3.0 and only after a major compaction has been run'",
         "source", MAJOR,
         lambda e: e.missing_version[:1] if e.first_dir_missing_version else []),
    Rule("acid-v1-directory", "impala", "a directory read has no _orc_acid_version (Hive 2, "
         "ACID v1)", REFUSES,
         "Cloudera's Impala documentation: 'Impala does not support ACID v1'; the failure "
         "mode was not confirmed", "tracker", MAJOR, lambda e: e.missing_version),
)

#: the table-level rule (the kind of table, whatever its layout)
FULL_ACID_STARROCKS = Rule(
    "full-acid-table", "starrocks", "a full-ACID table (insert-only tables are read)", REFUSES,
    "StarRocks/starrocks#39264 (merged 2024-01-17): full-ACID Hive tables are refused; before "
    "it they returned wrong results (the PR's description; not reproduced)", "tracker", None,
    lambda e: [])


def parse_engines(engines: Optional[Sequence[str] | str]) -> tuple[str, ...]:
    """Engine names to check (default all); an unknown name is an error naming the known ones."""
    if engines is None:
        return ENGINES
    items = engines.split(",") if isinstance(engines, str) else list(engines)
    out = []
    for e in (str(x).strip().lower() for x in items):
        if not e:
            continue
        if e not in ENGINES:
            raise InvalidOptionError(f"Unknown engine '{e}' in engines: the known ones are "
                                     f"{', '.join(ENGINES)}")
        out.append(e)
    return tuple(dict.fromkeys(out))


def partition_findings(ev: Evidence, engines: Sequence[str] = ENGINES) -> list[dict]:
    """The rules the evidence of one partition breaks, for ``engines``."""
    out = []
    for rule in RULES:
        if rule.engine in engines:
            examples = rule.examples(ev)
            if examples:
                out.append(rule.to_json(examples))
    return out


def table_findings(full_acid: bool, engines: Sequence[str] = ENGINES) -> list[dict]:
    """Table-level rules (the kind of table, whatever its layout)."""
    if full_acid and "starrocks" in engines:
        return [FULL_ACID_STARROCKS.to_json([])]
    return []
