"""Every option the connector understands, in one registry, and the one way to read them.

Spark hands a data source its options as a case-insensitive map of strings; the table API, the
in-process API and the command-line tool pass plain dicts. Each option is declared once, in
:mod:`.options_table`, with its scopes (the entry points that take it), its kind (how a value is
parsed), its default and its documentation. :func:`value` reads one typed value, the default when
absent; an unparsable value is an :class:`~spark_hive_acid.exceptions.InvalidOptionError` naming
the option. Every entry point parses its options once into a frozen config
(``read.options.ReadOptions``, ``write.options.WriteOptions``, ``stream.source.SourceOptions``,
``metastore.api.MetastoreOptions``, ``io.remote.StorageOptions``).

Every entry point passes what it is given through :func:`check_known`: a name that is neither in
the registry nor one of the keys Spark adds itself (``SPARK_KEYS``) is an UnknownOptionError naming
the closest option, so an option of a new feature must be added to the registry to be accepted.
The option tables in docs/*.md are generated from the registry (:func:`markdown_rows`;
``make docs`` rewrites them, ``tests/test_option_names.py`` checks they are current).
"""
from __future__ import annotations

import difflib
import json
import math
import re
from typing import Any, Iterable, Mapping, Optional

from .exceptions import InvalidOptionError, UnknownOptionError

from .options_table import (  # noqa: F401  (the registry's vocabulary, used as opt.READ etc.)
    BOOL,
    CHOICE,
    COLUMNS,
    INT,
    METASTORE,
    OPTIONS,
    PROPERTIES,
    RAW,
    READ,
    SECONDS,
    STORAGE,
    STR,
    WRITE,
    Option,
)

BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
#: keys Spark itself puts into a data source's options (verified with PySpark 4.3): load(path) /
#: load([...]); provider / owner / location when CREATE TABLE ... USING hiveacid infers the
#: schema; checkpointLocation / queryName for a writeStream sink
SPARK_KEYS = frozenset({"path", "paths", "provider", "owner", "location", "checkpointlocation",
                        "queryname"})


def check_known(options: Optional[Mapping[str, object]], where: str,
                scopes: Iterable[str] = (READ, WRITE, METASTORE, STORAGE)) -> None:
    """Raise UnknownOptionError for an option name no entry point knows (case-insensitive),
    naming the closest known option: a typo must never be silently ignored. ``scopes``: the
    options the message lists (those ``where`` takes)."""
    wanted = frozenset(scopes)
    for key in options or {}:
        low = str(key).lower()
        if low in BY_KEY or low in SPARK_KEYS:
            continue
        close = difflib.get_close_matches(low, list(BY_KEY), n=1, cutoff=0.6)
        hint = f"; did you mean {BY_KEY[close[0]].name}?" if close else "."
        listed = sorted(o.name for o in OPTIONS if o.scopes & wanted and o.name != "paths")
        raise UnknownOptionError(
            f"{where}: unknown option '{key}'{hint} Options it takes: {', '.join(listed)}")


_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


# --- lookup ----------------------------------------------------------------------------------------
def get(options: Mapping[str, Any], name: str) -> Optional[str]:
    """The raw value of ``name`` in ``options``, ignoring the case of the key; None when absent."""
    if name in options:
        return options[name]
    lower = name.lower()
    if lower in options:
        return options[lower]
    for k, v in options.items():
        if str(k).lower() == lower:
            return v
    return None


def get_str(options: Mapping[str, Any], name: str) -> Optional[str]:
    """The stripped value; None when absent or blank."""
    v = get(options, name)
    return None if v is None or str(v).strip() == "" else str(v).strip()


def value(options: Mapping[str, Any], name: str) -> Any:
    """The value of option ``name`` parsed by its kind; its default when absent or blank."""
    o = BY_KEY[name.lower()]
    if o.kind == RAW:
        v = get(options, o.name)
        return o.default if v is None else str(v)
    raw = get_str(options, o.name)
    if raw is None:
        return o.default
    return _parse(o, raw)


def _parse(o: Option, raw: str) -> Any:
    if o.kind == STR:
        return raw
    if o.kind == BOOL:
        low = raw.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise InvalidOptionError(f"Option {o.name}='{raw}' must be true or false")
    if o.kind == INT:
        number = parse_int_text(raw, f"Option {o.name}")
        if o.minimum is not None and number < o.minimum:
            raise InvalidOptionError(f"Option {o.name}={number} must be >= {o.minimum}")
        if o.maximum is not None and number > o.maximum:
            raise InvalidOptionError(f"Option {o.name}={number} must be <= {o.maximum}")
        return number
    if o.kind == SECONDS:
        if not _NUMBER.fullmatch(raw):  # float() also takes '1_0', 'nan' and other digits
            raise InvalidOptionError(f"Option {o.name}='{raw}' must be a number of seconds")
        seconds = float(raw)
        if not math.isfinite(seconds) or seconds <= 0:
            raise InvalidOptionError(f"Option {o.name}='{raw}' must be a positive number of seconds")
        return seconds
    if o.kind == COLUMNS:
        return parse_columns(raw)
    if o.kind == PROPERTIES:
        return parse_properties(raw, o.name)
    if o.kind == CHOICE:
        low = raw.lower()
        if low not in o.choices:
            raise InvalidOptionError(
                f"Option {o.name}='{raw}' must be one of: {', '.join(o.choices)}")
        return low
    raise AssertionError(f"unknown option kind {o.kind}")


