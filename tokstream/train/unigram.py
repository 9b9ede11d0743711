"""Unigram language-model training (SentencePiece's trainer), vectorized with numpy.

The algorithm is SentencePiece's ``unigram_model_trainer.cc`` (Kudo 2018):

1. **Seed**: every character, plus the most frequent substrings of the words (up to
   ``max_piece_length`` characters, at least ``min_frequency`` occurrences, ranked by
   frequency times length, ``seed_size`` of them). They come from a suffix array over
   the distinct words (separator-delimited), built by prefix doubling with numpy sorts;
   the adjacent longest common prefixes (capped at the word end) group the suffixes
   by their first L characters for every L at once. Frequencies are weighted by word
   counts, so they are the substring counts of the running text. As SentencePiece's
   suffix-tree nodes, only substrings followed by two different characters somewhere
   in the running text are seeds (a word's end counts as the ``▁`` of the next word),
   so a substring always followed by the same character gives way to its extension,
   and a word always followed by a space is not a seed (SentencePiece's extension,
   ``word▁``, is not a valid piece). With the same piece rules, this gives
   SentencePiece's compression to within 0.2% (``bench/``). Treating a word's end as
   unique instead kept 25% more seeds, compressed Shakespeare 0.5-0.9% better but
   Alice 4-5% worse.
2. **EM**: the E-step runs forward-backward in log space over *all* segmentations of
   every distinct word and adds each piece's posterior expected count, times the
   word's count. The M-step is SentencePiece's Bayesian (digamma) update,
   ``score = digamma(count) - digamma(total)``, a sparse prior that drops pieces
   below 0.5 expected occurrences. ``num_sub_iterations`` (2) EM steps per round.
3. **Prune**: SentencePiece's loss: Viterbi counts ``freq`` over the corpus; for each
   piece, its best segmentation without itself (its second-best ``nbest``); a piece
   whose own string is better segmented otherwise goes; for the others the loss is
   ``freq/N * (log p(piece) - sum log p'(alternative))`` where ``p'`` gives the
   piece's count to its alternatives. The ``shrinking_factor`` (0.75) best by loss
   stay. Repeat 2-3 until at most ``1.1 * vocab_size`` pieces, then keep the
   ``vocab_size`` best by score. Single characters are never removed (nor, with
   ``byte_fallback``, the 256 ``<0xXX>`` pieces, which are not trained).

Words are SentencePiece's (``split_by_whitespace``): ``▁`` (U+2581) is put before the
text and replaces every space, and each ``▁`` starts a word, so ``"a  b"`` has the
words ``▁a``, ``▁`` and ``▁b``. Newlines and tabs are ordinary characters inside words.
The tokenizer does the same with a ``Prepend("▁")`` + ``Replace(" ", "▁")`` normalizer
and a ``Metaspace`` pre-tokenizer that only splits, and decodes with a ``Metaspace``
decoder (which drops the first token's ``▁``), so ``decode(encode(text)) == text`` for
every text whose characters are all in the alphabet (with ``byte_fallback``, every
text), except that

- a literal ``▁`` in the text decodes as a space (it *is* the space symbol);
- without ``byte_fallback``, each run of characters outside the alphabet is one
  ``<unk>`` token and decodes as ``"<unk>"``;
- text after a special token is normalized on its own, as ``tokenizers`` does, so it
  gets its own ``▁`` and decodes with a space after the special token;
- lone surrogates (no ``tokenizer.json`` can hold them) are trained as U+FFFD and
  encode as unknown characters (with ``byte_fallback``: three U+FFFD on decode).

The ``<0xXX>`` byte pieces score below six times the lowest piece score and the
characters ``<>x0-9A-F`` are always in the alphabet, so a literal ``<0x41>`` in the
text is never encoded as byte 0x41 (``tokenizers``' Unigram matches byte pieces as
text, SentencePiece does not). Learned pieces spelled like ``<unk>``, a special token
or a byte piece (any hex case) are left out.

Differences from SentencePiece, by choice: no normalization (``nmt_nfkc``), all
characters kept (``character_coverage=1.0``), no ``split_by_unicode_script`` /
``split_by_number`` / ``split_digits`` limits on pieces (as ``tokenizers``'
``UnigramTrainer``), characters stay in the model through EM (their expected count
floored at 0.5) instead of coming back at the end, and words longer than 256
characters are trained as 256-character chunks (encoding is unaffected). Scores are
rounded to 8 decimals (see ``_tokenizer``). Not here: subword-regularization sampling
(``models/unigram.py``), ``treat_whitespace_as_suffix``, a regex pre-tokenizer
(``pattern``; see ``train_unigram``).

Performance notes
-----------------
- All lattices of all distinct words are one flat edge list (piece, and the edge's
  nodes), and forward / backward / Viterbi sweep every word at once, one step per
  offset in the word (at most 256 steps): gather the values of the edges' other
  nodes, add the scores, and ``np.logaddexp.reduceat`` (or ``np.maximum.reduceat``)
  over each node's run of edges. Node ids are numbered in sweep order, so a step's
  nodes are one contiguous block and the nodes it reads are read in order.
  ``logaddexp.reduceat`` replaced max / subtract / exp / add / log (16% less per
  sweep); numbering nodes by text position first (scattered reads) cost ~2x per
  E-step; float32 gained only ~10% and was dropped.
- The edges are placed without sorting: ``pid[p]`` (the pieces starting at p, by
  length) and ``ending[q]`` are dense int32 tables, so a node's edges are one row,
  read in sweep order block by block. A first version sorted the edge list with
  ``np.lexsort`` (11 s of the 55 s Shakespeare run) and renumbered ids after every
  M-step (8 s); now ids never change, removed pieces score -inf, and the edge lists
  are filtered (sequential, order-preserving) once a tenth of them are dead.
- Pruning's alternatives (each piece's best segmentation without itself) are one
  dense Viterbi over (piece, offset) reading ``pid``.
- The suffix array sorts by the first 16 characters only: characters are packed into
  int64 keys while they fit (7 bits each for English: 8 characters), so prefix
  doubling needs two sorts.
- Figures (``bench/train_unigram_compression.py``, 2-core machine, quiet): 8,000
  pieces from the 5 MB Shakespeare corpus in 15.6 s (15.5 s CPU) against 5.1 s (8.8 s
  CPU) for SentencePiece's trainer on 2 threads: 3.1x its wall time, 1.8x its CPU
  time. An E-step over the 4-5 M edges takes ~0.33 s; 18 of them are 45% of the run,
  the suffix array, seeds and first lattice 35%. 10x the corpus (0.5 MB -> 5 MB)
  takes 15-17.5x the time (2,000-8,000 pieces): per step the work is linear, but the
  number of pruning rounds, ``log(pieces after EM / vocab_size) / log(4/3)``, grows
  (2 rounds for 0.5 MB, 8 for 5 MB at 8,000 pieces). SentencePiece's own ratio, one
  thread: 12.4x (2,000), 18.6x (4,000); it cannot make 8,000 pieces from 0.5 MB.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import regex

from .. import decoders as dec
from .. import normalizers as nz
from .. import pre_tokenizers as pt
from ..added_vocabulary import AddedToken
from ..models.unigram import Unigram
from ..pipeline import Pipeline
from ..surrogates import replace_surrogates
from ..tokenizer import Tokenizer
from .counting import check_counts

__all__ = ["count_words", "train_unigram"]

Progress = Callable[[int, int], None]

_I = npt.NDArray[np.int64]
_I32 = npt.NDArray[np.int32]
_F = npt.NDArray[np.float64]
_B = npt.NDArray[np.bool_]

#: SentencePiece's word-start symbol (U+2581), which stands for a space.
META = "\u2581"
#: Words longer than this are trained as chunks of this many characters.
_MAX_WORD = 256
#: SentencePiece's kExpectedFrequencyThreshold: M-step drops pieces expected less often.
_MIN_EXPECTED = 0.5
#: SentencePiece stops pruning at this multiple of the vocabulary size, then keeps the best.
_DESIRED_SLACK = 1.1
#: With byte fallback these characters stay in the alphabet (see the module notes).
_HEX_CHARS = "<>x0123456789ABCDEF"
_BYTE_SPELLING = regex.compile(r"<0x[0-9A-Fa-f]{2}>")
_NEG_INF = float("-inf")
#: Scores in the tokenizer.json are rounded to this many decimals (see ``_tokenizer``).
_SCORE_DECIMALS = 8
#: Nodes per block when the lattice is built (bounds the temporary tables).
_CHUNK = 1 << 17


def count_words(texts: Iterable[str], *, special_tokens: Sequence[str] = ()) -> Counter[str]:
    """Count the words ``train_unigram`` trains on: ``▁`` + each text with spaces as ``▁``,
    split before every ``▁``. The map step: counts of shards add up to the whole.

    Text is first cut at ``special_tokens`` literals (which are not counted), and each
    segment gets its own ``▁``, as the trained tokenizer encodes it.

    >>> sorted(count_words(["the cat", "the  hat"]).items())
    [('▁', 1), ('▁cat', 1), ('▁hat', 1), ('▁the', 2)]
    """
    if isinstance(texts, str):
        raise TypeError("count_words takes an iterable of texts, not one str; wrap it in a list")
    specials = sorted({s for s in special_tokens if s}, key=len, reverse=True)
    cut = regex.compile("|".join(map(regex.escape, specials))) if specials else None
    parts: Counter[str] = Counter()
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        text = replace_surrogates(text)
        for segment in cut.split(text) if cut is not None else (text,):
            if segment:
                # "▁" + segment, split before each "▁": every part gets a "▁".
                parts.update(segment.replace(" ", META).split(META))
    return Counter({META + p: c for p, c in parts.items()})


def train_unigram(
    texts_or_counts: Iterable[str] | Mapping[str, int],
    vocab_size: int,
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] = (),
    min_frequency: int = 2,
    byte_fallback: bool = False,
    progress: Progress | None = None,
    name: str = "trained-unigram",
    unk_token: str = "<unk>",
    max_piece_length: int = 16,
    seed_size: int = 1_000_000,
    shrinking_factor: float = 0.75,
    num_sub_iterations: int = 2,
    snapshot: Callable[[Tokenizer], None] | None = None,
) -> Tokenizer:
    """Train a SentencePiece-style Unigram tokenizer of ``vocab_size`` ids, specials
    included (fewer when the corpus does not have that many substrings).

    ``texts_or_counts`` is an iterable of texts or a ``Counter`` of words: the one
    ``count_words`` gives (sum it over shards), or ``count_pretokens``' (its keys are
    re-split before each space; a key without a leading space trains as the inside of
    a word). Ids: 0 is ``unk_token``, then the 256 ``<0xXX>`` pieces with
    ``byte_fallback``, then the learned pieces by descending score (all characters of
    the corpus among them), then the special tokens, which are matched in text before
    the model (a special equal to ``unk_token`` is id 0). Seed substrings need
    ``min_frequency`` occurrences; single characters are always kept.
    ``progress(done, total)`` is called after each EM step and each pruning; ``total``
    is an estimate until the last call, where it equals ``done``.

    ``snapshot(tok)``, when given, is called after each pruning round's EM steps with
    the tokenizer of every piece alive then (largest first, the last one before the
    final cut to ``vocab_size``): what ``tokstream train --plot`` measures compression
    along. Each costs a tokenizer build.

    ``pattern`` is the common trainer option; words here are always SentencePiece's
    whitespace-delimited ones, so only ``None`` is accepted (a regex split before the
    ``▁`` handling is not implemented). The module docstring has the model, the
    tokenizer's shape and the exact round-trip rule.

    A seed must be followed by two different characters (``▁lowest`` is: by a space
    and by ``.``), so this corpus has 13 pieces at most:

    >>> tok = train_unigram(["low lower lowest lowest."] * 5, 60)
    >>> [tok.id_to_token(i) for i in tok.encode("lowest low")], tok.n_vocab
    (['▁lowest', '▁low'], 13)
    >>> tok.decode(tok.encode(" low  lower ")) == " low  lower "
    True
    """
    if pattern is not None:
        raise NotImplementedError(
            "train_unigram splits words at spaces, SentencePiece-style (pattern=None); "
            "a regex pre-tokenizer ahead of the ▁ handling is not implemented"
        )
    for label, value, low in (
        ("vocab_size", vocab_size, 1),
        ("min_frequency", min_frequency, 1),
        ("max_piece_length", max_piece_length, 1),
        ("seed_size", seed_size, 0),
        ("num_sub_iterations", num_sub_iterations, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{label} must be an int, got {value!r}")
        if value < low:
            raise ValueError(f"{label}={value} must be at least {low}")
    if not 0.0 < shrinking_factor < 1.0:
        raise ValueError(f"shrinking_factor={shrinking_factor} must be between 0 and 1")
    if not isinstance(byte_fallback, bool):
        raise TypeError(f"byte_fallback must be a bool, got {byte_fallback!r}")
    if not isinstance(unk_token, str):
        raise TypeError(f"unk_token must be a str, got {type(unk_token).__name__}")
    if not unk_token:
        raise ValueError("unk_token must not be empty")
    specials = _check_specials(special_tokens, unk_token)
    unk_special = unk_token in special_tokens
    words = _words(texts_or_counts, [unk_token, *specials] if unk_special else specials)

    alphabet = {c for w in words for c in w}
    extra_chars = sorted(set(_HEX_CHARS) - alphabet) if byte_fallback else []
    for s in specials:
        if len(s) == 1 and (s in alphabet or s in extra_chars):
            raise ValueError(
                f"special token {s!r} is a character of the corpus (or a byte-fallback "
                f"character); spell special tokens with more than one character"
            )
    n_fixed = 1 + (256 if byte_fallback else 0) + len(specials)
    n_chars = len(alphabet) + len(extra_chars)
    if vocab_size < n_fixed + n_chars:
        raise ValueError(
            f"vocab_size={vocab_size} is too small: the corpus has {len(alphabet)} distinct "
            f"characters{' (+' + str(len(extra_chars)) + ' for byte fallback)' if extra_chars else ''}"
            f", which are all kept, and {unk_token!r}"
            f"{', the 256 byte pieces' if byte_fallback else ''} and the {len(specials)} "
            f"special tokens need {n_fixed} ids; use at least {n_fixed + n_chars}"
        )
    n_pieces = vocab_size - n_fixed
    reserved = {unk_token, *specials}

    corpus = _Corpus(words, max_piece_length)
    trainer = _Trainer(corpus, min_frequency=min_frequency, seed_size=seed_size)
    rounds = None
    if snapshot is not None:

        def rounds() -> None:
            alive = trainer.final_pieces(trainer.size, reserved, byte_fallback, extra_chars)
            snapshot(_tokenizer(alive, unk_token, specials, byte_fallback, name, unk_special=unk_special))

    trainer.run(
        desired=max(int(n_pieces * _DESIRED_SLACK), n_chars),
        shrinking_factor=shrinking_factor,
        num_sub_iterations=num_sub_iterations,
        progress=progress,
        rounds=rounds,
    )
    pieces = trainer.final_pieces(n_pieces, reserved, byte_fallback, extra_chars)
    return _tokenizer(pieces, unk_token, specials, byte_fallback, name, unk_special=unk_special)


def _check_specials(special_tokens: Sequence[str], unk_token: str) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of str, not one str")
    out: list[str] = []
    for i, s in enumerate(special_tokens):
        if not isinstance(s, str):
            raise TypeError(f"special_tokens[{i}] is {type(s).__name__}, not str")
        if not s:
            raise ValueError(f"special_tokens[{i}] is empty")
        if s != unk_token and s not in out:
            out.append(s)
    return out


def _words(texts_or_counts: Iterable[str] | Mapping[str, int], specials: list[str]) -> dict[str, int]:
    """Distinct training words (``▁`` form, long ones chunked) with positive counts."""
    if isinstance(texts_or_counts, str):
        raise TypeError("pass an iterable of texts (a list of str) or a Counter, not one str")
    if isinstance(texts_or_counts, Mapping):
        check_counts(texts_or_counts)
        items = list(texts_or_counts.items())
        keys = "\0".join(p for p, _ in items)
        plain = " " not in keys and replace_surrogates(keys) is keys
        if plain and keys.count(META) == sum(p.startswith(META) for p, _ in items):
            raw: Counter[str] = Counter(dict(items))  # count_words' form: nothing to split
        else:
            raw = Counter()
            for piece, c in items:
                parts = replace_surrogates(piece).replace(" ", META).split(META)
                if parts[0]:
                    raw[parts[0]] += c
                for p in parts[1:]:
                    raw[META + p] += c
    else:
        raw = count_words(texts_or_counts, special_tokens=specials)
    words: Counter[str] = Counter()
    for w, c in raw.items():
        if c <= 0 or not w:
            continue
        if len(w) <= _MAX_WORD:
            words[w] += c
        else:
            for i in range(0, len(w), _MAX_WORD):
                words[w[i : i + _MAX_WORD]] += c
    if not words:
        raise ValueError("the corpus is empty: no words to train on")
    return dict(sorted(words.items()))


# ------------------------------------------------------------------------ corpus


class _Corpus:
    """The distinct words concatenated, each followed by a separator position.

    Node ``q`` of a word's lattice is the text position ``q`` (``start <= q <= end``,
    ``end`` the separator), so all lattices share one node numbering.
    """

    def __init__(self, words: dict[str, int], max_len: int) -> None:
        self.max_len = max_len
        strings = list(words)
        self.counts: _F = np.array([words[w] for w in strings], dtype=np.float64)
        lengths = np.array([len(w) for w in strings], dtype=np.int64)
        self.word_start: _I = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]).astype(np.int64)
        self.word_end: _I = self.word_start + lengths
        self.n = int(self.word_end[-1]) + 1 if len(strings) else 0
        joined = "\0".join(strings) + "\0"
        # uint32 view of UTF-32: one code point per position, separators 0.
        utf32 = joined.encode("utf-32-le", "surrogatepass")
        self.codes: _I = np.frombuffer(utf32, dtype=np.uint32).astype(np.int64)
        word_of = np.repeat(np.arange(len(strings), dtype=np.int64), lengths + 1)
        self.word_of: _I = word_of
        # characters left in the word from each position (0 at the separator)
        self.rem: _I = self.word_end[word_of] - np.arange(self.n, dtype=np.int64)
        self.offset: _I = np.arange(self.n, dtype=np.int64) - self.word_start[word_of]
        # Node ids in sweep order, so a level's nodes are one contiguous block and the
        # nodes it reads are read in order. Forward ids: positions by (offset in word,
        # position), the word starts first; backward ids: by (characters left, position),
        # the word ends first. Stable radix sorts of int16 keys (words are at most
        # _MAX_WORD long). ``*_bounds[k]`` is the first id of level k.
        self.fwd_pos, self.fwd_id, self.fwd_bounds = self._order(self.offset)
        self.bwd_pos, self.bwd_id, self.bwd_bounds = self._order(self.rem)
        self.log_counts: _F = np.log(self.counts)
        self.bwd_word: _I = word_of[self.bwd_pos]

    def _order(self, level: _I) -> tuple[_I, _I, _I]:
        """(position of each id, id of each position, first id of each level)."""
        order = np.argsort(level.astype(np.int16), kind="stable").astype(np.int64)
        ids = np.empty(self.n, dtype=np.int64)
        ids[order] = np.arange(self.n, dtype=np.int64)
        bounds = np.searchsorted(level[order], np.arange(int(level.max()) + 2)).astype(np.int64)
        return order, ids, bounds

    def spell(self, start: int, length: int) -> str:
        return "".join(map(chr, self.codes[start : start + length].tolist()))


def _dense_rank(key: _I) -> _I:
    """Ranks 0.. of ``key``'s values, order preserving."""
    order = np.argsort(key)
    sorted_key = key[order]
    step = np.empty(len(key), dtype=np.int64)
    step[0] = 0
    np.cumsum(sorted_key[1:] != sorted_key[:-1], out=step[1:])
    rank = np.empty(len(key), dtype=np.int64)
    rank[order] = step
    return rank


