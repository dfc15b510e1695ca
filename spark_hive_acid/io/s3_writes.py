"""What an S3-backed :class:`~.arrow_fs.ArrowFileSystem` does for writes, beyond pyarrow.

* ``create_exclusive``: a conditional ``PutObject`` (``If-None-Match: *``), its outcome checked by
  a nonce when an answer was lost (:meth:`.s3_client.S3Client.create_exclusive`). Every claim of
  the path-mode log (write ids, records, checkpoints, installs) and every data file a writer
  places goes through it, so no two writers ever both create one name.
* ``open_exclusive``: a data file uploaded straight to its final name, conditionally, abandoned
  (nothing visible) when the writer fails (:class:`.s3_upload.S3Upload`).
* ``check``: before a first write, the endpoint is asked once whether it honours the condition
  (:func:`.s3_conditional.checked_once`); one that ignores it is refused with the reason.

Paths are the file system's own: ``bucket/key``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..exceptions import InvalidOptionError, StorageError
from .s3_client import S3Client
from .s3_conditional import checked_once
from .s3_upload import S3Upload


@dataclass(frozen=True)
class S3Writes:
    """Writes to one S3 service (picklable)."""

    client: S3Client
    scheme: str = "s3a"

    @staticmethod
    def split(path: str) -> tuple[str, str]:
        bucket, _, key = path.lstrip("/").partition("/")
        if not bucket:
            raise InvalidOptionError(f"No bucket in the S3 path {path!r}")
        return bucket, key

    def create_exclusive(self, path: str, data: bytes) -> bool:
        bucket, key = self.split(path)
        return self.client.create_exclusive(bucket, key, data)

    def open_exclusive(self, path: str, display: str) -> S3Upload:
        bucket, key = self.split(path)
        return S3Upload(self.client, bucket, key, exclusive=True, display=display)

    def delete(self, path: str, keys_below: list[str]) -> None:
        """Delete the object ``path`` and, for a recursive delete, ``keys_below`` (the objects
        under it) and a directory marker ``path/`` if there is one. Unlike pyarrow's delete, no
        marker is put back for the parent "directory": object stores have none to keep."""
        bucket, key = self.split(path)
        key = key.rstrip("/")
        below = [self.split(k)[1] for k in keys_below]  # ("dir/" keys: markers, if any)
        if below:
            self.client.delete_many(bucket, below + [key, key + "/"])
        else:
            self.client.delete(bucket, key)

    def open(self, path: str, display: str) -> S3Upload:
        """A new object (replacing one there): one PUT when small, a multipart upload above
        16 MiB; nothing appears if the writer fails (``S3Upload``)."""
        bucket, key = self.split(path)
        return S3Upload(self.client, bucket, key, display=display)

    def put(self, path: str, data: bytes) -> None:
        bucket, key = self.split(path)
        self.client.put(bucket, key, data)

    def check(self, path: str, uri: str) -> None:
        """StorageError unless the endpoint honours conditional creates (see the module doc)."""
        if not (self.client.settings.access_key and self.client.settings.secret_key):
            raise StorageError(
                f"Writes to {uri} need S3 credentials this library can sign with: options "
                "fs.s3a.access.key and fs.s3a.secret.key (or AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY); nothing was written")
        bucket, key = self.split(path)
        found = checked_once(self.client.settings, bucket, key, uri)
        if not found.supported:
            raise StorageError(
                f"Writes to {uri} are refused: the S3 endpoint {found.endpoint} does not honour "
                f"conditional creates (If-None-Match: *): {found.detail}. Two writers could "
                "both commit, so nothing was written")
