"""asyncio adapters: ``adecode`` and ``aencode`` wrap ``StreamDecoder`` and
``StreamEncoder`` around an async source (a model's id stream, a socket's text chunks).

Both return async generators that pull one item from the source, run one ``step`` /
``push`` on it (plain, synchronous, the same work as the sync classes: no threads, no
executors, no sleeps), and yield what became final. Output is exactly the sync classes'
output, so the joined pieces equal ``tok.decode(ids)`` (up to a stop string) and the
concatenated id lists equal ``tok.encode(text)``.

Ownership of the source: the adapter closes it (``await source.aclose()`` when it has
one, as ``contextlib.aclosing`` does) whenever the adapter ends: the source is
exhausted, the decoder matched a stop string (the source is closed *before* the last
text is yielded, so a model can free its slot at once), the consumer's task is cancelled
while the adapter awaits the source, the adapter is closed (``aclose()``, or
``contextlib.aclosing`` around an ``async for`` that breaks), or ``step`` / ``push``
raised. An exception raised by the source reaches the consumer unchanged (the same
object). No task is created, so none can leak.

A consumer that breaks out of a bare ``async for`` leaves the generator suspended; Python
then closes it only when it is garbage-collected (asyncio's async-generator finalizer
schedules ``aclose()`` on the loop; CPython does this as soon as the last reference goes).
For a deterministic close, wrap the call in ``contextlib.aclosing``.

Options are checked, and the decoder / encoder built, when ``adecode`` / ``aencode`` is
called, not at the first iteration, so a bad option raises at the call site and the
source is left untouched.

Not handled: plain (sync) iterables. A sync iterator's ``next`` may block the event loop,
so the adapters refuse one with a ``TypeError``; feed a list to ``StreamDecoder.push`` /
``StreamEncoder.push`` directly, or wrap it in an ``async def`` generator.
"""

from __future__ import annotations

from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Coroutine,
    Iterable,
    Sequence,
)
from typing import TYPE_CHECKING, Any, TypeVar

from .decoder import StreamDecoder
from .encoder import StreamEncoder

if TYPE_CHECKING:
    from ..specials import SpecialSet
    from ..tokenizer import Tokenizer

_T = TypeVar("_T")


def adecode(
    tok: Tokenizer,
    ids: AsyncIterable[int],
    *,
    skip_special_tokens: bool = False,
    stop: str | Iterable[str] = (),
    include_stop: bool = False,
    prefix_ids: Sequence[int] = (),
    stop_token_ids: Iterable[int] = (),
    max_tokens: int | None = None,
) -> DecodeStream:
    """Decode an async stream of ids into text pieces as they become final.

    Yields each non-empty ``StreamDecoder.step`` result, then the non-empty
    ``finish()`` text; the options are ``StreamDecoder``'s. The joined pieces equal
    ``tok.decode(ids)``, cut at the first stop string (kept with ``include_stop``), stop
    id or ``max_tokens``. Once the stream has ended itself, no further id is read, and
    the source is closed before the last piece is yielded. See the module docstring
    for when the source is closed.

    The result is a ``DecodeStream``: an async generator whose ``decoder`` tells,
    after the loop, why the stream ended (``finish_reason``, ``stop_reason``).

    >>> import asyncio, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> async def model():
    ...     for i in [15339, 1917, 0, 90425, 13]:  # "hello world! Bye." (tiktoken)
    ...         yield i
    >>> async def main():
    ...     return [p async for p in adecode(tok, model(), stop=["!"])]
    >>> "".join(asyncio.run(main()))
    'hello world'
    >>> async def reason():
    ...     stream = adecode(tok, model(), max_tokens=2)
    ...     text = "".join([p async for p in stream])
    ...     return text, stream.decoder.finish_reason
    >>> asyncio.run(reason())
    ('hello world', 'length')
    """
    decoder = StreamDecoder(
        tok,
        skip_special_tokens=skip_special_tokens,
        stop=stop,
        include_stop=include_stop,
        prefix_ids=prefix_ids,
        stop_token_ids=stop_token_ids,
        max_tokens=max_tokens,
    )
    return DecodeStream(decoder, _adecode(decoder, _source(ids, "adecode", "ids")))


