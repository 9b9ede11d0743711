"""``tokstream demo``: each section's printed facts, checked against the references.

The sections run in-process (``tokstream.demo``'s functions return their text); the
whole program runs once as ``python -m tokstream demo``. Ids are compared with
tiktoken's (and ``tokenizers``' / ``sentencepiece``'s for the Llama 3 and Mistral
fixtures); the healing constraint's allowed set is recomputed from tiktoken's
vocabulary; streamed text is checked against an incremental UTF-8 decoder over the
reference token bytes. Nothing asserts an output string computed with tokstream
itself, only the relations the demo claims.
"""

from __future__ import annotations

import ast
import codecs
import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import REPO, fixture_file, hf_reference

import tokstream
from tokstream import demo
from tokstream.cli import main

HEADERS = [demo.header(n) for n in range(1, len(demo.SECTIONS) + 1)]


def _lines(n: int, tok: tokstream.Tokenizer) -> list[str]:
    return demo.SECTIONS[n - 1][1](tok).splitlines()


def _after(lines: list[str], prefix: str) -> str:
    """The rest of the one line that starts with ``prefix``."""
    found = [line[len(prefix) :] for line in lines if line.startswith(prefix)]
    assert len(found) == 1, (prefix, lines)
    return found[0]


def _line(lines: list[str], prefix: str) -> str:
    """The one line that starts with ``prefix``."""
    return prefix + _after(lines, prefix)


def _literal(lines: list[str], prefix: str) -> Any:
    return ast.literal_eval(_after(lines, prefix))


def _sections(out: str) -> dict[int, list[str]]:
    """The program's output split at the section headers: {number: lines}."""
    parts: dict[int, list[str]] = {}
    current = 0
    for line in out.splitlines():
        m = re.fullmatch(r"== (\d+)\. .* ==", line)
        if m:
            current = int(m.group(1))
            parts[current] = []
        elif current:
            parts[current].append(line)
    for lines in parts.values():
        while lines and not lines[-1]:  # the blank line between sections
            lines.pop()
    return parts


@pytest.fixture(scope="module")
def tok() -> tokstream.Tokenizer:
    return tokstream.load("default")


# ----------------------------------------------------------- 1. encoding safety


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_section_1_ids_are_tiktokens(name: str, reference: Callable[[str], Any]) -> None:
    ref = reference(name)
    lines = _lines(1, tokstream.load(name))
    text = _literal(lines, "text: ")
    assert text == demo.ENCODE_TEXT
    assert _literal(lines, "ids: ") == ref.encode(text)
    assert _literal(lines, "decode(ids): ") == text
    user_text = _literal(lines, "user text: ")
    special = "<|endoftext|>"
    assert special in user_text
    with pytest.raises(ValueError):  # tiktoken refuses it too
        ref.encode(user_text)
    message = _after(lines, "encode(user text) raises SpecialTokenError: ")
    assert f"special token {special!r} at offset {user_text.index(special)}" in message
    assert "allowed_special=" in message and "disallowed_special=()" in message
    m = re.fullmatch(r"allowed_special=\{'(.+)'\} \(the control token, id (\d+)\): (\[.*\])", lines[-2])
    assert m is not None, lines[-2]
    assert m.group(1) == special and int(m.group(2)) == ref.encode_single_token(special)
    assert ast.literal_eval(m.group(3)) == ref.encode(user_text, allowed_special={special})
    ordinary = _literal(lines, "disallowed_special=() (plain text, as encode_ordinary): ")
    assert ordinary == ref.encode(user_text, disallowed_special=())
    assert ordinary == ref.encode_ordinary(user_text)


def test_section_1_without_special_tokens() -> None:
    tok = tokstream.train_bpe(["the cat sat on the mat, hello world"] * 4, 300)
    assert tok.special_tokens == {}
    lines = _lines(1, tok)
    assert any(line.startswith("special tokens: none") for line in lines)
    assert not any("raises" in line for line in lines)
    user_text = _literal(lines, "user text: ")
    assert "<|endoftext|>" in user_text
    assert ast.literal_eval(lines[-1].removeprefix("ids: ")) == tok.encode(user_text)


def test_section_1_llama3_ids_are_tokenizers() -> None:
    path = fixture_file("hf/llama3_tokenizer.json")
    ref = hf_reference(path)
    lines = _lines(1, tokstream.load(path))
    text = _literal(lines, "text: ")
    assert _literal(lines, "ids: ") == ref.encode(text, add_special_tokens=False).ids
    # tokenizers reads added tokens in text as the tokens: the allowed_special answer.
    user_text = _literal(lines, "user text: ")
    allowed = ast.literal_eval(lines[-2].split(": ", 1)[1])
    assert allowed == ref.encode(user_text, add_special_tokens=False).ids


