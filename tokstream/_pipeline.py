"""The general pipeline behind ``tokenizer.json`` and SentencePiece tokenizers.

added tokens -> normalizer -> pre-tokenizer -> model (cached per piece) -> ids, and
ids -> token strings -> decoder -> text, with the semantics of Hugging Face
``tokenizers``. tiktoken-style tokenizers do not come here: ``_fastpath`` serves them.

Performance notes
-----------------
Pieces go through ``_fastpath.PieceCache`` (one C-level ``map`` over a dict, the model
only on misses). Two shapes get more:

- byte-level BPE whose pre-tokenizer is one known total regex (GPT-2's ``ByteLevel``,
  Llama 3's ``Split`` + ``ByteLevel``; ``pre_tokenizers.byte_level_regex``) runs on
  ``_fastpath.PieceEncoder``, the rank-file path: whole cut parts cached, pieces in
  the vocabulary answered without the model when ``ignore_merges`` says so;
- BPE with no pre-tokenizer (SentencePiece-style, ``▁`` for spaces) is cut into words
  at ``BPE.cut_char()`` when that is exact, so each word is cached instead of merging
  the whole text at once.

Offsets
-------
``encode_plain_offsets`` is a separate, slower path (``encode_plain`` is untouched): the
normalizer's ``normalize_aligned`` gives each normalized character the span of input
characters it came from (``normalizers`` module notes: inserted characters are
zero-width, characters normalized together span their whole group), the
pre-tokenizer's ``pre_tokenize_spans`` carries those spans through its cuts and
rewrites, and the model encodes each piece as ``encode_plain`` does. A token then
covers the piece characters it spells, and its offsets are the hull of their spans:

- models with ``encode_piece_spans`` (WordPiece, Unigram) say which characters each
  token covers; an unknown token covers its word (WordPiece) or its run (Unigram);
- otherwise (BPE, SentencePiece BPE) each token's vocabulary spelling is matched along
  the piece (a continuing-subword prefix or end-of-word suffix removed); a byte-fallback
  ``<0xXX>`` token takes the next byte of the current character and covers that whole
  character, as a byte-level token does; a run of tokens that cannot be matched
  (unknown) covers the characters up to where the next token matches, one character
  each when the counts agree; characters skipped before a token's spelling (BPE with
  no unknown token drops what it cannot spell) are in no token. If the walk goes
  astray (a byte token missing, an unmatched run with nothing left to cover), every
  token of the piece covers the whole piece.

Cost: ``normalize_aligned`` and the span variants walk characters in Python (about
1-5 MB/s in all), so offsets cost several times an uncached encode.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain
from typing import Any, Protocol

import regex

from . import normalizers as nz
from . import pre_tokenizers as pt
from ._fastpath import PieceCache, PieceEncoder
from ._stability import ASCII_WHITESPACE, WHITESPACE, SpecialHold, regex_cut, space_cut
from .byte_level import bytes_to_proxy, proxy_to_bytes
from .models.bpe import BPE, merges_for_ranks
from .pre_tokenizers import (
    RegexSplit,
    SpannedPiece,
    byte_level_regex,
    known_pattern,
    located_spans,
)

__all__ = ["AddedToken", "Model", "Pipeline", "tokenizer_json"]

#: ``(start, end)`` code-point spans, one per character or token.
Spans = list[tuple[int, int]]

class Model(Protocol):
    """What the pipeline needs from a segmentation model."""

    def encode_piece(self, piece: str) -> tuple[int, ...]: ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class AddedToken:
    """An entry of ``tokenizer.json``'s ``added_tokens``."""

    id: int
    content: str
    special: bool = False
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False
    normalized: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }


