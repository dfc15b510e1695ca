"""Every option the connector understands, in one registry, and the one way to read them.

Spark hands a data source its options as a case-insensitive map of strings; the table API, the
in-process API and the command-line tool pass plain dicts. :func:`get` looks a key up ignoring its
case, and the typed getters (:func:`get_bool`, :func:`get_int`, :func:`get_seconds`,
:func:`get_columns`) turn a value into the type the option declares, with an
:class:`~spark_hive_acid.exceptions.InvalidOptionError` that names the option when it cannot.

``OPTIONS`` lists every option with the places (scopes) that accept it; docs/reading.md,
docs/writing.md, docs/metastore.md, docs/storage.md and docs/streaming.md describe them for users.
Every entry point passes what it is given through :func:`check_known`: a name that is neither
here nor one of the keys Spark adds itself (``SPARK_KEYS``) is an UnknownOptionError naming the
closest option, so an option of a new feature must be added here to be accepted.
"""
from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from .exceptions import InvalidOptionError, UnknownOptionError

# scopes: where an option may be given
READ, WRITE, METASTORE, STORAGE = "read", "write", "metastore", "storage"


@dataclass(frozen=True)
class Option:
    """One option: its canonical (camelCase) name, the scopes that accept it, what it does."""

    name: str
    scopes: frozenset[str]
    doc: str

    @property
    def key(self) -> str:
        return self.name.lower()


def _opt(name: str, scopes: Iterable[str], doc: str) -> Option:
    return Option(name, frozenset(scopes), doc)