# ----------------------------------------------------------- 2. streaming decode


_STEP = re.compile(r"  step +(\d+)  id +(\d+)  (b(['\"]).*?\4) +-> (.*)")


def test_section_2_streaming(tok: tokstream.Tokenizer, reference: Callable[[str], Any]) -> None:
    ref = reference("o200k_base")
    lines = _lines(2, tok)
    text = _literal(lines, "text: ")
    assert text == demo.STREAM_TEXT and any(ord(ch) > 0x3000 for ch in text)  # CJK
    ids = _literal(lines, "ids: ")
    assert ids == ref.encode(text)
    rows = [m.groups() for m in map(_STEP.fullmatch, lines) if m]
    assert [int(r[0]) for r in rows] == list(range(len(ids)))
    assert [int(r[1]) for r in rows] == ids
    # Oracle: an incremental UTF-8 decoder over tiktoken's token bytes emits, per
    # step, exactly the characters the bytes so far complete.
    utf8 = codecs.getincrementaldecoder("utf-8")()
    emitted = []
    for _, tid, raw, _, out in rows:
        assert ast.literal_eval(raw) == ref.decode_single_token_bytes(int(tid))
        want = utf8.decode(ast.literal_eval(raw))
        assert ast.literal_eval(out) == want
        emitted.append(want)
    # An emoji split over tokens: a step emits '' and the next one the emoji.
    assert any(a == "" and b and ord(b[0]) >= 0x1F000 for a, b in zip(emitted, emitted[1:]))
    finish = _literal(lines, "finish() -> ")
    joined = "".join(emitted) + finish
    assert joined == ref.decode(ids) == text
    assert _after(lines, "joined: ") == f"{joined!r}; equals tok.decode(ids): True"

    steps = ast.literal_eval(_after(lines, "  step outputs: "))
    stopped = _after(lines, "  stopped: ")
    want_text = demo.STOP_TEXT[: demo.STOP_TEXT.index(demo.STOP)]
    assert "".join(steps) == want_text
    assert stopped.startswith(f"True after {len(steps)} of {len(ref.encode(demo.STOP_TEXT))} ids")
    assert stopped.endswith(f"stop_reason: {demo.STOP!r}; text: {want_text!r}")


# ----------------------------------------------------------- 3. healing


def test_section_3_healing(tok: tokstream.Tokenizer, reference: Callable[[str], Any]) -> None:
    ref = reference("o200k_base")
    lines = _lines(3, tok)
    prompt = _literal(lines, "prompt: ")
    ids = ref.encode(prompt)
    pieces = _literal(lines, "prompt tokens: ")
    assert pieces == [ref.decode_single_token_bytes(i) for i in ids]
    m = re.fullmatch(r"removed (\d) token\(s\), prefix (b'.*')", _after(lines, "heal(tok, ids, max_backoff=2): "))
    assert m is not None
    removed, prefix = int(m.group(1)), ast.literal_eval(m.group(2))
    assert 1 <= removed <= 2 and prefix == b"".join(pieces[-removed:])
    trimmed = _after(lines, "trimmed prompt: ")
    assert trimmed == f"{ref.decode(ids[:-removed])!r} ({len(ids) - removed} ids)"
    assert prompt.encode() == ref.decode_bytes(ids[:-removed]) + prefix

    # The allowed set, recomputed from tiktoken's vocabulary: tokens that start with
    # the prefix, and non-empty proper prefixes of it.
    vocab = ref.token_byte_values()
    assert any(b.startswith(prefix) and b != prefix for b in vocab)  # heal's condition
    if removed < 2:
        assert not any(b.startswith(b"".join(pieces[-2:])) and b != b"".join(pieces[-2:]) for b in vocab)
    complete = [b for b in vocab if b.startswith(prefix)]
    partial = [b for b in vocab if b and len(b) < len(prefix) and prefix.startswith(b)]
    n = len(complete) + len(partial)
    summary = next(line for line in lines if line.startswith("the constraint allows "))
    assert summary.startswith(
        f"the constraint allows {n} ids (TokenMasker(tok).mask(c).sum() = {n}): "
        f"{len(complete)} start with {prefix!r}, {len(partial)} "
    )
    listed = re.findall(r"(b'[^']*') \(id (\d+)\)", lines[lines.index(summary) + 1])
    assert len(listed) == min(n, 8)
    for raw, tid in listed:
        b = ast.literal_eval(raw)
        assert b == ref.decode_single_token_bytes(int(tid)) and (b in complete or b in partial)
    m = re.search(
        r"continues the trimmed prompt with (b'.*') \(id (\d+)\); the constraint allows it: (\w+)",
        lines[-1],
    )
    assert m is not None, lines[-1]
    full = ref.encode(prompt + demo.HEAL_REST)
    assert full[: len(ids) - removed] == ids[:-removed] and int(m.group(2)) == full[len(ids) - removed]
    assert ast.literal_eval(m.group(1)).startswith(prefix) and m.group(3) == "True"


