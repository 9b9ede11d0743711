"""The cached encode path (``tokstream/_fastpath.py``) on text that tiktoken's Unicode
16.0 splits differently, and on long pieces (issue 18).

- ids equal tiktoken's on hypothesis text mixing characters whose class changed after
  Unicode 16.0 with prose, spaces, newlines, digits and punctuation, cold and warm, long
  enough for the split and cut paths, on o200k_base and cl100k_base;
- such a text keeps the part and piece caches: a warm call runs no stand-in split, and
  no piece holding such a character is ever stored (the detection rests on it);
- long pieces and parts are cached within ``LONG_BUDGET`` characters.
"""

from __future__ import annotations

import functools

import pytest
from helpers import assert_same_ids_as_tiktoken, fixture_text
from hypothesis import given
from hypothesis import strategies as st
from strategies import RECLASSIFIED, hyp_settings, recent_unicode

import tokstream
from tokstream import _fastpath
from tokstream.pre_tokenizers import RegexSplit
from tokstream.pre_tokenizers.unicode16 import _differing
from tokstream.tokenizer import Tokenizer

NAMES = ["o200k_base", "cl100k_base"]

PROSE = (
    "It was the best of times, it was the worst of times; it was the age of wisdom. "
    "  Indented   text\n    with 12 digits 3456789 and punctuation!?... (yes) don't\n\n"
)


def fresh(name: str) -> Tokenizer:
    """A new tokenizer ``name`` with empty caches."""
    tok = tokstream.load(name)
    return Tokenizer(tok.pipeline.model.ranks, pattern=tok.pattern, special_tokens=tok.special_tokens, name=tok.name)


@functools.lru_cache(maxsize=1)
def changed() -> list[str]:
    """Characters the installed ``regex`` classes unlike Unicode 16.0 (a spread of them)."""
    chars = sorted(_differing())
    return [*chars[:: max(1, len(chars) // 300)], *chars[-10:], *RECLASSIFIED]


def _fragments() -> st.SearchStrategy[str]:
    odd = st.sampled_from(changed() or ["\u0295"])
    word = st.sampled_from(["the", "The", "WORD", "don't", "I'll", "x", "naïve", "Straße", "中文", "ﾃｽﾄ"])
    other = st.sampled_from([" ", "  ", "\n", "\n  ", "\r\n", "\t", "123", "45678", ".", "!?", "/", "'s", "'S", "_"])
    return st.lists(odd | recent_unicode | word | other, min_size=1, max_size=30).map("".join)


@pytest.mark.parametrize("name", NAMES)
def test_unicode16_text_matches_tiktoken_cold_and_warm(name, reference) -> None:
    """One tokenizer across all examples (its caches fill, and are cleared when a small
    ``CACHE_LIMIT`` overflows); each text is encoded cold-ish, then warm."""
    if not changed():
        pytest.skip("the installed regex classifies every character as Unicode 16.0 does")
    tok, enc = fresh(name), reference(name)

    @hyp_settings(150)
    @given(st.lists(_fragments(), min_size=1, max_size=6), st.sampled_from([0, 1, 4]), st.booleans())
    def check(fragments: list[str], prose: int, glue_space: bool) -> None:
        glue = " " if glue_space else ""
        text = glue.join(f + glue + PROSE * prose for f in fragments)
        want = enc.encode(text, disallowed_special=())
        for _ in range(2):
            assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_unicode16_text_matches_tiktoken_small_caches(name, reference, monkeypatch) -> None:
    """As above with caches cleared all the time (the store and repair paths)."""
    if not changed():
        pytest.skip("the installed regex classifies every character as Unicode 16.0 does")
    monkeypatch.setattr(_fastpath, "CACHE_LIMIT", 8)
    monkeypatch.setattr(_fastpath, "LONG_BUDGET", 256)
    tok, enc = fresh(name), reference(name)

    @hyp_settings(60)
    @given(st.lists(_fragments(), min_size=1, max_size=8))
    def check(fragments: list[str]) -> None:
        text = " ".join(f + " " + PROSE for f in fragments)
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), enc.encode(text, disallowed_special=()), text)

    check()


def _pieces_clean(tok: Tokenizer) -> None:
    fast = tok.pipeline._fast
    assert fast is not None
    needs = fast.pre.needs_unicode16
    stored = [*fast._pieces, *fast._pieces.long]
    assert not [p for p in stored if needs(p)], "a piece holding a changed character was stored"


@pytest.mark.parametrize("name", NAMES)
def test_one_changed_character_keeps_the_caches(name, reference, monkeypatch) -> None:
    """English with one such character: ids as tiktoken's; the warm call splits nothing
    by Unicode 16.0 classes (the part holding it is cached)."""
    if not changed():
        pytest.skip("the installed regex classifies every character as Unicode 16.0 does")
    english = fixture_text("corpora/corpus_alice_in_wonderland_en.txt")
    tok, enc = fresh(name), reference(name)
    mid = english.index(" ", len(english) // 2)
    for c in changed()[::40]:
        text = english[:mid] + " a" + c + "'s " + c + english[mid:]
        want = enc.encode(text, disallowed_special=())
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)
    _pieces_clean(tok)
    calls: list[str] = []
    original = RegexSplit.findall_unicode16

    def counted(self: RegexSplit, text: str) -> list[str]:
        calls.append(text)
        return original(self, text)

    monkeypatch.setattr(RegexSplit, "findall_unicode16", counted)
    assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)
    assert calls == []


