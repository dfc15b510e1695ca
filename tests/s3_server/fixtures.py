"""pytest fixtures: ONE S3 server (moto) per test session, shared by reference count.

``s3_server`` (session) starts it; ``s3`` (per test) gives a new empty bucket on it with helpers
to copy tables in and to build the options / URIs that reach it. Without moto (or when it cannot
start) the tests needing it are skipped with the reason, or fail under ``CI=true``.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Iterator

import pytest

from server_process import SessionServer

from .server import ACCESS_KEY, REGION, SECRET_KEY, LoggedRequest, S3Server, S3ServerError


@dataclass(frozen=True)
class S3Bucket:
    """A bucket of the running server, for one test."""

    server: S3Server
    name: str

    @property
    def endpoint(self) -> str:
        return self.server.endpoint

    def client(self) -> Any:
        """A boto3 S3 client on the server (boto3 comes with moto)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def uri(self, key: str = "", scheme: str = "s3a") -> str:
        return f"{scheme}://{self.name}/{key.lstrip('/')}".rstrip("/")

    def options(self, **extra: str) -> dict[str, str]:
        """Hadoop S3A options reaching this server, as a Spark user would write them."""
        return {"fs.s3a.endpoint": self.endpoint, "fs.s3a.access.key": ACCESS_KEY,
                "fs.s3a.secret.key": SECRET_KEY, "fs.s3a.path.style.access": "true", **extra}

    def environment(self) -> dict[str, str]:
        """The same as AWS SDK environment variables."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": REGION}

    def upload(self, local_dir: str, prefix: str) -> str:
        """Copy a folder under ``prefix``; returns its ``s3a://`` URI."""
        c = self.client()
        for root, _, files in os.walk(local_dir):
            rel = os.path.relpath(root, local_dir)
            for name in files:
                key = "/".join(p for p in (prefix.strip("/"), "" if rel == "." else
                                           rel.replace(os.sep, "/"), name) if p)
                c.upload_file(os.path.join(root, name), self.name, key)
        return self.uri(prefix)

    def log_mark(self) -> int:
        return self.server.log_mark()

    def requests_since(self, mark: int) -> list[LoggedRequest]:
        return self.server.requests_since(mark)


SERVER = SessionServer("S3 server (moto)", lambda base: S3Server(base).start(), S3ServerError)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A running moto S3 server on 127.0.0.1 for the whole session."""
    yield from SERVER.session(lambda: tmp_path_factory.mktemp("s3_server"))


@pytest.fixture
def s3(s3_server: S3Server) -> S3Bucket:
    """A new, empty bucket on the session's S3 server."""
    bucket = S3Bucket(s3_server, f"t-{uuid.uuid4().hex[:12]}")
    bucket.client().create_bucket(Bucket=bucket.name)
    return bucket
