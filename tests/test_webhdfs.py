"""WebHdfsFileSystem through the real ``hdfs`` client.

Tests about behaviour take ``target`` and run against the WebHDFS protocol double (``[double]``)
and a real NameNode + DataNode (``[hdfs]``: Hadoop's MiniDFSCluster, marker ``hdfs``); request
counts come from the client's side (:class:`webhdfs_targets.RequestLog`), so both are measured
the same way. Tests that inject faults or latency (a DataNode refusing, a standby NameNode, an
HttpFS-style server, slow listings) use the double alone (``srv``)."""
from __future__ import annotations

import io
import os
import pickle
import socket
import threading

import numpy as np
import pyarrow as pa
import pyarrow.orc as po
import pytest
from hdfs import InsecureClient
from hdfs.util import HdfsError
from webhdfs_double import WebHdfsDouble
from webhdfs_double.server import make_tree
from webhdfs_targets import RequestLog, WebHdfsTarget

from spark_hive_acid.exceptions import InvalidOptionError, PathNotFoundError, StorageError
from spark_hive_acid.io import webhdfs as webhdfs_mod
from spark_hive_acid.io import webhdfs_files
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.io.parallel import list_dirs_parallel
from spark_hive_acid.io.webhdfs import WebHdfsFileSystem
from spark_hive_acid.io.webhdfs_files import WebHdfsInputFile


@pytest.fixture
def srv(tmp_path):
    with WebHdfsDouble(tmp_path / "root") as s:
        yield s


@pytest.fixture
def fs(srv) -> WebHdfsFileSystem:
    return WebHdfsFileSystem(srv.url, user="alice")


@pytest.fixture
def target(webhdfs_target: WebHdfsTarget) -> WebHdfsTarget:
    """The double, then the real MiniDFSCluster."""
    return webhdfs_target


@pytest.fixture
def tfs(target: WebHdfsTarget) -> WebHdfsFileSystem:
    """The file system under test on ``target`` (its requests in ``tfs.log``)."""
    fs = target.fs()
    fs.log = RequestLog(fs)  # type: ignore[attr-defined]
    return fs


def _orc_bytes(table: pa.Table, tmp_path, **kw) -> bytes:
    local = tmp_path / "orc_bytes.orc"
    po.write_table(table, str(local), **kw)
    return local.read_bytes()


def _orc_table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "a": rng.integers(0, 1 << 62, n),
        "b": pa.array([str(x) for x in rng.integers(0, 1 << 40, n)]),
        "c": rng.random(n),
    })


# --- get_filesystem and listing ----------------------------------------------------------------
def test_get_filesystem_maps_webhdfs_uri_to_server_root(target):
    target.make_tree({"/w/t/f": b"x"})
    fs, path = get_filesystem(target.uri("/w/t"), {"hdfsUser": "bob"})
    assert isinstance(fs, WebHdfsFileSystem)
    assert (fs.url, fs.user, path) == (target.url, "bob", "/w/t")
    log = RequestLog(fs)
    assert [s.name for s in fs.list_dir(path)] == ["f"]
    assert {r.params["user.name"] for r in log} == {"bob"}
    hdfs_fs, hdfs_path = get_filesystem(target.uri("/w/t", scheme="hdfs"), target.options())
    assert isinstance(hdfs_fs, WebHdfsFileSystem) and hdfs_path == "/w/t"
    assert [s.name for s in hdfs_fs.list_dir(hdfs_path)] == ["f"]


def test_list_dir_and_status(tfs, target):
    fs = tfs
    target.make_tree({"/w/t/p=1/a.orc": b"12345", "/w/t/p=2/b": b""}, dirs=["/w/t/empty"])
    entries = sorted(fs.list_dir("/w/t"), key=lambda s: s.name)
    assert [(e.path, e.name, e.is_dir, e.size) for e in entries] == [
        ("/w/t/empty", "empty", True, 0), ("/w/t/p=1", "p=1", True, 0), ("/w/t/p=2", "p=2", True, 0)]
    assert fs.list_dir("/w/t/empty") == []
    st = fs.status("/w/t/p=1/a.orc")
    assert (st.path, st.name, st.is_dir, st.size) == ("/w/t/p=1/a.orc", "a.orc", False, 5)
    assert fs.status("/w/t").is_dir and fs.is_dir("/w/t") and fs.exists("/w/t/p=2/b")
    assert fs.status("/w/missing") is None and not fs.exists("/w/missing")
    with pytest.raises(PathNotFoundError, match="Directory not found: webhdfs://127.0.0.1:.*/w/missing"):
        fs.list_dir("/w/missing")
    with pytest.raises(StorageError, match="Not a directory"):
        fs.list_dir("/w/t/p=1/a.orc")