@pytest.mark.parametrize("name", NAMES)
def test_japanese_with_changed_characters(name, reference) -> None:
    """Long parts (lines with no space) holding such characters, and the real corpus."""
    if not changed():
        pytest.skip("the installed regex classifies every character as Unicode 16.0 does")
    japanese = fixture_text("corpora/corpus_wagahaiwa_nekodearu_ja.txt")[:60_000]
    tok, enc = fresh(name), reference(name)
    step = len(japanese) // 23
    chars = changed()
    text = "".join(japanese[i : i + step] + chars[(i // step * 37) % len(chars)] for i in range(0, len(japanese), step))
    want = enc.encode(text, disallowed_special=())
    for _ in range(2):
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)
    _pieces_clean(tok)


def _long_piece_text(n: int) -> str:
    import base64
    import random

    rng = random.Random(n)
    return "".join(
        f"# {'-' * 70}\nDATA_{i} = b'{base64.b64encode(rng.randbytes(90)).decode()}'\nname_{'y' * 70}_{i} = {i}\n"
        for i in range(n)
    )


@pytest.mark.parametrize("name", NAMES)
def test_long_pieces_are_cached(name, reference) -> None:
    """A warm call merges no piece again, long ones included."""
    tok, enc = fresh(name), reference(name)
    text = _long_piece_text(40)
    fast = tok.pipeline._fast
    assert fast is not None
    assert max(map(len, fast.pre.findall(text))) > _fastpath.MAX_CACHED_LEN
    want = enc.encode(text, disallowed_special=())
    assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)
    merged: list[bytes] = []
    original = fast.encode_piece

    def counted(piece: bytes) -> tuple[int, ...]:
        merged.append(piece)
        return original(piece)

    fast.encode_piece = counted
    # The piece cache calls encode_piece through its closure: count there too.
    compute = fast._pieces.compute
    fast._pieces.compute = lambda p: (merged.append(p.encode()), compute(p))[1]
    assert_same_ids_as_tiktoken(tok.encode_ordinary(text), want, text, tok=tok, enc=enc)
    assert merged == []


@pytest.mark.parametrize("name", NAMES)
def test_long_cache_budget(name, reference, monkeypatch) -> None:
    """Unique long pieces never keep more than ``LONG_BUDGET`` characters (no key over
    a sixteenth of it), and the ids stay tiktoken's while the dicts are cleared."""
    budget = 4096
    monkeypatch.setattr(_fastpath, "LONG_BUDGET", budget)
    tok, enc = fresh(name), reference(name)
    fast = tok.pipeline._fast
    assert fast is not None
    for n in (10, 30, 60):
        text = _long_piece_text(n) + "z" * (budget // 8)
        assert_same_ids_as_tiktoken(tok.encode_ordinary(text), enc.encode(text, disallowed_special=()), text)
        for cache in (fast._pieces, fast._parts):
            assert sum(map(len, cache.long)) <= budget
            assert all(_fastpath.MAX_CACHED_LEN < len(k) <= budget >> 4 for k in cache.long)


@pytest.mark.parametrize("pattern", ["o200k_base", "cl100k_base", "gpt2", r"\p{L}+|\p{N}"])
def test_findall_unicode16_at(pattern) -> None:
    """``findall_unicode16_at`` with ``unicode16_positions`` is ``findall_unicode16``,
    for patterns whose pieces tile the text and for one that drops text between them."""
    split = RegexSplit(pattern)

    @hyp_settings(200)
    @given(st.lists(_fragments(), min_size=1, max_size=4).map(" ".join))
    def check(text: str) -> None:
        positions = split.unicode16_positions(text)
        assert bool(positions) == split.needs_unicode16(text)
        assert split.findall_unicode16_at(text, positions) == split.findall_unicode16(text)

    check()
