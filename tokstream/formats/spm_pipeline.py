"""A SentencePiece ``.model`` as a ``Tokenizer``, with ids equal to ``sentencepiece``'s.

``formats/sentencepiece.py`` reads the protobuf; this module turns it into a pipeline:
SentencePiece's own normalization (``normalizer.cc``: user-defined symbols kept, the
precompiled charsmap by longest prefix, extra whitespace removed, a dummy ``▁``
prefix, spaces escaped as ``▁``), then the model (``SentencePieceBPE`` or
``Unigram``) on the normalized text, cut before each ``▁`` when no piece holds an
inner ``▁`` (then no merge or lattice path can cross that point, so the cut is exact
and the pieces can be cached).

Not handled: ``treat_whitespace_as_suffix`` cuts (the text is then encoded whole),
the WORD and CHAR model types (``NotImplementedError``).

Known gap (next step): a model with a precompiled charsmap (nmt_nfkc) is exact but
slow. Loading walks all 224k trie keys in Python (~8 s) and normalization runs one
``regex`` alternation over every key, which is very slow on CJK text. The fix is a
longest-prefix walk of the trie at the few positions where a key can start.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import regex

from .._pipeline import AddedToken, Pipeline

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["SentencePieceNormalizer", "SentencePieceDecoder", "load_sentencepiece"]

_SPACE = "\u2581"


class SentencePieceNormalizer:
    """``sentencepiece``'s ``Normalizer::Normalize``, on ``str``.

    Cost: one ``regex`` scan for charsmap keys and user-defined symbols; a Python step
    per match or per run of plain characters.
    """

    def __init__(
        self,
        *,
        charsmap: dict[str, str],
        user_defined: list[str],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool = False,
    ) -> None:
        self.charsmap = charsmap
        self.user_defined = set(user_defined)
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.suffix = treat_whitespace_as_suffix
        # User-defined symbols win over charsmap keys at the same position, as the
        # matcher runs first; within each group the longest wins.
        alts = [regex.escape(u) for u in sorted(user_defined, key=len, reverse=True)]
        alts += [regex.escape(k) for k in sorted(charsmap, key=len, reverse=True)]
        special = {s[0] for s in [*charsmap, *user_defined] if s}
        plain = "[^ " + "".join(regex.escape(c) for c in sorted(special)) + "]+" if special else "[^ ]+"
        self._re = regex.compile("|".join([*alts, plain, "(?s:.)"]) if alts else f"{plain}|(?s:.)")

    def _pieces(self, text: str) -> list[str]:
        out = []
        charsmap, user = self.charsmap, self.user_defined
        for m in self._re.finditer(text):
            s = m.group()
            if s in user:
                out.append(s)
            else:
                out.append(charsmap.get(s, s))
        return out

    def normalize(self, text: str) -> str:
        pieces = self._pieces(text)
        remove = self.remove_extra_whitespaces
        i = 0
        if remove:
            while i < len(pieces) and pieces[i] == " ":
                i += 1
        if i == len(pieces):
            return ""
        ws = _SPACE if self.escape_whitespaces else " "
        out: list[str] = []
        if not self.suffix and self.add_dummy_prefix:
            out.append(ws)
        prev_space = remove
        for sp in pieces[i:]:
            if prev_space:
                sp = sp.lstrip(" ")
            if sp:
                out.append(sp.replace(" ", ws) if self.escape_whitespaces else sp)
                prev_space = sp.endswith(" ")
            if not remove:
                prev_space = False
        result = "".join(out)
        if remove:
            while result.endswith(ws):
                result = result[: -len(ws)]
        if self.suffix and self.add_dummy_prefix:
            result += ws
        return result


class _SplitAtSpace:
    """Cut normalized text before each ``▁`` (exact when no piece has an inner ``▁``)."""

    def pre_tokenize(self, pieces: list[str]) -> list[str]:
        out: list[str] = []
        for p in pieces:
            out += [s for s in regex.split(r"(?=\u2581)", p) if s]
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "Metaspace", "replacement": _SPACE, "prepend_scheme": "never", "split": True}


class SentencePieceDecoder:
    """``sentencepiece``'s decode: control pieces vanish, unknowns show ``unk_surface``,
    runs of byte pieces become their UTF-8 text, ``▁`` becomes a space, and the first
    decoded piece loses one leading ``▁`` (the dummy prefix)."""

    def __init__(self, *, control: set[str], unk: str, unk_surface: str, strip_first: bool) -> None:
        self.control, self.unk, self.unk_surface, self.strip_first = control, unk, unk_surface, strip_first

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        first = self.strip_first
        for t in tokens:
            if t in self.control:
                continue
            m = _BYTE.fullmatch(t)
            if m is not None:
                pending.append(int(m.group(1), 16))
                first = False
                continue
            if pending:
                out.append(pending.decode("utf-8", "replace"))
                pending.clear()
            if t == self.unk:
                out.append(self.unk_surface)
                first = False
                continue
            if first and t.startswith(_SPACE):
                t = t[1:]
            out.append(t.replace(_SPACE, " "))
            # The dummy prefix belongs to the first piece with any text: a lone "▁"
            # decodes to nothing and passes the duty on.
            first = first and not t
        if pending:
            out.append(pending.decode("utf-8", "replace"))
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "SentencePieceDecoder"}


_BYTE = regex.compile(r"<0x([0-9A-F]{2})>")


def _charsmap_table(blob: bytes) -> dict[str, str]:
    """Every key -> replacement of a precompiled charsmap, by walking its trie."""
    if not blob:
        return {}
    from ..normalizers import _LEAF_BIT, Precompiled, _unit_offset

    pre = Precompiled(blob)
    table: dict[str, str] = {}
    stack: list[tuple[int, bytes]] = [(pre._root, b"")]
    while stack:
        node, path = stack.pop()
        for i in pre._children(node):
            unit = pre._units[i]
            key = path + bytes([unit & 0xFF])
            child = i ^ _unit_offset(unit)
            if unit & _LEAF_BIT:
                try:
                    table[key.decode("utf-8")] = pre._value(child)
                except UnicodeDecodeError:
                    pass  # not a whole character: no str input can hold it
            stack.append((child, key))
    return table


def load_sentencepiece(path: str | os.PathLike[str]) -> Tokenizer:
    """Build a ``Tokenizer`` from a SentencePiece ``.model`` file."""
    from ..models.bpe import SentencePieceBPE
    from ..models.unigram import Unigram
    from ..tokenizer import Tokenizer
    from .sentencepiece import read_sentencepiece

    m = read_sentencepiece(path)
    pieces = [(p.piece, float(p.score), int(p.type)) for p in m.pieces]
    model_type = int(m.model_type)
    model: Any
    if model_type == 2:
        model = SentencePieceBPE(pieces, unk_id=m.unk_id, byte_fallback=m.byte_fallback)
        model.to_json = lambda: {"type": "SentencePieceBPE"}
        model.get_vocab = lambda: {t: i for i, (t, _, _) in reversed(list(enumerate(pieces)))}
    elif model_type == 1:
        # SentencePiece never matches control or unknown pieces as text; an empty
        # spelling keeps them out of the lattice (their ids keep their names below).
        lattice = [("" if k in (2, 3) else t, sc) for t, sc, k in pieces]
        model = Unigram(lattice, unk_id=m.unk_id, byte_fallback=m.byte_fallback)
    else:
        raise NotImplementedError(f"{os.fspath(path)}: SentencePiece model type {model_type} is not supported")
    user = [t for t, _, k in pieces if k == 4]
    normalizer = SentencePieceNormalizer(
        charsmap=_charsmap_table(m.precompiled_charsmap),
        user_defined=user,
        add_dummy_prefix=m.add_dummy_prefix,
        remove_extra_whitespaces=m.remove_extra_whitespaces,
        escape_whitespaces=m.escape_whitespaces,
        treat_whitespace_as_suffix=m.treat_whitespace_as_suffix,
    )
    inner_space = any(_SPACE in t[1:] for t, _, k in pieces if k in (1, 4, 5))
    pre = None if inner_space or m.treat_whitespace_as_suffix else _SplitAtSpace()
    # Control pieces (<s>, </s>) are specials; <unk> and bytes are ordinary pieces.
    added = [AddedToken(id=i, content=t, special=True) for i, (t, _, k) in enumerate(pieces) if k == 3]
    decoder = SentencePieceDecoder(
        control={t for t, _, k in pieces if k == 3},
        unk=pieces[m.unk_id][0],
        unk_surface=m.unk_surface,
        strip_first=m.add_dummy_prefix and not m.treat_whitespace_as_suffix,
    )
    vocab = {t: i for i, (t, _, _) in reversed(list(enumerate(pieces)))}
    pipeline = Pipeline(
        model=model, vocab=vocab, normalizer=normalizer, pre_tokenizer=pre, decoder=decoder, added_tokens=added
    )
    pipeline.id_to_token = {i: t for i, (t, _, _) in enumerate(pieces)}
    name = os.path.basename(os.fspath(path))
    return Tokenizer._from_pipeline(pipeline, name=name[: -len(".model")] if name.endswith(".model") else name)

