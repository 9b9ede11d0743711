"""``tokstream view``: a local page that shows how tokenizers cut a text.

For each chosen tokenizer the page shows the text as coloured spans, one per token
(hover one for its id, vocabulary spelling, bytes and offsets), its token count and
its stable boundary (``tok.stable_boundary``: tokens after it may change when text is
appended); an append box shows which tokens a suffix re-tokenizes, a healing box what
``tokstream.heal`` backs off, and a constraint box how many ids a prefix, choice,
regex or JSON Schema constraint allows at each token of a sample.

The server (``server``) uses only the standard library, listens on loopback only and
loads nothing from outside; the page is static HTML, CSS and vanilla JS
(``static/``) talking to the JSON API of ``api``. ``--html OUT TEXT`` writes one
self-contained file instead of serving.

The command line calls ``add_arguments`` and ``run``; tests call ``start_server``.

Not handled: editing tokenizers, or generation (this shows what the library computes).
"""

from __future__ import annotations

import argparse
import sys

from .. import Tokenizer, load
from .server import ViewServer, check_host, render_html, start_server

__all__ = ["ViewServer", "add_arguments", "load_tokenizers", "render_html", "run", "start_server"]

DEFAULT_PORT = 8765
DEFAULT_MAX_CHARS = 100_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``tokstream view``'s options to ``p``."""
    p.add_argument(
        "text",
        nargs="?",
        metavar="TEXT",
        help="the text to show (with --html: the page's text; default: read stdin)",
    )
    p.add_argument(
        "--tokenizer",
        "-t",
        action="append",
        dest="tokenizers",
        metavar="NAME|PATH",
        help="an embedded encoding (default, cl100k_base, o200k_base, r50k_base/gpt2, p50k_base) or a "
        "tokenizer file (tokenizer.json, .tiktoken, .model); repeat to compare several (default: default)",
    )
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="P",
        help="the port to serve on; 0 picks a free one (default: %(default)s)",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="the loopback address to serve on: 127.0.0.1, ::1 or localhost (default: %(default)s)",
    )
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="write one self-contained HTML page showing TEXT to OUT.html and exit (no server)",
    )
    p.add_argument(
        "--max-chars",
        type=int,
        default=DEFAULT_MAX_CHARS,
        metavar="N",
        help="refuse texts longer than N characters (default: %(default)s)",
    )


def load_tokenizers(names: list[str]) -> dict[str, Tokenizer]:
    """``{name: tokstream.load(name)}`` in the order given, duplicates dropped.

    A name is an embedded encoding or a path (``tokstream.load`` dispatches on
    ``.tiktoken``, ``tokenizer.json`` and ``.model`` files); the page shows the name
    as given.
    """
    return {name: load(name) for name in dict.fromkeys(names)}


def run(args: argparse.Namespace) -> int:
    """Serve the viewer until Ctrl-C, or write the ``--html`` page; return 0.

    Errors are ``ValueError`` (a ``TokstreamError`` for an unknown tokenizer) or
    ``OSError`` with a one-line message that says what to do.
    """
    max_chars: int = args.max_chars
    if max_chars < 1:
        raise ValueError(f"--max-chars must be 1 or more, not {max_chars}")
    if args.html is None:
        check_host(args.host)  # before loading tokenizers: fail fast on a bad address
        if not 0 <= args.port <= 65535:
            raise ValueError(f"--port must be 0-65535, not {args.port}")
    text: str | None = args.text
    if args.html is not None and text is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise ValueError("--html needs TEXT: pass it as an argument or on stdin")
        text = sys.stdin.read()
    if text is not None and len(text) > max_chars:
        raise ValueError(f"text of {len(text)} characters is over the limit of {max_chars} (--max-chars)")
    tokenizers = load_tokenizers(args.tokenizers or ["default"])
    if args.html is not None:
        page = render_html(tokenizers, text or "")
        try:
            with open(args.html, "w", encoding="utf-8") as f:
                f.write(page)
        except OSError as e:
            raise OSError(f"cannot write {args.html!r}: {e.strerror or e}") from None
        print(f"tokstream view: wrote {args.html}")
        return 0
    server = start_server(tokenizers, host=args.host, port=args.port, max_chars=max_chars, text=text or "")
    try:
        # Printed inside the try: a Ctrl-C right after the address is shown still stops
        # the server cleanly.
        print(f"tokstream view: serving on {server.url}", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass  # Ctrl-C is how a user stops a server, not an error
    finally:
        server.close()
    return 0
