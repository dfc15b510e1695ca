"""create_exclusive on WebHDFS and what a real NameNode shows while a file is being written: each
test against the WebHDFS double and the real HDFS (MiniDFSCluster, marker ``hdfs``). The real
NameNode lists a ``CREATE``d file from the moment the DataNode opens it and keeps a cut-off
upload's partial file; the double created files whole. Hence create_exclusive's temporary file
renamed into place (docs/storage.md, "What the real HDFS showed")."""
from __future__ import annotations

import threading
import time

import pytest
from hdfs import InsecureClient

from spark_hive_acid.exceptions import StorageError
from spark_hive_acid.io.webhdfs import WebHdfsFileSystem


@pytest.fixture
def target(webhdfs_target):
    return webhdfs_target


def _paused_upload(first: bytes, rest: bytes, seen: threading.Event):
    """Upload data (chunked) that stops after ``first`` until ``seen`` is set."""
    yield first
    assert seen.wait(30), "the watcher never looked"
    yield rest


def test_a_plain_create_is_visible_while_it_is_written(target):
    """WebHDFS CREATE (overwrite=false) is create-if-absent, but a real NameNode lists the file
    from the moment the DataNode opens it: empty, then growing, until the upload ends. The double
    creates it whole. Why create_exclusive does not use a plain CREATE (next test)."""
    c = InsecureClient(target.url, user=target.user)
    seen = threading.Event()
    sizes: list = []

    def watch() -> None:
        fs = target.fs()
        for _ in range(60):  # the upload is paused meanwhile
            st = fs.status("/rec")
            if st is not None:
                sizes.append(st.size)
                break
            time.sleep(0.005)
        seen.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    c.write("/rec", data=_paused_upload(b"x" * 1000, b"y" * 1000, seen), overwrite=False)
    watcher.join()
    assert target.read("/rec") == b"x" * 1000 + b"y" * 1000
    if target.real:
        assert sizes and sizes[0] < 2000  # a reader would have read a partial file
    else:
        assert sizes == []  # the double: absent until whole


def test_create_exclusive_is_whole_when_it_appears(target, monkeypatch):
    """create_exclusive writes a hidden temporary sibling and renames it into place (RENAME with
    renameoptions=NONE: refused when the target exists), so the target appears whole: a reader
    never sees a partial log record, even on a real NameNode (previous test)."""
    fs = target.fs()
    seen = threading.Event()
    sizes: list = []
    payload = b"r" * 5000
    inner = WebHdfsFileSystem.upload

    def paused(self, path, data, *, overwrite):  # the upload stops half way until watched
        return inner(self, path, _paused_upload(data[:2500], data[2500:], seen),
                     overwrite=overwrite)

    monkeypatch.setattr(WebHdfsFileSystem, "upload", paused)

    def watch() -> None:
        watcher_fs = target.fs()
        for _ in range(40):  # the upload is paused meanwhile: ~0.2 s of looking
            st = watcher_fs.status("/locks/rec")
            if st is not None:
                sizes.append(st.size)
            time.sleep(0.005)
        seen.set()

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert fs.create_exclusive("/locks/rec", payload) is True
    watcher.join()
    assert sizes == []  # not there while its data was on the way
    assert target.read("/locks/rec") == payload
    seen.set()
    assert fs.create_exclusive("/locks/rec", b"other") is False
    assert target.read("/locks/rec") == payload
    assert target.names("/locks") == ["rec"]  # no temporary file left behind, winner or loser


def test_create_exclusive_cut_off_mid_upload_leaves_no_record(target, monkeypatch):
    """A writer dying while its record is on the way leaves nothing at the record's name (a real
    DataNode keeps a plain CREATE's partial file: a damaged log record for every reader)."""
    fs = target.fs()
    fs.mkdirs("/log/events")
    inner = WebHdfsFileSystem.upload

    def cut_off(data: bytes):
        yield data[:1000]
        raise ConnectionAbortedError("writer killed")

    def dying(self, path, data, *, overwrite):
        return inner(self, path, cut_off(data), overwrite=overwrite)

    monkeypatch.setattr(WebHdfsFileSystem, "upload", dying)
    with pytest.raises((ConnectionAbortedError, StorageError)):
        fs.create_exclusive("/log/events/0000001.json", b"e" * 5000)
    monkeypatch.undo()
    if target.real:
        time.sleep(1.0)  # a real DataNode closes the cut-off file a few hundred ms later
    assert not target.exists("/log/events/0000001.json")
    assert [n for n in target.names("/log/events") if not n.startswith(".")] == []
    assert fs.create_exclusive("/log/events/0000001.json", b"whole") is True
    assert target.read("/log/events/0000001.json") == b"whole"
