"""Cross-check the double with Hadoop's own Java WebHDFS client (the one in pyspark's jars).

Hadoop's ``org.apache.hadoop.hdfs.web.WebHdfsFileSystem`` parses every answer strictly (JSON
field names and types, redirects, status codes, exception class names), so driving it against
the double checks that the double speaks the protocol the way a real NameNode does. Run::

    PYTHONPATH=tests .venv/bin/python -m webhdfs_double.check_with_hadoop_client

It starts a local JVM through PySpark (10-30 s), prints one line per check and exits non-zero on
a failure. Not part of the fast test suite.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

from webhdfs_double import WebHdfsDouble
from webhdfs_double.server import make_tree


def _java_message(e: BaseException) -> str:
    """The Java exception behind a Py4J error (or the Python message)."""
    java = getattr(e, "java_exception", None)
    return str(java.toString()) if java is not None else str(e)


def main() -> int:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[1]").appName("webhdfs-double-check")
             .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
    jvm = spark.sparkContext._jvm
    failures = 0
    try:
        # pyspark's shaded hadoop-client-api lacks the Jersey RuntimeDelegate that Hadoop's
        # jsonParse needs to parse a Content-Type header (MediaType.valueOf): leave it off.
        with tempfile.TemporaryDirectory() as root, WebHdfsDouble(root, json_content_type=None) as srv:
            payload = bytes(range(256)) * 4096  # 1 MiB
            make_tree(srv, {"/t/p=1/f": payload, "/t/p=2/g": b"g"}, dirs=["/t/empty"])
            conf = jvm.org.apache.hadoop.conf.Configuration()
            conf.set("hadoop.http.authentication.type", "simple")
            conf.set("fs.webhdfs.impl.disable.cache", "true")
            uri = jvm.java.net.URI(srv.uri("/"))
            fs = jvm.org.apache.hadoop.fs.FileSystem.get(uri, conf, "alice")
            Path = jvm.org.apache.hadoop.fs.Path

            def check(name: str, fn) -> None:
                nonlocal failures
                try:
                    fn()
                    print(f"ok    {name}")
                except Exception as e:  # noqa: BLE001 - report and go on
                    failures += 1
                    print(f"FAIL  {name}: {_java_message(e)[:500]}")

            def listing() -> None:
                names = sorted(s.getPath().getName() for s in fs.listStatus(Path("/t")))
                assert names == ["empty", "p=1", "p=2"], names
                st = fs.getFileStatus(Path("/t/p=1/f"))
                assert st.getLen() == len(payload) and st.isFile() and st.getOwner() == "hdfs"
                assert fs.getFileStatus(Path("/t/empty")).isDirectory()

            def ranged_read() -> None:
                stream = fs.open(Path("/t/p=1/f"))
                buf = jvm.java.nio.ByteBuffer.allocate(100)
                stream.seek(500_000)
                data = bytearray()
                while len(data) < 100:
                    b = stream.read()
                    data.append(b)
                assert bytes(data) == payload[500_000:500_100], "seek+read mismatch"
                stream.close()
                del buf

            def create_and_read_back() -> None:
                out = fs.create(Path("/w/new/file"), False)
                out.write(b"hello from hadoop")
                out.close()
                with open(srv.local_path("/w/new/file"), "rb") as f:
                    assert f.read() == b"hello from hadoop"

            def create_existing_fails() -> None:
                try:
                    out = fs.create(Path("/w/new/file"), False)
                    out.write(b"x")
                    out.close()
                except Exception as e:  # noqa: BLE001
                    msg = _java_message(e)
                    assert "FileAlreadyExistsException" in msg or "already exists" in msg, msg
                    return
                raise AssertionError("create(overwrite=false) on an existing file succeeded")

            def mkdirs_rename_delete() -> None:
                assert fs.mkdirs(Path("/w/a/b"))
                assert fs.rename(Path("/w/a"), Path("/w/c"))
                assert not fs.rename(Path("/w/missing"), Path("/w/x"))
                assert fs.delete(Path("/w/c"), True)
                assert not fs.exists(Path("/w/c"))

            def rename_semantics() -> None:
                assert fs.mkdirs(Path("/r/src")) and fs.mkdirs(Path("/r/dst"))
                none = spark.sparkContext._gateway.new_array(jvm.org.apache.hadoop.fs.Options.Rename, 1)
                none[0] = jvm.org.apache.hadoop.fs.Options.Rename.NONE
                try:
                    fs.rename(Path("/r/src"), Path("/r/dst"), none)  # rename2: must refuse
                    raise AssertionError("rename2 onto an existing directory succeeded")
                except Exception as e:  # noqa: BLE001
                    if isinstance(e, AssertionError):
                        raise
                    assert "FileAlreadyExistsException" in _java_message(e), _java_message(e)
                assert fs.rename(Path("/r/src"), Path("/r/dst"))  # old rename: moves *into* dst
                assert fs.exists(Path("/r/dst/src"))

            def missing_is_file_not_found() -> None:
                try:
                    fs.getFileStatus(Path("/nope"))
                except Exception as e:  # noqa: BLE001
                    assert "FileNotFoundException" in _java_message(e), _java_message(e)
                    return
                raise AssertionError("no FileNotFoundException")

            def permission_denied() -> None:
                srv.forbid("/t/p=2")
                try:
                    fs.listStatus(Path("/t/p=2"))
                except Exception as e:  # noqa: BLE001
                    assert "AccessControlException" in _java_message(e), _java_message(e)
                    return
                finally:
                    srv.allow("/t/p=2")
                raise AssertionError("no AccessControlException")

            for name, fn in [("listStatus/getFileStatus", listing),
                             ("open+seek+read (redirected OPEN)", ranged_read),
                             ("create (two-step CREATE)", create_and_read_back),
                             ("create overwrite=false on existing", create_existing_fails),
                             ("mkdirs/rename/delete", mkdirs_rename_delete),
                             ("rename2 (renameoptions=NONE) vs old rename", rename_semantics),
                             ("FileNotFoundException", missing_is_file_not_found),
                             ("AccessControlException", permission_denied)]:
                check(name, fn)
            ops = sorted({r.op for r in srv.requests})
            print("operations Hadoop's client sent:", ", ".join(ops))
            fs.close()
    finally:
        spark.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    t0 = time.time()
    rc = main()
    print(f"done in {time.time() - t0:.0f} s", file=sys.stderr)
    os._exit(rc)
