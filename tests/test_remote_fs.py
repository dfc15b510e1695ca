"""Remote back-end selection (options, schemes), ArrowFileSystem on local stand-ins, parallel listing."""
from __future__ import annotations

import os
import pickle
import threading
import time

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.orc as po
import pytest

from spark_hive_acid.exceptions import InvalidOptionError, PathNotFoundError, StorageError
from spark_hive_acid.io import remote
from spark_hive_acid.io.arrow_fs import ArrowFileSystem, HadoopConnector, libhdfs_available
from spark_hive_acid.io.filesystem import FileStatus, FileSystem, LocalFileSystem
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.io.parallel import list_dirs_parallel
from spark_hive_acid.io.webhdfs import WebHdfsFileSystem


@pytest.fixture
def no_hadoop(monkeypatch):
    """A machine without a Hadoop client (so hdfsClient=auto means WebHDFS)."""
    for var in ("HADOOP_HOME", "ARROW_LIBHDFS_DIR", "HADOOP_USER_NAME"):
        monkeypatch.delenv(var, raising=False)


# --- scheme registration and options ---------------------------------------------------------------
def test_remote_schemes_are_registered_on_demand():
    fs, path = get_filesystem("webhdfs://nn.example:50070/warehouse/t", {"hdfsUser": "hive"})
    assert isinstance(fs, WebHdfsFileSystem) and path == "/warehouse/t"
    assert fs.url == "http://nn.example:50070" and fs._client is None  # nothing contacted yet
    from spark_hive_acid.io.registry import _FACTORIES

    for scheme in ("hdfs", "webhdfs", "swebhdfs", "s3", "s3a", "gs", "abfs", "abfss"):
        assert scheme in _FACTORIES


def test_unknown_scheme_lists_supported_ones():
    with pytest.raises(InvalidOptionError,
                       match=r"Unsupported file system scheme 'ftp'.*hdfs://.*webhdfs://"):
        get_filesystem("ftp://host/x", {})


def test_hdfs_uri_defaults_to_webhdfs_on_port_9870(no_hadoop):
    fs, path = get_filesystem("hdfs://namenode:8020/warehouse/db.db/t", {"hdfsUser": "hive"})
    assert isinstance(fs, WebHdfsFileSystem)
    assert (fs.url, fs.user, fs.scheme, path) == (
        "http://namenode:9870", "hive", "hdfs", "/warehouse/db.db/t")
    assert fs.uri(path) == "hdfs://namenode:8020/warehouse/db.db/t"
    assert fs.supports_atomic_rename()


def test_webhdfs_options_are_case_insensitive_and_validated(no_hadoop):
    fs, _ = get_filesystem("hdfs://nameservice1/t", {"WEBHDFSURL": "http://nn1:9870;http://nn2:9870/",
                                                      "HdfsClient": "WebHDFS", "webhdfsTimeout": "5"})
    assert fs.url == "http://nn1:9870;http://nn2:9870" and fs.timeout == 5.0
    for opts, msg in [({"hdfsClient": "jni"}, "hdfsClient"),
                      ({"webhdfsUrl": "nn:9870"}, "webhdfsUrl"),
                      ({"webhdfsUrl": "http://nn:9870/webhdfs/v1"}, "webhdfsUrl"),
                      ({"webhdfsAuth": "ntlm"}, "webhdfsAuth"),
                      ({"webhdfsTimeout": "-1"}, "webhdfsTimeout"),
                      ({"webhdfsTimeout": "soon"}, "webhdfsTimeout")]:
        with pytest.raises(InvalidOptionError, match=msg):
            get_filesystem("hdfs://nn/t", opts)


def test_hdfs_without_host_needs_webhdfs_url(no_hadoop):
    with pytest.raises(InvalidOptionError, match="webhdfsUrl"):
        get_filesystem("hdfs:///warehouse/t", {})
    fs, path = get_filesystem("hdfs:///warehouse/t", {"webhdfsUrl": "https://nn:9871"})
    assert fs.url == "https://nn:9871" and path == "/warehouse/t"


def test_libhdfs_requested_without_hadoop_client_is_an_option_error(no_hadoop):
    assert not libhdfs_available()
    with pytest.raises(InvalidOptionError, match="HADOOP_HOME"):
        get_filesystem("hdfs://nn:8020/t", {"hdfsClient": "libhdfs"})
    with pytest.raises(InvalidOptionError, match="hdfs://"):
        get_filesystem("webhdfs://nn:9870/t", {"hdfsClient": "libhdfs"})


