"""Decoders: turn token strings back into text, as ``tokenizers``' ``decode_chain``.

Implemented: ByteLevel, Metaspace, ByteFallback, Fuse, Strip, Replace, WordPiece (with
cleanup), BPEDecoder, Sequence, each named after its ``tokenizer.json`` "type" and
matching the Rust semantics. A decoder takes the list of token strings and returns a
list of strings; the tokenizer joins them. Byte-level tiktoken tokenizers do not use
this module: their decode is a join of token bytes.
"""

from __future__ import annotations

from typing import Final

import regex

from .byte_level import proxy_to_bytes

__all__ = [
    "Decoder",
    "ByteLevel",
    "Metaspace",
    "ByteFallback",
    "Fuse",
    "Strip",
    "Replace",
    "WordPiece",
    "BPEDecoder",
    "Sequence",
]


class Decoder:
    """Base class: ``decode_chain(tokens) -> pieces`` of text."""

    def decode_chain(self, tokens: list[str]) -> list[str]:
        raise NotImplementedError

    def to_json(self) -> dict[str, object]:
        raise NotImplementedError


class ByteLevel(Decoder):
    """Undo the byte-level alphabet over all tokens at once; invalid UTF-8 -> U+FFFD.

    As ``tokenizers``: a token with a character outside the alphabet (an added token
    such as ``" fooĠ"``) keeps its own UTF-8, whole.
    """

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


class Metaspace(Decoder):
    """``▁`` back to spaces, except in the first token, where ``tokenizers`` drops them
    (unless the prepend scheme is "never")."""

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
        return {"type": "Metaspace", "replacement": self.replacement, "prepend_scheme": self.prepend_scheme, "split": self.split}


_BYTE_TOKEN: Final = regex.compile(r"<0x([0-9A-Fa-f]{2})>")


class ByteFallback(Decoder):
    """Runs of ``<0xXX>`` tokens become their bytes decoded as UTF-8; a run that is not
    valid UTF-8 becomes one U+FFFD per byte, as ``tokenizers`` does."""

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

    def decode_chain(self, tokens: list[str]) -> list[str]:
        return ["".join(tokens)]

    def to_json(self) -> dict[str, object]:
        return {"type": "Fuse"}


class Strip(Decoder):
    """Remove up to ``start`` leading and ``stop`` trailing ``content`` characters from
    every token."""

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


class Replace(Decoder):
    """Replace a literal string or regex in every token."""

    def __init__(self, pattern: str, content: str, *, is_regex: bool = False) -> None:
        self.pattern, self.content, self.is_regex = pattern, content, is_regex
        self._regex = regex.compile(pattern if is_regex else regex.escape(pattern))

    def decode_chain(self, tokens: list[str]) -> list[str]:
        sub, content = self._regex.sub, self.content.replace("\\", "\\\\")
        return [sub(content, t) for t in tokens]

    def to_json(self) -> dict[str, object]:
        return {"type": "Replace", "pattern": {"Regex" if self.is_regex else "String": self.pattern}, "content": self.content}


def _cleanup(text: str) -> str:
    # tokenizers' clean_up_tokenization, in its order.
    for a, b in (
        (" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
        (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"),
    ):
        text = text.replace(a, b)
    return text


class WordPiece(Decoder):
    """Join WordPiece tokens: ``prefix`` marks a continuation, other tokens get a space
    before them; ``cleanup`` removes spaces before punctuation and contractions."""

    def __init__(self, *, prefix: str = "##", cleanup: bool = True) -> None:
        self.prefix, self.cleanup = prefix, cleanup

    def decode_chain(self, tokens: list[str]) -> list[str]:
        out = []
        for i, t in enumerate(tokens):
            if i:
                t = t[len(self.prefix):] if t.startswith(self.prefix) else " " + t
            if self.cleanup:
                t = _cleanup(t)
            out.append(t)
        return out

    def to_json(self) -> dict[str, object]:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}


class BPEDecoder(Decoder):
    """End-of-word ``suffix`` becomes a space, except on the last token."""

    def __init__(self, *, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def decode_chain(self, tokens: list[str]) -> list[str]:
        n = len(tokens)
        return [t.replace(self.suffix, "" if i == n - 1 else " ") for i, t in enumerate(tokens)]

    def to_json(self) -> dict[str, object]:
        return {"type": "BPEDecoder", "suffix": self.suffix}


class Sequence(Decoder):
    """Apply decoders in order."""

    def __init__(self, decoders: list[Decoder]) -> None:
        self.decoders = decoders

    def decode_chain(self, tokens: list[str]) -> list[str]:
        for d in self.decoders:
            tokens = d.decode_chain(tokens)
        return tokens

    def to_json(self) -> dict[str, object]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}
