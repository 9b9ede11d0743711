"""The compiled text encoder (``tokstream._native.TextEncoder``, ``_native_text.c``)
against the pure-Python path it replaces, and against tiktoken and tokenizers.

Each side is independent: the pure path splits with the ``regex`` module (by Unicode
16.0 stand-ins, ``pre_tokenizers/unicode16.py``) and merges with ``models/ranks.py`` /
``models/bpe.py``; the compiled one hand-writes each pattern's split over UTF-8 and
merges in C. Every fixture tokenizer whose pre-tokenizer is a named pattern is covered:
the four rank files, GPT-2's and Llama 3's ``tokenizer.json``.

- pieces: ``TextEncoder.split`` equals the pure ``findall`` on hypothesis text built
  to meet every branch of the scanners (contractions in every case and with U+017F,
  marks, title-case and modifier letters, other scripts' digits, every White_Space
  character, ``\\r``/``\\n``/``/`` runs, text ending in whitespace) and on characters
  whose class changed after Unicode 16.0;
- ids: ``TextEncoder.encode`` equals the pure path's, and the tokenizer's equal
  tiktoken's / tokenizers' on the same text;
- the piece cache: ids stay exact across its clearing (more unique merged pieces than
  it holds), and threads sharing one encoder get the same ids as one thread.
"""

from __future__ import annotations

import functools
import random
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from helpers import fixture_file, fixture_tokenizer, hf_reference, tiktoken_reference
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import adversarial_text, max_examples

import tokstream
from tokstream.byte_level import bytes_to_proxy
from tokstream.models import RankBPE
from tokstream.pre_tokenizers.unicode16 import _differing

#: The fixture tokenizers whose pre-tokenizer the compiled encoder splits.
NAMED = ["cl100k_base", "o200k_base", "r50k_base", "p50k_base", "hf/gpt2_tokenizer.json", "hf/llama3_tokenizer.json"]

pytestmark = pytest.mark.skipif(
    not tokstream.native_available(),
    reason="the compiled core is not built here (pip install . with a C compiler) or TOKSTREAM_PURE is set",
)

#: Characters that meet every branch of the four scanners.
_ALPHABET = (
    "aeiostdmlvrAESTDMLVRzZ"  # letters of the contractions, both cases
    "'\u2019\u017f"  # apostrophes, U+017F LATIN SMALL LETTER LONG S (folds to s)
    "\u01c5\u02b0\u00aa\u0301\u0903\u20dd"  # Lt, Lm, Lo, Mn, Mc, Me
    "\u00e9\u00c9\u0416\u0436\u05d0\u4e2d\u3042\u30a2\U00020000"  # cased and uncased letters
    "0123\u0663\u2167\u00bd"  # Nd, Arabic-Indic Nd, Nl, No
    " \t\n\r\x0b\x0c\x85\u00a0\u1680\u2000\u2028\u2029\u202f\u205f\u3000"  # White_Space
    '\x1c!?./,-_()[]{}#@$%^&*+=|\\~`"<>'  # other, and / for o200k's tail
    "\U0001f600\ufeff\u200b"  # emoji, format characters (not White_Space)
)


@functools.lru_cache(maxsize=1)
def _changed() -> list[str]:
    """A spread of the characters the installed ``regex`` classes unlike Unicode 16.0."""
    chars = sorted(_differing())
    return chars[:: max(1, len(chars) // 200)]


def _text() -> st.SearchStrategy[str]:
    odd = st.sampled_from(_changed() or ["\u0295"])
    return st.one_of(
        st.text(alphabet=st.sampled_from(_ALPHABET), max_size=60),
        adversarial_text(surrogates_ok=False),
        st.lists(st.one_of(st.sampled_from(_ALPHABET), odd), max_size=40).map("".join),
    )


def _native(tid: str) -> Any:
    """The tokenizer's compiled ``TextEncoder`` (built by a first encode)."""
    tok = fixture_tokenizer(tid)
    fast = tok.pipeline._fast
    assert fast is not None
    fast.encode("warm-up")
    assert fast._native is not None, f"{tid}: the compiled text encoder did not start"
    return fast._native.__self__  # type: ignore[attr-defined]


def _pure_pieces(tid: str, text: str) -> list[str]:
    split = fixture_tokenizer(tid).pipeline.regex_split
    assert split is not None
    return split.findall_unicode16(text)


def _pure_ids(tid: str, text: str) -> list[int]:
    """The pure path's ids: the ``regex`` split, then the pure merge loop."""
    model = fixture_tokenizer(tid).pipeline.model
    out: list[int] = []
    for piece in _pure_pieces(tid, text):
        if isinstance(model, RankBPE):
            out += model.encode_bytes_pure(piece.encode("utf-8"))
        else:
            out += model.encode_piece_pure(bytes_to_proxy(piece.encode("utf-8")))
    return out


@pytest.mark.parametrize("tid", NAMED)
@settings(max_examples=max_examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text())
def test_split_and_ids_equal_the_pure_path(tid: str, text: str) -> None:
    encoder = _native(tid)
    assert encoder.split(text) == _pure_pieces(tid, text)
    assert encoder.encode(text) == _pure_ids(tid, text)
    assert encoder.count(text) == len(encoder.encode(text))


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "r50k_base", "p50k_base"])
@settings(max_examples=max_examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text())
def test_ids_equal_tiktoken(name: str, text: str) -> None:
    assert fixture_tokenizer(name).encode_ordinary(text) == tiktoken_reference(name).encode_ordinary(text)