def test_auto_falls_back_to_webhdfs_when_libhdfs_cannot_connect(tmp_path, monkeypatch, caplog):
    native = tmp_path / "hadoop" / "lib" / "native"
    native.mkdir(parents=True)
    (native / "libhdfs.so").write_bytes(b"")  # present but unloadable
    monkeypatch.setenv("HADOOP_HOME", str(tmp_path / "hadoop"))
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nojava"))
    monkeypatch.delenv("ARROW_LIBHDFS_DIR", raising=False)
    assert libhdfs_available()
    fs, path = get_filesystem("hdfs://nn:8020/t", {"hdfsUser": "hive"})
    assert isinstance(fs, WebHdfsFileSystem) and fs.url == "http://nn:9870"
    assert "using WebHDFS instead" in caplog.text
    fs, path = get_filesystem("hdfs://nn:8020/t", {"hdfsClient": "libhdfs"})
    assert isinstance(fs, ArrowFileSystem) and fs.supports_atomic_rename() and path == "/t"
    with pytest.raises(StorageError, match="Cannot connect to hdfs://nn:8020"):
        fs.list_dir(path)


def test_user_comes_from_option_then_hadoop_user_name(no_hadoop, monkeypatch):
    monkeypatch.setenv("HADOOP_USER_NAME", "etl")
    assert get_filesystem("webhdfs://nn:9870/t", {})[0].user == "etl"
    assert get_filesystem("webhdfs://nn:9870/t", {"hdfsUser": "hive"})[0].user == "hive"


def test_swebhdfs_uses_https_and_kerberos_option(no_hadoop):
    fs, _ = get_filesystem("swebhdfs://nn:9871/t", {"webhdfsAuth": "kerberos"})
    assert fs.url == "https://nn:9871" and fs.auth == "kerberos" and fs.user is None


def test_webhdfs_filesystem_pickles_without_a_client():
    fs = WebHdfsFileSystem("http://nn:9870", user="hive", display_prefix="hdfs://ns", scheme="hdfs")
    copy = pickle.loads(pickle.dumps(fs))
    assert copy == fs and copy.display_prefix == "hdfs://ns" and copy._client is None


# --- object stores -----------------------------------------------------------------------------------
def test_s3_reads_through_pyarrow_and_never_renames():
    """Writes there put every file at its final name (tests/test_s3_write*.py); a rename is a
    mistake, refused rather than emulated by a copy and a delete."""
    fs, path = get_filesystem("s3a://bucket/warehouse/t?region=us-east-1", {})  # no network needed
    assert isinstance(fs, ArrowFileSystem) and isinstance(fs.arrow, pafs.S3FileSystem)
    assert path == "bucket/warehouse/t" and not fs.supports_atomic_rename()
    with pytest.raises(StorageError,
                       match=r"Refusing to rename.*no atomic rename.*final name"):
        fs.rename(path + "/_tmp", path + "/delta_1_1")
    copy = pickle.loads(pickle.dumps(fs))
    assert isinstance(copy.arrow, pafs.S3FileSystem) and copy.arrow.region == "us-east-1"
    assert fs.uri(path) == "s3a://bucket/warehouse/t"


@pytest.mark.parametrize("uri, cls, expect", [
    ("gs://bucket/t", "GcsFileSystem", "bucket/t"),
    ("abfs://container@account.dfs.core.windows.net/t", "AzureFileSystem", "container/t"),
])
def test_other_object_stores(uri, cls, expect):
    if not hasattr(pafs, cls):
        pytest.skip(f"pyarrow built without {cls}")
    fs, path = get_filesystem(uri, {})
    assert type(fs.arrow).__name__ == cls and path == expect and not fs.supports_atomic_rename()


# --- ArrowFileSystem on local stand-ins ----------------------------------------------------------
@pytest.fixture(params=["subtree", "from_uri"])
def arrow_fs(request, tmp_path) -> tuple[ArrowFileSystem, str]:
    """An ArrowFileSystem with atomic renames over local disk (stand-in for libhdfs), and a root."""
    if request.param == "subtree":
        return ArrowFileSystem(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()),
                               scheme="local", atomic_rename=True, display_prefix="local://"), "t"
    arrow, root = pafs.FileSystem.from_uri((tmp_path / "t").as_uri())
    return ArrowFileSystem(arrow, scheme="file", atomic_rename=True, display_prefix="file://"), root