# ----------------------------------------------------------- 4. cache keys


_PLAN = re.compile(r"  (\d+) ids, stable_len (\d+), (\d+) block keys?, first key ([0-9a-f]{16})\.\.\.")


def _check_chat(lines: list[str], encode: Callable[[str], list[int]]) -> None:
    """The two turns' facts: ids as the reference gives, stable ids kept by the next
    turn, one key per full stable block, all of turn 1's keys reused."""
    turn_1 = _literal(lines, "turn 1 prompt: ")
    rest = _after(lines, "turn 2 prompt: ")
    assert rest.startswith("turn 1 + ")
    turn_2 = turn_1 + ast.literal_eval(rest[len("turn 1 + ") :])
    plans = [
        _PLAN.fullmatch(lines[lines.index(ln) + 1]) for ln in lines if ln.startswith("turn ") and " prompt: " in ln
    ]
    assert all(plans) and len(plans) == 2
    (n1, s1, k1, key1), (n2, s2, k2, key2) = [p.groups() for p in plans if p]
    ids_1, ids_2 = encode(turn_1), encode(turn_2)
    assert (int(n1), int(n2)) == (len(ids_1), len(ids_2))
    for n, s, k in ((n1, s1, k1), (n2, s2, k2)):
        assert int(s) <= int(n) and int(k) == int(s) // demo.BLOCK_SIZE
    assert ids_2[: int(s1)] == ids_1[: int(s1)] and key1 == key2 and int(k1) >= 1
    m = re.fullmatch(
        r"turn 2 reuses (\d+) of turn 1's (\d+) keys? \((\d+) ids of prefill skipped\)",
        _line(lines, "turn 2 reuses "),
    )
    assert m is not None
    assert int(m.group(1)) == int(m.group(2)) == int(k1) and int(m.group(3)) == int(k1) * demo.BLOCK_SIZE


def test_section_4_cache_keys(tok: tokstream.Tokenizer, reference: Callable[[str], Any]) -> None:
    ref = reference("o200k_base")
    lines = _lines(4, tok)
    assert "<|im_start|>" not in ref.special_tokens_set
    assert _after(lines, "chat format: ").startswith("plain text")
    _check_chat(lines, ref.encode)

    # The naive case: encode(text) is not a prefix of encode(text + rest) (tiktoken
    # agrees), so keys over all ids lose a block; the planner's are all reused.
    m = re.fullmatch(
        r"a prompt whose end the next turn re-tokenizes \(block_size (\d+)\): (.*) \+ ('.*')",
        next(ln for ln in lines if ln.startswith("a prompt whose end")),
    )
    assert m is not None
    size, text, rest = int(m.group(1)), ast.literal_eval(m.group(2)), ast.literal_eval(m.group(3))
    ids, longer = ref.encode(text), ref.encode(text + rest)
    assert longer[: len(ids)] != ids and len(ids) % size == 0
    cut = next(j for j, (a, b) in enumerate(zip(ids, longer)) if a != b)
    naive = re.search(r"naive keys over all (\d+) ids: (\d+) keys?, (\d+) reused", "\n".join(lines))
    good = re.search(r"planner: stable_len (\d+), (\d+) keys?, (\d+) reused", "\n".join(lines))
    assert naive is not None and good is not None
    assert int(naive.group(1)) == len(ids) and int(naive.group(2)) == len(ids) // size
    assert int(naive.group(3)) == cut // size < int(naive.group(2))
    stable, keys, reused = map(int, good.groups())
    assert stable <= cut and keys == stable // size == reused


@pytest.mark.slow
def test_section_4_llama3_chat_specials() -> None:
    path = fixture_file("hf/llama3_tokenizer.json")
    ref = hf_reference(path)
    lines = _lines(4, tokstream.load(path))
    assert _after(lines, "chat format: ").startswith("Llama 3 special tokens")
    _check_chat(lines, lambda text: ref.encode(text, add_special_tokens=False).ids)