@pytest.mark.parametrize("tid", ["hf/gpt2_tokenizer.json", "hf/llama3_tokenizer.json"])
@settings(max_examples=max_examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text())
def test_ids_equal_tokenizers(tid: str, text: str) -> None:
    # Added tokens' literals are tokens on both sides (tokenizers always matches them).
    ours = fixture_tokenizer(tid).encode(text, allowed_special="all")
    assert ours == hf_reference(fixture_file(tid)).encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("tid", NAMED)
def test_every_class_pair(tid: str) -> None:
    """Every ordered pair and triple of the alphabet's characters, as one text each
    (the scanners' branches look one or two characters ahead)."""
    encoder = _native(tid)
    rng = random.Random(tid)
    texts = [a + b for a in _ALPHABET for b in _ALPHABET]
    # After letters and an apostrophe, then before one: contractions (o200k's follow
    # a word) and the branches after them.
    texts += [f"do'{a}{b}x" for a in _ALPHABET for b in _ALPHABET]
    texts += ["".join(rng.choice(_ALPHABET) for _ in range(3)) for _ in range(3000)]
    for text in texts:
        assert encoder.split(text) == _pure_pieces(tid, text), repr(text)


@pytest.mark.parametrize("tid", NAMED)
def test_surrogates_are_refused_as_by_the_pure_path(tid: str) -> None:
    encoder = _native(tid)
    for text in ("a\ud800b", "\udfff", "x" * 5000 + "\ud83d"):
        with pytest.raises(UnicodeEncodeError):
            encoder.encode(text)
        with pytest.raises(UnicodeEncodeError):
            _pure_ids(tid, text)


def test_cache_clearing_keeps_ids_exact() -> None:
    """More distinct merged pieces than the piece cache holds (2^16): it is emptied on
    the way, and every id stays the pure path's, twice over."""
    rng = random.Random(7)
    words = ["".join(rng.choice("qxzjvkwy") for _ in range(rng.randint(5, 9))) for _ in range(80_000)]
    text = " ".join(words)
    encoder = _native("o200k_base")
    want = _pure_ids("o200k_base", text)
    assert encoder.encode(text) == want
    assert encoder.encode(text) == want


def test_threads_share_one_encoder() -> None:
    """Texts long enough to run without the GIL, in four threads at once, one encoder:
    the same ids as one thread (the piece cache is shared under its lock)."""
    encoder = _native("cl100k_base")
    rng = random.Random(3)
    texts = [
        " ".join("".join(rng.choice("abcdefgqxzjé東京") for _ in range(rng.randint(2, 12))) for _ in range(3000))
        for _ in range(8)
    ]
    want = [_pure_ids("cl100k_base", t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(encoder.encode, texts)) == want


def test_pure_switch_keeps_the_pure_path() -> None:
    """The compiled encoder starts only where the pure path would be exact: GPT-2's
    tokenizer.json keeps its prefix-space rule around it, and a pipeline with a
    normalizer or another pattern never starts one."""
    tok = fixture_tokenizer("hf/bert_minilm_tokenizer.json")
    assert tok.pipeline._fast is None


@pytest.mark.parametrize("tid", ["o200k_base", "hf/llama3_tokenizer.json"])
def test_encode_batch_on_threads(tid: str) -> None:
    """Over 256 KiB in all: ``encode_batch`` runs the thread pool, each text's ids are
    ``encode``'s (and, for the rank file, tiktoken's)."""
    tok = fixture_tokenizer(tid)
    assert tok.pipeline.encodes_without_gil()
    rng = random.Random(5)
    texts = [
        "".join(rng.choice(_ALPHABET) for _ in range(rng.choice([10, 5000, 40_000]))).replace("<|", "<")
        for _ in range(24)
    ]
    assert sum(map(len, texts)) > 256 << 10
    want = [tok.encode(t, disallowed_special=()) for t in texts]
    assert tok.encode_batch(texts, max_workers=2, disallowed_special=()) == want
    if tid == "o200k_base":
        assert want == tiktoken_reference(tid).encode_batch(texts, disallowed_special=())
