"""A condition on partition columns: the region a static partition overwrite (``replaceWhere``,
``partitionSpec``), ``truncate`` or ``dropPartitions`` replaces.

A small SQL subset, evaluated without Spark (``write_table`` and the conflict rules need it too):
comparisons (``= == != <> < <= > >=``) of a partition column with a literal, ``IN (...)``,
``BETWEEN ... AND ...``, ``IS [NOT] NULL``, ``AND``, ``OR``, ``NOT``, parentheses, ``TRUE`` /
``FALSE``. Literals are numbers, quoted strings (``'x'`` or ``"x"``, a quote doubled or
backslash-escaped inside), ``DATE '...'`` / ``TIMESTAMP '...'``, ``TRUE``/``FALSE`` and ``NULL``.
Columns may be back-quoted. Every column must be a partition column; values are compared as the
column's Hive type (``p = '1'`` and ``p = 1`` mean the same for an int ``p``). SQL's three-valued
logic: a comparison with a NULL partition value (Hive's default partition) is unknown, and a
partition matches only where the condition is true.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

from ..exceptions import InvalidOptionError
from .partitions import DEFAULT_PARTITION, parse_partition_name, value_string

Node = tuple  # ("and"|"or", a, b) | ("not", a) | ("cmp", op, col, lit) | ("in", col, lits) |
#               ("null", col) | ("const", bool)
_TOKEN = re.compile(r"""\s*(?:
    (?P<num>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+)
  | (?P<str>'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")
  | (?P<bq>`(?:[^`]|``)+`)
  | (?P<op><=>|<=|>=|<>|!=|==|=|<|>|\(|\)|,|-|\+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
)""", re.VERBOSE)
_FLIP = {"=": "=", "!=": "!=", "<": ">", ">": "<", "<=": ">=", ">=": "<="}
_NUMERIC = ("tinyint", "smallint", "int", "integer", "bigint")


def _tokens(text: str, what: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise InvalidOptionError(f"{what} '{text}': cannot read it at '{text[pos:].strip()}'")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _unquote(tok: str) -> str:
    q = tok[0]
    body = tok[1:-1].replace(q + q, q)
    return re.sub(r"\\(.)", r"\1", body)


class _Parser:
    def __init__(self, text: str, columns: Mapping[str, str], what: str, hint: str):
        self.text, self.what, self.hint = text, what, hint
        self.toks = _tokens(text, what)
        self.i = 0
        self.columns = columns  # lower-case name -> hive type

    def fail(self, why: str) -> InvalidOptionError:
        return InvalidOptionError(f"{self.what} '{self.text}': {why}")

    def peek(self, *words: str) -> bool:
        if self.i >= len(self.toks):
            return False
        kind, tok = self.toks[self.i]
        return tok.upper() in words if kind in ("word", "op") else False

    def take(self, *words: str) -> bool:
        if self.peek(*words):
            self.i += 1
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.take(word):
            got = self.toks[self.i][1] if self.i < len(self.toks) else "the end"
            raise self.fail(f"expected {word} at {got}")

    def parse(self) -> Node:
        if not self.toks:
            raise self.fail("the condition is empty")
        node = self.disjunction()
        if self.i != len(self.toks):
            raise self.fail(f"unexpected '{self.toks[self.i][1]}'")
        return node

    def disjunction(self) -> Node:
        node = self.conjunction()
        while self.take("OR"):
            node = ("or", node, self.conjunction())
        return node

    def conjunction(self) -> Node:
        node = self.negation()
        while self.take("AND"):
            node = ("and", node, self.negation())
        return node

    def negation(self) -> Node:
        if self.take("NOT"):
            return ("not", self.negation())
        return self.predicate()

    def predicate(self) -> Node:
        if self.take("("):
            inner = self.disjunction()
            self.expect(")")
            return inner
        if self.peek("TRUE", "FALSE") and not self._followed_by_operator():
            return ("const", self.toks[self.take_index()][1].upper() == "TRUE")
        left = self.operand()
        negated = self.take("NOT")
        if self.take("IN"):
            self.expect("(")
            items = [self.operand()]
            while self.take(","):
                items.append(self.operand())
            self.expect(")")
            col = self.column_of(left)
            node: Node = ("in", col, tuple(self.literal_for(col, x) for x in items))
            return ("not", node) if negated else node
        if self.take("BETWEEN"):
            lo = self.operand()
            self.expect("AND")
            hi = self.operand()
            col = self.column_of(left)
            node = ("and", ("cmp", ">=", col, self.literal_for(col, lo)),
                    ("cmp", "<=", col, self.literal_for(col, hi)))
            return ("not", node) if negated else node
        if negated:
            raise self.fail("NOT must be followed by IN or BETWEEN here")
        if self.take("IS"):
            neg = self.take("NOT")
            self.expect("NULL")
            node = ("null", self.column_of(left))
            return ("not", node) if neg else node
        if self.i >= len(self.toks) or self.toks[self.i][1] not in ("=", "==", "!=", "<>", "<",
                                                                    ">", "<=", ">=", "<=>"):
            raise self.fail("expected a comparison (=, !=, <, <=, >, >=), IN, BETWEEN or IS NULL")
        op = {"==": "=", "<>": "!=", "<=>": "="}[self.toks[self.i][1]] \
            if self.toks[self.i][1] in ("==", "<>", "<=>") else self.toks[self.i][1]
        self.i += 1
        right = self.operand()
        if left[0] == "col" and right[0] == "col":
            raise self.fail("compare a partition column with a value, not with another column")
        if left[0] != "col":
            left, right, op = right, left, _FLIP[op]
        col = self.column_of(left)
        return ("cmp", op, col, self.literal_for(col, right))

    def _followed_by_operator(self) -> bool:
        nxt = self.toks[self.i + 1] if self.i + 1 < len(self.toks) else None
        return nxt is not None and nxt[0] == "op" and nxt[1] not in (")", ",")

    def take_index(self) -> int:
        self.i += 1
        return self.i - 1

    def operand(self) -> tuple[str, Any]:
        if self.i >= len(self.toks):
            raise self.fail("the condition ends too early")
        kind, tok = self.toks[self.take_index()]
        if kind == "op" and tok in ("-", "+") and self.i < len(self.toks) \
                and self.toks[self.i][0] == "num":
            return ("lit", ("-" if tok == "-" else "") + self.toks[self.take_index()][1])
        if kind == "num":
            return ("lit", tok)
        if kind == "str":
            return ("lit", _unquote(tok))
        if kind == "bq":
            return ("col", tok[1:-1].replace("``", "`"))
        if kind == "word":
            up = tok.upper()
            if up == "NULL":
                return ("lit", None)
            if up in ("TRUE", "FALSE"):
                return ("lit", up.lower())
            if up in ("DATE", "TIMESTAMP") and self.i < len(self.toks) \
                    and self.toks[self.i][0] == "str":
                return ("lit", _unquote(self.toks[self.take_index()][1]))
            return ("col", tok)
        raise self.fail(f"unexpected '{tok}'")

    def column_of(self, operand: tuple[str, Any]) -> str:
        if operand[0] != "col":
            raise self.fail(f"expected a partition column, not the value {operand[1]!r}")
        name = str(operand[1]).lower()
        if name not in self.columns:
            names = ", ".join(self.columns) or "none: the table is not partitioned"
            raise self.fail(f"'{operand[1]}' is not a partition column (the partition columns: "
                            f"{names}); {self.hint}")
        return name

    def literal_for(self, col: str, operand: tuple[str, Any]) -> Any:
        if operand[0] != "lit":
            raise self.fail(f"compare {col} with a value, not with the column {operand[1]}")
        if operand[1] is None:
            return None
        try:
            return typed(str(operand[1]), self.columns[col])
        except (ValueError, decimal.InvalidOperation) as e:
            raise self.fail(f"{operand[1]!r} is not a value of {col} "
                            f"({self.columns[col]})") from e


def typed(text: Optional[str], hive_type: str) -> Any:
    """A partition value (its Hive text) as a comparable Python value of the column's type."""
    if text is None or text == DEFAULT_PARTITION:
        return None
    t = hive_type.strip().lower()
    if t in _NUMERIC:
        return int(text)
    if t in ("float", "double"):
        return float(text)
    if t.startswith("decimal"):
        return decimal.Decimal(text)
    if t == "boolean":
        if text.lower() not in ("true", "false"):
            raise ValueError(text)
        return text.lower() == "true"
    if t == "date":
        return _dt.date.fromisoformat(text.strip())
    if t == "timestamp":
        return _dt.datetime.fromisoformat(text.strip())
    if t.startswith("char"):
        return text.rstrip(" ")
    return text


def _evaluate(node: Node, values: Mapping[str, Any]) -> Optional[bool]:
    kind = node[0]
    if kind == "const":
        return bool(node[1])
    if kind in ("and", "or"):
        a, b = _evaluate(node[1], values), _evaluate(node[2], values)
        if kind == "and":
            return False if (a is False or b is False) else (None if None in (a, b) else True)
        return True if (a is True or b is True) else (None if None in (a, b) else False)
    if kind == "not":
        v = _evaluate(node[1], values)
        return None if v is None else not v
    if kind == "null":
        return values.get(node[1]) is None
    value = values.get(node[1] if kind == "in" else node[2])
    if kind == "in":
        if value is None:
            return None
        if value in [x for x in node[2] if x is not None]:
            return True
        return None if None in node[2] else False
    op, lit = node[1], node[3]
    if value is None or lit is None:
        return None
    return {"=": value == lit, "!=": value != lit, "<": value < lit, ">": value > lit,
            "<=": value <= lit, ">=": value >= lit}[op]


@dataclass(frozen=True)
class PartitionCondition:
    """A parsed condition on the partition columns ``columns`` ((name, Hive type), in order)."""

    text: str
    columns: tuple[tuple[str, str], ...]
    _node: Node = field(compare=False, repr=False, default=("const", True))

    @classmethod
    def parse(cls, text: str, columns: Sequence[tuple[str, str]], what: str = "The condition",
              hint: str = "") -> "PartitionCondition":
        """Parse ``text``; InvalidOptionError (starting with ``what``) names what is wrong."""
        cols = tuple((str(n), str(t)) for n, t in columns)
        node = _Parser(text, {n.lower(): t for n, t in cols}, what, hint).parse()
        return cls(text, cols, node)

    @classmethod
    def of_spec(cls, spec: Mapping[str, Any], columns: Sequence[tuple[str, str]],
                what: str = "The partition spec") -> "PartitionCondition":
        """The partitions whose columns have the values of ``spec`` (all or some of them)."""
        if not spec:
            raise InvalidOptionError(f"{what} is empty: name at least one partition column")
        parts = []
        for k, v in spec.items():
            s = value_string(v)
            parts.append(f"`{str(k).replace('`', '``')}` IS NULL" if s is None else
                         f"`{str(k).replace('`', '``')}` = '{s.replace(chr(39), chr(39) * 2)}'")
        return cls.parse(" AND ".join(parts), columns, what)

    @property
    def names(self) -> list[str]:
        return [n for n, _ in self.columns]

    def matches(self, values: Mapping[str, Any]) -> bool:
        """Whether the partition with ``values`` ({column: Python value or its Hive text}, None
        for the default partition) is in the region."""
        low = {str(k).lower(): v for k, v in values.items()}
        conv = {}
        for n, t in self.columns:
            try:
                conv[n.lower()] = typed(value_string(low.get(n.lower())), t)
            except (ValueError, decimal.InvalidOperation):
                conv[n.lower()] = None  # a directory value the column's type cannot hold
        return _evaluate(self._node, conv) is True

    def matches_name(self, partition: str) -> bool:
        """Whether the partition directory ``k=v/...`` is in the region ('' never is)."""
        if not partition:
            return False
        return self.matches(parse_partition_name(partition))

    def to_json(self) -> str:
        return json.dumps({"where": self.text, "columns": [list(c) for c in self.columns]},
                          sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "PartitionCondition":
        d = json.loads(text)
        return cls.parse(d["where"], [tuple(c) for c in d["columns"]])