def test_listing_is_one_request_per_directory(tfs, target):
    target.make_tree({f"/t/p={i}/f": b"x" for i in range(3)})
    tfs.list_dir("/t")
    tfs.list_dir("/t/p=0")  # a single child: the hdfs client's list() would add a GETFILESTATUS
    assert [r.op for r in tfs.log] == ["LISTSTATUS", "LISTSTATUS"]


def test_escaped_partition_names_round_trip(tfs, target):
    fs = tfs
    name = "ds=2024-01-01 10%3A00"  # Hive escapes ':' in partition values as %3A
    target.make_tree({f"/t/{name}/bucket_00000": b"data"})
    assert [s.name for s in fs.list_dir("/t")] == [name]
    assert fs.read_bytes(f"/t/{name}/bucket_00000") == b"data"
    fs.write_bytes(f"/t/{name}/bucket_00001", b"more")
    assert target.names(f"/t/{name}") == ["bucket_00000", "bucket_00001"]


# --- reading -------------------------------------------------------------------------------------
def test_ranged_reads_match_local_bytes(tfs, target):
    fs = tfs
    data = os.urandom(2_700_000)  # three blocks of the real cluster (1 MiB each)
    target.make_tree({"/f": data})
    with fs.open_input("/f") as f:
        assert isinstance(f, io.RawIOBase) and f.readable() and f.seekable() and not f.writable()
        assert f.size == len(data)
        for off, n in [(0, 10), (2_699_990, 50), (123_456, 1000), (350_000, 1_300_000), (5, 0),
                       (1_048_570, 20)]:
            assert f.seek(off) == off
            assert f.read(n) == data[off:off + n]
            assert f.tell() == min(off + n, len(data))
        f.seek(-4, io.SEEK_END)
        assert f.read() == data[-4:]
        assert f.read(10) == b""
        f.seek(100)
        f.seek(20, io.SEEK_CUR)
        buf = bytearray(64)
        assert f.readinto(buf) == 64 and bytes(buf) == data[120:184]
        with pytest.raises(ValueError):
            f.seek(-1)
        f.seek(0)
        assert f.read() == data
    with pytest.raises(ValueError):
        f.read(1)


def test_read_bytes_is_one_open_without_status(tfs, target):
    target.make_tree({"/f": b"ORC" + b"x" * 100, "/empty": b""})
    assert tfs.read_bytes("/f", 4) == b"ORCx"
    assert tfs.read_bytes("/f") == b"ORC" + b"x" * 100
    assert tfs.log.ops() == [("OPEN", False), ("OPEN", True)] * 2
    assert tfs.read_bytes("/empty") == b"" and tfs.read_bytes("/empty", 4) == b""
    tfs.log.reset()
    with tfs.open_input("/f", size=103) as f:  # reading at the end asks for nothing (a real
        f.seek(103)                             # DataNode refuses offset == length)
        assert f.read() == b"" and f.read(5) == b""
    assert len(tfs.log) == 0


def test_orc_one_stripe_file_read_in_at_most_four_requests(tfs, target, tmp_path):
    table = _orc_table(200_000)
    data = _orc_bytes(table, tmp_path, stripe_size=64 << 20)
    assert po.ORCFile(pa.BufferReader(data)).nstripes == 1
    assert len(data) > 4 * webhdfs_mod.DEFAULT_TAIL_SIZE and len(data) > 5 << 20  # 6 HDFS blocks
    target.make_tree({"/w/t/delta_1_1/bucket_00000": data})
    with tfs.open_input("/w/t/delta_1_1/bucket_00000") as f:
        assert po.ORCFile(f).read().equals(table)
    ops = tfs.log.ops()
    assert len(ops) <= 4, ops
    assert ops == [("GETFILESTATUS", False), ("OPEN", False), ("OPEN", True), ("OPEN", True)]
    assert f.requests_made == len(ops)


