"""pytest fixtures: ONE Azure Blob server (Azurite) per test session, shared by reference count.

``azure_server`` (session) starts it; ``azure`` (per test) gives a new empty container on it with
the options / URIs that reach it. When it cannot be installed or started the tests needing it
are skipped with the reason, or fail under ``CI=true``.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from server_process import SessionServer

from .server import ACCOUNT, KEY, AzureServer, AzureServerError


@dataclass(frozen=True)
class AzureContainer:
    """A container of the running server, for one test."""

    server: AzureServer
    name: str

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    def uri(self, path: str = "", scheme: str = "abfs") -> str:
        """``abfs://container@devstoreaccount1.dfs.core.windows.net/path`` (Hadoop's form)."""
        return (f"{scheme}://{self.name}@{ACCOUNT}.dfs.core.windows.net/"
                f"{path.lstrip('/')}").rstrip("/")

    def options(self, **extra: str) -> dict[str, str]:
        """Hadoop ABFS's key option and the emulator's endpoint, as a Spark user would write them."""
        return {f"fs.azure.account.key.{ACCOUNT}.dfs.core.windows.net": KEY,
                "fs.azure.blob.endpoint": self.endpoint, **extra}

    def environment(self) -> dict[str, str]:
        """The same as the connection string Azure's tools read."""
        return {"AZURE_STORAGE_CONNECTION_STRING":
                f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={KEY};"
                f"BlobEndpoint={self.endpoint};"}

    def arrow(self) -> Any:
        """A pyarrow AzureFileSystem on the server (paths ``container/key``)."""
        from pyarrow import fs as pafs

        from spark_hive_acid.io.azure_settings import AzureSettings

        return pafs.AzureFileSystem(**AzureSettings(ACCOUNT, KEY, self.endpoint).arrow_kwargs())

    def keys(self, path: str = "") -> list[str]:
        """Every blob below ``path``, as keys of the container."""
        from pyarrow import fs as pafs

        base = "/".join(p for p in (self.name, path.strip("/")) if p)
        infos = self.arrow().get_file_info(pafs.FileSelector(base, recursive=True,
                                                             allow_not_found=True))
        return sorted(i.path[len(self.name) + 1:] for i in infos
                      if i.type == pafs.FileType.File)

    def read(self, path: str) -> bytes:
        with self.arrow().open_input_stream(f"{self.name}/{path.strip('/')}") as f:
            return bytes(f.read())

    def upload(self, local_dir: str, prefix: str) -> str:
        """Copy a folder under ``prefix``; returns its ``abfs://`` URI."""
        fs = self.arrow()
        for root, _, files in os.walk(local_dir):
            rel = os.path.relpath(root, local_dir)
            for name in files:
                key = "/".join(p for p in (self.name, prefix.strip("/"), "" if rel == "." else
                                           rel.replace(os.sep, "/"), name) if p)
                with open(os.path.join(root, name), "rb") as src, fs.open_output_stream(key) as o:
                    o.write(src.read())
        return self.uri(prefix)

    def download(self, path: str, local_dir: str) -> str:
        """Copy every blob under ``path`` into ``local_dir``; returns ``local_dir``."""
        os.makedirs(local_dir)
        prefix = path.strip("/") + "/"
        for key in self.keys(path):
            target = os.path.join(local_dir, *key[len(prefix):].split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(self.read(key))
        return local_dir


SERVER = SessionServer("Azure Blob server (Azurite)",
                       lambda base: AzureServer(base).start(), AzureServerError)


@pytest.fixture(scope="session")
def azure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzureServer]:
    """A running Azurite on 127.0.0.1 for the whole session."""
    yield from SERVER.session(lambda: tmp_path_factory.mktemp("azurite"))


@pytest.fixture
def azure(azure_server: AzureServer) -> AzureContainer:
    """A new, empty container on the session's Azurite."""
    container = AzureContainer(azure_server, f"t-{uuid.uuid4().hex[:12]}")
    container.arrow().create_dir(container.name)
    return container
