"""The streaming sink's commit: one micro-batch, one write id, exactly once.

Each micro-batch of a streaming query is one transaction, committed through the one commit path
(``txn.committer.commit_write``) with the query's progress as commit properties
(:func:`batch_properties`). A batch Spark replays after a crash (its offsets are in the
checkpoint, its commit is not) is recognised and not written twice:

* path mode: the progress is in the log's commit record. :func:`last_committed_batch` reads the
  log backwards to the newest record of the query; the commit itself refuses, atomically with
  appending its record, a batch committed after its snapshot (``ONCE_PROPERTY``).
* metastore mode: Hive 2.3 has no key/value commit, so the progress goes beside the files
  (``txn.commit_marker``), and a claim file ``<table>/_hiveacid_streams/<query>/<batch>`` names
  the write id (and transaction) committing the batch; once the commit went through, the claim
  says so (``committed``). A replay that finds another write id's claim asks the metastore:
  committed, the batch is done; still open, the earlier attempt is aborted; aborted, the replay
  takes the claim over. The metastore's word needs the claim's help: Hive 3.1's Initiator forgets
  an aborted transaction that recorded no partition (an attempt that died before its commit
  registered them), and its write id then counts as committed; a claim not marked committed
  whose write id left no commit marker is taken for aborted (``write_id_state``).

Tasks create the claim as they start (:func:`claim_for_task`), so a replay also finds an attempt
that died before its commit and ends it at once (path mode too: an open write id would hold back
every reader's low watermark until it went stale).
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any, Callable, Iterable, Optional

from ..acid.logstate import (
    COMMITTED, OPEN, UNREADABLE_RECORD_GRACE_S, events_newest_first, load_state,
)
from ..exceptions import (
    AlreadyCommittedError, CommitStateUnknownError, PathNotFoundError, StorageError,
)
from ..io.filesystem import FileSystem
from ..txn import pathlog
from ..txn.abort import abort_and_clean
from ..txn.base import ONCE_PROPERTY, Transaction
from ..txn.committer import commit_write
from ..write.publish import CommitResult
from ..write.task_writer import StagedFile, TableSpec

log = logging.getLogger(__name__)

QUERY_PROPERTY = "streamQueryId"
BATCH_PROPERTY = "streamBatchId"
CLAIMS_DIR = "_hiveacid_streams"
#: How long a replayed batch waits for the write id of an earlier attempt to end.
CLAIM_WAIT_S = 600.0


def batch_properties(query_id: str, batch_id: int) -> dict[str, str]:
    """The commit properties of micro-batch ``batch_id`` of query ``query_id``."""
    return {QUERY_PROPERTY: query_id, BATCH_PROPERTY: str(int(batch_id)),
            ONCE_PROPERTY: f"stream:{query_id}:{int(batch_id)}"}


def last_committed_batch(fs: FileSystem, table_path: str, query_id: str) -> Optional[int]:
    """The newest batch of ``query_id`` committed in a path-mode table's log (None: none).
    Reads the log's records newest first and stops at the query's newest one."""
    for ev in events_newest_first(fs, table_path):
        if ev.committed and ev.properties.get(QUERY_PROPERTY) == query_id:
            return int(ev.properties[BATCH_PROPERTY])
    return None


def commit_batch(fs: FileSystem, table: TableSpec, txn: Transaction,
                 staged: Iterable[StagedFile], query_id: str, batch_id: int, *,
                 path_mode: bool, write_id_state: Optional[Callable[[dict], str]] = None,
                 abort_attempt: Optional[Callable[[dict], None]] = None
                 ) -> Optional[CommitResult]:
    """Commit ``txn`` as batch ``batch_id`` of ``query_id``; None (``txn`` aborted, nothing
    written) when that batch was committed before. Metastore mode needs
    ``write_id_state(claim)`` (OPEN, COMMITTED or ABORTED: the state of an earlier attempt's
    claim, ``writeId``, ``txnId``, ``committed``) and ``abort_attempt(claim)``, which aborts the
    transaction of an earlier attempt's claim."""
    props = batch_properties(query_id, batch_id)
    if path_mode:
        _abort_earlier_attempt(fs, table.table_path, query_id, batch_id, txn.write_id)
        done = last_committed_batch(fs, table.table_path, query_id)
        if done is not None and done >= batch_id:
            _skip(fs, table, txn, query_id, batch_id, f"the log records batch {done}")
            return None
    else:
        if write_id_state is None:
            raise TypeError("commit_batch: metastore mode (path_mode=False) needs write_id_state")
        claimed = _claim(fs, table.table_path, query_id, batch_id, _claim_body(txn),
                         write_id_state, abort_attempt)
        if claimed is not None:
            _skip(fs, table, txn, query_id, batch_id, f"write id {claimed} committed it")
            return None
    try:
        result = commit_write(fs, table, txn, staged, properties=props)
        if path_mode:
            _drop_older_claims(fs, table.table_path, query_id, batch_id)
        else:
            _mark_committed(fs, table.table_path, query_id, batch_id, txn)
        return result
    except AlreadyCommittedError as e:
        log.info("Batch %d of streaming query %s was already committed: %s", batch_id,
                 query_id, e)
        return None


