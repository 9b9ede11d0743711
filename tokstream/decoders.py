"""Decoders: turn token strings back into text, as ``tokenizers``' ``decode_chain``.

Implemented: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece (with
cleanup), BPEDecoder, CTC, Sequence, each named after its ``tokenizer.json`` "type" and
matching the Rust semantics, and ``SentencePieceDecoder`` (``sentencepiece``'s own
decode, for ``.model`` files). A decoder takes the list of token strings and returns a
list of strings; the tokenizer joins them. A rank file's decoder is ``ByteLevel``.

Each decoder declares, as data, what the layers around it rely on:

- ``bytes_rules`` (``BytesRule``): how a token's spelling becomes the bytes it
  contributes to decoded text (``Vocabulary.table``): the byte-level proxy undone,
  ``<0xXX>`` as its byte, ``▁`` as a space, a continuation prefix removed;
- ``stream_kind`` (``StreamKind``) and ``depends_on_last``: how ``StreamDecoder`` can
  decode it one token at a time. A decoder that declares nothing is decoded whole at
  the end of a stream: exact, only not incremental.

``decoder_from_json`` builds a decoder from its ``tokenizer.json`` object by its type
(``JSON_TYPES``); each class's ``from_json`` reads its own fields.
``SentencePieceDecoder`` has no type of its own: it saves as the usual ``Sequence``.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import ClassVar, Final

import regex

from .byte_level import proxy_to_bytes
from .json_fields import Build, JsonObject, MetaspaceFields, error, field, fieldless, from_table, kind, members, pattern

__all__ = [
    "CTC",
    "JSON_TYPES",
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "BytesRule",
    "Decoder",
    "Fuse",
    "Metaspace",
    "Replace",
    "SentencePieceDecoder",
    "Sequence",
    "StreamKind",
    "Strip",
    "WordPiece",
    "byte_local",
    "decoder_from_json",
    "spelling_bytes",
]


_SPACE: Final = "\u2581"


class BytesRule(enum.Flag):
    """How a token's spelling becomes its bytes (``spelling_bytes``)."""

    NONE = 0
    #: The byte-level alphabet back to bytes (``"Ġhi"`` -> ``b" hi"``).
    BYTE_LEVEL = enum.auto()
    #: ``<0xXX>`` is the byte XX.
    BYTE_FALLBACK = enum.auto()
    #: ``▁`` is a space.
    METASPACE = enum.auto()
    #: A continuing-subword prefix (``##``) is removed.
    WORDPIECE = enum.auto()


class StreamKind(enum.Enum):
    """How a decoder stage streams (``stream/decoder.py`` builds its plan from these)."""

    #: Unknown: the stream decodes everything at its end.
    OTHER = "other"
    #: The text is the UTF-8 of the joined token bytes, invalid bytes U+FFFD.
    BYTES = "bytes"
    #: Each token maps on its own, knowing only whether it is the first (and, with
    #: ``depends_on_last``, the last).
    TOKEN_WISE = "token_wise"
    #: ``Strip``: token-wise; after ``Fuse`` it strips the fused text.
    STRIP = "strip"
    #: Runs of ``<0xXX>`` tokens become their UTF-8 text (``ByteFallback``).
    BYTE_FALLBACK = "byte_fallback"
    #: All tokens join into one string.
    FUSE = "fuse"
    #: ``SentencePieceDecoder``'s state machine.
    SENTENCEPIECE = "sentencepiece"


class Decoder(ABC):
    """Base class: ``decode_chain(tokens) -> pieces`` of text (module notes)."""

    #: The ``tokenizer.json`` ``"type"`` of the class; a class without one
    #: (``SentencePieceDecoder``) has no JSON form of its own to read.
    type_name: ClassVar[str]
    bytes_rules: BytesRule = BytesRule.NONE
    stream_kind: ClassVar[StreamKind] = StreamKind.OTHER
    #: A token's text depends on whether it is the last one (``BPEDecoder``).
    depends_on_last: ClassVar[bool] = False

    @abstractmethod
    def decode_chain(self, tokens: list[str]) -> list[str]:
        """The text pieces of ``tokens`` (token spellings), as ``tokenizers``' trait."""

    def stages(self) -> list[Decoder]:
        """The decoders applied in order (a ``Sequence`` flattened)."""
        return [self]

    @abstractmethod
    def to_json(self) -> dict[str, object]:
        """The ``tokenizer.json`` object of this decoder."""

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> Decoder:
        """Build from its ``tokenizer.json`` object (``path`` names it in errors;
        ``build`` makes a ``Sequence``'s members). This default serves the types with no
        fields."""
        return fieldless(cls, "decoder_from_json")


