"""The Google Cloud Storage calls pyarrow cannot make: conditional creates, and uploads that can
be abandoned (docs/storage.md, "Object stores: writes").

Requests go to the JSON API over ``requests`` (bearer token, or anonymous for an emulator), with
the settings of :mod:`.gcs_settings`:

* :meth:`GcsClient.create_exclusive`: a multipart upload (``uploadType=multipart``: the object's
  metadata, with a random nonce ``hiveacid_nonce``, and its bytes in one request) with
  ``ifGenerationMatch=0``; 412 means the object exists, a lost answer is resolved by the nonce
  (:meth:`.object_client.ObjectClient.conditional_create`).
* the calls of :class:`.object_upload.WholeUpload`: one upload for a small object, above its part
  size a resumable upload session (started with ``ifGenerationMatch=0`` and the nonce when
  exclusive). Each part is sent when the next one is full; the last one goes with the total
  size, which finalizes the object (the condition is checked then: 412). A session never
  finalized leaves nothing visible (GCS drops it after a week); abandoning one cancels it.
"""
from __future__ import annotations

import json
import logging
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional
from urllib.parse import parse_qs, quote, urlsplit

from ..exceptions import PathExistsError, StorageError
from . import object_client
from .gcs_settings import GcsSettings
from .object_client import BUSY, CREATED, EXISTS, UNSURE, ConditionalCreateCheck, ObjectClient

log = logging.getLogger(__name__)

#: The object metadata holding a create's nonce.
NONCE_KEY = "hiveacid_nonce"
_RESUMABLE = "uploadType=resumable"


@dataclass
class _Session:
    """A resumable upload in progress: bytes sent, the part held back, the nonce it started with."""

    upload_id: str
    nonce: str
    sent: int = 0
    held: bytes = b""


