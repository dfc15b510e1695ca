"""The storage primitives object-store writes rest on, against the S3 server (moto on 127.0.0.1,
marker ``s3``): the conditional create (processes racing for one name: exactly one wins; an
answer lost after the server applied the request, resolved by the nonce read back), uploads that
appear whole or not at all (a failed or dropped writer leaves no object and no pending upload;
an exclusive upload never replaces an object), and writes refused, before anything is written,
where the endpoint ignores the condition, the store has none we implement, or no credentials can
sign. Faults the server cannot be made to produce come from ``tests/s3_server/proxy.py``, a TCP
proxy in front of the real server."""
from __future__ import annotations

import gc
import multiprocessing as mp

import pyarrow as pa
import pytest

from s3_server.proxy import FaultProxy
from spark_hive_acid import write_table
from spark_hive_acid.exceptions import PathExistsError, StorageError
from spark_hive_acid.io import object_client, s3_conditional
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.io.s3_client import NONCE_HEADER
from spark_hive_acid.io.object_upload import WholeUpload as S3Upload

pytestmark = pytest.mark.s3
RACERS = 6
KEYS = 12


def _keys(s3, prefix: str = "") -> list[str]:
    out = s3.client().list_objects_v2(Bucket=s3.name, Prefix=prefix).get("Contents", [])
    return sorted(o["Key"] for o in out)


def _pending_uploads(s3) -> list:
    return s3.client().list_multipart_uploads(Bucket=s3.name).get("Uploads", [])


def _racer(uri: str, options: dict, me: int, start, out) -> None:
    fs, path = get_filesystem(uri, options)
    start.wait(60)
    wins = [k for k in range(KEYS)
            if fs.create_exclusive(f"{path}/claim-{k}", f"racer {me}".encode())]
    out.put((me, wins))


