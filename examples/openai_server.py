"""An OpenAI-compatible streaming server over a toy model, with exact token text.

``POST /v1/completions`` and ``POST /v1/chat/completions`` (``stream`` true or false)
and ``GET /v1/models`` in OpenAI's wire format, so the ``openai`` client, ``curl`` or
any OpenAI-compatible tool can talk to it. Offline: the "model" is the n-gram toy of
``speculative_decoding.py`` trained on a few lines of Hamlet; tokstream does the rest:

- the streamed text is exactly ``tok.decode`` of the generated ids, cut at the first
  stop string (``stop``), the end-of-text id or ``max_tokens``: ``tokstream.adecode``
  releases text only once it is final (never half a UTF-8 character, never a suffix
  that may still become a stop string) and says why the stream ended;
- ``logprobs`` carry each token's real bytes (``tok.token_bytes``);
- completion prompts are *healed* (``tokstream.heal``): a prompt that ends mid-word
  ("Visit https://exa") loses its last token, the model must regenerate those bytes
  (" https://example.com" rather than "exa" + "mple"), and the reply starts right after
  the prompt, as OpenAI's completions do;
- chat ``response_format`` (``json_schema``, ``json_object``) is enforced exactly by a
  JSON Schema constraint; a schema keyword it cannot enforce is a 400. The schema is
  compiled by ``tokstream.compile_constraint_async``, off the event loop (worker
  threads, awaited), so a schema that takes seconds to compile delays only its own
  request; a schema seen before is a cache hit (``tokstream.compile_cache_info``);
- *fast-forward*: where a constraint leaves only one way to go on
  (``Constraint.forced_ids``: ``{"name":`` once an object with a required ``name``
  has begun), those ids are appended without a forward pass of the model.

Usage::

    python examples/openai_server.py                  # demo: server + client, then exit
    python examples/openai_server.py --serve --port 8000

    curl -N http://127.0.0.1:8000/v1/completions -H 'Content-Type: application/json' \\
        -d '{"model": "toy", "prompt": "Ham.\\nTo be, or not to", "max_tokens": 20, "stream": true}'

    from openai import OpenAI
    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="unused")
    for chunk in client.chat.completions.create(
        model="toy", messages=[{"role": "user", "content": "Who's there?"}], stream=True
    ):
        print(chunk.choices[0].delta.content or "", end="", flush=True)

Request fields: ``model`` (echoed), ``prompt`` (a string) or ``messages``,
``max_tokens`` (completions: 16 by default; chat: 256, or ``max_completion_tokens``),
``stream``, ``stream_options.include_usage``, ``stop`` (a string or up to 4),
``temperature`` (0: greedy), ``seed`` (0 by default: the toy is reproducible),
``logit_bias`` (-100 bans an id), ``logprobs`` (completions: an int, the number of
alternatives; chat: a bool, with ``top_logprobs``), ``n`` (1 only), ``echo`` (false only),
``user``; chat also ``response_format``. Not OpenAI's: ``heal`` (completions, default
true). Any other field is a 400, as OpenAI answers an unrecognized argument.

Conventions where OpenAI leaves a choice (each documented where it is implemented):

- *Token text* in ``logprobs``: the token's bytes as UTF-8; a token that is part of a
  multi-byte character (not valid UTF-8 alone) has its bytes escaped (``"\\xf0\\x9f"``,
  lossless, as OpenAI and DeepSeek show them; vLLM shows U+FFFD), with the prefix
  ``bytes:`` in completions (OpenAI's legacy convention). ``bytes`` (chat) is always the
  token's real bytes, so they join to the UTF-8 of the text.
- *Which chunk carries a token's logprobs*: a chunk carries the text that became
  final and the logprobs of the tokens consumed since the previous chunk, so a token
  whose text is held back (half a character, a possible stop string) rides with the
  chunk that releases it. Chunks are sent when they have text, or, when logprobs are
  asked for, tokens; the last one has ``finish_reason`` and an empty text.
- *The stop token* (``<|endoftext|>``) ends the stream with ``finish_reason: "stop"``; it
  adds no text and has no logprobs entry (OpenAI never shows it), but counts in
  ``usage.completion_tokens`` (as vLLM counts it).
- *Healing*: the regenerated prompt text is dropped from the reply (the reply
  continues the prompt). The healing tokens keep their logprobs entries with their
  real bytes, so in completions their ``text_offset`` (relative to the reply's text,
  as vLLM's) is negative: ``-3`` for a token that re-spells the prompt's last 3
  characters. A prompt is not healed when a stop string could match in text the prompt
  already holds (the decoder would see the regenerated text): the reply then continues
  the prompt's own tokens.
- *Forced tokens* (fast-forward) were not drawn from the model: their ``logprob`` is
  0.0 and they have no alternatives (no forward pass was run to know better). They
  count in ``usage.completion_tokens`` and ``max_tokens`` as any generated id.
- *Chat template* (o200k_base has no ChatML specials): each message becomes
  ``"{Role}: {content}\\n\\n"`` (role capitalized), then ``"Assistant:"``. Message text is
  encoded as text, so a literal ``<|endoftext|>`` in it is not the special token.

HTTP: stdlib ``asyncio`` only, so the example stays one copyable file with no
dependency (an ASGI framework would hide what matters here: where a stream is cut
and closed). It binds 127.0.0.1. One request per connection (``Connection: close``),
streams as chunked SSE; a request line over 8 KiB is a 414, headers over 64 KiB a 431,
a body over 1 MiB a 413, after which the rest of the request is read and dropped
(closing with unread input makes TCP reset the connection, which can destroy the error
reply before the client reads it). A client that disconnects mid-stream ends its
generation: the write fails, the stream is closed, and it closes the model's generator.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import functools
import gc
import importlib.util
import json
import math
import sys
import threading
import time
import urllib.request
import uuid
from collections import deque
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from contextlib import aclosing, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

import tokstream
from tokstream.constrain import Constraint, TokenMasker
from tokstream.stream import StreamDecoder

HOST = "127.0.0.1"
MAX_REQUEST_LINE = 8 * 1024
MAX_HEADERS = 64 * 1024
MAX_BODY = 1024 * 1024
#: How long, and how much, of a refused request is read and dropped before closing.
LINGER_SECONDS, LINGER_BYTES = 2.0, 16 * 1024 * 1024
MAX_TOKENS_LIMIT = 4096
MODEL_NAME = "tokstream-toy"

TOK = tokstream.load("default")  # o200k_base, embedded: no download
EOS = TOK.special_tokens["<|endoftext|>"]
STOP_IDS = frozenset({EOS})


def _sibling(name: str) -> ModuleType:
    """Another script of examples/ (scripts are no package: imported by path, once)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while it runs
        spec.loader.exec_module(module)
    return sys.modules[name]


