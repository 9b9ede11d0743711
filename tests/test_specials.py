"""Special tokens against tiktoken: raise, allow a set, allow all, disallow none, ordinary.

Every (text, options) case runs through tiktoken first; where tiktoken raises, we must
raise ``SpecialTokenError`` naming the same token and its offset; where it returns ids,
ours must be identical.
"""

from __future__ import annotations

import ast
import re

import pytest
from strategies import SPECIAL_LITERALS

import tokstream

_TIKTOKEN_TOKEN = re.compile(r"disallowed special token (?P<tok>'.*?'|\".*?\")")


def _texts(specials: list[str]) -> list[str]:
    """Inputs with each special alone, adjacent to text, at start/end, repeated, partial."""
    texts = ["", "hello world", "<|", "|>", "<||>", "<|endoftext", "endoftext|>"]
    for lit in sorted({*specials, *SPECIAL_LITERALS}):
        other = next((s for s in specials if s != lit), "<|endoftext|>")
        texts += [
            lit,
            "hello" + lit,
            lit + "hello",
            "hello " + lit + " world",
            "a" + lit + "b",
            " " + lit,
            lit + " ",
            "\n" + lit + "\n",
            lit * 3,
            lit + other,
            other + " x " + lit,
            "<" + lit + ">",
            "<|" + lit + "|>",
            lit[:-1],
            lit[1:],
            lit[:-1] + lit,
            lit + lit[1:],
            "é" + lit + "中",
            "\ud800" + lit + "\udc00",
            "'s" + lit + "'S",
            "123" + lit + "4567",
            lit.upper(),
        ]
    return texts


def _option_sets(specials: list[str]) -> list[tuple[str, dict]]:
    opts: list[tuple[str, dict]] = [
        ("default", {}),
        ("allow-all", {"allowed_special": "all"}),
        ("disallow-none", {"disallowed_special": ()}),
        ("allow-all,disallow-none", {"allowed_special": "all", "disallowed_special": ()}),
        ("allow-empty,disallow-all", {"allowed_special": frozenset(), "disallowed_special": "all"}),
    ]
    for s in specials:
        opts += [
            (f"allow={{{s}}}", {"allowed_special": {s}}),
            (f"allow={{{s}}},disallow-none", {"allowed_special": {s}, "disallowed_special": ()}),
            (f"disallow={{{s}}}", {"disallowed_special": {s}}),
            (f"allow=all-{{{s}}}", {"allowed_special": set(specials) - {s}}),
        ]
    return opts


def _run(fn, text, kw):
    try:
        return fn(text, **kw), None
    except ValueError as e:
        return None, e


def _check_case(tok, enc, text, kw):
    ref_ids, ref_err = _run(enc.encode, text, kw)
    ours_ids, ours_err = _run(tok.encode, text, kw)
    where = f"text={text!r} options={kw!r}"
    if ref_err is not None:
        assert ours_err is not None, f"tiktoken raises, tokstream returns {ours_ids}: {where}"
        assert isinstance(ours_err, tokstream.SpecialTokenError), where
        m = _TIKTOKEN_TOKEN.search(str(ref_err))
        assert m is not None, str(ref_err)
        token = ast.literal_eval(m.group("tok"))  # tiktoken prints it with repr()
        assert ours_err.token == token, where
        # Oracle for the offset: the leftmost occurrence of any string that raises.
        assert ours_err.offset == text.find(token), where
        assert text.find(token) == min(text.find(s) for s in _disallowed(enc, kw) if s in text), where
        assert repr(token) in str(ours_err), str(ours_err)
        assert f"offset {ours_err.offset}" in str(ours_err), str(ours_err)
    else:
        assert ours_err is None, f"tokstream raises {ours_err!r}, tiktoken gives {ref_ids}: {where}"
        assert ours_ids == ref_ids, where
        assert tok.decode(ours_ids) == enc.decode(ref_ids), where


