"""``unreachable_tokens`` and ``token_witness`` against the reference encoders.

Two halves of one claim, each checked with the reference library's own ids:

- every id that is *not* listed has a witness text, and the reference's encoding of
  that text holds the id (so ours and the reference agree it is reachable);
- every listed id is produced by no candidate text at all: its text between every
  pair of contexts, or, for a partial token, every completion of its cut characters,
  enumerated here by brute force rather than by the module's generator (so the
  module's cap on completions loses nothing on these vocabularies).

Known facts are derived from the references' own components (BERT's normalizer and
pre-tokenizer, SentencePiece's piece table) or from tokenizers built by hand.
"""

from __future__ import annotations

import codecs
import doctest
import importlib
import json
from collections.abc import Callable
from itertools import product

import pytest
from helpers import fixture_file, fixture_tokenizer, hf_reference

import tokstream
from tokstream.constrain.unreachable import (
    _CONTEXTS,
    _LEFT,
    _PARTIAL_LEFT,
    _RIGHT,
    _completions,
    _split_partial,
    token_witness,
    unreachable_tokens,
)
from tokstream.errors import InvalidTokenIdError

RefEncode = Callable[[list[str]], list[list[int]]]

_CONT = range(0x80, 0xC0)


# ---------------------------------------------------------------------- references


def _tiktoken_encode(enc) -> RefEncode:  # type: ignore[no-untyped-def]
    # A plain loop: encode_ordinary_batch pays a thread-pool task per short text.
    return lambda texts: [enc.encode_ordinary(t) for t in texts]


def _hf_encode(ref) -> RefEncode:  # type: ignore[no-untyped-def]
    return lambda texts: [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]


def _spm_encode(sp) -> RefEncode:  # type: ignore[no-untyped-def]
    return lambda texts: sp.encode(texts)


def _brute_completions(data: bytes) -> list[str]:
    """Every text ``head + data + tail`` with ``head`` (at most 3 bytes) completing
    the character ``data`` starts inside and ``tail`` (at most 3 continuation bytes)
    the one it ends inside: all byte strings tried, the UTF-8 codec decides."""
    k = 0
    while k < min(3, len(data)) and data[k] in _CONT:
        k += 1
    if k:
        heads = [
            h
            for n in range(1, 4)
            for h in (bytes((lead, *mid)) for lead in range(0xC2, 0xF5) for mid in product(_CONT, repeat=n - 1))
            if _one_char(h + data[:k])
        ]
    else:
        heads = [b""]
    # Tails grow a byte at a time; a prefix the codec already rejects stays rejected.
    tails, grow = [], [b""]
    for _ in range(4):
        tails += [t for t in grow if _decodes(data[k:] + t)]
        grow = [t + bytes([c]) for t in grow if not _rejects(data[k:] + t) for c in _CONT]
    out = []
    for h, t in product(heads, tails):
        if _decodes(h + data + t):
            out.append((h + data + t).decode("utf-8"))
    return out