def _skip(fs: FileSystem, table: TableSpec, txn: Transaction, query_id: str, batch_id: int,
          why: str) -> None:
    log.info("Batch %d of streaming query %s is already in %s (%s): write id %d is aborted, "
             "nothing is written twice", batch_id, query_id, table.table_path, why, txn.write_id)
    abort_and_clean(fs, table.table_path, txn,
                    f"batch {batch_id} of streaming query {query_id} was already committed")


# --- metastore mode: claims ---------------------------------------------------------------------
def claim_path(fs: FileSystem, table_path: str, query_id: str, batch_id: int) -> str:
    return fs.join(table_path, CLAIMS_DIR, query_id, f"{int(batch_id):019d}.json")


def _claim_body(txn: Any) -> dict:
    """What a claim says: the write id (and the metastore transaction) committing the batch."""
    body = {"writeId": int(txn.write_id), "time": time.time()}
    txn_id = getattr(txn, "txn_id", None)
    if txn_id is not None:
        body["txnId"] = int(txn_id)
    return body


def _mark_committed(fs: FileSystem, table_path: str, query_id: str, batch_id: int,
                    txn: Any) -> None:
    """The batch's claim says its write id committed (no metastore answer needed any more)."""
    body = {**_claim_body(txn), "committed": True}
    try:
        fs.write_bytes(claim_path(fs, table_path, query_id, batch_id),
                       json.dumps(body).encode("utf-8"))
    except Exception as e:  # noqa: BLE001 - the metastore and the markers still tell
        log.warning("could not mark the claim of batch %d of %s committed: %s", batch_id,
                    query_id, e)


