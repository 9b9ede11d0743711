"""Errors name what is wrong and where; pickling, batching and fingerprints hold up.

Bad ids, wrong types, damaged rank files and unknown names must raise the documented
``ValueError`` subclasses (or ``TypeError`` for wrong types) with a message a user can
act on, never an internal ``AssertionError`` / ``IndexError`` / ``KeyError``.
"""

from __future__ import annotations

import base64
import os
import pickle
import re
import shutil
from unittest import mock

import numpy as np
import pytest
from helpers import assert_sequences_equal, fixture_file, fixture_tokenizer

import tokstream
from tokstream import Tokenizer

INTERNAL = (AssertionError, IndexError, KeyError, AttributeError, UnboundLocalError)

# Ids tiktoken has no token for. Holes lie between the ranks and the specials.
HOLES = {
    "cl100k_base": [100256, 100261, 100275],
    "o200k_base": [200000, 200017],
    "r50k_base": [],
    "p50k_base": [],
}


# ------------------------------------------------------------------------ ids


def _bad_ids(tok):
    return [-1, -2, -(10**12), tok.n_vocab, tok.n_vocab + 1, tok.n_vocab + 12345, 2**31, 2**63, 10**30]


@pytest.mark.parametrize("method", ["decode", "decode_bytes", "token_bytes"])
def test_bad_id_raises_value_error_naming_it(pair, encoding_name, method):
    tok, enc = pair
    for bad in _bad_ids(tok) + HOLES[encoding_name]:
        # tiktoken rejects these too (KeyError / OverflowError there; ValueError here).
        with pytest.raises((KeyError, OverflowError, ValueError)):
            enc.decode_single_token_bytes(bad)
        if method == "token_bytes":
            calls = [(tok.token_bytes, (bad,), {})]
        else:
            fn = getattr(tok, method)
            calls = [
                (fn, ([bad],), {}),
                (fn, ([15, bad, 16],), {}),  # the bad id among good ones
                (fn, (iter([15, bad]),), {}),  # any iterable
                (fn, ((bad,),), {}),
            ]
        if method == "decode":
            calls.append((tok.decode, ([15, bad],), {"skip_special_tokens": True}))
        for fn, args, kw in calls:
            with pytest.raises(tokstream.InvalidTokenIdError) as info:
                fn(*args, **kw)
            assert isinstance(info.value, ValueError)
            assert str(bad) in str(info.value), str(info.value)
            assert info.value.token_id == bad


def test_hole_id_raises(ours, reference):
    tok, enc = ours("cl100k_base"), reference("cl100k_base")
    with pytest.raises(KeyError):  # what tiktoken does for a hole
        enc.decode([100256])
    for call in (tok.decode, tok.decode_bytes):
        with pytest.raises(tokstream.InvalidTokenIdError, match="100256"):
            call([100256])
    with pytest.raises(tokstream.InvalidTokenIdError, match="100256"):
        tok.token_bytes(100256)
    # The neighbours are real tokens.
    assert tok.token_bytes(100255) == enc.decode_single_token_bytes(100255)
    assert tok.token_bytes(100257) == b"<|endoftext|>"


def test_numpy_ids(ours, reference):
    tok, enc = ours("cl100k_base"), reference("cl100k_base")
    ids = enc.encode("hello world, numpy ids")
    assert tok.decode(np.array(ids)) == enc.decode(ids)
    assert tok.decode(np.array(ids, dtype=np.int32).tolist()) == enc.decode(ids)
    assert tok.token_bytes(np.int64(ids[0])) == enc.decode_single_token_bytes(ids[0])
    for bad in (np.int64(-1), np.int64(tok.n_vocab)):
        with pytest.raises(tokstream.InvalidTokenIdError, match=str(int(bad))):
            tok.decode([bad])
        with pytest.raises(tokstream.InvalidTokenIdError, match=str(int(bad))):
            tok.token_bytes(bad)