def _added_pattern(tokens: Sequence[AddedToken]) -> regex.Pattern[str] | None:
    """One regex matching every added token with its strip and word rules.

    Alternatives are ordered longest content first, so at the leftmost position the
    longest token wins, as ``tokenizers``' leftmost-longest Aho-Corasick does.
    """
    if not tokens:
        return None
    alts = []
    for t in sorted(tokens, key=lambda t: (-len(t.content), t.content)):
        body = regex.escape(t.content)
        if t.single_word:
            body = rf"(?<!\w){body}(?!\w)"
        if t.lstrip:
            body = rf"\s*{body}"
        if t.rstrip:
            body = rf"{body}\s*"
        alts.append(f"(?P<t{t.id}>{body})")
    return regex.compile("|".join(alts))


class Pipeline:
    """Encode plain text (specials already split off) and decode ids, ``tokenizers``-style.

    Cost: the normalizer and pre-tokenizer run on every call; a bounded dict maps each
    piece to its ids, so the model runs once per distinct short piece (see the module
    notes for the two faster shapes).
    """

    def __init__(
        self,
        *,
        model: Model,
        vocab: dict[str, int],
        normalizer: Any = None,
        pre_tokenizer: Any = None,
        post_processor: Any = None,
        decoder: Any = None,
        added_tokens: Sequence[AddedToken] = (),
        json_extra: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.vocab = vocab
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.added_tokens = list(added_tokens)
        self.json_extra = json_extra or {}
        self._added_re = _added_pattern(self.added_tokens)
        self._added_by_group = {f"t{t.id}": t for t in self.added_tokens}
        # No token can match in text without the first character of some token's
        # content (lstrip only adds whitespace before it): one C scan skips the
        # many-alternative regex on most text.
        firsts = sorted({t.content[0] for t in self.added_tokens if t.content})
        self._added_first = regex.compile("[" + "".join(map(regex.escape, firsts)) + "]" if firsts else "(?!)")
        self._pieces = PieceCache(model.encode_piece)
        self._fast, self._prefix_space = _fast_encoder(model, pre_tokenizer)
        cut = model.cut_char() if pre_tokenizer is None and isinstance(model, BPE) else None
        self._cut_re = None if cut is None else regex.compile(f"{cut}*[^{cut}]+|{cut}+")
        self._cut = None if self._cut_re is None else self._cut_re.findall
        self._spellings: _Spellings | None = None  # built by the first encode_plain_offsets
        self._cut_rule: Callable[[str], int] | None = None  # built by the first stream_cut
        self._holds: dict[frozenset[str], SpecialHold] = {}
        self._lstrip = any(t.lstrip for t in self.added_tokens)
        self._single_word = any(t.single_word for t in self.added_tokens)
        id_to_token: dict[int, str] = {i: s for s, i in vocab.items()}
        listed = model.get_vocab() if hasattr(model, "get_vocab") else None
        if isinstance(listed, list):  # Unigram: ids are positions, pieces may repeat
            id_to_token = {i: piece for i, (piece, _) in enumerate(listed)}
        for t in self.added_tokens:
            id_to_token[t.id] = t.content
        self.id_to_token = id_to_token

    # ------------------------------------------------------------------ encode

    def split_added(self, text: str) -> list[tuple[str, AddedToken | None]]:
        """Cut ``text`` at added tokens: ``(plain_text, None)`` and ``(match, token)``."""
        if self._added_re is None or self._added_first.search(text) is None:
            return [(text, None)]
        out: list[tuple[str, AddedToken | None]] = []
        pos = 0
        for m in self._added_re.finditer(text):
            if m.start() > pos:
                out.append((text[pos : m.start()], None))
            out.append((m.group(), self._added_by_group[m.lastgroup or ""]))
            pos = m.end()
        if pos < len(text):
            out.append((text[pos:], None))
        return out

    def encode_plain(self, text: str, *, first: bool = True) -> list[int]:
        """Ids of text that holds no added token; ``first=False`` for text that
        continues at a cut from ``stream_cut`` (no start-of-text rules)."""
        if not text:
            return []
        if self.normalizer is not None:
            normalizer = self.normalizer
            text = normalizer.normalize(text) if first else normalizer.normalize_continued(text)
            if not text:
                return []
        if self._fast is not None:
            if first and self._prefix_space and not text.startswith(" "):
                text = " " + text
            return self._fast.encode(text)
        if self.pre_tokenizer is not None:
            pre = self.pre_tokenizer
            pieces = pre.pre_tokenize([text]) if first else pre.pre_tokenize_continued([text])
        else:
            pieces = self._cut(text) if self._cut is not None else [text]
        return list(chain.from_iterable(map(self._pieces.__getitem__, pieces)))

    def open_section(
        self, text: str, limit: int, allowed: frozenset[str], disallowed: frozenset[str]
    ) -> tuple[int, int]:
        """``(start, limit)``: where the last section of ``text[:limit]`` that appended
        text can still change starts (after the last added token that splits it), and
        the end of what is final at most (``_stability.SpecialHold``: a literal may
        be completing). ``start`` is -1 when an added token's word rule
        (``single_word``, which looks behind) rules streaming out."""
        if self._single_word:
            return -1, limit
        hold = self._holds.get(disallowed)
        if hold is None:
            hold = self._holds[disallowed] = SpecialHold([*(t.content for t in self.added_tokens), *disallowed])
        limit = hold.hold(text, limit)
        if self._lstrip:  # a later token may take the whitespace before it
            limit = min(limit, len(text[:limit].rstrip(WHITESPACE)))
        start = 0
        if self._added_re is not None and self._added_first.search(text, 0, limit) is not None:
            by_group = self._added_by_group
            for m in self._added_re.finditer(text, 0, limit):
                token = by_group[m.lastgroup or ""]
                if token.special and token.content not in allowed:
                    continue  # plain text, as in Tokenizer._encode_pipeline
                if token.rstrip and m.end() == limit:  # more whitespace may follow
                    limit = m.start()
                    break
                start = m.end()
        return start, limit

    def stream_cut(self, text: str) -> int:
        """The largest cut (``_stability``) of ``text``, which holds no added token:
        ``encode_plain(text + s)`` is ``encode_plain(text[:b])`` followed by
        ``encode_plain(text[b:] + s, first=False)`` for every ``s``. 0 when the
        pipeline's shape has no proven rule."""
        if self._cut_rule is None:
            self._cut_rule = _cut_rule(self)
        return self._cut_rule(text)

    def encode_plain_offsets(self, text: str, start: int = 0) -> tuple[list[int], Spans]:
        """``encode_plain(text)`` and each token's ``(start, end)`` in code points of
        ``text``, shifted by ``start`` (module notes, Offsets).

        Raises ``UnicodeEncodeError`` exactly when ``encode_plain`` does (lone
        surrogates the model or the byte-level path cannot encode), so the caller
        retries both alike; ``NotImplementedError`` when the normalizer has no
        ``normalize_aligned``.
        """
        if not text:
            return [], []
        spans: Spans
        if self.normalizer is not None:
            aligned = getattr(self.normalizer, "normalize_aligned", None)
            if aligned is None:
                raise NotImplementedError(
                    f"offsets need {type(self.normalizer).__name__}.normalize_aligned(text) -> "
                    f"(normalized, spans): for each normalized character the (start, end) "
                    f"of the input characters it came from"
                )
            text, spans = aligned(text)
            if not text:
                return [], []
            if start:
                spans = [(a + start, b + start) for a, b in spans]
        else:
            spans = [(k, k + 1) for k in range(start, start + len(text))]
        if self._fast is not None:
            text.encode("utf-8")  # the byte-level fast path refuses lone surrogates
        pieces: list[SpannedPiece] = [(text, spans)]
        pre = self.pre_tokenizer
        if pre is not None:
            spanned = getattr(pre, "pre_tokenize_spans", None)
            pieces = spanned(pieces) if spanned is not None else located_spans(pre.pre_tokenize, pieces)
        elif self._cut_re is not None:
            pieces = [(m.group(), spans[m.start() : m.end()]) for m in self._cut_re.finditer(text)]
        ids: list[int] = []
        offsets: Spans = []
        by_spans = getattr(self.model, "encode_piece_spans", None)
        for piece, piece_spans in pieces:
            if by_spans is not None:
                found: list[tuple[int, int, int]] = by_spans(piece)
                ids += [t for t, _, _ in found]
                ranges = [(a, b) for _, a, b in found]
            else:
                piece_ids = self._pieces[piece]
                ids += piece_ids
                ranges = self._token_ranges(piece, piece_ids)
            offsets += [_hull(piece_spans, a, b) for a, b in ranges]
        return ids, offsets

    def _token_ranges(self, piece: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The characters of ``piece`` each token covers, by its spelling (module notes)."""
        if self._spellings is None:
            self._spellings = _Spellings(self)
        spell = self._spellings
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

    def post_process(self, ids: list[int]) -> list[int]:
        return self.post_processor.process(ids) if self.post_processor is not None else ids

    # ------------------------------------------------------------------ decode

    def decode(self, ids: Sequence[int]) -> str:
        tokens = [self.id_to_token[i] for i in ids]
        if self.decoder is None:
            return " ".join(tokens)  # tokenizers joins with spaces when there is no decoder
        return "".join(self.decoder.decode_chain(tokens))

    def token_bytes_table(self, n_vocab: int) -> list[bytes | None]:
        """Each token's bytes in decoded text: byte-level proxy undone, ``▁`` as a
        space, ``<0xXX>`` as its byte, a WordPiece continuation prefix removed."""
        kind = _decoder_kinds(self.decoder)
        table: list[bytes | None] = [None] * n_vocab
        added = {t.id for t in self.added_tokens}
        prefix = getattr(self.model, "continuing_subword_prefix", None) or ""
        for i, s in self.id_to_token.items():
            # An added token's content goes through the decoder too (no continuation
            # prefix is taken off it): " fooĠ" keeps its UTF-8, "<|x|>" maps to itself.
            table[i] = _token_bytes(s, kind, "" if i in added else prefix)
        return table

    def rank_file_form(self) -> tuple[dict[bytes, int], str, dict[str, int]] | None:
        """``(ranks, pattern, special_tokens)`` when this pipeline is what
        ``Tokenizer.save`` writes for a rank-file tokenizer, else None.

        Such a file encodes as its rank file does, so the two share one fingerprint.
        Cost: rebuilding the merge list from the ranks (about 1 s for o200k), once.
        """
        from .decoders import ByteLevel as ByteLevelDecoder

        m = self.model
        shape = byte_level_regex(self.pre_tokenizer)
        if (
            shape is None
            or shape[1]
            or self.normalizer is not None
            or self.post_processor is not None
            or not isinstance(self.decoder, ByteLevelDecoder)
            or not isinstance(m, BPE)
            or not m.ignore_merges
            or m.dropout
            or m.byte_fallback
            or m.unk_token is not None
            or m.continuing_subword_prefix
            or m.end_of_word_suffix
            or not all(t.special and not (t.single_word or t.lstrip or t.rstrip or t.normalized) for t in self.added_tokens)
        ):
            return None
        ranks: dict[bytes, int] = {}
        specials = {t.content: t.id for t in self.added_tokens}
        for spelling, tid in m.vocab.items():
            if specials.get(spelling) == tid:
                continue  # save() lists specials in the vocabulary too
            data = proxy_to_bytes(spelling)
            if data is None:
                return None
            ranks[data] = tid
        derived = merges_for_ranks(ranks)
        if len(derived) != len(m.merges) or any(
            (bytes_to_proxy(a), bytes_to_proxy(b)) != pair for (a, b), pair in zip(derived, m.merges)
        ):
            return None
        return ranks, shape[0].pattern, specials

    def to_json(self) -> dict[str, Any]:
        def part(c: Any) -> Any:
            return c.to_json() if c is not None else None

        return tokenizer_json(
            model=self.model.to_json(),
            added_tokens=[t.to_json() for t in self.added_tokens],
            normalizer=part(self.normalizer),
            pre_tokenizer=part(self.pre_tokenizer),
            post_processor=part(self.post_processor),
            decoder=part(self.decoder),
        )


def tokenizer_json(
    *,
    model: dict[str, Any],
    added_tokens: Sequence[dict[str, Any]] = (),
    normalizer: Any = None,
    pre_tokenizer: Any = None,
    post_processor: Any = None,
    decoder: Any = None,
) -> dict[str, Any]:
    """A ``tokenizer.json`` document from its components' JSON objects (no truncation
    or padding: they shape batches, not ids)."""
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": list(added_tokens),
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": post_processor,
        "decoder": decoder,
        "model": model,
    }


def _no_cut(text: str) -> int:
    return 0


def _cut_rule(pipeline: Pipeline) -> Callable[[str], int]:
    """The ``_stability`` rule that fits ``pipeline``'s shape, else ``_no_cut``."""
    fast = pipeline._fast
    if fast is not None:
        split = fast.pre
        if pipeline.normalizer is None and isinstance(split, RegexSplit) and known_pattern(split.pattern):
            return partial(regex_cut, split.split_exact, last_space_apart=pt.splits_last_space_apart(split.pattern))
        return _no_cut
    if not _space_normalizer(pipeline.normalizer):
        return _no_cut
    pre = pipeline.pre_tokenizer
    if isinstance(pre, (pt.BertPreTokenizer, pt.WhitespaceSplit, pt.Whitespace)):
        return partial(space_cut, hard=ASCII_WHITESPACE)  # every whitespace character splits
    if pre is None:
        # The ▁-run cut: only when the normalizer turns a space into the cut character.
        if pipeline._cut is None or pipeline.normalizer is None:
            return _no_cut
        cut = pipeline._cut_re.pattern[0] if pipeline._cut_re is not None else ""
        if pipeline.normalizer.normalize_continued(" ") != cut:
            return _no_cut
    elif not (getattr(pre, "cuts_before_space_runs", False) or (isinstance(pre, pt.Metaspace) and pre.split)):
        return _no_cut  # neither formats.spm_pipeline._SpaceRunCut nor a splitting Metaspace
    hard, left = _isolated_whitespace(pipeline)
    return partial(space_cut, hard=" " + hard, left=left) if hard else space_cut


def _isolated_whitespace(pipeline: Pipeline) -> tuple[str, str]:
    """``(hard, left)``: the ASCII whitespace characters besides the space that no
    normalizer rule touches and no vocabulary piece holds with another character, and
    the printable ASCII characters that are pieces of their own.

    A model never joins an isolated character to a neighbour (no merge or lattice
    path holds both), so text can be cut before a run of them that follows one of
    ``left`` (a known piece, so no run of unknowns spans the cut either).
    Cost: one pass over the vocabulary, once per pipeline.
    """
    vocab = pipeline.vocab
    left = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) in vocab)
    normalizer = pipeline.normalizer
    touched = getattr(normalizer, "touches_ascii", None) if normalizer is not None else None
    hard = ""
    for c in "\n\t\r":
        if touched is not None and touched(c):
            continue
        if normalizer is not None and touched is None and normalizer.normalize_continued("a" + c + "a") != "a" + c + "a":
            continue
        if any(c in piece and len(piece) > 1 for piece in vocab):
            continue
        hard += c
    return hard, left


