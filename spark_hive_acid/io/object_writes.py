"""What an object-store-backed :class:`~.arrow_fs.ArrowFileSystem` does for writes, beyond
pyarrow, whatever the store (S3: :mod:`.s3_writes`, Azure Blob: :mod:`.azure_writes`).

* ``create_exclusive``: a conditional create, its outcome checked by a nonce when an answer was
  lost (:meth:`.object_client.ObjectClient.conditional_create`). Every claim of the path-mode log
  (write ids, records, checkpoints, installs) and every data file a writer places goes through
  it, so no two writers ever both create one name.
* ``open_exclusive``: a data file uploaded straight to its final name, conditionally, abandoned
  (nothing visible) when the writer fails (:class:`.object_upload.WholeUpload`).
* ``check``: before a first write, the endpoint is asked once whether it honours the condition
  (:func:`.object_client.checked_once`); one that ignores it is refused with the reason.

Paths are the file system's own: ``container/key`` (an S3 bucket, an Azure container).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ..exceptions import InvalidOptionError, StorageError
from .filesystem import FileStatus
from .object_client import ConditionalCreateCheck
from .object_upload import WholeUpload


@dataclass(frozen=True)
class ObjectWrites:
    """Writes to one object store through ``client`` (picklable). Subclasses add ``check``."""

    client: Any  # an ObjectClient offering the calls of object_upload.UploadClient
    scheme: str

    def split(self, path: str) -> tuple[str, str]:
        container, _, key = path.lstrip("/").partition("/")
        if not container:
            raise InvalidOptionError(f"No bucket or container in the {self.scheme}:// path "
                                     f"{path!r}")
        return container, key

    def create_exclusive(self, path: str, data: bytes) -> bool:
        container, key = self.split(path)
        return bool(self.client.create_exclusive(container, key, data))

    def open_exclusive(self, path: str, display: str) -> WholeUpload:
        container, key = self.split(path)
        return WholeUpload(self.client, container, key, exclusive=True, display=display)

    def open(self, path: str, display: str) -> WholeUpload:
        """A new object (replacing one there): one put when small, a multipart upload (blocks)
        above 16 MiB; nothing appears if the writer fails (``WholeUpload``)."""
        container, key = self.split(path)
        return WholeUpload(self.client, container, key, display=display)

    def put(self, path: str, data: bytes) -> None:
        container, key = self.split(path)
        self.client.put(container, key, data)

    def list_dir(self, path: str, uri: str) -> Optional[list[FileStatus]]:
        """The entries directly below ``path`` when the store lists them itself; None: pyarrow
        lists them."""
        return None

    def delete(self, path: str, keys_below: list[str]) -> None:
        """Delete the object ``path`` and, for a recursive delete, ``keys_below`` (the objects
        under it; ``dir/`` names are markers, if any) and a marker ``path/`` if there is one.
        Unlike pyarrow's delete, no marker is put back for the parent "directory"."""
        container, key = self.split(path)
        key = key.rstrip("/")
        below = [self.split(k)[1] for k in keys_below]
        if below:
            self.client.delete_many(container, below + [key, key + "/"])
        else:
            self.client.delete(container, key)

    def check(self, path: str, uri: str) -> None:
        """StorageError unless writes can be made safely at ``path`` (``uri`` for messages)."""
        raise NotImplementedError

    @staticmethod
    def refuse_unless(found: ConditionalCreateCheck, uri: str, store: str,
                      condition: str) -> None:
        """StorageError naming why, unless the endpoint honours ``condition``."""
        if not found.supported:
            raise StorageError(
                f"Writes to {uri} are refused: the {store} endpoint {found.endpoint} does not "
                f"honour conditional creates ({condition}): {found.detail}. Two writers could "
                "both commit, so nothing was written")
