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

Not handled yet: offsets through normalizers (``encode_with_offsets`` maps token bytes
onto the original text, which is exact only when the normalizer is absent).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any, Protocol

import regex

from ._fastpath import PieceCache, PieceEncoder
from .byte_level import bytes_to_proxy, proxy_to_bytes
from .models.bpe import BPE, merges_for_ranks
from .pre_tokenizers import byte_level_regex

__all__ = ["AddedToken", "Model", "Pipeline"]

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
        self._pieces = PieceCache(model.encode_piece)
        self._fast, self._prefix_space = _fast_encoder(model, pre_tokenizer)
        cut = model.cut_char() if pre_tokenizer is None and isinstance(model, BPE) else None
        self._cut = None if cut is None else regex.compile(f"{cut}*[^{cut}]+|{cut}+").findall
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
        if self._added_re is None:
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

    def encode_plain(self, text: str) -> list[int]:
        """Ids of text that holds no added token."""
        if not text:
            return []
        if self.normalizer is not None:
            text = self.normalizer.normalize(text)
            if not text:
                return []
        if self._fast is not None:
            if self._prefix_space and not text.startswith(" "):
                text = " " + text
            return self._fast.encode(text)
        if self.pre_tokenizer is not None:
            pieces = self.pre_tokenizer.pre_tokenize([text])
        else:
            pieces = self._cut(text) if self._cut is not None else [text]
        return list(chain.from_iterable(map(self._pieces.__getitem__, pieces)))

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
            if i in added:
                table[i] = s.encode("utf-8", "surrogatepass")
                continue
            table[i] = _token_bytes(s, kind, prefix)
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
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [t.to_json() for t in self.added_tokens],
            "normalizer": self.normalizer.to_json() if self.normalizer is not None else None,
            "pre_tokenizer": self.pre_tokenizer.to_json() if self.pre_tokenizer is not None else None,
            "post_processor": self.post_processor.to_json() if self.post_processor is not None else None,
            "decoder": self.decoder.to_json() if self.decoder is not None else None,
            "model": self.model.to_json(),
        }


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


def _decoder_kinds(decoder: Any) -> set[str]:
    if decoder is None:
        return set()
    name = type(decoder).__name__
    if name == "Sequence":
        return set(chain.from_iterable(_decoder_kinds(d) for d in decoder.decoders))
    if name == "Replace" and decoder.pattern == "\u2581" and decoder.content == " ":
        return {"Metaspace"}
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
