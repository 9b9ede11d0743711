r"""``BertNormalizer``: BERT's clean-up, CJK spacing, accent stripping and lowercasing.

As ``tokenizers``' ``normalizers/bert.rs``, with its character sets: ``clean_text``
removes the control characters (Cc, Cf, Co) and ``strip_accents`` the nonspacing marks
(Mn) of the crate ``unicode_categories`` (Unicode 8.0). ``BERT_CONTROLS`` and
``BERT_NONSPACING_MARKS`` (``_tables``) are those sets, read off ``tokenizers`` for
every code point, not the current categories. The whitespace that ``clean_text`` turns
into ``" "`` (``_BERT_SPACES``, Rust's ``char::is_whitespace``) and the "Chinese
characters" (``_BERT_CJK``, the CJK blocks of bert.rs's ``is_chinese_char``) are short
lists written out here. ``strip_accents`` decomposes with the ``unicode`` module's NFD
(``tokenizers``' older tables), and ``lowercase`` is the ``lowercase`` module's.

Not here: the rest of BERT's text processing, the whitespace and punctuation split
(``pre_tokenizers.BertPreTokenizer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ..json_fields import Build, JsonObject, field
from ._tables import BERT_CONTROLS, BERT_NONSPACING_MARKS
from .base import (
    CharSet,
    Normalizer,
    Spans,
    char_class,
    compose_spans,
    has_astral,
    identity_spans,
    remove_aligned,
)
from .lowercase import rust_lower, rust_lower_aligned
from .unicode import nf, nf_aligned

# What clean_text turns into " " (Rust's char::is_whitespace), after the removals:
# U+000B, U+000C, U+0085 are White_Space but also Cc, so they are removed first.
_BERT_SPACES: Final = (
    "\t\n\r\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

# BERT's "Chinese characters": the CJK blocks of bert.rs's is_chinese_char.
_BERT_CJK: Final = [
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0x2F800, 0x2FA1F),
]

_BERT_MN_CHARS: Final = CharSet(BERT_NONSPACING_MARKS)
_BERT_CONTROL_CHARS: Final = CharSet(BERT_CONTROLS)
_BERT_CJK_CHARS: Final = CharSet(_BERT_CJK, runs=False)


class BertNormalizer(Normalizer):
    r"""BERT's normalizer: clean text, space out Chinese characters, strip accents, lowercase.

    In that order, each when enabled:

    - ``clean_text``: remove U+0000, U+FFFD and control characters (Cc, Cf, Co, but not
      tab, newline, carriage return), then turn whitespace into ``" "``;
    - ``handle_chinese_chars``: put a space on each side of every CJK ideograph;
    - ``strip_accents``: NFD, then remove nonspacing marks (Mn); ``None`` (the JSON
      ``null``) means "when ``lowercase``", as in ``tokenizers``;
    - ``lowercase``: as ``Lowercase``.

    Cost: ASCII text (O(1) to tell) is one ``str.lower`` plus, when it holds a control
    or a tab, newline or CR, one ``bytes.translate``: 500+ MB/s on whole English text,
    65-150 MB/s line by line (per-call overhead). Other text takes one C-level pass per
    enabled step (``re.sub`` of controls, ``str.replace`` per kind of space present, a
    ``re.split`` around CJK ideographs joined by spaces, ``unicodedata.normalize`` and a
    mark ``re.sub``, ``str.lower``), no Python call per character: 70-110 MB/s on
    English with a few non-ASCII characters, ~20 MB/s on Japanese (1 in 3 characters
    an ideograph). ``bench``-style figures from one run on the shared 2-core box.

    >>> BertNormalizer().normalize("Héllo\u4e16\x00!")
    'hello 世 !'
    """

    __slots__ = ("clean_text", "handle_chinese_chars", "lowercase", "strip_accents")
    type_name = "BertNormalizer"

    space_local = True  # character by character; whitespace becomes a space

    def keeps(self, char: str) -> bool:
        return not self.clean_text  # clean_text turns \t \n \r into spaces

    def __init__(
        self,
        *,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ) -> None:
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = strip_accents
        self.lowercase = lowercase

    @property
    def _strips(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def normalize(self, text: str) -> str:
        if text.isascii():
            # No CJK, no accents. Controls and spaces by one bytes.translate (a
            # 256-byte table, no per-call setup unlike str.translate's dict), skipped
            # when isprintable() says there are none.
            if self.clean_text and not text.isprintable():
                text = text.encode("ascii").translate(_BERT_ASCII_SPACES, _BERT_ASCII_CONTROLS).decode("ascii")
            return text.lower() if self.lowercase else text
        if self.clean_text:
            text = _bert_spaces(_BERT_CONTROL_CHARS.remove(text))
        if self.handle_chinese_chars and not text.isascii():
            split = _BERT_CJK_SPLIT_ANY if has_astral(text) else _BERT_CJK_SPLIT_BMP
            parts = split(text)
            if len(parts) > 1:
                # The captured ideographs sit at odd indices: one join spaces them.
                text = " ".join(parts)
        if self._strips and not text.isascii():
            text = _BERT_MN_CHARS.remove(nf("NFD", text))
        if self.lowercase:
            text = rust_lower(text)
        return text

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        spans = identity_spans(0, len(text))
        steps: list[Callable[[str], tuple[str, Spans]]] = []
        if self.clean_text:
            steps.append(_bert_clean_aligned)
        if self.handle_chinese_chars:
            steps.append(_bert_chinese_aligned)
        if self._strips:
            steps.append(_bert_strip_aligned)
        if self.lowercase:
            steps.append(rust_lower_aligned)
        for step in steps:
            text, outer = step(text)
            spans = compose_spans(spans, outer)
        return text, spans

    def to_json(self) -> dict[str, object]:
        return {
            "type": self.type_name,
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }

    @classmethod
    def from_json(
        cls, obj: JsonObject, path: str = "normalizer", *, build: Build[Normalizer] | None = None
    ) -> BertNormalizer:
        return cls(
            clean_text=field(obj, "clean_text", bool, path),
            handle_chinese_chars=field(obj, "handle_chinese_chars", bool, path),
            # Absent or null: follow lowercase (serde's Option).
            strip_accents=field(obj, "strip_accents", bool, path, None),
            lowercase=field(obj, "lowercase", bool, path),
        )


# clean_text on ASCII text as bytes.translate arguments: tab/newline/CR to " ", the
# controls deleted (the two sets do not overlap in ASCII, so one call does both steps).
_BERT_ASCII_SPACES: Final = bytes(0x20 if b < 0x80 and chr(b) in _BERT_SPACES else b for b in range(256))
_BERT_ASCII_CONTROLS: Final = bytes(cp for a, b in BERT_CONTROLS for cp in range(a, min(b, 0x7F) + 1))
# re.split with the ideograph captured: parts alternate text, ideograph, text, ...
_BERT_CJK_SPLIT_BMP: Final = re.compile(f"({char_class(r for r in _BERT_CJK if r[0] <= 0xFFFF)})").split
_BERT_CJK_SPLIT_ANY: Final = re.compile(f"({_BERT_CJK_CHARS.any.pattern})").split


def _bert_spaces(text: str) -> str:
    # str.replace per kind of space (each a memchr-speed scan) beats str.translate,
    # which runs a dict lookup per character once the text is not ASCII.
    for space in _BERT_SPACES:
        if space in text:
            text = text.replace(space, " ")
    return text


def _bert_clean_aligned(text: str) -> tuple[str, Spans]:
    out, spans = remove_aligned(text, _BERT_CONTROL_CHARS.any)
    return _bert_spaces(out), spans


def _bert_chinese_aligned(text: str) -> tuple[str, Spans]:
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in _BERT_CJK_CHARS.any.finditer(text):
        k = m.start()
        out.append(text[pos:k])
        spans.extend(identity_spans(pos, k))
        out.append(f" {m.group()} ")
        spans.extend([(k, k), (k, k + 1), (k + 1, k + 1)])
        pos = k + 1
    out.append(text[pos:])
    spans.extend(identity_spans(pos, len(text)))
    return "".join(out), spans


def _bert_strip_aligned(text: str) -> tuple[str, Spans]:
    decomposed, inner = nf_aligned("NFD", text)
    out, outer = remove_aligned(decomposed, _BERT_MN_CHARS.any)
    return out, compose_spans(inner, outer)
