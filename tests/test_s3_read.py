"""Reading Hive ACID tables from S3 (``s3a://``, ``s3://``) against a real S3 server (moto on
127.0.0.1, ``tests/s3_server``; marker ``s3``): our written tables and Hive-written corpus tables
copied into a bucket read as from local disk, through ``read_table`` and Spark, with Hadoop's
``fs.s3a.*`` options or the AWS environment variables; requests per file counted in the server's
log; the conditional-create probe that object-store writes use (writes: test_s3_write*.py)."""
from __future__ import annotations

import collections
import datetime as dt
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pyarrow as pa
import pytest

from spark_hive_acid import read_table, write_table
from spark_hive_acid.exceptions import InvalidOptionError, StorageError, UnknownOptionError
from spark_hive_acid.io import s3_settings
from spark_hive_acid.io.arrow_fs import ArrowFileSystem
from spark_hive_acid.io.registry import get_filesystem
from spark_hive_acid.io.s3_conditional import sign, supports_conditional_create

pytestmark = pytest.mark.s3
MAX = 9223372036854775807


def _table(n: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": pa.array(np.arange(n), pa.int64()),
                     "s": pa.array([f"v{x}" for x in rng.integers(0, 1 << 40, n)]),
                     "x": rng.random(n), "p": pa.array(np.arange(n) % 2, pa.int32())})


def _written(tmp_path) -> str:
    """A partitioned table written locally in two appends."""
    path = str(tmp_path / "t")
    write_table(_table(200_000), path, partition_by=["p"])
    write_table(_table(1000, seed=1).set_column(0, "id", pa.array(np.arange(1000) + 10**6)), path)
    return path


def _row_ids(t: pa.Table) -> list:
    return sorted(zip(t.column("row__id").to_pylist(), t.column("id").to_pylist()),
                  key=lambda r: (r[0]["writeId"], r[0]["bucketId"], r[0]["rowId"]))


# --- the server itself ---------------------------------------------------------------------------
def test_the_server_refuses_a_second_conditional_put(s3):
    """moto implements PutObject with If-None-Match: * (what object-store commits will need)."""
    c = s3.client()
    c.put_object(Bucket=s3.name, Key="log/1.json", Body=b"first", IfNoneMatch="*")
    with pytest.raises(Exception) as ei:
        c.put_object(Bucket=s3.name, Key="log/1.json", Body=b"second", IfNoneMatch="*")
    assert ei.value.response["Error"]["Code"] == "PreconditionFailed"
    assert c.get_object(Bucket=s3.name, Key="log/1.json")["Body"].read() == b"first"


# --- reads ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["s3a", "s3"])
def test_written_table_read_from_s3_equals_local(s3, tmp_path, scheme):
    local = _written(tmp_path)
    s3.upload(local, "warehouse/t")
    remote = read_table(s3.uri("warehouse/t", scheme), includeRowId="true", **s3.options())
    here = read_table(local, includeRowId="true")
    assert remote.num_rows == 201_000
    assert _row_ids(remote) == _row_ids(here)
    assert remote.sort_by("id").drop(["row__id"]).equals(here.sort_by("id").drop(["row__id"]))
    snap = read_table(s3.uri("warehouse/t", scheme), validWriteIds=f"d.t:1:{MAX}::",
                      **s3.options())
    assert snap.num_rows == 200_000  # a snapshot before the second write


@pytest.mark.parametrize("name,options,rows", [
    ("nation25k", {}, 23_000),
    ("nation25k", {"validWriteIds": f"d.t:3:{MAX}::"}, 24_000),
    ("alltypes_original", {"includeRowId": "true"}, 7300),
])
def test_corpus_table_read_from_s3_equals_local(s3, corpus_copy, name, options, rows):
    local = corpus_copy(name)
    uri = s3.upload(local, f"corpus/{name}")
    remote = read_table(uri, **s3.options(), **options)
    assert remote.num_rows == rows
    assert remote.equals(read_table(local, **options))


def test_aws_environment_variables_work_without_options(s3, tmp_path, monkeypatch):
    local = str(tmp_path / "t")
    write_table(_table(500), local)
    s3.upload(local, "env/t")
    for k, v in s3.environment().items():
        monkeypatch.setenv(k, v)
    remote = read_table(s3.uri("env/t"))
    assert remote.sort_by("id").equals(read_table(local).sort_by("id"))