_BOTH = (READ, WRITE)
OPTIONS: tuple[Option, ...] = (
    # the table
    _opt("path", _BOTH, "table directory (load(path) / save(path))"),
    _opt("paths", (READ,), "set by Spark for load([...]); one table per load"),
    _opt("table", _BOTH, "db.table in the Hive Metastore (instead of a path)"),
    # reading
    _opt("validWriteIds", (READ,), "the snapshot: a Hive ValidWriteIdList string"),
    _opt("validTxns", (READ,), "a Hive ValidTxnList string (judges _vT compactor directories)"),
    _opt("includeRowId", (READ,), "add Hive's ROW__ID as a first column row__id"),
    _opt("readLock", (READ,), "metastore reads: hold a read-only txn + SHARED_READ lock while "
         "tasks read, so Hive's Cleaner keeps the files (docs/compaction.md)"),
    _opt("columns", (READ,), "comma-separated columns to read (Spark gives no column pruning)"),
    _opt("splitSize", (READ,), "target bytes per Spark task"),
    _opt("maxDeleteEventsInMemory", (READ,), "beyond this, delete events are streamed"),
    _opt("transactionalProperties", (READ,), "insert_only or default, when no layout says it"),
    _opt("countRows", (READ,), "return one row_count per task instead of the rows"),
    _opt("rebaseDatetime", (READ,), "read hybrid-calendar files' pre-1582 dates as written"),
    _opt("versionAsOf", (READ,), "time travel: the table as of this write id"),
    _opt("timestampAsOf", (READ,), "time travel: the table as of this time (path mode)"),
    # streaming and the change feed (docs/streaming.md)
    _opt("startingVersion", (READ,), "stream / change feed: first write id to read, or latest"),
    _opt("endingVersion", (READ,), "change feed: last write id (default: the current version)"),
    _opt("readChangeFeed", (READ,), "return changes: _change_type, _commit_version/_timestamp"),
    _opt("maxWriteIdsPerTrigger", (READ,), "stream: at most this many write ids per micro-batch"),
    _opt("maxFilesPerTrigger", (READ,), "stream: about this many data files per micro-batch"),
    _opt("skipChangeCommits", (READ,), "stream: skip write ids that delete or replace rows"),
    # writing
    _opt("partitionBy", (WRITE,), "partition columns of a new table"),
    _opt("bucketBy", (WRITE,), "CLUSTERED BY columns of a new table"),
    _opt("numBuckets", (WRITE,), "bucket count of a new table"),
    _opt("bucketingVersion", (WRITE,), "Hive bucket hash of a new table, 1 or 2"),
    _opt("compression", (WRITE,), "ORC codec: NONE, ZLIB, SNAPPY, LZ4, ZSTD"),
    _opt("tableProperties", (WRITE,), "TBLPROPERTIES of a new table: k=v,k2=v2 or JSON"),
    _opt("partitionOverwriteMode", (WRITE,), "static (replace the table) or dynamic"),
    _opt("txnTimeoutSeconds", (WRITE,), "idle seconds after which another writer may abort"),
    # writing: insert-only tables
    _opt("fileFormat", (WRITE,), "data files of a new insert-only table: orc or parquet"),
    # the Hive Metastore
    _opt("metastoreUri", (READ, WRITE, METASTORE), "thrift://host:port[,...]"),
    _opt("metastoreTimeout", (READ, WRITE, METASTORE), "socket timeout in seconds"),
    _opt("lockWaitTimeout", (WRITE, METASTORE), "seconds a writer waits for a lock"),
    _opt("heartbeatInterval", (WRITE, METASTORE), "seconds between transaction heartbeats"),
    # storage
    _opt("hdfsClient", (READ, WRITE, STORAGE), "auto, webhdfs or libhdfs"),
    _opt("webhdfsUrl", (READ, WRITE, STORAGE), "NameNode HTTP address(es), ';'-separated"),
    _opt("hdfsUser", (READ, WRITE, STORAGE), "HDFS user (simple authentication)"),
    _opt("webhdfsAuth", (READ, WRITE, STORAGE), "simple or kerberos"),
    _opt("webhdfsTimeout", (READ, WRITE, STORAGE), "seconds per WebHDFS request"),
    # S3 (s3://, s3a://, s3n://), Hadoop S3A's names: io/s3_settings.py, docs/storage.md
    _opt("fs.s3a.endpoint", (READ, WRITE, STORAGE), "S3 endpoint, http(s)://host:port"),
    _opt("fs.s3a.endpoint.region", (READ, WRITE, STORAGE), "S3 signing region"),
    _opt("fs.s3a.access.key", (READ, WRITE, STORAGE), "S3 access key id"),
    _opt("fs.s3a.secret.key", (READ, WRITE, STORAGE), "S3 secret key"),
    _opt("fs.s3a.session.token", (READ, WRITE, STORAGE), "S3 session token"),
    _opt("fs.s3a.path.style.access", (READ, WRITE, STORAGE), "true: endpoint/bucket/key URLs"),
    _opt("fs.s3a.connection.ssl.enabled", (READ, WRITE, STORAGE),
         "false: http for an endpoint given without a scheme"),
    _opt("fs.s3a.anonymous", (READ, WRITE, STORAGE), "true: unsigned requests (public buckets)"),
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
def get(options: Mapping[str, str], name: str) -> Optional[str]:
    """The value of ``name`` in ``options``, ignoring the case of the key; None when absent."""
    if name in options:
        return options[name]
    lower = name.lower()
    if lower in options:
        return options[lower]
    for k, v in options.items():
        if str(k).lower() == lower:
            return v
    return None


def refuse_blank(options: Mapping[str, str], *names: str) -> None:
    """Options whose blank value would silently mean "not given" (a time travel that reads the
    current snapshot): InvalidOptionError instead."""
    for name in names:
        v = get(options, name)
        if v is not None and str(v).strip() == "":
            raise InvalidOptionError(
                f"Option {name} is empty: give a value, or leave the option out")


def get_str(options: Mapping[str, str], name: str) -> Optional[str]:
    """The stripped value; None when absent or blank."""
    v = get(options, name)
    return None if v is None or str(v).strip() == "" else str(v).strip()


def lowered(options: Optional[Mapping[str, object]]) -> dict[str, str]:
    """The options with lower-case keys and string values (what every process passes on)."""
    return {str(k).lower(): str(v) for k, v in (options or {}).items() if v is not None}


# --- typed values ----------------------------------------------------------------------------------
def get_bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    raw = get_str(options, name)
    if raw is None:
        return default
    low = raw.lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise InvalidOptionError(f"Option {name}='{raw}' must be true or false")


def parse_int_text(text: str, what: str) -> int:
    """An integer written with ASCII digits and an optional sign: ``int()`` also takes ``1_0`` and
    other scripts' digits, which no Hive or Spark setting means."""
    body = text[1:] if text[:1] in "+-" else text
    if not body or not (body.isascii() and body.isdigit()):
        raise InvalidOptionError(f"{what} must be an integer, not '{text}'")
    return int(text)


def get_int(options: Mapping[str, str], name: str, default: Optional[int], *,
            minimum: Optional[int] = None, maximum: Optional[int] = None) -> Optional[int]:
    raw = get_str(options, name)
    if raw is None:
        return default
    value = parse_int_text(raw, f"Option {name}")
    if minimum is not None and value < minimum:
        raise InvalidOptionError(f"Option {name}={value} must be >= {minimum}")
    if maximum is not None and value > maximum:
        raise InvalidOptionError(f"Option {name}={value} must be <= {maximum}")
    return value


def get_seconds(options: Mapping[str, str], name: str,
                default: Optional[float]) -> Optional[float]:
    """A positive, finite number of seconds."""
    raw = get_str(options, name)
    if raw is None:
        return default
    if not _NUMBER.fullmatch(raw):  # float() also takes '1_0', 'nan' and other scripts' digits
        raise InvalidOptionError(f"Option {name}='{raw}' must be a number of seconds")
    value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise InvalidOptionError(f"Option {name}='{raw}' must be a positive number of seconds")
    return value


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


def get_columns(options: Mapping[str, str], name: str) -> list[str]:
    return parse_columns(get_str(options, name))


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
