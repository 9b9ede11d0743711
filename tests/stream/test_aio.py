"""adecode / aencode: the same output as the sync StreamDecoder / StreamEncoder and as
tok.decode / tok.encode; the source is closed on every way out (exhausted, stop string,
cancellation, early break, aclose, errors) and no task is left behind."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from contextlib import aclosing
from typing import Any

import pytest

import tokstream
from tokstream.stream import StreamDecoder, StreamEncoder, adecode, aencode

TEXTS = (
    "hello world",
    "Hello, world! 👋 naïve café, 日本語のテキスト\n\n  indented\tcode()  \n",
    "emoji ZWJ 👩‍👩‍👧‍👦 and flags 🇯🇵🇫🇷, combining e\u0301 a\u0308, math 𝔸𝔹",
    "def f(x):\n    return x ** 2  # square\n\n" * 5,
    "",
)
NAMES = ("cl100k_base", "o200k_base")


def tok_of(name: str) -> tokstream.Tokenizer:
    return tokstream.load(name)


class Source:
    """An async generator of ``items`` that records how it ended.

    ``closed`` turns True in its ``finally`` (exhausted, closed, cancelled or failed);
    ``pulled`` counts the items handed out; after ``hang_after`` items it waits forever
    (for cancellation); ``fail`` is raised after the items.
    """

    def __init__(self, items: Iterable[Any], *, hang_after: int | None = None, fail: BaseException | None = None):
        self.items = list(items)
        self.hang_after = hang_after
        self.fail = fail
        self.pulled = 0
        self.closed = False
        self.hanging = asyncio.Event()

    async def gen(self) -> AsyncGenerator[Any, None]:
        try:
            for item in self.items:
                if self.hang_after is not None and self.pulled == self.hang_after:
                    self.hanging.set()
                    await asyncio.Event().wait()  # until cancelled
                await asyncio.sleep(0)  # a real source suspends between items
                self.pulled += 1
                yield item
            if self.fail is not None:
                raise self.fail
        finally:
            self.closed = True


def sync_decode_pieces(tok: tokstream.Tokenizer, ids: list[int], **kw: Any) -> tuple[list[str], int]:
    """The sync decoder's non-empty pieces, and how many ids it read before stopping."""
    dec = StreamDecoder(tok, **kw)
    pieces, used = [], 0
    for i in ids:
        used += 1
        pieces.append(dec.step(i))
        if dec.stopped:
            break
    pieces.append(dec.finish())
    return [p for p in pieces if p], used


def sync_encode_lists(tok: tokstream.Tokenizer, chunks: list[str], **kw: Any) -> list[list[int]]:
    enc = StreamEncoder(tok, **kw)
    lists = [enc.push(c) for c in chunks] + [enc.finish()]
    return [ids for ids in lists if ids]


def chunkings(text: str) -> list[list[str]]:
    """Fixed sizes plus seeded random split points (code points)."""
    out = [[text[i : i + n] for i in range(0, len(text), n)] for n in (1, 3, 16)]
    rng = random.Random(len(text))
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(text)), min(len(text) - 1, 6))) if len(text) > 1 else []
        out.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])])
    return out


async def collect(agen: AsyncIterator[Any]) -> list[Any]:
    return [x async for x in agen]


# -- same output as the sync classes and the one-shot calls ---------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
async def test_adecode_matches_sync_and_decode(name: str, text: str) -> None:
    tok = tok_of(name)
    ids = tok.encode(text)
    src = Source(ids)
    pieces = await collect(adecode(tok, src.gen()))
    assert all(pieces), "only non-empty pieces are yielded"
    assert pieces == sync_decode_pieces(tok, ids)[0]
    assert "".join(pieces) == tok.decode(ids) == text
    assert src.closed and src.pulled == len(ids)