def aencode(
    tok: Tokenizer,
    chunks: AsyncIterable[str],
    *,
    allowed_special: SpecialSet = frozenset(),
    disallowed_special: SpecialSet = "all",
    batch: int = 64,
) -> AsyncGenerator[list[int], None]:
    """Encode an async stream of text chunks into ids as they become final.

    Yields each non-empty ``StreamEncoder.push`` result (ids no later text can change),
    then the non-empty ``finish()`` ids; the options are ``StreamEncoder``'s. The
    concatenated lists equal ``tok.encode("".join(chunks), same options)`` for every
    chunking. A disallowed special token's literal raises ``SpecialTokenError`` (a
    ``ValueError``) where ``encode`` would, after the source is closed.

    >>> import asyncio, tokstream
    >>> tok = tokstream.load("cl100k_base")
    >>> async def chunks():
    ...     for chunk in ["hel", "lo wor", "ld"]:
    ...         yield chunk
    >>> async def main():
    ...     return [i async for ids in aencode(tok, chunks()) for i in ids]
    >>> asyncio.run(main())  # tiktoken: [15339, 1917]
    [15339, 1917]
    """
    encoder = StreamEncoder(tok, allowed_special=allowed_special, disallowed_special=disallowed_special, batch=batch)
    return _aencode(encoder, _source(chunks, "aencode", "chunks"))


async def _adecode(decoder: StreamDecoder, source: AsyncIterator[int]) -> AsyncGenerator[str, None]:
    closer = _Closer(source)
    try:
        async for token_id in source:
            piece = decoder.step(token_id)
            if decoder.stopped:
                # Nothing after a stop string matters: release the source first, so a
                # consumer slow to take the last piece does not hold the model's slot.
                await closer.close()
                if piece:
                    yield piece
                break
            if piece:
                yield piece
        tail = decoder.finish()
        await closer.close()
        if tail:
            yield tail
    finally:
        # Cancellation (CancelledError out of the source's __anext__), aclose() of this
        # generator (GeneratorExit at a yield), or an error from step: close the source.
        await closer.close()


async def _aencode(encoder: StreamEncoder, source: AsyncIterator[str]) -> AsyncGenerator[list[int], None]:
    closer = _Closer(source)
    try:
        async for chunk in source:
            ids = encoder.push(chunk)
            if ids:
                yield ids
        tail = encoder.finish()
        await closer.close()
        if tail:
            yield tail
    finally:
        await closer.close()


class DecodeStream(AsyncGenerator[str, None]):
    """What ``adecode`` returns: its async generator of text pieces, plus the
    ``decoder`` that produced them, to read ``finish_reason`` / ``stop_reason`` (and
    ``text``) during or after the loop. Every generator method is the inner one's.
    """

    __slots__ = ("_decoder", "_gen")

    def __init__(self, decoder: StreamDecoder, gen: AsyncGenerator[str, None]) -> None:
        self._decoder = decoder
        self._gen = gen

    @property
    def decoder(self) -> StreamDecoder:
        """The ``StreamDecoder`` behind the stream (read it; feeding it is the stream's job)."""
        return self._decoder

    def __aiter__(self) -> DecodeStream:
        return self

    def __anext__(self) -> Coroutine[Any, Any, str]:
        return self._gen.__anext__()

    def asend(self, value: None, /) -> Coroutine[Any, Any, str]:
        """As the inner generator's ``asend``."""
        return self._gen.asend(value)

    def athrow(self, typ: Any, val: Any = None, tb: Any = None, /) -> Coroutine[Any, Any, str]:
        """As the inner generator's ``athrow``."""
        return self._gen.athrow(typ, val, tb) if val is not None or tb is not None else self._gen.athrow(typ)

    def aclose(self) -> Coroutine[Any, Any, None]:
        """Close the stream, and with it the source (module notes)."""
        return self._gen.aclose()

    def __repr__(self) -> str:
        return f"<DecodeStream {self._decoder!r}>"


def _source(items: AsyncIterable[_T], func: str, param: str) -> AsyncIterator[_T]:
    """``aiter(items)``, with an error naming the fix for a sync iterable."""
    if not hasattr(items, "__aiter__"):
        kind = type(items).__name__
        raise TypeError(
            f"{func}() needs an async iterable for {param}, got {kind}; pass an async "
            f"generator, or use the sync Stream{'Decoder' if func == 'adecode' else 'Encoder'}"
            ".push for a list"
        )
    return items.__aiter__()


class _Closer:
    """Closes an async iterator once, with its ``aclose()`` if it has one.

    Once: an exhausted async generator ignores a second ``aclose()``, but a hand-written
    async iterator need not.
    """

    __slots__ = ("_closed", "_source")

    def __init__(self, source: AsyncIterator[object]) -> None:
        self._source = source
        self._closed = False

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        aclose = getattr(self._source, "aclose", None)
        if aclose is not None:
            await aclose()
