"""Remote storage back-ends, registered with :func:`~.registry.register_filesystem` on import.

Schemes and how they are served:

* ``hdfs://host[:port]/path``: libhdfs (pyarrow ``HadoopFileSystem``) or WebHDFS, by option
  ``hdfsClient`` = ``auto`` (default: libhdfs when the machine has a Hadoop client, else WebHDFS),
  ``libhdfs`` or ``webhdfs``. WebHDFS talks to option ``webhdfsUrl`` (default ``http://host:9870``).
* ``webhdfs://host:port/path`` and ``swebhdfs://host:port/path``: WebHDFS at ``http(s)://host:port``
  unless ``webhdfsUrl`` says otherwise.
* ``s3://``, ``s3a://``, ``s3n://``, ``gs://``, ``gcs://``, ``abfs://``, ``abfss://``: pyarrow's
  ``FileSystem.from_uri`` (credentials from the environment, as pyarrow reads them), or, for S3
  with Hadoop's ``fs.s3a.*`` options (endpoint, keys, path style; :mod:`.s3_settings`), a
  ``pyarrow.fs.S3FileSystem`` built from them; for ``abfs[s]://container@account.dfs.core.
  windows.net/path`` with a key or endpoint given (:mod:`.azure_settings`), a
  ``pyarrow.fs.AzureFileSystem``; for ``gs://`` with an endpoint or token given
  (:mod:`.gcs_settings`), a ``pyarrow.fs.GcsFileSystem``. Writes on S3, Azure Blob and GCS put
  files at their final names and claim names with conditional creates (:mod:`.s3_writes`,
  :mod:`.azure_writes`, :mod:`.gcs_writes`).

Options (case-insensitive): ``hdfsClient``, ``webhdfsUrl``, ``hdfsUser`` (default the environment's
``HADOOP_USER_NAME``, else the login name), ``webhdfsAuth`` (``simple`` | ``kerberos``),
``webhdfsTimeout`` (seconds).
"""
from __future__ import annotations

import getpass
import logging
import os
import re
from typing import Mapping, Optional
from urllib.parse import urlsplit

from .. import options as opt
from ..exceptions import InvalidOptionError, StorageError
from . import azure_settings, gcs_settings, s3_settings
from .arrow_fs import ArrowFileSystem, HadoopConnector, libhdfs_available, short_error
from .azure_client import AzureClient
from .azure_settings import AzureSettings
from .azure_writes import AzureWrites
from .filesystem import FileSystem
from .gcs_client import GcsClient
from .gcs_writes import GcsWrites
from .object_writes import ObjectWrites
from .parallel import list_dirs_parallel
from .registry import register_filesystem
from .s3_client import S3Client
from .s3_writes import S3Writes
from .webhdfs import WebHdfsFileSystem

_log = logging.getLogger(__name__)

__all__ = ["hdfs_factory", "webhdfs_factory", "object_store_factory", "list_dirs_parallel",
           "register_remote_filesystems", "DEFAULT_WEBHDFS_PORT", "DEFAULT_HDFS_RPC_PORT"]

DEFAULT_WEBHDFS_PORT = 9870  # Hadoop 3 NameNode HTTP port (50070 on Hadoop 2)
DEFAULT_HDFS_RPC_PORT = 8020
_URL_RE = re.compile(r"^https?://[^/\s;:]+(:\d+)?/?$", re.IGNORECASE)
_OBJECT_STORE_SCHEMES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs",
                         "abfs": "abfs", "abfss": "abfss"}


def _webhdfs_options(opts: dict[str, str], default_url: Optional[str], uri: str) -> dict:
    url = opt.value(opts, "webhdfsUrl") or default_url
    if not url:
        raise InvalidOptionError(
            f"No NameNode address in {uri}: set option webhdfsUrl to the NameNode's HTTP address "
            "(e.g. http://namenode:9870; several separated by ';' for HA)")
    for u in url.split(";"):
        if u and not _URL_RE.match(u.strip()):
            raise InvalidOptionError(
                f"Option webhdfsUrl='{url}' is not an HTTP address like http://namenode:9870 "
                "(several separated by ';' for NameNode HA)")
    url = ";".join(u.strip().rstrip("/") for u in url.split(";") if u.strip())
    auth = opt.value(opts, "webhdfsAuth")
    timeout = opt.value(opts, "webhdfsTimeout")
    user = opt.value(opts, "hdfsUser") or os.environ.get("HADOOP_USER_NAME")
    if not user and auth == "simple":
        user = getpass.getuser()  # decided on the driver, so executors act as the same user
    return {"url": url, "user": user or None, "auth": auth, "timeout": timeout}


def _path_of(uri: str) -> str:
    return urlsplit(uri).path or "/"


def webhdfs_factory(uri: str, options: Mapping[str, str]) -> tuple[FileSystem, str]:
    """``webhdfs://host:port/path`` (``swebhdfs://`` for HTTPS) -> (WebHdfsFileSystem, path)."""
    opts = opt.lowered(options)
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if opt.value(opts, "hdfsClient") == "libhdfs":
        raise InvalidOptionError(
            f"hdfsClient=libhdfs needs an hdfs:// path (the NameNode RPC address), not {uri}")
    default = None
    if parts.hostname:
        http = "https" if scheme == "swebhdfs" else "http"
        default = f"{http}://{parts.hostname}:{parts.port or DEFAULT_WEBHDFS_PORT}"
    kw = _webhdfs_options(opts, default, uri)
    fs = WebHdfsFileSystem(display_prefix=f"{scheme}://{parts.netloc}", scheme=scheme, **kw)
    return fs, _path_of(uri)


