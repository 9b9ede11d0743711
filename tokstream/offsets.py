"""Offsets: which characters of the input each token covers (``encode_with_offsets``).

Two paths, chosen per pipeline:

- **bytes** (``char_offsets``): when the tokens' bytes concatenate to the text's UTF-8
  (byte-level BPE with no normalizer and no prefix space: rank files, Llama 3), a token
  covers every character any of its bytes belongs to. One numpy pass.
- **spans** (``token_ranges`` and the pipeline's ``encode_plain_offsets``): the
  normalizer's ``normalize_aligned`` gives each normalized character the span of input
  characters it came from (``normalizers`` notes: inserted characters are zero-width,
  characters normalized together span their whole group), the pre-tokenizer's
  ``pre_tokenize_spans`` carries those spans through its cuts and rewrites, and the
  model encodes each piece as ``encode_plain`` does. A token then covers the piece
  characters it spells, and its offsets are the hull of their spans:

  - models with ``piece_spans`` (WordPiece, Unigram) say which characters each token
    covers; an unknown token covers its word (WordPiece) or its run (Unigram);
  - otherwise (BPE, SentencePiece BPE) each token's vocabulary spelling is matched along
    the piece (a continuing-subword prefix or end-of-word suffix removed); a
    byte-fallback ``<0xXX>`` token takes the next byte of the current character and
    covers that whole character, as a byte-level token does; a run of tokens that
    cannot be matched (unknown) covers the characters up to where the next token
    matches, one character each when the counts agree; characters skipped before a
    token's spelling (BPE with no unknown token drops what it cannot spell) are in no
    token. If the walk goes astray (a byte token missing, an unmatched run with nothing
    left to cover), every token of the piece covers the whole piece.

After the model, a ``ByteLevel`` or ``RobertaProcessing`` post-processor with
``trim_offsets`` moves each token's offsets off its leading and trailing spaces
(``trim_spaces``), as ``tokenizers`` does whether or not special tokens are added.

Added tokens (``Pipeline.encode_offsets``): a raw one covers its match in the input,
with the whitespace ``lstrip`` / ``rstrip`` took; a normalized one, matched in normalized
text, the hull of its characters' spans (``hull``), as the text around it. Where an
``rstrip`` match's whitespace holds another literal, the two pieces overlap, as in
``tokenizers`` (``added_vocabulary`` notes), and offsets there are not monotone.

Cost: the bytes path is a few numpy passes over the text. The spans path walks
characters in Python (``normalize_aligned`` and the span variants, about 1-5 MB/s in
all), so offsets there cost several times an uncached encode.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import regex

from .models.base import Model

__all__ = ["Spans", "Spellings", "char_offsets", "hull", "token_ranges", "trim_spaces"]

#: ``(start, end)`` code-point spans, one per character or token.
Spans = list[tuple[int, int]]


def token_ranges(spell: Spellings, piece: str, ids: Sequence[int]) -> list[tuple[int, int]]:
    """The characters of ``piece`` each token covers, by its spelling (module notes)."""
    n, last = len(piece), len(ids) - 1
    ranges: list[tuple[int, int]] = []
    pos = 0
    bytes_left = 0  # of the character at pos, whose first bytes byte tokens took
    run: list[int] = []  # indices into ranges of unmatched tokens starting at pos
    for k, tid in enumerate(ids):
        text = spell.text.get(tid)
        is_byte = tid in spell.byte_ids
        if bytes_left:
            if not is_byte:
                return [(0, n)] * len(ids)
            ranges.append((pos, pos + 1))
            bytes_left -= 1
            if not bytes_left:
                pos += 1
            continue
        if text is not None:
            if k and spell.prefix and text.startswith(spell.prefix):
                text = text[len(spell.prefix) :]
            if k == last and spell.suffix and text.endswith(spell.suffix):
                text = text[: -len(spell.suffix)]
        if run:
            at = piece.find(text, pos + 1) if text else -1
            if at < 0:
                run.append(len(ranges))
                ranges.append((0, n))
                continue
            _close_run(ranges, run, pos, at)
            pos = at
        if text and piece.startswith(text, pos):
            ranges.append((pos, pos + len(text)))
            pos += len(text)
        elif is_byte and pos < n:
            ranges.append((pos, pos + 1))
            bytes_left = len(piece[pos].encode("utf-8")) - 1
            if not bytes_left:
                pos += 1
        elif text and (at := piece.find(text, pos)) >= 0:
            # BPE without an unknown token drops the characters it cannot spell.
            ranges.append((at, at + len(text)))
            pos = at + len(text)
        else:
            run.append(len(ranges))
            ranges.append((0, n))
    if run:
        if pos >= n:
            return [(0, n)] * len(ids)
        _close_run(ranges, run, pos, n)
        pos = n
    if bytes_left:
        return [(0, n)] * len(ids)
    return ranges  # pos < n: BPE dropped the last characters


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


class Spellings:
    """What ``token_ranges`` matches: each id's spelling in the alphabet of
    the pieces the model sees, the byte-fallback ids, the BPE prefix and suffix.

    The unknown token has no spelling here: it stands for text it does not spell, and
    matching its spelling (``"<unk>"`` where the unknown character is ``"<"``) would
    misplace every later token.
    """

    __slots__ = ("byte_ids", "prefix", "suffix", "text")

    def __init__(self, spellings: Sequence[str | None], model: Model) -> None:
        self.text: dict[int, str] = {i: s for i, s in enumerate(spellings) if s is not None}
        unk = model.unknown_id
        if unk is not None:
            self.text.pop(unk, None)
        self.byte_ids: frozenset[int] = (
            frozenset(i for i, s in self.text.items() if _BYTE_TOKEN.fullmatch(s)) if model.byte_tokens else frozenset()
        )
        self.prefix: str = model.subword_prefix
        self.suffix: str = model.word_suffix


def _close_run(ranges: Spans, run: list[int], start: int, end: int) -> None:
    """Unmatched tokens ``ranges[i] for i in run`` cover ``[start, end)``: one character
    each when there are as many, else all of it."""
    if end - start == len(run):
        for k, i in enumerate(run):
            ranges[i] = (start + k, start + k + 1)
    else:
        for i in run:
            ranges[i] = (start, end)
    run.clear()


def hull(spans: Spans, a: int, b: int) -> tuple[int, int]:
    """The smallest span holding ``spans[a:b]`` (zero-width ones included)."""
    if b <= a:
        at = spans[a][0] if a < len(spans) else spans[-1][1]
        return at, at
    part = spans[a:b]
    return min(s for s, _ in part), max(e for _, e in part)


def char_offsets(data: bytes, lengths: list[int]) -> list[tuple[int, int]]:
    """Code-point spans of consecutive byte runs of ``lengths`` over UTF-8 ``data``."""
    if not lengths:
        return []
    arr = np.frombuffer(data, dtype=np.uint8)
    # chars_before[b] = number of characters that start before byte b.
    starts = (arr & 0xC0) != 0x80
    chars_upto = np.concatenate(([0], np.cumsum(starts)))
    ends = np.cumsum(np.asarray(lengths, dtype=np.int64))
    begins = ends - np.asarray(lengths, dtype=np.int64)
    # The character holding the first byte, through the one holding the last.
    first = chars_upto[begins + 1] - 1
    last = chars_upto[np.maximum(ends, 1)]
    first = np.where(ends > begins, first, chars_upto[begins])
    last = np.where(ends > begins, last, chars_upto[begins])
    return list(zip(first.tolist(), last.tolist()))


#: What ``trim_spaces`` counts as a space: the byte-level space ``Ġ`` and Rust's
#: ``char::is_whitespace`` (Unicode White_Space; not ``str.isspace``, which adds
#: U+001C..U+001F).
_TRIMMED = frozenset(
    "\u0120\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def trim_spaces(
    ids: Sequence[int],
    offsets: Spans,
    spellings: Sequence[str | None],
    *,
    add_prefix_space: bool,
) -> Spans:
    """``offsets`` with each token's leading and trailing spaces (by its spelling)
    trimmed off, as ``tokenizers``' byte-level ``process_offsets``.

    A token spelled ``"Ġname"`` over ``(2, 7)`` becomes ``(3, 7)``. With
    ``add_prefix_space``, a first token (index 0 among the text's tokens, or starting
    at 0) with exactly one leading space keeps it: that space was inserted and covers
    no character. A start never passes the end, nor an end the start. Special tokens
    a post-processor adds are (0, 0), which trimming would leave alone.

    >>> trim_spaces([0, 1], [(0, 2), (2, 7)], ["ĠMy", "Ġname"], add_prefix_space=True)
    [(0, 2), (3, 7)]
    """
    out = list(offsets)
    for i, token_id in enumerate(ids):
        token = spellings[token_id] if 0 <= token_id < len(spellings) else None
        if not token or (token[0] not in _TRIMMED and token[-1] not in _TRIMMED):
            continue
        n = len(token)
        head = 0
        while head < n and token[head] in _TRIMMED:
            head += 1
        tail = 0
        while tail < n and token[n - 1 - tail] in _TRIMMED:
            tail += 1
        start, end = out[i]
        if head:
            if add_prefix_space and head == 1 and (i == 0 or start == 0):
                head = 0
            start = min(start + head, end)
        if tail and end >= tail:
            end = max(end - tail, start)
        out[i] = (start, end)
    return out
