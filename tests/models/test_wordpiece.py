"""WordPiece against ``tokenizers.models.WordPiece``, id for id and offset for offset.

The reference is a ``tokenizers.Tokenizer`` holding the model alone (no normalizer,
pre-tokenizer, post-processor or added tokens), so ``encode(word)`` hands the whole
word to ``WordPiece::tokenize``. Its offsets are in code points, like ours.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from collections.abc import Iterable

import pytest
from helpers import assert_sequences_equal, fixture_file, fixture_names, fixture_text, has_fixture
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import adversarial_text, fragment, has_surrogates

from tokstream.errors import TokenizerFileError
from tokstream.models.wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers")

MAX_EXAMPLES = int(os.environ.get("TOKSTREAM_MAX_EXAMPLES") or 500)
HYP = settings(max_examples=MAX_EXAMPLES, deadline=None)


# ------------------------------------------------------------------- fixtures


def reference(model: WordPiece) -> tokenizers.Tokenizer:
    """The model alone in a ``tokenizers.Tokenizer``, same parameters as ``model``."""
    return tokenizers.Tokenizer(
        tokenizers.models.WordPiece(
            model.get_vocab(),
            unk_token=model.unk_token,
            continuing_subword_prefix=model.continuing_subword_prefix,
            max_input_chars_per_word=model.max_input_chars_per_word,
        )
    )


@pytest.fixture(scope="module")
def bert_json() -> dict:
    return json.loads(fixture_text("hf/bert_minilm_tokenizer.json"))


@pytest.fixture(scope="module")
def bert(bert_json) -> WordPiece:
    return WordPiece.from_json(bert_json["model"])


@pytest.fixture(scope="module")
def bert_ref(bert) -> tokenizers.Tokenizer:
    return reference(bert)


def corpus_texts() -> list[tuple[str, str]]:
    names = fixture_names("corpora", "*.txt")
    if not names:
        fixture_file("corpora/corpus_botchan_en.txt")  # skips or fails with the reason
    return [(name, fixture_text(f"corpora/{name}")) for name in names]


# --------------------------------------------------------------------- helpers


def assert_same(model: WordPiece, ref: tokenizers.Tokenizer, words: Iterable[str]) -> None:
    """Ids and spans equal the reference's for every word; report the first mismatch."""
    words = list(words)
    encodings = ref.encode_batch(words)
    for word, enc in zip(words, encodings):
        spans = model.encode_piece_spans(word)
        expected = [(i, a, b) for i, (a, b) in zip(enc.ids, enc.offsets)]
        assert_sequences_equal(
            spans,
            expected,
            what=repr(word),
            names=("tokstream", "tokenizers"),
            show=lambda span: f"{span}={model_token(model, span[0])!r}",
            show_theirs=repr,
            notes=[f"tokenizers' tokens: {enc.tokens}"],
        )
        assert model.encode_piece(word) == tuple(enc.ids), word


def model_token(model: WordPiece, token_id: int) -> str:
    for token, i in model.get_vocab().items():
        if i == token_id:
            return token
    return "?"


_BERT_SPLIT = re.compile(r"\w+|[^\w\s]")


# ------------------------------------------------------------ differential: corpora


def test_corpus_words_match_tokenizers(bert, bert_ref) -> None:
    """Every whitespace-separated word of every corpus, lowercased and as is."""
    words: set[str] = set()
    for _, text in corpus_texts():
        for word in text.split():
            words.add(word.lower())
            words.add(word)
    assert len(words) > 10_000
    assert_same(bert, bert_ref, sorted(words))


def test_corpus_bert_style_words_match_tokenizers(bert, bert_ref) -> None:
    """Lowercased words split off punctuation, roughly as BertPreTokenizer: most of
    them take the greedy ``##`` path rather than the whole-word one."""
    words: set[str] = set()
    for _, text in corpus_texts():
        words.update(_BERT_SPLIT.findall(text.lower()))
    assert_same(bert, bert_ref, sorted(words))