def byte_local(decoder: Decoder | None) -> bool:
    """Whether ``decoder`` decodes exactly as the UTF-8 of the joined token bytes
    (``errors="replace"``): a lone ``ByteLevel``."""
    stages = decoder.stages() if decoder is not None else []
    return len(stages) == 1 and stages[0].stream_kind is StreamKind.BYTES


def spelling_bytes(rules: BytesRule, prefix: str = "") -> Callable[[str], bytes]:
    """The function giving the bytes a token spelled ``s`` contributes to text under
    ``rules`` (``prefix``: the model's continuing-subword prefix, for ``WORDPIECE``).
    The rules are read once (a ``Flag`` membership test costs ~0.3 us)."""
    byte_level = BytesRule.BYTE_LEVEL in rules
    byte_fallback = BytesRule.BYTE_FALLBACK in rules
    metaspace = BytesRule.METASPACE in rules
    cut = len(prefix) if BytesRule.WORDPIECE in rules else 0
    fullmatch = _BYTE_TOKEN.fullmatch

    def token_bytes(spelling: str) -> bytes:
        if byte_level:
            data = proxy_to_bytes(spelling)
            if data is not None:
                return data
        if byte_fallback and len(spelling) == 6:
            m = fullmatch(spelling)
            if m is not None:
                return bytes([int(m.group(1), 16)])
        if metaspace:
            spelling = spelling.replace(_SPACE, " ")
        if cut and spelling.startswith(prefix):
            spelling = spelling[cut:]
        return spelling.encode("utf-8", "surrogatepass")

    return token_bytes


class ByteLevel(Decoder):
    """Undo the byte-level alphabet over all tokens at once; invalid UTF-8 -> U+FFFD.

    As ``tokenizers``: a token with a character outside the alphabet (an added token
    such as ``" fooĠ"``) keeps its own UTF-8, whole.
    """

    type_name = "ByteLevel"
    bytes_rules = BytesRule.BYTE_LEVEL
    stream_kind = StreamKind.BYTES

    def __init__(self, **options: object) -> None:
        self.options = options

    def decode_chain(self, tokens: list[str]) -> list[str]:
        data = bytearray()
        for t in tokens:
            raw = proxy_to_bytes(t)
            data += t.encode("utf-8", "surrogatepass") if raw is None else raw
        return [data.decode("utf-8", "replace")]

    def to_json(self) -> dict[str, object]:
        return {"type": "ByteLevel", **self.options}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> ByteLevel:
        """Every field is kept as it is, for saving (decoding has no options)."""
        return cls(**{k: v for k, v in obj.items() if k != "type"})


class Metaspace(Decoder):
    """``▁`` back to spaces, except in the first token, where ``tokenizers`` drops them
    (unless the prepend scheme is "never")."""

    type_name = "Metaspace"
    bytes_rules = BytesRule.METASPACE
    stream_kind = StreamKind.TOKEN_WISE

    def __init__(self, *, replacement: str = "\u2581", prepend_scheme: str = "always", split: bool = True) -> None:
        self.replacement, self.prepend_scheme, self.split = replacement, prepend_scheme, split

    def decode_chain(self, tokens: list[str]) -> list[str]:
        # As tokenizers: every replacement in the *first* token is dropped (unless the
        # scheme is "never"), everywhere else it becomes a space.
        rep = self.replacement
        out = [t.replace(rep, " ") for t in tokens]
        if out and self.prepend_scheme != "never":
            out[0] = tokens[0].replace(rep, "")
        return out

    def to_json(self) -> dict[str, object]:
        return MetaspaceFields(self.replacement, self.prepend_scheme, self.split).to_json()

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> Metaspace:
        return cls(**MetaspaceFields.from_json(obj, path)._asdict())