def _disallowed(enc, kw):
    """The strings whose presence makes tiktoken raise, per its documented rules."""
    allowed = kw.get("allowed_special", frozenset())
    allowed = enc.special_tokens_set if allowed == "all" else set(allowed)
    disallowed = kw.get("disallowed_special", "all")
    return enc.special_tokens_set - allowed if disallowed == "all" else set(disallowed)


def test_special_tokens_match_tiktoken(pair):
    tok, enc = pair
    assert tok.special_tokens == enc._special_tokens
    assert tok.n_vocab == enc.n_vocab
    for literal, sid in enc._special_tokens.items():
        assert tok.token_bytes(sid) == enc.decode_single_token_bytes(sid)
        assert tok.decode([sid]) == enc.decode([sid]) == literal
        assert tok.encode(literal, allowed_special={literal}) == [sid]
        assert tok.encode(literal, allowed_special="all") == enc.encode(literal, allowed_special="all")


@pytest.mark.parametrize(
    "label",
    [
        "default",
        "allow-all",
        "disallow-none",
        "allow-all,disallow-none",
        "allow-empty,disallow-all",
        "allow-one",
        "allow-one,disallow-none",
        "disallow-one",
        "allow-all-but-one",
    ],
)
def test_policy_matches_tiktoken(pair, label):
    tok, enc = pair
    specials = sorted(enc.special_tokens_set)
    texts = _texts(specials)
    opts = _option_sets(specials)
    wanted = {
        "allow-one": r"allow=\{[^}]*\}$",
        "allow-one,disallow-none": r"allow=\{[^}]*\},disallow-none$",
        "disallow-one": r"disallow=\{",
        "allow-all-but-one": r"allow=all-",
    }.get(label)
    selected = [kw for name, kw in opts if (name == label if wanted is None else re.match(wanted, name))]
    assert selected
    for kw in selected:
        for text in texts:
            _check_case(tok, enc, text, kw)


def test_ordinary_matches_tiktoken(pair):
    tok, enc = pair
    for text in _texts(sorted(enc.special_tokens_set)):
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), repr(text)
        # disallowed_special=() is the same as encode_ordinary
        assert tok.encode(text, disallowed_special=()) == tok.encode_ordinary(text), repr(text)


def test_error_is_value_error_with_message(ours):
    tok = ours("cl100k_base")
    with pytest.raises(ValueError) as info:
        tok.encode("hello <|endofprompt|> and <|endoftext|>")
    err = info.value
    assert isinstance(err, tokstream.SpecialTokenError)
    assert err.token == "<|endofprompt|>"
    assert err.offset == 6
    assert "'<|endofprompt|>'" in str(err) and "offset 6" in str(err)


def test_offset_counts_code_points(ours):
    tok = ours("o200k_base")
    text = "😀é中\ud800<|endoftext|>"
    with pytest.raises(tokstream.SpecialTokenError) as info:
        tok.encode(text)
    assert info.value.offset == 4 == text.index("<|endoftext|>")


def test_decode_skip_special_tokens(pair):
    tok, enc = pair
    text = "<|endoftext|>hi<|endoftext|> there<|endoftext|>"
    ids = enc.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special="all") == ids
    plain = enc.decode([i for i in ids if i not in enc._special_tokens.values()])
    assert tok.decode(ids, skip_special_tokens=True) == plain == "hi there"
    assert tok.decode(ids) == text


@pytest.mark.parametrize(
    "kw",
    [
        {"disallowed_special": {"foo"}},
        {"disallowed_special": {"foo", "<|endoftext|>"}},
        {"allowed_special": "all", "disallowed_special": ["foo"]},
    ],
)
def test_unregistered_disallowed_string_raises_like_tiktoken(pair, kw):
    """tiktoken checks every string named in disallowed_special, registered or not."""
    tok, enc = pair
    for text in ("a foo b", "foo", "xfoox", "fo o", "a <|endoftext|> foo", ""):
        _check_case(tok, enc, text, kw)
    with pytest.raises(tokstream.SpecialTokenError) as info:
        tok.encode("a foo b", **kw)
    assert info.value.token == "foo" and info.value.offset == 2