@pytest.mark.asyncio
@pytest.mark.parametrize("name", NAMES)
async def test_adecode_invalid_utf8_and_split_characters(name: str) -> None:
    tok = tok_of(name)
    # Characters split over ids, orphan continuation bytes first and an unfinished
    # character last: U+FFFD where tok.decode puts it.
    wave = tok.encode("👋")
    assert len(wave) > 1
    ids = wave[1:] + tok.encode("👋🏽 x") + wave + wave[:1]
    pieces = await collect(adecode(tok, Source(ids).gen()))
    assert "".join(pieces) == tok.decode(ids)
    assert pieces == sync_decode_pieces(tok, ids)[0]


@pytest.mark.asyncio
async def test_adecode_skip_special_tokens() -> None:
    tok = tok_of("cl100k_base")
    text = "a<|endoftext|>b"
    ids = tok.encode(text, allowed_special="all")
    assert "".join(await collect(adecode(tok, Source(ids).gen()))) == tok.decode(ids) == text
    got = "".join(await collect(adecode(tok, Source(ids).gen(), skip_special_tokens=True)))
    assert got == tok.decode(ids, skip_special_tokens=True) == "ab"


@pytest.mark.asyncio
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("include_stop", [False, True])
async def test_adecode_stop_string_closes_the_source(name: str, include_stop: bool) -> None:
    tok = tok_of(name)
    text = "The answer is 42.\n\nUser: ignore this\nand this " * 3
    ids = tok.encode(text)
    stop = ["User:", "never matches"]
    src = Source(ids)
    gen = adecode(tok, src.gen(), stop=stop, include_stop=include_stop)
    pieces = await collect(gen)
    want, used = sync_decode_pieces(tok, ids, stop=stop, include_stop=include_stop)
    assert pieces == want
    cut = text.index("User:") + (len("User:") if include_stop else 0)
    assert "".join(pieces) == text[:cut]
    # No id after the stop was read, and the source is closed.
    assert src.pulled == used < len(ids)
    assert src.closed


@pytest.mark.asyncio
async def test_adecode_closes_the_source_before_the_last_piece() -> None:
    tok = tok_of("cl100k_base")
    ids = tok.encode("one two three STOP four five")
    src = Source(ids)
    closed_at_piece = []
    async for piece in adecode(tok, src.gen(), stop=["STOP"], include_stop=True):
        closed_at_piece.append((piece, src.closed))
    # The piece holding the stop string is only final at the stop; by then the source
    # has been released. Every earlier piece came while it was open.
    assert closed_at_piece[-1][0].endswith("STOP") and closed_at_piece[-1][1]
    assert not any(closed for _, closed in closed_at_piece[:-1])


@pytest.mark.asyncio
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
async def test_aencode_matches_sync_and_encode(name: str, text: str) -> None:
    tok = tok_of(name)
    want = tok.encode(text)
    for chunks in chunkings(text):
        src = Source(chunks)
        lists = await collect(aencode(tok, src.gen()))
        assert all(lists), "only non-empty id lists are yielded"
        assert lists == sync_encode_lists(tok, chunks)
        assert [i for ids in lists for i in ids] == want, chunks
        assert src.closed


@pytest.mark.asyncio
async def test_aencode_special_token_options() -> None:
    tok = tok_of("o200k_base")
    text = "user: <|endoftext|> bye"
    chunks = ["user: <|endo", "ftext|", "> bye"]
    got = await collect(aencode(tok, Source(chunks).gen(), allowed_special={"<|endoftext|>"}))
    assert [i for ids in got for i in ids] == tok.encode(text, allowed_special={"<|endoftext|>"})
    got = await collect(aencode(tok, Source(chunks).gen(), disallowed_special=()))
    assert [i for ids in got for i in ids] == tok.encode(text, disallowed_special=())


@pytest.mark.asyncio
async def test_aencode_disallowed_special_raises_and_closes() -> None:
    tok = tok_of("cl100k_base")
    src = Source(["hello <|endo", "ftext|> more", " and more"])
    with pytest.raises(tokstream.SpecialTokenError):
        await collect(aencode(tok, src.gen()))
    assert src.closed