@pytest.mark.spark
def test_spark_reads_s3a_with_s3a_options(spark, s3, tmp_path):
    s3.upload(_written(tmp_path), "warehouse/t")
    reader = spark.read.format("hiveacid")
    for k, v in s3.options().items():
        reader = reader.option(k, v)
    df = reader.load(s3.uri("warehouse/t"))
    assert df.count() == 201_000
    assert df.filter("p = 1 and id < 100").count() == 50
    assert df.filter("id >= 1000000").count() == 1000


def test_one_stripe_files_cost_three_requests(s3, tmp_path):
    """Per data file: pyarrow's open (a HEAD), the tail (footer) and the stripe; the file the
    schema is taken from is opened twice, its tail fetched once. pyarrow's own S3 file sends a
    GET per footer and stream read."""
    local = str(tmp_path / "t")
    write_table(_table(600_000), local, partition_by=["p"])  # two files, one stripe each (~4 MB)
    uri = s3.upload(local, "count/t")
    fs, path = get_filesystem(uri, s3.options())
    sizes = {e.path: e.size for p in ("p=0", "p=1")
             for e in fs.list_dir(f"{path}/{p}/delta_0000001_0000001_0000")
             if e.name.startswith("bucket_")}
    assert len(sizes) == 2 and min(sizes.values()) > 2 << 20
    mark = s3.log_mark()
    assert read_table(uri, **s3.options()).num_rows == 600_000
    sent = collections.Counter((r.method, r.path.split("?")[0])
                               for r in s3.requests_since(mark) if "bucket_" in r.path)
    for p in sizes:
        key = f"/{p}"
        assert sent[("GET", key)] == 2, sent  # the tail, the stripe
        assert 1 <= sent[("HEAD", key)] <= 2, sent
    assert sum(n for (m, _), n in sent.items() if m == "HEAD") <= 3, sent
    plain = ArrowFileSystem(fs.arrow, scheme="s3a", atomic_rename=False, ranged_reads=False)
    mark = s3.log_mark()
    import pyarrow.orc as po

    with plain.open_input(next(iter(sizes))) as f:
        assert po.ORCFile(f).read().num_rows == 300_000
    gets = [r for r in s3.requests_since(mark) if r.method == "GET"]
    assert len(gets) > 4  # pyarrow alone: a GET per footer and stream read


def test_a_file_removed_after_planning_is_reported_as_vanished(s3, tmp_path):
    local = str(tmp_path / "t")
    write_table(_table(1000), local)
    uri = s3.upload(local, "gone/t")
    fs, path = get_filesystem(uri, s3.options())
    bucket_file = path + "/delta_0000001_0000001_0000/bucket_00000"
    f = fs.open_input(bucket_file)
    s3.client().delete_object(Bucket=s3.name, Key="gone/t/delta_0000001_0000001_0000/bucket_00000")
    with pytest.raises(StorageError, match=r"File vanished: s3a://.*bucket_00000.*retry"):
        f.read()
    with pytest.raises(StorageError, match="File vanished"):
        fs.open_input(bucket_file)


