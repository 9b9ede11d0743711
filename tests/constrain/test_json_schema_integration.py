"""``json_schema_constraint`` with the rest of tokstream, on Llama 3:

- token healing: a prompt ending inside JSON is healed (``heal``) and the constraint
  built with ``prefix=healing``: it first reproduces the removed bytes, then the JSON
  must be valid, so the kept prompt plus the generation ends in a valid instance
  (``json.loads`` + ``jsonschema``); a token that contradicts the prefix is refused;
- speculative drafts: ``TokenMasker.draft_masks`` over a JSON constraint equals the
  masks of a fork stepped id by id, leaves the constraint unchanged, and
  ``rollback(n)`` restores the mask;
- transformers: ``ConstraintLogitsProcessor`` over a JSON constraint in a real
  ``model.generate`` of a tiny random Llama over Llama 3's vocabulary (skips without
  torch / transformers): every row up to EOS parses and validates.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from helpers import fixture_tokenizer, generate_pair, tiny_llama

import tokstream
from tokstream.constrain import TokenMasker, heal
from tokstream.constrain.json_schema import json_schema_constraint

jsonschema = pytest.importorskip("jsonschema")

LLAMA3 = "hf/llama3_tokenizer.json"
EOS = 128009  # <|eot_id|>

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}
TREE = {
    "type": "object",
    "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#"}, "maxItems": 2}},
    "required": ["v"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def llama3() -> tokstream.Tokenizer:
    return fixture_tokenizer(LLAMA3)


def validate(schema: Any, text: str) -> None:
    __tracebackhide__ = True
    value = json.loads(text)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = list(cls(schema, format_checker=cls.FORMAT_CHECKER).iter_errors(value))
    assert not errors, f"{text!r}: {errors[0].message}"


def sample(c: Any, rng: random.Random, cap: int = 200) -> list[int]:
    """Random allowed ids until EOS (closing ids preferred half the time); the ids
    before EOS."""
    tb = c.index.token_bytes
    out: list[int] = []
    for _ in range(cap):
        allowed = c.allowed_ids()
        assert allowed.size, "dead state"
        if allowed[-1] == EOS and rng.random() < 0.9:
            assert c.accept(EOS)
            return out
        pool = allowed
        if rng.random() < 0.5:
            closing = [int(t) for t in allowed if tb[t] and any(ch in tb[t] for ch in b'"}],')]
            if closing:
                pool = np.asarray(closing)
        t = int(pool[rng.randrange(pool.size)])
        assert c.accept(t)
        if t == EOS:
            return out
        out.append(t)
    raise AssertionError(f"no EOS within {cap} ids: {b''.join(tb[t] for t in out)!r}")


# -- (a) healing then JSON -----------------------------------------------------------------

#: Prompts whose last token(s) heal: the removed bytes (``" "``, ``":"``, ``" {"``, ...)
#: come first, then the JSON instance (the constraint's grammar starts after them).
HEAL_PROMPTS = ["Answer: ", "Answer:", "JSON output:\n", 'Answer: {"na', 'Answer: {"name": "Bo']


@pytest.mark.parametrize("prompt", HEAL_PROMPTS)
def test_healed_prompt_then_json(prompt: str, llama3: tokstream.Tokenizer) -> None:
    """``heal`` backs off the prompt's last tokens; the constraint built with
    ``prefix=healing`` first reproduces the removed bytes, then a valid instance
    follows: kept prompt + generation is the prompt's text followed by valid JSON."""
    tok = llama3
    h = heal(tok, tok.encode(prompt), max_backoff=3)
    assert h.removed >= 1 and h.prefix, "the prompt should heal"
    kept = tok.decode(h.prompt_ids)
    assert kept.encode() + h.prefix == prompt.encode()
    c = json_schema_constraint(tok, PERSON, eos_id=EOS, prefix=h)
    tb = tok.vocab.index.token_bytes
    for seed in range(3):
        out = sample(c.fork(), random.Random(seed))
        generated = b"".join(tb[t] for t in out)
        assert generated.startswith(h.prefix), (generated, h.prefix)
        text = kept + generated.decode()
        assert text.startswith(prompt)
        validate(PERSON, text[len(prompt) :])
    assert c.accepted == 0


@pytest.mark.parametrize("prompt", HEAL_PROMPTS)
def test_healed_constraint_refuses_a_contradiction(prompt: str, llama3: tokstream.Tokenizer) -> None:
    """Before the removed bytes are met, every allowed id agrees with them (extends
    them or is a piece of them), EOS is not allowed, and ids that contradict them
    (another first byte) are refused without a state change; right after them, an id
    that starts no JSON value is refused."""
    tok = llama3
    h = heal(tok, tok.encode(prompt), max_backoff=3)
    c = json_schema_constraint(tok, PERSON, eos_id=EOS, prefix=h)
    tb = tok.vocab.index.token_bytes
    allowed = c.allowed_ids()
    assert allowed.size and EOS not in allowed.tolist() and not c.can_end
    for t in allowed.tolist():
        piece = tb[t]
        assert piece.startswith(h.prefix) or h.prefix.startswith(piece), (piece, h.prefix)
    wrong = [t for t in range(len(tb)) if tb[t] and tb[t][:1] != h.prefix[:1]]
    for t in random.Random(0).sample(wrong, 50):
        assert not c.accept(t), tb[t]
    assert c.accepted == 0
    # the removed bytes as one piece each, then something that is no JSON object
    f = c.fork()
    for t in tok.encode(h.prefix.decode()):
        assert f.accept(t)
    for bad in ("x", "]", " {", "[", "1", '"'):
        (t,) = tok.encode(bad)
        assert not f.accept(t), bad
    (t,) = tok.encode("{")
    assert f.accept(t)