class _SuffixGroups:
    """Suffixes sorted by their first ``max_len`` characters, and the adjacent common
    prefix lengths capped at the word end: the suffixes sharing an L-character prefix
    (within their word) are the runs where ``lcp >= L``."""

    def __init__(self, corpus: _Corpus) -> None:
        n, max_len = corpus.n, corpus.max_len
        top = 1
        while top < max_len:
            top *= 2
        pad = 2 * top
        # keys[k][p] identifies text[p:p+k] (equal keys, equal strings; ordered as the
        # strings): k characters packed into an int64 while they fit, else dense ranks
        # of (keys[k/2][p], keys[k/2][p+k/2]) pairs (prefix doubling, one sort).
        _, codes = np.unique(corpus.codes, return_inverse=True)
        key = np.concatenate([codes.astype(np.int64).ravel(), np.zeros(pad, dtype=np.int64)])
        bits = max(int(key.max()).bit_length(), 1)
        ranks: dict[int, _I] = {1: key}
        k = 1
        while k < top:
            r = ranks[k]
            shifted = np.concatenate([r[k:], np.zeros(k, dtype=np.int64)])
            if 2 * bits > 62:  # too wide to pack: rank first (ranks < n < 2**31)
                r = _dense_rank(r)
                bits = max(int(r.max()).bit_length(), 1)
                shifted = np.concatenate([r[k:], np.zeros(k, dtype=np.int64)])
            ranks[2 * k] = (r << bits) | shifted
            bits *= 2
            k *= 2
        self.sa: _I = np.argsort(ranks[top][:n]).astype(np.int64)
        a, b = self.sa[:-1], self.sa[1:]
        lcp = np.zeros(max(n - 1, 0), dtype=np.int64)
        k = top // 2
        while k >= 1:
            eq = ranks[k][a + lcp] == ranks[k][b + lcp]
            lcp += k * eq
            k //= 2
        lcp[ranks[top][a] == ranks[top][b]] = top
        rem = corpus.rem
        self.lcp: _I = np.minimum(np.minimum(lcp, np.minimum(rem[a], rem[b])), max_len)
        self.rem_sa: _I = rem[self.sa]

    def groups(self, length: int) -> tuple[_I, _I, _B]:
        """``(gid, starts, valid)``: each sorted suffix's group of equal ``length``-prefix,
        each group's first index, whether the group's prefix stays inside its word."""
        n = len(self.sa)
        first = np.empty(n, dtype=np.bool_)
        first[0] = True
        np.less(self.lcp, length, out=first[1:])
        gid = np.cumsum(first) - 1
        starts = np.flatnonzero(first)
        valid = self.rem_sa[starts] >= length
        return gid, starts, valid