# speculative_decoding.py has the n-gram model (NgramLM), its Hamlet excerpt and sampler.
_spec = _sibling("speculative_decoding")

#: A few more lines, so the toy also writes characters that span several tokens.
EXTRA_CORPUS = "Hor.\nGood night, sweet prince 👋🏽: naïve café, 日本語, and flights of angels.\n"


# -- the toy model -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One generated id: its log probability under the distribution it was drawn from,
    and the ``top`` alternatives there ``(id, logprob)``, most likely first. ``forced``:
    appended by fast-forward, without a forward pass (logprob 0.0, no alternatives)."""

    token_id: int
    logprob: float
    top: tuple[tuple[int, float], ...] = ()
    forced: bool = False


@dataclass
class Sampling:
    """What a request asks of the model."""

    temperature: float = 1.0
    seed: int = 0
    top_n: int = 0  # alternatives per step for logprobs
    logit_bias: Mapping[int, float] = field(default_factory=dict)


class ToyModel:
    """A stand-in LLM: ``speculative_decoding.NgramLM`` (a smoothed trigram) over
    o200k_base ids of its Hamlet excerpt, one speech per document, each ended by
    ``<|endoftext|>``, so it ends its replies by itself.

    ``steps`` is the model (synchronous, reproducible from ``Sampling.seed``),
    ``generate`` its async face for the server. Under a constraint it draws from the
    allowed ids only, renormalized (``TokenMasker.mask``). Being a trigram it has no
    idea when a JSON string should end, so after ``PATIENCE`` constrained ids it keeps
    only the allowed ids that close something (bytes with ``"``, ``}`` or ``]``, or EOS):
    a length prior a real model does not need.

    Under a constraint, the ids it forces (``Constraint.forced_ids``) are appended
    without a forward pass (fast-forward), up to the first one ``logit_bias`` bans.

    ``running`` counts the generators open now, ``ended`` the length of each of the last
    100 that ended (closed early or not): the tests read them to see a generation stop.
    ``forward_passes`` and ``fast_forwarded`` count the ids ``generate`` produced with
    and without a forward pass."""

    PATIENCE = 24

    def __init__(self, tok: tokstream.Tokenizer, eos_id: int) -> None:
        self.tok, self.eos_id = tok, eos_id
        ids: list[int] = []
        for speech in (_spec.EXCERPT + "\n" + EXTRA_CORPUS).split("\n\n"):
            ids += tok.encode(speech.strip("\n") + "\n") + [eos_id]
        # add_k: a small floor, so that any id stays possible (a constraint may need it)
        # without unseen ids drowning the 300-odd seen ones.
        self.lm = _spec.NgramLM(ids, tok.n_vocab, order=3, add_k=1e-6)
        for special in tok.special_tokens.values():
            if special != eos_id:
                self.lm.unigram[special] = 0.0  # a model never writes the other specials
        self.running = 0
        self.ended: deque[int] = deque(maxlen=100)
        self.forward_passes = 0
        self.fast_forwarded = 0

    @functools.cached_property
    def masker(self) -> TokenMasker:
        """Built on the first constrained request (~0.3 s: the vocabulary's index)."""
        return TokenMasker(self.tok)

    def prepare_constrained(self) -> None:
        """Build what constrained generation needs (``masker``, ``closers``: ~0.2 s once);
        the server calls it on a worker thread, not on its event loop."""
        _ = self.masker, self.closers

    @functools.cached_property
    def closers(self) -> npt.NDArray[np.bool_]:
        """The ids that close a JSON string, object or array, and EOS."""
        table = self.tok.vocab.table
        out = np.fromiter((t is not None and any(c in t for c in b'"}]') for t in table), np.bool_, len(table))
        out[self.eos_id] = True
        return out

    def steps(
        self, prompt_ids: Sequence[int], sampling: Sampling, constraint: Constraint[Any] | None
    ) -> Iterator[Step]:
        """Generate from ``prompt_ids`` until EOS (endless otherwise); ``constraint`` is
        advanced with every id."""
        rng = np.random.default_rng(sampling.seed)
        history = list(prompt_ids)
        n = 0
        while True:
            if constraint is not None and not constraint.is_done:
                forced = constraint.forced_ids()
                for tid in forced:
                    if sampling.logit_bias.get(tid, 0.0) <= -100:
                        break  # banned: the model's turn, under its bias
                    if not constraint.accept(tid):
                        raise RuntimeError(f"the constraint refuses id {tid}, which it forced")
                    yield Step(tid, 0.0, forced=True)
                    history.append(tid)
                    n += 1
                else:
                    if forced:
                        continue  # the state moved: more may be forced
            p: npt.NDArray[np.float64] = self.lm.probs(history)
            for tid, bias in sampling.logit_bias.items():  # logits + bias; -100 bans
                p[tid] = 0.0 if bias <= -100 else p[tid] * math.exp(bias)
            if constraint is not None and not constraint.is_done:
                p = np.where(self.masker.mask(constraint), p, 0.0)
                if n >= self.PATIENCE:
                    closing = np.where(self.closers, p, 0.0)
                    if closing.any():
                        p = closing
            p /= p.sum()
            if sampling.temperature > 0 and sampling.temperature != 1:
                p **= 1 / sampling.temperature
                p /= p.sum()
            # temperature 0: greedy, with the logprobs of the untempered distribution
            tid = int(np.argmax(p)) if sampling.temperature == 0 else int(_spec.sample(p, rng))
            if constraint is not None and not constraint.accept(tid):
                raise RuntimeError(f"the toy drew id {tid}, which its constraint refuses")
            yield Step(tid, math.log(p[tid]), self._top(p, sampling.top_n))
            if tid == self.eos_id:
                return
            history.append(tid)
            n += 1

    @staticmethod
    def _top(p: npt.NDArray[np.float64], k: int) -> tuple[tuple[int, float], ...]:
        if k <= 0:
            return ()
        idx = np.argpartition(p, -k)[-k:]
        # Impossible ids (banned, refused by a constraint) are no alternative: omitted,
        # which OpenAI allows ("fewer than top_logprobs"), rather than -inf (not JSON).
        return tuple((int(i), math.log(p[i])) for i in sorted(idx.tolist(), key=lambda i: -p[i]) if p[i] > 0)

    async def generate(
        self, prompt_ids: Sequence[int], sampling: Sampling, constraint: Constraint[Any] | None, record: list[Step]
    ) -> AsyncGenerator[int, None]:
        """The ids of ``steps``, one at a time; each ``Step`` goes to ``record`` just
        before its id is yielded (the logprobs side channel, since ``adecode`` sees ids)."""
        self.running += 1
        try:
            for step in self.steps(prompt_ids, sampling, constraint):
                if step.forced:
                    self.fast_forwarded += 1  # no forward pass to wait for
                else:
                    self.forward_passes += 1
                    await asyncio.sleep(0)  # a real model awaits its next forward pass here
                record.append(step)
                yield step.token_id
        finally:
            self.running -= 1
            self.ended.append(len(record))


MODEL = ToyModel(TOK, EOS)


# -- requests ----------------------------------------------------------------------------------


class HttpError(Exception):
    """An error reply in OpenAI's format. ``unread``: the request was not read to its
    end (the rest is dropped before closing)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        kind: str = "invalid_request_error",
        unread: bool = False,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code, self.kind, self.unread = (
            status,
            message,
            param,
            code,
            kind,
            unread,
        )

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "param": self.param, "code": self.code}}


@dataclass
class Job:
    """A validated request: what the model continues and how the stream is cut."""

    endpoint: str  # "completions" or "chat"
    model: str
    prompt_tokens: int
    prompt_ids: list[int]  # what the model continues: the kept prompt when healed
    constraint: Constraint[Any] | None
    sampling: Sampling
    stop: list[str]
    max_tokens: int
    logprobs: bool
    stream: bool
    include_usage: bool
    #: Characters of the prompt the generation re-spells (healing): dropped from the reply.
    redo_chars: int = 0


_COMMON = {"model", "stream", "stream_options", "stop", "max_tokens", "temperature", "seed", "logit_bias", "n", "user"}
COMPLETION_FIELDS = _COMMON | {"prompt", "logprobs", "echo", "heal"}
CHAT_FIELDS = _COMMON | {"messages", "logprobs", "top_logprobs", "max_completion_tokens", "response_format"}


def _opt(body: Mapping[str, Any], name: str, kinds: type | tuple[type, ...], what: str) -> Any:
    """``body[name]`` (None when absent or null), checked against ``kinds``."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise HttpError(400, f"{name} must be {what}, got a boolean", param=name)
    if not isinstance(value, kinds):
        raise HttpError(400, f"{name} must be {what}, got {type(value).__name__}", param=name)
    return value


def _int(body: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = _opt(body, name, int, "an integer")
    if value is None:
        return default
    if not lo <= value <= hi:
        raise HttpError(400, f"{name} must be between {lo} and {hi}, got {value}", param=name)
    return int(value)


def parse_common(body: Mapping[str, Any], allowed: set[str], default_max: int) -> dict[str, Any]:
    """The fields both endpoints share, checked; a field not in ``allowed`` is a 400."""
    for name in body:
        if name not in allowed:
            raise HttpError(400, f"Unrecognized request argument supplied: {name}", param=name)
    model = _opt(body, "model", str, "a string")
    if not model:
        raise HttpError(400, "you must provide a model parameter", param="model")
    _int(body, "n", 1, 1, 1)  # one choice only
    stop = _opt(body, "stop", (str, list), "a string or a list of strings")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    if len(stops) > 4 or not all(isinstance(s, str) and s for s in stops):
        raise HttpError(400, "stop must be a non-empty string or up to 4 of them", param="stop")
    temperature = _opt(body, "temperature", (int, float), "a number")
    if temperature is not None and not 0 <= temperature <= 2:
        raise HttpError(400, f"temperature must be between 0 and 2, got {temperature}", param="temperature")
    bias_in = _opt(body, "logit_bias", dict, "an object")
    bias: dict[int, float] = {}
    for key, value in (bias_in or {}).items():
        if (
            not key.isdigit()
            or int(key) >= TOK.n_vocab
            or isinstance(value, bool)
            or not isinstance(value, (int, float))
        ):
            raise HttpError(400, f"logit_bias: {key!r}: {value!r} is not a token id and a number", param="logit_bias")
        bias[int(key)] = max(-100.0, min(100.0, float(value)))
    options = _opt(body, "stream_options", dict, "an object") or {}
    if set(options) - {"include_usage"}:
        raise HttpError(400, "stream_options supports include_usage only", param="stream_options")
    return {
        "model": model,
        "stream": bool(_opt(body, "stream", bool, "a boolean")),
        "include_usage": bool(_opt(options, "include_usage", bool, "a boolean")),
        "stop": stops,
        "max_tokens": _int(body, "max_tokens", default_max, 1, MAX_TOKENS_LIMIT),
        "sampling": Sampling(
            temperature=1.0 if temperature is None else float(temperature),
            seed=_int(body, "seed", 0, -(2**63), 2**63 - 1) % 2**63,
            logit_bias=bias,
        ),
    }


def _could_stop_in(stop: str, text: str) -> bool:
    """Whether ``stop`` could match at a position inside ``text`` (followed by more)."""
    return stop in text or any(stop.startswith(text[j:]) for j in range(len(text)))


async def completion_job(body: Mapping[str, Any]) -> Job:
    common = parse_common(body, COMPLETION_FIELDS, 16)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1:
        prompt = prompt[0]  # the openai client's list form of one prompt
    if not isinstance(prompt, str):
        raise HttpError(400, "prompt must be a string (one prompt; token-id prompts are not supported)", param="prompt")
    if _opt(body, "echo", bool, "a boolean"):
        raise HttpError(400, "echo is not supported by this server", param="echo")
    n_logprobs = _opt(body, "logprobs", int, "an integer")
    if n_logprobs is not None and not 0 <= n_logprobs <= 20:
        raise HttpError(400, f"logprobs must be between 0 and 20, got {n_logprobs}", param="logprobs")
    common["sampling"].top_n = n_logprobs or 0
    heal = _opt(body, "heal", bool, "a boolean")
    ids = TOK.encode(prompt, disallowed_special=())  # a prompt is text: "<|endoftext|>" too
    prompt_ids, constraint, redo = ids, None, 0
    if heal is not False:
        healing = tokstream.heal(TOK, ids, max_backoff=2)
        # The decoder, primed with the kept ids, re-emits the prompt from where a stream
        # of those ids alone would have stopped (a character they leave open included).
        kept_text = StreamDecoder(TOK).push(healing.prompt_ids)
        redo_text = prompt[len(kept_text) :]
        if healing.removed and not any(_could_stop_in(s, redo_text) for s in common["stop"]):
            prompt_ids, constraint, redo = healing.prompt_ids, healing.constraint(), len(redo_text)
    return Job(
        "completions",
        prompt_tokens=len(ids),
        prompt_ids=prompt_ids,
        constraint=constraint,
        logprobs=n_logprobs is not None,
        redo_chars=redo,
        **common,
    )


def chat_prompt(messages: Sequence[Mapping[str, str]]) -> str:
    """The chat template (module notes): ``"{Role}: {content}\\n\\n"`` per message, then
    ``"Assistant:"``."""
    return "".join(f"{m['role'].capitalize()}: {m['content']}\n\n" for m in messages) + "Assistant:"


def _messages(body: Mapping[str, Any]) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise HttpError(400, "messages must be a non-empty list", param="messages")
    out = []
    for n, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list):  # content parts: only text is supported
            if not all(
                isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content
            ):
                raise HttpError(400, "only text content parts are supported", param=f"messages[{n}].content")
            content = "".join(p["text"] for p in content)
        if role not in ("system", "developer", "user", "assistant") or not isinstance(content, str):
            raise HttpError(400, f"messages[{n}] needs a role and a text content", param=f"messages[{n}]")
        out.append({"role": role, "content": content})
    return out


async def response_constraint(fmt: object) -> Constraint[Any] | None:
    """The constraint for a chat ``response_format``, or None for plain text, compiled on
    worker threads (``tokstream.compile_constraint_async``: the event loop goes on
    serving other requests meanwhile; a schema compiled before is a cache hit)."""
    if fmt is None:
        return None
    if not isinstance(fmt, dict):
        raise HttpError(400, "response_format must be an object", param="response_format")
    kind = fmt.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        schema: Any = {"type": "object"}
    elif kind == "json_schema":
        spec = fmt.get("json_schema")
        schema = spec.get("schema", {}) if isinstance(spec, dict) else None
        if not isinstance(schema, (dict, bool)):
            raise HttpError(400, "response_format.json_schema.schema must be a JSON Schema", param="response_format")
    else:
        raise HttpError(400, "response_format.type must be text, json_object or json_schema", param="response_format")
    try:
        # compact: the toy would fill every place JSON allows whitespace with newlines.
        constraint = await tokstream.compile_constraint_async(TOK, json_schema=schema, eos_id=EOS, whitespace="compact")
    except tokstream.TokstreamError as e:  # UnsupportedSchemaError names the keyword
        raise HttpError(400, f"Invalid schema for response_format: {e}", param="response_format") from e
    await asyncio.get_running_loop().run_in_executor(None, MODEL.prepare_constrained)
    return constraint


async def chat_job(body: Mapping[str, Any]) -> Job:
    common = parse_common(body, CHAT_FIELDS, 256)
    if body.get("max_completion_tokens") is not None:
        common["max_tokens"] = _int(body, "max_completion_tokens", 256, 1, MAX_TOKENS_LIMIT)
    messages = _messages(body)
    want = bool(_opt(body, "logprobs", bool, "a boolean"))
    top = _opt(body, "top_logprobs", int, "an integer")
    if top is not None and (not want or not 0 <= top <= 20):
        raise HttpError(400, "top_logprobs needs logprobs: true and must be 0 to 20", param="top_logprobs")
    common["sampling"].top_n = top or 0
    ids = TOK.encode(chat_prompt(messages), disallowed_special=())
    constraint = await response_constraint(body.get("response_format"))
    return Job("chat", prompt_tokens=len(ids), prompt_ids=ids, constraint=constraint, logprobs=want, **common)


# -- generation --------------------------------------------------------------------------------


@dataclass
class Chunk:
    """Text that became final and the tokens consumed since the previous chunk; the last
    chunk of a generation has a ``finish_reason`` (OpenAI's: ``"stop"`` or ``"length"``)."""

    text: str
    steps: list[Step]
    finish_reason: str | None = None


class Generation:
    """One request's generation: ``chunks()`` runs the model through
    ``tokstream.adecode`` (module notes); ``record`` holds every id's ``Step``."""

    def __init__(self, job: Job) -> None:
        self.job = job
        self.record: list[Step] = []

    async def chunks(self) -> AsyncGenerator[Chunk, None]:
        job = self.job
        ids = MODEL.generate(job.prompt_ids, job.sampling, job.constraint, self.record)
        stream = tokstream.adecode(
            TOK,
            ids,
            stop=job.stop,
            prefix_ids=job.prompt_ids,
            stop_token_ids=STOP_IDS,
            max_tokens=job.max_tokens,
        )
        skip, sent = job.redo_chars, 0
        # aclosing: leaving early (the client went away) closes the stream, and the
        # stream closes the model's generator.
        async with aclosing(stream):
            async for piece in stream:
                if skip:  # the prompt's text, regenerated by healing
                    cut = min(skip, len(piece))
                    piece, skip = piece[cut:], skip - cut
                # A piece arrives right after the decoder took the id that released it
                # (the model runs only when the next id is pulled), so the record holds
                # exactly the ids consumed so far.
                steps, sent = self._since(sent), len(self.record)
                yield Chunk(piece, steps)
        # tokstream's "stop" (a stop string, or the EOS stop id) and "eos" (the ids ran
        # out: the toy never does) are both OpenAI's "stop".
        reason = stream.decoder.finish_reason
        yield Chunk("", self._since(sent), "length" if reason == "length" else "stop")

    def _since(self, n: int) -> list[Step]:
        return [s for s in self.record[n:] if s.token_id not in STOP_IDS]

    def usage(self) -> dict[str, int]:
        done = len(self.record)
        return {
            "prompt_tokens": self.job.prompt_tokens,
            "completion_tokens": done,
            "total_tokens": self.job.prompt_tokens + done,
        }


def token_text(data: bytes, *, legacy: bool) -> str:
    """A token's text for logprobs (module notes): its UTF-8, or its bytes escaped when it
    is part of a character (``bytes:`` first in the legacy completions format)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        escaped = data.decode("utf-8", "backslashreplace")
        return "bytes:" + escaped if legacy else escaped


class CompletionLogprobs:
    """The completions ``logprobs`` object of some steps, in order.

    ``text_offset[i]`` is where the reply's text for ids ``:i`` and for ids ``:i+1``
    part ways, relative to the reply (negative for healing tokens, module notes): a
    token that finishes a character points at that character; one after bytes that can
    never form a character, just past their U+FFFD. Found from the few bytes of an
    unfinished character (an incremental UTF-8 decoder's buffer), not the whole text."""

    def __init__(self, job: Job) -> None:
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")
        self._utf8.decode(TOK.decode_bytes(job.prompt_ids))
        self._at = -job.redo_chars  # the characters final so far, relative to the reply

    def _offset(self, data: bytes) -> int:
        held = self._utf8.getstate()[0]
        before, after = held.decode("utf-8", "replace"), (held + data).decode("utf-8", "replace")
        at = self._at + next((i for i, (x, y) in enumerate(zip(before, after)) if x != y), min(len(before), len(after)))
        self._at += len(self._utf8.decode(data))
        return at

    def __call__(self, steps: Sequence[Step]) -> dict[str, Any]:
        out: dict[str, Any] = {"tokens": [], "token_logprobs": [], "top_logprobs": [], "text_offset": []}
        for s in steps:
            out["tokens"].append(token_text(TOK.token_bytes(s.token_id), legacy=True))
            out["token_logprobs"].append(s.logprob)
            # OpenAI: the top alternatives "as well as the chosen token".
            top = {token_text(TOK.token_bytes(t), legacy=True): lp for t, lp in s.top}
            top.setdefault(out["tokens"][-1], s.logprob)
            out["top_logprobs"].append(top)
            out["text_offset"].append(self._offset(TOK.token_bytes(s.token_id)))
        return out


def _chat_entry(token_id: int, logprob: float) -> dict[str, Any]:
    data = TOK.token_bytes(token_id)
    return {"token": token_text(data, legacy=False), "logprob": logprob, "bytes": list(data)}


def chat_logprobs(steps: Sequence[Step]) -> dict[str, Any]:
    """The chat ``logprobs`` object of some steps."""
    return {
        "content": [
            {**_chat_entry(s.token_id, s.logprob), "top_logprobs": [_chat_entry(t, lp) for t, lp in s.top]}
            for s in steps
        ]
    }


# -- HTTP --------------------------------------------------------------------------------------


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


async def _line(reader: asyncio.StreamReader, limit: int, error: HttpError) -> bytes:
    """One CRLF-ended line of at most ``limit`` bytes, else ``error``."""
    try:
        line = await reader.readuntil(b"\r\n")
    except asyncio.LimitOverrunError:  # longer than the stream's own limit
        raise error from None
    if len(line) > limit:
        raise error
    return line


async def read_request(reader: asyncio.StreamReader) -> Request:
    """The request line, the headers and a ``Content-Length`` body, within the limits."""
    line = await _line(reader, MAX_REQUEST_LINE, HttpError(414, "request line too long", unread=True))
    parts = line.decode("latin-1").rstrip("\r\n").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, "malformed request line", unread=True)
    headers: dict[str, str] = {}
    size = 0
    while True:
        line = await _line(reader, MAX_HEADERS - size, HttpError(431, "request headers too large", unread=True))
        size += len(line)
        if line == b"\r\n":
            break
        name, colon, value = line.decode("latin-1").partition(":")
        if not colon:
            raise HttpError(400, "malformed header line", unread=True)
        headers[name.strip().lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise HttpError(411, "send the body with a Content-Length", unread=True)
    length = headers.get("content-length", "0")
    if not length.isdigit():
        raise HttpError(400, "bad Content-Length", unread=True)
    if int(length) > MAX_BODY:
        raise HttpError(413, f"request body over {MAX_BODY} bytes", unread=True)
    body = await reader.readexactly(int(length))
    return Request(parts[0], parts[1].split("?", 1)[0], headers, body)


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 411: "Length Required"}
_REASONS |= {413: "Content Too Large", 414: "URI Too Long", 431: "Request Header Fields Too Large"}
_REASONS |= {500: "Internal Server Error"}


def _head(status: int, content_type: str, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\nContent-Type: {content_type}\r\n{extra}Connection: close\r\n\r\n"
    ).encode()


async def send_json(writer: asyncio.StreamWriter, status: int, payload: object) -> None:
    data = json.dumps(payload, ensure_ascii=False).encode()
    writer.write(_head(status, "application/json", f"Content-Length: {len(data)}\r\n") + data)
    await writer.drain()


class EventStream:
    """Server-sent events in HTTP/1.1 chunked encoding, one chunk per event."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        writer.write(
            _head(200, "text/event-stream; charset=utf-8", "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n")
        )

    async def send(self, payload: object) -> None:
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        data = f"data: {text}\n\n".encode()
        self.writer.write(b"%x\r\n%s\r\n" % (len(data), data))
        await self.writer.drain()  # back-pressure, and where a gone client shows up

    async def close(self) -> None:
        await self.send("[DONE]")
        self.writer.write(b"0\r\n\r\n")
        await self.writer.drain()


def _choice(job: Job, text: str, finish: str | None, logprobs: Any, *, first: bool = False) -> dict[str, Any]:
    if job.endpoint == "completions":
        return {"index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish}
    delta: dict[str, str] = {"role": "assistant", "content": text} if first else {"content": text} if text else {}
    return {"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}


async def stream_reply(job: Job, writer: asyncio.StreamWriter) -> None:
    """A streamed reply: one chunk object per ``Chunk`` worth sending, then ``[DONE]``."""
    gen = Generation(job)
    chat = job.endpoint == "chat"
    lp = CompletionLogprobs(job) if not chat else chat_logprobs
    base = {
        "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk" if chat else "text_completion",
        "created": int(time.time()),
        "model": job.model,
    }
    events = EventStream(writer)
    if chat:  # OpenAI's first chunk: the role, no text yet
        await events.send({**base, "choices": [_choice(job, "", None, None, first=True)]})
    async with aclosing(gen.chunks()) as chunks:
        async for c in chunks:
            if c.text or c.finish_reason or (job.logprobs and c.steps):
                logprobs = lp(c.steps) if job.logprobs else None
                await events.send({**base, "choices": [_choice(job, c.text, c.finish_reason, logprobs)]})
    if job.include_usage:
        await events.send({**base, "choices": [], "usage": gen.usage()})
    await events.close()


async def whole_reply(job: Job, writer: asyncio.StreamWriter) -> None:
    """``stream: false``: the same generation, as one JSON body."""
    gen = Generation(job)
    texts, steps, finish = [], [], None
    async with aclosing(gen.chunks()) as chunks:
        async for c in chunks:
            texts.append(c.text)
            steps += c.steps
            finish = c.finish_reason
    text, chat = "".join(texts), job.endpoint == "chat"
    if chat:
        logprobs = chat_logprobs(steps) if job.logprobs else None
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": logprobs}
    else:
        logprobs = CompletionLogprobs(job)(steps) if job.logprobs else None
        choice = {"index": 0, "text": text, "logprobs": logprobs}
    reply = {
        "id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
        "object": "chat.completion" if chat else "text_completion",
        "created": int(time.time()),
        "model": job.model,
        "choices": [{**choice, "finish_reason": finish}],
        "usage": gen.usage(),
    }
    await send_json(writer, 200, reply)


ROUTES = {"/v1/completions": completion_job, "/v1/chat/completions": chat_job}


async def route(request: Request, writer: asyncio.StreamWriter) -> None:
    if request.path == "/v1/models" and request.method == "GET":
        card = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "tokstream"}
        await send_json(writer, 200, {"object": "list", "data": [card]})
        return
    make = ROUTES.get(request.path)
    if make is None:
        raise HttpError(404, f"Unknown request URL: {request.method} {request.path}", code="unknown_url")
    if request.method != "POST":
        raise HttpError(405, f"use POST for {request.path}")
    try:
        body = json.loads(request.body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HttpError(400, f"the body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    job = await make(body)
    await (stream_reply if job.stream else whole_reply)(job, writer)


async def _linger(reader: asyncio.StreamReader) -> None:
    """Read and drop what the client still sends (module notes), for a while."""
    loop = asyncio.get_running_loop()
    deadline, seen = loop.time() + LINGER_SECONDS, 0
    with suppress(asyncio.TimeoutError, ConnectionError):
        while seen < LINGER_BYTES:
            data = await asyncio.wait_for(reader.read(65536), max(0.0, deadline - loop.time()))
            if not data:
                break
            seen += len(data)


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """One connection, one request."""
    try:
        try:
            await route(await read_request(reader), writer)
        except HttpError as e:
            await send_json(writer, e.status, e.body())
            if e.unread:
                await _linger(reader)
    except (ConnectionError, asyncio.IncompleteReadError):
        pass  # the client went away (mid-request, or mid-stream: the generation is closed)
    finally:
        writer.close()
        with suppress(ConnectionError):
            await writer.wait_closed()


async def start(port: int = 0) -> asyncio.Server:
    """The server on 127.0.0.1 (``port=0``: an ephemeral port)."""
    # What is loaded by now (the tokenizer, its vocabulary index, the model) lives as
    # long as the server: out of the collector's reach, a full garbage collection in a
    # compile thread no longer walks it while holding the GIL, which every client's
    # request waits on (Python's gc.freeze, meant for long-lived servers).
    gc.freeze()
    # limit: a line longer than the headers may be is refused (431/414) without buffering it.
    return await asyncio.start_server(handle, HOST, port, limit=MAX_HEADERS)


class BackgroundServer:
    """The server on its own event loop in a thread, for synchronous clients (the demo,
    the tests). ``with BackgroundServer() as server:`` serves on ``server.port``; on
    exit the listener closes, open connections get 10 s to finish (then are cancelled),
    and the thread ends. ``errors`` collects what the loop's exception handler saw."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.errors: list[dict[str, Any]] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._main_task: asyncio.Task[Any] | None = None
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="openai-server", daemon=True)

    def __enter__(self) -> BackgroundServer:
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise RuntimeError("the server did not start") from self._failure
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.loop is not None and self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join()

    def tasks(self) -> list[asyncio.Task[Any]]:
        """The loop's tasks other than the server's own (its connections' handlers)."""
        assert self.loop is not None

        async def others() -> list[asyncio.Task[Any]]:
            return [t for t in asyncio.all_tasks() if t not in (self._main_task, asyncio.current_task())]

        return asyncio.run_coroutine_threadsafe(others(), self.loop).result(10)

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as e:  # reported by __enter__ when it happens at start-up
            self._failure = e
            self._ready.set()

    def _on_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        self.errors.append(context)
        loop.default_exception_handler(context)

    async def _main(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.loop.set_exception_handler(self._on_error)
        self._main_task = asyncio.current_task()
        self._stop = asyncio.Event()
        server = await start(self.port)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            server.close()
            handlers = [t for t in asyncio.all_tasks() if t is not self._main_task]
            if handlers:
                _, late = await asyncio.wait(handlers, timeout=10)
                for t in late:
                    t.cancel()
                await asyncio.gather(*late, return_exceptions=True)
            await server.wait_closed()


# -- demo --------------------------------------------------------------------------------------


def post(port: int, path: str, payload: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A plain urllib client: POST ``payload``; yield the JSON reply, or each SSE chunk."""
    req = urllib.request.Request(
        f"http://{HOST}:{port}{path}", json.dumps(payload).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        if not payload.get("stream"):
            yield json.load(resp)
            return
        for raw in resp:  # one line at a time: "data: {...}", then a blank line
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("data: "):
                if line == "data: [DONE]":
                    return
                yield json.loads(line[6:])


def demo() -> None:
    with BackgroundServer() as server:
        port = server.port
        print(f"serving on http://{HOST}:{port}/v1")
        prompt = "Ham.\nTo be, or not to be,--that is the quest"
        print(f"\nPOST /v1/completions, streamed, healed: {prompt!r}")
        payload = {"model": "toy", "prompt": prompt, "max_tokens": 24, "stream": True, "logprobs": 1, "stop": "\n\n"}
        pieces = []
        for chunk in post(port, "/v1/completions", payload):
            choice = chunk["choices"][0]
            pieces.append(choice["text"])
            tokens = choice["logprobs"]["tokens"]
            print(f"  chunk {choice['text']!r:28} tokens {tokens}  finish_reason={choice['finish_reason']}")
        print(f"  prompt + reply: {prompt + ''.join(pieces)!r}")

        print("\nPOST /v1/chat/completions, JSON schema, not streamed:")
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string", "maxLength": 12}, "mood": {"enum": ["glad", "sad"]}},
            "required": ["name", "mood"],
            "additionalProperties": False,
        }
        payload = {
            "model": "toy",
            "messages": [{"role": "user", "content": "Who's there?"}],
            "response_format": {"type": "json_schema", "json_schema": {"name": "who", "schema": schema}},
        }
        reply = next(post(port, "/v1/chat/completions", payload))
        content = reply["choices"][0]["message"]["content"]
        print(f"  {content}  -> {json.loads(content)}  ({reply['usage']['completion_tokens']} tokens)")

        try:
            from openai import OpenAI
        except ImportError:
            print("\n(the openai package is not installed: its client is not shown)")
            return
        print("\nthe openai client, chat, streamed, with logprobs:")
        with OpenAI(base_url=f"http://{HOST}:{port}/v1", api_key="unused", max_retries=0) as client:
            stream = client.chat.completions.create(
                model="toy",
                messages=[{"role": "user", "content": "Good night, sweet prince"}],
                max_tokens=30,
                seed=3,
                logprobs=True,
                stream=True,
            )
            text, data = [], b""
            for event in stream:
                choice = event.choices[0]
                text.append(choice.delta.content or "")
                for entry in (choice.logprobs.content or []) if choice.logprobs else []:
                    data += bytes(entry.bytes or [])
            print(f"  reply: {''.join(text)!r}  finish_reason={choice.finish_reason}")
            print(f"  the tokens' bytes join to the reply's UTF-8: {data == ''.join(text).encode()}")


async def serve(port: int) -> None:
    async with await start(port) as server:
        print(f"serving on http://{HOST}:{server.sockets[0].getsockname()[1]}/v1  (Ctrl-C stops)", flush=True)
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--demo", action="store_true", help="run the server and a client once, then exit (default)")
    mode.add_argument("--serve", action="store_true", help="serve until interrupted")
    parser.add_argument("--port", type=int, default=0, help="port for --serve (0: ephemeral, printed)")
    args = parser.parse_args(argv)
    if args.serve:
        with suppress(KeyboardInterrupt):
            asyncio.run(serve(args.port))
    else:
        demo()


if __name__ == "__main__":
    main()