def test_section_4_chatml_specials(reference: Callable[[str], Any]) -> None:
    ref = reference("cl100k_base")
    tok = tokstream.extend(tokstream.load("cl100k_base"), ["<|im_start|>", "<|im_end|>"], special=True)
    # tiktoken's documented way to extend an encoding, with the ids extend() chose.
    tiktoken = pytest.importorskip("tiktoken")
    chatml = tiktoken.Encoding(
        "cl100k_chatml",
        pat_str=ref._pat_str,
        mergeable_ranks=ref._mergeable_ranks,
        special_tokens={**ref._special_tokens, **tok.special_tokens},
    )
    lines = _lines(4, tok)
    assert _after(lines, "chat format: ").startswith("ChatML special tokens")
    assert _literal(lines, "turn 1 prompt: ").startswith("<|im_start|>system\n")
    _check_chat(lines, lambda text: chatml.encode(text, allowed_special="all"))


# ----------------------------------------------------------- 5. speculative


def _check_speculative(lines: list[str], tok: tokstream.Tokenizer) -> None:
    calls = [
        re.fullmatch(
            r"  call (\d+): drafts (\[.*\]) -> kept (\d), "
            r"then (b'.*'|b\".*\") \((bonus|corrected)\)",
            ln,
        )
        for ln in lines
        if ln.startswith("  call ")
    ]
    assert calls and all(calls)
    m = re.fullmatch(r"acceptance rate: ([0-9.]+) \((\d+) of (\d+) drafts\)", _line(lines, "acceptance rate: "))
    assert m is not None
    rate, accepted, proposed = float(m.group(1)), int(m.group(2)), int(m.group(3))
    assert 0.0 <= rate <= 1.0 and proposed == demo.K * len(calls)
    assert round(accepted / proposed, 3) == rate
    m = re.fullmatch(
        r"([0-9.]+) \((\d+) tokens in (\d+) calls; 1\.00 without drafts\)",
        _after(lines, "tokens per target call: "),
    )
    assert m is not None
    per_call, n_tokens, n_calls = float(m.group(1)), int(m.group(2)), int(m.group(3))
    assert n_calls == len(calls) and n_tokens >= demo.N_NEW
    assert round(n_tokens / n_calls, 2) == per_call and 1.0 <= per_call <= demo.K + 1
    # The rows add up: kept drafts plus one token per call make the generated text.
    out = b""
    kept_total = 0
    for c in calls:
        assert c is not None
        drafts, kept, last = (
            ast.literal_eval(c.group(2)),
            int(c.group(3)),
            ast.literal_eval(c.group(4)),
        )
        assert len(drafts) == demo.K and kept <= demo.K
        assert (c.group(5) == "bonus") == (kept == demo.K)
        out += b"".join(drafts[:kept]) + last
        kept_total += kept
    assert kept_total == accepted
    m = re.search(r"constrained to start with (b'.*') \(", "\n".join(lines))
    assert m is not None
    assert out.startswith(ast.literal_eval(m.group(1)))
    assert _after(lines, "starts with the healed prefix ").endswith(
        ": True; every token allowed by the constraint: True"
    )
    if tok.name in ("o200k_base", "cl100k_base"):  # byte-level: decode is the bytes
        assert _literal(lines, "generated: ") == out.decode("utf-8", errors="replace")


def test_section_5_speculative(tok: tokstream.Tokenizer) -> None:
    pytest.importorskip("tokstream.constrain.speculative")
    lines = _lines(5, tok)
    assert _after(lines, "prompt: ").startswith("'Read the docs at https://docs', constrained to start with b'.pyth'")
    _check_speculative(lines, tok)
    assert lines == _lines(5, tok)  # seeded: the same output every run


