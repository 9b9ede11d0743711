"""Stream a generation to HTTP clients as server-sent events, cut at stop strings.

A stand-in "model" yields token ids one at a time; tokstream's StreamDecoder turns them
into text that is final (never half a UTF-8 character, never text that could still turn
out to be a stop string), and each piece goes out as one SSE event. Stdlib only, offline.

    python examples/stream_server.py                    # demo: server + client, then exit
    python examples/stream_server.py --serve --port 8000
    curl -N 'http://127.0.0.1:8000/generate?prompt=Hi&stop=User:'

Events: ``data: "<piece>"`` per piece (a JSON string, so newlines survive), then
``event: done`` with ``data: {"stop_reason": ...}`` (the stop string that matched, or null
when the model ran out of ids). ``stop`` may be repeated in the query.

Not a real HTTP server: one GET per connection, no keep-alive, no chunked encoding (the
body ends when the connection closes, which SSE allows).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import tokstream
from tokstream.stream import StreamDecoder

HOST = "127.0.0.1"
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


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One connection: parse ``GET /generate?prompt=...&stop=...``, stream the events."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")  # request line + headers (ignored)
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        url = urlsplit(parts[1]) if len(parts) == 3 else None
        if url is None or parts[0] != "GET" or url.path != "/generate":
            writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        query = parse_qs(url.query)
        decoder = StreamDecoder(TOK, stop=query.get("stop", []))
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n"
            b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
        )
        # aclosing: the model is closed when we stop early (stop string) or the client
        # goes away (drain raises), not left suspended until garbage collection.
        async with aclosing(fake_model(query.get("prompt", [""])[0])) as ids:
            async for token_id in ids:
                piece = decoder.step(token_id)
                if piece:
                    writer.write(sse(piece))
                    await writer.drain()  # back-pressure: a slow client slows the model
                if decoder.stopped:
                    break
        tail = decoder.finish()  # a character the model left unfinished, as U+FFFD
        if tail:
            writer.write(sse(tail))
        writer.write(sse({"stop_reason": decoder.stop_reason}, event="done"))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
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
    return await asyncio.start_server(handle, HOST, port)


async def demo() -> None:
    async with await start() as server:  # closed on exit
        port = server.sockets[0].getsockname()[1]
        print(f"serving on http://{HOST}:{port}")
        for query in ({"prompt": "Hello!", "stop": ["User:"]}, {"prompt": "No stop string."}):
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