def test_vocabulary_entries_and_joins(bert, bert_ref) -> None:
    """Every token, with and without its prefix, and pairs of tokens glued together."""
    vocab = sorted(bert.get_vocab())
    stems = [t.removeprefix("##") for t in vocab]
    words = set(vocab) | set(stems)
    words.update(a + b for a, b in zip(stems[::7], stems[3::11]))
    words.discard("")
    assert_same(bert, bert_ref, sorted(words))


# ---------------------------------------------------------- differential: hypothesis


def _bert_pieces() -> list[str]:
    """Every 13th BERT token (a few stand-ins when the fixture is absent: the tests
    that need the fixture skip or fail on their own)."""
    relpath = "hf/bert_minilm_tokenizer.json"
    if not has_fixture(relpath):
        return ["un", "##aff", "##able", "play", "##ing"]
    vocab = json.loads(fixture_text(relpath))["model"]["vocab"]
    return sorted(vocab)[::13]


_PIECES = _bert_pieces()

#: Words glued from vocabulary entries (so the greedy search has work to do) and
#: adversarial fragments (mixed scripts, combining marks, emoji, controls, ...).
words = st.lists(
    st.one_of(
        st.sampled_from(_PIECES).map(lambda t: t.removeprefix("##")),
        st.sampled_from(_PIECES),
        fragment,
        st.text(max_size=4),
    ),
    min_size=1,
    max_size=8,
).map("".join)


@HYP
@given(word=st.one_of(words, adversarial_text(max_fragments=4, surrogates_ok=False)))
def test_adversarial_words_match_tokenizers(bert, bert_ref, word: str) -> None:
    assume(not has_surrogates(word))  # Rust strings cannot hold them
    assert_same(bert, bert_ref, [word, word.lower()])


@HYP
@given(
    vocab=st.lists(st.text(alphabet="ab#▁é", min_size=1, max_size=4), max_size=12, unique=True),
    prefix=st.sampled_from(["##", "#", "", "▁", "a"]),
    max_chars=st.integers(0, 12),
    word=st.text(alphabet="ab#▁éc", max_size=14),
)
def test_random_small_vocabularies_match_tokenizers(vocab, prefix, max_chars, word) -> None:
    """Tiny vocabularies over a tiny alphabet: prefixes that are themselves tokens,
    tokens that start with the prefix, an empty prefix, words longer than the limit."""
    ids = {token: i for i, token in enumerate(vocab)}
    ids.setdefault("[UNK]", len(ids))
    model = WordPiece(ids, continuing_subword_prefix=prefix, max_input_chars_per_word=max_chars)
    assert_same(model, reference(model), [word, *vocab])


# ----------------------------------------------------------------- known cases


def test_rust_unit_cases() -> None:
    """The cases of tokenizers' own wordpiece tests (ids checked against the crate)."""
    model = WordPiece({"##na": 0, "ba": 1, "[UNK]": 2})
    assert model.encode_piece_spans("banana") == [(1, 0, 2), (0, 2, 4), (0, 4, 6)]
    assert model.encode_piece_spans("nanana") == [(2, 0, 6)]  # no leading "na"
    assert_same(model, reference(model), ["banana", "nanana", "ba", "##na", "bana", "banan"])


def test_whole_word_unknown_and_length_limit() -> None:
    vocab = {"[UNK]": 0, "a": 1, "##a": 2, "aaaaaa": 3}
    model = WordPiece(vocab, max_input_chars_per_word=5)
    ref = reference(model)
    # "aaaaaa" is in the vocabulary but longer than the limit: unknown, as tokenizers.
    assert model.encode_piece("aaaaaa") == (0,)
    assert model.encode_piece("aaaaa") == (1, 2, 2, 2, 2)
    assert model.encode_piece("aab") == (0,)
    assert model.encode_piece_spans("aab") == [(0, 0, 3)]
    assert model.encode_piece("") == () and model.encode_piece_spans("") == []
    assert_same(model, ref, ["aaaaaa", "aaaaa", "aab", "a", "b", "ba"])


