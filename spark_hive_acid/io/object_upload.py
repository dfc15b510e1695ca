"""A writable stream to one object that appears whole on close, or not at all (any store).

Small objects are one put on close; above :data:`PART_SIZE` bytes the stream starts a
multipart upload (S3; Azure: blocks; GCS: a resumable upload) and sends a part whenever it holds that much.
:meth:`WholeUpload.close` completes it (conditionally when ``exclusive``: PathExistsError, and
nothing written, when the object exists), :meth:`WholeUpload.abort` abandons it, and leaving a
``with`` block on an exception aborts: a writer that fails half way leaves no partial object
(pyarrow's stream would complete it). An object that is never closed (the process died) stays an
unfinished upload, invisible (S3: a bucket lifecycle rule, ``AbortIncompleteMultipartUpload``,
reclaims its parts; Azure drops uncommitted blocks after a week).

The client (:class:`UploadClient`) sends the store's requests.
"""
from __future__ import annotations

import io
import logging
from typing import Any, Optional, Protocol


class UploadClient(Protocol):
    """The calls a :class:`WholeUpload` makes (``S3Client``, ``AzureClient``, ``GcsClient``).
    ``exclusive`` is given to ``start_upload`` too, for stores whose condition goes with the
    start (GCS) rather than with ``finish_upload`` (S3, Azure)."""

    label_scheme: str

    def put(self, container: str, key: str, data: bytes, *, exclusive: bool = False) -> None: ...

    def start_upload(self, container: str, key: str, *, exclusive: bool = False) -> str: ...

    def upload_part(self, container: str, key: str, upload_id: str, number: int,
                    data: bytes) -> str: ...

    def finish_upload(self, container: str, key: str, upload_id: str, parts: list[str], *,
                      exclusive: bool = False) -> None: ...

    def abort_upload(self, container: str, key: str, upload_id: str) -> None: ...


log = logging.getLogger(__name__)

#: Bytes per part of a multipart upload (S3: at least 5 MiB except the last; at most 10,000 parts).
PART_SIZE = 16 << 20


class WholeUpload(io.RawIOBase):
    """See the module docstring. ``bucket`` is the container (S3 bucket, Azure container);
    ``display`` names the object in messages."""

    def __init__(self, client: UploadClient, bucket: str, key: str, *, exclusive: bool = False,
                 part_size: int = PART_SIZE, display: Optional[str] = None) -> None:
        super().__init__()
        self.client, self.bucket, self.key = client, bucket, key
        self.exclusive = exclusive
        self.part_size = max(int(part_size), 5 << 20)
        self.display = display or f"{client.label_scheme}://{bucket}/{key}"
        self._buffer = bytearray()
        self._upload_id: Optional[str] = None
        self._etags: list[str] = []
        self._written = 0
        self._aborted = False

    # --- io.RawIOBase ---------------------------------------------------------------------------
    def writable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._written

    def write(self, data: Any) -> int:
        if self.closed:
            raise ValueError(f"write to a closed upload of {self.display}")
        view = memoryview(data).cast("B")
        self._buffer += view
        self._written += len(view)
        while len(self._buffer) >= self.part_size:
            self._send_part(bytes(self._buffer[:self.part_size]))
            del self._buffer[:self.part_size]
        return len(view)

    def _send_part(self, data: bytes) -> None:
        if self._upload_id is None:
            self._upload_id = self.client.start_upload(self.bucket, self.key,
                                                       exclusive=self.exclusive)
        self._etags.append(self.client.upload_part(self.bucket, self.key, self._upload_id,
                                                   len(self._etags) + 1, data))

    def close(self) -> None:
        """Publish the object (see the module docstring); an error leaves nothing."""
        if self.closed:
            return
        try:
            if self._aborted:
                return
            if self._upload_id is None:
                self.client.put(self.bucket, self.key, bytes(self._buffer),
                                exclusive=self.exclusive)
            else:
                if self._buffer:
                    self._send_part(bytes(self._buffer))
                self.client.finish_upload(self.bucket, self.key, self._upload_id, self._etags,
                                          exclusive=self.exclusive)
        except BaseException:
            self._abort_upload()
            raise
        finally:
            self._buffer = bytearray()
            super().close()

    def abort(self) -> None:
        """Abandon the upload: nothing appears at the name."""
        if self.closed:
            return
        self._aborted = True
        self._abort_upload()
        self._buffer = bytearray()
        super().close()

    def _abort_upload(self) -> None:
        if self._upload_id is not None:
            upload, self._upload_id = self._upload_id, None
            self.client.abort_upload(self.bucket, self.key, upload)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.close()

    def __del__(self) -> None:  # never publish from a destructor: an unclosed upload is abandoned
        try:
            if not self.closed:
                log.warning("Upload of %s dropped unclosed: abandoned", self.display)
                self.abort()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass
