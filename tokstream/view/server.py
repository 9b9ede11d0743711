"""The HTTP side of ``tokstream view``: a loopback-only server and the ``--html`` page.

``start_server`` serves, in a background thread (``ThreadingHTTPServer``):

- ``GET /`` (``index.html``), ``GET /static/<file>`` (the package's ``static/`` files);
- ``GET /api/tokenizers``: ``{"tokenizers": [names], "text": initial text,
  "max_chars": N}``;
- ``POST /api/<endpoint>``: the JSON API of ``api`` (its docstring lists the endpoints).

Refused: a body over ``MAX_BODY`` bytes (413, unread; the connection is closed), a
POST without ``Content-Length`` (411) or not ``application/json`` (415: a cross-site
form cannot send that type without a CORS preflight, which this server never
grants), a ``Host`` header that is not a loopback name (421: DNS rebinding), a body
that is not a JSON object (400). An exception inside an endpoint is a 500 with its
message (the traceback goes to stderr) and the server goes on serving. Every page is
sent with a ``Content-Security-Policy`` that allows nothing but this origin.

``render_html`` writes the ``--html`` page: one file with the CSS and JS inlined and
``/api/encode``'s response for the text embedded as ``<script type="application/json"
id="data">``; its CSP allows only those inline blocks (by hash), so opening it loads
nothing at all.

Not handled: TLS, authentication and any address but loopback (``check_host``).
"""

from __future__ import annotations

import base64
import errno
import hashlib
import ipaddress
import json
import socket
import sys
import threading
import traceback
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from .. import Tokenizer
from . import api

__all__ = ["MAX_BODY", "ViewServer", "check_host", "render_html", "start_server", "static_file"]

#: The largest request body read (bytes); larger ones get a 413 unread.
MAX_BODY = 8 << 20

_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def static_file(name: str) -> str:
    """The text of one of the page's files (``index.html``, ``app.js``, ``style.css``)."""
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def check_host(host: str) -> str:
    """``host`` as an address to bind, if it is a loopback one; ``ValueError`` otherwise.

    ``localhost`` means ``127.0.0.1``. The viewer has no authentication, so it never
    listens where another machine could reach it.

    >>> check_host("localhost"), check_host("::1")
    ('127.0.0.1', '::1')
    """
    if host.lower() in _LOOPBACK_NAMES:
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise ValueError(
            f"--host {host!r} is not a loopback address; tokstream view serves only this machine "
            "(use 127.0.0.1, ::1 or localhost)"
        )
    return str(address)