def _space_normalizer(normalizer: Any) -> bool:
    """Whether ``normalizer`` maps a printable ASCII character and a space each to
    themselves (or to one fixed character), one character at a time, with rules that
    act only on runs of spaces or at the ends (``_stability``, space_cut)."""
    if normalizer is None:
        return True
    if isinstance(normalizer, nz.Sequence):
        return all(map(_space_normalizer, normalizer.normalizers))
    if isinstance(normalizer, nz.Replace):
        return normalizer.pattern == " " or (normalizer.is_regex and normalizer.pattern in (" {2,}", " +"))
    if isinstance(normalizer, nz.Precompiled):
        return normalizer._table.get(" ", " ") == " "
    if hasattr(normalizer, "space_cut_ok"):  # formats.spm_pipeline.SentencePieceNormalizer
        return bool(normalizer.space_cut_ok())
    return isinstance(
        normalizer,
        (nz.Prepend, nz.Strip, nz.Lowercase, nz.BertNormalizer, nz.StripAccents, nz.NFC, nz.NFD, nz.NFKC, nz.NFKD),
    )


def _fast_encoder(model: Any, pre_tokenizer: Any) -> tuple[PieceEncoder | None, bool]:
    """The rank-file path for byte-level BPE over one known total regex (module notes)."""
    shape = byte_level_regex(pre_tokenizer)
    if shape is None or not isinstance(model, BPE) or model.dropout:
        return None, False
    split, prefix_space = shape
    encode_piece = model.encode_piece

    def encode_bytes(piece: bytes) -> tuple[int, ...]:
        return encode_piece(bytes_to_proxy(piece))

    # A piece that is a token is that token only under ignore_merges; otherwise the
    # merges decide, so every new piece goes through the model.
    whole: dict[bytes, int] = {}
    if model.ignore_merges:
        for spelling, tid in model.vocab.items():
            data = proxy_to_bytes(spelling)
            if data is not None:
                whole[data] = tid
    return PieceEncoder(split, encode_bytes, whole), prefix_space


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


