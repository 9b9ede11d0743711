"""examples/openai_server.py through the real ``openai`` client, on loopback.

The server runs in-process, on its own event loop in a thread (the example's
``BackgroundServer``), on an ephemeral port. What each reply should be is computed
here, independently of the server's streaming path: the toy model's ids come from
running ``MODEL.steps`` directly (it is reproducible from the seed), the text from
``tok.decode`` of them, cut at the earliest stop string. After every test no
connection handler is left on the server's loop and no model generator is open; at
the end the thread is gone and the loop's exception handler saw nothing.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pytest
from helpers import load_example

import tokstream

openai = pytest.importorskip("openai", reason="the OpenAI-compatible example is tested with the openai client")
jsonschema = pytest.importorskip("jsonschema", reason="structured output is checked with jsonschema")

HAMLET = "Ham.\nTo be, or not to be,--that is the question:--\nWhether 'tis nobler"
PRINCE = "Hor.\nGood night, sweet prince"  # the toy goes on with an emoji: split tokens


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return load_example("openai_server")


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.load("o200k_base")


@pytest.fixture(scope="module")
def server(example: ModuleType) -> Iterator[Any]:
    with example.BackgroundServer() as srv:
        yield srv
    assert not any(t.name == "openai-server" for t in threading.enumerate())
    assert srv.errors == []


def settle(server: Any, example: ModuleType) -> None:
    """Wait until no connection handler and no model generator is left."""
    for _ in range(500):
        if not server.tasks() and example.MODEL.running == 0:
            return
        time.sleep(0.02)
    raise AssertionError(f"left behind: {server.tasks()}, {example.MODEL.running} generators")


@pytest.fixture(autouse=True)
def clean(server: Any, example: ModuleType) -> Iterator[None]:
    yield
    settle(server, example)
    assert server.errors == []


@pytest.fixture(scope="module")
def client(server: Any) -> Iterator[Any]:
    c = openai.OpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key="unused", max_retries=0, timeout=60)
    yield c
    c.close()


# -- the expected replies ----------------------------------------------------------------------


@dataclass
class Expected:
    ids: list[int]  # the generated ids the reply covers (EOS excluded)
    eos: bool  # the model ended with EOS
    text: str
    finish_reason: str
    kept: list[int]  # the prompt ids the model continued


def run_model(
    example: ModuleType, prompt_ids: list[int], max_tokens: int, constraint: Any = None, **sampling: Any
) -> tuple[list[int], bool]:
    ids: list[int] = []
    for step in example.MODEL.steps(prompt_ids, example.Sampling(**sampling), constraint):
        if step.token_id == example.EOS:
            return ids, True
        ids.append(step.token_id)
        if len(ids) == max_tokens:
            break
    return ids, False


def cut(text: str, stops: list[str]) -> tuple[str, bool]:
    """``text`` up to the stop that completes first (ties: the one listed first)."""
    hits = [(text.find(s) + len(s), n, s) for n, s in enumerate(stops) if s in text]
    if not hits:
        return text, False
    end, _, stop = min(hits)
    return text[: end - len(stop)], True


def expected(
    example: ModuleType,
    tok: tokstream.Tokenizer,
    prompt: str,
    *,
    max_tokens: int,
    stop: list[str] | None = None,
    heal: bool = True,
    constraint: Any = None,
    **sampling: Any,
) -> Expected:
    """What the server should reply to a completion (or, given a chat prompt, a chat):
    ``tok.decode(kept + ids)`` after the prompt, cut at the first stop string."""
    ids = tok.encode(prompt, disallowed_special=())
    kept = ids
    if heal:
        healing = tokstream.heal(tok, ids, max_backoff=2)
        if healing.removed:
            kept, constraint = healing.prompt_ids, healing.constraint()
    gen, eos = run_model(example, kept, max_tokens, constraint, **sampling)
    full = tok.decode(kept + gen)
    assert full.startswith(prompt), (prompt, full)
    text, stopped = cut(full[len(prompt) :], stop or [])
    reason = "stop" if stopped or eos else "length"
    return Expected(gen, eos, text, reason, kept)


def chat_prompt(messages: list[dict[str, str]]) -> str:
    """The template the example documents, written out again."""
    return "".join(f"{m['role'].capitalize()}: {m['content']}\n\n" for m in messages) + "Assistant:"


def joined(chunks: list[Any]) -> str:
    return "".join(c.choices[0].text for c in chunks)


# -- streaming text ----------------------------------------------------------------------------

PROMPTS = [(HAMLET, 0, 40), (PRINCE, 1, 40), ("Pol.\nWhat do you read, my lord?\n\nHam.\n", 2, 60), ("", 3, 12)]


@pytest.mark.parametrize(("prompt", "seed", "max_tokens"), PROMPTS)
def test_completion_stream_is_the_decode(
    example: ModuleType, tok: tokstream.Tokenizer, client: Any, prompt: str, seed: int, max_tokens: int
) -> None:
    want = expected(example, tok, prompt, max_tokens=max_tokens, seed=seed)
    chunks = list(client.completions.create(model="toy", prompt=prompt, max_tokens=max_tokens, seed=seed, stream=True))
    assert joined(chunks) == want.text
    assert {c.id for c in chunks} == {chunks[0].id} and chunks[0].id.startswith("cmpl-")
    assert all(c.object == "text_completion" and c.model == "toy" and isinstance(c.created, int) for c in chunks)
    assert all(c.choices[0].index == 0 for c in chunks)
    assert [c.choices[0].finish_reason for c in chunks] == [None] * (len(chunks) - 1) + [want.finish_reason]
    whole = client.completions.create(model="toy", prompt=prompt, max_tokens=max_tokens, seed=seed)
    assert whole.choices[0].text == want.text
    assert whole.choices[0].finish_reason == want.finish_reason
    assert whole.usage.completion_tokens == len(want.ids) + want.eos  # EOS counts, as in vLLM
    assert whole.usage.prompt_tokens == len(tok.encode(prompt))


@pytest.mark.parametrize("seed", [0, 5])
def test_chat_stream_is_the_decode(example: ModuleType, tok: tokstream.Tokenizer, client: Any, seed: int) -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Who's there?"}]
    prompt = chat_prompt(messages)
    assert prompt == "System: Be brief.\n\nUser: Who's there?\n\nAssistant:"
    want = expected(example, tok, prompt, max_tokens=80, heal=False, seed=seed)
    chunks = list(client.chat.completions.create(model="toy", messages=messages, max_tokens=80, seed=seed, stream=True))
    first = chunks[0].choices[0]
    assert first.delta.role == "assistant" and first.delta.content == ""
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == want.text
    assert all(c.object == "chat.completion.chunk" and c.id == chunks[0].id for c in chunks)
    assert [c.choices[0].finish_reason for c in chunks] == [None] * (len(chunks) - 1) + [want.finish_reason]
    whole = client.chat.completions.create(model="toy", messages=messages, max_tokens=80, seed=seed)
    assert whole.object == "chat.completion"
    assert whole.choices[0].message.role == "assistant"
    assert whole.choices[0].message.content == want.text
    assert whole.choices[0].finish_reason == want.finish_reason


def test_greedy_and_temperature(example: ModuleType, tok: tokstream.Tokenizer, client: Any) -> None:
    for temperature in (0, 0.5, 1.7):
        want = expected(example, tok, HAMLET, max_tokens=30, temperature=temperature, seed=9)
        reply = client.completions.create(model="toy", prompt=HAMLET, max_tokens=30, temperature=temperature, seed=9)
        assert reply.choices[0].text == want.text


# -- how a stream ends -------------------------------------------------------------------------


@pytest.mark.parametrize("as_list", [False, True])
def test_stop_strings_cut_at_the_first_stop(
    example: ModuleType, tok: tokstream.Tokenizer, client: Any, as_list: bool
) -> None:
    free = expected(example, tok, HAMLET, max_tokens=60, seed=4, logit_bias={example.EOS: -100})
    assert len(free.text) > 30
    # A stop from the middle of the free text; with a list, a second one that completes
    # earlier (found later in the list), and one that never occurs.
    stop = free.text[20:24]
    stops = [stop, free.text[8:11], "<|never|>"] if as_list else [stop]
    want = expected(example, tok, HAMLET, max_tokens=60, seed=4, logit_bias={example.EOS: -100}, stop=stops)
    assert want.finish_reason == "stop" and want.text == cut(free.text, stops)[0]
    kwargs: dict[str, Any] = {"logit_bias": {str(example.EOS): -100}, "seed": 4, "max_tokens": 60}
    chunks = list(
        client.completions.create(model="toy", prompt=HAMLET, stop=stops if as_list else stop, stream=True, **kwargs)
    )
    assert joined(chunks) == want.text
    assert chunks[-1].choices[0].finish_reason == "stop"
    chat = client.chat.completions.create(
        model="toy", messages=[{"role": "user", "content": "x"}], stop=stops, **kwargs
    )
    want_chat = expected(
        example, tok, "User: x\n\nAssistant:", max_tokens=60, heal=False, seed=4, logit_bias={example.EOS: -100}
    )
    assert chat.choices[0].message.content == cut(want_chat.text, stops)[0]


@pytest.mark.parametrize("max_tokens", [1, 7, 33])
def test_max_tokens_is_length(example: ModuleType, tok: tokstream.Tokenizer, client: Any, max_tokens: int) -> None:
    bias = {example.EOS: -100}
    want = expected(example, tok, PRINCE, max_tokens=max_tokens, heal=False, seed=2, logit_bias=bias)
    chunks = list(
        client.completions.create(
            model="toy",
            prompt=PRINCE,
            max_tokens=max_tokens,
            seed=2,
            logit_bias={str(example.EOS): -100},
            logprobs=0,
            stream=True,
            extra_body={"heal": False},
        )
    )
    assert chunks[-1].choices[0].finish_reason == "length"
    assert sum(len(c.choices[0].logprobs.tokens) for c in chunks) == max_tokens
    assert joined(chunks) == want.text == tok.decode(tok.encode(PRINCE) + want.ids)[len(PRINCE) :]


def test_eos_is_stop(example: ModuleType, tok: tokstream.Tokenizer, client: Any) -> None:
    prompt = "Pol.\nDo you know me, my lord?\n\nHam.\n"
    seed = next(s for s in range(50) if expected(example, tok, prompt, max_tokens=60, seed=s).eos)
    want = expected(example, tok, prompt, max_tokens=60, seed=seed)
    reply = client.completions.create(model="toy", prompt=prompt, max_tokens=60, seed=seed, logprobs=0)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and choice.text == want.text
    assert len(choice.logprobs.tokens) == len(want.ids)  # EOS has no entry
    assert reply.usage.completion_tokens == len(want.ids) + 1


# -- logprobs ----------------------------------------------------------------------------------


def test_chat_logprobs_carry_the_token_bytes(example: ModuleType, tok: tokstream.Tokenizer, client: Any) -> None:
    """Tokens that are part of a character (the emoji) have their real bytes; all join to
    the reply's UTF-8; the streamed entries are the whole reply's."""
    messages = [{"role": "user", "content": "Good night, sweet prince"}]
    prompt = chat_prompt(messages)

    def split_char(ids: list[int]) -> bool:
        """Some token is part of a character, and the toy finished every character."""
        return any(not _valid(tok.token_bytes(i)) for i in ids) and _valid(tok.decode_bytes(ids))

    seed = next(
        s for s in range(300) if split_char(expected(example, tok, prompt, max_tokens=40, heal=False, seed=s).ids)
    )
    want = expected(example, tok, prompt, max_tokens=40, heal=False, seed=seed)
    kwargs: dict[str, Any] = {"model": "toy", "messages": messages, "max_tokens": 40, "seed": seed, "logprobs": True}
    whole = client.chat.completions.create(top_logprobs=3, **kwargs)
    content = whole.choices[0].logprobs.content
    assert whole.choices[0].message.content == want.text
    assert [bytes(e.bytes) for e in content] == [tok.token_bytes(i) for i in want.ids]
    assert b"".join(bytes(e.bytes) for e in content) == want.text.encode()
    for e, i in zip(content, want.ids):
        data = tok.token_bytes(i)
        assert e.token == (data.decode() if _valid(data) else data.decode("utf-8", "backslashreplace"))
        assert 1 <= len(e.top_logprobs) <= 3
        assert [t.logprob for t in e.top_logprobs] == sorted((t.logprob for t in e.top_logprobs), reverse=True)
        assert e.logprob <= e.top_logprobs[0].logprob + 1e-9 and e.logprob < 0
        assert all(t.token == bytes(t.bytes).decode("utf-8", "backslashreplace") for t in e.top_logprobs)
    assert any("\\x" in e.token for e in content)
    chunks = list(client.chat.completions.create(stream=True, top_logprobs=3, **kwargs))
    streamed = [e for c in chunks if c.choices[0].logprobs for e in c.choices[0].logprobs.content]
    assert [(e.token, e.bytes, e.logprob) for e in streamed] == [(e.token, e.bytes, e.logprob) for e in content]
    # A chunk carries the tokens consumed since the previous one: its text is final
    # once its last token is in, so the bytes so far always cover the text so far.
    data, text = b"", ""
    for c in chunks:
        data += b"".join(bytes(e.bytes) for e in (c.choices[0].logprobs.content if c.choices[0].logprobs else []))
        text += c.choices[0].delta.content or ""
        assert data.startswith(text.encode())


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_completion_logprobs(example: ModuleType, tok: tokstream.Tokenizer, client: Any) -> None:
    want = expected(example, tok, PRINCE, max_tokens=20, heal=False, seed=1)
    reply = client.completions.create(
        model="toy", prompt=PRINCE, max_tokens=20, seed=1, logprobs=2, extra_body={"heal": False}
    )
    lp = reply.choices[0].logprobs
    text = reply.choices[0].text
    assert text == want.text
    tokens = [tok.token_bytes(i) for i in want.ids]
    assert lp.tokens == [t.decode() if _valid(t) else "bytes:" + t.decode("utf-8", "backslashreplace") for t in tokens]
    assert any(t.startswith("bytes:") and "\\x" in t for t in lp.tokens)  # the emoji's pieces
    assert len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == len(want.ids)
    for token, logprob, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert top[token] == logprob and 1 <= len(top) <= 3  # the top 2 and the chosen one
    # text_offset: where the texts of the first i and i + 1 tokens part ways (a token
    # that finishes a character points at it; the toy also leaves characters unfinished).
    for i, offset in enumerate(lp.text_offset):
        before, after = tok.decode(want.ids[:i]), tok.decode(want.ids[: i + 1])
        assert offset == next(
            (n for n, (x, y) in enumerate(zip(before, after)) if x != y), min(len(before), len(after))
        )
        if _valid(tokens[i]) and after == text[: len(after)]:
            assert text[offset:].startswith(tokens[i].decode())
    streamed = list(
        client.completions.create(
            model="toy", prompt=PRINCE, max_tokens=20, seed=1, logprobs=2, stream=True, extra_body={"heal": False}
        )
    )
    assert [o for c in streamed for o in c.choices[0].logprobs.text_offset] == lp.text_offset
    assert [t for c in streamed for t in c.choices[0].logprobs.tokens] == lp.tokens


# -- healing -----------------------------------------------------------------------------------


def test_healing_continues_the_prompt(example: ModuleType, tok: tokstream.Tokenizer, client: Any) -> None:
    """A prompt ending mid-word: the last token is backed off and regenerated, and the
    reply starts right after the prompt. Checked: the prompt plus the reply is exactly
    ``tok.decode`` of the kept prompt ids plus the generated ids; those ids begin by
    re-spelling the removed bytes ``b"exa"``, which the reply does not repeat; the
    logprobs count every generated id, the first at offset -3 (3 characters back)."""
    prompt = "Visit https://exa"
    healing = tokstream.heal(tok, tok.encode(prompt), max_backoff=2)
    assert healing.prefix == b"exa" and tok.decode(healing.prompt_ids) == "Visit https://"
    want = expected(example, tok, prompt, max_tokens=12, seed=0, logit_bias={example.EOS: -100})
    assert tok.decode(healing.prompt_ids + want.ids) == prompt + want.text
    assert b"".join(tok.token_bytes(i) for i in want.ids).startswith(b"exa")
    kwargs: dict[str, Any] = {"model": "toy", "prompt": prompt, "max_tokens": 12, "seed": 0, "logprobs": 0}
    kwargs["logit_bias"] = {str(example.EOS): -100}
    reply = client.completions.create(**kwargs)
    text, lp = reply.choices[0].text, reply.choices[0].logprobs
    assert text == want.text and not (prompt + text).startswith(prompt + "exa" + "exa")
    assert len(lp.tokens) == 12 and lp.text_offset[0] == -3
    assert joined(list(client.completions.create(stream=True, **kwargs))) == text
    # Without healing the model continues the prompt's own last token.
    plain = client.completions.create(extra_body={"heal": False}, **kwargs)
    assert (
        plain.choices[0].text
        == expected(example, tok, prompt, max_tokens=12, heal=False, seed=0, logit_bias={example.EOS: -100}).text
    )
    assert plain.choices[0].logprobs.text_offset[0] == 0
    # A stop string that could match in the regenerated "exa" turns healing off.
    overlapping = client.completions.create(stop=["xa"], **kwargs)
    assert overlapping.choices[0].logprobs.text_offset[0] == 0
    assert overlapping.choices[0].text == plain.choices[0].text.split("xa")[0]


# -- structured output -------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "mood": {"enum": ["glad", "sad", "mad"]},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 5}, "maxItems": 2},
    },
    "required": ["name", "age", "mood"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_json_schema_response_format(client: Any, seed: int) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": SCHEMA, "strict": True}}
    messages = [{"role": "user", "content": "Describe Hamlet."}]
    reply = client.chat.completions.create(model="toy", messages=messages, response_format=fmt, seed=seed)
    content = reply.choices[0].message.content
    jsonschema.validate(json.loads(content), SCHEMA)
    assert reply.choices[0].finish_reason == "stop"  # the constraint's EOS
    chunks = list(
        client.chat.completions.create(model="toy", messages=messages, response_format=fmt, seed=seed, stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == content


def test_json_object_response_format(client: Any) -> None:
    messages = [{"role": "user", "content": "Any JSON object."}]
    for seed in range(3):
        reply = client.chat.completions.create(
            model="toy", messages=messages, response_format={"type": "json_object"}, seed=seed, max_tokens=200
        )
        assert reply.choices[0].finish_reason == "stop"
        assert isinstance(json.loads(reply.choices[0].message.content), dict)


def test_unsupported_schema_keyword_is_400(client: Any) -> None:
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"not": {"type": "string"}}}}
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="toy", messages=[{"role": "user", "content": "x"}], response_format=fmt)
    assert info.value.status_code == 400
    body = info.value.body
    assert body["type"] == "invalid_request_error" and body["param"] == "response_format"
    assert "'not'" in body["message"] and set(body) == {"message", "type", "param", "code"}


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"extra_body": {"bogus": 1}}, "bogus"),
        ({"max_tokens": "ten"}, "max_tokens"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"stop": [""]}, "stop"),
        ({"temperature": 3}, "temperature"),
        ({"logprobs": 21}, "logprobs"),
        ({"n": 2}, "n"),
        ({"echo": True}, "echo"),
        ({"logit_bias": {"x": 1}}, "logit_bias"),
    ],
)
def test_bad_fields_are_400(client: Any, kwargs: dict[str, Any], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        client.completions.create(model="toy", prompt="x", **kwargs)
    assert info.value.body["param"] == param and info.value.body["type"] == "invalid_request_error"


# -- the connection ----------------------------------------------------------------------------


def test_client_disconnect_stops_the_generation(
    example: ModuleType, server: Any, client: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    stream = client.completions.create(
        model="toy", prompt=HAMLET, max_tokens=4000, logit_bias={str(example.EOS): -100}, stream=True
    )
    for _, _chunk in zip(range(3), stream):
        pass
    assert example.MODEL.running == 1
    stream.close()
    settle(server, example)  # the handler is gone and the model's generator closed
    assert example.MODEL.ended[-1] < 4000
    assert server.errors == [] and capfd.readouterr().err == ""
    assert client.completions.create(model="toy", prompt="ok", max_tokens=3).choices[0].finish_reason == "length"


@pytest.mark.asyncio
async def test_concurrent_clients(example: ModuleType, tok: tokstream.Tokenizer, server: Any) -> None:
    prompts = [(f"{HAMLET} {n}" if n % 2 else PRINCE, n) for n in range(20)]
    wants = [expected(example, tok, p, max_tokens=50, seed=s, stop=["\n\n"]) for p, s in prompts]

    async def one(client: Any, prompt: str, seed: int) -> tuple[str, str | None]:
        stream = await client.completions.create(
            model="toy", prompt=prompt, max_tokens=50, seed=seed, stop="\n\n", stream=True
        )
        chunks = [c async for c in stream]
        return joined(chunks), chunks[-1].choices[0].finish_reason

    async with openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{server.port}/v1", api_key="unused", max_retries=0, timeout=120
    ) as client:
        got = await asyncio.gather(*(one(client, p, s) for p, s in prompts))
    assert got == [(w.text, w.finish_reason) for w in wants]


def raw(port: int, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None) -> Any:
    """One request with http.client (which sends what it is told): (status, JSON body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def assert_serving(client: Any) -> None:
    assert client.completions.create(model="toy", prompt="Ham.\n", max_tokens=2).choices[0].text


@pytest.mark.parametrize(
    ("path", "headers", "body", "status"),
    [
        ("/v1/completions", {"X-Big": "a" * 100 * 1024}, b"{}", 431),  # one 100 KiB header
        ("/v1/completions", {f"X-H{n}": "b" * 1000 for n in range(70)}, b"{}", 431),  # 70 KB in all
        ("/v1/" + "c" * 10_000, {}, b"{}", 414),  # over the 8 KiB request line
        ("/v1/" + "c" * 100_000, {}, b"{}", 414),  # over the stream's own line limit too
        ("/v1/completions", {}, b"x" * (2 * 1024 * 1024), 413),
        ("/v1/nope", {}, b"{}", 404),
        ("/v1/completions", {}, b"{not json", 400),
        ("/v1/completions", {}, b"[1, 2]", 400),
        ("/v1/completions", {}, json.dumps({"model": "toy"}).encode(), 400),  # no prompt
    ],
)
def test_http_errors_then_still_serving(
    server: Any, client: Any, path: str, headers: dict[str, str], body: bytes, status: int
) -> None:
    got, payload = raw(server.port, "POST", path, headers=headers, body=body)
    assert got == status
    assert payload["error"]["type"] == "invalid_request_error" and isinstance(payload["error"]["message"], str)
    assert_serving(client)


def test_method_and_models(server: Any, client: Any) -> None:
    assert raw(server.port, "GET", "/v1/completions")[0] == 405
    assert [m.id for m in client.models.list()] == ["tokstream-toy"]


def test_hangups_mid_request(server: Any, client: Any) -> None:
    for data in (b"POST /v1/completions HTTP/1.1\r\n", b"POST /v1/completions HTTP/1.1\r\nContent-Length: 50\r\n\r\n{"):
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            s.sendall(data)
    assert_serving(client)


def test_sse_wire_format(server: Any) -> None:
    """The bytes on the wire: chunked ``data: {json}\\n\\n`` events, then ``data: [DONE]``."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        payload = {
            "model": "toy",
            "prompt": HAMLET,
            "max_tokens": 5,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        conn.request("POST", "/v1/completions", body=json.dumps(payload), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/event-stream")
        assert resp.getheader("Transfer-Encoding") == "chunked"
        events = resp.read().decode().split("\n\n")
    finally:
        conn.close()
    assert events[-2:] == ["data: [DONE]", ""]
    assert all(e.startswith("data: {") and "\n" not in e for e in events[:-2])
    objects = [json.loads(e[6:]) for e in events[:-2]]
    assert objects[-1]["choices"] == [] and objects[-1]["usage"]["completion_tokens"] == 5
    assert objects[-2]["choices"][0]["finish_reason"] == "length"
    assert all(o["choices"][0]["finish_reason"] is None for o in objects[:-2])
