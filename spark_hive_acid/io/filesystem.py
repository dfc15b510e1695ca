"""A small file-system layer: the only way the connector touches storage.

Spark's Python workers cannot borrow the JVM's Hadoop client, so reader and writer go through this
interface, chosen from the path's scheme by :func:`~spark_hive_acid.io.registry.get_filesystem`. Implementations must pickle by
their constructor arguments (they travel to executors inside read plans) and create any client
lazily.
"""
from __future__ import annotations

import errno
import io
import os
import shutil
import uuid
from dataclasses import dataclass
from types import TracebackType
from typing import BinaryIO, Optional, cast

from ..exceptions import PathExistsError, PathNotFoundError, StorageError


@dataclass(frozen=True)
class FileStatus:
    """One entry of a directory listing."""

    path: str
    name: str
    is_dir: bool
    size: int


class FileSystem:
    """Interface of a storage back-end. Paths are strings in the back-end's own form."""

    scheme: str = ""

    # --- reading -------------------------------------------------------------------------------
    def list_dir(self, path: str) -> list[FileStatus]:
        """Children of a directory (not recursive). Raises PathNotFoundError if it is missing."""
        raise NotImplementedError

    def status(self, path: str) -> Optional[FileStatus]:
        """Status of a path, or None when it does not exist."""
        raise NotImplementedError

    def open_input(self, path: str, size: Optional[int] = None) -> BinaryIO:
        """A seekable binary file object for reading (pyarrow accepts it). ``size``, when the
        caller knows it from a listing, lets remote back-ends skip a status request."""
        raise NotImplementedError

    def read_bytes(self, path: str, length: Optional[int] = None) -> bytes:
        with self.open_input(path) as f:
            return f.read() if length is None else f.read(length)

    # --- writing -------------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        raise NotImplementedError

    def open_output(self, path: str) -> BinaryIO:
        """A new file for writing (overwrites)."""
        raise NotImplementedError

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.open_output(path) as f:
            f.write(data)

    def rename(self, src: str, dst: str) -> None:
        """Atomic rename; fails (StorageError) if ``dst`` exists."""
        raise NotImplementedError

    def delete(self, path: str, recursive: bool = False) -> None:
        """Delete a file or directory; missing paths are ignored."""
        raise NotImplementedError

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` only if it does not exist; False if it already did."""
        raise NotImplementedError

    # --- paths ---------------------------------------------------------------------------------
    def join(self, *parts: str) -> str:
        return "/".join([parts[0].rstrip("/")] + [p.strip("/") for p in parts[1:]])

    def exists(self, path: str) -> bool:
        return self.status(path) is not None

    def is_dir(self, path: str) -> bool:
        st = self.status(path)
        return st is not None and st.is_dir

    def supports_atomic_rename(self) -> bool:
        return True

    # --- stores without rename (object stores) -------------------------------------------------
    #: True where writers put data files straight at their final names and the write protocol
    #: renames nothing (object stores: docs/storage.md, "Object stores: writes").
    writes_in_place: bool = False

    def check_writable(self, path: str) -> None:
        """Raise StorageError, before anything is written, when this store cannot take this
        library's writes under ``path`` (it has no atomic create-if-absent)."""

    def open_output_exclusive(self, path: str) -> BinaryIO:
        """A new file that appears whole when closed, and only if ``path`` does not exist then
        (PathExistsError, nothing written); leaving a ``with`` block on an exception, or
        ``abort()``, writes nothing."""
        return _ExclusiveBuffer(self, path)

    def copy_file(self, src: str, dst: str) -> None:
        """Copy a file (overwriting ``dst``)."""
        with self.open_input(src) as f:
            self.write_bytes(dst, f.read())


def binary_file(f: io.IOBase) -> BinaryIO:
    """``f``, a back-end's own binary file object (a ranged reader, a buffered upload: an
    ``io.RawIOBase`` reading and writing bytes), as the ``BinaryIO`` the interface returns.
    typeshed keeps the ``io`` classes apart from the nominal ``typing.BinaryIO`` (its
    ``RawIOBase.read`` may return None, a non-blocking read; these files never do)."""
    return cast(BinaryIO, f)


class _ExclusiveBuffer(io.BytesIO):
    """``open_output_exclusive`` for any FileSystem: held in memory, created with
    ``create_exclusive`` on close."""

    def __init__(self, fs: FileSystem, path: str) -> None:
        super().__init__()
        self._fs, self._path, self._aborted = fs, path, False

    def abort(self) -> None:
        self._aborted = True
        super().close()

    def close(self) -> None:
        if self.closed:
            return
        data = self.getvalue()
        super().close()
        if not self._aborted and not self._fs.create_exclusive(self._path, data):
            raise PathExistsError(f"{self._path} exists")

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()


class LocalFileSystem(FileSystem):
    """The local disk (plain paths and ``file://`` URIs)."""

    scheme = "file"

    def list_dir(self, path: str) -> list[FileStatus]:
        try:
            with os.scandir(path) as it:
                entries = []
                for e in it:
                    try:
                        is_dir = e.is_dir()
                        size = 0 if is_dir else e.stat().st_size
                    except FileNotFoundError:  # vanished between listing and stat
                        continue
                    entries.append(FileStatus(os.path.join(path, e.name), e.name, is_dir, size))
                return entries
        except FileNotFoundError as e:
            raise PathNotFoundError(f"Directory not found: {path}") from e
        except NotADirectoryError as e:
            raise StorageError(f"Not a directory: {path}") from e
        except PermissionError as e:
            raise StorageError(f"Permission denied listing {path}") from e

    def status(self, path: str) -> Optional[FileStatus]:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        is_dir = os.path.isdir(path)
        return FileStatus(path, os.path.basename(path.rstrip("/")), is_dir, 0 if is_dir else st.st_size)

    def open_input(self, path: str, size: Optional[int] = None) -> BinaryIO:
        try:
            return open(path, "rb")
        except FileNotFoundError as e:
            raise StorageError(
                f"File vanished: {path} (a compaction cleaner may have removed it; retry the read)"
            ) from e
        except PermissionError as e:
            raise StorageError(f"Permission denied reading {path}") from e

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def open_output(self, path: str) -> BinaryIO:
        return open(path, "wb")

    def rename(self, src: str, dst: str) -> None:
        # os.rename silently replaces an empty directory / file on POSIX: refuse explicitly.
        if os.path.lexists(dst):
            raise StorageError(f"Cannot rename {src} to {dst}: destination exists")
        try:
            os.rename(src, dst)
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise StorageError(f"Cannot rename {src} to {dst}: destination exists") from e
            raise StorageError(f"Cannot rename {src} to {dst}: {e}") from e

    def delete(self, path: str, recursive: bool = False) -> None:
        if os.path.isdir(path) and not os.path.islink(path):
            if recursive:
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.rmdir(path)
        else:
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Atomic: the file appears with all of ``data`` (written to a hidden temporary file
        first, then hard-linked into place, which fails if ``path`` exists), so a reader never sees
        it half written."""
        tmp = os.path.join(os.path.dirname(path) or ".",
                           f".{os.path.basename(path)}.{uuid.uuid4().hex}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            return True
        finally:
            try:
                os.remove(tmp)
            except FileNotFoundError:
                pass

    def join(self, *parts: str) -> str:
        return os.path.join(*parts)