def test_orc_read_through_httpfs_style_server_without_redirects(tmp_path):
    table = _orc_table(100_000, seed=1)
    with WebHdfsDouble(tmp_path / "r", redirect_open=False) as srv:
        po.write_table(table, srv.local_path("/x.orc"))
        fs = WebHdfsFileSystem(srv.url, user="alice")
        srv.reset_log()
        assert po.ORCFile(fs.open_input("/x.orc")).read().equals(table)
        assert [r.op for r in srv.requests] == ["GETFILESTATUS", "OPEN", "OPEN"]


def test_small_orc_file_is_fetched_whole_and_size_hint_skips_status(tfs, target, tmp_path):
    table = _orc_table(1000)
    data = _orc_bytes(table, tmp_path)
    target.make_tree({"/small.orc": data})
    assert po.ORCFile(tfs.open_input("/small.orc", size=len(data))).read().equals(table)
    assert tfs.log.ops() == [("OPEN", False), ("OPEN", True)]


def test_sequential_reader_grows_its_read_ahead(tfs, target):
    data = os.urandom(3 << 20)
    target.make_tree({"/seq": data})
    with tfs.open_input("/seq") as f:
        assert f.read(4) == data[:4]  # a sniff does not pull megabytes
        first = tfs.log.sent[-1]
        assert int(first.params["length"]) <= 64 * 1024
        chunks = [f.read(8192) for _ in range(len(data) // 8192)]
    assert b"".join(chunks) == data[4:4 + 8192 * len(chunks)]
    assert 3 < tfs.log.count("OPEN") < 20


def test_datanode_refusal_falls_back_to_namenode(fs, srv):
    data = os.urandom(2_000_000)
    make_tree(srv, {"/f": data})
    with fs.open_input("/f") as f:
        f.seek(-10, io.SEEK_END)
        assert f.read() == data[-10:]  # NameNode OPEN, redirected: the DataNode URL is remembered
        srv.fail_next("OPEN", datanode=True, status=403, exception="IOException", message="DataNode busy")
        srv.reset_log()
        f.seek(0)
        assert f.read(100) == data[:100]
    assert [(r.op, r.datanode) for r in srv.requests] == [("OPEN", True), ("OPEN", False), ("OPEN", True)]


# --- writing -------------------------------------------------------------------------------------
def test_open_output_uploads_on_close_with_two_step_create(tfs, target):
    fs = tfs
    with fs.open_output("/w/new/dir/file.bin") as f:
        assert f.writable() and not f.readable()
        f.write(b"abc")
        f.write(memoryview(b"def"))
        assert f.tell() == 6
        assert len(fs.log) == 0  # buffered until close
    assert target.read("/w/new/dir/file.bin") == b"abcdef"  # parents created
    assert [(r.method, r.op, r.datanode, r.status, r.params.get("overwrite").lower())
            for r in fs.log] == [("PUT", "CREATE", False, 307, "true"),
                                 ("PUT", "CREATE", True, 201, "true")]
    fs.write_bytes("/w/new/dir/file.bin", b"replaced")
    assert fs.read_bytes("/w/new/dir/file.bin") == b"replaced"


def test_open_output_discards_data_when_the_block_fails(tfs, target):
    fs = tfs
    with pytest.raises(RuntimeError):
        with fs.open_output("/w/partial") as f:
            f.write(b"half")
            raise RuntimeError("writer failed")
    assert not target.exists("/w/partial")
    f = fs.open_output("/w/dropped")
    f.write(b"x")
    del f  # garbage collected without close: not uploaded
    assert not target.exists("/w/dropped") and len(fs.log) == 0


def test_large_output_spills_to_a_temp_file(tfs, monkeypatch):
    fs = tfs
    monkeypatch.setattr(webhdfs_files, "_SPOOL_LIMIT", 1000)
    payload = os.urandom(50_000)
    with fs.open_output("/big") as f:
        for i in range(0, len(payload), 3000):
            f.write(payload[i:i + 3000])
        assert f._spilled
    assert fs.read_bytes("/big") == payload


def test_orc_written_through_open_output_reads_back(tfs):
    fs = tfs
    table = _orc_table(5000)
    with fs.open_output("/w/x.orc") as f:
        po.write_table(table, f)
    assert po.ORCFile(fs.open_input("/w/x.orc")).read().equals(table)


def test_mkdirs_and_delete(tfs, target):
    fs = tfs
    fs.mkdirs("/a/b/c")
    fs.mkdirs("/a/b/c")  # idempotent
    assert fs.is_dir("/a/b/c")
    fs.write_bytes("/a/b/c/f", b"1")
    with pytest.raises(StorageError, match="a file is in the way"):
        fs.mkdirs("/a/b/c/f")
    with pytest.raises(StorageError, match="ParentNotDirectoryException"):
        fs.mkdirs("/a/b/c/f/g")
    with pytest.raises(StorageError, match="not empty"):
        fs.delete("/a/b", recursive=False)
    fs.delete("/a/b/c/f")
    assert not fs.exists("/a/b/c/f")
    fs.delete("/a/b/c")  # empty: fine without recursive
    fs.delete("/a", recursive=True)
    assert not target.exists("/a")
    fs.delete("/never/there")  # missing paths are ignored


def test_rename_is_atomic_and_fails_when_destination_exists(tfs, target):
    fs = tfs
    target.make_tree({"/t/_tmp/bucket_0": b"new", "/t/file": b"f", "/t/other": b"o"},
                     dirs=["/t/delta_1_1"])
    with pytest.raises(StorageError, match="destination exists"):
        fs.rename("/t/_tmp", "/t/delta_1_1")  # HDFS's old rename would have moved it *into* delta_1_1
    assert fs.list_dir("/t/delta_1_1") == [] and fs.exists("/t/_tmp/bucket_0")
    with pytest.raises(StorageError, match="destination exists"):
        fs.rename("/t/file", "/t/other")
    assert fs.read_bytes("/t/other") == b"o"
    with pytest.raises(StorageError, match="does not exist"):
        fs.rename("/t/missing", "/t/x")
    with pytest.raises(StorageError, match="does not exist"):
        fs.rename("/t/file", "/t/no/parent/x")
    fs.rename("/t/_tmp", "/t/delta_2_2")
    assert fs.read_bytes("/t/delta_2_2/bucket_0") == b"new" and not fs.exists("/t/_tmp")
    assert {r.params["renameoptions"] for r in fs.log if r.op == "RENAME"} == {"NONE"}


def test_old_rename_semantics(target):
    """Without renameoptions, WebHDFS's RENAME is HDFS's ClientProtocol.rename (the double's
    imitation checked against the real NameNode): why WebHdfsFileSystem always sends NONE."""
    target.make_tree({"/a": b"a", "/b": b"b", "/src/f": b"s"}, dirs=["/dstdir"])
    c = InsecureClient(target.url, user=target.user)
    res = c._rename("/a", destination="/b")
    assert res.json() == {"boolean": False}
    assert c._rename("/src", destination="/dstdir").json() == {"boolean": True}
    assert target.read("/dstdir/src/f") == b"s"  # moved *into* the existing directory
    assert c._rename("/missing", destination="/x").json() == {"boolean": False}


def test_create_exclusive(tfs):
    fs = tfs
    assert fs.create_exclusive("/locks/commit-5", b"writer-1") is True
    assert fs.create_exclusive("/locks/commit-5", b"writer-2") is False
    assert fs.read_bytes("/locks/commit-5") == b"writer-1"
    creates = [r for r in fs.log if r.op == "CREATE"]
    assert {r.params["overwrite"].lower() for r in creates} == {"false"}
    fs.log.reset()
    assert fs.create_exclusive("/locks/commit-6", b"w") is True  # a temporary file, renamed
    assert [(r.op, r.datanode) for r in fs.log] == [("CREATE", False), ("CREATE", True),
                                                    ("RENAME", False)]


def test_create_exclusive_has_one_winner_under_concurrency(target):
    fs = target.fs()
    results: list[bool] = []
    lock = threading.Lock()

    def attempt(i: int) -> None:
        ok = fs.create_exclusive("/locks/l", f"w{i}".encode())
        with lock:
            results.append(ok)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    assert target.read("/locks/l") in {f"w{i}".encode() for i in range(8)}


def test_chunked_upload_through_the_hdfs_client(target):
    c = InsecureClient(target.url, user=target.user)
    c.write("/gen", data=(bytes([i]) * 1000 for i in range(5)), overwrite=True)
    assert target.read("/gen") == b"".join(bytes([i]) * 1000 for i in range(5))


# --- errors --------------------------------------------------------------------------------------
def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_namenode_names_the_url():
    port = _closed_port()
    fs, path = get_filesystem(f"webhdfs://127.0.0.1:{port}/w/t", {})
    with pytest.raises(StorageError,
                       match=rf"Cannot reach the WebHDFS service at http://127.0.0.1:{port}.*webhdfsUrl"):
        fs.list_dir(path)
    with pytest.raises(StorageError, match="Cannot reach"):
        fs.open_input(path).read(1)


def test_permission_denied_names_the_path(target):
    """The double forbids /secret by configuration; the real NameNode by its permission bits
    (drwx------ owned by the superuser, the client being another user)."""
    target.make_tree({"/secret/t/f": b"x", "/open/f": b"y"})
    fs = target.fs("alice")
    if target.real:
        c = InsecureClient(target.url, user=target.user)
        c.set_permission("/secret", "700")
        c.set_permission("/open", "777")
        c.set_permission("/open/f", "666")
    else:
        target.double.forbid("/secret")
    for call in (lambda: fs.list_dir("/secret/t"), lambda: fs.status("/secret/t/f"),
                 lambda: fs.read_bytes("/secret/t/f"), lambda: fs.open_input("/secret/t/f").read(),
                 lambda: fs.write_bytes("/secret/g", b"1"), lambda: fs.rename("/open/f", "/secret/f"),
                 lambda: fs.delete("/secret/t", recursive=True)):
        with pytest.raises(StorageError,
                           match=r"Permission denied .*webhdfs://127\.0\.0\.1:\d+/(secret|open)") as ei:
            call()
        assert "user=alice" in str(ei.value) or not target.real
        assert "\tat org.apache" not in str(ei.value)  # the DataNode's Java stack trace is cut
    assert fs.read_bytes("/open/f") == b"y"
    assert [s.name for s in fs.list_dir("/")] == ["open", "secret"]  # listing the parent is allowed


def test_file_vanished_during_read(tfs, target):
    fs = tfs
    data = os.urandom(2_000_000)
    target.make_tree({"/t/delta_1_1/bucket_0": data})
    f = fs.open_input("/t/delta_1_1/bucket_0")
    f.seek(-100, io.SEEK_END)
    assert f.read() == data[-100:]
    target.remove("/t/delta_1_1/bucket_0")  # the cleaner ran
    f.seek(0)
    with pytest.raises(StorageError,
                       match=r"File vanished: webhdfs://.*/t/delta_1_1/bucket_0.*compaction cleaner.*retry"):
        f.read(100)
    with pytest.raises(StorageError, match="File vanished"):
        fs.open_input("/t/delta_1_1/bucket_0").read(1)
    with pytest.raises(StorageError, match="File vanished"):
        fs.read_bytes("/t/delta_1_1/bucket_0")


def test_standby_namenode_and_unknown_errors(fs, srv):
    srv.fail_next("LISTSTATUS", exception="StandbyException",
                  message="Operation category READ is not supported")
    with pytest.raises(StorageError, match="No active NameNode"):
        fs.list_dir("/")
    srv.fail_next("GETFILESTATUS", status=500, exception="RuntimeException", message="boom")
    with pytest.raises(StorageError, match="GETFILESTATUS|RuntimeException: boom"):
        fs.status("/")


def test_webhdfs_json_errors(target):
    """The error answers the client parses: the double's imitation checked against the real
    NameNode."""
    import requests

    r = requests.get(f"{target.url}/webhdfs/v1/nope?op=GETFILESTATUS&user.name=x")
    assert r.status_code == 404
    assert r.json()["RemoteException"] == {"exception": "FileNotFoundException",
                                           "javaClassName": "java.io.FileNotFoundException",
                                           "message": "File does not exist: /nope"}
    r = requests.get(f"{target.url}/webhdfs/v1/?op=FROB")
    assert r.status_code == 400 and r.json()["RemoteException"]["exception"] == "IllegalArgumentException"
    target.make_tree({"/five": b"12345", "/empty": b""})
    r = requests.get(f"{target.url}/webhdfs/v1/five?op=OPEN&offset=5&user.name=x")  # at the end
    assert r.status_code == 403 and r.json()["RemoteException"]["exception"] == "IOException"
    assert "out of the range [0, 5)" in r.json()["RemoteException"]["message"]
    r = requests.get(f"{target.url}/webhdfs/v1/empty?op=OPEN&offset=0&user.name=x")
    assert r.status_code == 200 and r.content == b""


def test_double_forbids_configured_paths(srv):
    import requests

    srv.forbid("/x")
    r = requests.put(f"{srv.url}/webhdfs/v1/x/y?op=MKDIRS&user.name=eve")
    assert r.status_code == 403
    assert "user=eve" in r.json()["RemoteException"]["message"]
    c = InsecureClient(srv.url, user="eve")
    with pytest.raises(HdfsError) as ei:
        c.status("/x")
    assert ei.value.exception == "AccessControlException"


def test_kerberos_without_requests_kerberos_is_a_clear_option_error(srv):
    try:
        import requests_kerberos  # noqa: F401
        pytest.skip("requests-kerberos is installed")
    except ImportError:
        pass
    fs = WebHdfsFileSystem(srv.url, auth="kerberos")
    with pytest.raises(InvalidOptionError, match="requests-kerberos"):
        fs.list_dir("/")


# --- pickling ------------------------------------------------------------------------------------
def test_filesystem_pickles_by_constructor_args(tfs, target):
    fs = tfs
    target.make_tree({"/p/f": b"x"})
    assert pickle.loads(pickle.dumps(fs)) == fs
    fs.list_dir("/p")  # the client (session, lock) now exists
    assert fs._client is not None
    state = fs.__getstate__()
    assert "_client" not in state and "_client_lock" not in state
    from pyspark import cloudpickle

    for dumps in (pickle.dumps, cloudpickle.dumps):
        copy = pickle.loads(dumps(fs))
        assert copy == fs and copy._client is None
        assert [s.name for s in copy.list_dir("/p")] == ["f"]


def test_input_file_type(tfs, target):
    fs = tfs
    target.make_tree({"/f": b"x"}, dirs=["/d"])
    f = fs.open_input("/f")
    assert isinstance(f, WebHdfsInputFile) and f.name.endswith("/f")
    with pytest.raises(StorageError, match="is a directory"):
        fs.open_input("/").read()
    with pytest.raises(StorageError, match="is a directory"):
        fs.read_bytes("/d")  # not "vanished": the real NameNode redirects, the DataNode refuses


# --- parallel listing ----------------------------------------------------------------------------
def test_list_dirs_parallel_over_webhdfs_overlaps_requests(tmp_path):
    """Listings run concurrently (no timing threshold: the proof is requests in flight at once),
    and the result equals sequential listing, in input order."""
    import threading

    n = 32
    with WebHdfsDouble(tmp_path / "r", latency=0.03) as srv:
        make_tree(srv, {f"/t/p={i}/bucket_00000": b"x" * i for i in range(n)})
        fs = WebHdfsFileSystem(srv.url, user="alice")
        paths = [f"/t/p={i}" for i in range(n)]
        seq = {p: fs.list_dir(p) for p in paths}
        lock = threading.Lock()
        state = {"now": 0, "max": 0}
        inner = fs.list_dir

        def counting_list_dir(path):
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            try:
                return inner(path)
            finally:
                with lock:
                    state["now"] -= 1

        fs.list_dir = counting_list_dir
        par = list_dirs_parallel(fs, paths, max_workers=16)
    assert par == seq and list(par) == paths
    assert state["max"] > 1


def test_reopening_a_recent_file_reuses_size_tail_and_datanode(tfs, target, tmp_path):
    fs = tfs
    table = _orc_table(200_000, seed=3)
    target.make_tree({"/r.orc": _orc_bytes(table, tmp_path, stripe_size=64 << 20)})
    with fs.open_input("/r.orc") as f:
        po.ORCFile(f).read()
    fs.log.reset()
    with fs.open_input("/r.orc") as f:  # e.g. statistics first, then the rows
        assert po.ORCFile(f).read().equals(table)
    assert fs.log.ops() == [("OPEN", True)]  # the stripe only
    fs.delete("/r.orc")  # forgets it
    assert fs.status("/r.orc") is None
    with pytest.raises(StorageError, match="File vanished"):
        fs.open_input("/r.orc").read(1)


def test_remembered_file_that_vanished_is_reported(tfs, target):
    fs = tfs
    data = os.urandom(1_000_000)
    target.make_tree({"/v": data})
    with fs.open_input("/v") as f:
        f.seek(-10, io.SEEK_END)
        f.read()
    target.remove("/v")  # removed behind our back
    with fs.open_input("/v") as f:
        assert f.size == len(data)  # remembered
        with pytest.raises(StorageError, match="File vanished.*retry"):
            f.read(10)
    with pytest.raises(StorageError, match="File vanished"):
        fs.open_input("/v").size  # forgotten after the failure: asks again
