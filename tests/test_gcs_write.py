"""Writes on GCS (``gs://bucket/...``, ``gcs://``) against a real GCS JSON API server:
fake-gcs-server 1.56.1 on 127.0.0.1 (marker ``gcs``, tests/gcs_server).

The primitives (conditional creates racing between processes, a lost answer resolved by the
nonce, uploads whole or not at all, the refusal of an endpoint that ignores the condition) and
path-mode writes, DML, compaction and vacuum renaming nothing, with a seeded random history
against the model. Concurrent commits, the streaming sink and Spark run as ``[gcs]`` in
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
from spark_hive_acid.io.gcs_client import NONCE_KEY
from spark_hive_acid.io.object_upload import WholeUpload
from spark_hive_acid.io.registry import get_filesystem
from test_s3_write import no_rename  # noqa: F401  (any rename or copy fails the test)
from test_s3_write_io import race_for_names

pytestmark = pytest.mark.gcs

BIG = bytes(range(256)) * (80 << 12)  # 20 MiB: a resumable upload of two parts


@pytest.fixture
def gcs_env(gcs, monkeypatch):
    """The bucket, reachable without options (STORAGE_EMULATOR_HOST)."""
    for k, v in gcs.environment().items():
        monkeypatch.setenv(k, v)
    return gcs


@pytest.mark.parametrize("scheme", ["gs", "gcs"])
def test_processes_racing_for_names_exactly_one_wins_each(gcs, scheme):
    winners = race_for_names(gcs.uri("race", scheme), gcs.options())
    assert all(len(w) == 1 for w in winners.values()), winners
    for k, (me,) in winners.items():
        assert gcs.read(f"race/claim-{k}") == f"racer {me}".encode()


def test_a_lost_answer_is_resolved_by_reading_the_nonce_back(gcs):
    with FaultProxy(gcs.server.port) as proxy:
        fs, path = get_filesystem(gcs.uri("t"), gcs.options(
            **{"fs.gs.storage.root.url": proxy.endpoint}))
        proxy.lose_answers(1, match=b"ifgenerationmatch=0")
        assert fs.create_exclusive(f"{path}/mine", b"mine") is True
        assert proxy.lost == 1
        assert gcs.metadata("t/mine")["metadata"].get(NONCE_KEY)  # the nonce is stored
        get_filesystem(gcs.uri("t"), gcs.options())[0].create_exclusive(f"{path}/theirs", b"them")
        proxy.lose_answers(1, match=b"ifgenerationmatch=0")  # its 412 lost: not our nonce
        assert fs.create_exclusive(f"{path}/theirs", b"mine") is False
        assert proxy.lost == 2
        total = len(BIG)  # the last part's answer (it finalizes the object) lost
        proxy.lose_answers(1, match=f"-{total - 1}/{total}".encode())
        with fs.open_output_exclusive(f"{path}/big") as f:
            f.write(BIG)
        assert proxy.lost == 3
    assert gcs.read("t/mine") == b"mine"
    assert gcs.read("t/theirs") == b"them"
    assert gcs.read("t/big") == BIG


@pytest.mark.parametrize("size", [100, len(BIG)], ids=["one-upload", "resumable"])
def test_uploads_appear_whole_or_not_at_all(gcs, size):
    """An exclusive upload never replaces an object; a failed or dropped writer leaves nothing."""
    fs, path = get_filesystem(gcs.uri("t"), gcs.options())
    fs.write_bytes(f"{path}/f", b"original")
    with pytest.raises(PathExistsError):
        with fs.open_output_exclusive(f"{path}/f") as f:
            f.write(BIG[:size])
    assert gcs.read("t/f") == b"original"
    with pytest.raises(RuntimeError):
        with fs.open_output_exclusive(f"{path}/failed") as f:
            f.write(BIG[:size])
            raise RuntimeError("the writer failed")
    f = fs.open_output_exclusive(f"{path}/dropped")
    assert isinstance(f, WholeUpload)
    f.write(BIG[:size])
    del f
    gc.collect()
    with fs.open_output(f"{path}/replaced") as f:  # not exclusive: replaces
        f.write(b"old")
    with fs.open_output(f"{path}/replaced") as f:
        f.write(BIG[:size])
    assert gcs.read("t/replaced") == BIG[:size]
    assert gcs.keys("t") == ["t/f", "t/replaced"]


class _Careless(http.server.BaseHTTPRequestHandler):
    """A GCS endpoint that ignores conditions: every upload "created", every object "not found",
    every listing empty."""

    seen: list[tuple[str, str]] = []

    def _answer(self, status: int, body: bytes = b"") -> None:
        self.seen.append((self.command, self.path))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_POST(self) -> None:
        self._answer(200, b'{"kind": "storage#object", "generation": "1"}')

    def do_PUT(self) -> None:
        self._answer(200, b"{}")

    def do_DELETE(self) -> None:
        self._answer(204)

    def do_GET(self) -> None:
        listing = self.path.split("?", 1)[0].endswith("/o")
        self._answer(200, b'{"kind": "storage#objects"}') if listing else self._answer(404, b"{}")

    def log_message(self, *a: object) -> None:
        pass


def test_writes_refused_where_the_endpoint_ignores_the_condition(gcs):
    """The probe sees a second conditional upload succeed: the write is refused naming why, and
    nothing but the probe (two uploads, one delete) reached the endpoint."""
    object_client.forget_checks()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Careless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Careless.seen = []
    try:
        opts = {"fs.gs.storage.root.url": f"http://127.0.0.1:{server.server_address[1]}"}
        with pytest.raises(StorageError, match="does not honour conditional creates.*ignored "
                                               "ifGenerationMatch=0.*nothing was written"):
            write_table(pa.table({"id": [1, 2]}), gcs.uri("w/t"), options=opts)
    finally:
        server.shutdown()
    writes = [(m, p) for m, p in _Careless.seen if m in ("PUT", "POST", "DELETE")]
    assert [m for m, _ in writes] == ["POST", "POST", "DELETE"], writes
    assert all("_hiveacid_probe" in p for _, p in writes), writes


def test_writes_refused_without_a_token_on_googles_endpoint(gcs, monkeypatch):
    """Google's own endpoint and no token: refused before any request."""
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    monkeypatch.delenv("GOOGLE_OAUTH_ACCESS_TOKEN", raising=False)
    fs, path = get_filesystem(gcs.uri("w/t"), {})
    with pytest.raises(StorageError, match="need an OAuth 2 access token.*Nothing was written"):
        fs.check_writable(path)


def test_a_token_is_sent_as_a_bearer_token(gcs):
    fs, path = get_filesystem(gcs.uri("t"), gcs.options(**{"fs.gs.auth.access.token": "tok"}))
    assert fs.writes.client.settings.token == "tok"
    res = fs.writes.client.send("GET", gcs.name, "t/none")
    assert res.request.headers["Authorization"] == "Bearer tok"


@pytest.mark.parametrize("buckets", [0, 2])
def test_writes_dml_and_compaction_rename_nothing(gcs_env, no_rename, buckets):  # noqa: F811
    writes_dml_and_compaction_rename_nothing(gcs_env.uri("w/t"), lambda: gcs_env.keys("w/t"),
                                             no_rename, buckets)


def test_a_random_history_matches_the_model(gcs_env):
    random_history_matches_the_model(gcs_env.uri("h/t"))
