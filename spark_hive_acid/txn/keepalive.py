"""Keeping an open transaction alive: the one heartbeat mechanism of every writer.

A transaction that stops showing signs of life is aborted by others (path mode: the next writer
after ``txnTimeoutSeconds``; metastore: the house keeper after ``hive.txn.timeout``). What "a sign of
life" is belongs to the transaction (a :class:`Beat`: a heartbeat file, or the metastore's
``heartbeat`` call); *when* to send one is decided here, in one loop (:func:`run_loop`) that runs

* in a thread of the process that holds the transaction (:class:`KeepAliveThread`: the driver
  while a DML job runs, the commit worker while it commits);
* in a detached helper process (:func:`spawn_keepalive_process`) while a ``df.write`` job runs:
  Spark's planning worker returns at once and no Python process lives through the job, so the
  helper heartbeats until the commit (or abort) stops it, and aborts the transaction itself if the
  process it watches (the Spark driver) dies first;
* throttled inside executor tasks (:class:`TaskHeartbeat`), where a path-mode write id has no
  other process to keep it alive.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

from ..exceptions import MetastoreError, TransactionAbortedError
from .processes import is_alive, process_info

log = logging.getLogger(__name__)

PROCESS_POLL_S = 0.25
#: How long an orphaned transaction's keeper keeps trying to abort it (the metastore may be down).
ORPHAN_ABORT_FOR_S = 3600.0
PROCESS_START_TIMEOUT_S = 120.0
MIN_INTERVAL_S = 0.05
HELPER_MODULE = "spark_hive_acid.txn.keepalive"
STOP_FILE, ABORT_FILE = "stop", "abort"


class Beating(Protocol):
    """What a task heartbeat keeps alive: a transaction, or a read lease."""

    def beat(self) -> None:
        """Send one heartbeat; raise TransactionAbortedError once the transaction is gone (committed,
        aborted or timed out); other errors are retried at the next interval."""


class Beat(Beating, Protocol):
    """One transaction's sign of life, which the keep-alive also aborts when its owner dies."""

    def abort_orphan(self, reason: str) -> Optional[bool]:
        """Abort the transaction because its owner died or gave up; False when that could not be
        confirmed yet (the caller tries again), True or None when it is done."""


def run_loop(target: Beat, interval: float, stop: Callable[[float], bool],
             owner_alive: Optional[Callable[[], bool]] = None,
             on_beat: Optional[Callable[[], None]] = None,
             on_gone: Optional[Callable[[BaseException], None]] = None) -> str:
    """Heartbeat ``target`` every ``interval`` seconds until ``stop(timeout)`` says so (it waits up to
    ``timeout`` seconds for the stop signal), the transaction is gone (``on_gone(error)``), or
    ``owner_alive()`` turns false (then the transaction is aborted: no commit can follow).
    Returns why it ended."""
    interval = max(float(interval), MIN_INTERVAL_S)
    poll = min(PROCESS_POLL_S, interval) if owner_alive is not None else interval
    next_beat = time.monotonic() + interval
    while True:
        if stop(max(0.0, min(poll, next_beat - time.monotonic()))):
            return "stopped"
        if owner_alive is not None and not owner_alive():
            if stop(0.0):  # commit/abort began just before the owner died
                return "stopped"
            return abort_until_done(target, "the process that owned it is gone")
        if time.monotonic() >= next_beat:
            try:
                target.beat()
                if on_beat is not None:
                    on_beat()
            except TransactionAbortedError as e:
                if on_gone is not None:
                    on_gone(e)
                return f"transaction ended: {e}"
            except Exception as e:  # noqa: BLE001 - keep trying until told to stop
                log.warning("heartbeat failed (%s); retrying", e)
            next_beat = time.monotonic() + interval


def abort_until_done(target: Beat, reason: str, give_up_after: float = ORPHAN_ABORT_FOR_S) -> str:
    """Abort ``target``'s transaction, retrying (with growing pauses) until it is confirmed."""
    deadline = time.monotonic() + give_up_after
    pause = 1.0
    while True:
        try:
            if target.abort_orphan(reason) is not False:
                return f"aborted: {reason}"
        except Exception as e:  # noqa: BLE001 - keep trying: leaving it open keeps its lock
            log.warning("abort failed (%s); retrying", e)
        if time.monotonic() + pause > deadline:
            log.error("gave up aborting after %.0f s; the metastore's house keeper must time "
                      "the transaction out", give_up_after)
            return "gave up aborting"
        time.sleep(pause)
        pause = min(pause * 2, 30.0)


class KeepAliveThread:
    """Heartbeats in a daemon thread of this process until :meth:`stop`."""

    def __init__(self, target: Beat, interval: float, name: str):
        self.target, self.interval, self.name = target, float(interval), name
        self.beats = 0
        self.error: Optional[BaseException] = None  # why the transaction was lost, if it was
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "KeepAliveThread":
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        def counted() -> None:
            self.beats += 1

        def gone(e: BaseException) -> None:
            log.error("%s: the transaction is gone: %s", self.name, e)
            self.error = e

        run_loop(self.target, self.interval, self._stop.wait, on_beat=counted, on_gone=gone)

    def stop(self, join_s: float = 5.0) -> None:
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=join_s)