def get_bool(options: Mapping[str, Any], name: str, default: bool) -> bool:
    """Deprecated for registry options (use :func:`value`, whose default is the registry's)."""
    raw = get_str(options, name)
    return default if raw is None else bool(_parse(Option(name, frozenset(), "", BOOL), raw))


def get_int(options: Mapping[str, Any], name: str, default: Optional[int], *,
            minimum: Optional[int] = None, maximum: Optional[int] = None) -> Optional[int]:
    """Deprecated for registry options (use :func:`value`)."""
    raw = get_str(options, name)
    if raw is None:
        return default
    return int(_parse(Option(name, frozenset(), "", INT, minimum=minimum, maximum=maximum), raw))


def get_seconds(options: Mapping[str, Any], name: str,
                default: Optional[float]) -> Optional[float]:
    """Deprecated for registry options (use :func:`value`)."""
    raw = get_str(options, name)
    return default if raw is None else float(_parse(Option(name, frozenset(), "", SECONDS), raw))


def get_columns(options: Mapping[str, Any], name: str) -> list[str]:
    return parse_columns(get_str(options, name))


def default(name: str) -> Any:
    """The registry's default of option ``name`` (the one place it is defined)."""
    return BY_KEY[name.lower()].default


def refuse_blank(options: Mapping[str, Any], *names: str) -> None:
    """Options whose blank value would silently mean "not given" (a time travel that reads the
    current snapshot): InvalidOptionError instead."""
    for name in names:
        v = get(options, name)
        if v is not None and str(v).strip() == "":
            raise InvalidOptionError(
                f"Option {name} is empty: give a value, or leave the option out")


def path_or_table(options: Mapping[str, Any], how: str) -> tuple[Optional[str], Optional[str]]:
    """``(path, table)`` the options name, exactly one of them: the one check of "not both" and
    of "neither" (whose message starts with ``how`` the entry point is given a path)."""
    path, table = get_str(options, "path"), get_str(options, "table")
    if path and table:
        raise InvalidOptionError(f"Give either a path ({path}) or option table ({table}), not both")
    if not path and not table:
        raise InvalidOptionError(
            f"No table given: {how} .option('table', 'db.tbl') with a metastore (option "
            "metastoreUri)")
    return path, table


def lowered(options: Optional[Mapping[str, object]]) -> dict[str, str]:
    """The options with lower-case keys and string values (what every process passes on)."""
    return {str(k).lower(): str(v) for k, v in (options or {}).items() if v is not None}


# --- typed values (also used by callers parsing values that are not options) -----------------------
def parse_int_text(text: str, what: str) -> int:
    """An integer written with ASCII digits and an optional sign: ``int()`` also takes ``1_0`` and
    other scripts' digits, which no Hive or Spark setting means."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not (body.isascii() and body.isdigit()):
        raise InvalidOptionError(f"{what} must be an integer, not '{text}'")
    return int(text)


def parse_columns(raw: Optional[str]) -> list[str]:
    """A column list: ``a, b`` (backquotes allowed) or a JSON list (Spark passes some that way)."""
    if raw is None:
        return []
    raw = raw.strip()
    if raw.startswith("["):
        try:
            return [str(c).strip() for c in json.loads(raw)]
        except ValueError:
            pass
    return [c.strip().strip("`") for c in raw.split(",") if c.strip()]


def parse_properties(raw: Optional[str], name: str = "tableProperties") -> dict[str, str]:
    """``k=v,k2=v2`` or a JSON object of strings."""
    if raw is None:
        return {}
    if raw.lstrip().startswith("{"):
        try:
            d = json.loads(raw)
        except ValueError as e:
            raise InvalidOptionError(f"Option {name} is not valid JSON: {e}") from e
        if not isinstance(d, dict):
            raise InvalidOptionError(f"Option {name} must be a JSON object")
        return {str(k): str(v) for k, v in d.items()}
    out = {}
    for part in raw.split(","):
        if not part.strip():
            continue
        k, sep, v = part.partition("=")
        if not sep or not k.strip():
            raise InvalidOptionError(
                f"Option {name}: '{part}' is not 'key=value' (use 'k=v,k2=v2' or JSON)")
        out[k.strip()] = v.strip()
    return out


# --- docs -----------------------------------------------------------------------------------------
def markdown_rows(names: Iterable[str]) -> list[str]:
    """The rows of a docs table ``| option | default | meaning |`` for ``names``, in that order."""
    rows = ["| option | default | meaning |", "|---|---|---|"]
    for name in names:
        o = BY_KEY[name.lower()]
        rows.append(f"| `{o.name}` | {o.default_text} | {o.doc} |")
    return rows