def test_non_int_ids_are_not_internal_errors(ours):
    tok = ours("r50k_base")
    for bad in ("a", 1.5, None, b"x"):
        for fn, arg in ((tok.decode, [bad]), (tok.decode_bytes, [0, bad]), (tok.token_bytes, bad)):
            with pytest.raises((TypeError, ValueError)) as info:
                fn(arg)
            # InvalidTokenIdError is a KeyError by design (tiktoken callers catch
            # KeyError); it is the error here, and no internal one escapes.
            assert isinstance(info.value, tokstream.InvalidTokenIdError), repr(info.value)
            assert type(info.value).__mro__[1:3] == (tokstream.TokstreamError, ValueError)


@pytest.mark.parametrize(
    "tid",
    ["cl100k_base", "hf/bert_minilm_tokenizer.json", "hf/llama3_tokenizer.json", "spm/spm_botchan_en_bpe_1000.model"],
)
def test_bool_is_not_an_id(tid):
    """True is an int to Python, and indexed the bytes table as id 1; every core entry
    point that takes ids refuses it with InvalidTokenIdError, naming the type."""
    tok = fixture_tokenizer(tid)
    assert tok.decode([1, 0]) == tok.decode([int(True), int(False)])  # the ids it would have been
    for bad in (True, False):
        calls = [
            lambda bad=bad: tok.decode([bad]),
            lambda bad=bad: tok.decode([5, bad], skip_special_tokens=True),
            lambda bad=bad: tok.decode_bytes((bad,)),
            lambda bad=bad: tok.decode_bytes(iter([5, bad])),
            lambda bad=bad: tok.token_bytes(bad),
            lambda bad=bad: tok.id_to_token(bad),
            lambda bad=bad: tok.vocab.token_bytes(bad),
        ]
        for call in calls:
            with pytest.raises(tokstream.InvalidTokenIdError, match=rf"token id {bad} is a bool, not an int") as info:
                call()
            assert info.value.token_id is bad


def test_invalid_id_is_a_key_error(ours, reference):
    """tiktoken raises KeyError for an id it lacks; `except KeyError` catches ours too,
    and str() reads as the message (KeyError's str() would quote it)."""
    tok, enc = ours("cl100k_base"), reference("cl100k_base")
    with pytest.raises(KeyError):
        enc.decode_single_token_bytes(100256)
    for call in (lambda: tok.decode([100256]), lambda: tok.token_bytes(100256), lambda: tok.decode([1.5])):
        with pytest.raises(KeyError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, tokstream.InvalidTokenIdError)
        message = str(info.value)
        assert message.startswith("token id ") and message == info.value.args[0], message
    assert "is a float, not an int" in str(tokstream.InvalidTokenIdError(1.5, "x", 10))
    assert "is unused in 'cl100k_base'" in str(tokstream.InvalidTokenIdError(100256, "cl100k_base", 100277))


def test_gpt2_is_named_as_in_tiktoken(tmp_path):
    """tiktoken's get_encoding("gpt2") is an encoding named "gpt2" over r50k_base's
    ranks (its constructor, run here on the local r50k_base ranks instead of the
    downloaded vocab.bpe / encoder.json)."""
    pytest.importorskip("tiktoken")
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext import openai_public

    ranks = load_tiktoken_bpe(str(fixture_file("tiktoken/r50k_base.tiktoken")))
    with mock.patch.object(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda **kw: ranks):
        enc = tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS["gpt2"]())
    tok = tokstream.load("gpt2")
    assert tok.name == enc.name == "gpt2"
    assert tokstream.load("r50k_base").name == "r50k_base"
    text = "Hello world, it's GPT-2 <|endoftext|> here"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.n_vocab == enc.n_vocab and tok.special_tokens == {"<|endoftext|>": enc.eot_token}
    assert pickle.loads(pickle.dumps(tok)).name == "gpt2"


def test_rank_and_special_ids_are_checked():
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(tokstream.TokstreamError, match=r"special token '<x>' \(-1\): ids must be non-negative"):
        Tokenizer(ranks, pattern="cl100k_base", special_tokens={"<x>": -1})
    with pytest.raises(TypeError, match="special token '<x>': ids must be int, got bool True"):
        Tokenizer(ranks, pattern="cl100k_base", special_tokens={"<x>": True})
    with pytest.raises(TypeError, match=r"rank of b'a': ids must be int, got float"):
        Tokenizer({**ranks, b"a": 97.0}, pattern="cl100k_base")
    with pytest.raises(tokstream.TokstreamError, match="ranks is empty"):
        Tokenizer({}, pattern="cl100k_base", special_tokens={"<x>": 0})
    with pytest.raises(tokstream.TokstreamError, match="surrogate"):
        Tokenizer(ranks, pattern="cl100k_base", special_tokens={"<\ud800>": 256})


