"""Token healing: complete a prompt that stops mid-word or mid-URL. Runs offline.

    python examples/token_healing.py

A prompt such as "...https://docs.pyth" ends in tokens ('.p', 'yth') that the
tokenizer would never produce if the text went on ('docs.python.org' is 'docs',
'.python', '.org'). A model conditioned on that odd boundary continues badly. Token
healing backs off the last token(s) and constrains the first generated token(s) to
start with the removed bytes, so the model writes '.python' itself.

The "model" here is a toy: greedy n-gram counts over the ids of a small embedded
text, standing in for an LLM's logits. Replace `NgramModel.logits` with your
model's forward pass; the healing and masking code stays the same.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

import tokstream
from tokstream.constrain import Healing, heal

# The toy model's "training data": the canonical tokenization of this text is what it
# knows, just as an LLM only knows the token boundaries its tokenizer produced.
CORPUS = """\
The documentation lives at https://docs.python.org/3/ and the tutorial lives at
https://docs.python.org/3/tutorial/ for everyone.
def greet(name):
    print("Hello, " + name + "!")
def main():
    greet("world")
"""

PROMPTS = [
    "The documentation lives at https://docs.pyth",
    'def greet(name):\n    print("Hel',
]


class NgramModel:
    """Scores for the next id from counts over the corpus ids: what followed the last
    two ids, else the last id, else plain frequency. After a token boundary the
    corpus never had (a prompt cut mid-word), only the frequencies are left."""

    def __init__(self, tok: tokstream.Tokenizer, text: str, order: int = 2) -> None:
        ids = tok.encode(text)
        self.order = order
        self.unigram = np.zeros(tok.n_vocab)
        np.add.at(self.unigram, ids, 1.0)
        self.follow: defaultdict[tuple[int, ...], Counter[int]] = defaultdict(Counter)
        for n in range(1, order + 1):
            for i in range(n, len(ids)):
                self.follow[tuple(ids[i - n : i])][ids[i]] += 1

    def logits(self, ids: Sequence[int]) -> npt.NDArray[np.float64]:
        scores = np.log1p(self.unigram)
        for n in range(1, self.order + 1):
            for nxt, count in self.follow.get(tuple(ids[-n:]), Counter()).items():
                scores[nxt] += 100.0 * n + count  # a longer matching context wins
        return scores


def generate(
    tok: tokstream.Tokenizer,
    model: NgramModel,
    prompt_ids: list[int],
    healing: Healing | None = None,
    max_new_tokens: int = 16,
) -> list[int]:
    """Greedy decoding; with ``healing``, the first tokens must reproduce its prefix."""
    # healing.constraint() is a fresh prefix constraint on healing.prefix per
    # generation (fork() it to sample several continuations); it also knows a
    # character the kept prompt leaves unfinished, so its output stays valid UTF-8.
    constraint = healing.constraint() if healing is not None else None
    ids = list(prompt_ids)
    new: list[int] = []
    for _ in range(max_new_tokens):
        logits = model.logits(ids)
        if constraint is not None and not constraint.is_done:
            # Mask: keep only the ids the constraint allows (sorted numpy ids). With
            # tokstream.constrain.masks, TokenMasker(tok).apply(logits, constraint)
            # does this in place, on numpy or torch logits.
            allowed = constraint.allowed_ids()
            masked = np.full_like(logits, -np.inf)
            masked[allowed] = logits[allowed]
            logits = masked
        next_id = int(np.argmax(logits))  # ties go to the lowest id: deterministic
        if constraint is not None:
            constraint.accept(next_id)
        ids.append(next_id)
        new.append(next_id)
        if "\n" in tok.decode([next_id]):
            break
    return new


def pieces(tok: tokstream.Tokenizer, ids: Sequence[int]) -> list[str]:
    """Each token's own text (fine for these ASCII prompts; a token holding part of
    a character would decode to U+FFFD, so inspect ``tok.token_bytes`` there)."""
    return [tok.decode([i]) for i in ids]


def main() -> None:
    tok = tokstream.load("default")  # o200k_base, embedded
    model = NgramModel(tok, CORPUS)

    for prompt in PROMPTS:
        prompt_ids = tok.encode(prompt)
        # Back off up to 2 tokens, but only as many as some token strictly extends.
        healing = heal(tok, prompt_ids, max_backoff=2)
        print(f"prompt: {prompt!r}")
        print(f"  tokens:          {pieces(tok, prompt_ids)}")
        print(f"  healed tokens:   {pieces(tok, healing.prompt_ids)}")
        print(f"  removed {healing.removed} token(s), to regenerate: {healing.prefix!r}")
        first = healing.constraint().allowed_ids()
        print(f"  allowed first:   {len(first)} ids, e.g. {pieces(tok, first[:6].tolist())}")

        plain = generate(tok, model, prompt_ids)
        healed = generate(tok, model, healing.prompt_ids, healing)
        plain_text = tok.decode(prompt_ids + plain)
        healed_text = tok.decode(healing.prompt_ids + healed)
        print(f"  without healing: {pieces(tok, plain)}")
        print(f"      -> {plain_text!r}")
        print(f"  with healing:    {pieces(tok, healed)}")
        print(f"      -> {healed_text!r}")
        # The healed generation starts by reproducing the removed text exactly.
        reproduces = tok.decode_bytes(healed).startswith(healing.prefix)
        print(f"  reproduces the removed text: {reproduces}")
        assert reproduces and healed_text.startswith(prompt)
        print()


if __name__ == "__main__":
    main()
