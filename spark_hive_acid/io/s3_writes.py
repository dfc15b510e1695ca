"""S3's writes (:class:`.object_writes.ObjectWrites`): conditional ``PutObject``
(``If-None-Match: *``), multipart uploads completed conditionally, ``DeleteObjects``, and the
endpoint probe before a first write (:func:`.s3_conditional.checked_once`).

Paths are the file system's own: ``bucket/key``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..exceptions import StorageError
from .object_writes import ObjectWrites
from .s3_client import S3Client
from .s3_conditional import checked_once


@dataclass(frozen=True)
class S3Writes(ObjectWrites):
    """Writes to one S3 service (picklable)."""

    client: S3Client
    scheme: str = "s3a"

    def check(self, path: str, uri: str) -> None:
        """StorageError unless the endpoint honours conditional creates (see the module doc)."""
        if not (self.client.settings.access_key and self.client.settings.secret_key):
            raise StorageError(
                f"Writes to {uri} need S3 credentials this library can sign with: options "
                "fs.s3a.access.key and fs.s3a.secret.key (or AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY); nothing was written")
        bucket, key = self.split(path)
        found = checked_once(self.client.settings, bucket, key, uri)
        self.refuse_unless(found, uri, "S3", "If-None-Match: *")
