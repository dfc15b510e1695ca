"""Hive 2.3's own ACID writer and reader, driven from Python: the interoperability oracle.

The pyspark wheel ships Hive 2.3.10 (hive-exec core, hive-common, hive-serde, hive-storage-api,
ORC, Hadoop client). A small Java helper (``java/HiveAcidRef.java``) wraps Hive's
``OrcOutputFormat`` / ``OrcInputFormat``; it is compiled on first use with ``javac`` into a cache
directory and loaded into ONE JVM started through :func:`pyspark.java_gateway.launch_gateway`
(no SparkContext). Each Python call sends a whole batch as one JSON string, so a call costs tens
of milliseconds once the JVM is up.

Usage::

    from hive_ref import HiveReference, valid_txns
    ref = HiveReference.start()
    ref.write(table_dir, [("a", "int"), ("b", "string")], txn=1, inserts=[[1, "x"], [2, None]])
    ref.write(table_dir, [("a", "int"), ("b", "string")], txn=2, deletes=[(1, 0, 1)])
    ref.read(table_dir, [("a", "int"), ("b", "string")], valid_txns=valid_txns(2))
    # -> [((1, 0, 0), (1, 'x'))]
    ref.close()

Values (both directions) are plain Python values: ints, floats, bools, str; decimals as strings
(``'12.50'``, always with the column's scale), dates as ``'YYYY-MM-DD'``, timestamps as
``'YYYY-MM-DD HH:MM:SS[.f]'`` (Hive's text form: fraction up to 9 digits, trailing zeros
dropped), binary as ``bytes``, arrays as lists, maps as dicts, structs as tuples. On input,
``decimal.Decimal``, ``datetime.date``, ``datetime.datetime`` (naive) and ``bytes`` are accepted
too; ``read(..., native=True)`` returns ``Decimal`` / ``date`` / ``datetime`` instead of strings.
The JVM runs with ``-Duser.timezone=UTC`` (timestamps are written/read as UTC wall-clock time).

Known Hive 2.3 (+ ORC 2.x) value quirks, so pick test data accordingly:

- dates before 1582-10-15 and timestamps before 1582 use the hybrid Julian calendar
  (``java.sql.Date``): '1500-01-01' is stored as day -171655, which a proleptic-Gregorian
  reader (pyarrow, Spark 3+) shows as 1500-01-10 (the connector's reader rebases it back:
  docs/reading.md, "Dates and timestamps before 1582"); its ORC 2.3.0 writer records
  ``calendar = JULIAN_GREGORIAN`` in every file's footer;
- a timestamp strictly inside the last second before the epoch (e.g.
  '1969-12-31 23:59:59.5') is stored one second late, and both Hive and pyarrow read
  '1970-01-01 00:00:00.5' back; other pre-1970 timestamps are fine.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import datetime as _dt
import decimal
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

__all__ = [
    "HiveReference",
    "HiveReferenceError",
    "MAX_TXN",
    "valid_txns",
    "parse_hive_type",
    "build_helper",
    "compile_java",
]

MAX_TXN = 9223372036854775807

_HERE = Path(__file__).resolve().parent
JAVA_SOURCE = _HERE / "java" / "HiveAcidRef.java"
#: Every helper class, compiled together: HiveAcidRef (ACID reader/writer), HiveHashRef (bucket
#: hashes), and the local file system every Hive test JVM uses (shared with tests/hive_jvm).
JAVA_SOURCES = (JAVA_SOURCE, _HERE / "java" / "HiveHashRef.java",
                _HERE.parent / "hive_jvm" / "java" / "common" / "hivejvm" / "NioLocalFileSystem.java")
JAVA_CLASS = "hiveref.HiveAcidRef"
#: Default cache for the compiled helper (git-ignored: /work/main/.build/).
DEFAULT_BUILD_DIR = _HERE.parents[1] / ".build" / "hive_ref"

Column = Sequence[str]  # (name, hive type)
RowId = tuple  # (originalTxn, bucket, rowId)


class HiveReferenceError(RuntimeError):
    """A call into Hive failed; the message carries the Java exception chain."""


# --------------------------------------------------------------------------------------------
# Snapshots
# --------------------------------------------------------------------------------------------


def valid_txns(hwm: int, exceptions: Iterable[int] = (), min_open: Optional[int] = None) -> str:
    """A Hive 2.3 ``ValidReadTxnList`` string: ``HWM:minOpenTxn[:exc1:exc2...]``.

    ``exceptions`` are the invalid (open or aborted) transactions <= hwm; Hive 2.3 does not
    distinguish the two. ``min_open`` defaults to MAX_TXN ("nothing open"); Hive 2.3 uses it only
    to decide whether a ``base_N`` is usable (``N < minOpenTxn and N <= HWM``), the exception list
    is ignored for bases.
    """
    exc = sorted(set(int(e) for e in exceptions))
    parts = [str(int(hwm)), str(MAX_TXN if min_open is None else int(min_open))]
    parts += [str(e) for e in exc]
    return ":".join(parts)


# --------------------------------------------------------------------------------------------
# Hive type strings (only as much as value conversion needs)
# --------------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*|\d+|[<>(),:])")


def parse_hive_type(text: str) -> tuple:
    """Parse a Hive type string into a small tree.

    Returns ``("prim", name)``, ``("decimal", p, s)``, ``("array", t)``, ``("map", k, v)`` or
    ``("struct", ((name, t), ...))``. ``char(n)`` / ``varchar(n)`` become ``("prim", "char")`` /
    ``("prim", "varchar")``.
    """
    tokens = _TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise ValueError(f"cannot parse Hive type {text!r}")
    pos = 0

    def take(expected: Optional[str] = None) -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError(f"unexpected end of Hive type {text!r}")
        tok = tokens[pos]
        if expected is not None and tok != expected:
            raise ValueError(f"expected {expected!r} at {tok!r} in Hive type {text!r}")
        pos += 1
        return tok

    def peek() -> Optional[str]:
        return tokens[pos] if pos < len(tokens) else None

    def parse() -> tuple:
        name = take().lower()
        if name == "array":
            take("<")
            t = parse()
            take(">")
            return ("array", t)
        if name == "map":
            take("<")
            k = parse()
            take(",")
            v = parse()
            take(">")
            return ("map", k, v)
        if name == "struct":
            take("<")
            fields = []
            while True:
                fname = take()
                take(":")
                fields.append((fname, parse()))
                if peek() == ",":
                    take(",")
                    continue
                take(">")
                return ("struct", tuple(fields))
        if name == "decimal":
            p, s = 10, 0
            if peek() == "(":
                take("(")
                p = int(take())
                if peek() == ",":
                    take(",")
                    s = int(take())
                take(")")
            return ("decimal", p, s)
        if name in ("char", "varchar"):
            take("(")
            take()
            take(")")
            return ("prim", name)
        if name == "uniontype":
            raise ValueError("uniontype is not supported")
        return ("prim", name)

    tree = parse()
    if pos != len(tokens):
        raise ValueError(f"trailing text in Hive type {text!r}")
    return tree


def _to_json(value: Any, t: tuple) -> Any:
    """Python value -> the JSON form the Java helper expects for Hive type ``t``."""
    if value is None:
        return None
    kind = t[0]
    if kind == "decimal":
        if isinstance(value, float):
            value = repr(value)
        return str(value)
    if kind == "array":
        return [_to_json(v, t[1]) for v in value]
    if kind == "map":
        items = value.items() if isinstance(value, dict) else value
        return [[_to_json(k, t[1]), _to_json(v, t[2])] for k, v in items]
    if kind == "struct":
        fields = t[1]
        if isinstance(value, dict):
            value = [value.get(name) for name, _ in fields]
        if len(value) != len(fields):
            raise ValueError(f"struct value {value!r} needs {len(fields)} fields")
        return [_to_json(v, ft) for v, (_, ft) in zip(value, fields)]
    name = t[1]
    if name == "date":
        if isinstance(value, _dt.datetime):
            raise TypeError(f"date column got a datetime {value!r}")
        if isinstance(value, _dt.date):
            return value.isoformat()
        return value
    if name == "timestamp":
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                raise TypeError(f"timestamp column got a timezone-aware datetime {value!r}")
            return value.isoformat(sep=" ")
        if isinstance(value, _dt.date):
            return value.isoformat() + " 00:00:00"
        return value
    if name == "binary":
        if isinstance(value, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(value)).decode("ascii")
        raise TypeError(f"binary column needs bytes, got {value!r}")
    if name in ("float", "double") and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, decimal.Decimal):
        raise TypeError(f"{name} column got a Decimal {value!r}")
    return value


_TS = re.compile(r"^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?$")


def _from_json(value: Any, t: tuple, native: bool) -> Any:
    """JSON from the Java helper -> Python value for Hive type ``t``."""
    if value is None:
        return None
    kind = t[0]
    if kind == "decimal":
        return decimal.Decimal(value) if native else value
    if kind == "array":
        return [_from_json(v, t[1], native) for v in value]
    if kind == "map":
        return {_from_json(k, t[1], native): _from_json(v, t[2], native) for k, v in value}
    if kind == "struct":
        return tuple(_from_json(v, ft, native) for v, (_, ft) in zip(value, t[1]))
    name = t[1]
    if name == "binary":
        return base64.b64decode(value)
    if native and name == "date":
        return _dt.date.fromisoformat(value)
    if native and name == "timestamp":
        m = _TS.match(value)
        if not m:
            raise ValueError(f"unexpected timestamp text {value!r}")
        frac = (m.group(7) or "").ljust(9, "0")
        return _dt.datetime(
            int(m.group(1)), int(m.group(2)), int(m.group(3)),
            int(m.group(4)), int(m.group(5)), int(m.group(6)), int(frac[:6]),
        )
    return value


class _Schema:
    def __init__(self, columns: Sequence[Column], field_names: Optional[Sequence[str]] = None):
        cols = [(str(c[0]), str(c[1])) for c in columns]
        if not cols:
            raise ValueError("a table needs at least one column")
        self.columns = cols
        self.trees = [parse_hive_type(t) for _, t in cols]
        self.field_names = None if field_names is None else [str(f) for f in field_names]
        if self.field_names is not None and len(self.field_names) != len(cols):
            raise ValueError("field_names and columns differ in length")

    def spec(self) -> dict:
        return {"columns": [list(c) for c in self.columns], "field_names": self.field_names}

    def row_to_json(self, row: Sequence[Any]) -> list:
        if isinstance(row, dict):
            row = [row.get(name) for name, _ in self.columns]
        if len(row) != len(self.columns):
            raise ValueError(f"row {row!r} has {len(row)} values, table has {len(self.columns)}")
        return [_to_json(v, t) for v, t in zip(row, self.trees)]

    def row_from_json(self, row: Sequence[Any], native: bool) -> tuple:
        return tuple(_from_json(v, t, native) for v, t in zip(row, self.trees))


def _row_id(rid: Sequence[int]) -> list:
    if len(rid) != 3:
        raise ValueError(f"ROW__ID must be (originalTxn, bucket, rowId), got {rid!r}")
    return [int(rid[0]), int(rid[1]), int(rid[2])]


# --------------------------------------------------------------------------------------------
# Building the helper
# --------------------------------------------------------------------------------------------


def pyspark_jars_dir() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def _find_tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).exists():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise HiveReferenceError(f"{name} not found (set JAVA_HOME or PATH)")
    return found


def build_helper(build_dir: Optional[os.PathLike] = None) -> Path:
    """Compile the Java helper (once per source hash) and return its classes directory.

    The cache lives under ``$HIVE_REF_BUILD_DIR`` or ``<repo>/.build/hive_ref``.
    """
    root = Path(build_dir or os.environ.get("HIVE_REF_BUILD_DIR") or DEFAULT_BUILD_DIR)
    return compile_java(JAVA_SOURCES, root, Path("hiveref") / "HiveHashRef.class")


def compile_java(sources: Sequence[Path], root: Path, marker: Path,
                 classpath: Optional[Sequence[Path]] = None) -> Path:
    """Compile ``sources`` against the pyspark jars (or the jars of ``classpath``), once per
    source hash; returns the classes directory ``root/<sha>/classes`` (``marker``, relative to it,
    shows a finished build).

    A new directory is created whenever a source (or the pyspark version) changes. Compilation
    goes to a temporary directory that is renamed into place, so concurrent test sessions do not
    see half-written classes.
    """
    import pyspark

    source = b"\0".join(Path(src).read_bytes() for src in sources)
    cp = str(pyspark_jars_dir() / "*") if classpath is None else os.pathsep.join(map(str, classpath))
    against = pyspark.__version__ if classpath is None else cp
    digest = hashlib.sha256(source + b"\0" + against.encode()).hexdigest()[:16]
    classes = root / digest / "classes"
    marker = classes / marker
    if marker.exists():
        return classes
    (root / digest).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".classes-", dir=root / digest))
    try:
        cmd = [
            _find_tool("javac"), "-nowarn", "-encoding", "UTF-8", "-g",
            "-cp", cp, "-d", str(tmp), *map(str, sources),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise HiveReferenceError(f"javac failed:\n{proc.stdout}\n{proc.stderr}")
        try:
            os.rename(tmp, classes)
        except OSError:
            if not marker.exists():  # lost a race only if the winner finished
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    _prune_old_builds(root, keep=digest)
    return classes


def _prune_old_builds(root: Path, keep: str, max_age_s: float = 86400.0) -> None:
    """Drop builds of older sources (left alone for a day: a running JVM may still use one)."""
    now = time.time()
    for entry in root.iterdir():
        if entry.name in (keep, "logs") or not re.fullmatch(r"[0-9a-f]{16}", entry.name):
            continue
        try:
            if now - entry.stat().st_mtime > max_age_s:
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            pass


# --------------------------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------------------------

_ENV_LOCK = threading.Lock()


class _Conf:
    """The part of SparkConf that launch_gateway uses."""

    def __init__(self, *pairs):
        self._pairs = list(pairs)

    def getAll(self):
        return list(self._pairs)


def _relative_files(root: Path) -> set:
    out = set()
    if not root.exists():
        return out
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".crc"):
                continue
            out.add(os.path.relpath(os.path.join(dirpath, f), root))
    return out


class HiveReference:
    """One JVM holding Hive 2.3.10's ACID writer and reader; see the module docstring."""

    def __init__(self, gateway, proc, classes_dir: Path, log_path: Path):
        self._gateway = gateway
        self._proc = proc
        self.classes_dir = classes_dir
        #: stdout/stderr of the JVM (Hive / Hadoop logging); look here when a call fails. The
        #: default one (``<build dir>/logs/jvm-<python pid>.log``) is removed by close().
        self.log_path = log_path
        self._helper = gateway.jvm.hiveref.HiveAcidRef
        self._hash_helper = gateway.jvm.hiveref.HiveHashRef
        self._closed = False
        info = json.loads(self._call("ping"))
        #: where ValidReadTxnList / OrcOutputFormat were loaded from, JVM time zone, Java version
        self.info = info
        if "hive-common" not in info.get("ValidReadTxnList", ""):
            self.close()
            raise HiveReferenceError(
                "ValidReadTxnList was not loaded from hive-common (classpath order): " + str(info)
            )

    # ---- life cycle -----------------------------------------------------------------------

    @classmethod
    def start(
        cls,
        *,
        build_dir: Optional[os.PathLike] = None,
        log_path: Optional[os.PathLike] = None,
        memory: str = "512m",
    ) -> "HiveReference":
        """Compile the helper if needed and start the JVM (about 5 s)."""
        from pyspark.java_gateway import launch_gateway

        classes = build_helper(build_dir)
        jars = pyspark_jars_dir()
        common = sorted(glob.glob(str(jars / "hive-common-*.jar")))
        if not common:
            raise HiveReferenceError(f"no hive-common jar in {jars}")
        remove_log = log_path is None
        if log_path is None:
            log_dir = classes.parent.parent / "logs"
            log_dir.mkdir(parents=True, exist_ok=True)
            log_path = log_dir / f"jvm-{os.getpid()}.log"
        log_path = Path(log_path)

        # launch_gateway only calls conf.getAll(); a plain object keeps a running SparkContext's
        # JVM out of it (SparkConf would attach to SparkContext._jvm when there is one).
        conf = _Conf(
            # Our classes first, then hive-common: hive-common's ValidReadTxnList must win over
            # hive-storage-api's (different API, NoSuchMethodError once a base exists).
            ("spark.driver.extraClassPath", os.pathsep.join([str(classes), common[0]])),
            ("spark.driver.memory", memory),
            ("spark.driver.extraJavaOptions", "-Duser.timezone=UTC -XX:+UseSerialGC"),
            ("spark.ui.enabled", "false"),
        )

        log = open(log_path, "wb")
        try:
            with _ENV_LOCK:
                saved = {k: os.environ.get(k) for k in
                         ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "PYSPARK_SUBMIT_ARGS")}
                try:
                    # Always start a fresh JVM, never attach to an existing Spark gateway.
                    os.environ.pop("PYSPARK_GATEWAY_PORT", None)
                    os.environ.pop("PYSPARK_GATEWAY_SECRET", None)
                    os.environ["PYSPARK_SUBMIT_ARGS"] = "pyspark-shell"
                    gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
                finally:
                    for k, v in saved.items():
                        if v is None:
                            os.environ.pop(k, None)
                        else:
                            os.environ[k] = v
        finally:
            log.close()
        try:
            ref = cls(gateway, gateway.proc, classes, log_path)
        except BaseException:
            _stop(gateway, gateway.proc)
            raise
        ref._remove_log = remove_log
        atexit.register(ref.close)
        return ref

    @property
    def pid(self) -> Optional[int]:
        """PID of the JVM (spark-submit execs java, so this is the java process)."""
        return None if self._proc is None else self._proc.pid

    @property
    def jvm(self):
        """py4j's view of the JVM, to use Java's own library as an oracle (e.g.
        ``ref.jvm.java.util.GregorianCalendar``, the hybrid calendar Hive 2 dates use)."""
        return self._gateway.jvm

    def close(self) -> None:
        """Shut the gateway down and end the JVM (idempotent)."""
        if self._closed:
            return
        self._closed = True
        _stop(self._gateway, self._proc)
        if getattr(self, "_remove_log", False):
            try:
                os.unlink(self.log_path)
            except OSError:
                pass

    def __enter__(self) -> "HiveReference":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @contextlib.contextmanager
    def _java(self, what: str):
        """Around calls into this JVM: Java exceptions become :class:`HiveReferenceError`."""
        from py4j.protocol import Py4JError, Py4JJavaError

        if self._closed:
            raise HiveReferenceError("the Hive reference JVM is closed")
        import py4j.java_gateway as java_gateway
        import py4j.protocol as protocol

        # A SparkSession in the same process patches py4j's get_return_value to convert Java
        # exceptions through *its* JVM; that conversion fails for errors of this separate JVM
        # (seen after a test stopped and restarted a SparkContext). Use py4j's own for our calls.
        patched = java_gateway.get_return_value
        java_gateway.get_return_value = protocol.get_return_value
        try:
            yield
        except Py4JJavaError as e:
            raise HiveReferenceError(_java_error_text(e)) from e
        except Py4JError as e:
            raise HiveReferenceError(f"py4j error calling {what}: {e}") from e
        finally:
            java_gateway.get_return_value = patched

    def _call(self, method: str, spec: Optional[dict] = None, helper: Any = None) -> str:
        with self._java(method):
            fn = getattr(self._helper if helper is None else helper, method)
            return fn() if spec is None else fn(json.dumps(spec, allow_nan=True))

    # ---- writing --------------------------------------------------------------------------

    def write(
        self,
        table_dir: os.PathLike,
        columns: Sequence[Column],
        *,
        txn: int,
        statement: Optional[int] = 0,
        bucket: int = 0,
        inserts: Iterable[Sequence[Any]] = (),
        updates: Iterable[tuple] = (),
        deletes: Iterable[Sequence[int]] = (),
        base: bool = False,
        min_txn: Optional[int] = None,
        max_txn: Optional[int] = None,
        field_names: Optional[Sequence[str]] = None,
        bucket_count: int = 1,
        sort_ops: bool = True,
        check_buckets: bool = True,
    ) -> list:
        """Write one statement of transaction ``txn`` for one bucket with Hive's RecordUpdater.

        - ``inserts``: rows (lists / tuples / dicts by column name) -> insert events with row ids
          0, 1, ... in ``delta_{min}_{max}_{stmt}/bucket_{bucket}`` (``base_{max}`` if ``base``).
          For statement > 0 Hive continues the row ids after the insert files that earlier
          statements of the same txn left for this bucket in ``table_dir``. A call with no rows
          writes no file (also with ``base=True``: no empty base is created).
        - ``updates``: ``(row_id, new_row)`` pairs; split-update: a delete event for ``row_id``
          in ``delete_delta_.../bucket_{bucket}`` plus an insert event for ``new_row`` with the
          next row id in the delta.
        - ``deletes``: row ids ``(originalTxn, bucket, rowId)``.
        Inserts are written first, then updates and deletes as one list sorted by ROW__ID (as
        Hive's reduce step on ROW__ID would; ``sort_ops=False`` keeps updates then deletes in the
        given order). Like Hive, one call writes one bucket: with ``check_buckets`` an update or
        delete of a row in another bucket raises ValueError.

        ``statement=None`` writes no statement suffix (``delta_x_y``). ``min_txn`` / ``max_txn``
        override the directory's range (default ``txn``); events carry ``txn`` as
        currentTransaction. ``field_names`` renames the fields inside the ORC ``row`` struct
        (e.g. ``_col0``, ``_col1`` as Hive SQL writes them); default: the column names.

        Returns the new files (paths relative to ``table_dir``, sorted, ``.crc`` omitted).
        """
        schema = _Schema(columns, field_names)
        table_dir = Path(table_dir)
        updates, deletes = list(updates), list(deletes)
        if base and (updates or deletes):
            raise ValueError("a base (insert overwrite) holds inserts only")
        ops = []
        for rid, row in updates:
            ops.append({"kind": "update", "row_id": _row_id(rid), "row": schema.row_to_json(row)})
        for rid in deletes:
            ops.append({"kind": "delete", "row_id": _row_id(rid)})
        if check_buckets:
            for op in ops:
                if op["row_id"][1] != bucket:
                    raise ValueError(
                        f"{op['kind']} of ROW__ID {tuple(op['row_id'])} in a call for bucket "
                        f"{bucket}; Hive routes it to bucket {op['row_id'][1]}"
                    )
        if sort_ops:
            keys = [tuple(op["row_id"]) for op in ops]
            if len(set(keys)) != len(keys):
                raise ValueError("the same ROW__ID is updated/deleted twice")
            ops.sort(key=lambda op: tuple(op["row_id"]))
        spec = {
            **schema.spec(),
            "table_dir": str(table_dir.resolve()),
            "bucket": int(bucket),
            "min_txn": int(txn if min_txn is None else min_txn),
            "max_txn": int(txn if max_txn is None else max_txn),
            "current_txn": int(txn),
            "statement": -1 if statement is None else int(statement),
            "base": bool(base),
            "bucket_count": int(bucket_count),
            "inserts": [schema.row_to_json(r) for r in inserts],
            "ops": ops,
        }
        before = _relative_files(table_dir)
        self._call("write", spec)
        return sorted(_relative_files(table_dir) - before)

    def write_raw(
        self,
        table_dir: os.PathLike,
        columns: Sequence[Column],
        *,
        kind: str,
        bucket: int,
        min_txn: int,
        max_txn: int,
        events: Iterable[Sequence[Any]],
        statement: Optional[int] = None,
        field_names: Optional[Sequence[str]] = None,
        bucket_count: int = 1,
    ) -> str:
        """Write ACID events verbatim with ``OrcOutputFormat#getRawRecordWriter`` (Hive's compactor).

        ``kind`` is ``"base"`` (``base_{max_txn}``), ``"delta"`` or ``"delete_delta"``
        (``[delete_]delta_{min}_{max}[_{stmt}]``). ``events`` are
        ``(operation, originalTxn, bucket, rowId, currentTxn, row_or_None)`` written in the given
        order (Hive expects them sorted by (originalTxn, bucket, rowId)). As Hive 2.3 does, a
        base uses the configured compression (ZLIB) while a delta is written uncompressed without
        row index. Returns the written file's path (absolute).
        """
        schema = _Schema(columns, field_names)
        evs = []
        for ev in events:
            op, otxn, bkt, rid, ctxn, row = ev
            evs.append([int(op), int(otxn), int(bkt), int(rid), int(ctxn),
                        None if row is None else schema.row_to_json(row)])
        spec = {
            **schema.spec(),
            "table_dir": str(Path(table_dir).resolve()),
            "kind": kind,
            "bucket": int(bucket),
            "min_txn": int(min_txn),
            "max_txn": int(max_txn),
            "statement": -1 if statement is None else int(statement),
            "bucket_count": int(bucket_count),
            "events": evs,
        }
        out = json.loads(self._call("writeRaw", spec))
        return _local_path(out["path"])

    def write_compacted_base(
        self,
        table_dir: os.PathLike,
        columns: Sequence[Column],
        *,
        txn: int,
        bucket: int,
        rows: Iterable[tuple],
        field_names: Optional[Sequence[str]] = None,
        bucket_count: int = 1,
    ) -> str:
        """A major-compaction style ``base_{txn}/bucket_{bucket}``: ``rows`` are
        ``(row_id, row)`` pairs that keep their original ROW__IDs (sorted here by ROW__ID;
        currentTransaction = originalTransaction, as Hive's compactor writes them)."""
        events = [
            (0, rid[0], rid[1], rid[2], rid[0], row)
            for rid, row in sorted(rows, key=lambda p: tuple(p[0]))
        ]
        return self.write_raw(
            table_dir, columns, kind="base", bucket=bucket, min_txn=0, max_txn=txn,
            events=events, field_names=field_names, bucket_count=bucket_count,
        )

    def write_original(
        self,
        path: os.PathLike,
        columns: Sequence[Column],
        rows: Iterable[Sequence[Any]],
        *,
        field_names: Optional[Sequence[str]] = None,
    ) -> str:
        """Write a plain (non-ACID) ORC file, e.g. ``<table>/000000_0``, with Hive's ORC writer
        (ZLIB, row struct named after ``field_names`` or the columns). Returns the path."""
        schema = _Schema(columns, field_names)
        path = Path(path).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        spec = {**schema.spec(), "path": str(path), "rows": [schema.row_to_json(r) for r in rows]}
        self._call("writeOriginal", spec)
        return str(path)

    # ---- reading --------------------------------------------------------------------------

    def read(
        self,
        table_dir: os.PathLike,
        columns: Sequence[Column],
        *,
        valid_txns: str = f"{MAX_TXN}:{MAX_TXN}",
        bucket_count: Optional[int] = 1,
        conf: Optional[dict] = None,
        native: bool = False,
        sort: bool = False,
    ) -> list:
        """Read a table / partition directory with Hive's row-mode ACID reader (OrcInputFormat).

        ``valid_txns`` is a Hive 2.3 ValidReadTxnList string (see :func:`valid_txns`); the default
        trusts everything. ``bucket_count`` must be the table's bucket count (Hive silently
        returns no rows without it). ``conf`` adds JobConf entries.

        Returns ``[((originalTxn, bucket, rowId), (v1, v2, ...)), ...]`` in Hive's order (split by
        split), or sorted by ROW__ID with ``sort=True``.
        """
        schema = _Schema(columns)
        spec = {
            **schema.spec(),
            "table_dir": str(Path(table_dir).resolve()),
            "valid_txns": valid_txns,
            "bucket_count": None if bucket_count is None else int(bucket_count),
            "conf": {str(k): str(v) for k, v in (conf or {}).items()},
        }
        out = json.loads(self._call("read", spec))
        rows = [(tuple(rid), schema.row_from_json(vals, native)) for rid, vals in out["rows"]]
        if sort:
            rows.sort(key=lambda r: r[0])
        return rows

    def read_plain(self, dirs: Sequence[os.PathLike], columns: Sequence[Column], fmt: str = "orc",
                   *, native: bool = False) -> list:
        """Read the plain files in ``dirs`` as Hive reads a non-transactional table's directories
        (``OrcInputFormat``, or ``MapredParquetInputFormat`` with ``ParquetHiveSerDe``), by the
        table's ``columns``. Returns ``[(v1, v2, ...), ...]`` in Hive's order."""
        schema = _Schema(columns)
        spec = {**schema.spec(), "dirs": [str(Path(d).resolve()) for d in dirs], "format": fmt}
        out = json.loads(self._call("readPlain", spec))
        return [schema.row_from_json(vals, native) for vals in out["rows"]]

    def acid_state(self, table_dir: os.PathLike, valid_txns: str = f"{MAX_TXN}:{MAX_TXN}") -> dict:
        """Hive 2.3's snapshot selection, ``AcidUtils.getAcidState``.

        Returns ``{"base": name or None, "deltas": [{"path": name, "min_txn", "max_txn",
        "statement", "delete"}...], "original_files": [relative paths], "obsolete": [names]}``;
        paths are relative to ``table_dir``.
        """
        root = Path(table_dir).resolve()
        out = json.loads(self._call("acidState", {"table_dir": str(root), "valid_txns": valid_txns}))

        def rel(p: Optional[str]) -> Optional[str]:
            return None if p is None else os.path.relpath(_local_path(p), root)

        return {
            "base": rel(out["base"]),
            "deltas": [{**d, "path": rel(d["path"])} for d in out["deltas"]],
            "original_files": [rel(p) for p in out["original_files"]],
            "obsolete": [rel(p) for p in out["obsolete"]],
        }


    # ---- snapshots --------------------------------------------------------------------------

    def parse_write_id_list(self, text: str) -> dict:
        """storage-api 2.8.1's ``new ValidReaderWriteIdList(text)`` (Hive 3's parser of
        ``db.table:HWM:minOpenWriteId:open,...:aborted,...``), read back through its getters:
        ``{"table", "hwm", "min_open" (None: nothing open), "invalid": [...], "aborted": [...]}``.
        Raises :class:`HiveReferenceError` when Java refuses the string."""
        with self._java("ValidReaderWriteIdList"):
            wl = self._gateway.jvm.org.apache.hadoop.hive.common.ValidReaderWriteIdList(text)
            invalid = [int(w) for w in wl.getInvalidWriteIds()]
            min_open = wl.getMinOpenWriteId()
            return {
                "table": wl.getTableName(),
                "hwm": int(wl.getHighWatermark()),
                "min_open": None if min_open is None else int(min_open),
                "invalid": invalid,
                "aborted": [w for w in invalid if wl.isWriteIdAborted(w)],
            }

    # ---- bucket hashing -------------------------------------------------------------------

    def bucket_hashes(self, columns: Sequence[Column], rows: Iterable[Sequence[Any]],
                      num_buckets: int = 1) -> dict:
        """Hive 2.3's bucket hash (bucketing_version 1) of every row over ``columns`` (the
        CLUSTERED BY columns, in order).

        Returns ``{"v1": {...}}`` with ``fields`` (one hash per column per row), ``hash`` (the
        combined ``31*h + field`` per row) and ``bucket`` (``(hash & 0x7FFFFFFF) % num_buckets``):
        Hive 2.3's own ``ObjectInspectorUtils.hashCode``/``getBucketHashCode`` (see
        ``java/HiveHashRef.java``; version 2 only exists from Hive 3: ``tests/hive_jvm``). Values
        as for :meth:`write`; a timestamp may also be Hive's text with nanoseconds
        (``'2001-02-03 04:05:06.123456789'``), a date is a proleptic-Gregorian day and a timestamp
        a UTC wall clock (Hive 3's semantics).
        """
        schema = _Schema(columns)
        spec = {"columns": [list(c) for c in schema.columns],
                "rows": [schema.row_to_json(r) for r in rows], "num_buckets": int(num_buckets)}
        return json.loads(self._call("bucketHashes", spec, self._hash_helper))


def _local_path(p: str) -> str:
    return p[len("file:"):] if p.startswith("file:") else p


def _java_error_text(e) -> str:
    try:
        parts = []
        t = e.java_exception
        seen = 0
        while t is not None and seen < 10:
            parts.append(str(t.toString()))
            cause = t.getCause()
            if cause is None or cause.equals(t):
                break
            t = cause
            seen += 1
        return " <- caused by: ".join(parts)
    except Exception:  # pragma: no cover - the gateway itself may be gone
        return str(e)


def _stop(gateway, proc) -> None:
    try:
        gateway.shutdown()
    except Exception:
        pass
    if proc is None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()  # PythonGatewayServer exits when its stdin closes
    except Exception:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)
