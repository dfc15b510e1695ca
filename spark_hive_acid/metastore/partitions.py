"""Hive partition names and partition filters (server-side string, client-side fallback).

A partition name is ``k1=v1/k2=v2`` with Hive's escaping (:mod:`spark_hive_acid.acid.partitions`).

A :class:`PartitionFilter` is a conjunction of ``(key, op, value)`` terms. It renders to the
metastore's filter language for ``get_partitions_by_filter`` and can also be evaluated on the
client, which is the fallback when the server refuses the filter.
"""
from __future__ import annotations

from dataclasses import dataclass
import operator
from decimal import Decimal, InvalidOperation
from typing import Any, Mapping, Optional, Sequence

from ..acid.partitions import DEFAULT_PARTITION, partition_name
from ..exceptions import InvalidOptionError

_INT_TYPES = {"tinyint", "smallint", "int", "integer", "bigint"}
_FLOAT_TYPES = {"float", "double", "double precision"}
_CMP = {"=": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
        ">": operator.gt, ">=": operator.ge}
_OPS = set(_CMP) | {"in"}


def make_partition_name(keys: Sequence[str], values: Sequence[Optional[str]]) -> str:
    """``k1=v1/k2=v2`` as the metastore names partitions: keys in lower case, Hive's escaping,
    None or '' the default partition."""
    return partition_name([k.lower() for k in keys], values)


@dataclass(frozen=True)
class FilterTerm:
    """``key op value``; op is one of = != < <= > >= in (value is a sequence for ``in``)."""

    key: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in _OPS:
            raise InvalidOptionError(f"Unsupported partition filter operator '{self.op}' "
                                     f"(supported: {', '.join(sorted(_OPS))})")


@dataclass(frozen=True)
class PartitionFilter:
    """A conjunction of :class:`FilterTerm` on partition keys."""

    terms: tuple[FilterTerm, ...]

    @classmethod
    def of(cls, *terms: tuple[str, str, Any] | FilterTerm) -> "PartitionFilter":
        return cls(tuple(t if isinstance(t, FilterTerm) else FilterTerm(*t) for t in terms))

    @classmethod
    def equals(cls, spec: Mapping[str, Any]) -> "PartitionFilter":
        return cls(tuple(FilterTerm(k, "=", v) for k, v in spec.items()))

    def to_hive(self, key_types: Mapping[str, str]) -> Optional[str]:
        """The filter string for ``get_partitions_by_filter``, or None if it can't be expressed."""
        rendered = []
        for t in self.terms:
            typ = _base_type(key_types.get(t.key.lower(), "string"))
            values = list(t.value) if t.op == "in" else [t.value]
            lits = [_literal(v, typ) for v in values]
            if any(lit is None for lit in lits) or not lits:
                return None
            if t.op == "in":
                rendered.append("(" + " or ".join(f"{t.key.lower()} = {lit}" for lit in lits) + ")")
            else:
                op = "<>" if t.op == "!=" else t.op
                rendered.append(f"{t.key.lower()} {op} {lits[0]}")
        return " and ".join(rendered) if rendered else None

    def matches(self, spec: Mapping[str, Optional[str]], key_types: Mapping[str, str]) -> bool:
        """Evaluate on one partition (SQL semantics: a null partition value matches nothing)."""
        lowered = {k.lower(): v for k, v in spec.items()}
        for t in self.terms:
            typ = _base_type(key_types.get(t.key.lower(), "string"))
            raw = lowered.get(t.key.lower())
            if raw is None or raw == DEFAULT_PARTITION:
                return False
            left = _coerce(raw, typ)
            values = list(t.value) if t.op == "in" else [t.value]
            rights = [_coerce(str(v), typ) for v in values]
            if not _compare(left, t.op, rights):
                return False
        return True


def _base_type(hive_type: str) -> str:
    return hive_type.strip().lower().split("(", 1)[0]


def _literal(value: Any, typ: str) -> Optional[str]:
    if value is None:
        return None
    if typ in _INT_TYPES:
        try:
            return str(int(value))
        except (TypeError, ValueError):
            return None
    text = str(value)
    if "'" not in text:
        return f"'{text}'"
    if '"' not in text:
        return f'"{text}"'
    return None  # the filter grammar has no escape for a value holding both quote kinds


def _coerce(text: str, typ: str) -> Any:
    try:
        if typ in _INT_TYPES:
            return int(text)
        if typ in _FLOAT_TYPES:
            return float(text)
        if typ == "decimal":
            return Decimal(text)
    except (ValueError, InvalidOperation):
        pass
    return text


def _compare(left: Any, op: str, rights: list[Any]) -> bool:
    try:
        if op == "in":
            return left in rights
        return bool(_CMP[op](left, rights[0]))
    except TypeError:  # mixed types (e.g. a non-numeric value in an int column): compare as text
        return _compare(str(left), op, [str(r) for r in rights])