def test_long_runs() -> None:
    """10^5 repeats: over the default limit one unk; under a large limit 10^5 tokens."""
    vocab = {"[UNK]": 0, "a": 1, "##a": 2, "##aa": 3, "aaa": 4}
    model = WordPiece(vocab)
    word = "a" * 100_000
    assert model.encode_piece(word) == (0,)
    big = WordPiece(vocab, max_input_chars_per_word=10**6)
    ids = big.encode_piece(word)
    assert ids == (4,) + (3,) * 49_998 + (2,)
    # tokenizers restarts its backward search at the word's end for every token,
    # O(n^2): compare on a shorter run.
    short = "a" * 3001
    assert big.encode_piece(short) == tuple(reference(big).encode(short).ids)


# ----------------------------------------------------------- construction, JSON


def test_missing_unk_token_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no unk_token '\[UNK\]'.*pass unk_token="):
        WordPiece({"a": 0})
    with pytest.raises(ValueError, match="<unk>"):
        WordPiece({"[UNK]": 0}, unk_token="<unk>")


def test_bad_arguments() -> None:
    with pytest.raises(TypeError):
        WordPiece({"[UNK]": True})
    with pytest.raises(ValueError, match="2\\*\\*32"):
        WordPiece({"[UNK]": -1})
    with pytest.raises(ValueError, match="max_input_chars_per_word"):
        WordPiece({"[UNK]": 0}, max_input_chars_per_word=-1)


def test_to_json_equals_tokenizers_serialization(bert, bert_json) -> None:
    ours = bert.to_json()
    theirs = json.loads(reference(bert).to_str())["model"]
    assert ours == theirs
    assert list(ours) == list(theirs)  # key order too
    assert list(ours["vocab"]) == list(theirs["vocab"])
    assert ours == bert_json["model"]


def test_json_round_trip_and_pickle(bert) -> None:
    again = WordPiece.from_json(json.loads(json.dumps(bert.to_json())))
    assert again.to_json() == bert.to_json()
    copy = pickle.loads(pickle.dumps(bert))
    assert copy.to_json() == bert.to_json()
    assert copy.encode_piece("unaffable") == bert.encode_piece("unaffable")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda m: m.update(type="BPE"), r"model\.type: expected 'WordPiece'"),
        (lambda m: m.pop("unk_token"), r"model: missing field 'unk_token'"),
        (lambda m: m.pop("vocab"), r"model: missing field 'vocab'"),
        (lambda m: m.update(unk_token=3), r"model\.unk_token: expected a string"),
        (lambda m: m.update(unk_token="<unk>"), r"model\.unk_token: '<unk>' is not in"),
        (
            lambda m: m.update(continuing_subword_prefix=None),
            r"model\.continuing_subword_prefix: expected a string, got null",
        ),
        (lambda m: m.update(max_input_chars_per_word=-1), r"model\.max_input_chars_per_word"),
        (lambda m: m.update(max_input_chars_per_word=1.5), r"model\.max_input_chars_per_word"),
        (lambda m: m.update(vocab=[]), r"model\.vocab: expected an object"),
        (lambda m: m["vocab"].update({"x": -1}), r'model\.vocab\["x"\]: expected an integer id'),
        (lambda m: m["vocab"].update({"x": "1"}), r'model\.vocab\["x"\]'),
    ],
)
def test_from_json_errors_name_the_path(mutate, message) -> None:
    obj = {
        "type": "WordPiece",
        "unk_token": "[UNK]",
        "continuing_subword_prefix": "##",
        "max_input_chars_per_word": 100,
        "vocab": {"[UNK]": 0, "a": 1},
    }
    mutate(obj)
    with pytest.raises(TokenizerFileError, match=message):
        WordPiece.from_json(obj)


def test_from_json_error_uses_given_path() -> None:
    with pytest.raises(ValueError, match=r"^tokenizer\.json: model: expected a WordPiece"):
        WordPiece.from_json([], path="tokenizer.json: model")  # type: ignore[arg-type]


def test_from_json_accepts_missing_type_and_ignores_extra_keys() -> None:
    model = WordPiece.from_json(
        {
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": {"[UNK]": 0, "a": 1, "##b": 2},
            "extra": 1,
        }
    )
    assert model.encode_piece("ab") == (1, 2)