def race_for_names(uri: str, options: dict) -> dict[int, list[int]]:
    """Six processes create the same twelve names under ``uri`` at once: name -> its winners."""
    ctx = mp.get_context("spawn")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(uri, options, i, start, out))
             for i in range(RACERS)]
    for p in procs:
        p.start()
    start.set()
    results = dict(out.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    return {k: [me for me, wins in results.items() if k in wins] for k in range(KEYS)}


def test_processes_racing_for_names_exactly_one_wins_each(s3):
    """Six processes create the same twelve names at once: each name has exactly one winner, and
    the object holds the winner's bytes."""
    winners = race_for_names(s3.uri("race"), s3.options())
    assert all(len(w) == 1 for w in winners.values()), winners
    c = s3.client()
    for k, (me,) in winners.items():
        assert c.get_object(Bucket=s3.name, Key=f"race/claim-{k}")["Body"].read() == \
            f"racer {me}".encode()


def test_a_lost_answer_is_resolved_by_reading_the_nonce_back(s3):
    """The server applies a conditional put whose answer never reaches the client: the client
    reads the object's nonce back and knows it won; when another writer's object was there, it
    knows it lost (never a guess either way)."""
    with FaultProxy(s3.server.port) as proxy:
        fs, path = get_filesystem(s3.uri("t"), s3.options(**{"fs.s3a.endpoint": proxy.endpoint}))
        proxy.lose_answers(1)
        assert fs.create_exclusive(f"{path}/mine", b"mine") is True
        assert proxy.lost == 1
        head = s3.client().head_object(Bucket=s3.name, Key="t/mine")
        assert head["Metadata"].get(NONCE_HEADER.split("x-amz-meta-")[1])  # the nonce is stored
        get_filesystem(s3.uri("t"), s3.options())[0].create_exclusive(f"{path}/theirs", b"them")
        proxy.lose_answers(1)  # its 412 lost: the nonce read back is not ours
        assert fs.create_exclusive(f"{path}/theirs", b"mine") is False
        assert proxy.lost == 2
    c = s3.client()
    assert c.get_object(Bucket=s3.name, Key="t/mine")["Body"].read() == b"mine"
    assert c.get_object(Bucket=s3.name, Key="t/theirs")["Body"].read() == b"them"


def test_a_lost_answer_to_completing_an_upload_is_resolved(s3):
    """The answer to CompleteMultipartUpload lost: completing again is idempotent on the server,
    the object appears once, whole."""
    big = bytes(range(256)) * (80 << 12)  # 20 MiB: two parts
    with FaultProxy(s3.server.port) as proxy:
        fs, path = get_filesystem(s3.uri("t"), s3.options(**{"fs.s3a.endpoint": proxy.endpoint}))
        proxy.lose_answers(1, match=b"?uploadid=")  # the completion, not the parts
        with fs.open_output_exclusive(f"{path}/big") as f:
            f.write(big)
        assert proxy.lost == 1
    assert s3.client().get_object(Bucket=s3.name, Key="t/big")["Body"].read() == big
    assert _pending_uploads(s3) == []


@pytest.mark.parametrize("size", [100, 20 << 20], ids=["one-put", "multipart"])
def test_an_exclusive_upload_never_replaces_an_object(s3, size):
    fs, path = get_filesystem(s3.uri("t"), s3.options())
    fs.write_bytes(f"{path}/f", b"original")
    with pytest.raises(PathExistsError):
        with fs.open_output_exclusive(f"{path}/f") as f:
            f.write(b"x" * size)
    assert s3.client().get_object(Bucket=s3.name, Key="t/f")["Body"].read() == b"original"
    assert _pending_uploads(s3) == []


@pytest.mark.parametrize("size", [100, 20 << 20], ids=["one-put", "multipart"])
def test_a_failed_or_dropped_writer_leaves_nothing(s3, size):
    """pyarrow's own stream would complete a partial object when its writer fails; ours leaves
    neither an object nor a pending upload, also when dropped without closing."""
    fs, path = get_filesystem(s3.uri("t"), s3.options())
    with pytest.raises(RuntimeError):
        with fs.open_output_exclusive(f"{path}/failed") as f:
            f.write(b"x" * size)
            raise RuntimeError("the writer failed")
    f = fs.open_output_exclusive(f"{path}/dropped")
    assert isinstance(f, S3Upload)
    f.write(b"y" * size)
    del f
    gc.collect()
    assert _keys(s3, "t/") == []
    assert _pending_uploads(s3) == []


def _table() -> pa.Table:
    return pa.table({"id": pa.array([1, 2], pa.int64()), "p": pa.array([0, 1], pa.int32())})


def test_writes_refused_where_the_endpoint_ignores_the_condition(s3):
    """A gateway that drops If-None-Match (the proxy strips it before the real server): the
    probe sees a second conditional put succeed, and the write is refused naming why, with
    nothing written (the probe's object removed)."""
    with FaultProxy(s3.server.port) as proxy:
        proxy.strip_header(b"If-None-Match")
        opts = s3.options(**{"fs.s3a.endpoint": proxy.endpoint})
        with pytest.raises(StorageError, match="does not honour conditional creates.*ignored "
                                               "If-None-Match.*nothing was written"):
            write_table(_table(), s3.uri("w/t"), options=opts, partition_by=["p"])
    assert _keys(s3) == []


def test_writes_refused_without_conditional_creates_or_credentials(s3, monkeypatch):
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    anonymous = {"fs.s3a.endpoint": s3.endpoint, "fs.s3a.path.style.access": "true"}
    with pytest.raises(StorageError, match="need S3 credentials.*nothing was written"):
        write_table(_table(), s3.uri("w/t"), options=anonymous)
    for var in ("GOOGLE_OAUTH_ACCESS_TOKEN", "STORAGE_EMULATOR_HOST"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(StorageError, match="need an OAuth 2 access token.*Nothing was written"):
        write_table(_table(), "gs://some-bucket/w/t")
    with pytest.raises(StorageError, match="need the storage account.s Shared Key.*Nothing was written"):
        write_table(_table(), "abfs://container@account.dfs.core.windows.net/w/t")
    assert _keys(s3) == []


def test_the_probe_is_asked_once_per_bucket(s3):
    object_client.forget_checks()
    mark = s3.log_mark()
    for k in range(3):
        write_table(_table(), s3.uri(f"w/t{k}"), options=s3.options())
    probes = [r for r in s3.requests_since(mark) if "_hiveacid_probe" in r.path]
    assert [r.method for r in probes] == ["PUT", "PUT", "DELETE"]
    assert [r.status for r in probes] == [200, 412, 204]


# --- what pyarrow's S3 client does, and why the writes do not use it ----------------------------
def test_pin_pyarrow_completes_a_failed_writers_object(s3):
    """pyarrow's S3 output stream publishes what was written when its writer fails inside a
    ``with`` block (and from its destructor): a partial object at the final name. Object-store
    writes therefore upload through ``S3Upload``, which aborts instead."""
    fs, path = get_filesystem(s3.uri("t"), s3.options())
    with pytest.raises(RuntimeError):
        with fs.arrow.open_output_stream(f"{path}/partial") as f:
            f.write(b"half of a file")
            raise RuntimeError("the writer failed")
    assert s3.client().get_object(Bucket=s3.name, Key="t/partial")["Body"].read() == \
        b"half of a file"


def test_requests_of_an_append(s3):
    """An append creating a table of two partitions: the endpoint probe (3, once a process),
    the layout, a write id, two data files, the commit record and the clean-up, in at most 45
    requests (pyarrow's calls cost 122: directory markers put for every directory and put back
    after every delete, and a multipart upload of three requests for every small file)."""
    object_client.forget_checks()
    mark = s3.log_mark()
    write_table(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": ["a", "b", "a"]}),
                s3.uri("w/t"), partition_by=["p"], options=s3.options())
    reqs = s3.requests_since(mark)
    assert len(reqs) <= 45, [(r.method, r.path) for r in reqs]
    assert not [r for r in reqs if r.method in ("PUT", "POST", "DELETE")
                and (r.path.split("?")[0].endswith("/") or "?uploads" in r.path)]
    mark = s3.log_mark()
    write_table(pa.table({"id": pa.array([4], pa.int64()), "p": ["b"]}), s3.uri("w/t"),
                options=s3.options())
    assert len(s3.requests_since(mark)) <= 45  # no probe; the log read twice (allocate, commit)