# --- options ------------------------------------------------------------------------------------
def test_s3a_options_map_to_pyarrow():
    got = s3_settings.resolve("s3a://b/t", {"FS.S3A.ENDPOINT": "minio:9000",
                                            "fs.s3a.connection.ssl.enabled": "false",
                                            "fs.s3a.access.key": "ak", "fs.s3a.secret.key": "sk",
                                            "fs.s3a.path.style.access": "true",
                                            "fs.s3a.endpoint.region": "eu-west-1"}, environ={})
    assert got.arrow_kwargs() == {"endpoint_override": "minio:9000", "scheme": "http",
                                  "region": "eu-west-1", "access_key": "ak", "secret_key": "sk",
                                  "force_virtual_addressing": False}
    env = {"AWS_ACCESS_KEY_ID": "env-ak", "AWS_SECRET_ACCESS_KEY": "env-sk",
           "AWS_ENDPOINT_URL": "https://s3.example"}
    mixed = s3_settings.resolve("s3a://b/t?region=ap-south-1",
                                {"fs.s3a.access.key": "opt-ak"}, environ=env)
    assert (mixed.access_key, mixed.secret_key, mixed.endpoint, mixed.region) == \
        ("opt-ak", "env-sk", "https://s3.example", "ap-south-1")
    virtual = s3_settings.resolve("s3a://b/t", {"fs.s3a.path.style.access": "false"}, environ={})
    assert virtual.arrow_kwargs()["force_virtual_addressing"] is True
    for bad in ({"fs.s3a.path.style.access": "maybe"}, {"fs.s3a.endpoint": "ftp://x"}):
        with pytest.raises(InvalidOptionError, match="fs.s3a"):
            get_filesystem("s3a://b/t", bad)
    with pytest.raises(InvalidOptionError, match="endpoint_override"):
        s3_settings.from_query("endpoint=x")


def test_a_misspelt_s3a_option_is_refused_with_the_closest_name():
    from spark_hive_acid import options as opt

    with pytest.raises(UnknownOptionError, match="did you mean fs.s3a.secret.key"):
        opt.check_known({"fs.s3a.secret.keys": "x"}, "load")


# --- conditional create ------------------------------------------------------------------------
def test_signature_matches_botocore():
    """Known answers from an independent SigV4 implementation (botocore, installed with moto)."""
    from unittest import mock

    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    now = dt.datetime(2026, 11, 26, 12, 34, 56, tzinfo=dt.timezone.utc)
    settings = s3_settings.S3Settings(endpoint="http://127.0.0.1:9000", access_key="AKID",
                                      secret_key="secret/key+1", region="eu-central-1")
    for method, url, body, token in [
            ("PUT", "http://127.0.0.1:9000/bkt/w/t/p%3D1/_hiveacid_probe/a%20b", b"payload", None),
            ("DELETE", "http://127.0.0.1:9000/bkt/k", b"", "session-token"),
            ("GET", "http://127.0.0.1:9000/bkt?list-type=2&prefix=w%2Ft%2F", b"", None)]:
        s = s3_settings.S3Settings(**{**settings.__dict__, "session_token": token})
        ours = sign(method, url, {}, body, s, now=now)
        req = AWSRequest(method=method, url=url, data=body,
                         headers={"x-amz-content-sha256": ours["x-amz-content-sha256"]})
        with mock.patch("botocore.auth.get_current_datetime", return_value=now.replace(tzinfo=None)):
            S3SigV4Auth(Credentials("AKID", "secret/key+1", token), "s3",
                        "eu-central-1").add_auth(req)
        assert ours["Authorization"] == req.headers["Authorization"], (method, url)


def test_conditional_create_is_confirmed_on_the_server(s3):
    check = supports_conditional_create(s3.uri("warehouse/t"), s3.options())
    assert check.supported and check.endpoint == s3.endpoint and "412" in check.detail
    keys = s3.client().list_objects_v2(Bucket=s3.name).get("KeyCount", 0)
    assert keys == 0  # the probe object is gone


class _IgnoresConditions(BaseHTTPRequestHandler):
    """An S3 endpoint that ignores If-None-Match (a double: the real server cannot be made to)."""

    def do_PUT(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_DELETE = do_PUT  # noqa: N815

    def log_message(self, *args) -> None:
        pass


def test_an_endpoint_ignoring_the_condition_is_refused():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _IgnoresConditions)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        opts = {"fs.s3a.endpoint": f"http://127.0.0.1:{srv.server_address[1]}",
                "fs.s3a.access.key": "a", "fs.s3a.secret.key": "b"}
        check = supports_conditional_create("s3a://bkt/t", opts)
        assert not check and "ignored If-None-Match" in check.detail
    finally:
        srv.shutdown()
        srv.server_close()


def test_conditional_create_errors(s3):
    with pytest.raises(StorageError, match="refused a PutObject.*404"):
        supports_conditional_create("s3a://no-such-bucket-here/t", s3.options())
    with pytest.raises(InvalidOptionError, match="Not an S3 location"):
        supports_conditional_create("hdfs://nn/t", {})
