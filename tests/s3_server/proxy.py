"""A TCP proxy in front of the S3 server, for what the real server cannot be made to do on
purpose: lose an answer after the request was applied, strip a header, or answer slowly.

It forwards bytes both ways untouched, except where armed:

* ``lose_answers(n, match=b"If-None-Match")``: the next ``n`` requests whose head contains
  ``match`` reach the server, which applies them, but their answer is dropped and the client's
  connection closed (a timeout or a cut connection after sending: the client cannot know whether
  its request took effect);
* ``strip_header(b"If-None-Match")``: the header is removed from every request (an endpoint, or a
  gateway in front of one, that ignores conditional writes);
* ``latency``: seconds slept before each answer is passed on (a round trip to a real store).

Requests are recognised per connection by their head (one request at a time per connection, as
``requests`` sends them). Used by tests/test_s3_write_io.py and the benchmark's latency run.
"""
from __future__ import annotations

import socket
import threading
import time
from typing import Optional


class FaultProxy:
    """``FaultProxy(upstream_port).start()``; ``.endpoint`` is what clients use."""

    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1",
                 latency: float = 0.0) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.latency = latency
        self._lose: list[bytes] = []
        self._strip: Optional[bytes] = None
        self._lock = threading.Lock()
        self._sock: Optional[socket.socket] = None
        self.lost = 0  # answers dropped so far
        self.requests = 0

    @property
    def endpoint(self) -> str:
        assert self._sock is not None
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def lose_answers(self, n: int = 1, match: bytes = b"If-None-Match") -> None:
        with self._lock:
            self._lose.extend([match.lower()] * n)

    def strip_header(self, name: Optional[bytes]) -> None:
        self._strip = name.lower() if name else None

    def start(self) -> "FaultProxy":
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while self._sock is not None:
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        state = {"drop": False}
        threading.Thread(target=self._answers, args=(upstream, client, state),
                         daemon=True).start()
        try:
            while True:
                data = client.recv(1 << 16)
                if not data:
                    break
                if _starts_request(data):
                    self.requests += 1
                    head = data.split(b"\r\n\r\n", 1)[0].lower()
                    with self._lock:
                        for i, m in enumerate(self._lose):
                            if m in head:
                                del self._lose[i]
                                state["drop"] = True
                                break
                    if self._strip is not None:
                        data = _without_header(data, self._strip)
                upstream.sendall(data)
        except OSError:
            pass
        finally:
            try:
                upstream.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def _answers(self, upstream: socket.socket, client: socket.socket, state: dict) -> None:
        try:
            while True:
                data = upstream.recv(1 << 16)
                if not data:
                    break
                if state["drop"]:  # the server applied it; the client never hears
                    self.lost += 1
                    time.sleep(0.05)
                    break
                if self.latency and data.startswith(b"HTTP/"):
                    time.sleep(self.latency)
                client.sendall(data)
        except OSError:
            pass
        finally:
            for s in (client, upstream):  # shutdown first: the other thread is in recv()
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                try:
                    s.close()
                except OSError:
                    pass


_METHODS = (b"GET ", b"PUT ", b"POST ", b"HEAD ", b"DELETE ")


def _starts_request(data: bytes) -> bool:
    return data.startswith(_METHODS)


def _without_header(data: bytes, name: bytes) -> bytes:
    head, sep, body = data.partition(b"\r\n\r\n")
    lines = [ln for ln in head.split(b"\r\n") if not ln.lower().startswith(name + b":")]
    return b"\r\n".join(lines) + sep + body
