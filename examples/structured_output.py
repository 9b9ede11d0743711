"""Structured output: a regex, a grammar and a healed prompt, with exact masks. Offline.

    python examples/structured_output.py

The "model" is a seeded random logits vector per step, standing in for an LLM's
forward pass (replace ``fake_logits`` with yours). Whatever it prefers, the mask
leaves only tokens after which the output can still be completed, so every sample
ends in a valid text: a date that ``re.fullmatch`` accepts, a nested list the grammar
derives, and a completion that first reproduces the text healing removed.
"""

from __future__ import annotations

import re

import numpy as np

import tokstream

tok = tokstream.load("o200k_base")
EOS = tok.special_tokens["<|endoftext|>"]
masker = tokstream.TokenMasker(tok)
rng = np.random.default_rng(0)


def fake_logits() -> np.ndarray:
    """A model's next-token scores (random here)."""
    return rng.standard_normal(tok.n_vocab).astype(np.float32)


def generate(constraint: tokstream.Constraint, max_tokens: int = 200) -> str:
    """Sample until EOS: mask the logits (-inf where refused), softmax, draw."""
    ids: list[int] = []
    for _ in range(max_tokens):
        logits = masker.apply(fake_logits(), constraint)
        p = np.exp(logits - logits.max())
        t = int(rng.choice(tok.n_vocab, p=p / p.sum()))
        if t == EOS:
            break
        assert constraint.accept(t)
        ids.append(t)
    return tok.decode(ids)


def main() -> None:
    date = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    text = generate(tokstream.regex_constraint(tok, date, eos_id=EOS))
    print(f"regex   {date}\n        -> {text!r}  fullmatch: {re.fullmatch(date, text) is not None}")

    lists = """
        start: list
        list: "[" [item ("," item)*] "]"
        item: /[0-9]{1,3}/ | list
    """
    print(f"grammar nested lists\n        -> {generate(tokstream.grammar_constraint(tok, lists, eos_id=EOS))!r}")

    prompt = "The capital of France is Par"
    healing = tokstream.heal(tok, tok.encode(prompt))
    c = tokstream.regex_constraint(tok, r"is\.( [A-Z][a-z]{1,8}){0,3}", eos_id=EOS, prefix=healing)
    kept = tok.decode(healing.prompt_ids)
    print(f"healing {prompt!r}: removed {healing.prefix!r}\n        -> {kept!r} + {generate(c)!r}")


if __name__ == "__main__":
    main()
