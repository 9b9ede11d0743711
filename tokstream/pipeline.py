"""The one pipeline behind every tokenizer: typed stages, run in order.

    text -> added vocabulary -> normalizer -> pre-tokenizer -> model -> post-processor -> ids
    ids  -> spellings -> decoder -> text

The added vocabulary acts twice, as in ``tokenizers``: its raw tokens cut the input,
and the normalized ones cut each normalized piece between them (``added_vocabulary``
notes); the pre-tokenizer then sees each piece left, on its own.

A rank file is a pipeline too: ``RegexSplit(pattern)`` + ``RankBPE(ranks)`` + the
``ByteLevel`` decoder + its specials; a ``tokenizer.json`` is the stages it names; a
SentencePiece ``.model`` its normalizer, a word cut and its model. The semantics are
those of Hugging Face ``tokenizers`` (and tiktoken's, for rank files).

How plain text (no added token) is encoded is chosen once, from what the stages declare:

- **byte-level regex** (the pre-tokenizer is one known total regex whose pieces the
  model encodes from their bytes: rank files, GPT-2's ``ByteLevel``, Llama 3's
  ``Split`` + ``ByteLevel``): ``_fastpath.PieceEncoder`` caches whole cut parts and
  pieces; a piece that is a token is answered without the model.
- **word cut** (no pre-tokenizer, and the model has a character at whose runs text cuts
  exactly: SentencePiece-style BPE over ``▁`` text): each word is cached.
- **pieces**: the pre-tokenizer's pieces, each cached (``_fastpath.PieceCache``).

Offsets take a separate path (``offsets``). Stability rules are built from the stages'
declarations by ``stability``.

Cost: the normalizer and pre-tokenizer run on every call (all in C for the common
ones); a bounded dict maps each piece to its ids, so the model runs once per distinct
short piece. Building is O(V) for the token bytes table (``Vocabulary``).
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

import regex

from . import offsets as off
from ._fastpath import PieceCache, PieceEncoder
from .added_vocabulary import AddedToken, AddedVocabulary, Matcher, Trie
from .decoders import ByteLevel as ByteLevelDecoder
from .decoders import BytesRule, Decoder, byte_local, spelling_bytes
from .errors import TokstreamError
from .models.base import Model
from .models.ranks import RankBPE
from .normalizers import Normalizer
from .pre_tokenizers import PreTokenizer, RegexSplit, SpannedPiece
from .processors import PostProcessor

__all__ = ["Pipeline", "tokenizer_json"]


class Pipeline:
    """One tokenizer's stages (module notes).

    ``added`` holds the added and special tokens; the other stages are optional but
    the model. Build a rank file's with ``Pipeline.from_ranks``.
    """

    def __init__(
        self,
        *,
        model: Model,
        added: AddedVocabulary | Sequence[AddedToken] = (),
        normalizer: Normalizer | None = None,
        pre_tokenizer: PreTokenizer | None = None,
        post_processor: PostProcessor | None = None,
        decoder: Decoder | None = None,
    ) -> None:
        self.model = model
        # The normalizer spells the normalized added tokens (added_vocabulary notes).
        self.added = (
            added.with_normalizer(normalizer)
            if isinstance(added, AddedVocabulary)
            else AddedVocabulary(added, normalizer=normalizer)
        )
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self._pieces = PieceCache(model.encode_piece)
        self._fast: PieceEncoder | None = None
        self._prefix_space = False
        #: The byte-level regex split, when the fast path runs (``stability`` cuts on it).
        self.regex_split: RegexSplit | None = None
        shape = pre_tokenizer.byte_level_split() if pre_tokenizer is not None else None
        if shape is not None:
            split, self._prefix_space, spelling = shape
            found = model.byte_encoder(spelling)
            if found is not None:
                self._fast = PieceEncoder(split, *found, lambda: model.native_text(spelling))
                self.regex_split = split
        #: The character whose runs cut text into words for the model (no
        #: pre-tokenizer: SentencePiece-style BPE), or None.
        self.word_cut: str | None = model.cut_char() if pre_tokenizer is None else None
        self._cut_re = (
            None if self.word_cut is None else regex.compile(f"{self.word_cut}*[^{self.word_cut}]+|{self.word_cut}+")
        )
        # Rank files: plain text goes straight to the cached encoder.
        self._direct: Callable[[str], list[int]] | None = (
            self._fast.encode if self._fast is not None and normalizer is None and not self._prefix_space else None
        )
        #: The post-processor's ids before and after a text (BOS, CLS / EOS, SEP).
        self.added_ids: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
        if post_processor is not None:
            before, after = post_processor.added_ids()
            self.added_ids = (tuple(before), tuple(after))
        self._spellings: off.Spellings | None = None
        # Offsets from byte lengths are exact when the tokens' bytes are the text's UTF-8.
        self._byte_exact = self._direct is not None and byte_local(decoder) and self.added.plain_specials
        #: Whether ``encode`` and ``encode_offsets`` raise ``UnicodeEncodeError`` on any
        #: text holding a surrogate outside an added token (the byte-level path encodes
        #: every piece to UTF-8 strictly, and no normalizer runs before it), so the
        #: tokenizer replaces surrogates only after that error (``surrogates``), at no
        #: cost to other text. Other pipelines would encode them: they are replaced first.
        self.refuses_surrogates = self._fast is not None and normalizer is None

    @classmethod
    def from_ranks(
        cls, ranks: Mapping[bytes, int], pattern: str, special_tokens: Mapping[str, int] | None = None
    ) -> Pipeline:
        """A rank file's pipeline: ``RegexSplit(pattern)`` + ``RankBPE(ranks)`` + the
        ``ByteLevel`` decoder + the specials (``pattern`` a regex or a known name)."""
        specials = dict(special_tokens or {})
        return cls(
            model=RankBPE(ranks, specials=specials),
            added=AddedVocabulary.from_specials(specials),
            pre_tokenizer=RegexSplit(pattern),
            decoder=ByteLevelDecoder(add_prefix_space=True, trim_offsets=True, use_regex=True),
        )

    # ------------------------------------------------------------------- encode

    def encode(self, text: str, matcher: Matcher | None, *, continued: bool = False) -> list[int]:
        """Ids of ``text`` (specials already checked against the policy): ``matcher``
        holds the added tokens this call matches (``AddedVocabulary.matcher``);
        ``continued``: ``text`` continues a cut (``stability``), so its opening run has
        no start-of-text rules."""
        if matcher is None:
            direct = self._direct
            if direct is not None:  # a rank file: one frame less on the hot path
                return direct(text) if text else []
            return self.encode_plain(text, continued=continued)
        out: list[int] = []
        normalized = matcher.normalized
        for piece, token in matcher.split(text):
            if token is not None:
                out.append(token.id)
            elif normalized is None:
                out += self.encode_plain(piece, continued=continued)
            else:
                out += self._encode_between(piece, normalized, continued)
            continued = False
        return out

    def _encode_between(self, piece: str, trie: Trie, continued: bool) -> list[int]:
        """Ids of a piece between raw added tokens: normalized, then cut at the
        normalized added tokens (``trie``), the rest pre-tokenized piece by piece (a
        piece after such a token opens anew, but is normalized already)."""
        normalizer = self.normalizer
        if normalizer is not None:
            piece = normalizer.normalize_continued(piece) if continued else normalizer.normalize(piece)
        if not trie.may_match(piece):
            return self._encode_normalized(piece, continued)
        out: list[int] = []
        for part, token in trie.split(piece):
            if token is None:
                out += self._encode_normalized(part, continued)
            else:
                out.append(token.id)
            continued = False
        return out

    def encode_plain(self, text: str, *, continued: bool = False) -> list[int]:
        """Ids of text that holds no added token; ``continued=True`` for text that
        continues at a cut (no start-of-text rules)."""
        direct = self._direct
        if direct is not None:
            return direct(text) if text else []
        if self.normalizer is not None and text:
            normalizer = self.normalizer
            text = normalizer.normalize_continued(text) if continued else normalizer.normalize(text)
        return self._encode_normalized(text, continued)

    def _encode_normalized(self, text: str, continued: bool) -> list[int]:
        """``encode_plain`` of text the normalizer has written already."""
        if not text:
            return []
        if self._fast is not None:
            if not continued and self._prefix_space and not text.startswith(" "):
                text = " " + text
            return self._fast.encode(text)
        pre = self.pre_tokenizer
        if pre is not None:
            pieces = pre.pre_tokenize_continued([text]) if continued else pre.pre_tokenize([text])
        else:
            pieces = self._cut_re.findall(text) if self._cut_re is not None else [text]
        return list(chain.from_iterable(map(self._pieces.__getitem__, pieces)))

    def encode_offsets(
        self, text: str, matcher: Matcher | None, *, table: Sequence[bytes | None] | None = None
    ) -> tuple[list[int], off.Spans]:
        """``encode(text, matcher)`` and each token's ``(start, end)`` in code points of
        ``text``: an added token covers its match (with the whitespace ``lstrip`` /
        ``rstrip`` took; a normalized one, the input its normalized match came from),
        other tokens as ``encode_plain_offsets`` gives them. Raises
        ``UnicodeEncodeError`` as ``encode_plain_offsets`` does."""
        if matcher is None:
            return self.encode_plain_offsets(text, table=table)
        ids: list[int] = []
        offsets: off.Spans = []
        normalized = matcher.normalized
        for start, end, token in matcher.spans(text):
            if token is not None:
                ids.append(token.id)
                offsets.append((start, end))
                continue
            if normalized is None:
                more_ids, more = self.encode_plain_offsets(text[start:end], start, table=table)
            else:
                more_ids, more = self._offsets_between(text[start:end], start, normalized)
            ids += more_ids
            offsets += more
        return ids, offsets

    def _offsets_between(self, piece: str, start: int, trie: Trie) -> tuple[list[int], off.Spans]:
        """``_encode_between`` with offsets (``piece`` starts at ``start``)."""
        text, spans = self._aligned(piece, start)
        if not text:
            return [], []
        ids: list[int] = []
        offsets: off.Spans = []
        for a, b, token in trie.spans(text):
            if token is None:
                more_ids, more = self._spanned_offsets(text[a:b], spans[a:b])
                ids += more_ids
                offsets += more
            else:
                ids.append(token.id)
                offsets.append(off.hull(spans, a, b))
        return ids, offsets

    def _aligned(self, text: str, start: int) -> tuple[str, off.Spans]:
        """``text`` normalized, and each character's span of the input (from ``start``)."""
        spans: off.Spans
        if self.normalizer is not None:
            text, spans = self.normalizer.normalize_aligned(text)
            if start:
                spans = [(a + start, b + start) for a, b in spans]
        else:
            spans = [(k, k + 1) for k in range(start, start + len(text))]
        return text, spans

    def encode_plain_offsets(
        self, text: str, start: int = 0, *, table: Sequence[bytes | None] | None = None
    ) -> tuple[list[int], off.Spans]:
        """``encode_plain(text)`` and each token's ``(start, end)`` in code points of
        ``text``, shifted by ``start`` (``offsets`` module notes). ``table``: the token
        bytes table (``token_bytes_table()``, which the tokenizer keeps), for the bytes
        path.

        Raises ``UnicodeEncodeError`` exactly when ``encode_plain`` does (lone
        surrogates the model or the byte-level path cannot encode), so the caller
        retries both alike.
        """
        if not text:
            return [], []
        if self._byte_exact:
            found = self.encode_plain(text)
            if table is None:
                table = self.token_bytes_table()
            by_bytes = off.char_offsets(text.encode("utf-8"), [len(table[i] or b"") for i in found])
            return found, [(a + start, b + start) for a, b in by_bytes] if start else by_bytes
        text, spans = self._aligned(text, start)
        if not text:
            return [], []
        return self._spanned_offsets(text, spans)

    def _spanned_offsets(self, text: str, spans: off.Spans) -> tuple[list[int], off.Spans]:
        """``encode_plain_offsets`` of normalized ``text`` whose characters span
        ``spans`` of the input."""
        if not text:
            return [], []
        if self._fast is not None:
            text.encode("utf-8")  # the byte-level fast path refuses lone surrogates
        pieces: list[SpannedPiece] = [(text, spans)]
        pre = self.pre_tokenizer
        if pre is not None:
            pieces = pre.pre_tokenize_spans(pieces)
        elif self._cut_re is not None:
            pieces = [(m.group(), spans[m.start() : m.end()]) for m in self._cut_re.finditer(text)]
        ids: list[int] = []
        out: off.Spans = []
        model = self.model
        for piece, piece_spans in pieces:
            if model.piece_spans:
                spanned = model.encode_piece_spans(piece)
                ids += [t for t, _, _ in spanned]
                ranges = [(a, b) for _, a, b in spanned]
            else:
                piece_ids = self._pieces[piece]
                ids += piece_ids
                if self._spellings is None:
                    # The model's own spellings: an added token that shares an id with a
                    # vocabulary token may be spelled otherwise (normalized) for decoding.
                    spelled: list[str | None] = [None] * self.n_vocab
                    for i, s in model.spellings().items():
                        spelled[i] = s
                    self._spellings = off.Spellings(spelled, model)
                ranges = off.token_ranges(self._spellings, piece, piece_ids)
            out += [off.hull(piece_spans, a, b) for a, b in ranges]
        return ids, out

    def encodes_without_gil(self) -> bool:
        """Whether plain text goes to the compiled text encoder (starting it now),
        which encodes texts of 4 KB or more without holding the GIL."""
        return self._fast is not None and self._fast.native_encoder() is not None

    def post_process(self, ids: list[int]) -> list[int]:
        """The post-processor's template around ``ids`` (BOS/EOS, CLS/SEP)."""
        return self.post_processor.process(ids) if self.post_processor is not None else ids

    # ------------------------------------------------------------------- decode

    def decode(self, ids: Sequence[int], spellings: Sequence[str | None]) -> str:
        """Valid ``ids`` to text through the decoder (``spellings``: by id)."""
        tokens = [spellings[i] or "" for i in ids]
        if self.decoder is None:
            return " ".join(tokens)  # tokenizers joins with spaces when there is no decoder
        return "".join(self.decoder.decode_chain(tokens))

    @property
    def n_vocab(self) -> int:
        """The largest id plus one."""
        return max([self.model.id_limit - 1, *(t.id for t in self.added.tokens)]) + 1

    def spellings(self) -> list[str | None]:
        """Each id's spelling: the model's, an added token's over it (its content, or
        for a normalized token its normalized content, which the decoder reads as
        ``tokenizers`` 0.23 does: ``AddedVocabulary.decode_spellings``)."""
        n = self.n_vocab
        out: list[str | None] = [None] * n
        for i, s in self.model.spellings().items():
            out[i] = s
        for i, s in self.added.decode_spellings().items():
            out[i] = s
        return out

    def token_bytes_table(self) -> list[bytes | None]:
        """Each id's bytes in decoded text (``decoders.spelling_bytes`` under the
        decoder's ``bytes_rules``; an added token's spelling goes through the decoder
        too, with no continuation prefix taken off it: ``" fooĠ"`` keeps its UTF-8)."""
        model = self.model
        table: list[bytes | None] = [None] * self.n_vocab
        raw = model.raw_bytes()
        if raw is not None:
            # A rank file's tokens are their bytes, its specials their UTF-8 (tiktoken).
            for token, rank in raw.items():
                table[rank] = token
            for t in self.added.tokens:
                table[t.id] = t.content.encode("utf-8")
            return table
        rules = self.decoder.bytes_rules if self.decoder is not None else BytesRule.NONE
        spellings = model.spellings()
        if rules is BytesRule.BYTE_LEVEL:
            # Byte-level vocabularies: read in bulk, once (``Model.byte_level_bytes``).
            for i, data in model.byte_level_bytes().items():
                table[i] = data if data is not None else spellings[i].encode("utf-8", "surrogatepass")
        else:
            token_bytes = spelling_bytes(rules, model.subword_prefix)
            for i, s in spellings.items():
                table[i] = token_bytes(s)
        added_bytes = spelling_bytes(rules)
        for i, s in self.added.decode_spellings().items():
            table[i] = added_bytes(s)
        return table

    # ------------------------------------------------------------ serialization

    def rank_form(self) -> tuple[Mapping[bytes, int], str, dict[str, int]] | None:
        """``(ranks, pattern, special_tokens)`` when this pipeline encodes and decodes
        as a rank file (one is, and so is the ``tokenizer.json`` its ``save`` writes),
        else None. Such pipelines share one fingerprint."""
        shape = self.pre_tokenizer.byte_level_split() if self.pre_tokenizer is not None else None
        if (
            shape is None
            or shape[1]
            or self.normalizer is not None
            or self.post_processor is not None
            or not byte_local(self.decoder)
            or not self.added.plain_specials
        ):
            return None
        split, _, spelling = shape
        specials = self.added.special_tokens
        ranks = self.model.rank_form(spelling, specials)
        return None if ranks is None else (ranks, split.pattern, specials)

    def to_json(self) -> dict[str, Any]:
        """The ``tokenizer.json`` document of these stages."""

        def part(c: Any) -> Any:
            return c.to_json() if c is not None else None

        return tokenizer_json(
            model=self.model.to_json(),
            added_tokens=self.added.to_json(),
            normalizer=part(self.normalizer),
            pre_tokenizer=part(self.pre_tokenizer),
            post_processor=part(self.post_processor),
            decoder=part(self.decoder),
        )

    def fingerprint(self, data: bytes | None = None) -> str:
        """sha256 hex over what decides ids and decoding: the rank form's ranks,
        pattern and specials, else the canonical ``tokenizer.json`` of the stages, else
        (no exact JSON form: a SentencePiece charsmap) ``data``, the bytes the
        pipeline was built from."""
        form = self.rank_form()
        if form is not None:
            return _rank_fingerprint(*form)
        try:
            canonical = json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False)
        except TokstreamError:
            if data is None:
                raise
            return hashlib.sha256(b"tokstream-fingerprint-v1\0sentencepiece\0" + data).hexdigest()
        h = hashlib.sha256(b"tokstream-fingerprint-v1\0pipeline\0")
        h.update(canonical.encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    def __reduce__(self) -> tuple[Any, ...]:
        # The stages only: caches and derived tables are rebuilt.
        return (
            _pipeline,
            (self.model, self.added, self.normalizer, self.pre_tokenizer, self.post_processor, self.decoder),
        )


def _pipeline(
    model: Model,
    added: AddedVocabulary,
    normalizer: Normalizer | None,
    pre_tokenizer: PreTokenizer | None,
    post_processor: PostProcessor | None,
    decoder: Decoder | None,
) -> Pipeline:
    return Pipeline(
        model=model,
        added=added,
        normalizer=normalizer,
        pre_tokenizer=pre_tokenizer,
        post_processor=post_processor,
        decoder=decoder,
    )


def _rank_fingerprint(ranks: Mapping[bytes, int], pattern: str, specials: Mapping[str, int]) -> str:
    h = hashlib.sha256(b"tokstream-fingerprint-v1\0byte-level-bpe\0")
    items = sorted((r, b) for b, r in ranks.items())
    h.update(struct.pack("<Q", len(items)))
    h.update(b"".join(struct.pack("<QI", r, len(b)) + b for r, b in items))
    h.update(pattern.encode("utf-8", "surrogatepass") + b"\0")
    for text, sid in sorted(specials.items()):
        h.update(struct.pack("<Q", sid) + text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


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