# ------------------------------------------------------------------------ lattice


class _Lattice:
    """The edges of all words' lattices, placed for the forward and backward sweeps.

    Forward: edges grouped by end node (in forward id order), a node's edges by start;
    backward: by start node (backward id order), a node's edges by end. Each edge
    holds its piece and the ids of its other node (and, forward, its end's backward
    id, for the posterior). Every node but a word's first (forward) or last
    (backward) has at least its character's edge, so one node's edges are one
    ``reduceat`` run and a level's runs are its block of ids.

    Cost: building is O(E + L * n) for E edges, n positions and L the longest piece
    (no sort); memory 5 int32 arrays of E plus two float64 work arrays of E. A sweep is
    O(E) numpy work plus 4 numpy calls per level (offset in word, at most 256); an
    E-step is two sweeps and ~6 passes over E: 0.35-0.45 s for Shakespeare's 4-5 M
    edges (2.1 M positions, 152k distinct words).
    """

    def __init__(self, corpus: _Corpus, starting: _I32, ending: _I32, usable: _B) -> None:
        """The edges whose piece is ``usable`` (indexed by id, -1 last): ``starting[p]``
        lists the pieces starting at p by length, ``ending[q]`` those ending at q."""
        self.corpus = c = corpus
        self.n_edges = total = int(np.count_nonzero(usable[starting[: c.n]]))
        f_cols = [np.empty(total, dtype=np.int32) for _ in range(3)]
        b_cols = [np.empty(total, dtype=np.int32) for _ in range(2)]
        f_count = np.empty(c.n, dtype=np.int64)
        b_count = np.empty(c.n, dtype=np.int64)
        f_at = b_at = 0
        for lo in range(0, c.n, _CHUNK):
            hi = min(lo + _CHUNK, c.n)
            # forward: the edges ending at the nodes lo..hi-1, longest (first start) first
            f_at = self._chunk(c, ending, usable, lo, c.fwd_pos[lo:hi], f_cols, f_at, f_count, forward=True)
            b_at = self._chunk(c, starting, usable, lo, c.bwd_pos[lo:hi], b_cols, b_at, b_count, forward=False)
        self.f_src, self.f_piece, self.f_dst_b = f_cols
        self.b_src, self.b_piece = b_cols
        self.f_base = self._base(f_count)
        self.b_base = self._base(b_count)
        self.fwd = self._levels(c.fwd_bounds, self.f_base)
        self.bwd = self._levels(c.bwd_bounds, self.b_base)
        self._buffers = (np.empty(total), np.empty(total))

    def keep(self, usable: _B) -> None:
        """Drop the edges of pieces no longer ``usable``: sequential filtering, the
        orders stay as they are."""
        c = self.corpus
        mf = usable[self.f_piece]
        self.f_src, self.f_piece, self.f_dst_b = (x[mf] for x in (self.f_src, self.f_piece, self.f_dst_b))
        mb = usable[self.b_piece]
        self.b_src, self.b_piece = (x[mb] for x in (self.b_src, self.b_piece))
        self.n_edges = len(self.f_piece)
        self._buffers = (np.empty(self.n_edges), np.empty(self.n_edges))
        self.f_base = self._base(self._counts(mf, self.f_base))
        self.b_base = self._base(self._counts(mb, self.b_base))
        self.fwd = self._levels(c.fwd_bounds, self.f_base)
        self.bwd = self._levels(c.bwd_bounds, self.b_base)

    def _counts(self, kept: _B, base: _I) -> _I:
        """Edges kept per node id, from the old prefix sums. The first W ids (word
        starts / ends) have no edges; every other id has at least one, so the
        ``reduceat`` runs are never empty."""
        n_words = len(self.corpus.word_start)
        counts = np.zeros(len(base) - 1, dtype=np.int64)
        if len(kept):
            counts[n_words:] = np.add.reduceat(kept, base[n_words:-1], dtype=np.int64)
        return counts

    @staticmethod
    def _chunk(
        c: _Corpus,
        by_node: _I32,
        usable: _B,
        first_id: int,
        nodes: _I,
        cols: list[_I32],
        at: int,
        count: _I,
        *,
        forward: bool,
    ) -> int:
        """Write the edges of the nodes with ids ``first_id...`` (positions ``nodes``)
        into ``cols`` from ``at`` on, in sweep order, and their counts into ``count``;
        return the next free index."""
        max_len = by_node.shape[1]
        table = by_node[nodes]  # one cache line per node
        if forward:
            table = table[:, ::-1]  # longest (earliest start) first
        mask = usable[table]
        local, column = np.nonzero(mask)
        end = at + len(local)
        if forward:
            cols[0][at:end] = c.fwd_id[nodes[local] - (max_len - column)]
            cols[2][at:end] = c.bwd_id[nodes][local]
        else:
            cols[0][at:end] = c.bwd_id[nodes[local] + column + 1]
        cols[1][at:end] = table[local, column]
        count[first_id : first_id + len(nodes)] = np.count_nonzero(mask, axis=1)
        return end

    @staticmethod
    def _base(count: _I) -> _I:
        """Each node id's first edge: prefix sums of the edges per node."""
        base = np.zeros(len(count) + 1, dtype=np.int64)
        np.cumsum(count, out=base[1:])
        return base

    @staticmethod
    def _levels(bounds: _I, base: _I) -> list[tuple[int, int, int, int, _I]]:
        """Per level: (first node id, end node id, first edge, end edge, run starts
        relative to the first edge)."""
        out: list[tuple[int, int, int, int, _I]] = []
        for lv in range(1, len(bounds) - 1):
            r_lo, r_hi = int(bounds[lv]), int(bounds[lv + 1])
            if r_lo < r_hi:
                lo, hi = int(base[r_lo]), int(base[r_hi])
                out.append((r_lo, r_hi, lo, hi, base[r_lo:r_hi] - lo))
        return out

    @staticmethod
    def _sweep(values: _F, lp: _F, levels: list[tuple[int, int, int, int, _I]], src: _I32) -> None:
        """Log-sum-exp of ``values[src] + lp`` over each node's edges, level by level."""
        for r_lo, r_hi, lo, hi, red in levels:
            v = values[src[lo:hi]]
            v += lp[lo:hi]
            values[r_lo:r_hi] = np.logaddexp.reduceat(v, red)

    def expected_counts(self, logp: _F) -> tuple[_F, float]:
        """E-step: each piece's expected count (word counts times the posterior, summed)
        and the corpus log likelihood."""
        c = self.corpus
        n_words = len(c.word_start)
        lp_f, work = self._buffers  # E floats each, kept: no page faults per step
        alpha = np.empty(c.n)
        alpha[:n_words] = 0.0  # the word starts (forward ids 0..W-1)
        np.take(logp, self.f_piece, out=lp_f, mode="clip")
        self._sweep(alpha, lp_f, self.fwd, self.f_src)
        beta = np.empty(c.n)
        beta[:n_words] = 0.0  # the word ends (backward ids 0..W-1)
        self._sweep(beta, np.take(logp, self.b_piece, out=work, mode="clip"), self.bwd, self.b_src)
        z = alpha[c.fwd_id[c.word_end]]
        # beta plus the word's log count minus its log likelihood, per backward id
        beta += (c.log_counts - z)[c.bwd_word]
        post = np.take(alpha, self.f_src, out=work, mode="clip")
        post += lp_f
        post += np.take(beta, self.f_dst_b, out=lp_f, mode="clip")
        np.exp(post, out=post)  # count * exp(alpha + lp + beta - z)
        expected = np.asarray(np.bincount(self.f_piece, weights=post, minlength=len(logp)), dtype=np.float64)
        return expected, float((z * c.counts).sum())  # no BLAS: its threads cost more here

    def viterbi_counts(self, logp: _F) -> _F:
        """Each piece's count in the best segmentations of all words (times word counts);
        ties go to the edge that starts first, as the encoder."""
        c = self.corpus
        n_words = len(c.word_start)
        best = np.empty(c.n)
        best[:n_words] = 0.0
        back = np.zeros(c.n, dtype=np.int64)
        lp = logp[self.f_piece]
        src = self.f_src
        big = np.int64(len(src))
        for r_lo, r_hi, lo, hi, red in self.fwd:
            v = best[src[lo:hi]]
            v += lp[lo:hi]
            m = np.maximum.reduceat(v, red)
            idx = np.where(v == np.repeat(m, np.diff(red, append=hi - lo)), np.arange(lo, hi, dtype=np.int64), big)
            best[r_lo:r_hi] = m
            back[r_lo:r_hi] = np.minimum.reduceat(idx, red)
        pieces: list[_I32] = []
        weights: list[_F] = []
        cur = c.fwd_id[c.word_end]
        word = np.arange(n_words, dtype=np.int64)
        while len(cur):
            e = back[cur]
            pieces.append(self.f_piece[e])
            weights.append(c.counts[word])
            cur = self.f_src[e].astype(np.int64)
            more = cur >= n_words  # not yet back at the word's start
            cur, word = cur[more], word[more]
        counts = np.bincount(np.concatenate(pieces), weights=np.concatenate(weights), minlength=len(logp))
        return np.asarray(counts, dtype=np.float64)


