"""The server's safety rules, each in one place: the token on every request (compared in
constant time), the security headers of every response, the size limit of a request body,
uploads checked by content and stored under generated names, server-side paths kept under
``--allow-root``."""

from __future__ import annotations

import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..exceptions import ValidationError

__all__ = [
    "CSP",
    "FILE_CSP",
    "TOKEN_COOKIE",
    "UPLOAD_KINDS",
    "BodyLimit",
    "Guard",
    "generated_name",
    "sniff_upload",
    "under_root",
]

log = logging.getLogger("privwatch.serve")
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Pages: scripts and styles only from the server's own files (no inline script, no CDN).
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
#: Files an audit wrote (report.html has its own inline styles and data: figures): no script
#: at all, in a sandbox.
FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
TOKEN_COOKIE = "privwatch_token"
#: Upload suffixes accepted, and the reader each is checked against.
UPLOAD_KINDS = {
    ".csv": "text",
    ".jsonl": "jsonl",
    ".parquet": "parquet",
    ".xlsx": "xlsx",
    ".json": "json",
}


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


def _presented_token(scope: Scope) -> str | None:
    headers = _headers(scope)
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    if "x-privwatch-token" in headers:
        return headers["x-privwatch-token"]
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:  # a malformed cookie header carries no token
        return None
    morsel = cookie.get(TOKEN_COOKIE)
    return morsel.value if morsel is not None else None


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: the token check, cross-site posts refused and the security headers.

    With a token, a request must carry it (``Authorization: Bearer T``, ``X-Privwatch-Token``
    or the cookie a browser gets from ``/login?token=T``), compared with
    :func:`hmac.compare_digest`; else 401. A request that changes something (not GET, HEAD,
    OPTIONS) whose ``Origin`` is another site gets 403. Every response gets
    ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: same-origin`` and a
    Content-Security-Policy (:data:`CSP`, or :data:`FILE_CSP` for an audit's files).
    """

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        security = [
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"cache-control", b"no-store"),
        ]
        headers = _headers(scope)
        origin = headers.get("origin")
        if (
            scope["method"] not in ("GET", "HEAD", "OPTIONS")
            and origin is not None
            and urlsplit(origin).netloc != headers.get("host")
        ):
            # a form another site posts from the user's browser (cross-site request forgery)
            await _plain(send, 403, "cross-site request refused", security)
            return
        if self.token is not None and scope["path"] != "/login":
            given = _presented_token(scope)
            if given is None or not hmac.compare_digest(given.encode(), self.token.encode()):
                await _plain(
                    send,
                    401,
                    "a token is required: Authorization: Bearer TOKEN",
                    [*security, (b"content-security-policy", CSP.encode())],
                )
                return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                if b"content-security-policy" not in names:
                    headers.append((b"content-security-policy", CSP.encode()))
                headers += [h for h in security if h[0] not in names]
                message["headers"] = headers
            await send(message)

        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send_with_headers(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:  # the type and the route only: a message may quote a cell
            log.error("%s on %s %s", type(exc).__name__, scope.get("method"), scope["path"])
            if not started:
                await _plain(send, 500, "internal error", security)


class BodyLimit:
    """ASGI middleware: a request body larger than ``limit`` bytes gets 413, from its
    ``Content-Length`` before anything is read, or when a chunked body passes the limit."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = _headers(scope).get("content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await _plain(send, 413, f"the request is larger than {self.limit} bytes", [])
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await _plain(send, 413, f"the request is larger than {self.limit} bytes", [])


class _TooLarge(Exception):
    pass


def _is_text(head: bytes) -> bool:
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:  # a multi-byte character cut at the end is fine
        return exc.start >= len(head) - 3
    return True


def sniff_upload(name: str, head: bytes, tail: bytes) -> str:
    """The suffix of an upload whose content matches its name (``.csv`` text, ``.parquet``
    ``PAR1`` at both ends, ``.xlsx`` a zip, ``.jsonl`` / ``.json`` text starting with ``{`` or
    ``[``); a :class:`ValidationError` otherwise. ``head`` / ``tail``: the file's first and
    last bytes."""
    suffix = Path(name).suffix.lower()
    kind = UPLOAD_KINDS.get(suffix)
    if kind is None:
        raise ValidationError(
            f"an upload must be one of {', '.join(sorted(UPLOAD_KINDS))}; got {suffix or 'none'}."
        )
    ok = {
        "parquet": head[:4] == b"PAR1" and tail[-4:] == b"PAR1",
        "xlsx": head[:4] == b"PK\x03\x04",
        "text": _is_text(head) and bool(head.strip()),
        "jsonl": _is_text(head) and head.lstrip()[:1] in (b"{",),
        "json": _is_text(head) and head.lstrip()[:1] in (b"{", b"["),
    }[kind]
    if not ok:
        raise ValidationError(f"the upload's content is not a {suffix} file.")
    return ".jsonl" if suffix == ".json" and head.lstrip()[:1] == b"{" else suffix


def generated_name(suffix: str) -> str:
    """A fresh file name that says nothing of the upload's own: 32 random hex digits."""
    return secrets.token_hex(16) + suffix


def under_root(path: str, root: Path | None) -> Path:
    """``path`` resolved (links followed), refused unless it is a file under ``root``."""
    if root is None:
        raise ValidationError("server-side files are off: start the server with `allow_root`.")
    resolved = (root / path).resolve() if not Path(path).is_absolute() else Path(path).resolve()
    if not resolved.is_relative_to(root):
        raise ValidationError("the path lies outside the allowed root.")
    if not resolved.is_file():
        raise ValidationError("no such file under the allowed root.")
    return resolved