_BYTE_TOKEN: Final = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


class ByteFallback(Decoder):
    """Runs of ``<0xXX>`` tokens become their bytes decoded as UTF-8; a run that is not
    valid UTF-8 becomes one U+FFFD per byte, as ``tokenizers`` does."""

    type_name = "ByteFallback"
    bytes_rules = BytesRule.BYTE_FALLBACK
    stream_kind = StreamKind.BYTE_FALLBACK

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        n_pending = 0
        for t in tokens:
            m = _BYTE_TOKEN.fullmatch(t) if len(t) == 6 else None
            if m is not None:
                pending.append(int(m.group(1), 16))
                n_pending += 1
                continue
            if pending:
                out.append(_bytes_or_replacement(bytes(pending), n_pending))
                pending.clear()
                n_pending = 0
            out.append(t)
        if pending:
            out.append(_bytes_or_replacement(bytes(pending), n_pending))
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "ByteFallback"}


def _bytes_or_replacement(data: bytes, count: int) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * count


class Fuse(Decoder):
    """Join all tokens into one string."""

    type_name = "Fuse"
    stream_kind = StreamKind.FUSE

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    def to_json(self) -> dict[str, object]:
        return {"type": "Fuse"}


class Strip(Decoder):
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` characters from
    every token."""

    type_name = "Strip"
    stream_kind = StreamKind.STRIP

    def __init__(self, *, content: str = " ", start: int = 0, stop: int = 0) -> None:
        self.content, self.start, self.stop = content, start, stop

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for t in tokens:
            chars = list(t)
            a = 0
            while a < min(self.start, len(chars)) and chars[a] == self.content:
                a += 1
            b = len(chars)
            k = 0
            while k < self.stop and b > a and chars[b - 1] == self.content:
                b -= 1
                k += 1
            out.append("".join(chars[a:b]))
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> Strip:
        """``content`` is one character, as ``tokenizers``' (a Rust ``char``): it refuses
        ``""``, which would strip nothing here.

        >>> Strip.from_json({"type": "Strip", "content": "", "start": 1, "stop": 0})
        Traceback (most recent call last):
        ...
        tokstream.errors.TokenizerFileError: decoder.content: expected one character (not a surrogate), got the string ''
        """
        content = field(obj, "content", str, path)
        if len(content) != 1 or "\ud800" <= content <= "\udfff":
            raise error(f"{path}.content", f"expected one character (not a surrogate), got {kind(content)}")
        return cls(content=content, start=field(obj, "start", int, path), stop=field(obj, "stop", int, path))


class Replace(Decoder):
    """Replace a literal string or regex in every token."""

    type_name = "Replace"
    stream_kind = StreamKind.TOKEN_WISE

    def __init__(self, pattern: str, content: str, *, is_regex: bool = False) -> None:
        self.pattern, self.content, self.is_regex = pattern, content, is_regex
        self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))
        # The two Replace decoders real files use for Metaspace and WordPiece text.
        if pattern == _SPACE and content == " ":
            self.bytes_rules = BytesRule.METASPACE
        elif is_regex and pattern == r"\A##" and content == "":
            self.bytes_rules = BytesRule.WORDPIECE  # what trained WordPiece tokenizers use (train/wordpiece.py)

    def decode_chain(self, tokens: list[str]) -> list[str]:
        sub, content = self._regex.sub, self.content.replace("\\", "\\\\")
        return [sub(content, t) for t in tokens]

    def to_json(self) -> dict[str, object]:
        return {
            "type": "Replace",
            "pattern": {"Regex" if self.is_regex else "String": self.pattern},
            "content": self.content,
        }

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> Replace:
        text, is_regex = pattern(obj, path)
        return cls(text, field(obj, "content", str, path), is_regex=is_regex)


def _cleanup(text: str) -> str:
    # tokenizers' clean_up_tokenization, in its order.
    for a, b in (
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ):
        text = text.replace(a, b)
    return text


class WordPiece(Decoder):
    """Join WordPiece tokens: ``prefix`` marks a continuation, other tokens get a space
    before them; ``cleanup`` removes spaces before punctuation and contractions."""

    type_name = "WordPiece"
    bytes_rules = BytesRule.WORDPIECE
    stream_kind = StreamKind.TOKEN_WISE

    def __init__(self, *, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix, self.cleanup = prefix, cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t[len(self.prefix) :] if t.startswith(self.prefix) else " " + t
            if self.cleanup:
                t = _cleanup(t)
            out.append(t)
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> WordPiece:
        return cls(prefix=field(obj, "prefix", str, path, "##"), cleanup=field(obj, "cleanup", bool, path, True))


class BPEDecoder(Decoder):
    """End-of-word ``suffix`` becomes a space, except on the last token."""

    type_name = "BPEDecoder"
    stream_kind = StreamKind.TOKEN_WISE
    depends_on_last = True

    def __init__(self, *, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        n = len(tokens)
        return [t.replace(self.suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]

    def to_json(self) -> dict[str, object]:
        return {"type": "BPEDecoder", "suffix": self.suffix}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> BPEDecoder:
        return cls(suffix=field(obj, "suffix", str, path, "</w>"))


class CTC(Decoder):
    """Connectionist temporal classification output back to text, as ``tokenizers``' CTC.

    Runs of the same token collapse to one (before anything else, so ``"l" "<pad>" "l"``
    stays two ``l``), ``pad_token`` is removed from every token; with ``cleanup`` the
    WordPiece cleanup runs on each token and ``word_delimiter_token`` becomes a space
    (without it the delimiter stays). Tokens left empty are dropped.

    >>> CTC().decode_chain("<pad> h e e l l <pad> l o | w o r l d".split())
    ['h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd']

    Declares no stream kind: a token's text depends on the one before it (the dedup),
    so a stream decodes it whole at its end.
    """

    type_name = "CTC"

    def __init__(self, *, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True) -> None:
        self.pad_token, self.word_delimiter_token, self.cleanup = pad_token, word_delimiter_token, cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        previous: str | None = None
        pad, delimiter = self.pad_token, self.word_delimiter_token
        for t in tokens:
            if t == previous:
                continue
            previous = t
            # str.replace("", ...) inserts between characters, as Rust's does.
            text = t.replace(pad, "")
            if self.cleanup:
                text = _cleanup(text).replace(delimiter, " ")
            if text:
                out.append(text)
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "type": "CTC",
            "pad_token": self.pad_token,
            "word_delimiter_token": self.word_delimiter_token,
            "cleanup": self.cleanup,
        }

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> CTC:
        """Every field is required, as ``tokenizers`` reads them."""
        return cls(
            pad_token=field(obj, "pad_token", str, path),
            word_delimiter_token=field(obj, "word_delimiter_token", str, path),
            cleanup=field(obj, "cleanup", bool, path),
        )


class Sequence(Decoder):
    """Apply decoders in order."""

    type_name = "Sequence"

    def __init__(self, decoders: list[Decoder]) -> None:
        self.decoders = decoders
        rules = BytesRule.NONE
        for d in decoders:
            rules |= d.bytes_rules
        self.bytes_rules = rules

    def stages(self) -> list[Decoder]:
        return [stage for d in self.decoders for stage in d.stages()]

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_json(self) -> dict[str, object]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}

    @classmethod
    def from_json(cls, obj: JsonObject, path: str = "decoder", *, build: Build[Decoder] | None = None) -> Sequence:
        """Its members are built by ``build`` (``decoder_from_json``)."""
        return cls(members(obj, "decoders", path, build))


class SentencePieceDecoder(Decoder):
    """``sentencepiece``'s decode (``SentencePieceProcessor::Decode``, 0.2).

    Control pieces vanish, the unknown piece shows ``unk_surface``, ``▁`` becomes a
    space. A run of byte pieces becomes its bytes read as UTF-8 one character at a
    time, each invalid byte one U+FFFD (not Python's one per maximal invalid part).
    While nothing has been output, a piece loses one leading ``▁`` (the dummy prefix,
    with ``add_dummy_prefix`` or ``remove_extra_whitespaces``); after a piece lost one,
    the next keeps its ``▁`` unless a control piece came between, or unless
    ``remove_extra_whitespaces``, which strips every leading ``▁`` piece.

    >>> d = SentencePieceDecoder(control={"<s>"}, unk="<unk>", unk_surface=" ⁇ ",
    ...     byte_pieces={"<0xE3>", "<0x81>"}, add_dummy_prefix=True, remove_extra_whitespaces=False)
    >>> "".join(d.decode_chain(["<s>", "▁", "▁a", "<0xE3>", "<0x81>", "<unk>"]))
    ' a\ufffd\ufffd ⁇ '
    """

    def __init__(
        self,
        *,
        control: set[str],
        unk: str,
        unk_surface: str,
        byte_pieces: set[str],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
    ) -> None:
        self.control, self.unk, self.unk_surface = control, unk, unk_surface
        self.byte_pieces = byte_pieces
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces

    bytes_rules = BytesRule.METASPACE | BytesRule.BYTE_FALLBACK
    stream_kind = StreamKind.SENTENCEPIECE

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        pending = bytearray()
        strip = self.add_dummy_prefix or self.remove_extra_whitespaces
        is_bos_ws = True  # may the next piece lose its leading "▁"?
        consumed = False  # did the last piece lose one?
        empty = True  # nothing output yet
        for t in tokens:
            if t in self.byte_pieces:
                pending.append(int(t[3:5], 16))
                continue
            if pending:
                out.append(_decode_bytes(bytes(pending)))
                pending.clear()
                empty = False
            if consumed or not empty:
                is_bos_ws = False
            consumed = False
            if t in self.control:
                continue
            if t == self.unk:
                piece = self.unk_surface
            else:
                if is_bos_ws and strip and t.startswith(_SPACE):
                    t = t[1:]
                    consumed = not self.remove_extra_whitespaces
                piece = t.replace(_SPACE, " ")
            if piece:
                out.append(piece)
                empty = False
        if pending:
            out.append(_decode_bytes(bytes(pending)))
        return out

    def to_json(self) -> dict[str, object]:
        """The usual ``tokenizers`` form (module notes, Saving: decoding differs)."""
        steps: list[Decoder] = [Replace(_SPACE, " ")]
        if self.byte_pieces:
            steps.append(ByteFallback())
        steps.append(Fuse())
        if self.add_dummy_prefix or self.remove_extra_whitespaces:
            steps.append(Strip(content=" ", start=1, stop=0))
        return Sequence(steps).to_json()


def _decode_bytes(data: bytes) -> str:
    """UTF-8 as sentencepiece reads byte pieces: each invalid byte is one U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    out: list[str] = []
    i = 0
    while i < len(data):
        lead = data[i]
        n = 1 if lead < 0x80 else 2 if lead >> 5 == 6 else 3 if lead >> 4 == 14 else 4 if lead >> 3 == 30 else 0
        if n:
            try:
                out.append(data[i : i + n].decode("utf-8"))
                i += n
                continue
            except UnicodeDecodeError:
                pass
        out.append("\ufffd")
        i += 1
    return "".join(out)


#: ``tokenizer.json`` ``"type"`` -> class, for ``decoder_from_json``.
JSON_TYPES: Final[Mapping[str, type[Decoder]]] = {
    cls.type_name: cls
    for cls in (ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece, BPEDecoder, CTC, Sequence)
}


def decoder_from_json(obj: object, path: str = "decoder") -> Decoder | None:
    """Build the decoder of a ``tokenizer.json`` ``"decoder"`` object.

    ``None`` (JSON ``null``) gives ``None``. The class is ``JSON_TYPES[obj["type"]]``;
    an unknown ``"type"`` raises ``NotImplementedError`` naming it and ``path``; a
    missing or mistyped field raises ``TokenizerFileError`` naming the JSON path.

    >>> d = decoder_from_json({"type": "Sequence", "decoders": [
    ...     {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "Fuse"}]})
    >>> d.decode_chain(["▁Hi", "▁there"])
    [' Hi there']
    >>> decoder_from_json({"type": "Strip", "content": " ", "start": 1})
    Traceback (most recent call last):
    ...
    tokstream.errors.TokenizerFileError: decoder: missing field 'stop' (an integer)
    """
    return None if obj is None else from_table(JSON_TYPES, obj, path, "decoder")