def test_arrow_fs_reading(arrow_fs):
    fs, root = arrow_fs
    table = pa.table({"x": list(range(1000))})
    fs.mkdirs(fs.join(root, "delta_1_1"))
    with fs.open_output(fs.join(root, "delta_1_1", "bucket_00000")) as f:
        po.write_table(table, f)
    fs.write_bytes(fs.join(root, "_orc_acid_version"), b"2")
    entries = {e.name: e for e in fs.list_dir(root)}
    assert set(entries) == {"delta_1_1", "_orc_acid_version"}
    assert entries["delta_1_1"].is_dir and entries["_orc_acid_version"].size == 1
    assert entries["delta_1_1"].path == fs.join(root, "delta_1_1")
    bucket = fs.join(root, "delta_1_1", "bucket_00000")
    assert po.ORCFile(fs.open_input(bucket)).read().equals(table)
    assert fs.read_bytes(bucket, 3) == b"ORC"
    st = fs.status(bucket)
    assert st.name == "bucket_00000" and not st.is_dir and st.size > 0
    assert fs.status(fs.join(root, "nope")) is None
    with pytest.raises(PathNotFoundError, match="Directory not found"):
        fs.list_dir(fs.join(root, "nope"))
    with pytest.raises(StorageError, match="Not a directory"):
        fs.list_dir(bucket)
    with pytest.raises(StorageError, match="File vanished.*compaction cleaner.*retry"):
        fs.open_input(fs.join(root, "delta_9_9", "bucket_00000"))


def test_arrow_fs_writing(arrow_fs):
    fs, root = arrow_fs
    fs.mkdirs(fs.join(root, "_tmp", "x"))
    fs.write_bytes(fs.join(root, "_tmp", "x", "b"), b"data")
    fs.mkdirs(fs.join(root, "delta_1_1"))
    with pytest.raises(StorageError, match="destination exists"):
        fs.rename(fs.join(root, "_tmp"), fs.join(root, "delta_1_1"))
    assert fs.list_dir(fs.join(root, "delta_1_1")) == []
    fs.rename(fs.join(root, "_tmp"), fs.join(root, "delta_2_2"))
    assert fs.read_bytes(fs.join(root, "delta_2_2", "x", "b")) == b"data"
    assert fs.create_exclusive(fs.join(root, "lock"), b"1") is True
    assert fs.create_exclusive(fs.join(root, "lock"), b"2") is False
    assert fs.read_bytes(fs.join(root, "lock")) == b"1"
    assert [e.name for e in fs.list_dir(root) if e.name.startswith(".")] == []  # temp file removed
    with pytest.raises(StorageError, match="not empty"):
        fs.delete(fs.join(root, "delta_2_2"))
    fs.delete(fs.join(root, "delta_2_2"), recursive=True)
    fs.delete(fs.join(root, "delta_1_1"))
    fs.delete(fs.join(root, "lock"))
    fs.delete(fs.join(root, "never"))
    assert fs.list_dir(root) == []


def test_arrow_fs_without_atomic_rename_or_conditional_create_refuses_commits(tmp_path):
    fs = ArrowFileSystem(pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem()),
                         scheme="s3", atomic_rename=False)
    fs.write_bytes("a", b"x")  # plain file writes are allowed (metastore mode writes data files)
    with pytest.raises(StorageError, match="s3://"):
        fs.rename("a", "b")
    with pytest.raises(StorageError, match=r"conditional create.*Nothing was written"):
        fs.create_exclusive("c", b"x")  # no conditional writes configured for this store
    assert fs.read_bytes("a") == b"x" and not fs.exists("b") and not fs.exists("c")


