"""A real HTTP server on 127.0.0.1 for the price-list clients' tests.

A real server, not a mocked session, checks what goes over the wire (the exact query, the headers,
paging) and how the clients behave when the service is busy, failing, slow or answering nonsense.
The test sets `respond(request) -> Reply`; every request (GET, or POST with its body) is recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    path: str
    headers: Mapping[str, str]
    method: str = "GET"
    body: bytes = b""

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.path).query)


@dataclass
class Reply:
    """An answer: status, JSON body (or raw bytes), extra headers, and whether to stall until released."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    hold: bool = False

    def payload(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


class FakeServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[Request] = []
        self.release = threading.Event()
        self.respond: Callable[[Request], Reply] = lambda request: Reply(404, {"error": {"message": "no route"}})

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.server_address[1]}{path}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (the timeout tests) closes the socket; that is expected here."""


class _Handler(BaseHTTPRequestHandler):
    server: FakeServer
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._answer(Request(self.path, {k.lower(): v for k, v in self.headers.items()}))

    def do_POST(self) -> None:
        """Azure Resource Manager's actions (`.../register`) are POSTs without a body; Google spells some
        reads as a POST (getIamPolicy). The body is recorded with the request."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, "POST", body))

    def _answer(self, request: Request) -> None:
        self.server.requests.append(request)
        reply = self.server.respond(request)
        if reply.hold:
            self.server.release.wait(timeout=5)
        body = reply.payload()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output clean."""


@contextmanager
def serving() -> Iterator[FakeServer]:
    server = FakeServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