def test_empty_rank_file(tmp_path):
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(b"")
    with pytest.raises(tokstream.TokenizerFileError, match="empty"):
        Tokenizer.from_tiktoken(path, pattern="cl100k_base")


# ---------------------------------------------------------------------- types


@pytest.mark.parametrize("bad", [b"hello", None, 123, ["hello"], bytearray(b"x")], ids=repr)
def test_non_str_text_raises_type_error(ours, bad):
    tok = ours("cl100k_base")
    for call in (
        lambda: tok.encode(bad),
        lambda: tok.encode(bad, allowed_special="all"),
        lambda: tok.encode_ordinary(bad),
        lambda: tok.encode_with_offsets(bad),
        lambda: tok.encode_batch([bad]),
        lambda: tok.encode_batch(["ok", bad]),
    ):
        with pytest.raises(TypeError):
            call()


def test_encode_batch_rejects_a_single_string(ours):
    with pytest.raises(TypeError):
        ours("cl100k_base").encode_batch("hello")


# ----------------------------------------------------------------- rank files


def _small_rank_lines() -> list[bytes]:
    """A valid byte-complete rank file: 256 bytes then a few merges."""
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]
    for rank, tok in enumerate([b"ab", b"abc", b" a", b"he", b"hello"], 256):
        lines.append(base64.b64encode(tok) + b" %d" % rank)
    return lines


def _write(path, lines):
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _assert_file_error(call, filename, lineno, *, detail=None):
    with pytest.raises(tokstream.TokenizerFileError) as info:
        call()
    err = info.value
    assert isinstance(err, ValueError)
    msg = str(err)
    assert filename in msg, msg
    if lineno is not None:
        assert re.search(rf"\bline {lineno}\b", msg), msg
    if detail is not None:
        assert re.search(detail, msg, re.IGNORECASE), msg
    return err


def test_small_rank_file_loads(tmp_path, reference):
    tiktoken = pytest.importorskip("tiktoken")
    path = _write(tmp_path / "small.tiktoken", _small_rank_lines())
    tok = Tokenizer.from_tiktoken(path, pattern="cl100k_base")
    enc = tiktoken.Encoding(
        "small",
        pat_str=reference("cl100k_base")._pat_str,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens={},
    )
    for text in ("abc hello", "hello", " ab abc", "zzz"):
        assert tok.encode(text) == enc.encode(text)
        assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize(
    "case, mutate, lineno, detail",
    [
        ("bad base64 chars", lambda L: L.__setitem__(10, b"!!!! 10"), 11, "base64"),
        ("bad base64 padding", lambda L: L.__setitem__(10, b"Cg= 10"), 11, "base64"),
        ("duplicate rank", lambda L: L.__setitem__(257, base64.b64encode(b"xyz") + b" 256"), 258, "rank"),
        ("duplicate token", lambda L: L.__setitem__(258, base64.b64encode(b"ab") + b" 258"), 259, "ab"),
        ("missing rank", lambda L: L.__setitem__(100, base64.b64encode(b"d")), 101, None),
        ("rank not an integer", lambda L: L.__setitem__(100, base64.b64encode(b"d") + b" x1"), 101, None),
        ("negative rank", lambda L: L.__setitem__(100, base64.b64encode(b"d") + b" -100"), 101, None),
        ("three fields", lambda L: L.__setitem__(100, base64.b64encode(b"d") + b" 100 7"), 101, None),
        ("binary garbage", lambda L: L.__setitem__(0, b"\xff\xfe\x00 0"), 1, None),
    ],
)
def test_damaged_rank_file(tmp_path, case, mutate, lineno, detail):
    lines = _small_rank_lines()
    mutate(lines)
    path = _write(tmp_path / "damaged.tiktoken", lines)
    _assert_file_error(
        lambda: Tokenizer.from_tiktoken(path, pattern="cl100k_base"),
        "damaged.tiktoken",
        lineno,
        detail=detail,
    )


