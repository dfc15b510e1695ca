"""The connector's FileSystem over a ``pyarrow.fs.FileSystem``: object stores and libhdfs.

:class:`ArrowFileSystem` serves ``s3://`` (and ``s3a://``), ``gs://`` and ``abfs://`` paths for
reading, and ``hdfs://`` through pyarrow's ``HadoopFileSystem`` (libhdfs, JNI) when the machine has
a Hadoop client. Object stores have no atomic rename: there ``supports_atomic_rename()`` is False
and :meth:`ArrowFileSystem.rename` refuses. On S3 the writes this library needs go through
``writes`` (:class:`~.s3_writes.S3Writes`): create-if-absent by a conditional ``PutObject``, data
files uploaded straight to their final names (``writes_in_place``); other object stores refuse
writes (:meth:`ArrowFileSystem.check_writable`), before anything is written.

Pickling: pyarrow file systems pickle by their options; libhdfs connections are described by a
:class:`HadoopConnector` and opened on first use.
"""
from __future__ import annotations

import glob
import logging
import os
import posixpath
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Optional, Union

from ..exceptions import StorageError, PathNotFoundError
from .arrow_files import ArrowRangedFile, RecentFiles
from .filesystem import FileStatus, FileSystem, binary_file
from .object_writes import ObjectWrites

_log = logging.getLogger(__name__)

OBJECT_STORE_WRITE_REFUSAL = (
    "object stores have no atomic rename, and writes on {scheme}:// paths put every file at its "
    "final name instead (docs/storage.md, \"Object stores: writes\")")
NO_CONDITIONAL_WRITES = (
    "Writes to {scheme}:// tables are refused: they need the store's conditional create "
    "(create-if-absent), which this library implements for S3 (s3://, s3a://), Azure Blob "
    "(abfs[s]://container@account.dfs.core.windows.net/path) and GCS (gs://, gcs://). Nothing "
    "was written")


@dataclass(frozen=True)
class HadoopConnector:
    """Arguments of ``pyarrow.fs.HadoopFileSystem``; calling it connects (libhdfs, JNI)."""

    host: str
    port: int = 8020
    user: Optional[str] = None
    kerb_ticket: Optional[str] = None
    extra_conf: tuple[tuple[str, str], ...] = field(default=())

    def __call__(self) -> Any:
        from pyarrow import fs as pafs

        return pafs.HadoopFileSystem(self.host, self.port, user=self.user,
                                     kerb_ticket=self.kerb_ticket,
                                     extra_conf=dict(self.extra_conf) or None)


def libhdfs_available() -> bool:
    """True when pyarrow could load libhdfs: ``libhdfs.so`` under ARROW_LIBHDFS_DIR or
    HADOOP_HOME, and a JVM (JAVA_HOME)."""
    dirs = []
    if os.environ.get("ARROW_LIBHDFS_DIR"):
        dirs.append(os.environ["ARROW_LIBHDFS_DIR"])
    home = os.environ.get("HADOOP_HOME")
    if home:
        dirs += [os.path.join(home, "lib", "native"), os.path.join(home, "lib")]
    found = any(glob.glob(os.path.join(d, "libhdfs.so*")) or glob.glob(os.path.join(d, "libhdfs.dylib"))
                for d in dirs)
    if not found:
        return False
    if not os.environ.get("JAVA_HOME"):
        _log.info("libhdfs found but JAVA_HOME is not set: libhdfs is not usable")
        return False
    return True