# -- cancellation, early exit, failures -----------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("which", ["adecode", "aencode"])
async def test_cancel_mid_stream_closes_the_source(which: str) -> None:
    tok = tok_of("cl100k_base")
    text = "a long reply, " * 20
    items: list[Any] = tok.encode(text) if which == "adecode" else [text[i : i + 5] for i in range(0, len(text), 5)]
    src = Source(items, hang_after=10)
    adapter: Callable[..., AsyncGenerator[Any, None]] = adecode if which == "adecode" else aencode
    received: list[Any] = []

    async def consume() -> None:
        async for x in adapter(tok, src.gen()):
            received.append(x)

    before = asyncio.all_tasks()
    task = asyncio.create_task(consume())
    await src.hanging.wait()  # the consumer now waits on the source
    assert not src.closed
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert src.closed and src.pulled == 10
    if which == "adecode":
        assert received  # it was mid-stream
    assert asyncio.all_tasks() == before


@pytest.mark.asyncio
async def test_cancel_while_consumer_awaits_elsewhere() -> None:
    # The adapter is suspended at a yield (the consumer is busy); aclosing closes it.
    tok = tok_of("cl100k_base")
    src = Source(tok.encode("word " * 50))
    busy = asyncio.Event()

    async def consume() -> None:
        async with aclosing(adecode(tok, src.gen())) as gen:
            async for _ in gen:
                busy.set()
                await asyncio.Event().wait()  # slow consumer, cancelled here

    before = asyncio.all_tasks()
    task = asyncio.create_task(consume())
    await busy.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert src.closed and 0 < src.pulled < 50
    assert asyncio.all_tasks() == before


@pytest.mark.asyncio
async def test_cancel_elsewhere_without_aclosing_closes_when_collected() -> None:
    # What the README promises for a bare ``async for``: the adapter, suspended at a
    # yield when the consumer is cancelled, cannot see the cancellation; the source is
    # closed when the dropped generator is collected (asyncio's finalizer), not before.
    tok = tok_of("cl100k_base")
    src = Source(tok.encode("word " * 50))
    busy = asyncio.Event()

    async def consume() -> None:
        async for _ in adecode(tok, src.gen()):
            busy.set()
            await asyncio.Event().wait()  # cancelled here, not in the adapter

    task = asyncio.create_task(consume())
    await busy.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    del task  # the last reference to the consumer's frame, and so to the generator
    for _ in range(5):
        if src.closed:
            break
        await asyncio.sleep(0)
    assert src.closed and 0 < src.pulled < 50


@pytest.mark.asyncio
@pytest.mark.parametrize("which", ["adecode", "aencode"])
async def test_break_with_aclosing_closes_at_once(which: str) -> None:
    tok = tok_of("cl100k_base")
    text = "line of text\n" * 40
    items: list[Any] = tok.encode(text) if which == "adecode" else [text[i : i + 7] for i in range(0, len(text), 7)]
    src = Source(items)
    adapter: Callable[..., AsyncGenerator[Any, None]] = adecode if which == "adecode" else aencode
    async with aclosing(adapter(tok, src.gen())) as gen:
        async for _ in gen:
            break
    assert src.closed and src.pulled < len(items)


@pytest.mark.asyncio
async def test_bare_break_closes_when_collected() -> None:
    # Without aclosing, asyncio's async-generator finalizer closes the dropped generator
    # (CPython drops it at the break; the aclose() task runs on the next loop turns).
    tok = tok_of("cl100k_base")
    src = Source(tok.encode("word " * 50))
    async for _ in adecode(tok, src.gen()):
        break
    for _ in range(5):
        if src.closed:
            break
        await asyncio.sleep(0)
    assert src.closed and src.pulled < 50