def hdfs_factory(uri: str, options: Mapping[str, str]) -> tuple[FileSystem, str]:
    """``hdfs://nameservice-or-host[:port]/path`` -> (libhdfs or WebHDFS FileSystem, path)."""
    opts = opt.lowered(options)
    parts = urlsplit(uri)
    choice = opt.value(opts, "hdfsClient")
    path = _path_of(uri)
    display = f"hdfs://{parts.netloc}"
    if choice == "libhdfs" or (choice == "auto" and libhdfs_available()):
        if choice == "libhdfs" and not libhdfs_available():
            raise InvalidOptionError(
                "hdfsClient=libhdfs but no usable libhdfs here: set HADOOP_HOME (or ARROW_LIBHDFS_DIR) "
                "and JAVA_HOME, and CLASSPATH to `hadoop classpath --glob`; or use hdfsClient=webhdfs")
        connector = HadoopConnector(parts.hostname or "default", parts.port or (0 if not parts.hostname
                                                                               else DEFAULT_HDFS_RPC_PORT),
                                    user=opt.value(opts, "hdfsUser") or None)
        fs = ArrowFileSystem(connector, scheme="hdfs", atomic_rename=True, display_prefix=display)
        if choice == "libhdfs":
            return fs, path
        try:
            fs.arrow  # connect now, on the driver: fall back to WebHDFS if libhdfs cannot
            _log.info("hdfs:// served by libhdfs for %s", display)
            return fs, path
        except (StorageError, OSError) as e:
            _log.warning("libhdfs could not connect to %s (%s); using WebHDFS instead", display,
                         short_error(e))
    default = f"http://{parts.hostname}:{DEFAULT_WEBHDFS_PORT}" if parts.hostname else None
    kw = _webhdfs_options(opts, default, uri)
    _log.info("hdfs:// served by WebHDFS at %s for %s", kw["url"], display)
    return WebHdfsFileSystem(display_prefix=display, scheme="hdfs", **kw), path


def object_store_factory(uri: str, options: Mapping[str, str]) -> tuple[FileSystem, str]:
    """``s3://bucket/path``, ``gs://…``, ``abfs://…`` -> (ArrowFileSystem, path) via pyarrow."""
    import pyarrow as pa
    from pyarrow import fs as pafs

    def _azure_settings(uri: str) -> Optional[tuple[AzureSettings, str]]:
        named = azure_settings.container_and_account(uri)
        if named is None:
            return None
        container, account, below = named
        return (azure_settings.resolve(account, options),
                "/".join(p for p in (container, below) if p))

    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    arrow_scheme = _OBJECT_STORE_SCHEMES[scheme]
    arrow_uri = arrow_scheme + uri[len(scheme):]
    azure = _azure_settings(uri) if arrow_scheme.startswith("abfs") else None
    gcs = gcs_settings.resolve(options) if arrow_scheme == "gs" else None
    try:
        if arrow_scheme == "s3" and s3_settings.given_as_options(options):
            settings = s3_settings.resolve(uri, options)
            arrow = pafs.S3FileSystem(**settings.arrow_kwargs())
            path = (parts.netloc + parts.path).rstrip("/")
        elif azure is not None and azure[0].explicit:
            arrow = pafs.AzureFileSystem(**azure[0].arrow_kwargs())
            path = azure[1]
        elif gcs is not None and not parts.query:  # retries bounded (io.gcs_settings)
            arrow = pafs.GcsFileSystem(**gcs.arrow_kwargs())
            path = (parts.netloc + parts.path).rstrip("/")
        else:
            arrow, path = pafs.FileSystem.from_uri(arrow_uri)
    except (pa.ArrowInvalid, ValueError) as e:
        raise InvalidOptionError(f"Cannot use {uri}: {e}") from e
    except OSError as e:
        raise StorageError(f"Cannot reach the object store for {uri}: {short_error(e)}") from e
    writes: Optional[ObjectWrites] = None
    if arrow_scheme == "s3":  # conditional creates and in-place uploads (io.s3_writes)
        writes = S3Writes(S3Client(s3_settings.resolve(uri, options)), scheme)
    elif azure is not None:  # the same on Azure Blob (io.azure_writes)
        writes = AzureWrites(AzureClient(azure[0]), scheme)
    elif gcs is not None:  # and on GCS (io.gcs_writes)
        writes = GcsWrites(GcsClient(gcs), scheme)
    fs = ArrowFileSystem(arrow, scheme=scheme, atomic_rename=False, display_prefix=f"{scheme}://",
                         writes=writes)
    return fs, path


def register_remote_filesystems() -> None:
    """Register every remote scheme's factory (done on import)."""
    register_filesystem("hdfs", hdfs_factory)
    register_filesystem("webhdfs", webhdfs_factory)
    register_filesystem("swebhdfs", webhdfs_factory)
    for scheme in _OBJECT_STORE_SCHEMES:
        register_filesystem(scheme, object_store_factory)


register_remote_filesystems()
