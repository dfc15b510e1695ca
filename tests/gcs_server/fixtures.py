"""pytest fixtures: ONE GCS server (fake-gcs-server) per test session, shared by reference count.

``gcs_server`` (session) starts it; ``gcs`` (per test) gives a new empty bucket on it with the
options / URIs that reach it. When it cannot be built or started the tests needing it are skipped
with the reason, or fail under ``CI=true``.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Iterator
from urllib.parse import quote

import pytest

from server_process import SessionServer

from .server import GcsServer, GcsServerError


@dataclass(frozen=True)
class GcsBucket:
    """A bucket of the running server, for one test (its JSON API, anonymous)."""

    server: GcsServer
    name: str

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    def uri(self, path: str = "", scheme: str = "gs") -> str:
        return f"{scheme}://{self.name}/{path.lstrip('/')}".rstrip("/")

    def options(self, **extra: str) -> dict[str, str]:
        """The Hadoop GCS connector's endpoint option, as a Spark user would write it."""
        return {"fs.gs.storage.root.url": self.endpoint, **extra}

    def environment(self) -> dict[str, str]:
        """The same as Google's client libraries read it."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint}

    def _get(self, url: str, **params: Any) -> Any:
        import requests

        res = requests.get(url, params=params, timeout=30)
        res.raise_for_status()
        return res

    def keys(self, path: str = "") -> list[str]:
        """Every object below ``path``, as keys of the bucket."""
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        out: list[str] = []
        token = None
        while True:
            params = {"prefix": prefix, **({"pageToken": token} if token else {})}
            page = self._get(f"{self.endpoint}/storage/v1/b/{self.name}/o", **params).json()
            out += [o["name"] for o in page.get("items", [])]
            token = page.get("nextPageToken")
            if not token:
                return sorted(out)

    def metadata(self, key: str) -> dict:
        return self._get(f"{self.endpoint}/storage/v1/b/{self.name}/o/"
                         f"{quote(key.strip('/'), safe='')}").json()

    def read(self, path: str) -> bytes:
        return self._get(f"{self.endpoint}/storage/v1/b/{self.name}/o/"
                         f"{quote(path.strip('/'), safe='')}", alt="media").content

    def write(self, key: str, data: bytes) -> None:
        import requests

        requests.post(f"{self.endpoint}/upload/storage/v1/b/{self.name}/o",
                      params={"uploadType": "media", "name": key}, data=data,
                      timeout=30).raise_for_status()

    def upload(self, local_dir: str, prefix: str) -> str:
        """Copy a folder under ``prefix``; returns its ``gs://`` URI."""
        for root, _, files in os.walk(local_dir):
            rel = os.path.relpath(root, local_dir)
            for name in files:
                key = "/".join(p for p in (prefix.strip("/"), "" if rel == "." else
                                           rel.replace(os.sep, "/"), name) if p)
                with open(os.path.join(root, name), "rb") as src:
                    self.write(key, src.read())
        return self.uri(prefix)

    def download(self, path: str, local_dir: str) -> str:
        """Copy every object under ``path`` into ``local_dir``; returns ``local_dir``."""
        os.makedirs(local_dir)
        prefix = path.strip("/") + "/"
        for key in self.keys(path):
            target = os.path.join(local_dir, *key[len(prefix):].split("/"))
            if key.endswith("/"):
                os.makedirs(target, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as out:
                out.write(self.read(key))
        return local_dir


SERVER = SessionServer("GCS server (fake-gcs-server)", lambda base: GcsServer(base).start(),
                       GcsServerError)


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsServer]:
    """A running fake-gcs-server on 127.0.0.1 for the whole session."""
    yield from SERVER.session(lambda: tmp_path_factory.mktemp("gcs_server"))


@pytest.fixture
def gcs(gcs_server: GcsServer) -> GcsBucket:
    """A new, empty bucket on the session's server."""
    import requests

    bucket = GcsBucket(gcs_server, f"t-{uuid.uuid4().hex[:12]}")
    requests.post(f"{gcs_server.endpoint}/storage/v1/b", json={"name": bucket.name},
                  timeout=30).raise_for_status()
    return bucket