class _Spellings:
    """What ``Pipeline._token_ranges`` matches: each id's spelling in the alphabet of
    the pieces the model sees, the byte-fallback ids, the BPE prefix and suffix.

    The unknown token has no spelling here: it stands for text it does not spell, and
    matching its spelling (``"<unk>"`` where the unknown character is ``"<"``) would
    misplace every later token.
    """

    __slots__ = ("text", "byte_ids", "prefix", "suffix")

    def __init__(self, pipeline: Pipeline) -> None:
        model = pipeline.model
        self.text: dict[int, str] = dict(pipeline.id_to_token)
        unk = getattr(model, "unk_id", None)
        unk_token = getattr(model, "unk_token", None)
        if unk is None and isinstance(unk_token, str):
            unk = pipeline.vocab.get(unk_token)
        if isinstance(unk, int):
            self.text.pop(unk, None)
        self.byte_ids: frozenset[int] = frozenset(
            i for i, s in self.text.items() if _BYTE_TOKEN.fullmatch(s)
        ) if getattr(model, "byte_fallback", False) else frozenset()
        self.prefix: str = getattr(model, "continuing_subword_prefix", None) or ""
        self.suffix: str = getattr(model, "end_of_word_suffix", None) or ""


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


def _hull(spans: Spans, a: int, b: int) -> tuple[int, int]:
    """The smallest span holding ``spans[a:b]`` (zero-width ones included)."""
    if b <= a:
        at = spans[a][0] if a < len(spans) else spans[-1][1]
        return at, at
    part = spans[a:b]
    return min(s for s, _ in part), max(e for _, e in part)


