"""examples/stream_server.py: its server and its SSE client on loopback, in one event loop.

The expected text is computed here, independently of the server: the stand-in model's
reply is encoded with o200k_base (the embedded default), decoded with ``tok.decode`` and
cut at the earliest stop string.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType
from typing import Any
from urllib.parse import urlencode

import pytest
from helpers import load_example

import tokstream
from tokstream.stream import StreamDecoder


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example("stream_server")


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.load("o200k_base")


@asynccontextmanager
async def running(example: ModuleType) -> AsyncIterator[int]:
    """The example's server on an ephemeral loopback port; closed on exit, and every
    task it started finished; no loop-level errors (unhandled handler exceptions)."""
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    before = asyncio.all_tasks()
    try:
        async with await example.start() as server:
            yield server.sockets[0].getsockname()[1]
        for _ in range(100):  # handlers finish closing their sockets
            if asyncio.all_tasks() == before:
                break
            await asyncio.sleep(0.01)
        assert asyncio.all_tasks() == before
        assert not errors, errors
    finally:
        loop.set_exception_handler(None)


def expected(
    example: ModuleType, tok: tokstream.Tokenizer, prompt: str, stops: list[str], max_tokens: int | None = None
) -> tuple[str, str | None]:
    ids = tok.encode(example.reply_text(prompt), disallowed_special=())
    text = tok.decode(ids[:max_tokens])
    # The stop string that completes first wins (ties: the one listed first).
    hits = [(text.find(s) + len(s), n, s) for n, s in enumerate(stops) if s in text]
    if not hits:
        return text, None
    end, _, stop = min(hits)
    return text[: end - len(stop)], stop


CASES = [
    ("Hello!", ["User:"]),
    ("Hello!", ["User:", "\n\n"]),  # the earliest stop string wins
    ("no stop here", []),
    ("no match", ["<|never|>"]),
    ("say STOP now", ["STOP"]),  # a stop string inside the echoed prompt
    ("emoji", ["👋🏽"]),  # a stop string that spans several ids and characters
    ("café", ["é, 日"]),  # one that starts inside a token
    ("", ["Here"]),
]


@pytest.mark.asyncio
@pytest.mark.parametrize(("prompt", "stops"), CASES)
async def test_events_concatenate_to_the_decode_up_to_the_stop(
    example: ModuleType, tok: tokstream.Tokenizer, prompt: str, stops: list[str]
) -> None:
    assert example.TOK.fingerprint == tok.fingerprint
    want_text, want_reason = expected(example, tok, prompt, stops)
    async with running(example) as port:
        path = "/generate?" + urlencode({"prompt": prompt, "stop": stops}, doseq=True)
        events = await example.fetch_events("127.0.0.1", port, path)
    *messages, done = events
    assert done == ("done", {"stop_reason": want_reason, "finish_reason": "stop" if want_reason else "eos"})
    assert all(name == "message" and isinstance(data, str) and data for name, data in messages)
    pieces = [data for _, data in messages]
    assert "".join(pieces) == want_text
    # One event per non-empty StreamDecoder.step (and finish), exactly as the sync decoder.
    dec = StreamDecoder(tok, stop=stops)
    sync = []
    for token_id in tok.encode(example.reply_text(prompt), disallowed_special=()):
        sync.append(dec.step(token_id))
        if dec.stopped:
            break
    sync.append(dec.finish())
    assert pieces == [p for p in sync if p]


@pytest.mark.asyncio
async def test_newlines_survive_as_json(example: ModuleType) -> None:
    async with running(example) as port:
        events = await example.fetch_events("127.0.0.1", port, "/generate?prompt=a%0A%0Ab")
    text = "".join(data for name, data in events if name == "message")
    assert text.startswith("a\n\nb Here") and "\n" in text


@pytest.mark.asyncio
async def test_concurrent_clients(example: ModuleType, tok: tokstream.Tokenizer) -> None:
    prompts = [f"client {n} 👋" for n in range(6)]
    async with running(example) as port:
        results = await asyncio.gather(
            *(
                example.fetch_events("127.0.0.1", port, "/generate?" + urlencode({"prompt": p, "stop": "User:"}))
                for p in prompts
            )
        )
    for prompt, events in zip(prompts, results):
        text = "".join(data for name, data in events if name == "message")
        assert text == expected(example, tok, prompt, ["User:"])[0]
        assert events[-1] == ("done", {"stop_reason": "User:", "finish_reason": "stop"})


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/nope", "/generate/x?prompt=a"])
async def test_unknown_path_is_404(example: ModuleType, path: str) -> None:
    async with running(example) as port:
        with pytest.raises(RuntimeError, match="404"):
            await example.fetch_events("127.0.0.1", port, path)


@pytest.mark.asyncio
async def test_garbage_request_and_early_hangup(example: ModuleType) -> None:
    async with running(example) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"NONSENSE\r\n\r\n")
        assert (await reader.read()).startswith(b"HTTP/1.1 404")
        writer.close()
        await writer.wait_closed()
        # A client that hangs up before finishing its request.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /generate HTTP/1.1\r\n")
        writer.close()
        await writer.wait_closed()
        # The server still serves.
        events = await example.fetch_events("127.0.0.1", port, "/generate?prompt=ok&stop=User:")
        assert events[-1] == ("done", {"stop_reason": "User:", "finish_reason": "stop"})


@pytest.mark.asyncio
async def test_client_disconnect_closes_the_model(example: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    closed = asyncio.Event()

    async def endless_model(prompt: str) -> AsyncIterator[int]:
        ids = example.TOK.encode("on and on ")
        try:
            while True:
                for token_id in ids:
                    await asyncio.sleep(0)
                    yield token_id
        finally:
            closed.set()

    monkeypatch.setattr(example, "fake_model", endless_model)
    async with running(example) as port:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /generate?prompt=x HTTP/1.1\r\nHost: localhost\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        assert (await reader.readuntil(b"\n\n")).startswith(b"data: ")
        writer.close()
        await writer.wait_closed()
        await asyncio.wait_for(closed.wait(), timeout=10)


@pytest.mark.asyncio
@pytest.mark.parametrize("max_tokens", [1, 9, 14])
async def test_max_tokens_is_length(example: ModuleType, tok: tokstream.Tokenizer, max_tokens: int) -> None:
    """``max_tokens`` ids, the last one's text included (14 ends inside the emoji: its
    bytes so far come out as U+FFFD, as ``tok.decode`` has them)."""
    want, _ = expected(example, tok, "café", ["User:"], max_tokens)
    async with running(example) as port:
        query = urlencode({"prompt": "café", "stop": "User:", "max_tokens": max_tokens})
        events = await example.fetch_events("127.0.0.1", port, "/generate?" + query)
    assert "".join(data for name, data in events if name == "message") == want
    assert events[-1] == ("done", {"stop_reason": None, "finish_reason": "length"})


async def status_of(port: int, request: bytes) -> bytes:
    """The status line the server answers ``request`` with (sent whole)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        return (await reader.readuntil(b"\r\n")).rstrip()
    finally:
        writer.close()
        await writer.wait_closed()


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET /generate?prompt=" + b"a" * 10_000 + b" HTTP/1.1\r\n\r\n", b"414"),  # over 8 KiB
        (b"GET /generate?prompt=" + b"a" * 100_000 + b" HTTP/1.1\r\n\r\n", b"414"),  # over 64 KiB
        (b"GET /generate HTTP/1.1\r\nX-Big: " + b"b" * 100 * 1024 + b"\r\n\r\n", b"431"),  # one 100 KiB header
        (
            b"GET /generate HTTP/1.1\r\n" + b"".join(b"X-H%d: %s\r\n" % (n, b"c" * 1000) for n in range(70)) + b"\r\n",
            b"431",
        ),
        (b"GET /generate?max_tokens=0 HTTP/1.1\r\n\r\n", b"400"),
    ],
    ids=["line-10k", "line-100k", "header-100k", "headers-70k", "max-tokens-0"],
)
async def test_oversized_requests_get_414_and_431(example: ModuleType, request_bytes: bytes, status: bytes) -> None:
    """A request over 64 KiB used to get an empty reply (readuntil's LimitOverrunError)."""
    async with running(example) as port:
        assert (await status_of(port, request_bytes)).split(b" ")[1] == status
        events = await example.fetch_events("127.0.0.1", port, "/generate?prompt=still&stop=User:")
        assert events[-1] == ("done", {"stop_reason": "User:", "finish_reason": "stop"})
