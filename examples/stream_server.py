"""Stream a generation to HTTP clients as server-sent events, cut at stop strings.

A stand-in "model" yields token ids one at a time; tokstream's StreamDecoder turns them
into text that is final (never half a UTF-8 character, never text that could still turn
out to be a stop string), and each piece goes out as one SSE event. Stdlib only, offline.

    python examples/stream_server.py                    # demo: server + client, then exit
    python examples/stream_server.py --serve --port 8000
    curl -N 'http://127.0.0.1:8000/generate?prompt=Hi&stop=User:'

Events: ``data: "<piece>"`` per piece (a JSON string, so newlines survive), then
``event: done`` with ``data: {"stop_reason": ..., "finish_reason": ...}``: the stop string
that matched (or null), and why the stream ended (``StreamDecoder.finish_reason``):
``"stop"`` (a stop string), ``"length"`` (``max_tokens`` ids) or ``"eos"`` (the model
ended its reply). ``stop`` may be repeated in the query; ``max_tokens`` is optional.

Not a real HTTP server: one GET per connection, no keep-alive, no chunked encoding (the
body ends when the connection closes, which SSE allows). A request line over 8 KiB gets
a 414, headers over 64 KiB a 431; what the client still sends is then read and dropped
for a moment, since closing on unread input resets the connection, which can destroy
the reply before the client reads it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing, suppress
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import tokstream

HOST = "127.0.0.1"
MAX_REQUEST_LINE = 8 * 1024
MAX_HEADERS = 64 * 1024
TOK = tokstream.load("default")  # o200k_base, embedded: no download
CANNED = (
    " Here is a streamed reply: naïve café, 日本語, 👋🏽.\n"
    "Every event is final text, so a client can print it at once.\n\n"
    "User: a model would ramble on here, past the stop string."
)


def reply_text(prompt: str) -> str:
    """What the stand-in model "generates": the prompt echoed, then a canned reply."""
    return prompt + CANNED


async def fake_model(prompt: str) -> AsyncGenerator[int, None]:
    """Stand-in for a model: the ids of ``reply_text(prompt)``, one at a time."""
    for token_id in TOK.encode(reply_text(prompt), disallowed_special=()):
        await asyncio.sleep(0)  # a real model awaits its next token here
        yield token_id


def sse(data: object, event: str | None = None) -> bytes:
    """One server-sent event; the payload is JSON, so it is a single line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


class Refused(Exception):
    """A request over a limit; ``status`` is the reply's (414 or 431)."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


async def read_request_line(reader: asyncio.StreamReader) -> str:
    """The request line; the headers are read (within ``MAX_HEADERS``) and ignored."""
    request_line, size = None, 0
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
        except asyncio.LimitOverrunError:  # longer than the stream's limit (MAX_HEADERS)
            line = None
        if request_line is None:
            if line is None or len(line) > MAX_REQUEST_LINE:
                raise Refused(414)
            request_line = line.decode("latin-1").rstrip("\r\n")
            continue
        size += len(line) if line is not None else MAX_HEADERS + 1
        if size > MAX_HEADERS:
            raise Refused(431)
        if line == b"\r\n":
            return request_line


async def drop_input(reader: asyncio.StreamReader, seconds: float = 2.0) -> None:
    """Read and drop what the client still sends, until it stops or ``seconds`` pass."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    with suppress(asyncio.TimeoutError, ConnectionError):
        while await asyncio.wait_for(reader.read(65536), max(0.0, deadline - loop.time())):
            pass


REASONS = {400: "Bad Request", 404: "Not Found", 414: "URI Too Long", 431: "Request Header Fields Too Large"}


def status_line(status: int) -> bytes:
    return f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".encode()


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One connection: parse ``GET /generate?prompt=...&stop=...``, stream the events."""
    try:
        try:
            parts = (await read_request_line(reader)).split(" ")
        except Refused as e:
            writer.write(status_line(e.status))
            await writer.drain()
            await drop_input(reader)
            return
        url = urlsplit(parts[1]) if len(parts) == 3 else None
        if url is None or parts[0] != "GET" or url.path != "/generate":
            writer.write(status_line(404))
            return
        query = parse_qs(url.query)
        max_tokens = query.get("max_tokens", [""])[0]
        if max_tokens and not (max_tokens.isdigit() and int(max_tokens) > 0):
            writer.write(status_line(400))
            return
        # adecode closes the model once the stream has ended itself (a stop string,
        # max_tokens); aclosing closes both when the client goes away (drain raises),
        # rather than leaving them suspended until garbage collection.
        stream = tokstream.adecode(
            TOK,
            fake_model(query.get("prompt", [""])[0]),
            stop=query.get("stop", []),
            max_tokens=int(max_tokens) if max_tokens else None,
        )
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        async with aclosing(stream):
            async for piece in stream:  # the last one: a character left unfinished, as U+FFFD
                writer.write(sse(piece))
                await writer.drain()  # back-pressure: a slow client slows the model
        decoder = stream.decoder
        writer.write(sse({"stop_reason": decoder.stop_reason, "finish_reason": decoder.finish_reason}, event="done"))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass  # the client went away, or sent no complete request
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except ConnectionError:
            pass


async def fetch_events(host: str, port: int, path: str) -> list[tuple[str, Any]]:
    """A minimal SSE client: GET ``path``, return ``(event name, JSON payload)`` pairs."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        status = (await reader.readuntil(b"\r\n\r\n")).split(b"\r\n", 1)[0].decode()
        if status.split(" ")[1:2] != ["200"]:
            raise RuntimeError(f"GET {path}: {status}")
        events: list[tuple[str, Any]] = []
        name, data = "message", list[str]()  # the event being read: its name, data lines
        async for raw in reader:  # one line at a time, until the server closes
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:  # a blank line ends an event
                if data:
                    events.append((name, json.loads("\n".join(data))))
                name, data = "message", []
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        return events
    finally:
        writer.close()
        await writer.wait_closed()


async def start(port: int = 0) -> asyncio.Server:
    """The server on 127.0.0.1 (``port=0``: an ephemeral port)."""
    # limit: no line is buffered past MAX_HEADERS (readuntil raises, the reply is a 414/431).
    return await asyncio.start_server(handle, HOST, port, limit=MAX_HEADERS)


async def demo() -> None:
    async with await start() as server:  # closed on exit
        port = server.sockets[0].getsockname()[1]
        print(f"serving on http://{HOST}:{port}")
        queries: list[dict[str, Any]] = [
            {"prompt": "Hello!", "stop": ["User:"]},
            {"prompt": "No stop string."},
            {"prompt": "Hi", "max_tokens": 9},
        ]
        for query in queries:
            path = "/generate?" + urlencode(query, doseq=True)
            events = await fetch_events(HOST, port, path)
            pieces = [data for event, data in events if event == "message"]
            print(f"GET {path}\n  {len(pieces)} pieces:", " ".join(map(repr, pieces)))
            print(f"  done: {events[-1][1]}\n  text: {''.join(pieces)!r}")


async def serve(port: int) -> None:
    async with await start(port) as server:
        print(f"serving on http://{HOST}:{server.sockets[0].getsockname()[1]}  (Ctrl-C stops)", flush=True)
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--demo", action="store_true", help="run server and client once, then exit (default)")
    mode.add_argument("--serve", action="store_true", help="serve until interrupted")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (0: ephemeral, printed)")
    args = parser.parse_args(argv)
    if args.serve:
        try:
            asyncio.run(serve(args.port))
        except KeyboardInterrupt:
            pass
    else:
        asyncio.run(demo())


if __name__ == "__main__":
    main()
