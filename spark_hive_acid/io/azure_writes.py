"""Azure Blob's writes (:class:`.object_writes.ObjectWrites`): conditional ``Put Blob``
(``If-None-Match: *``), block uploads committed conditionally, deletes, and the endpoint probe
before a first write (:meth:`.azure_client.AzureClient.probe`).

Paths are the file system's own: ``container/key``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..exceptions import StorageError
from .azure_client import AzureClient
from .object_writes import ObjectWrites


@dataclass(frozen=True)
class AzureWrites(ObjectWrites):
    """Writes to one storage account (picklable)."""

    client: AzureClient
    scheme: str = "abfs"

    def check(self, path: str, uri: str) -> None:
        """StorageError unless the account's key is known and the endpoint honours conditional
        creates."""
        settings = self.client.settings
        if not settings.key:
            raise StorageError(
                f"Writes to {uri} need the storage account's Shared Key, which this library "
                f"signs with: option fs.azure.account.key.{settings.account}.dfs.core.windows.net"
                " (or AZURE_STORAGE_CONNECTION_STRING, AZURE_STORAGE_KEY); other credentials "
                "are not implemented for writes. Nothing was written")
        container, key = self.split(path)
        found = self.client.probe(container, key)
        self.refuse_unless(found, uri, "Azure Blob", "If-None-Match: *")