def test_section_5_without_the_speculative_module(tok: tokstream.Tokenizer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokstream.constrain.speculative", None)
    assert "not available" in demo.speculative(tok)


# ----------------------------------------------------------- 6. JSON output


def _check_json_output(lines: list[str], encode: Callable[[str], list[int]] | None) -> None:
    """Section 6's claims, held to jsonschema and the reference tokenizer's ids."""
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(_after(lines, "schema: "))
    assert schema == demo.TOOL_SCHEMA
    good = json.dumps(demo.GOOD_CALL)
    jsonschema.validate(demo.GOOD_CALL, schema)
    m = re.fullmatch(r"(\d+) of (\d+) tokens allowed, complete: True", _after(lines, f"valid call: {good}: "))
    assert m is not None and m.group(1) == m.group(2)
    assert encode is None or int(m.group(2)) == len(encode(good))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(demo.BAD_CALL, schema)
    bad = json.dumps(demo.BAD_CALL)
    m = re.fullmatch(
        r"refused at token (\d+) of (\d+) \((b'.*') after (b'.*')\)", _after(lines, f"out-of-range call: {bad}: ")
    )
    assert m is not None and (encode is None or int(m.group(2)) == len(encode(bad)))
    # The refusal comes where the text stops being a prefix of any valid call: at the
    # day count (every valid call's "days" is 1..7, so "12"'s first digit may pass).
    assert bad.encode().startswith(ast.literal_eval(m.group(4)) + ast.literal_eval(m.group(3)))
    assert b'"days": ' in ast.literal_eval(m.group(4)) + ast.literal_eval(m.group(3))
    m = re.fullmatch(
        r"random walk \(whitespace='compact', numpy seed \d+, (\d+) tokens\): (.*)", _line(lines, "random walk").strip()
    )
    assert m is not None
    text = ast.literal_eval(m.group(2))
    jsonschema.validate(json.loads(text), schema)
    assert json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False) == text  # compact
    assert _after(lines, "complete: ") == "True; json.loads reads it: True"


def test_section_6_json_output(tok: tokstream.Tokenizer, reference: Callable[[str], Any]) -> None:
    lines = _lines(6, tok)
    ref = reference(tok.name)
    _check_json_output(lines, ref.encode)
    assert lines == _lines(6, tok)  # seeded: the same output every run


# ----------------------------------------------------------- the program


@pytest.mark.slow
def test_python_m_tokstream_demo() -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "tokstream", "demo"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert [ln for ln in lines if ln.startswith("== ")] == HEADERS
    assert elapsed < 60, f"tokstream demo took {elapsed:.1f} s"
    parts = _sections(proc.stdout)
    assert parts[1] == _lines(1, tokstream.load("default"))  # the same text as in-process


def test_demo_section_option(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--section", "2"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(HEADERS[1] + "\n")
    assert sum(ln.startswith("== ") for ln in out.splitlines()) == 1
    assert main(["demo", "--section", "9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tokstream: error: ") and "--section" in err
    assert main(["demo", "-t", "cl100k"]) == 1
    assert "unknown tokenizer 'cl100k'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "hf/llama3_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
def test_demo_other_tokenizers(capsys: pytest.CaptureFixture[str], reference: Callable[[str], Any], name: str) -> None:
    """``tokstream demo --tokenizer``: every section runs and keeps its claims; ids and
    the chat prompts' ids are the reference library's."""
    arg = name if "/" not in name else str(fixture_file(name))
    assert main(["demo", "--tokenizer", arg]) == 0
    out = capsys.readouterr().out
    assert [ln for ln in out.splitlines() if ln.startswith("== ")] == HEADERS
    tok = tokstream.load(arg)
    parts = _sections(out)
    # Each library's own reading of the prompts' special tokens (tiktoken: allowed;
    # tokenizers: added tokens are always read; sentencepiece: never, so our own).
    encode: Callable[[str], list[int]]
    if name == "cl100k_base":
        ref = reference(name)
        ids_ref = ref.encode(demo.ENCODE_TEXT)
        encode = lambda text: ref.encode(text, allowed_special="all")
    elif name.startswith("hf/"):
        hf = hf_reference(Path(arg))
        ids_ref = hf.encode(demo.ENCODE_TEXT, add_special_tokens=False).ids
        encode = lambda text: hf.encode(text, add_special_tokens=False).ids
    else:
        spm = pytest.importorskip("sentencepiece").SentencePieceProcessor(model_file=arg)
        ids_ref = spm.encode(demo.ENCODE_TEXT)
        encode = lambda text: tok.encode(text, allowed_special="all")
        assert _after(parts[4], "chat format: ").startswith("[INST] with <s> and </s>")
    ids = _literal(parts[1], "ids: ")
    assert ids == ids_ref
    assert _literal(parts[1], "decode(ids): ") == tok.decode(ids)
    assert _after(parts[2], "joined: ").endswith("; equals tok.decode(ids): True")
    assert _after(parts[2], "  stopped: ").startswith("True")
    assert parts[3][-1].endswith("the constraint allows it: True")
    _check_chat(parts[4], encode)
    if importlib.util.find_spec("tokstream.constrain.speculative") is not None:
        _check_speculative(parts[5], tok)
    # SentencePiece's encode adds a leading space: the demo walks a longest-match
    # spelling of the exact bytes instead, so its count is not encode's.
    _check_json_output(parts[6], None if name.startswith("spm/") else encode)


def test_doctests() -> None:
    import doctest

    result = doctest.testmod(demo, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