def short_error(e: BaseException, limit: int = 400) -> str:
    """The first line of an error message, cut to ``limit`` characters (JNI errors are long)."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return text if len(text) <= limit else text[:limit] + "..."


ArrowSource = Union[Any, Callable[[], Any]]  # a pyarrow FileSystem, or a picklable factory of one


class ArrowFileSystem(FileSystem):
    """Our FileSystem over a pyarrow file system.

    ``source`` is a ``pyarrow.fs.FileSystem`` (pickled by pyarrow, by its options) or a picklable
    callable returning one (called on first use in each process, e.g. :class:`HadoopConnector`).
    ``atomic_rename`` says whether the store renames atomically (HDFS yes, object stores no).
    ``display_prefix`` is put before paths in messages (``s3://``).
    """

    def __init__(self, source: ArrowSource, *, scheme: str, atomic_rename: bool,
                 display_prefix: str = "", ranged_reads: Optional[bool] = None,
                 writes: Optional[ObjectWrites] = None) -> None:
        self._source = source
        #: conditional creates and in-place uploads (None: writes refused, or HDFS)
        self.writes = writes
        self.writes_in_place = writes is not None
        self.scheme = scheme
        self.atomic_rename = atomic_rename
        self.display_prefix = display_prefix or f"{scheme}://"
        #: read files in large cached ranges (ArrowRangedFile); default: on object stores
        self.ranged_reads = (not atomic_rename) if ranged_reads is None else ranged_reads
        self.recent = RecentFiles()  # files read lately (ranged reads), not pickled
        self._fs: Any = None
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        return {"source": self._source, "scheme": self.scheme, "atomic_rename": self.atomic_rename,
                "display_prefix": self.display_prefix, "ranged_reads": self.ranged_reads,
                "writes": self.writes}

    def __setstate__(self, state: dict) -> None:
        ArrowFileSystem.__init__(self, **state)

    def __repr__(self) -> str:
        return f"ArrowFileSystem({self.display_prefix!r}, atomic_rename={self.atomic_rename})"

    @property
    def arrow(self) -> Any:
        """The pyarrow file system (connected on first use; pyarrow has no type hints)."""
        if self._fs is None:
            with self._lock:
                if self._fs is None:
                    src = self._source
                    from pyarrow import fs as pafs

                    if isinstance(src, pafs.FileSystem):
                        self._fs = src
                    else:
                        try:
                            self._fs = src()
                        except OSError as e:
                            raise StorageError(
                                f"Cannot connect to {self.display_prefix}: {short_error(e)}") from e
        return self._fs

    def uri(self, path: str) -> str:
        return self.display_prefix + path.lstrip("/") if self.display_prefix.endswith("//") \
            else self.display_prefix.rstrip("/") + "/" + path.lstrip("/")

    def error(self, e: OSError, action: str, path: str) -> StorageError:
        """``e`` (from pyarrow) as a StorageError naming ``action`` and ``path``."""
        text = str(e)
        if isinstance(e, PermissionError) or any(
                m in text for m in ("ermission denied", "AccessDenied", "ACCESS_DENIED",
                                    "AccessControlException", "AuthorizationPermissionMismatch")):
            return StorageError(f"Permission denied {action} {self.uri(path)}: {short_error(e)}")
        return StorageError(f"{action.capitalize()} {self.uri(path)} failed: {short_error(e)}")

    # --- reading -----------------------------------------------------------------------------
    def list_dir(self, path: str) -> list[FileStatus]:
        from pyarrow import fs as pafs

        listed = self.writes.list_dir(path, self.uri(path)) if self.writes is not None else None
        if listed is not None:  # GCS: pyarrow lists only directories that have marker objects
            return listed
        try:
            infos = self.arrow.get_file_info(pafs.FileSelector(path, allow_not_found=False))
        except FileNotFoundError as e:
            raise PathNotFoundError(f"Directory not found: {self.uri(path)}") from e
        except NotADirectoryError as e:
            raise StorageError(f"Not a directory: {self.uri(path)}") from e
        except OSError as e:
            if "not a directory" in str(e).lower():
                raise StorageError(f"Not a directory: {self.uri(path)}") from e
            if str(e).startswith("No such file or directory"):  # pyarrow's GCS: a plain OSError
                raise PathNotFoundError(f"Directory not found: {self.uri(path)}") from e
            raise self.error(e, "listing", path) from e
        return [FileStatus(i.path, i.base_name, i.type == pafs.FileType.Directory,
                           0 if i.type == pafs.FileType.Directory else int(i.size or 0))
                for i in infos]

    def status(self, path: str) -> Optional[FileStatus]:
        from pyarrow import fs as pafs

        try:
            info = self.arrow.get_file_info(path)
        except OSError as e:
            raise self.error(e, "reading the status of", path) from e
        if info.type == pafs.FileType.NotFound:
            return None
        is_dir = info.type == pafs.FileType.Directory
        name = posixpath.basename(path.rstrip("/")) or path
        return FileStatus(path, name, is_dir, 0 if is_dir else int(info.size or 0))

    def open_input(self, path: str, size: Optional[int] = None) -> BinaryIO:
        if self.ranged_reads:  # object stores: few large GETs (ArrowRangedFile)
            f = ArrowRangedFile(self, path, size)
            if f.known is None:
                f.open_remote()  # errors (missing, denied) now, as for any other open
            return binary_file(f)
        try:
            return self.arrow.open_input_file(path)  # a seekable pyarrow NativeFile
        except FileNotFoundError as e:
            raise StorageError(
                f"File vanished: {self.uri(path)}; a compaction cleaner may have removed it after the "
                "read was planned: retry the read") from e
        except OSError as e:
            raise self.error(e, "opening", path) from e

    # --- writing -----------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        if self.writes_in_place:  # an object store: a "directory" exists by its objects (no
            return  # marker objects, which cost requests and outlive what they marked)
        try:
            self.arrow.create_dir(path, recursive=True)
        except OSError as e:
            raise self.error(e, "creating directory", path) from e

    def open_output(self, path: str) -> BinaryIO:
        self.recent.forget_under(path)
        if self.writes is not None:  # one PUT for a small file; nothing left by a failed writer
            return binary_file(self.writes.open(path, self.uri(path)))
        try:
            return self.arrow.open_output_stream(path)
        except OSError as e:
            raise self.error(e, "writing", path) from e

    def write_bytes(self, path: str, data: bytes) -> None:
        if self.writes is None:
            return super().write_bytes(path, data)
        self.recent.forget_under(path)
        self.writes.put(path, data)

    def _refuse(self, what: str) -> StorageError:
        return StorageError(f"Refusing to {what}: " + OBJECT_STORE_WRITE_REFUSAL.format(scheme=self.scheme))

    def rename(self, src: str, dst: str) -> None:
        """Rename, failing if ``dst`` exists; refused on object stores.

        pyarrow's ``move`` follows HDFS's old rename, which moves *into* an existing directory:
        the existence check before it is not atomic with it, so a move into a directory created
        meanwhile is detected afterwards, undone and reported.
        """
        self.recent.forget_under(src)
        self.recent.forget_under(dst)
        if not self.atomic_rename:
            raise self._refuse(f"rename {self.uri(src)} to {self.uri(dst)}")
        if self.status(dst) is not None:
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: destination exists")
        try:
            self.arrow.move(src, dst)
        except FileNotFoundError as e:
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: source or destination "
                               f"parent missing ({e})") from e
        except OSError as e:
            if self.status(dst) is not None:
                raise StorageError(
                    f"Cannot rename {self.uri(src)} to {self.uri(dst)}: destination exists") from e
            raise self.error(e, f"renaming to {self.uri(dst)}", src) from e
        inside = self.join(dst, posixpath.basename(src.rstrip("/")))
        if self.status(src) is None and self.status(inside) is not None:
            # dst appeared between the check and the move: the move went into it. Undo.
            _log.warning("Rename of %s went into %s created concurrently; moving it back", src, dst)
            try:
                self.arrow.move(inside, src)
            except OSError:
                _log.exception("Could not move %s back to %s", inside, src)
            raise StorageError(f"Cannot rename {self.uri(src)} to {self.uri(dst)}: destination exists")

    def delete(self, path: str, recursive: bool = False) -> None:
        self.recent.forget_under(path)
        from pyarrow import fs as pafs

        if self.writes is not None:
            below = []
            if recursive:
                try:
                    below = [i.path + ("/" if i.type == pafs.FileType.Directory else "")
                             for i in self.arrow.get_file_info(
                                 pafs.FileSelector(path, recursive=True, allow_not_found=True))]
                except OSError as e:
                    raise self.error(e, "listing", path) from e
            self.writes.delete(path, below)
            return

        try:
            info = self.arrow.get_file_info(path)
            if info.type == pafs.FileType.NotFound:
                return
            if info.type == pafs.FileType.Directory:
                if not recursive and self.arrow.get_file_info(pafs.FileSelector(path)):
                    raise StorageError(f"Cannot delete {self.uri(path)}: directory is not empty")
                self.arrow.delete_dir(path)
            else:
                self.arrow.delete_file(path)
        except FileNotFoundError:
            pass
        except OSError as e:
            raise self.error(e, "deleting", path) from e

    def check_writable(self, path: str) -> None:
        """Object stores: S3 endpoints that honour conditional creates (asked once per endpoint
        and bucket in a process); others refuse, naming why. HDFS: always."""
        if self.atomic_rename:
            return
        if self.writes is None:
            raise StorageError(NO_CONDITIONAL_WRITES.format(scheme=self.scheme)
                               + f" (table {self.uri(path)})")
        self.writes.check(path, self.uri(path))

    def open_output_exclusive(self, path: str) -> BinaryIO:
        if self.writes is None:
            return super().open_output_exclusive(path)
        self.recent.forget_under(path)
        return binary_file(self.writes.open_exclusive(path, self.uri(path)))

    def copy_file(self, src: str, dst: str) -> None:
        """A copy inside the store (S3: ``CopyObject``, no data through this process)."""
        self.recent.forget_under(dst)
        try:
            self.arrow.copy_file(src, dst)
        except OSError as e:
            raise self.error(e, f"copying to {self.uri(dst)}", src) from e

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` only if it does not exist; False when it did.

        S3: a conditional ``PutObject`` (``S3Writes``). HDFS: a hidden temporary sibling renamed
        to ``path``, which the NameNode refuses atomically when ``path`` exists. Other object
        stores refuse.
        """
        self.recent.forget_under(path)
        if self.writes is not None:
            return self.writes.create_exclusive(path, data)
        if not self.atomic_rename:
            raise StorageError(NO_CONDITIONAL_WRITES.format(scheme=self.scheme)
                               + f" (creating {self.uri(path)})")
        if self.status(path) is not None:
            return False
        parent, name = posixpath.split(path.rstrip("/"))
        tmp = self.join(parent, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with self.arrow.open_output_stream(tmp) as f:
                f.write(data)
        except OSError as e:
            raise self.error(e, "writing", tmp) from e
        try:
            if self.status(path) is not None:
                return False
            try:
                self.arrow.move(tmp, path)
            except OSError:
                if self.status(path) is not None:
                    return False
                raise
            return True
        finally:
            if self.status(tmp) is not None:
                try:
                    self.arrow.delete_file(tmp)
                except OSError:
                    pass

    def supports_atomic_rename(self) -> bool:
        return self.atomic_rename
