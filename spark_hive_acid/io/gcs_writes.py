"""Google Cloud Storage's writes (:class:`.object_writes.ObjectWrites`): uploads with
``ifGenerationMatch=0``, resumable uploads finalized conditionally, deletes, and the endpoint
probe before a first write (:meth:`.gcs_client.GcsClient.probe`).

Paths are the file system's own: ``bucket/key``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..exceptions import PathNotFoundError, StorageError
from .filesystem import FileStatus
from .gcs_client import GcsClient
from .gcs_settings import TOKEN_OPTION
from .object_writes import ObjectWrites


@dataclass(frozen=True)
class GcsWrites(ObjectWrites):
    """Writes to one GCS endpoint (picklable)."""

    client: GcsClient
    scheme: str = "gs"

    def list_dir(self, path: str, uri: str) -> Optional[list[FileStatus]]:
        """A listing by the JSON API (``delimiter=/``: objects and prefixes), when this library
        can authenticate (a token, or an emulator); pyarrow's GCS listing shows only
        "directories" that have marker objects, which files written here do not leave."""
        settings = self.client.settings
        if not settings.token and not settings.emulator:
            return None
        container, key = self.split(path)
        found = self.client.list_below(container, key.strip("/"))
        if found is None:
            raise PathNotFoundError(f"Directory not found: {uri}")
        base = path.rstrip("/")
        return [FileStatus(f"{base}/{name}", name, is_dir, size) for name, is_dir, size in found]

    def check(self, path: str, uri: str) -> None:
        """StorageError unless a token is known (or the endpoint is an emulator) and the endpoint
        honours ``ifGenerationMatch=0``."""
        settings = self.client.settings
        if not settings.token and not settings.emulator:
            raise StorageError(
                f"Writes to {uri} need an OAuth 2 access token, which this library sends as a "
                f"bearer token: option {TOKEN_OPTION} (or GOOGLE_OAUTH_ACCESS_TOKEN; e.g. from "
                "`gcloud auth print-access-token`); service-account keys and other credentials "
                "are not implemented for writes. Nothing was written")
        container, key = self.split(path)
        found = self.client.probe(container, key)
        self.refuse_unless(found, uri, "GCS", "ifGenerationMatch=0")