class TaskHeartbeat:
    """For executor tasks: beat at most every ``every_s`` seconds, never raising (picklable)."""

    def __init__(self, target: Optional[Beating], every_s: float = 60.0):
        self.target, self.every_s = target, every_s
        self._last = 0.0

    def maybe(self) -> None:
        if self.target is None:
            return
        now = time.time()
        if now - self._last >= self.every_s:
            self._last = now
            try:
                self.target.beat()
            except Exception as e:  # noqa: BLE001 - a missed heartbeat must not fail a task
                log.debug("task heartbeat failed: %s", e)


NO_TASK_HEARTBEAT = TaskHeartbeat(None)


# --- the detached helper process -------------------------------------------------------------------
@dataclass(frozen=True)
class KeepAliveProcess:
    """A running helper: its pid (and start time) and the file that stops it."""

    pid: int
    start: Optional[int]
    stop_file: str

    def alive(self) -> bool:
        return is_alive(self.pid, self.start)

    def stop(self, wait_s: float = 5.0) -> None:
        """Ask the helper to stop (it never aborts then) and wait a little for it to go."""
        self._signal(self.stop_file)
        deadline = time.monotonic() + wait_s
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)

    def abort(self) -> None:
        """Hand the abort over: the helper stops heartbeating and aborts the transaction,
        retrying until the metastore confirms, then cleans up and exits (without waiting)."""
        self._signal(self.stop_file[: -len(STOP_FILE)] + ABORT_FILE)

    @staticmethod
    def _signal(path: str) -> None:
        try:
            with open(path, "w") as f:
                f.write("1\n")
        except OSError:
            pass  # its directory is gone: the helper has already ended


def spawn_keepalive_process(target_ref: str, target_args: dict[str, Any], interval: float,
                            owner: tuple[int, Optional[int]], label: str) -> KeepAliveProcess:
    """Start a detached helper heartbeating ``target_ref(**target_args)`` (a ``module:Class`` whose
    instances are :class:`Beat` objects) every ``interval`` s while ``owner`` (pid, start time)
    lives; returns once it has sent its first heartbeat."""
    work = tempfile.mkdtemp(prefix="hiveacid-keepalive-")
    cfg = {"target": target_ref, "args": target_args, "interval": interval,
           "watch_pid": owner[0], "watch_start": owner[1], "dir": work, "name": label,
           **{k: v for k, v in target_args.items() if k == "txn"}}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON_WORKER_FACTORY")}
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path if p)
    with open(os.path.join(work, "helper.log"), "ab") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-m", HELPER_MODULE, json.dumps(cfg)], stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=errlog, env=env, close_fds=True,
            start_new_session=True)
    assert proc.stdout is not None  # stdout=PIPE
    try:
        line = _read_line(proc.stdout, PROCESS_START_TIMEOUT_S)
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
        raise MetastoreError(f"Could not start the heartbeat process for {label}: "
                             f"{text or 'no answer'} {detail}".strip())
    pid = int(text.split()[1])
    info = process_info(pid)
    return KeepAliveProcess(pid, info.start if info else None, os.path.join(work, STOP_FILE))


def _read_line(stream: Any, timeout: float) -> bytes:
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    line = b""
    deadline = time.monotonic() + timeout
    try:
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                break
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                break
            line += chunk
    finally:
        sel.close()
    return line


def _load_target(ref: str, args: dict[str, Any]) -> Beat:
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)(**args)


def _helper_main(raw: str) -> None:
    """The helper process (double-forked, so nobody has to reap it)."""
    cfg = json.loads(raw)
    if hasattr(os, "fork") and os.fork() > 0:
        os._exit(0)  # the intermediate: its parent reaps it at once; the child is orphaned
    work = cfg["dir"]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format=f"%(asctime)s keep-alive {cfg['name']} %(levelname)s %(message)s")
    try:
        target = _load_target(cfg["target"], cfg["args"])
        target.beat()
    except Exception as e:  # noqa: BLE001
        print(f"error {type(e).__name__}: {e}", flush=True)
        os._exit(1)
    try:
        print(f"ready {os.getpid()}", flush=True)
    except OSError:  # nobody listens any more (the worker died): carry on, the loop decides
        pass
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    stop_file, abort_file = os.path.join(work, STOP_FILE), os.path.join(work, ABORT_FILE)
    watch_pid, watch_start = int(cfg["watch_pid"]), cfg.get("watch_start")

    def stop(timeout: float) -> bool:
        signalled = os.path.exists(stop_file) or os.path.exists(abort_file)
        if not signalled:
            time.sleep(timeout)
        return signalled or os.path.exists(stop_file) or os.path.exists(abort_file)

    reason = "unexpected error"
    try:
        reason = run_loop(target, float(cfg["interval"]), stop,
                          owner_alive=lambda: is_alive(watch_pid, watch_start))
        if reason == "stopped" and os.path.exists(abort_file):
            reason = abort_until_done(target, "its owner could not abort it")
    finally:
        log.info("keep-alive helper ends: %s", reason)
        close = getattr(target, "close", None)
        if close is not None:
            close()
        if reason != "unexpected error":  # else keep helper.log for the post-mortem
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    _helper_main(sys.argv[1])
