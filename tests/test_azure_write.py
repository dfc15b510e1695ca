"""Writes on Azure Blob (``abfs://container@account.dfs.core.windows.net/...``) against a real
Blob server: Azurite 3.37.0 on 127.0.0.1 (marker ``azure``, tests/azure_server).

The primitives (conditional creates racing between processes, a lost answer resolved by the
nonce, uploads whole or not at all, the refusal of an endpoint that ignores the condition) and
path-mode writes, DML, compaction and vacuum renaming nothing, with a seeded random history
against the model. Concurrent commits and the streaming sink run as ``[azure]`` in
``tests/test_storage_*.py`` (storage targets).
"""
from __future__ import annotations

import gc
import http.server
import threading

import pyarrow as pa
import pytest

from object_store_histories import (random_history_matches_the_model,
                                  writes_dml_and_compaction_rename_nothing)
from s3_server.proxy import FaultProxy
from spark_hive_acid import write_table
from spark_hive_acid.exceptions import PathExistsError, StorageError
from spark_hive_acid.io import object_client
from spark_hive_acid.io.azure_client import NONCE_HEADER
from spark_hive_acid.io.object_upload import WholeUpload
from spark_hive_acid.io.registry import get_filesystem
from test_s3_write import no_rename  # noqa: F401  (any rename or copy fails the test)
from test_s3_write_io import race_for_names

pytestmark = pytest.mark.azure


@pytest.fixture
def azure_env(azure, monkeypatch):
    """The container, reachable without options (AZURE_STORAGE_CONNECTION_STRING)."""
    for k, v in azure.environment().items():
        monkeypatch.setenv(k, v)
    return azure


def test_processes_racing_for_names_exactly_one_wins_each(azure):
    winners = race_for_names(azure.uri("race"), azure.options())
    assert all(len(w) == 1 for w in winners.values()), winners
    for k, (me,) in winners.items():
        assert azure.read(f"race/claim-{k}") == f"racer {me}".encode()


def test_a_lost_answer_is_resolved_by_reading_the_nonce_back(azure):
    with FaultProxy(azure.server.port) as proxy:
        opts = azure.options(**{"fs.azure.blob.endpoint": proxy.endpoint + "/devstoreaccount1"})
        fs, path = get_filesystem(azure.uri("t"), opts)
        proxy.lose_answers(1)
        assert fs.create_exclusive(f"{path}/mine", b"mine") is True
        assert proxy.lost == 1
        meta = fs.writes.client.head(*fs.writes.split(f"{path}/mine"))
        assert meta.get(NONCE_HEADER)  # the nonce is stored
        get_filesystem(azure.uri("t"), azure.options())[0].create_exclusive(f"{path}/theirs",
                                                                            b"them")
        proxy.lose_answers(1)  # its 409 lost: the nonce read back is not ours
        assert fs.create_exclusive(f"{path}/theirs", b"mine") is False
        assert proxy.lost == 2
        big = bytes(range(256)) * (80 << 12)  # 20 MiB: two blocks and a block list
        proxy.lose_answers(1, match=b"comp=blocklist")
        with fs.open_output_exclusive(f"{path}/big") as f:
            f.write(big)
        assert proxy.lost == 3
    assert azure.read("t/mine") == b"mine"
    assert azure.read("t/theirs") == b"them"
    assert azure.read("t/big") == big


@pytest.mark.parametrize("size", [100, 20 << 20], ids=["one-put", "blocks"])
def test_uploads_appear_whole_or_not_at_all(azure, size):
    """An exclusive upload never replaces a blob; a failed or dropped writer leaves nothing."""
    fs, path = get_filesystem(azure.uri("t"), azure.options())
    fs.write_bytes(f"{path}/f", b"original")
    with pytest.raises(PathExistsError):
        with fs.open_output_exclusive(f"{path}/f") as f:
            f.write(b"x" * size)
    assert azure.read("t/f") == b"original"
    with pytest.raises(RuntimeError):
        with fs.open_output_exclusive(f"{path}/failed") as f:
            f.write(b"x" * size)
            raise RuntimeError("the writer failed")
    f = fs.open_output_exclusive(f"{path}/dropped")
    assert isinstance(f, WholeUpload)
    f.write(b"y" * size)
    del f
    gc.collect()
    assert azure.keys("t") == ["t/f"]


class _Careless(http.server.BaseHTTPRequestHandler):
    """A Blob endpoint that ignores conditions: every put "created", every read "not found"."""

    seen: list[tuple[str, str]] = []

    def _answer(self, status: int, body: bytes = b"") -> None:
        self.seen.append((self.command, self.path))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_PUT(self) -> None:
        self._answer(201)

    def do_DELETE(self) -> None:
        self._answer(202)

    def do_GET(self) -> None:
        if "comp=list" in self.path:
            self._answer(200, b'<?xml version="1.0" encoding="utf-8"?><EnumerationResults>'
                              b"<Blobs/><NextMarker/></EnumerationResults>")
        else:
            self._answer(404)

    def do_HEAD(self) -> None:
        self._answer(404)

    def log_message(self, *a: object) -> None:
        pass


def test_writes_refused_where_the_endpoint_ignores_the_condition(azure):
    """The probe sees a second conditional Put Blob succeed: the write is refused naming why,
    and nothing but the probe (two puts, one delete) reached the endpoint."""
    object_client.forget_checks()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Careless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Careless.seen = []
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/devstoreaccount1"
        opts = azure.options(**{"fs.azure.blob.endpoint": endpoint})
        with pytest.raises(StorageError, match="does not honour conditional creates.*ignored "
                                               "If-None-Match.*nothing was written"):
            write_table(pa.table({"id": [1, 2]}), azure.uri("w/t"), options=opts)
    finally:
        server.shutdown()
    writes = [(m, p) for m, p in _Careless.seen if m in ("PUT", "POST", "DELETE")]
    assert [m for m, _ in writes] == ["PUT", "PUT", "DELETE"], writes
    assert all("_hiveacid_probe" in p for _, p in writes), writes


def test_writes_refused_without_the_key(azure):
    with pytest.raises(StorageError, match="need the storage account's Shared Key.*"
                                           "Nothing was written"):
        write_table(pa.table({"id": [1]}), azure.uri("w/t"),
                    options={"fs.azure.blob.endpoint": azure.endpoint})
    assert azure.keys() == []


@pytest.mark.parametrize("buckets", [0, 2])
def test_writes_dml_and_compaction_rename_nothing(azure_env, no_rename, buckets):  # noqa: F811
    writes_dml_and_compaction_rename_nothing(azure_env.uri("w/t"), lambda: azure_env.keys("w/t"),
                                             no_rename, buckets)


def test_a_random_history_matches_the_model(azure_env):
    random_history_matches_the_model(azure_env.uri("h/t"))
