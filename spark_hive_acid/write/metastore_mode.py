"""Writes by table name through the Hive Metastore ("metastore mode").

``df.write.format("hiveacid").option("table", "db.t").mode("append"|"overwrite").save()`` and the
metastore-facing table API (:class:`MetastoreTable`, reached through ``HiveAcidTable.forName`` and
``HiveAcidTable.create``). Files are laid out exactly as in path mode (``delta_W_W_S`` /
``base_W`` / ``delete_delta_W_W_S``, staged in the hidden ``_hiveacid_staging/W/`` and renamed
into place at commit); what changes is where W, the snapshot, the locks and the commit come from:
a metastore transaction (:class:`~spark_hive_acid.metastore.transaction.Transaction`). The
path-mode transaction log (``_hiveacid_txnlog``) is never written for a metastore table.

Transaction lifecycle across Spark's Python workers (``df.write``)
------------------------------------------------------------------

Spark runs a Python data source writer in three kinds of processes: ``writer()`` in a planning
worker that returns as soon as the writer is pickled, ``write()`` in executor tasks, and
``commit()`` / ``abort()`` in yet another worker with an unpickled copy. No Python object lives
through the job, so:

1. ``writer()`` (:func:`create_writer`, driver host): checks the table and the DataFrame's schema
   (errors here open nothing), opens the transaction, allocates the write id and waits for the
   lock (``Transaction.begin``), then starts a **detached heartbeat helper process** and hands the
   transaction over to it (``Transaction.detach``: the planning worker's own heartbeat thread
   stops and its connection closes without aborting). The writer keeps only picklable data: the
   :class:`~spark_hive_acid.metastore.transaction.TransactionHandle` (ids and lock id), the table
   layout and the helper's pid and stop file.
2. The helper (``python -m spark_hive_acid.write.metastore_mode``, its own session, double-forked
   so nobody has to reap it) heartbeats the txn and its lock every ``heartbeatInterval`` (default
   ``hive.txn.timeout / 3``). It stops when (a) its stop file appears (commit/abort), (b) the
   metastore says the txn is gone (committed, aborted, timed out), or (c) the process it watches
   dies: the Spark driver JVM (the nearest ``java`` ancestor of the planning worker); then it also
   aborts the txn, because no commit can follow.
3. ``write()`` (executors) stages files under ``<table location>/_hiveacid_staging/<W>/`` with W
   from the handle; tasks never talk to the metastore.
4. ``commit()`` (driver host): reconnects with the handle (``Transaction.resume``, which
   heartbeats once to prove the txn is still open and then runs a heartbeat thread in this
   worker), stops the helper, renames the files of the successful task attempts into place,
   registers new partitions (``add_partitions``) and reports the written ones
   (``add_dynamic_partitions``), and commits. Any failure before ``commit_txn`` aborts the txn and
   removes the directories it had created. ``abort()`` stops the helper, aborts the txn and removes
   the staging directory. Spark calls ``abort()`` when the job or ``commit()`` fails.

Limits: a driver killed between ``writer()`` and ``commit()`` leaves the txn open until the helper
notices (one poll, 0.25 s) and aborts it; a helper killed on its own (``kill -9``) stops the
heartbeat, so a long job can be timed out by the metastore's house keeper and its commit is then
refused with TransactionAbortedError. The Spark conf ``spark.hadoop.hive.metastore.uris`` is not
visible to the data source's Python workers: pass the ``metastoreUri`` option (or use
``$HIVE_CONF_DIR/hive-site.xml``); :class:`MetastoreTable` methods read the Spark conf themselves.

DELETE / UPDATE / MERGE and the table API run on the driver's own Python process, which lives for
the whole job: they use a plain :class:`Transaction` with its heartbeat thread.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterator, List, Mapping, Optional, Sequence

if __name__ == "__main__":  # the heartbeat helper needs no Spark: keep it small and quick
    DataSourceArrowWriter = WriterCommitMessage = object
else:
    from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from ..acid import txnlog  # staging_dir() only: a path; the log itself is never written here
from ..exceptions import (
    HiveAcidError,
    InvalidOptionError,
    MetastoreError,
    NotAnAcidTableError,
    UnsupportedTypeError,
)
from ..metastore.api import (
    OPTION_HEARTBEAT,
    OPTION_LOCK_TIMEOUT,
    OPTION_TIMEOUT,
    parse_table_name,
    table_from_options,
)
from ..metastore.client import MetastoreClient
from ..exceptions import (
    MetastoreNotConfiguredError,
    TransactionAbortedError,
)
from ..metastore.model import TableInfo
from ..metastore.transaction import (
    DEFAULT_LOCK_TIMEOUT_S,
    Operation,
    Transaction,
    TransactionHandle,
)
from ..metastore.uris import OPTION_URI, SPARK_CONF_KEYS, resolve_metastore_uris
from .. import options as opt

log = logging.getLogger(__name__)

HELPER_POLL_S = 0.25
HELPER_START_TIMEOUT_S = 120.0
_HELPER_MARKER = "spark_hive_acid.write.metastore_mode"


# --- options, URIs, table checks ---------------------------------------------------------------
def spark_conf_of(spark: Any) -> dict[str, str]:
    """The Spark conf entries that name a metastore (``spark.hadoop.hive.metastore.uris`` ...)."""
    out = {}
    for key in SPARK_CONF_KEYS:
        try:
            value = spark.conf.get(key, None)
        except Exception:  # noqa: BLE001 - a conf that cannot be read is simply not set
            value = None
        if value:
            out[key] = value
    return out


def resolve_uris(options: Mapping[str, str], spark_conf: Optional[Mapping[str, str]] = None,
                 *, in_worker: bool = False) -> str:
    """The metastore URIs (comma-separated) from the option, the Spark conf or hive-site.xml."""
    try:
        return ",".join(resolve_metastore_uris(options, spark_conf))
    except MetastoreNotConfiguredError as e:
        if not in_worker:
            raise
        raise MetastoreNotConfiguredError(
            f"{e}. Note: the Spark conf is not visible to a data source's Python worker; pass "
            f".option('{OPTION_URI}', 'thrift://host:9083') (e.g. spark.conf.get("
            f"'{SPARK_CONF_KEYS[0]}')) or set HIVE_CONF_DIR") from e


def _client(options: Mapping[str, str], uris: str) -> MetastoreClient:
    return MetastoreClient(uris, timeout=opt.get_seconds(options, OPTION_TIMEOUT, 60.0) or 60.0)


def writable_table(client: MetastoreClient, db: str, tbl: str) -> TableInfo:
    """The table, if this library can write it: transactional, full ACID, ORC.

    Raises TableNotFoundError, NotAnAcidTableError (suggesting Spark's own Hive support) or
    UnsupportedTypeError.
    """
    try:
        info = client.get_table(db, tbl)
    except NotAnAcidTableError as e:
        raise NotAnAcidTableError(
            f"{e}; to write it use Spark's Hive support (df.write.insertInto('{db}.{tbl}')), "
            "not the hiveacid format") from e
    if info.is_insert_only:
        raise UnsupportedTypeError(
            f"Table {info.full_name} is an insert-only transactional table "
            "(transactional_properties=insert_only): hiveacid writes full-ACID ORC tables only")
    fmt = (info.input_format or "").lower()
    if fmt and "orc" not in fmt:
        raise UnsupportedTypeError(
            f"Table {info.full_name} is stored as {info.input_format}: full-ACID tables must be ORC")
    return info


def table_layout(info: TableInfo, options: Mapping[str, str]):
    """``(TableLayout, TableSpec, fs, location path)`` of a metastore table."""
    from ..io.registry import get_filesystem
    from ..read.scan import layout_of
    from .acid_file import orc_codec
    from .spark_writer import table_spec

    layout = layout_of(info)
    compression = opt.get(options, "compression") or info.parameters.get("orc.compress")
    if compression:
        orc_codec(compression)  # validates
        layout.compression = compression.upper()
    if not info.location:
        raise MetastoreError(f"Table {info.full_name} has no location in the metastore")
    fs, path = get_filesystem(info.location, options)
    return layout, table_spec(path, layout), fs, path


def _check_creation_options(options: Mapping[str, str], info: TableInfo) -> None:
    """Table-creation options are not used by name: refuse those that contradict the metastore."""

    def differs(given: list[str], actual: Sequence[str]) -> bool:
        return [g.lower() for g in given] != [a.lower() for a in actual]

    part = opt.get_columns(options, "partitionBy")
    if part and differs(part, info.partition_names):
        raise InvalidOptionError(
            f"Table {info.full_name} is partitioned by ({', '.join(info.partition_names)}) in the "
            f"metastore, not ({', '.join(part)}); drop the partitionBy option")
    bucket = opt.get_columns(options, "bucketBy")
    if bucket and differs(bucket, info.bucket_cols):
        raise InvalidOptionError(
            f"Table {info.full_name} is bucketed by ({', '.join(info.bucket_cols) or 'nothing'}) "
            f"in the metastore, not ({', '.join(bucket)}); drop the bucketBy option")
    n = opt.get(options, "numBuckets")
    if n and str(n).strip() != str(info.num_buckets):
        raise InvalidOptionError(
            f"Table {info.full_name} has {info.num_buckets} buckets in the metastore, not {n}")


def _partition_dirs(client: MetastoreClient, info: TableInfo, options: Mapping[str, str]
                    ) -> dict[str, str]:
    """``{partition name: directory}`` of the partitions the metastore knows."""
    from ..io.registry import get_filesystem

    if not info.is_partitioned:
        return {}
    return {p.name: get_filesystem(p.location, options)[1]
            for p in client.list_partitions(info.db, info.name) if p.location}


# --- resuming a transaction in another process ----------------------------------------------------
def resume_transaction(handle: TransactionHandle, table: TableInfo, options: Mapping[str, str],
                       heartbeat_interval: float) -> Transaction:
    """:meth:`Transaction.resume` with a new connection to the handle's metastore."""
    return Transaction.resume(_client(options, ",".join(handle.uris)), handle, table=table,
                              heartbeat_interval=heartbeat_interval)


def publish_and_commit(txn: Transaction, fs: Any, spec: Any, staged: Sequence[Any], *,
                       empty_bases: Sequence[str] = (),
                       partition_dirs: Optional[Mapping[str, str]] = None):
    """Rename staged files into place, register partitions, commit the metastore txn.

    On any failure before the commit went through, the txn is aborted and the directories created
    here removed; the staging directory is always removed. Returns the ``CommitResult``.
    """
    from .commit import publish

    created: list[str] = []
    known = set(partition_dirs or {})
    try:
        result = publish(fs, spec, txn, staged, empty_bases=empty_bases,
                         partition_dirs=partition_dirs, record_intent=created.extend)
        parts = [p for p in result.partitions if p]
        if parts:
            new = [p for p in parts if p not in known]
            if new:
                txn.add_partitions(new)
            txn.record_partitions(parts)
        txn.commit()
    except BaseException as e:
        if txn.state == "open":
            txn.abort(reason=f"{type(e).__name__}: {e}")
        if txn.state != "unknown":  # aborted: its directories are garbage
            for d in created:
                _quiet_delete(fs, d)
        raise
    finally:
        _quiet_delete(fs, txnlog.staging_dir(fs, spec.table_path, txn.write_id))
    return result


def _quiet_delete(fs: Any, path: str) -> None:
    try:
        fs.delete(path, recursive=True)
    except Exception as e:  # noqa: BLE001 - cleanup must not hide the real outcome
        log.warning("could not remove %s: %s", path, e)


# --- the heartbeat helper process ------------------------------------------------------------------
def _proc_info(pid: int) -> Optional[tuple[str, int, Optional[int]]]:
    """``(command name, parent pid, start time)`` of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("utf-8", "replace")
        comm = data[data.index("(") + 1:data.rindex(")")]
        rest = data[data.rindex(")") + 2:].split()
        if rest[0] in ("Z", "X", "x"):
            return None  # a zombie has ended: nobody reaped it yet
        return comm, int(rest[1]), int(rest[19])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, IndexError):
        pass
    try:  # no /proc (macOS ...)
        out = subprocess.run(["ps", "-o", "ppid=,state=,comm=", "-p", str(pid)],
                             capture_output=True, text=True, timeout=10)
        fields = out.stdout.split(None, 2)
        if len(fields) < 3 or fields[1].startswith("Z"):
            return None
        return os.path.basename(fields[2].strip()), int(fields[0]), None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def _in_spark_worker() -> bool:
    return (os.environ.get("SPARK_PYTHON_RUNTIME") == "PYTHON_WORKER"
            or "PYTHON_WORKER_FACTORY_SECRET" in os.environ)


def owner_process() -> tuple[int, Optional[int]]:
    """The process whose death ends the job: in a Spark Python worker the driver JVM (nearest
    ``java`` ancestor; else the worker's parent, the PySpark daemon, which exits with the JVM);
    elsewhere this process. Returns ``(pid, start time or None)``."""
    if _in_spark_worker():
        pid = os.getppid()
        for _ in range(12):
            info = _proc_info(pid) if pid > 1 else None
            if info is None:
                break
            if info[0].lower().startswith("java"):
                return pid, info[2]
            pid = info[1]
        parent = os.getppid()
        info = _proc_info(parent)
        return parent, info[2] if info else None
    info = _proc_info(os.getpid())
    return os.getpid(), info[2] if info else None


def _alive(pid: int, start: Optional[int]) -> bool:
    """True while ``pid`` runs (not a zombie) and, if ``start`` is known, is the same process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    info = _proc_info(pid)
    if info is None:
        return False  # gone or a zombie
    return start is None or info[2] is None or info[2] == start  # else the pid was reused


@dataclass(frozen=True)
class HeartbeatHelper:
    """A running helper: its pid (and start time) and the file that stops it."""

    pid: int
    start: Optional[int]
    stop_file: str

    def alive(self) -> bool:
        return _alive(self.pid, self.start)

    def stop(self, wait_s: float = 5.0) -> None:
        """Ask the helper to stop (never aborts the txn) and wait a little for it to go."""
        try:
            with open(self.stop_file, "w") as f:
                f.write("stop\n")
        except OSError:
            pass  # its directory is gone: the helper has already ended
        deadline = time.monotonic() + wait_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)


def spawn_heartbeat(handle: TransactionHandle, interval: float,
                    timeout: float, owner: Optional[tuple[int, Optional[int]]] = None
                    ) -> HeartbeatHelper:
    """Start the detached helper that heartbeats ``handle``'s txn; returns once it heartbeated."""
    watch_pid, watch_start = owner or owner_process()
    work = tempfile.mkdtemp(prefix=f"hiveacid-txn{handle.txn_id}-")
    cfg = {"uris": list(handle.uris), "txn": handle.txn_id, "lock": handle.lock_id,
           "interval": interval, "timeout": timeout, "watch_pid": watch_pid,
           "watch_start": watch_start, "dir": work,
           "name": f"{handle.db}.{handle.table}"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON_WORKER_FACTORY")}
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    with open(os.path.join(work, "helper.log"), "ab") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", _HELPER_MARKER, json.dumps(cfg)], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=errlog, env=env, close_fds=True,
            start_new_session=True)
    try:
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        line = b""
        deadline = time.monotonic() + HELPER_START_TIMEOUT_S
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            line += chunk
        sel.close()
    finally:
        proc.stdout.close()
        try:
            proc.wait(timeout=10)  # the intermediate process exits right after forking
        except subprocess.TimeoutExpired:
            pass
    text = line.decode("utf-8", "replace").strip()
    if not text.startswith("ready "):
        try:
            with open(os.path.join(work, "helper.log"), "rb") as f:
                detail = f.read()[-2000:].decode("utf-8", "replace").strip()
        except OSError:
            detail = ""
        shutil.rmtree(work, ignore_errors=True)
        raise MetastoreError(
            f"Could not start the heartbeat process for txn {handle.txn_id} on "
            f"{handle.db}.{handle.table}: {text or 'no answer'} {detail}".strip())
    pid = int(text.split()[1])
    info = _proc_info(pid)
    return HeartbeatHelper(pid, info[2] if info else None, os.path.join(work, "stop"))


def _helper_main(raw: str) -> None:
    """The helper process: see the module docstring."""
    cfg = json.loads(raw)
    if hasattr(os, "fork") and os.fork() > 0:
        os._exit(0)  # the intermediate: its parent reaps it at once; the child is orphaned
    work, txn, lock = cfg["dir"], int(cfg["txn"]), cfg.get("lock")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s heartbeat txn {txn} %(levelname)s %(message)s")
    client = MetastoreClient(cfg["uris"], timeout=float(cfg["timeout"]))
    try:
        client.heartbeat(txn, lock)
    except Exception as e:  # noqa: BLE001
        print(f"error {type(e).__name__}: {e}", flush=True)
        os._exit(1)
    try:
        print(f"ready {os.getpid()}", flush=True)
    except OSError:  # nobody listens any more (the worker died): carry on, the loop decides
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    stop_file = os.path.join(work, "stop")
    interval = max(float(cfg["interval"]), 0.05)
    watch_pid, watch_start = int(cfg["watch_pid"]), cfg.get("watch_start")
    next_beat = time.monotonic() + interval
    reason = "unexpected error"
    try:
        while True:
            if os.path.exists(stop_file):
                reason = "stopped by commit/abort"
                break
            if not _alive(watch_pid, watch_start):
                if os.path.exists(stop_file):  # commit/abort began just before the owner died
                    reason = "stopped by commit/abort"
                    break
                reason = f"owner process {watch_pid} is gone: aborted the txn"
                try:
                    client.abort_txn(txn)
                except Exception as e:  # noqa: BLE001 - committed meanwhile, or unreachable
                    log.warning("abort after the owner died failed: %s", e)
                break
            if time.monotonic() >= next_beat:
                try:
                    client.heartbeat(txn, lock)
                except TransactionAbortedError as e:
                    reason = f"txn ended: {e}"
                    break
                except Exception as e:  # noqa: BLE001 - keep trying until told to stop
                    if lock is not None and "NoSuchLock" in str(e):
                        lock = None  # Hive checks the lock first; ask about the txn alone
                        continue
                    log.warning("heartbeat failed (%s); retrying", e)
                next_beat = time.monotonic() + interval
            time.sleep(min(HELPER_POLL_S, interval))
    finally:
        log.info("heartbeat helper ends: %s", reason)
        client.close()
        if reason != "unexpected error":  # else keep helper.log for the post-mortem
            shutil.rmtree(work, ignore_errors=True)


# --- the data source writer (df.write by name) ------------------------------------------------------
@dataclass
class MetastoreCommitMessage(WriterCommitMessage):
    task: int
    attempt: int
    files: list


def create_writer(options: Mapping[str, str], schema: Any, overwrite: bool
                  ) -> "MetastoreArrowWriter":
    """``HiveAcidDataSource.writer`` for the ``table`` option: runs in Spark's planning worker."""
    from .spark_writer import spark_to_arrow_schema
    from .schema import map_columns
    from .task_writer import InsertTarget

    opts = {str(k).lower(): str(v) for k, v in options.items()}
    if (opts.get("path") or "").strip():
        raise InvalidOptionError(f"Give either a path ({opts['path']}) or option table "
                                 f"({opts.get('table')}), not both")
    db, tbl = table_from_options(opts)
    mode = (opts.get("partitionoverwritemode") or "static").strip().lower()
    if mode not in ("static", "dynamic"):
        raise InvalidOptionError(
            f"Option partitionOverwriteMode must be 'static' or 'dynamic', not '{mode}'")
    uris = resolve_uris(opts, in_worker=_in_spark_worker())
    opts["metastoreuri"] = uris
    with _client(opts, uris) as client:
        info = writable_table(client, db, tbl)
    _check_creation_options(opts, info)
    layout, spec, _, _ = table_layout(info, opts)
    mapping = map_columns(layout, spark_to_arrow_schema(schema), table=info.full_name)
    operation = Operation.INSERT_OVERWRITE if overwrite else Operation.INSERT
    txn = Transaction(_client(opts, uris), info.db, info.name, operation, table=info,
                      lock_timeout=opt.get_seconds(opts, OPTION_LOCK_TIMEOUT,
                                                 DEFAULT_LOCK_TIMEOUT_S) or DEFAULT_LOCK_TIMEOUT_S,
                      heartbeat_interval=opt.get_seconds(opts, OPTION_HEARTBEAT, None),
                      owns_client=True)
    txn.begin()
    try:
        handle = txn.handle()
        interval = float(txn.heartbeat_interval or 60.0)
        helper = spawn_heartbeat(handle, interval, txn.client.timeout)
    except BaseException as e:
        txn.abort(reason=f"could not hand the txn over: {e}")
        raise
    try:
        target = InsertTarget(handle.write_id, 0, base=overwrite,
                              statement_per_task=spec.bucketed and not overwrite)
        writer = MetastoreArrowWriter(info, opts, spec, mapping, handle, interval,
                                      helper, target, overwrite and mode == "static")
        # Spark pickles the writer right after this returns and would not call abort() if that
        # failed: make sure it cannot, while the txn can still be aborted here.
        pickle.dumps(writer)
    except BaseException as e:
        helper.stop()
        txn.abort(reason=f"could not build the writer: {e}")
        raise
    txn.detach()
    log.info("txn %d (write id %d) %s into %s handed to heartbeat process %d", handle.txn_id,
             handle.write_id, operation.value, info.full_name, helper.pid)
    return writer


class MetastoreArrowWriter(DataSourceArrowWriter):
    """Picklable: plain data only; each process rebuilds its file system and connections."""

    def __init__(self, table: TableInfo, options: dict, spec: Any, mapping: Any,
                 handle: TransactionHandle, heartbeat_interval: float,
                 helper: HeartbeatHelper, target: Any, replace_all: bool):
        self.table = table
        self.options = options
        self.spec = spec
        self.mapping = mapping
        self.handle = handle
        self.heartbeat_interval = heartbeat_interval
        self.helper = helper
        self.target = target
        self.replace_all = replace_all

    @property
    def write_id(self) -> int:
        return self.handle.write_id

    def _fs(self):
        from ..io.registry import get_filesystem

        return get_filesystem(self.table.location, self.options)[0]

    def write(self, iterator: Iterator[Any]) -> MetastoreCommitMessage:
        from .task_writer import NO_HEARTBEAT
        from .spark_writer import stage_task

        task, attempt, files = stage_task(self._fs(), self.spec, self.target, self.write_id,
                                          self.mapping, iterator, heartbeat=NO_HEARTBEAT)
        return MetastoreCommitMessage(task, attempt, files)

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        fs = self._fs()
        staged = [f for m in messages if isinstance(m, MetastoreCommitMessage) for f in m.files]
        try:
            txn = resume_transaction(self.handle, self.table, self.options,
                                     self.heartbeat_interval)
        except BaseException:
            self.helper.stop()
            _quiet_delete(fs, txnlog.staging_dir(fs, self.spec.table_path, self.write_id))
            raise
        self.helper.stop()
        try:
            dirs = _partition_dirs(txn.client, self.table, self.options)
            empty: list[str] = []
            if self.target.base:
                written = {f.partition for f in staged}
                if self.spec.partition_names:
                    if self.replace_all:
                        empty = sorted(p for p in dirs if p not in written)
                elif "" not in written:
                    empty = [""]
        except BaseException as e:
            txn.abort(reason=f"{type(e).__name__}: {e}")
            _quiet_delete(fs, txnlog.staging_dir(fs, self.spec.table_path, self.write_id))
            raise
        result = publish_and_commit(txn, fs, self.spec, staged, empty_bases=empty,
                                    partition_dirs=dirs)
        log.info("txn %d (write id %d) committed into %s: %s", self.handle.txn_id,
                 self.write_id, self.table.full_name, result.metrics)

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        self.helper.stop()
        fs = self._fs()
        try:
            client = _client(self.options, ",".join(self.handle.uris))
            with client:
                client.abort_txn(self.handle.txn_id)
            log.info("aborted txn %d on %s (Spark job failed)", self.handle.txn_id,
                     self.table.full_name)
        except TransactionAbortedError:
            log.info("txn %d was already aborted or gone", self.handle.txn_id)
        except MetastoreError as e:
            log.error("could not abort txn %d on %s (%s); its heartbeat has stopped, so the "
                      "metastore times it out (hive.txn.timeout)", self.handle.txn_id,
                      self.table.full_name, e)
        finally:
            _quiet_delete(fs, txnlog.staging_dir(fs, self.spec.table_path, self.write_id))


# --- the table API (driver) ---------------------------------------------------------------------------
def _table_class():
    from ..table import HiveAcidTable

    return HiveAcidTable


def _make_metastore_table_class():
    HiveAcidTable = _table_class()

    class MetastoreTable(HiveAcidTable):
        """A Hive ACID table named in the Hive Metastore (see ``HiveAcidTable.forName``).

        DELETE/UPDATE/MERGE run as one metastore transaction each, driven from this (driver)
        process: open txn, write id, SHARED_WRITE lock, heartbeat thread; the target is read at
        the transaction's snapshot; delete/insert deltas carry the txn's write id; commit (or
        abort on any failure). Conflicts surface as the metastore's errors (WriteConflictError...).
        """

        def __init__(self, spark: Any, db: str, name: str, options: Mapping[str, str],
                     alias: Optional[str] = None):
            self._spark = spark
            self._db, self._tbl = db, name
            self._options = {str(k).lower(): str(v) for k, v in options.items()}
            self._alias = alias
            self._path = None

        # -- identity -----------------------------------------------------------------------
        @property
        def name(self) -> str:
            return f"{self._db}.{self._tbl}"

        @property
        def metastore_uri(self) -> str:
            return self._options["metastoreuri"]

        def __repr__(self) -> str:
            return f"HiveAcidTable.forName({self.name!r}, metastore={self.metastore_uri})"

        def alias(self, name: str) -> "MetastoreTable":
            return MetastoreTable(self._spark, self._db, self._tbl, self._options, name)

        def _client(self) -> MetastoreClient:
            return _client(self._options, self.metastore_uri)

        def info(self) -> TableInfo:
            """The table's current metastore entry."""
            with self._client() as c:
                return c.get_table(self._db, self._tbl)

        # -- reading ------------------------------------------------------------------------
        def _reader(self):
            opts = {k: v for k, v in self._options.items() if k not in ("path", "table")}
            return (self._spark.read.format("hiveacid").options(**opts)
                    .option("table", self.name).option(OPTION_URI, self.metastore_uri))

        def _load(self, reader):  # by name: the reader's options name the table, not a path
            return reader.load()

        def history(self):
            """One row per write id found in the table's directories (the metastore keeps no
            per-table history: committed txns leave ``TXNS``), newest first. ``state`` is the
            write id's state in the metastore's current snapshot (committed / open / aborted);
            ``operation`` is inferred from the directories (insert, insert_overwrite, delete,
            update/merge, compaction); times and row counts are not known (null)."""
            from ..acid.names import parse_acid_dir

            with self._client() as c:
                info = c.get_table(self._db, self._tbl)
                write_ids, _ = c.read_snapshot(info.db, info.name)
                dirs = _partition_dirs(c, info, self._options)
            _, _, fs, root = table_layout(info, self._options)
            places = [("", root)] if not info.is_partitioned else sorted(dirs.items())
            by_id: dict[tuple[int, int], dict] = {}
            for part, where in places:
                try:
                    children = fs.list_dir(where)
                except HiveAcidError:
                    continue
                for ch in children:
                    d = parse_acid_dir(ch.name) if ch.is_dir else None
                    if d is None:
                        continue
                    key = (d.min_write_id, d.max_write_id)
                    e = by_id.setdefault(key, {"kinds": set(), "partitions": set()})
                    e["kinds"].add(d.kind)
                    if part:
                        e["partitions"].add(part)
            rows = []
            for (lo, hi), e in sorted(by_id.items(), key=lambda kv: (-kv[0][1], -kv[0][0])):
                kinds = e["kinds"]
                if lo != hi and "base" not in kinds:
                    op = "compaction"
                elif "base" in kinds:
                    op = "insert_overwrite"
                elif kinds == {"delta"}:
                    op = "insert"
                elif kinds == {"delete_delta"}:
                    op = "delete"
                else:
                    op = "update/merge"
                if write_ids.is_aborted(hi):
                    state = "aborted"
                elif write_ids.is_open(hi) or hi > write_ids.high_watermark:
                    state = "open"
                else:
                    state = "committed"
                rows.append((hi, state, op, None, None, sorted(e["partitions"]), None, None,
                             None if lo == hi else f"covers write ids {lo}..{hi}"))
            schema = ("writeId long, state string, operation string, startedAt timestamp, "
                      "finishedAt timestamp, partitions array<string>, numInsertedRows long, "
                      "numDeletedRows long, reason string")
            return self._spark.createDataFrame(rows, schema)

        # -- DML ------------------------------------------------------------------------------
        def _run(self, operation: str, build) -> dict:
            from . import dml

            opts = self._options
            with self._client() as c:
                info = writable_table(c, self._db, self._tbl)
            layout, spec, fs, _ = table_layout(info, opts)
            txn = Transaction(
                self._client(), info.db, info.name, operation, table=info,
                lock_timeout=opt.get_seconds(opts, OPTION_LOCK_TIMEOUT, DEFAULT_LOCK_TIMEOUT_S)
                or DEFAULT_LOCK_TIMEOUT_S,
                heartbeat_interval=opt.get_seconds(opts, OPTION_HEARTBEAT, None), owns_client=True)
            txn.begin()
            try:
                write_ids, txns = txn.read_snapshot()

                def load(columns=None):
                    return self._load(self._target_reader(columns)
                                      .option("validWriteIds", write_ids.to_string())
                                      .option("validTxns", txns.to_string())
                                      ).alias(self._alias or "target")

                plan = build(load, spec)
                staged = dml.stage_dml(self._spark, info.location, opts, spec, layout,
                                       txn.write_id, plan, txnlog_heartbeat=False)
                dirs = _partition_dirs(txn.client, info, opts)
                result = publish_and_commit(txn, fs, spec, staged, partition_dirs=dirs)
            except BaseException as e:
                txn.abort(reason=f"{operation} failed: {type(e).__name__}: {e}")
                _quiet_delete(fs, txnlog.staging_dir(fs, spec.table_path, txn.write_id or 0))
                raise
            log.info("%s on %s committed as txn %d (write id %d): %s", operation, self.name,
                     txn.txn_id, txn.write_id, result.metrics)
            return dict(result.metrics, writeId=txn.write_id, txnId=txn.txn_id)

        def abortStaleTransactions(self, olderThanSeconds: Optional[float] = None) -> list:
            raise InvalidOptionError(
                "abortStaleTransactions is for path-mode tables. Metastore transactions are "
                "timed out by the metastore's house keeper (hive.txn.timeout); an administrator "
                "can abort one with MetastoreClient.abort_txns([id]) (Hive: ABORT TRANSACTIONS)")

        # -- compaction -----------------------------------------------------------------------
        def requestCompaction(self, kind: str = "major", partition: Any = None):
            """Queue a ``major`` or ``minor`` compaction (of ``partition`` for a partitioned
            table: ``{"ds": "x"}``, a value list or ``"ds=x"``). Returns
            ``CompactionRequestResult(id, state, accepted)``; a compactor worker on some
            metastore (``hive.compactor.worker.threads`` > 0) must run it."""
            with self._client() as c:
                return c.request_compaction(self._db, self._tbl, partition, kind)

        def compactions(self):
            """The metastore's compaction queue/history for this table (``SHOW COMPACTIONS``)."""
            with self._client() as c:
                infos = c.compactions(self._db, self._tbl)
            rows = [(i.id, i.partition, (i.type or "").lower(), i.state, i.worker_id, i.start_ms,
                     i.run_as, i.highest_txn_id, i.end_ms) for i in infos]
            schema = ("id long, partition string, type string, state string, workerId string, "
                      "startMs long, runAs string, highestTxnId long, endMs long")
            return self._spark.createDataFrame(rows, schema)

    MetastoreTable.__qualname__ = "MetastoreTable"
    return MetastoreTable


_CLASS: Any = None


def metastore_table_class():
    """The ``MetastoreTable`` class (a ``HiveAcidTable`` subclass; built on first use to avoid
    an import cycle with ``spark_hive_acid.table``)."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _make_metastore_table_class()
    return _CLASS


def __getattr__(name: str) -> Any:
    if name == "MetastoreTable":
        return metastore_table_class()
    raise AttributeError(name)


def table_options(spark: Any, options: Optional[Mapping[str, str]]) -> dict[str, str]:
    """Options with ``metastoreuri`` resolved from the options, the Spark conf or hive-site."""
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    opts["metastoreuri"] = resolve_uris(opts, spark_conf_of(spark))
    return opts


def for_name(spark: Any, name: str, options: Optional[Mapping[str, str]] = None):
    """``HiveAcidTable.forName``: raises TableNotFoundError / NotAnAcidTableError /
    MetastoreUnavailableError (naming the URI) / MetastoreNotConfiguredError."""
    from ..table import ensure_registered

    opts = table_options(spark, options)
    db, tbl = parse_table_name(name)
    with _client(opts, opts["metastoreuri"]) as c:
        info = c.get_table(db, tbl)
    ensure_registered(spark)
    return metastore_table_class()(spark, info.db, info.name, opts)


def create_table(spark: Any, name: str, schema: Any, *,
                 partitionBy: Optional[Sequence[str] | str] = None,
                 bucketBy: Optional[Sequence[str] | str] = None,
                 numBuckets: Optional[int] = None, properties: Optional[Mapping[str, str]] = None,
                 location: Optional[str] = None, bucketingVersion: Optional[int] = None,
                 compression: Optional[str] = None, ifNotExists: bool = False,
                 options: Optional[Mapping[str, str]] = None):
    """``HiveAcidTable.create``: register a transactional (full-ACID) ORC table."""
    from pyspark.sql.types import StructType

    from .options import WriteOptions
    from .spark_writer import spark_to_arrow_schema
    from .table_setup import layout_from_schema

    opts = table_options(spark, options)
    db, tbl = parse_table_name(name)

    def cols(v: Optional[Sequence[str] | str]) -> list[str]:
        if v is None:
            return []
        return [c.strip() for c in v.split(",") if c.strip()] if isinstance(v, str) else list(v)

    if isinstance(schema, str):
        schema = spark.createDataFrame([], schema).schema
    if not isinstance(schema, StructType):
        raise InvalidOptionError("create() needs schema= a StructType or a DDL string "
                                 "('id int, name string')")
    buckets, nb = cols(bucketBy), numBuckets
    if buckets and not nb:
        raise InvalidOptionError("bucketBy needs numBuckets (a positive integer)")
    if nb and not buckets:
        raise InvalidOptionError("numBuckets needs bucketBy (the CLUSTERED BY columns)")
    if compression:
        from .acid_file import orc_codec

        orc_codec(compression)
    wopts = WriteOptions(path=name, partition_by=cols(partitionBy), bucket_by=buckets,
                         num_buckets=nb, bucketing_version=bucketingVersion,
                         compression=compression.upper() if compression else None,
                         table_properties=dict(properties or {}))
    layout = layout_from_schema(wopts, spark_to_arrow_schema(schema))
    props = dict(layout.properties)
    if compression:
        props.setdefault("orc.compress", compression.upper())
    with _client(opts, opts["metastoreuri"]) as c:
        if c.table_exists(db, tbl):
            if not ifNotExists:
                raise InvalidOptionError(
                    f"Table {db}.{tbl} already exists in the Hive Metastore {c.uri}; use "
                    "HiveAcidTable.forName, or create(..., ifNotExists=True)")
        else:
            c.create_table(db, tbl, layout.columns, layout.partition_columns,
                           layout.bucket_columns, layout.num_buckets or -1, props, location)
            log.info("created transactional table %s.%s in %s", db, tbl, c.uri)
    return for_name(spark, f"{db}.{tbl}", opts)


if __name__ == "__main__":  # the heartbeat helper
    _helper_main(sys.argv[1])