class ViewServer:
    """A running viewer: ``url``, ``port``, ``close()``. Made by ``start_server``."""

    def __init__(self, httpd: ThreadingHTTPServer, thread: threading.Thread, host: str) -> None:
        self._httpd = httpd
        self._thread = thread
        self.host = host
        #: The port it listens on (the one the OS chose for ``port=0``).
        self.port: int = httpd.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        #: The page's address, ``http://127.0.0.1:PORT/``.
        self.url = f"http://{shown}:{self.port}/"

    def serve_forever(self) -> None:
        """Block until ``close()`` is called from another thread (or Ctrl-C)."""
        self._thread.join()

    def close(self) -> None:
        """Stop serving, close the socket and wait for the server thread."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> ViewServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a stuck request must not keep the process alive at exit
    tokenizers: Mapping[str, Tokenizer]
    max_chars: int
    initial_text: str


class _HTTPServer6(_HTTPServer):
    address_family = socket.AF_INET6


def start_server(
    tokenizers: dict[str, Tokenizer],
    host: str = "127.0.0.1",
    port: int = 0,
    max_chars: int = 100_000,
    *,
    text: str = "",
) -> ViewServer:
    """Serve the viewer for ``tokenizers`` (name -> tokenizer) in a background thread.

    ``port=0`` takes a free port (``ViewServer.port``). ``text`` is the page's initial
    text. Raises ``ValueError`` for a non-loopback ``host`` or no tokenizers, and
    ``OSError`` naming the fix when the port is taken.
    """
    if not tokenizers:
        raise ValueError("no tokenizers to show; pass at least one --tokenizer")
    bind = check_host(host)
    cls = _HTTPServer6 if ":" in bind else _HTTPServer
    try:
        httpd = cls((bind, port), _Handler)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise OSError(f"port {port} is in use: pass --port 0 for a free one") from None
        raise OSError(f"cannot listen on {bind} port {port}: {e.strerror or e}") from None
    httpd.tokenizers = dict(tokenizers)
    httpd.max_chars = max_chars
    httpd.initial_text = text
    thread = threading.Thread(target=httpd.serve_forever, name="tokstream-view", daemon=True)
    thread.start()
    return ViewServer(httpd, thread, bind)


class _Handler(BaseHTTPRequestHandler):
    server: _HTTPServer
    server_version = "tokstream-view"
    protocol_version = "HTTP/1.1"
    timeout = 60  # seconds a kept-alive or slow connection may idle before its thread lets go

    def log_message(self, format: str, *args: Any) -> None:
        pass  # one line per request would bury the URL the user needs

    # -- dispatch -----------------------------------------------------------------------

    def do_GET(self) -> None:
        """The page, its static files and ``/api/tokenizers``."""
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        if path == "/api/tokenizers":
            srv = self.server
            self._json(200, {"tokenizers": list(srv.tokenizers), "text": srv.initial_text, "max_chars": srv.max_chars})
            return
        name = "index.html" if path in ("/", "/index.html") else path.removeprefix("/static/")
        if name not in _STATIC or (name != "index.html" and not path.startswith("/static/")):
            self._json(404, {"error": f"no such page {path!r}"})
            return
        self._send(200, _STATIC[name], static_file(name).encode("utf-8"))

    def do_POST(self) -> None:
        """An ``api.ROUTES`` endpoint: JSON object in, JSON object out."""
        if not self._host_ok():
            return
        path = urlsplit(self.path).path
        try:
            body = self._read_body()
            handler = api.ROUTES.get(path)
            if handler is None:
                raise api.ApiError(404, f"no endpoint {path!r}; endpoints: {', '.join(api.ROUTES)}")
            result = handler(self.server.tokenizers, body, self.server.max_chars)
        except api.ApiError as e:
            self._json(e.status, {"error": e.message})
            return
        except Exception as e:
            # A bug, not a bad request: say so, keep the traceback, keep serving.
            traceback.print_exc(file=sys.stderr)
            self._json(500, {"error": f"internal error in {path}: {type(e).__name__}: {e}"})
            return
        self._json(200, result)

    # -- helpers ------------------------------------------------------------------------

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        try:
            check_host(name)
        except ValueError:
            self._json(421, {"error": f"Host {host!r} is not this machine; open the page at 127.0.0.1"})
            return False
        return True

    def _read_body(self) -> dict[str, Any]:
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self.close_connection = True
            raise api.ApiError(411, "send the JSON body with a Content-Length")
        try:
            length = int(length_text)
        except ValueError:
            length = -1
        if length < 0:
            self.close_connection = True
            raise api.ApiError(400, f"bad Content-Length {length_text!r}")
        if length > MAX_BODY:
            # Not read: closing the connection discards it.
            self.close_connection = True
            raise api.ApiError(413, f"request body of {length} bytes is over the limit of {MAX_BODY}")
        data = self.rfile.read(length)
        kind = self.headers.get_content_type()
        if kind != "application/json":
            raise api.ApiError(415, f"send the body as application/json, not {kind}")
        try:
            body = json.loads(data)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise api.ApiError(400, f"the body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise api.ApiError(400, "the body must be a JSON object")
        return body

    def _json(self, status: int, obj: dict[str, Any]) -> None:
        self._send(status, "application/json", json.dumps(obj).encode("utf-8"))

    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


# ---------------------------------------------------------------- the --html page


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def render_html(tokenizers: Mapping[str, Tokenizer], text: str) -> str:
    """One self-contained page showing ``text`` under every tokenizer (``--html``).

    The CSS and JS are inlined; the data is ``/api/encode``'s response, embedded as
    JSON with every ``<`` escaped as ``\\u003c`` (so neither ``</script>`` nor
    ``<!--`` in the text can end the block). Nothing is loaded from anywhere.
    """
    data = api.encode_results(tokenizers, list(tokenizers), text)
    data["text"] = text  # the page cuts its spans from it (the served page has it in its textarea)
    blob = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    # U+2028/2029 are fine in JSON.parse, but escape them for any tool reading the page.
    blob = blob.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    css, js = static_file("style.css"), static_file("app.js")
    # Inside <script>/<style>, "</" ends the block and "<!--" / "<script" change the
    # HTML parser's script states: the files are kept free of all three.
    for name, source in (("app.js", js), ("style.css", css)):
        for needle in ("</", "<!--", "<script"):
            if needle in source:
                raise ValueError(f"{name} holds {needle!r}, which an inline block cannot (render_html)")
    csp = (
        f"default-src 'none'; script-src {_csp_hash(js)}; style-src {_csp_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    page = static_file("index.html")
    replacements = {
        '<link rel="stylesheet" href="static/style.css">': f"<style>{css}</style>",
        '<script src="static/app.js" defer></script>': (
            f'<script type="application/json" id="data">{blob}</script>\n<script>{js}</script>'
        ),
        "<!-- csp -->": f'<meta http-equiv="Content-Security-Policy" content="{csp}">',
    }
    for old, new in replacements.items():
        if old not in page:
            raise ValueError(f"index.html lacks {old!r}, where render_html inlines the page")
        page = page.replace(old, new)
    return page
