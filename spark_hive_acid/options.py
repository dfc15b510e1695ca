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

# the registry's vocabulary, used as opt.READ etc. (explicit re-exports: ``X as X``)
from .options_table import (
    BOOL as BOOL,
    CHANGE_FEED_ONLY as CHANGE_FEED_ONLY,
    CHOICE as CHOICE,
    COLUMNS as COLUMNS,
    ENTRY_POINTS as ENTRY_POINTS,
    IDENTITY as IDENTITY,
    INSPECT as INSPECT,
    INT as INT,
    METASTORE as METASTORE,
    OPTIONS as OPTIONS,
    SUFFIXED as SUFFIXED,
    PROPERTIES as PROPERTIES,
    RAW as RAW,
    READ as READ,
    SECONDS as SECONDS,
    STORAGE as STORAGE,
    STR as STR,
    STREAM as STREAM,
    TABLE as TABLE,
    WRITE as WRITE,
    Option as Option,
)

BY_KEY: dict[str, Option] = {o.key: o for o in OPTIONS}
#: keys Spark itself puts into a data source's options (verified with PySpark 4.3): load(path) /
#: load([...]); provider / owner / location when CREATE TABLE ... USING hiveacid infers the
#: schema; checkpointLocation / queryName for a writeStream sink
SPARK_KEYS = frozenset({"path", "paths", "provider", "owner", "location", "checkpointlocation",
                        "queryname"})


def registry_key(key: str) -> str:
    """The registry's key for ``key`` (lower case): itself, or the option of :data:`SUFFIXED` it
    extends (``fs.azure.account.key.<account>.dfs.core.windows.net``)."""
    low = key.lower()
    for name in SUFFIXED:
        if low.startswith(name + ".") and len(low) > len(name) + 1:
            return name
    return low


def check_known(options: Optional[Mapping[str, object]], where: str,
                scopes: Iterable[str] = (READ, WRITE, METASTORE, STORAGE)) -> None:
    """Raise UnknownOptionError for an option name no entry point knows (case-insensitive),
    naming the closest known option: a typo must never be silently ignored. ``scopes``: the
    options the message lists (those ``where`` takes)."""
    wanted = frozenset(scopes)
    for key in options or {}:
        low = registry_key(str(key))
        if low in BY_KEY or low in SPARK_KEYS:
            continue
        close = difflib.get_close_matches(low, list(BY_KEY), n=1, cutoff=0.6)
        hint = f"; did you mean {BY_KEY[close[0]].name}?" if close else "."
        listed = sorted(o.name for o in OPTIONS if o.scopes & wanted and o.name != "paths")
        raise UnknownOptionError(
            f"{where}: unknown option '{key}'{hint} Options it takes: {', '.join(listed)}")


def takes(entry: str, o: Option) -> bool:
    """Whether entry point ``entry`` (a key of ENTRY_POINTS) takes option ``o``."""
    return o.key in IDENTITY or bool(o.scopes & frozenset(ENTRY_POINTS[entry]))


def check_entry(options: Optional[Mapping[str, object]], entry: str,
                where: Optional[str] = None) -> None:
    """The options given to entry point ``entry`` (a key of ENTRY_POINTS), checked before
    anything is read or written: a misspelt name is an UnknownOptionError (:func:`check_known`);
    an option of another entry point, which this one would silently ignore, an InvalidOptionError
    naming the entry points that take it. So an option means the same wherever it is accepted.
    ``where``: how messages name the call (default ``entry``)."""
    where = where or entry
    check_known(options, where, ENTRY_POINTS[entry])
    given = {str(k).lower(): v for k, v in (options or {}).items() if v is not None}
    for key in given:
        o = BY_KEY.get(registry_key(key))
        if o is None or takes(entry, o):
            continue  # a key Spark adds itself
        others = [e for e in ENTRY_POINTS if takes(e, o)]
        raise InvalidOptionError(
            f"{where}: option {o.name} is not one of its options ({o.name} is for "
            f"{', '.join(others)}); {where} would ignore it, so leave it out or use "
            f"{others[0]}")
    if READ in ENTRY_POINTS[entry] and not value(given, "readChangeFeed"):
        for name in CHANGE_FEED_ONLY:
            if get(given, name) is not None:
                raise InvalidOptionError(
                    f"{where}: option {name} is for the change feed: add readChangeFeed=true to "
                    "read the changes of a range of write ids, use readStream for a stream from "
                    "that version, or versionAsOf for the table as of one write id")


def restrict(options: Mapping[str, str], entry: str) -> dict[str, str]:
    """The options entry point ``entry`` takes (and the keys Spark adds): a table's options
    handed on to a narrower entry point (a HiveAcidTable's reads)."""
    return {k: v for k, v in options.items()
            if (o := BY_KEY.get(str(k).lower())) is None or takes(entry, o)}


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
        low = raw.lower()  # as Spark's own boolean options: no 'yes', no '1'
        if low == "true":
            return True
        if low == "false":
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


def markdown_entry_points() -> list[str]:
    """The docs table ``| entry point | options it takes |`` (besides the metastore and storage
    options and path/table, which every entry point takes)."""
    rows = ["| entry point | its options (besides the metastore and storage options) |",
            "|---|---|"]
    for entry, scopes in ENTRY_POINTS.items():
        names = [f"`{o.name}`" for o in OPTIONS if o.key not in IDENTITY and takes(entry, o)
                 and not o.scopes & {METASTORE, STORAGE}]
        rows.append(f"| `{entry}` | {', '.join(names) or 'none'} |")
    return rows