def _decodes(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _rejects(data: bytes) -> bool:
    """Whether no byte string appended to ``data`` makes it valid UTF-8."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return True
    return False


def _one_char(data: bytes) -> bool:
    return _decodes(data) and len(data.decode("utf-8")) == 1


def _check_against(tok: tokstream.Tokenizer, encode: RefEncode) -> list[int]:
    """The two halves of the module's claim, with ``encode`` as the reference."""
    index = tok.vocab.index
    listed = unreachable_tokens(tok)
    listed_set = set(listed)
    # Not listed: our witness, encoded by the reference, holds the id.
    ids = [i for i, b in enumerate(index.token_bytes) if b and i not in listed_set]
    witnesses = [token_witness(tok, i) for i in ids]
    missing = [i for i, w in zip(ids, witnesses) if w is None]
    assert not missing, f"not listed, yet no witness: {missing[:10]}"
    got = encode(witnesses)  # type: ignore[arg-type]
    bad = [(i, w, g) for i, w, g in zip(ids, witnesses, got) if i not in g]
    assert not bad, f"the reference does not emit these ids for their witnesses: {bad[:5]}"
    # Listed: no candidate at all makes the reference emit the id.
    for i in listed:
        data = index.token_bytes[i]
        if _decodes(data):
            text = data.decode("utf-8")
            texts = [a + text + b for a, b in product(_LEFT, _RIGHT)]
        else:
            whole = _brute_completions(data)
            assert len(whole) <= 20_000, f"{data!r}: too many completions for the oracle"
            texts = [a + w for a in _PARTIAL_LEFT for w in whole]
        hits = [t for t, g in zip(texts, encode(texts) if texts else []) if i in g]
        assert not hits, f"listed id {i} ({data!r}) is emitted for {hits[:3]}"
    return listed


# ------------------------------------------------------------------ differential


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_tiktoken_encodings(name: str, reference) -> None:  # type: ignore[no-untyped-def]
    tok = fixture_tokenizer(name)
    enc = reference(name)
    listed = _check_against(tok, _tiktoken_encode(enc))
    # Only partial tokens are listed, and among them every byte that no UTF-8 text
    # holds (tiktoken's own single-byte tokens).
    assert all(not _decodes(enc.decode_single_token_bytes(i)) for i in listed)
    dead = {enc.encode_single_token(bytes([b])) for b in (0xC0, 0xC1, *range(0xF5, 0x100))}
    assert dead <= set(listed)
    assert unreachable_tokens(tok, include_partial=False) == []


@pytest.mark.slow
@pytest.mark.parametrize("tid", ["hf/gpt2_tokenizer.json", "hf/llama3_tokenizer.json"])
def test_byte_level_tokenizer_json(tid: str) -> None:
    path = fixture_file(tid)
    tok = fixture_tokenizer(tid)
    listed = _check_against(tok, _hf_encode(hf_reference(path)))
    assert all(not _decodes(tok.token_bytes(i)) for i in listed)


@pytest.mark.slow
def test_bert_wordpiece() -> None:
    """BERT: ours equals the rule from the reference's own components. A word-start
    token is emitted iff normalizing and pre-tokenizing its text gives that text as
    one word (greedy longest match then takes it whole); a continuation ``##x`` iff
    the same holds for ``x`` after a letter."""
    path = fixture_file("hf/bert_minilm_tokenizer.json")
    tok = fixture_tokenizer("hf/bert_minilm_tokenizer.json")
    ref = hf_reference(path)
    listed = _check_against(tok, _hf_encode(ref))

    special = {t.content for t in ref.get_added_tokens_decoder().values() if t.special}

    def one_word(text: str) -> bool:
        normalized = ref.normalizer.normalize_str(text)  # pads CJK characters with spaces
        return [w for w, _ in ref.pre_tokenizer.pre_tokenize_str(normalized)] == [text]

    expected = {
        i
        for piece, i in ref.get_vocab().items()
        if piece not in special and not (one_word("x" + piece[2:]) if piece.startswith("##") else one_word(piece))
    }
    assert set(listed) == expected
    assert {tok.id_to_token(i) for i in listed} >= {"[unused0]", "...", "##!", "##一"}


def test_mistral_sentencepiece() -> None:
    """SentencePiece with byte fallback: a byte token is emitted only inside a
    character that has no piece; every piece of text is emitted (witnesses). Both
    from sentencepiece's piece table."""
    spm = pytest.importorskip("sentencepiece")
    path = fixture_file("spm/mistral_7b_v1_tokenizer.model")
    tok = fixture_tokenizer("spm/mistral_7b_v1_tokenizer.model")
    sp = spm.SentencePieceProcessor(model_file=str(path))
    listed = _check_against(tok, _spm_encode(sp))

    pieces = {sp.id_to_piece(i) for i in range(sp.get_piece_size())}
    emitted_bytes: set[int] = set()
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        if c.replace(" ", "\u2581") not in pieces:
            emitted_bytes.update(c.encode("utf-8"))
    byte_ids = {sp.piece_to_id(f"<0x{b:02X}>"): b for b in range(256)}
    expected = {i for i, b in byte_ids.items() if b not in emitted_bytes}
    assert set(listed) == expected
    assert sp.piece_to_id("<0x41>") in expected  # "A" has its own piece


# ------------------------------------------------------------- known by hand


def test_classic_test_overreports_o200k(reference) -> None:  # type: ignore[no-untyped-def]
    """``encode(decode(id)) != [id]`` flags o200k tokens that tiktoken does emit,
    inside longer pieces: none of them is listed."""
    enc = reference("o200k_base")
    tok = fixture_tokenizer("o200k_base")
    for text, witness in [(" I'", " I'M"), ("\n//", "$\n//"), ("亚洲AV", "亚洲AVs")]:
        i = enc.encode_single_token(text.encode("utf-8"))
        assert enc.encode_ordinary(text) != [i]
        assert i in enc.encode_ordinary(witness)
        assert i not in unreachable_tokens(tok, include_partial=False)
        assert i in enc.encode_ordinary(token_witness(tok, i))


def test_merge_chain_token(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A merges-list BPE where "abc" needs the merge (a, bc), but (a, b) always fires
    first wherever "abc" occurs: "abc" is never emitted, "bc" is (on its own)."""
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "[UNK]": 6}
    spec: dict[str, object] = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": None,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": "[UNK]",
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": ["a b", "b c", "a bc"],
        },
    }
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    ref = hf_reference(path)
    assert ref.encode("abc").tokens == ["ab", "c"]
    tok = tokstream.Tokenizer.from_file(path)
    # [UNK] has text of its own ("[UNK]" becomes unknown characters, then "[UNK]").
    assert unreachable_tokens(tok) == [5]
    _check_against(tok, _hf_encode(ref))


def test_pre_tokenizer_split_token() -> None:
    """A rank-file token whose text the pattern always cuts ("a1": letters and digits
    are separate pieces) is listed, with the bytes no UTF-8 text holds."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"a1": 256, b"ab": 257, b" a": 258})
    pattern = r" ?\p{L}+| ?\p{N}+|\s+|[^\s\p{L}\p{N}]+"
    tok = tokstream.Tokenizer(ranks, pattern=pattern, name="toy")
    enc = tiktoken.Encoding("toy", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("a1") == [ord("a"), ord("1")]
    assert unreachable_tokens(tok, include_partial=False) == [256]
    dead = [0xC0, 0xC1, *range(0xF5, 0x100)]
    assert unreachable_tokens(tok) == sorted([256, *dead])
    _check_against(tok, _tiktoken_encode(enc))


# ------------------------------------------------------------------ the helpers


@pytest.mark.slow
def test_which_bytes_utf8_text_holds() -> None:
    """``_split_partial`` is not None exactly for the 1- and 2-byte strings that occur
    in some UTF-8 text (every character's bytes, and every pair across a boundary)."""
    inside: set[bytes] = set()
    last: set[int] = set()
    first: set[int] = set()
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        e = chr(cp).encode("utf-8")
        first.add(e[0])
        last.add(e[-1])
        for n in (1, 2):
            inside.update(e[j : j + n] for j in range(len(e) - n + 1))
    held = inside | {bytes((a, b)) for a in last for b in first}
    for n in (1, 2):
        for data in map(bytes, product(range(256), repeat=n)):
            assert (_split_partial(data) is not None) == (data in held), data


@pytest.mark.slow
def test_completions_hold_the_bytes() -> None:
    """Each completion is a text whose UTF-8 holds the token's bytes; they are
    distinct, and for a short token they are all of the brute-force ones."""
    tok = fixture_tokenizer("o200k_base")
    partial = [b for b in tok.vocab.index.token_bytes if b and not _decodes(b)]
    for data in partial:
        got = list(_completions(data))
        assert len(got) == len(set(got))
        assert all(data in text.encode("utf-8") for text in got)
    for data in (b"\xe4", b"\x80", b"\xbf\xbd", b"\xd0\xbe\xd0", b"\xed", b"\xf4\x8f"):
        brute = _brute_completions(data)
        got = list(_completions(data))
        assert set(got) <= set(brute)
        if len(brute) <= 64:
            assert set(got) == set(brute)


def test_contexts_cover_every_pair() -> None:
    assert set(_CONTEXTS) == set(product(_LEFT, _RIGHT))
    assert len(_CONTEXTS) == len(_LEFT) * len(_RIGHT)
    assert _CONTEXTS[0] == ("", "")


def test_include_partial_and_cache() -> None:
    tok = fixture_tokenizer("r50k_base")
    everything = unreachable_tokens(tok)
    whole = unreachable_tokens(tok, include_partial=False)
    assert set(whole) <= set(everything)
    assert all(not _decodes(tok.token_bytes(i)) for i in set(everything) - set(whole))
    everything.append(-1)  # a copy: the cached list is untouched
    assert -1 not in unreachable_tokens(tok)
    assert unreachable_tokens(tok) == sorted(unreachable_tokens(tok))


def test_witness_edges() -> None:
    tok = fixture_tokenizer("cl100k_base")
    eot = tok.special_tokens["<|endoftext|>"]
    assert token_witness(tok, eot) is None
    with pytest.raises(InvalidTokenIdError):
        token_witness(tok, tok.n_vocab)
    with pytest.raises(InvalidTokenIdError):
        token_witness(tok, -1)
    hello = tok.encode("hello")[0]
    assert token_witness(tok, hello) == "hello"


def test_docstring_examples() -> None:
    module = importlib.import_module("tokstream.constrain.unreachable")
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0