def _claim(fs: FileSystem, table_path: str, query_id: str, batch_id: int, body: dict,
           write_id_state: Callable[[dict], str],
           abort_attempt: Optional[Callable[[dict], None]]) -> Optional[int]:
    """Claim the batch for ``body["writeId"]``; returns the write id that committed it before
    (None: the claim is ours). An earlier attempt's transaction still open is aborted (Spark
    replays a batch only after the query that ran it stopped; should that attempt still be
    committing, the metastore orders its commit and this abort, and the loop sees which won).
    Claims of the query's older batches are removed."""
    write_id = int(body["writeId"])
    path = claim_path(fs, table_path, query_id, batch_id)
    fs.mkdirs(fs.join(table_path, CLAIMS_DIR, query_id))
    data = json.dumps(body).encode("utf-8")
    deadline = time.time() + CLAIM_WAIT_S
    unreadable_since: Optional[float] = None
    while True:
        claim = body if fs.create_exclusive(path, data) else _read_claim(fs, path)
        if claim is None:  # being written, or its writer died before writing it
            unreadable_since = unreadable_since or time.time()
            if time.time() - unreadable_since > UNREADABLE_RECORD_GRACE_S:
                fs.delete(path)
            time.sleep(0.05)
            continue
        other = int(claim["writeId"])
        if other == write_id:  # ours (its tasks may have created it)
            _drop_older_claims(fs, table_path, query_id, batch_id)
            return None
        state = COMMITTED if claim.get("committed") else write_id_state(claim)
        if state == COMMITTED:
            return other
        if state == OPEN:
            if time.time() > deadline:
                raise CommitStateUnknownError(
                    f"Batch {batch_id} of streaming query {query_id} was claimed by write id "
                    f"{other}, which could not be aborted in {CLAIM_WAIT_S:.0f} s; restart the "
                    "query once it has ended")
            if abort_attempt is not None:
                log.warning("Write id %d, an earlier attempt of batch %d of streaming query %s, "
                            "is still open: aborting it", other, batch_id, query_id)
                abort_attempt(claim)
            else:
                time.sleep(0.5)
            continue
        log.info("Write id %d that claimed batch %d of %s was aborted: taking the batch over",
                 other, batch_id, query_id)
        fs.delete(path)


def claim_for_task(fs: FileSystem, table_path: str, query_id: str, batch_id: int,
                   txn: Any) -> None:
    """Tasks claim their batch for their transaction (``txn``: its handle) as they start (the first
    one creates the claim), so that a replay finds, and ends, an attempt that died before its
    commit."""
    path = claim_path(fs, table_path, query_id, batch_id)
    if fs.exists(path):  # another task (or an earlier attempt) claimed it: a commit decides
        return
    fs.mkdirs(fs.join(table_path, CLAIMS_DIR, query_id))
    fs.create_exclusive(path, json.dumps(_claim_body(txn)).encode("utf-8"))


def _abort_earlier_attempt(fs: FileSystem, table_path: str, query_id: str, batch_id: int,
                           write_id: int) -> None:
    """Path mode: an earlier attempt of this batch whose write id is still open died (Spark
    replays a batch only after its query stopped): abort it now rather than when it goes stale,
    so that it holds back no reader's low watermark. Should that attempt still be committing, the
    log orders the two records: its commit first (the batch is in) or this abort first."""
    path = claim_path(fs, table_path, query_id, batch_id)
    other = _claim_owner(fs, path) if fs.exists(path) else None
    if other is None or other == write_id:
        return
    state = load_state(fs, table_path)
    if state is not None and state.state_of(other) == OPEN and other in state.allocated:
        log.warning("Write id %d, an earlier attempt of batch %d of streaming query %s, is still "
                    "open: aborting it", other, batch_id, query_id)
        pathlog.abort(fs, table_path, other, f"batch {batch_id} of {query_id} is replayed by "
                                             f"write id {write_id}")


def _read_claim(fs: FileSystem, path: str) -> Optional[dict]:
    try:
        claim = json.loads(fs.read_bytes(path).decode("utf-8"))
        int(claim["writeId"])
        return claim
    except (StorageError, OSError, ValueError, KeyError, TypeError):
        return None


def _claim_owner(fs: FileSystem, path: str) -> Optional[int]:
    claim = _read_claim(fs, path)
    return None if claim is None else int(claim["writeId"])


def _drop_older_claims(fs: FileSystem, table_path: str, query_id: str, batch_id: int) -> None:
    """Claims of batches before the previous one are settled (Spark replays only the last)."""
    try:
        names = [c.name for c in fs.list_dir(fs.join(table_path, CLAIMS_DIR, query_id))]
    except PathNotFoundError:
        return
    for b in sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit()):
        if b < batch_id - 1:
            try:
                fs.delete(claim_path(fs, table_path, query_id, b))
            except Exception as e:  # noqa: BLE001 - a settled claim left behind is harmless
                log.warning("could not remove claim %d of query %s: %s", b, query_id, e)
