"""Counting for training: pre-token counts (the map step) and the pair index that
BPE-style trainers merge on.

``count_pretokens`` is the part of training that scales out: run it on shards (a
process pool, Ray, Dask, Spark), sum the ``Counter``s, and pass the sum to a trainer;
the result equals training on the whole corpus (``examples/distributed_counting.py``).

Not here: the choice of the next merge (each trainer's own rule), normalization.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from ..pre_tokenizers import RegexSplit
from ..surrogates import replace_surrogates

__all__ = ["PairIndex", "check_counts", "count_pretokens", "pretoken_counts"]


def count_pretokens(texts: Iterable[str], pattern: str = "o200k_base") -> Counter[str]:
    """Count the pre-tokens of ``texts`` under ``pattern`` (a regex or a known name).

    The pieces are exactly those the encoder cuts (Unicode 16.0 classes for the named
    patterns, as tiktoken). Counts of shards add up to the counts of the whole.

    >>> sorted(count_pretokens(["the cat", "the hat"], "gpt2").items())
    [(' cat', 1), (' hat', 1), ('the', 2)]
    """
    if isinstance(texts, str):
        raise TypeError("count_pretokens takes an iterable of texts, not one str; wrap it in a list")
    split = RegexSplit(pattern)
    counts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        text = replace_surrogates(text)  # as encode does
        counts.update(split.findall_unicode16(text) if split.needs_unicode16(text) else split.findall(text))
    return counts


def pretoken_counts(texts_or_counts: Iterable[str] | Mapping[str, int], pattern: str) -> Mapping[str, int]:
    """A trainer's input as pre-token counts: ``count_pretokens`` of texts, or counts
    given as they are (checked). Raises ``TypeError`` for one ``str`` or non-text, and
    ``ValueError`` for an empty corpus."""
    if isinstance(texts_or_counts, str):
        raise TypeError("pass an iterable of texts (a list of str) or a Counter, not one str")
    if isinstance(texts_or_counts, Mapping):
        counts = texts_or_counts
        check_counts(counts)
    else:
        counts = count_pretokens(texts_or_counts, pattern)
    if not any(c > 0 for c in counts.values()):
        raise ValueError("the corpus is empty: no pre-tokens to train on")
    return counts


def check_counts(counts: Mapping[str, int]) -> None:
    """Raise ``TypeError`` unless ``counts`` maps str to int (not bool), and
    ``ValueError`` for a negative count."""
    for piece, c in counts.items():
        if not isinstance(piece, str) or isinstance(c, bool) or not isinstance(c, int):
            raise TypeError(f"counts must map str to int, got {type(piece).__name__} -> {type(c).__name__}")
        if c < 0:
            raise ValueError(f"counts must not be negative, got {piece!r} -> {c}")


class PairIndex:
    """Words as symbol-id lists with counts, adjacent-pair counts, and for each pair the
    words holding it, updated in place by ``merge``.

    Cost: building is O(total symbols of the distinct words). ``merge`` touches only
    the words that hold the pair (the index may list a few that no longer do; they are
    skipped), O(their length) each, so training does no full recount per merge.
    Memory: the words, one count per distinct pair, one set of word indices per pair.

    ``last_merged`` is the weighted number of replacements the last ``merge`` made
    (each occurrence times its word's count): what the merged symbols lost and the new
    one gained, which WordPiece's score needs. It equals the pair's count before the
    merge unless the pair is ``(a, a)``, whose overlapping occurrences merge once.
    """

    __slots__ = ("freqs", "last_merged", "pair_counts", "where", "words")

    def __init__(self, words: list[list[int]], freqs: list[int]) -> None:
        self.words = words
        self.freqs = freqs
        self.pair_counts: dict[tuple[int, int], int] = {}
        self.where: dict[tuple[int, int], set[int]] = {}
        self.last_merged = 0
        counts, where = self.pair_counts, self.where
        for wi, (w, f) in enumerate(zip(words, freqs)):
            for pair in zip(w, w[1:]):
                counts[pair] = counts.get(pair, 0) + f
                s = where.get(pair)
                if s is None:
                    where[pair] = {wi}
                else:
                    s.add(wi)

    @classmethod
    def from_counts(cls, segmented: Mapping[tuple[int, ...], int]) -> PairIndex:
        """An index over words given as symbol tuples with their counts."""
        return cls([list(w) for w in segmented], list(segmented.values()))

    def merge(self, pair: tuple[int, int], new: int) -> set[tuple[int, int]]:
        """Replace every ``pair`` (left to right, non-overlapping) by the symbol ``new``;
        return the pairs that gained count (all hold ``new``)."""
        a, b = pair
        counts, where, words, freqs = self.pair_counts, self.where, self.words, self.freqs
        gained: set[tuple[int, int]] = set()
        merged = 0
        for wi in where.pop(pair, ()):
            w = words[wi]
            if len(w) < 2:
                continue
            out: list[int] = []
            i, n = 0, len(w)
            while i < n:
                if i + 1 < n and w[i] == a and w[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            if len(out) == n:
                continue  # listed, but the pair was merged away by an earlier merge
            f = freqs[wi]
            merged += (n - len(out)) * f
            for p in zip(w, w[1:]):
                c = counts[p] - f
                if c:
                    counts[p] = c
                else:
                    del counts[p]
            for p in zip(out, out[1:]):
                counts[p] = counts.get(p, 0) + f
                if new in p:
                    gained.add(p)
                s = where.get(p)
                if s is None:
                    where[p] = {wi}
                else:
                    s.add(wi)
            words[wi] = out
        counts.pop(pair, None)
        self.last_merged = merged
        return gained