def test_arrow_fs_permission_denied(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        fs = ArrowFileSystem(pafs.LocalFileSystem(), scheme="file", atomic_rename=True,
                             display_prefix="file://")
        with pytest.raises(StorageError, match="Permission denied"):
            fs.list_dir(str(locked))
    finally:
        locked.chmod(0o755)


class _DeniedArrowFs:
    """Stands in for a pyarrow file system whose store answers access denied."""

    def get_file_info(self, *_):
        raise PermissionError("AccessDenied: s3 said no")

    def open_input_file(self, *_):
        raise OSError("When reading information for key 'k' in bucket 'b': AWS Error ACCESS_DENIED")


def test_arrow_fs_permission_errors_name_the_path():
    fs = ArrowFileSystem(_DeniedArrowFs(), scheme="s3", atomic_rename=False)
    fs._fs = fs._source  # already "connected"
    with pytest.raises(StorageError, match="Permission denied listing s3://b/t"):
        fs.list_dir("b/t")
    with pytest.raises(StorageError, match="Permission denied reading the status of s3://b/t/f"):
        fs.status("b/t/f")
    with pytest.raises(StorageError, match="Permission denied opening s3://b/t/k: .*ACCESS_DENIED"):
        fs.open_input("b/t/k")


def test_arrow_fs_pickles_lazy_hadoop_connector():
    fs = ArrowFileSystem(HadoopConnector("nn", 8020, user="hive"), scheme="hdfs", atomic_rename=True,
                         display_prefix="hdfs://nn:8020")
    copy = pickle.loads(pickle.dumps(fs))  # no connection attempted on either side
    assert copy._source == HadoopConnector("nn", 8020, user="hive") and copy._fs is None
    local = ArrowFileSystem(pafs.LocalFileSystem(), scheme="file", atomic_rename=True)
    assert isinstance(pickle.loads(pickle.dumps(local)).arrow, pafs.LocalFileSystem)


@pytest.mark.hdfs
@pytest.mark.skipif(not libhdfs_available(),
                    reason="libhdfs: no libhdfs.so here (no registry ships one: docs/storage.md)")
def test_libhdfs_against_the_real_cluster(hdfs):  # pragma: no cover - needs libhdfs.so
    """Where a Hadoop client is installed (HADOOP_HOME with lib/native/libhdfs.so, JAVA_HOME,
    CLASSPATH), hdfsClient=libhdfs against the MiniDFSCluster: the same table through libhdfs and
    WebHDFS."""
    from spark_hive_acid import read_table, write_table

    uri = f"hdfs://127.0.0.1:{hdfs.cluster.rpc_port}/w/t"
    fs, path = get_filesystem(uri, {"hdfsClient": "libhdfs"})
    assert isinstance(fs, ArrowFileSystem)
    fs.mkdirs(path)
    assert fs.create_exclusive(fs.join(path, "probe"), b"1") is True
    assert fs.create_exclusive(fs.join(path, "probe"), b"2") is False
    write_table(pa.table({"id": pa.array([1, 2], pa.int64())}), uri,
                options={"hdfsClient": "libhdfs"})
    assert sorted(read_table(hdfs.uri("/w/t")).column("id").to_pylist()) == [1, 2]


# --- list_dirs_parallel --------------------------------------------------------------------------
def test_list_dirs_parallel_matches_sequential(tmp_path):
    for i in range(20):
        (tmp_path / f"p={i}").mkdir()
        (tmp_path / f"p={i}" / "f").write_bytes(b"x" * i)
    fs = LocalFileSystem()
    paths = [str(tmp_path / f"p={i}") for i in reversed(range(20))]
    res = list_dirs_parallel(fs, paths + paths[:3], max_workers=4)
    assert list(res) == paths
    assert all(res[p] == fs.list_dir(p) for p in paths)
    assert list_dirs_parallel(fs, []) == {}
    assert list_dirs_parallel(fs, paths[:2], max_workers=1) == {p: fs.list_dir(p) for p in paths[:2]}


def test_list_dirs_parallel_errors_and_missing(tmp_path):
    (tmp_path / "a").mkdir()
    fs = LocalFileSystem()
    paths = [str(tmp_path / "a"), str(tmp_path / "gone")]
    with pytest.raises(PathNotFoundError):
        list_dirs_parallel(fs, paths)
    assert list_dirs_parallel(fs, paths, missing_ok=True) == {paths[0]: [], paths[1]: []}


class _SlowFs(FileSystem):
    """A file system whose listing costs a fixed round trip."""

    def __init__(self, rtt: float) -> None:
        self.rtt = rtt
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()

    def list_dir(self, path: str) -> list[FileStatus]:
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.rtt)
        with self._lock:
            self.active -= 1
        return [FileStatus(path + "/f", "f", False, 1)]


def test_list_dirs_parallel_overlaps_round_trips():
    fs = _SlowFs(0.02)
    paths = [f"/t/p={i}" for i in range(64)]
    t0 = time.perf_counter()
    res = list_dirs_parallel(fs, paths, max_workers=16)
    elapsed = time.perf_counter() - t0
    assert len(res) == 64 and fs.peak == 16
    assert elapsed < 64 * 0.02 / 4  # sequential would take 1.28 s


def test_remote_module_reexports_list_dirs_parallel():
    assert remote.list_dirs_parallel is list_dirs_parallel