# -- (b) draft masks over a JSON constraint ------------------------------------------------------


def _draft_cases(tok: tokstream.Tokenizer) -> list[tuple[Any, list[int]]]:
    texts = [
        (PERSON, '{"name": "Ann", "age": 41, "tags": ["a", "c"]}'),
        (TREE, '{"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": []}]}'),
    ]
    return [(schema, tok.encode(text)) for schema, text in texts]


@pytest.mark.parametrize("case", range(2))
def test_draft_masks_match_stepping(case: int, llama3: tokstream.Tokenizer) -> None:
    """``draft_masks(c, draft)`` rows equal the masks of a fork stepped id by id, at
    several starting points; ``c`` is unchanged; a refused draft id closes the rest."""
    tok = llama3
    masker = TokenMasker(tok)
    schema, ids = _draft_cases(tok)[case]
    c = json_schema_constraint(tok, schema, eos_id=EOS)
    n = tok.n_vocab
    for start in range(0, len(ids) - 1, 3):
        draft = ids[start : start + 4]
        before = c.allowed_ids()
        accepted = c.accepted
        rows = masker.draft_masks(c, draft)
        assert rows.shape == (len(draft) + 1, n)
        f = c.fork()
        for j in range(len(draft) + 1):
            expected = np.zeros(n, dtype=bool)
            expected[f.allowed_ids()] = True
            assert np.array_equal(rows[j], expected), f"row {j} at start {start}"
            if j < len(draft):
                assert f.accept(draft[j])
        assert c.accepted == accepted and np.array_equal(c.allowed_ids(), before)
        for t in ids[start : start + 3]:
            assert c.accept(t)
    # a draft with a refused id: rows after it are all False
    c = json_schema_constraint(tok, schema, eos_id=EOS)
    bad = tok.encode("[")[0]
    rows = masker.draft_masks(c, [ids[0], bad, ids[1]])
    f = c.fork()
    assert f.accept(ids[0]) and not f.accept(bad)
    expected = np.zeros(n, dtype=bool)
    expected[f.allowed_ids()] = True
    assert np.array_equal(rows[1], expected)
    assert not rows[2:].any()


@pytest.mark.parametrize("case", range(2))
def test_rollback_restores_the_mask(case: int, llama3: tokstream.Tokenizer) -> None:
    """After accepting n ids, ``rollback(n)`` gives back the mask (and ``can_end``)
    of the state n ids before, for every n along the instance."""
    tok = llama3
    schema, ids = _draft_cases(tok)[case]
    c = json_schema_constraint(tok, schema, eos_id=EOS)
    masks = [c.allowed_ids()]
    ends = [c.can_end]
    for t in ids:
        assert c.accept(t)
        masks.append(c.allowed_ids())
        ends.append(c.can_end)
    assert c.can_end
    for n in (1, 2, 5, len(ids) // 2, len(ids)):
        f = c.fork()
        f.rollback(n)
        assert f.accepted == len(ids) - n
        assert np.array_equal(f.allowed_ids(), masks[len(ids) - n]), n
        assert f.can_end == ends[len(ids) - n]
        # and it moves on again the same way
        for t in ids[len(ids) - n :]:
            assert f.accept(t)
        assert np.array_equal(f.allowed_ids(), masks[-1])
    c.rollback(len(ids))
    assert np.array_equal(c.allowed_ids(), masks[0])


# -- (c) transformers generate --------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sample", "beam"])
@pytest.mark.parametrize("name", ["person", "tree"])
def test_generate_valid_json(mode: str, name: str, llama3: tokstream.Tokenizer) -> None:
    """A tiny random Llama over Llama 3's vocabulary, generating through
    ``ConstraintLogitsProcessor``: every row up to EOS parses and validates."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tokstream.integrations.transformers import ConstraintLogitsProcessor

    tok = llama3
    schema = {"person": PERSON, "tree": TREE}[name]
    padded = -(-tok.n_vocab // 64) * 64 + 64  # padded embedding rows past the tokenizer's ids
    model = tiny_llama(padded).eval()
    tb = tok.vocab.index.token_bytes
    ids = tok.encode("Answer:")
    processor = ConstraintLogitsProcessor(tok, json_schema_constraint(tok, schema, eos_id=EOS))
    rows = generate_pair(model, ids, processor, mode, 160, EOS)
    finished = 0
    for row in rows:
        end = row.index(EOS) if EOS in row else len(row)
        text = b"".join(tb[t] for t in row[:end])
        if EOS not in row:
            # max_new_tokens hit: what there is must still be a viable prefix
            c = json_schema_constraint(tok, schema, eos_id=EOS)
            assert all(c.accept(t) for t in row), text
            continue
        validate(schema, text.decode())
        finished += 1
    print(f"{name}/{mode}: {finished} of {len(rows)} rows finished")
    if mode == "sample":
        assert finished >= 1, "no sampled row reached EOS within 160 tokens"