def test_truncated_fixture_file(tmp_path):
    """A real rank file cut at several places (mid-token, mid-rank, after the space)."""
    data = fixture_file("tiktoken/r50k_base.tiktoken").read_bytes()
    mid = data.index(b"\n", len(data) // 2) + 1  # start of a line near the middle
    line_len = data.index(b"\n", mid) - mid
    for cut in (mid + 3, mid + line_len - 1, mid + data[mid:].index(b" ") + 1, mid + 1):
        path = tmp_path / "cut.tiktoken"
        path.write_bytes(data[:cut])
        lineno = data[:cut].count(b"\n") + 1  # the last, partial line
        _assert_file_error(lambda p=path: Tokenizer.from_tiktoken(p, pattern="r50k_base"), "cut.tiktoken", lineno)


def test_wrong_hash_via_load(tmp_path):
    data = bytearray(fixture_file("tiktoken/cl100k_base.tiktoken").read_bytes())
    # Change one rank digit on the last line: still a well-formed file, another hash.
    data[-2] = ord("0") if data[-2] != ord("0") else ord("1")
    path = tmp_path / "cl100k_base.tiktoken"
    path.write_bytes(bytes(data))
    err = _assert_file_error(lambda: tokstream.load(path), "cl100k_base.tiktoken", None)
    assert isinstance(err, tokstream.HashMismatchError)
    assert "sha256" in str(err)
    # str path and a folder holding the file go the same way.
    _assert_file_error(lambda: tokstream.load(str(path)), "cl100k_base.tiktoken", None)
    _assert_file_error(lambda: tokstream.load(tmp_path), "cl100k_base.tiktoken", None)


def test_wrong_hash_via_from_tiktoken(tmp_path):
    path = tmp_path / "ranks.tiktoken"
    shutil.copyfile(fixture_file("tiktoken/r50k_base.tiktoken"), path)
    with pytest.raises(tokstream.HashMismatchError) as info:
        Tokenizer.from_tiktoken(path, pattern="r50k_base", expected_hash="0" * 64)
    assert isinstance(info.value, tokstream.TokenizerFileError)
    assert "ranks.tiktoken" in str(info.value)


def test_good_copy_loads_like_tiktoken(tmp_path, reference):
    path = tmp_path / "cl100k_base.tiktoken"
    shutil.copyfile(fixture_file("tiktoken/cl100k_base.tiktoken"), path)
    enc = reference("cl100k_base")
    text = "Hello, copies! <|endoftext|> 12345 日本語"
    for tok in (
        tokstream.load(path),
        tokstream.load(tmp_path),
        Tokenizer.from_tiktoken(
            path,
            pattern="cl100k_base",
            special_tokens=enc._special_tokens,
            expected_hash="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        ),
    ):
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
        assert tok.n_vocab == enc.n_vocab


def test_unknown_name_lists_known_names():
    with pytest.raises(ValueError) as info:
        tokstream.load("cl100k")
    assert isinstance(info.value, tokstream.UnknownTokenizerError)
    msg = str(info.value)
    assert "'cl100k'" in msg
    for name in ("cl100k_base", "o200k_base", "r50k_base", "p50k_base", "gpt2"):
        assert name in msg, msg


def test_nonexistent_path(tmp_path):
    missing = tmp_path / "nope" / "cl100k_base.tiktoken"
    for call in (
        lambda: tokstream.load(missing),
        lambda: tokstream.load(str(missing)),
        lambda: Tokenizer.from_tiktoken(missing, pattern="cl100k_base"),
    ):
        with pytest.raises(tokstream.TokenizerFileError) as info:
            call()
        assert str(missing) in str(info.value), str(info.value)


def test_folder_without_tokenizer(tmp_path):
    (tmp_path / "README.txt").write_text("nothing here")
    with pytest.raises(tokstream.TokenizerFileError) as info:
        tokstream.load(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_unnamed_rank_file_needs_a_pattern(tmp_path):
    path = _write(tmp_path / "mine.tiktoken", _small_rank_lines())
    with pytest.raises(ValueError) as info:
        tokstream.load(path)
    assert "mine.tiktoken" in str(info.value) and "from_tiktoken" in str(info.value)


def test_vocabulary_missing_a_byte(tmp_path):
    lines = [line for line in _small_rank_lines() if line != base64.b64encode(b"z") + b" 122"]
    path = _write(tmp_path / "partial.tiktoken", lines)
    try:
        tok = Tokenizer.from_tiktoken(path, pattern="cl100k_base")
    except tokstream.TokstreamError:
        return  # rejecting the file at load time is fine
    assert tok.encode("ab") == [256]
    for text in ("z", "abz", "hello z world", "z" * 500):
        with pytest.raises(tokstream.TokstreamError) as info:
            tok.encode(text)
        assert "z" in str(info.value)
        assert not isinstance(info.value, INTERNAL)


# ------------------------------------------------------------------- pickling


def _sample_texts(read_corpus=None):
    texts = ["", "hello world", "<|endoftext|> x", "😀 \ud800 中文 1234567", "  \n\n\t x"]
    if read_corpus is not None:
        texts.append(read_corpus("corpus_us_constitution_en.txt")[:20000])
    return texts


def _token_bytes_or_none(tok, i):
    try:
        return tok.token_bytes(i)
    except tokstream.InvalidTokenIdError:
        return None


def test_pickle_embedded(pair):
    tok, enc = pair
    clone = pickle.loads(pickle.dumps(tok))
    assert clone.fingerprint == tok.fingerprint
    assert clone.name == tok.name
    for text in _sample_texts():
        assert clone.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


def test_pickle_file_loaded(tmp_path, reference, read_corpus):
    enc = reference("cl100k_base")
    path = tmp_path / "copy.tiktoken"
    shutil.copyfile(fixture_file("tiktoken/cl100k_base.tiktoken"), path)
    tok = Tokenizer.from_tiktoken(path, pattern="cl100k_base", special_tokens=enc._special_tokens, name="mine")
    blob = pickle.dumps(tok)
    assert len(blob) < 2 * os.path.getsize(path)  # compact, as _parallel promises
    clone = pickle.loads(blob)
    assert clone is not tok
    assert clone.name == "mine"
    assert clone.fingerprint == tok.fingerprint
    assert clone.special_tokens == tok.special_tokens
    assert clone.n_vocab == tok.n_vocab
    for i in range(tok.n_vocab):
        assert _token_bytes_or_none(clone, i) == _token_bytes_or_none(tok, i), i
    for text in _sample_texts(read_corpus):
        expected = enc.encode(text, allowed_special="all")
        assert clone.encode(text, allowed_special="all") == expected
        assert tok.encode(text, allowed_special="all") == expected


@pytest.mark.parametrize(
    "err",
    [
        tokstream.SpecialTokenError("<|endoftext|>", 3),
        tokstream.InvalidTokenIdError(100256, "cl100k_base", 100277),
    ],
    ids=type,
)
def test_errors_pickle(err):
    """Errors cross encode_batch's process pool by pickling."""
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is type(err) and str(clone) == str(err)
    assert vars(clone) == vars(err)


# ------------------------------------------------------------------- batching


def test_encode_batch_equals_encode(pair):
    tok, enc = pair
    texts = _sample_texts() + ["<|endoftext|>"] * 3
    assert tok.encode_batch(texts, allowed_special="all") == [enc.encode(t, allowed_special="all") for t in texts]
    assert tok.encode_batch(texts, disallowed_special=()) == [enc.encode_ordinary(t) for t in texts]
    assert tok.encode_batch([]) == []
    with pytest.raises(tokstream.SpecialTokenError):
        tok.encode_batch(["fine", "bad <|endoftext|>"])


@pytest.fixture(scope="module")
def big_batch(read_corpus):
    """The Shakespeare corpus in 50 pieces: above the 4 MiB pool threshold."""
    text = read_corpus("shakespeare_gutenberg_modern.txt")
    n = len(text) // 50 + 1
    pieces = [text[i : i + n] for i in range(0, len(text), n)]
    from tokstream import tokenizer as tokenizer_module

    # tokenizer.encode_batch sends batches of >= _PARALLEL_MIN_CHARS chars to the pool.
    assert sum(map(len, pieces)) >= tokenizer_module._PARALLEL_MIN_CHARS
    return pieces


@pytest.fixture
def pool_calls(monkeypatch):
    """Record calls of ``_parallel.encode_in_pool`` (tokenizer.py imports it per call)."""
    from tokstream import _parallel

    calls = []
    real = _parallel.encode_in_pool

    def spy(tok, texts, kw, workers):
        calls.append((len(texts), workers))
        return real(tok, texts, kw, workers)

    monkeypatch.setattr(_parallel, "encode_in_pool", spy)
    return calls


@pytest.mark.slow
def test_encode_batch_process_pool(ours, reference, big_batch, pool_calls, monkeypatch):
    tok, enc = ours("r50k_base"), reference("r50k_base")
    # The process pool runs where the compiled text encoder does not (threads do there:
    # tests/test_native_text.py): force it.
    monkeypatch.setattr(type(tok.pipeline), "encodes_without_gil", lambda self: False)
    pieces = list(big_batch)
    pieces[7] = "<|endoftext|>" + pieces[7]
    got = tok.encode_batch(pieces, max_workers=2, allowed_special="all")
    assert pool_calls == [(len(pieces), 2)], "the batch did not go to the process pool"
    expected = enc.encode_batch(pieces, allowed_special="all", num_threads=2)
    assert_sequences_equal(got, expected, what="encode_batch", names=("tokstream", "tiktoken"), context=0)
    # And the same as per-text encode in this process (serial path).
    assert got == [tok.encode(p, allowed_special="all") for p in pieces]
    assert tok.encode_batch(pieces, max_workers=1, allowed_special="all") == got
    assert len(pool_calls) == 1  # max_workers=1 stays in process


@pytest.mark.parametrize("pool", ["process", "thread"])
def test_encode_batch_process_pool_error(ours, big_batch, pool_calls, monkeypatch, pool):
    tok = ours("r50k_base")
    if pool == "process":
        # The process pool runs where the compiled text encoder does not: force it.
        monkeypatch.setattr(type(tok.pipeline), "encodes_without_gil", lambda self: False)
    elif not tok.pipeline.encodes_without_gil():
        pytest.skip("the thread pool runs with the compiled text encoder only (tested with it in CI)")
    pieces = list(big_batch)
    pieces[30] = pieces[30] + "<|endoftext|>"
    pieces[40] = "<|endoftext|>" + pieces[40]
    with pytest.raises(tokstream.SpecialTokenError) as info:
        tok.encode_batch(pieces, max_workers=2)
    assert bool(pool_calls) == (pool == "process"), f"the batch did not go to the {pool} pool"
    # The first failing text's error, as encode raises it.
    with pytest.raises(tokstream.SpecialTokenError) as direct:
        tok.encode(pieces[30])
    assert vars(info.value) == vars(direct.value)
    assert str(info.value) == str(direct.value)


# ---------------------------------------------------------------- fingerprint


def test_fingerprint(ours, tmp_path, reference):
    prints = {}
    for name in ("cl100k_base", "o200k_base", "r50k_base", "p50k_base"):
        fp = ours(name).fingerprint
        assert re.fullmatch(r"[0-9a-f]{64}", fp), fp
        assert ours(name).fingerprint == fp
        prints[name] = fp
    assert len(set(prints.values())) == 4
    assert ours("gpt2").fingerprint == prints["r50k_base"]
    # A second, independent load of the same file: equal fingerprint.
    path = tmp_path / "r50k_base.tiktoken"
    shutil.copyfile(fixture_file("tiktoken/r50k_base.tiktoken"), path)
    assert tokstream.load(path).fingerprint == prints["r50k_base"]
    # Same ranks, another pattern or other specials: another fingerprint.
    other_pattern = Tokenizer.from_tiktoken(path, pattern="cl100k_base", special_tokens={"<|endoftext|>": 50256})
    other_specials = Tokenizer.from_tiktoken(path, pattern="r50k_base", special_tokens={})
    assert other_pattern.fingerprint != prints["r50k_base"]
    assert other_specials.fingerprint != prints["r50k_base"]