def _decoder_kinds(decoder: Any) -> set[str]:
    if decoder is None:
        return set()
    name = type(decoder).__name__
    if name == "Sequence":
        return set(chain.from_iterable(_decoder_kinds(d) for d in decoder.decoders))
    if name == "SentencePieceDecoder":  # formats.spm_pipeline: ▁ and <0xXX> byte pieces
        return {"Metaspace", "ByteFallback"}
    if name == "Replace" and decoder.pattern == "\u2581" and decoder.content == " ":
        return {"Metaspace"}
    if name == "Replace" and decoder.is_regex and decoder.pattern == r"\A##" and decoder.content == "":
        return {"WordPiece"}  # what trained WordPiece tokenizers use (train/wordpiece.py)
    return {name}


def _token_bytes(s: str, kind: set[str], prefix: str) -> bytes:
    if "ByteLevel" in kind:
        data = proxy_to_bytes(s)
        if data is not None:
            return data
    if "ByteFallback" in kind:
        m = _BYTE_TOKEN.fullmatch(s)
        if m is not None:
            return bytes([int(m.group(1), 16)])
    if "Metaspace" in kind:
        s = s.replace("\u2581", " ")
    if "WordPiece" in kind and prefix and s.startswith(prefix):
        s = s[len(prefix) :]
    return s.encode("utf-8", "surrogatepass")


Factory = Callable[..., Any]