@dataclass(frozen=True)
class GcsClient(ObjectClient):
    """JSON API requests to one GCS endpoint (picklable: its settings)."""

    settings: GcsSettings
    timeout: float = 60.0
    _local: Any = field(default_factory=threading.local, compare=False, repr=False)
    _sessions: dict = field(default_factory=dict, compare=False, repr=False)

    nonce_header = NONCE_KEY
    label_scheme = "gs"

    def __getstate__(self) -> dict:
        return {k: v for k, v in super().__getstate__().items() if k != "_sessions"}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        object.__setattr__(self, "_sessions", {})

    @property
    def where(self) -> str:
        return self.settings.root

    def url(self, container: str, key: str, query: str = "") -> str:
        """An upload (``uploadType=`` in ``query``: the object named by ``name=``) or the object's
        own URL."""
        if "uploadType=" in query:
            name = f"&name={quote(key, safe='')}" if key and "upload_id=" not in query else ""
            return f"{self.settings.root}/upload/storage/v1/b/{container}/o?{query}{name}"
        obj = f"/{quote(key, safe='')}" if key else ""  # no key: the bucket's listing
        return (f"{self.settings.root}/storage/v1/b/{container}/o{obj}"
                + (f"?{query}" if query else ""))

    def send(self, method: str, container: str, key: str, *, query: str = "",
             headers: Optional[Mapping[str, str]] = None, body: bytes = b"") -> Any:
        extra = dict(headers or {})
        if self.settings.token:
            extra["Authorization"] = f"Bearer {self.settings.token}"
        return self.request(method, self.url(container, key, query), extra, body,
                            self.label(container, key))

    def error(self, what: str, container: str, key: str, res: Any) -> StorageError:
        try:
            detail = res.json()["error"]["message"]
        except (ValueError, KeyError, TypeError):
            detail = res.text[:200]
        if res.status_code in (401, 403):
            return StorageError(f"Permission denied {what} {self.label(container, key)} at "
                                f"{self.where} (HTTP {res.status_code}): {detail}")
        return StorageError(f"{what.capitalize()} {self.label(container, key)} failed at "
                            f"{self.where}: HTTP {res.status_code} {detail}")

    def head(self, container: str, key: str) -> Optional[Mapping[str, str]]:
        """The object's user metadata (``generation`` added), or None when there is none."""
        res = self.retried("GET", container, key)
        if res.status_code == 404:
            return None
        if not res.ok:
            raise self.error("reading the metadata of", container, key, res)
        found = res.json()
        return {**(found.get("metadata") or {}), "generation": str(found.get("generation"))}

    # --- create if absent ------------------------------------------------------------------
    def create_outcome(self, res: Any, container: str, key: str) -> str:
        if res.ok:
            return CREATED
        if res.status_code == 412:
            return EXISTS
        if res.status_code == 429:  # rate limited (one object: at most one write a second)
            return BUSY
        if res.status_code < 500:
            raise self.error("creating", container, key, res)
        return UNSURE

    def _upload(self, container: str, key: str, data: bytes, metadata: Mapping[str, str],
                condition: str = "") -> Any:
        """One multipart upload: the object's metadata and bytes."""
        boundary = uuid.uuid4().hex
        meta = json.dumps({"name": key, "metadata": dict(metadata)}).encode("utf-8")
        body = (f"--{boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n"
                .encode() + meta + f"\r\n--{boundary}\r\nContent-Type: application/octet-stream"
                "\r\n\r\n".encode() + data + f"\r\n--{boundary}--\r\n".encode())
        return self.send("POST", container, key, query="uploadType=multipart" + condition,
                         body=body,
                         headers={"Content-Type": f"multipart/related; boundary={boundary}"})

    def create_exclusive(self, container: str, key: str, data: bytes) -> bool:
        """Create the object only if absent; False when it existed (see the module docstring)."""
        return self.conditional_create(container, key, lambda nonce: self._upload(
            container, key, data, nonce, "&ifGenerationMatch=0"))

    def put(self, container: str, key: str, data: bytes, *, exclusive: bool = False) -> None:
        """One upload; with ``exclusive``, PathExistsError when the object exists."""
        if exclusive:
            if not self.create_exclusive(container, key, data):
                raise PathExistsError(f"{self.label(container, key)} exists")
            return
        res = self.retried("POST", container, key, query="uploadType=media", body=data,
                           headers={"Content-Type": "application/octet-stream"})
        if not res.ok:
            raise self.error("writing", container, key, res)

    # --- resumable uploads -----------------------------------------------------------------
    def start_upload(self, container: str, key: str, *, exclusive: bool = False) -> str:
        """A resumable upload session (conditional from the start when ``exclusive``)."""
        nonce = uuid.uuid4().hex
        meta = json.dumps({"name": key, "metadata": {NONCE_KEY: nonce}}).encode("utf-8")
        res = self.retried("POST", container, key, body=meta,
                           query=_RESUMABLE + ("&ifGenerationMatch=0" if exclusive else ""),
                           headers={"Content-Type": "application/json; charset=UTF-8",
                                    "X-Upload-Content-Type": "application/octet-stream"})
        found = parse_qs(urlsplit(res.headers.get("Location", "")).query).get("upload_id")
        if not res.ok or not found:
            raise self.error("starting an upload of", container, key, res)
        self._sessions[found[0]] = _Session(found[0], nonce)
        return found[0]

    @staticmethod
    def _chunk(session: _Session, data: bytes, total: Optional[int]) -> dict[str, Any]:
        """The request sending ``data`` at the session's offset; with ``total``, the last one
        (it finalizes the object)."""
        span = f"{session.sent}-{session.sent + len(data) - 1}" if data else "*"
        return {"query": f"{_RESUMABLE}&upload_id={quote(session.upload_id, safe='')}",
                "body": data, "headers": {
                    "Content-Range": f"bytes {span}/{'*' if total is None else total}"}}

    def upload_part(self, container: str, key: str, upload_id: str, number: int,
                    data: bytes) -> str:
        """Send the part held back (not the last one, then) and hold ``data`` back."""
        session = self._sessions[upload_id]
        if session.held:
            res = self.retried("PUT", container, key, **self._chunk(session, session.held, None))
            if res.status_code != 308 and not res.ok:
                raise self.error(f"uploading part {number - 1} of", container, key, res)
            session.sent += len(session.held)
        session.held = data
        return str(number)

    def finish_upload(self, container: str, key: str, upload_id: str, parts: list[str], *,
                      exclusive: bool = False) -> None:
        """The last part with the total size: the object appears (with ``exclusive``, only if
        absent: PathExistsError otherwise)."""
        session = self._sessions.pop(upload_id)
        last = self._chunk(session, session.held, session.sent + len(session.held))
        if exclusive:
            if not self.conditional_create(container, key,
                                           lambda _: self.send("PUT", container, key, **last),
                                           nonce=session.nonce):
                raise PathExistsError(f"{self.label(container, key)} exists")
            return
        res = self.retried("PUT", container, key, **last)
        if not res.ok:
            raise self.error("finishing the upload of", container, key, res)

    def abort_upload(self, container: str, key: str, upload_id: str) -> None:
        """Cancel the session (GCS answers 499); nothing appears at the name."""
        self._sessions.pop(upload_id, None)
        try:
            self.send("DELETE", container, key,
                      query=f"{_RESUMABLE}&upload_id={quote(upload_id, safe='')}")
        except StorageError as e:  # an unfinished session is invisible and expires anyway
            log.debug("cancelling the upload of %s: %s", self.label(container, key), e)

    # --- listing ---------------------------------------------------------------------------
    def list_below(self, container: str, key: str) -> Optional[list[tuple[str, bool, int]]]:
        """``(name, is_dir, size)`` of the objects and prefixes directly below ``key``; None
        when there are none and no marker ``key/`` either (no such directory)."""
        prefix = f"{key}/" if key else ""
        out: list[tuple[str, bool, int]] = []
        marker, token = not key, ""
        while True:
            query = f"prefix={quote(prefix, safe='')}&delimiter=%2F" + (
                f"&pageToken={quote(token, safe='')}" if token else "")
            res = self.retried("GET", container, "", query=query)
            if not res.ok:
                raise self.error("listing", container, prefix, res)
            page = res.json()
            for item in page.get("items", []):
                if item["name"] == prefix:
                    marker = True
                else:
                    out.append((item["name"][len(prefix):], False, int(item.get("size", 0))))
            out += [(p[len(prefix):].rstrip("/"), True, 0) for p in page.get("prefixes", [])]
            token = page.get("nextPageToken") or ""
            if not token:
                return out if out or marker else None

    # --- deletes ---------------------------------------------------------------------------
    def delete(self, container: str, key: str) -> None:
        """Delete the object (a missing one is no error here)."""
        res = self.retried("DELETE", container, key)
        if not res.ok and res.status_code != 404:
            raise self.error("deleting", container, key, res)

    def delete_many(self, container: str, keys: list[str]) -> None:
        """Every object of ``keys`` (``dir/`` markers too, if any), 8 at a time."""
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda k: self.delete(container, k), keys))

    # --- the endpoint probe ----------------------------------------------------------------
    def probe(self, container: str, prefix: str) -> ConditionalCreateCheck:
        """Whether the endpoint honours ``ifGenerationMatch=0`` on an upload (asked once per
        endpoint and bucket: :func:`.object_client.checked_once`)."""
        key = object_client.probe_key(prefix)

        def put() -> Any:
            return self.send("POST", container, key, body=b"conditional create probe",
                             query="uploadType=media&ifGenerationMatch=0",
                             headers={"Content-Type": "application/octet-stream"})
        return object_client.checked_once(
            ("gcs", self.settings.root, container),
            lambda: object_client.probe_twice(
                put, lambda: self.send("DELETE", container, key), self.where, "upload",
                "ifGenerationMatch=0", (412,), lambda first: False, self.label(container, key)))