def _digamma(x: _F) -> _F:
    """SentencePiece's digamma (recurrence up to 7, then the asymptotic series)."""
    x = x.astype(np.float64, copy=True)
    result = np.zeros_like(x)
    for _ in range(7):
        small = x < 7
        if not small.any():
            break
        result[small] -= 1.0 / x[small]
        x[small] += 1.0
    x -= 0.5
    xx = 1.0 / x
    xx2 = xx * xx
    xx4 = xx2 * xx2
    series = (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2 - (127.0 / 30720.0) * xx4 * xx4
    result += np.log(x) + series
    return result


# ------------------------------------------------------------------------ trainer


class _Trainer:
    """The pieces (ids: characters, then seeds; never renumbered: removed pieces are
    ``alive=False`` with score -inf) and the training loop."""

    def __init__(self, corpus: _Corpus, *, min_frequency: int, seed_size: int) -> None:
        self.corpus = corpus
        max_len = corpus.max_len
        groups = _SuffixGroups(corpus)
        sa = groups.sa
        weight_sa = corpus.counts[corpus.word_of[sa]]
        meta = ord(META)
        cand_score: list[_F] = [np.zeros(0)]
        cand_len: list[_I] = [np.zeros(0, dtype=np.int64)]
        cand_start: list[_I] = [np.zeros(0, dtype=np.int64)]
        cand_size: list[_I] = [np.zeros(0, dtype=np.int64)]
        chars: _I = np.zeros(0, dtype=np.int64)
        char_size: _I = chars
        char_freq: _F = np.zeros(0)
        for length in range(1, max_len + 1):
            gid, starts, valid = groups.groups(length)
            freq = np.asarray(np.bincount(gid, weights=weight_sa, minlength=len(starts)), dtype=np.float64)
            size = np.diff(starts, append=len(sa))  # suffixes in each group
            if length == 1:
                chars, char_freq, char_size = starts[valid], freq[valid], size[valid]
                continue
            keep = valid & (freq >= min_frequency)
            # Right-maximal in the running text (SentencePiece's suffix-tree nodes): two
            # occurrences are followed by different characters, a word's end counting
            # as the "▁" that starts the next word.
            after = np.where(groups.rem_sa > length, corpus.codes[np.minimum(sa + length, corpus.n - 1)], meta)
            keep &= np.minimum.reduceat(after, starts) != np.maximum.reduceat(after, starts)
            cand_score.append(freq[keep] * length)
            cand_len.append(np.full(int(keep.sum()), length, dtype=np.int64))
            cand_start.append(starts[keep])
            cand_size.append(size[keep])
        score = np.concatenate(cand_score)
        top = np.lexsort((np.concatenate(cand_start), np.concatenate(cand_len), -score))[:seed_size]
        # Characters first, most frequent first (ties by code point), then the seeds.
        char_order = np.lexsort((corpus.codes[sa[chars]], -char_freq))
        self.plen: _I = np.concatenate([np.ones(len(chars), dtype=np.int64), np.concatenate(cand_len)[top]])
        sa_start = np.concatenate([chars[char_order], np.concatenate(cand_start)[top]])
        sa_size = np.concatenate([char_size[char_order], np.concatenate(cand_size)[top]])
        self.rep: _I = sa[sa_start]
        initial = np.concatenate([char_freq[char_order], score[top]])
        self.logp: _F = np.log(initial) - math.log(float(initial.sum()))
        self.protected: _B = self.plen == 1
        self.alive: _B = np.ones(len(self.plen), dtype=np.bool_)
        # pid[p, L-1]: the id of the piece spelling text[p:p+L], else -1 (also in the
        # padding). Piece i occurs at sa[sa_start[i] : sa_start[i] + sa_size[i]].
        n = corpus.n
        self.pid: _I32 = np.full((n + max_len + 1, max_len), -1, dtype=np.int32)
        piece = np.repeat(np.arange(len(self.plen), dtype=np.int32), sa_size)
        first = np.cumsum(sa_size) - sa_size
        where = sa[np.arange(len(piece), dtype=np.int64) + np.repeat(sa_start - first, sa_size)]
        self.pid[where, np.repeat(self.plen - 1, sa_size)] = piece
        del groups, where, piece
        # ending[q, L-1]: the id of the piece text[q-L:q], copied from pid in blocks
        # of rows that stay in cache.
        ending = np.full((n + 1, max_len), -1, dtype=np.int32)
        block = 1 << 14
        for q0 in range(0, n + 1, block):
            q1 = min(q0 + block, n + 1)
            for length in range(1, max_len + 1):
                a = max(q0, length)
                if a < q1:
                    ending[a:q1, length - 1] = self.pid[a - length : q1 - length, length - 1]
        self.lattice = _Lattice(corpus, self.pid, ending, np.append(self.alive, False))
        self._rebuilt()

    def _rebuilt(self) -> None:
        self.edges_of = np.bincount(self.lattice.f_piece, minlength=len(self.alive))
        self.dead_edges = 0

    @property
    def size(self) -> int:
        return int(self.alive.sum())

    def _keep(self, keep: _B) -> None:
        """Remove the alive pieces not in ``keep``; rebuild the lattice once a tenth of
        its edges are dead (until then their -inf scores make them inert)."""
        gone = self.alive & ~keep
        self.alive = self.alive & keep
        self.logp[~self.alive] = _NEG_INF
        self.dead_edges += int(self.edges_of[gone].sum())
        if self.dead_edges > 0.1 * self.lattice.n_edges:
            self.lattice.keep(np.append(self.alive, False))
            self._rebuilt()

    def em_step(self) -> float:
        expected, loglik = self.lattice.expected_counts(self.logp)
        keep = self.alive & (self.protected | (expected >= _MIN_EXPECTED))
        counts = np.maximum(expected[keep], _MIN_EXPECTED)
        self.logp[keep] = _digamma(counts) - _digamma(np.array([counts.sum()]))[0]
        self._keep(keep)
        return loglik

    def _alternatives(self, rows: _I) -> tuple[_F, _I, _I]:
        """For pieces ``rows``: the score of the best segmentation of the piece's own
        string without the piece itself, and that segmentation as (index into
        ``rows``, piece id) pairs. A dense Viterbi over (piece, offset), longest
        pieces first, so the pieces of length >= e are a prefix."""
        order = np.argsort(-self.plen[rows], kind="stable")
        plen = self.plen[rows[order]]
        rep = self.rep[rows[order]]
        longest = int(plen[0]) if len(rows) else 0
        # count_ge[e]: rows with plen >= e; count_ge[longest + 1] = 0
        count_ge = [int(np.searchsorted(-plen, -e, side="right")) for e in range(longest + 2)]
        logp_ext = np.append(self.logp, _NEG_INF)  # pid -1 reads -inf
        best: list[_F] = [np.zeros(len(rows))]
        arg = np.zeros((len(rows), longest + 1), dtype=np.int16)
        for e in range(1, longest + 1):
            k = count_ge[e]
            col = np.full(k, _NEG_INF)
            argcol = arg[:k, e]
            for length in range(1, e + 1):
                a = e - length
                cand = best[a][:k] + logp_ext[self.pid[rep[:k] + a, length - 1]]
                if a == 0:
                    cand[count_ge[e + 1] :] = _NEG_INF  # the piece itself (plen == e)
                better = cand > col
                col[better] = cand[better]
                argcol[better] = length
            best.append(col)
        alt = np.empty(len(rows))
        for e in range(1, longest + 1):
            alt[count_ge[e + 1] : count_ge[e]] = best[e][count_ge[e + 1] : count_ge[e]]
        pair_row: list[_I] = []
        pair_id: list[_I] = []
        cur = plen.copy()
        idx = np.arange(len(rows), dtype=np.int64)
        while len(idx):
            step = arg[idx, cur].astype(np.int64)
            before = cur - step
            pair_row.append(idx)
            pair_id.append(self.pid[rep[idx] + before, step - 1].astype(np.int64))
            more = before > 0
            idx, cur = idx[more], before[more]
        unsorted = np.empty(len(rows))
        unsorted[order] = alt
        at = np.concatenate(pair_row) if pair_row else np.zeros(0, dtype=np.int64)
        ids = np.concatenate(pair_id) if pair_id else np.zeros(0, dtype=np.int64)
        return unsorted, order[at], ids

    def prune(self, target: int) -> None:
        """SentencePiece's PruneSentencePieces, down to ``target`` alive pieces."""
        freq = self.lattice.viterbi_counts(self.logp)
        vsum = float(self.corpus.counts.sum())
        rows = np.flatnonzero(self.alive & ~self.protected & (freq > 0))
        alt, pair_at, pair_id = self._alternatives(rows)
        # A piece better segmented without itself never wins a Viterbi path: it goes.
        ok = alt <= self.logp[rows]
        total = float(freq.sum())
        fi = freq[rows]
        n_alt = np.bincount(pair_at, minlength=len(rows)).astype(np.float64)
        logsum_alt = np.log(total + fi * (n_alt - 1.0))
        lp_alt = np.bincount(
            pair_at, weights=np.log(freq[pair_id] + fi[pair_at]) - logsum_alt[pair_at], minlength=len(rows)
        )
        lp_sp = np.log(fi) - math.log(total)
        loss = fi / vsum * (lp_sp - lp_alt)
        keep = self.alive & self.protected
        cand_rows, cand_loss = rows[ok], loss[ok]
        room = max(target - int(keep.sum()), 0)
        keep[cand_rows[np.lexsort((cand_rows, -cand_loss))[:room]]] = True
        self._keep(keep)

    def run(
        self,
        *,
        desired: int,
        shrinking_factor: float,
        num_sub_iterations: int,
        progress: Progress | None,
        rounds: Callable[[], None] | None = None,
    ) -> None:
        """EM steps and pruning down to ``desired`` pieces; ``rounds()`` after the EM
        steps that end each round (the pieces alive then are a round's vocabulary)."""
        done = 0

        def report(final: bool = False) -> None:
            if progress is None:
                return
            if final:
                progress(done, done)
                return
            ratio = self.size / desired
            rounds = math.ceil(math.log(ratio) / -math.log(shrinking_factor)) if ratio > 1 else 0
            progress(done, done + rounds * (num_sub_iterations + 1) + (num_sub_iterations if rounds else 0))

        while True:
            for _ in range(num_sub_iterations):
                self.em_step()
                done += 1
                report()
            if rounds is not None:
                rounds()
            if self.size <= desired:
                break
            self.prune(max(desired, int(shrinking_factor * self.size)))
            done += 1
            report()
        report(final=True)

    def final_pieces(
        self, n_pieces: int, reserved: set[str], byte_fallback: bool, extra_chars: list[str]
    ) -> list[tuple[str, float]]:
        """The characters plus the best-scoring other pieces, ``n_pieces`` in all."""
        spell = self.corpus.spell
        out: dict[str, float] = {}
        for i in np.flatnonzero(self.protected).tolist():
            out[spell(int(self.rep[i]), 1)] = float(self.logp[i])
        low = min(out.values())
        for k, c in enumerate(extra_chars):
            out[c] = low + 1e-4 * k  # SentencePiece's penalty for required characters
        others = np.flatnonzero(self.alive & ~self.protected)
        for i in others[np.lexsort((others, -self.logp[others]))].tolist():
            if len(out) >= n_pieces:
                break
            piece = spell(int(self.rep[i]), int(self.plen[i]))
            if piece in reserved or (byte_fallback and _BYTE_SPELLING.fullmatch(piece)):
                continue
            out[piece] = float(self.logp[i])
        return sorted(out.items(), key=lambda item: (-item[1], item[0]))


# ---------------------------------------------------------------------- tokenizer


def _tokenizer(
    pieces: list[tuple[str, float]],
    unk_token: str,
    specials: list[str],
    byte_fallback: bool,
    name: str,
    *,
    unk_special: bool,
) -> Tokenizer:
    # Scores are rounded to 8 decimals: tokenizers' JSON reader (serde_json without
    # float_roundtrip) reads 17-digit numbers up to 1 ulp off (732 of 4,000 scores in
    # a test), which flips exact ties such as "......" + "." against "." + "......".
    # Numbers of at most 15 digits it reads exactly, as Python does.
    vocab: list[tuple[str, float]] = [(unk_token, 0.0)]
    if byte_fallback:
        # Below any path over the six characters of a literal "<0xXX>" (module notes).
        low = min(score for _, score in pieces)
        vocab += [(f"<0x{b:02X}>", round(6.0 * low - 10.0, _SCORE_DECIMALS)) for b in range(256)]
    vocab += [(p, round(s, _SCORE_DECIMALS)) for p, s in pieces]
    first = len(vocab)
    listed = [(0, unk_token)] if unk_special else []
    listed += [(first + i, s) for i, s in enumerate(specials)]
    metaspace = dec.Metaspace(replacement=META, prepend_scheme="always", split=True)
    decoder: dec.Decoder = metaspace
    if byte_fallback:
        decoder = dec.Sequence([metaspace, dec.ByteFallback(), dec.Fuse()])
    pipeline = Pipeline(
        model=Unigram([(p, s) for p, s in vocab], unk_id=0, byte_fallback=byte_fallback),
        added=[AddedToken(id=i, content=s, special=True) for i, s in listed],
        normalizer=nz.Sequence([nz.Prepend(META), nz.Replace(" ", META)]),
        pre_tokenizer=pt.Metaspace(replacement=META, prepend_scheme="never", split=True),
        decoder=decoder,
    )
    return Tokenizer(pipeline=pipeline, name=name)