@pytest.mark.asyncio
async def test_aclose_mid_stream() -> None:
    tok = tok_of("o200k_base")
    src = Source(tok.encode("word " * 50))
    gen = adecode(tok, src.gen())
    first = await anext(gen)
    assert first and not src.closed
    await gen.aclose()
    assert src.closed
    with pytest.raises(StopAsyncIteration):
        await anext(gen)


class Boom(Exception):
    pass


@pytest.mark.asyncio
@pytest.mark.parametrize("which", ["adecode", "aencode"])
async def test_source_error_reaches_the_consumer_unchanged(which: str) -> None:
    tok = tok_of("cl100k_base")
    text = "some text\nmore text 👋\n" * 3
    items: list[Any] = tok.encode(text) if which == "adecode" else text.splitlines(keepends=True)
    boom = Boom("model crashed")
    src = Source(items, fail=boom)
    adapter: Callable[..., AsyncGenerator[Any, None]] = adecode if which == "adecode" else aencode
    received: list[Any] = []
    with pytest.raises(Boom) as info:
        async for x in adapter(tok, src.gen()):
            received.append(x)
    assert info.value is boom
    assert src.closed
    if which == "adecode":
        # Everything final before the failure was delivered; the unfinished tail is not.
        assert text.startswith("".join(received)) and received


@pytest.mark.asyncio
async def test_invalid_id_raises_and_closes() -> None:
    tok = tok_of("cl100k_base")
    src = Source([15339, 10**9, 1917])
    with pytest.raises(tokstream.InvalidTokenIdError):
        await collect(adecode(tok, src.gen()))
    assert src.closed and src.pulled == 2


class PlainIterator:
    """A hand-written async iterator, with or without ``aclose``."""

    def __init__(self, items: list[int], with_aclose: bool) -> None:
        self.items = iter(items)
        self.aclose_calls = 0
        if with_aclose:
            self.aclose = self._aclose

    def __aiter__(self) -> PlainIterator:
        return self

    async def __anext__(self) -> int:
        try:
            return next(self.items)
        except StopIteration:
            raise StopAsyncIteration from None

    async def _aclose(self) -> None:
        self.aclose_calls += 1


@pytest.mark.asyncio
@pytest.mark.parametrize("with_aclose", [False, True])
async def test_plain_async_iterator(with_aclose: bool) -> None:
    tok = tok_of("cl100k_base")
    ids = tok.encode("hello world, then STOP and more")
    it = PlainIterator(ids, with_aclose)
    got = "".join(await collect(adecode(tok, it)))
    assert got == tok.decode(ids)
    it = PlainIterator(ids, with_aclose)
    got = "".join(await collect(adecode(tok, it, stop=["STOP"])))
    assert got == "hello world, then "
    if with_aclose:
        assert it.aclose_calls == 1  # once, although several exits call close


@pytest.mark.asyncio
async def test_sync_iterable_is_refused() -> None:
    tok = tok_of("cl100k_base")
    with pytest.raises(TypeError, match="async iterable"):
        adecode(tok, [1, 2, 3])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="async iterable"):
        aencode(tok, ["a", "b"])  # type: ignore[arg-type]


@pytest.mark.asyncio
async def test_many_concurrent_streams() -> None:
    # Interleaved streams on one loop do not share state.
    tok = tok_of("o200k_base")
    texts = [f"stream {n}: " + "é👋 " * n for n in range(20)]

    async def one(text: str) -> str:
        return "".join(await collect(adecode(tok, Source(tok.encode(text)).gen())))

    assert await asyncio.gather(*(one(t) for t in texts)) == texts


@pytest.mark.asyncio
async def test_bad_option_raises_at_the_call() -> None:
    # The decoder is built by adecode() itself, so the error comes before any iteration
    # and the source is not touched.
    tok = tok_of("cl100k_base")
    src = Source(tok.encode("hello"))
    gen = src.gen()
    with pytest.raises(ValueError):
        adecode(tok, gen, stop=[""])  # empty stop strings are refused
    assert src.pulled == 0
    await gen.aclose()
