"""The Azure Blob calls pyarrow cannot make: conditional creates, and uploads that can be
abandoned (docs/storage.md, "Object stores: writes").

Requests go to the Blob service REST API over ``requests``, signed with the account's Shared Key
(:func:`sign`), with the settings of :mod:`.azure_settings`:

* :meth:`AzureClient.create_exclusive`: ``Put Blob`` with ``If-None-Match: *`` carrying a random
  nonce as metadata (``x-ms-meta-hiveacid_nonce``); 409 ``BlobAlreadyExists`` or 412 means the
  blob exists, a lost answer is resolved by the nonce
  (:meth:`.object_client.ObjectClient.conditional_create`).
* the calls of :class:`.object_upload.WholeUpload`: one ``Put Blob`` for a small object, above
  its part size ``Put Block`` per part and a ``Put Block List`` that commits them (with
  ``If-None-Match: *`` and the nonce when exclusive). Blocks never committed stay invisible and
  Azure drops them after a week; there is nothing to abort.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional
from urllib.parse import parse_qsl, quote, urlsplit

from ..exceptions import InvalidOptionError, PathExistsError, StorageError
from . import object_client
from .azure_settings import AzureSettings
from .object_client import CREATED, EXISTS, UNSURE, ConditionalCreateCheck, ObjectClient

log = logging.getLogger(__name__)

API_VERSION = "2021-12-02"
#: Metadata holding a create's nonce (Azure metadata names are identifiers: no hyphen).
NONCE_HEADER = "x-ms-meta-hiveacid_nonce"
_SIGNED = ("content-encoding", "content-language", "content-length", "content-md5",
           "content-type", "date", "if-modified-since", "if-match", "if-none-match",
           "if-unmodified-since", "range")


def sign(method: str, url: str, headers: Mapping[str, str], settings: AzureSettings,
         now: Optional[dt.datetime] = None) -> dict[str, str]:
    """``headers`` plus ``x-ms-date``, ``x-ms-version`` and the Shared Key ``Authorization``."""
    if not settings.key:
        raise InvalidOptionError(f"Signing Azure requests needs the key of account "
                                 f"{settings.account} (option fs.azure.account.key."
                                 f"{settings.account}.dfs.core.windows.net)")
    now = now or dt.datetime.now(dt.timezone.utc)
    out = {"x-ms-date": now.strftime("%a, %d %b %Y %H:%M:%S GMT"), "x-ms-version": API_VERSION,
           **headers}
    low = {k.lower(): str(v).strip() for k, v in out.items()}
    if low.get("content-length") == "0":
        low["content-length"] = ""
    parts = urlsplit(url)
    resource = f"/{settings.account}{parts.path or '/'}"
    query: dict[str, list[str]] = {}
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        query.setdefault(k.lower(), []).append(v)
    resource += "".join(f"\n{k}:{','.join(sorted(query[k]))}" for k in sorted(query))
    ms = "".join(f"{k}:{low[k]}\n" for k in sorted(low) if k.startswith("x-ms-"))
    to_sign = "\n".join([method.upper(), *(low.get(h, "") for h in _SIGNED)]) + "\n" + ms \
        + resource
    digest = hmac.new(base64.b64decode(settings.key), to_sign.encode("utf-8"),
                      hashlib.sha256).digest()
    out["Authorization"] = f"SharedKey {settings.account}:{base64.b64encode(digest).decode()}"
    return out


@dataclass(frozen=True)
class AzureClient(ObjectClient):
    """Signed requests to one storage account's Blob service (picklable: its settings)."""

    settings: AzureSettings
    timeout: float = 60.0
    _local: Any = field(default_factory=threading.local, compare=False, repr=False)

    nonce_header = NONCE_HEADER
    label_scheme = "abfs"

    @property
    def where(self) -> str:
        return self.settings.blob_endpoint

    def label(self, container: str, key: str) -> str:
        return f"abfs://{container}@{self.settings.account}/{key}"

    def url(self, container: str, key: str, query: str = "") -> str:
        path = "/".join(p for p in (container, quote(key, safe="/-_.~")) if p)
        return f"{self.settings.blob_endpoint}/{path}" + (f"?{query}" if query else "")

    def send(self, method: str, container: str, key: str, *, query: str = "",
             headers: Optional[Mapping[str, str]] = None, body: bytes = b"") -> Any:
        url = self.url(container, key, query)
        extra = {"Content-Length": str(len(body)), **(headers or {})}
        signed = sign(method, url, extra, self.settings)
        return self.request(method, url, signed, body, self.label(container, key))

    def error(self, what: str, container: str, key: str, res: Any) -> StorageError:
        code = res.headers.get("x-ms-error-code") or res.text[:200]
        if res.status_code == 403:
            return StorageError(f"Permission denied {what} {self.label(container, key)} at "
                                f"{self.where}: {code}")
        return StorageError(f"{what.capitalize()} {self.label(container, key)} failed at "
                            f"{self.where}: HTTP {res.status_code} {code}")

    # --- create if absent ------------------------------------------------------------------
    def create_outcome(self, res: Any, container: str, key: str) -> str:
        if res.ok:
            return CREATED
        if res.status_code == 412 or (res.status_code == 409 and res.headers.get(
                "x-ms-error-code") == "BlobAlreadyExists"):
            return EXISTS
        if res.status_code < 500:
            raise self.error("creating", container, key, res)
        return UNSURE

    def create_exclusive(self, container: str, key: str, data: bytes) -> bool:
        """Create the blob only if absent; False when it existed (see the module docstring)."""
        def put(nonce: dict[str, str]) -> Any:
            return self.send("PUT", container, key, body=data, headers={
                "x-ms-blob-type": "BlockBlob", "If-None-Match": "*", **nonce})
        return self.conditional_create(container, key, put)

    def put(self, container: str, key: str, data: bytes, *, exclusive: bool = False) -> None:
        """One ``Put Blob``; with ``exclusive``, PathExistsError when the blob exists."""
        if exclusive:
            if not self.create_exclusive(container, key, data):
                raise PathExistsError(f"{self.label(container, key)} exists")
            return
        res = self.retried("PUT", container, key, body=data,
                           headers={"x-ms-blob-type": "BlockBlob"})
        if not res.ok:
            raise self.error("writing", container, key, res)

    # --- blocks ----------------------------------------------------------------------------
    def start_upload(self, container: str, key: str, *, exclusive: bool = False) -> str:
        """A prefix for this upload's block ids (no request: blocks need no upload session)."""
        import uuid

        return uuid.uuid4().hex

    def upload_part(self, container: str, key: str, upload_id: str, number: int,
                    data: bytes) -> str:
        block = base64.b64encode(f"{upload_id}-{number:06d}".encode()).decode("ascii")
        res = self.retried("PUT", container, key, body=data,
                           query=f"comp=block&blockid={quote(block, safe='')}")
        if not res.ok:
            raise self.error(f"uploading block {number} of", container, key, res)
        return block

    def finish_upload(self, container: str, key: str, upload_id: str, parts: list[str], *,
                      exclusive: bool = False) -> None:
        """``Put Block List`` of ``parts``; with ``exclusive``, conditional (PathExistsError)."""
        body = ('<?xml version="1.0" encoding="utf-8"?><BlockList>' + "".join(
            f"<Latest>{b}</Latest>" for b in parts) + "</BlockList>").encode("utf-8")

        def put(extra: dict[str, str]) -> Any:
            return self.send("PUT", container, key, query="comp=blocklist", body=body,
                             headers=extra)
        if exclusive:
            if not self.conditional_create(container, key,
                                           lambda n: put({"If-None-Match": "*", **n})):
                raise PathExistsError(f"{self.label(container, key)} exists")
            return
        res = self.retried("PUT", container, key, query="comp=blocklist", body=body)
        if not res.ok:
            raise self.error("committing the blocks of", container, key, res)

    def abort_upload(self, container: str, key: str, upload_id: str) -> None:
        """Nothing to do: uncommitted blocks are invisible and dropped by Azure after a week."""
        log.debug("upload of %s abandoned (uncommitted blocks)", self.label(container, key))

    # --- deletes ---------------------------------------------------------------------------
    def delete(self, container: str, key: str) -> None:
        """``Delete Blob`` (a missing blob is no error here)."""
        res = self.retried("DELETE", container, key)
        if not res.ok and res.status_code != 404:
            raise self.error("deleting", container, key, res)

    def delete_many(self, container: str, keys: list[str]) -> None:
        """Every blob of ``keys`` (8 at a time), then ``dir/`` names deepest first (directories
        of an account with a hierarchical namespace; a missing one is no error)."""
        files = [k for k in keys if not k.endswith("/")]
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda k: self.delete(container, k), files))
        for d in sorted((k.rstrip("/") for k in keys if k.endswith("/") and k.strip("/")),
                        key=lambda k: -k.count("/")):
            res = self.retried("DELETE", container, d)
            if not res.ok and res.status_code not in (404, 409):
                raise self.error("deleting", container, d, res)

    # --- the endpoint probe ----------------------------------------------------------------
    def probe(self, container: str, prefix: str) -> ConditionalCreateCheck:
        """Whether the endpoint honours ``If-None-Match: *`` on ``Put Blob`` (asked once per
        endpoint and container: :func:`.object_client.checked_once`)."""
        key = object_client.probe_key(prefix)
        body = b"conditional create probe"

        def put() -> Any:
            return self.send("PUT", container, key, body=body, headers={
                "x-ms-blob-type": "BlockBlob", "If-None-Match": "*"})
        return object_client.checked_once(
            ("azure", self.settings.blob_endpoint, container),
            lambda: object_client.probe_twice(
                put, lambda: self.send("DELETE", container, key), self.where, "Put Blob",
                "If-None-Match: *", (409, 412), lambda first: False,
                self.label(container, key)))
