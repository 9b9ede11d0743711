"""StreamDecoder against the one-shot decode, on every fixture tokenizer.

References are never our own streaming code: ``tok.decode`` (itself tested against
tiktoken / tokenizers / sentencepiece), a fresh ``codecs`` incremental decoder over
``tok.decode_bytes`` of the ids so far, ``tokenizers``, or literal strings.
"""

from __future__ import annotations

import codecs
import json
import re
from functools import cache

import numpy as np
import pytest
from helpers import BYTE_LEVEL_IDS, CORPORA, TOKENIZER_IDS, fixture_text, fixture_tokenizer
from hypothesis import given
from hypothesis import strategies as st
from strategies import adversarial_text, hyp_settings

import tokstream
from tokstream.errors import InvalidTokenIdError, TokstreamError
from tokstream.stream.decoder import StreamDecoder

OTHER_IDS = tuple(t for t in TOKENIZER_IDS if t not in BYTE_LEVEL_IDS)
#: Tokenizers whose decode is not the joined token bytes.
NON_BYTE_IDS = tuple(t for t in TOKENIZER_IDS if t.startswith(("spm/", "hf/mistral", "hf/bert", "hf/botchan")))
_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def incremental_reference(tok, ids) -> str:
    """What a fresh incremental UTF-8 decoder shows for the bytes of ``ids``."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(tok.decode_bytes(ids), final=False)


def run_steps(dec: StreamDecoder, ids) -> list[str]:
    return [dec.step(i) for i in ids]


def check_byte_level_steps(tok, ids, **kw) -> None:
    """After every step the output so far is the incremental decode of the bytes so far;
    at the end it is ``tok.decode``."""
    dec = StreamDecoder(tok, **kw)
    out = ""
    for k, i in enumerate(ids, 1):
        out += dec.step(i)
        assert out == incremental_reference(tok, ids[:k]), f"after {k} ids {ids[:k]}"
    out += dec.finish()
    assert out == tok.decode(ids)
    assert dec.text == out


def is_byte_piece(tok, i: int) -> bool:
    return _BYTE_PIECE.fullmatch(tok.id_to_token(i)) is not None


def check_joined(tok, ids, *, eager: bool = False) -> None:
    """The joined output equals ``tok.decode`` (both skip settings); with ``eager``, the
    output after every id that closes a byte run (not a byte piece, not a skipped
    special) equals the decode of the ids so far: nothing else is held back."""
    for skip in (False, True):
        dec = StreamDecoder(tok, skip_special_tokens=skip)
        skipped = set(tok.special_tokens.values()) if skip else set()
        out = ""
        for k, i in enumerate(ids, 1):
            out += dec.step(i)
            if eager and not is_byte_piece(tok, i) and i not in skipped:
                assert out == tok.decode(ids[:k], skip_special_tokens=skip), f"after {k} ids {ids[:k]}"
        out += dec.finish()
        assert out == tok.decode(ids, skip_special_tokens=skip), ids
        assert dec.text == out


@cache
def corpus_lines(name: str, n_lines: int = 40, max_chars: int = 400) -> tuple[str, ...]:
    text = fixture_text(f"corpora/{name}")
    lines = [line[:max_chars] for line in text.splitlines(keepends=True) if line.strip()]
    return tuple(lines[:n_lines])


@cache
def id_pools(tid: str) -> tuple[list[int], list[int]]:
    """(byte ids, special ids): ids spelling one byte (``<0xXX>`` or a single byte
    token) and special ids, to weight random id sequences toward the hard cases."""
    tok = fixture_tokenizer(tid)
    byte_ids = []
    for i in range(min(tok.n_vocab, 2000)):
        try:
            data = tok.token_bytes(i)
        except ValueError:
            continue
        if is_byte_piece(tok, i) or (len(data) == 1 and data[0] >= 0x80):
            byte_ids.append(i)
    return byte_ids, sorted(tok.special_tokens.values())


def random_ids(tid: str) -> st.SearchStrategy[list[int]]:
    tok = fixture_tokenizer(tid)
    byte_ids, special_ids = id_pools(tid)

    def valid(i: int) -> bool:
        try:
            tok.token_bytes(i)
        except ValueError:
            return False
        return True

    choices: list[st.SearchStrategy] = [st.integers(0, tok.n_vocab - 1).filter(valid)]
    if byte_ids:  # runs of single bytes: split characters and invalid UTF-8
        choices.append(st.lists(st.sampled_from(byte_ids), min_size=1, max_size=6))
    if special_ids:
        choices.append(st.sampled_from(special_ids))
    return st.lists(st.one_of(*choices), max_size=24).map(
        lambda xs: [j for x in xs for j in (x if isinstance(x, list) else [x])]
    )


# ------------------------------------------------------------------ corpora


@pytest.mark.parametrize("tid", BYTE_LEVEL_IDS)
def test_byte_level_every_step_on_corpora(tid):
    tok = fixture_tokenizer(tid)
    for name in CORPORA:
        for line in corpus_lines(name):
            check_byte_level_steps(tok, tok.encode(line, disallowed_special=()))


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
def test_joined_output_equals_decode_on_corpora(tid):
    tok = fixture_tokenizer(tid)
    eager = tid in NON_BYTE_IDS
    for name in CORPORA:
        for line in corpus_lines(name, n_lines=12 if eager else 40, max_chars=200 if eager else 400):
            check_joined(tok, tok.encode(line, disallowed_special=()), eager=eager)
        # one long chunk, across lines
        chunk = fixture_text(f"corpora/{name}")[:6000]
        ids = tok.encode(chunk, disallowed_special=())
        dec = StreamDecoder(tok)
        assert "".join(run_steps(dec, ids)) + dec.finish() == tok.decode(ids)


# ------------------------------------------------------------------ hypothesis


@pytest.mark.parametrize("tid", BYTE_LEVEL_IDS)
@hyp_settings(60)
@given(data=st.data())
def test_byte_level_every_step_random_ids(tid, data):
    tok = fixture_tokenizer(tid)
    ids = data.draw(random_ids(tid))
    check_byte_level_steps(tok, ids)
    # skipping: the incremental reference over the ids without specials
    special = set(tok.special_tokens.values())
    dec = StreamDecoder(tok, skip_special_tokens=True)
    out = ""
    kept: list[int] = []
    for i in ids:
        out += dec.step(i)
        if i not in special:
            kept.append(i)
        assert out == incremental_reference(tok, kept)
    assert out + dec.finish() == tok.decode(ids, skip_special_tokens=True)


@pytest.mark.parametrize("tid", BYTE_LEVEL_IDS)
@hyp_settings(60)
@given(text=adversarial_text())
def test_byte_level_every_step_adversarial_text(tid, text):
    tok = fixture_tokenizer(tid)
    check_byte_level_steps(tok, tok.encode(text, disallowed_special=()))


@pytest.mark.slow
@pytest.mark.parametrize("tid", OTHER_IDS)
@hyp_settings(60)
@given(data=st.data())
def test_joined_output_random_ids(tid, data):
    tok = fixture_tokenizer(tid)
    check_joined(tok, data.draw(random_ids(tid)), eager=tid in NON_BYTE_IDS)


@pytest.mark.parametrize("tid", OTHER_IDS)
@hyp_settings(60)
@given(text=adversarial_text())
def test_joined_output_adversarial_text(tid, text):
    tok = fixture_tokenizer(tid)
    check_joined(tok, tok.encode(text, disallowed_special=()))


@pytest.mark.slow
@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(40)
@given(data=st.data())
def test_push_equals_steps(tid, data):
    """push(chunk) returns what the steps of that chunk return, for random chunkings."""
    tok = fixture_tokenizer(tid)
    ids = data.draw(random_ids(tid))
    skip = data.draw(st.booleans())
    by_step = StreamDecoder(tok, skip_special_tokens=skip)
    by_push = StreamDecoder(tok, skip_special_tokens=skip)
    sizes = data.draw(st.lists(st.integers(1, 5), min_size=len(ids), max_size=len(ids)))
    k = 0
    for size in sizes:
        chunk = ids[k : k + size]
        assert by_push.push(chunk) == "".join(run_steps(by_step, chunk))
        assert by_push.push([]) == ""
        k += size
    assert by_push.finish() == by_step.finish()
    assert by_push.text == by_step.text == tok.decode(ids, skip_special_tokens=skip)


@pytest.mark.parametrize("tid", TOKENIZER_IDS)
@hyp_settings(40)
@given(data=st.data())
def test_prefix_ids_continue_the_prompt(tid, data):
    """Output == decode(prompt + ids) minus what a stream finalizes for the prompt."""
    tok = fixture_tokenizer(tid)
    ids = data.draw(random_ids(tid))
    cut = data.draw(st.integers(0, len(ids)))
    prompt, rest = ids[:cut], ids[cut:]
    shown = StreamDecoder(tok).push(prompt)  # the prompt's final text
    full = tok.decode(prompt + rest)
    assert full.startswith(shown)
    dec = StreamDecoder(tok, prefix_ids=prompt)
    assert "".join(run_steps(dec, rest)) + dec.finish() == full[len(shown) :]


# ------------------------------------------------------------------ named cases


def test_emoji_split_over_byte_tokens():
    tok = fixture_tokenizer("o200k_base")
    # tiktoken: "👋" -> b" \xf0\x9f\x91" + b"\x8b" (README)
    dec = StreamDecoder(tok)
    assert dec.step(61138) == " "
    assert dec.step(233) == "👋"
    assert dec.finish() == ""
    cl = fixture_tokenizer("cl100k_base")
    ids = cl.encode("a👨‍👩‍👧 b")
    check_byte_level_steps(cl, ids)


@pytest.mark.parametrize("tid", ["o200k_base", "cl100k_base", "hf/llama3_tokenizer.json", "r50k_base"])
@pytest.mark.parametrize(
    "text", ["สวัสดีครับ ภาษาไทย", "한국어 문장입니다", "吾輩は猫である。名前はまだ無い。", "鬱々とした𠮷野家"]
)
def test_scripts_split_over_byte_tokens(tid, text):
    tok = fixture_tokenizer(tid)
    ids = tok.encode(text)
    pieces = [tok.token_bytes(i) for i in ids]
    if tid == "r50k_base":  # GPT-2 splits nearly every non-Latin character
        assert any(_not_utf8(p) for p in pieces)
    check_byte_level_steps(tok, ids)
    dec = StreamDecoder(tok)
    assert dec.push(ids) + dec.finish() == text


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.parametrize("tid", ["hf/mistral_7b_v1_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
def test_byte_fallback_characters(tid):
    tok = fixture_tokenizer(tid)
    text = "吾輩は𠮷 한국어 สวัสดี"
    ids = tok.encode(text)
    assert any(is_byte_piece(tok, i) for i in ids)  # some characters are <0xXX> runs
    dec = StreamDecoder(tok)
    out = "".join(run_steps(dec, ids)) + dec.finish()
    assert out == text


@pytest.mark.parametrize("tid", ["spm/mistral_7b_v1_tokenizer.model", "hf/mistral_7b_v1_tokenizer.json"])
@pytest.mark.parametrize("text", [" Hello", "  Hello", "Hello  world", "   ", "a   b", "  \n  x  ", " ", "\n"])
def test_sentencepiece_leading_spaces_and_runs(tid, text):
    # The Mistral model keeps whitespace (no extra-whitespace removal), so its decode
    # round-trips: the text itself is the reference.
    tok = fixture_tokenizer(tid)
    ids = tok.encode(text)
    check_joined(tok, ids, eager=True)
    dec = StreamDecoder(tok)
    assert "".join(run_steps(dec, ids)) + dec.finish() == text
    bos = tok.special_tokens["<s>"]
    check_joined(tok, [bos] + ids + ids, eager=True)
    check_joined(tok, ids + tok.encode("▁ x▁"), eager=True)


@pytest.mark.parametrize(
    "tid",
    [
        "spm/spm_botchan_en_bpe_1000.model",
        "spm/spm_botchan_en_unigram_1000.model",
        "hf/botchan_unigram_1000_tokenizer.json",
    ],
)
@pytest.mark.parametrize("text", [" Hello", "  Hello  world ", "a   b", "   "])
def test_botchan_spaces(tid, text):
    tok = fixture_tokenizer(tid)
    ids = tok.encode(text)
    specials = sorted(tok.special_tokens.values())
    check_joined(tok, ids, eager=True)
    check_joined(tok, specials + ids + specials[::-1] + ids, eager=True)


def test_mistral_json_first_space_stripped_once():
    tok = fixture_tokenizer("hf/mistral_7b_v1_tokenizer.json")
    # [259 "▁▁", 22557 "▁Hello"]: Strip(start=1) drops one space of the fused text
    dec = StreamDecoder(tok)
    assert run_steps(dec, [259, 22557]) == [" ", " Hello"]
    bos = tok.special_tokens["<s>"]
    dec = StreamDecoder(tok)
    assert run_steps(dec, [bos, 259, 22557]) == ["<s>", "  ", " Hello"]
    dec = StreamDecoder(tok, skip_special_tokens=True)
    assert run_steps(dec, [bos, 259, 22557]) == ["", " ", " Hello"]


def test_prompt_ending_mid_character():
    tok = fixture_tokenizer("o200k_base")
    ids = tok.encode("Hi 👋!")  # [12194, 61138, 233, ...]: the emoji's bytes span two tokens
    assert ids[1:3] == [61138, 233]
    dec = StreamDecoder(tok, prefix_ids=ids[:2])  # the prompt shows "Hi "
    assert dec.step(233) == "👋"
    assert dec.push(ids[3:]) == "!"
    assert dec.finish() == ""
    assert dec.text == "👋!"


@pytest.mark.parametrize("tid", ["hf/mistral_7b_v1_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
def test_prompt_ending_inside_byte_run(tid):
    tok = fixture_tokenizer(tid)
    ids = tok.encode("吾輩")  # "▁" then six <0xXX> pieces
    assert sum(is_byte_piece(tok, i) for i in ids) == 6
    for cut in range(1, len(ids)):
        prompt, rest = ids[:cut], ids[cut:]
        shown = StreamDecoder(tok).push(prompt)
        dec = StreamDecoder(tok, prefix_ids=prompt)
        out = "".join(run_steps(dec, rest)) + dec.finish()
        assert shown + out == "吾輩"
        if cut in (2, 3):  # the prompt ends inside 吾: it cannot show it, the stream does
            assert out.startswith("吾")
        if cut in (5, 6):
            assert out.endswith("輩") and "輩" not in shown


def test_prompt_then_first_token_rules():
    # The prompt's first token took the first-token rule; generated tokens do not.
    tok = fixture_tokenizer("hf/bert_minilm_tokenizer.json")
    ids = tok.encode("hello world, isn't it")
    dec = StreamDecoder(tok, prefix_ids=ids[:1])
    assert dec.push(ids[1:]) + dec.finish() == tok.decode(ids)[len(tok.decode(ids[:1])) :]
    assert dec.text.startswith(" world")


@pytest.mark.parametrize(
    "tid",
    ["o200k_base", "cl100k_base", "hf/mistral_7b_v1_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"],
)
def test_real_replacement_character(tid):
    tok = fixture_tokenizer(tid)
    text = "a\ufffdb \ufffd\ufffd c\ufffd"
    ids = tok.encode(text)
    dec = StreamDecoder(tok)
    assert "".join(run_steps(dec, ids)) + dec.finish() == text
    if tid in BYTE_LEVEL_IDS:
        check_byte_level_steps(tok, ids)


@cache
def byte_token(tid: str, value: int) -> int:
    """The id of the token spelling the single byte ``value``."""
    tok = fixture_tokenizer(tid)
    piece = tok.token_to_id(f"<0x{value:02X}>")
    if piece is not None:
        return piece
    for i in range(1000):  # tiktoken encodings put the 256 single bytes first
        if tok.token_bytes(i) == bytes([value]):
            return i
    raise LookupError(value)


@pytest.mark.parametrize(
    "tid",
    [
        "o200k_base",
        "cl100k_base",
        "hf/llama3_tokenizer.json",
        "hf/mistral_7b_v1_tokenizer.json",
        "spm/mistral_7b_v1_tokenizer.model",
    ],
)
def test_five_invalid_bytes_each_shown_at_once(tid):
    tok = fixture_tokenizer(tid)
    bad = [byte_token(tid, b) for b in (0xFF, 0xFE, 0xC0, 0x80, 0xF5)]
    dec = StreamDecoder(tok)
    assert run_steps(dec, bad) == ["\ufffd"] * 5
    assert dec.finish() == ""
    assert dec.text == tok.decode(bad) == "\ufffd" * 5


@pytest.mark.parametrize(
    "tid",
    [
        "o200k_base",
        "hf/llama3_tokenizer.json",
        "hf/mistral_7b_v1_tokenizer.json",
        "spm/mistral_7b_v1_tokenizer.model",
    ],
)
def test_partial_character_flushed_by_finish(tid):
    tok = fixture_tokenizer(tid)
    ids = [byte_token(tid, 0x61), byte_token(tid, 0xE5), byte_token(tid, 0x90)]  # "a" + 2 of 3 bytes
    dec = StreamDecoder(tok)
    steps = run_steps(dec, ids)
    end = dec.finish()
    assert "".join(steps) + end == tok.decode(ids)
    assert end.endswith("\ufffd") and "\ufffd" not in "".join(steps)
    if tid in BYTE_LEVEL_IDS:
        assert steps == ["a", "", ""] and end == "\ufffd"


def test_hf_byte_fallback_run_invalid_later_turns_whole_run():
    # tokenizers' ByteFallback: a run with any invalid byte is one U+FFFD per byte,
    # so a valid prefix of a run must wait until the run ends.
    tok = fixture_tokenizer("hf/mistral_7b_v1_tokenizer.json")
    run = [byte_token("hf/mistral_7b_v1_tokenizer.json", b) for b in (0xE5, 0x90, 0xBE, 0xFF, 0x41)]
    dec = StreamDecoder(tok)
    steps = run_steps(dec, run)
    assert steps[:3] == ["", "", ""]  # 吾 is complete but the run may still fail
    assert steps[3] == "\ufffd" * 4
    assert steps[4] == "\ufffd"
    assert "".join(steps) + dec.finish() == tok.decode(run) == "\ufffd" * 5


def test_skip_special_tokens():
    tok = fixture_tokenizer("o200k_base")
    ids = tok.encode("hello<|endoftext|>world", allowed_special="all")
    assert StreamDecoder(tok, skip_special_tokens=True).push(ids) == "helloworld"
    assert StreamDecoder(tok).push(ids) == "hello<|endoftext|>world"
    eot = tok.special_tokens["<|endoftext|>"]
    dec = StreamDecoder(tok, skip_special_tokens=True)
    assert run_steps(dec, [61138, eot, 233]) == [" ", "", "👋"]  # the bytes join around it
    dec = StreamDecoder(tok)
    out = "".join(run_steps(dec, [61138, eot, 233])) + dec.finish()
    assert out == tok.decode([61138, eot, 233]) == " \ufffd<|endoftext|>\ufffd"


@pytest.mark.parametrize("tid", NON_BYTE_IDS)
def test_skip_special_tokens_pipelines(tid):
    tok = fixture_tokenizer(tid)
    specials = sorted(tok.special_tokens.values())
    ids = tok.encode("Hello world. It isn't 吾輩.")
    for seq in (specials[:1] + ids + specials[-1:], ids[:2] + specials + ids[2:]):
        check_joined(tok, seq, eager=True)


def _with_added_token(tmp_path, name: str, content: str):
    data = json.loads(fixture_text(f"hf/{name}"))
    vocab = data["model"]["vocab"]
    top = max(
        [
            *(vocab.values() if isinstance(vocab, dict) else [len(vocab) - 1]),
            *(t["id"] for t in data["added_tokens"]),
        ]
    )
    data["added_tokens"].append(
        {
            "id": top + 1,
            "content": content,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": False,
        }
    )
    data["padding"] = data["truncation"] = None
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, top + 1


def test_added_non_special_token_gpt2(tmp_path):
    path, new = _with_added_token(tmp_path, "gpt2_tokenizer.json", "<tool>")
    tok = tokstream.Tokenizer.from_file(path)
    hello, world = tok.encode("hello"), tok.encode(" world")
    ids = hello + [new] + [new] + world + [new]
    dec = StreamDecoder(tok)
    assert "".join(run_steps(dec, ids)) + dec.finish() == "hello<tool><tool> world<tool>"
    tokenizers = pytest.importorskip("tokenizers")
    ref = tokenizers.Tokenizer.from_file(str(path))
    assert dec.text == ref.decode(ids, skip_special_tokens=False)
    assert StreamDecoder(tok, skip_special_tokens=True).push(ids) == ref.decode(ids, skip_special_tokens=True)


def test_added_token_outside_the_byte_alphabet_gpt2(tmp_path):
    """tokenizers' ByteLevel decoder keeps a token holding a character outside the
    byte alphabet (here a space next to "Ġ") as its UTF-8, whole."""
    path, new = _with_added_token(tmp_path, "gpt2_tokenizer.json", " fooĠ")
    tok = tokstream.Tokenizer.from_file(path)
    ids = tok.encode("hello") + [new] + tok.encode(" world")
    tokenizers = pytest.importorskip("tokenizers")
    want = tokenizers.Tokenizer.from_file(str(path)).decode(ids, skip_special_tokens=False)
    dec = StreamDecoder(tok)
    assert "".join(run_steps(dec, ids)) + dec.finish() == want == tok.decode(ids)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("bert_minilm_tokenizer.json", "[TOOL]"),
        ("mistral_7b_v1_tokenizer.json", "<tool>"),
        ("botchan_unigram_1000_tokenizer.json", "<tool>"),
    ],
)
def test_added_non_special_token_pipelines(tmp_path, name, content):
    # Added tokens go through the decoder as tokenizers does (WordPiece puts a space
    # before a non-"##" token, added or not); compare with tokenizers itself.
    tokenizers = pytest.importorskip("tokenizers")
    path, new = _with_added_token(tmp_path, name, content)
    tok = tokstream.Tokenizer.from_file(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    words = tok.encode("hello world.")
    specials = sorted(tok.special_tokens.values())[:1]
    for ids in (
        [new] + words,
        words[:1] + [new, new] + words[1:] + [new],
        specials + [new] + words + specials,
    ):
        for skip in (False, True):
            dec = StreamDecoder(tok, skip_special_tokens=skip)
            out = "".join(run_steps(dec, ids)) + dec.finish()
            assert out == ref.decode(ids, skip_special_tokens=skip) == tok.decode(ids, skip_special_tokens=skip)


@pytest.mark.parametrize(
    "tid",
    [
        "o200k_base",
        "cl100k_base",
        "hf/mistral_7b_v1_tokenizer.json",
        "hf/bert_minilm_tokenizer.json",
        "spm/mistral_7b_v1_tokenizer.model",
    ],
)
def test_invalid_ids_raise_and_leave_stream_usable(tid):
    tok = fixture_tokenizer(tid)
    ids = tok.encode("naïve 👋 吾輩 done")
    holes = [100256] if tid == "cl100k_base" else []
    bad_ids = [-1, tok.n_vocab, tok.n_vocab + 7, 10**12, "5", 1.5, None, *holes]
    for skip in (False, True):
        dec = StreamDecoder(tok, skip_special_tokens=skip)
        out = ""
        for k, i in enumerate(ids):
            out += dec.step(i)
            bad = bad_ids[k % len(bad_ids)]
            with pytest.raises(ValueError):
                dec.step(bad)
            with pytest.raises(InvalidTokenIdError):
                dec.push([i, bad, i])  # checked before any id is used
        out += dec.finish()
        assert out == dec.text == tok.decode(ids, skip_special_tokens=skip)
    with pytest.raises(ValueError):
        StreamDecoder(tok, prefix_ids=[ids[0], -3])


def test_invalid_id_mid_character():
    tok = fixture_tokenizer("o200k_base")
    dec = StreamDecoder(tok)
    assert dec.step(61138) == " "
    with pytest.raises(InvalidTokenIdError):
        dec.step(tok.n_vocab)
    with pytest.raises(InvalidTokenIdError):
        dec.push([233, -1])
    assert dec.step(233) == "👋"


def test_numpy_and_bool_ids():
    tok = fixture_tokenizer("o200k_base")
    ids = np.array(tok.encode("Hi 👋 there"), dtype=np.int64)
    dec = StreamDecoder(tok)
    assert "".join(dec.step(i) for i in ids) + dec.finish() == "Hi 👋 there"
    assert StreamDecoder(tok).push(ids) == "Hi 👋 there"
    assert StreamDecoder(tok).push(ids.tolist()) == "Hi 👋 there"


@pytest.mark.parametrize("tid", ["o200k_base", "hf/mistral_7b_v1_tokenizer.json", "spm/mistral_7b_v1_tokenizer.model"])
def test_fork_is_independent(tid):
    tok = fixture_tokenizer(tid)
    head = tok.encode("go 吾")[:-1]  # ends inside a character (or a byte run)
    a = StreamDecoder(tok)
    shown = a.push(head)
    b = a.fork()
    tail_a, tail_b = tok.encode("go 吾 one")[len(head) :], tok.encode("go 吾輩 two")[len(head) :]
    out_a = a.push(tail_a) + a.finish()
    out_b = b.push(tail_b) + b.finish()
    assert shown + out_a == tok.decode(head + tail_a)
    assert shown + out_b == tok.decode(head + tail_b)
    assert a.text == shown + out_a and b.text == shown + out_b


def test_finish_ends_the_stream():
    tok = fixture_tokenizer("o200k_base")
    dec = StreamDecoder(tok)
    dec.step(61138)
    assert dec.finish() == "\ufffd"
    assert dec.finish() == ""
    with pytest.raises(TokstreamError):
        dec.step(233)
    with pytest.raises(TokstreamError):
        dec.push([233])
    assert dec.text == " \ufffd"


# Decoder shapes the fixtures do not have, built by swapping the decoder of the Mistral
# tokenizer.json; the stream must still equal tok.decode (the one named "hold..." holds
# everything until finish: no streaming rule is known for it).
_SHAPES = {
    "none": None,
    "bpe_decoder": {"type": "BPEDecoder", "suffix": "▁"},
    "fused_strip_both_ends": {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 2, "stop": 2},
        ],
    },
    "token_strip": {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "Strip", "content": " ", "start": 1, "stop": 1},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
        ],
    },
    "metaspace_never": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True},
    "metaspace_first_bytes": {
        "type": "Sequence",
        "decoders": [
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True},
            {"type": "ByteFallback"},
        ],
    },
    "wordpiece_regex": {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"Regex": "\\A▁"}, "content": ""},
            {"type": "WordPiece", "prefix": "##", "cleanup": True},
        ],
    },
    "hold_replace_after_fuse": {
        "type": "Sequence",
        "decoders": [
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Replace", "pattern": {"String": "▁▁"}, "content": "_"},
        ],
    },
    "metaspace_after_bytes": {
        "type": "Sequence",
        "decoders": [
            {"type": "ByteFallback"},
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        ],
    },
}


@cache
def _shape_tokenizer(shape: str, folder: str) -> tokstream.Tokenizer:
    data = json.loads(fixture_text("hf/mistral_7b_v1_tokenizer.json"))
    data["decoder"] = _SHAPES[shape]
    path = f"{folder}/{shape}.json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return tokstream.Tokenizer.from_file(path)


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(_SHAPES))
@hyp_settings(40)
@given(data=st.data())
def test_other_decoder_shapes(tmp_path_factory, shape, data):
    tok = _shape_tokenizer(shape, str(tmp_path_factory.getbasetemp()))
    pool = st.one_of(st.integers(0, 600), st.sampled_from([259, 28705, 28723, 28742, 1, 2]))  # bytes, ▁, ., ', <s>
    ids = data.draw(st.lists(pool, max_size=16))
    check_joined(tok, ids, eager=not shape.startswith("hold") and "strip_both" not in shape and "bpe" not in shape)
    cut = data.draw(st.integers(0, len(ids)))
    dec = StreamDecoder(tok, prefix_ids=ids[:cut])
    out = dec.push(ids[cut:]) + dec.finish()
    full, prompt = tok.decode(ids), tok.decode(ids[:cut])
    if shape.startswith("hold"):
        k = 0  # the hold kind removes the prompt's decode as far as the full decode agrees
        while k < min(len(full), len(prompt)) and full[k] == prompt[k]:
            k += 1
        assert out == full[k:]
    else:
        shown = StreamDecoder(tok).push(ids[:cut])
        assert full.startswith(shown) and out == full[len(shown) :]


def test_fused_strip_across_tokens(tmp_path_factory):
    # Strip(start=2, stop=2) of the fused text: the two leading spaces may come from two
    # tokens, and trailing spaces are only known at the end.
    tok = _shape_tokenizer("fused_strip_both_ends", str(tmp_path_factory.getbasetemp()))
    space, word = tok.token_to_id("▁"), tok.token_to_id("Hi")
    for ids in ([space, space, space, word], [space, word, space, space, space], [space] * 5, [word, space]):
        dec = StreamDecoder(tok)
        steps = [dec.step(i) for i in ids]
        assert "".join(steps) + dec.finish() == tok.decode(ids), ids
    dec = StreamDecoder(tok)
    assert [dec.step(i) for i in [space, space, space, word, space, space, space]] == [
        "",
        "",
        "",
        " Hi",
        "",
        "",
        " ",
    ]
    assert dec.finish() == ""
