r"""The Unicode normalization forms ``NFC``, ``NFD``, ``NFKC``, ``NFKD``, and ``Nmt``.

The same five as ``tokenizers``' ``normalizers/unicode.rs``. The forms are
``unicodedata.normalize`` run with ``tokenizers``' Unicode tables (below); ``Nmt`` is the
NMT normalizer's fixed rewrite of controls and spaces (``_NMT_REMOVED``, ``_NMT_SPACES``,
the lists of unicode.rs).

Unicode version
---------------
``tokenizers`` takes the forms (and ``BertNormalizer``'s NFD) from the crate
``unicode-normalization-alignments``, whose tables predate Unicode 10: a character added
later has no decomposition, combining class or composition there. The characters of
``NF_PROTECTED`` (``_tables``: found by probing ``tokenizers`` with every character that
has a decomposition, a nonzero combining class or a composition in Unicode 17.0) are
therefore kept out of ``unicodedata.normalize``: the text is normalized in the runs
between them, which is exactly how an unknown starter behaves. So the forms match
whatever the Python version (3.10's ``unicodedata`` is Unicode 13.0, 3.14's 16.0).
Characters first assigned after Unicode 17.0 are not covered.

Alignment: ``normalize_aligned`` cuts each run between protected characters into the
smallest pieces that normalize on their own (``_nf_run_aligned``); every output
character spans its piece.
"""

from __future__ import annotations

import re
import unicodedata
from typing import ClassVar, Final, Literal

from ._tables import NF_PROTECTED
from .base import CharSet, Normalizer, Spans, char_class, identity_spans

_Form = Literal["NFC", "NFD", "NFKC", "NFKD"]

_NF_PROTECTED_CHARS: Final = CharSet(NF_PROTECTED, runs=False)


def nf(form: _Form, text: str) -> str:
    """``unicodedata.normalize`` with tokenizers' (older) Unicode tables."""
    if text.isascii():
        return text
    if not _NF_PROTECTED_CHARS.search(text):
        return unicodedata.normalize(form, text)
    # A character the Rust tables do not know is a starter with no decomposition and
    # no composition: nothing reorders or composes across it.
    parts = _NF_PROTECTED_CHARS.any.split(text)
    marks = _NF_PROTECTED_CHARS.any.findall(text)
    out = [unicodedata.normalize(form, parts[0])]
    for mark, part in zip(marks, parts[1:], strict=True):
        out.append(mark)
        out.append(unicodedata.normalize(form, part))
    return "".join(out)


def nf_aligned(form: _Form, text: str) -> tuple[str, Spans]:
    if text.isascii():
        return text, identity_spans(0, len(text))
    out: list[str] = []
    spans: Spans = []
    pos = 0
    for m in _NF_PROTECTED_CHARS.any.finditer(text):
        _nf_run_aligned(form, text, pos, m.start(), out, spans)
        out.append(m.group())
        spans.append((m.start(), m.end()))
        pos = m.end()
    _nf_run_aligned(form, text, pos, len(text), out, spans)
    return "".join(out), spans


# Chunks longer than this (a base with dozens of marks) are not split further: each
# split test normalizes the rest of the chunk, quadratic in its length.
_REFINE_MAX: Final = 32


def _nf_run_aligned(form: _Form, text: str, a: int, b: int, out: list[str], spans: Spans) -> None:
    """Normalize ``text[a:b]`` (no protected character), appending output and spans.

    The run is cut into chunks that normalize independently: a chunk starts at each
    character of combining class 0, and adjacent chunks that interact (a composition
    across them, a Tibetan vowel whose decomposition starts with a mark) are merged
    until ``normalize(x + y) == normalize(x) + normalize(y)``. Each chunk is then split
    into the smallest pieces that still normalize independently (``e`` + U+0301 under
    NFD is two pieces, under NFC one). Every output character spans its piece.
    """
    if a == b:
        return
    run = text[a:b]
    if unicodedata.is_normalized(form, run):
        out.append(run)
        spans.extend(identity_spans(a, b))
        return
    norm = unicodedata.normalize
    combining = unicodedata.combining
    starts = [k for k in range(a + 1, b) if not combining(text[k])]
    starts.append(b)
    chunks: list[tuple[int, int, str]] = []
    cs, ce = a, starts[0]
    cn = norm(form, text[cs:ce])
    for ne in starts[1:]:
        piece = text[ce:ne]
        nn = norm(form, piece)
        if piece.isascii() and text[ce - 1].isascii():
            joined = cn + nn
        else:
            joined = norm(form, text[cs:ne])
        if joined == cn + nn:
            chunks.append((cs, ce, cn))
            cs, cn = ce, nn
        else:
            cn = joined
        ce = ne
    chunks.append((cs, ce, cn))
    if "".join(c[2] for c in chunks) != norm(form, run):
        # The pairwise test is not a proof; fall back to one chunk, coarse but right.
        chunks = [(a, b, norm(form, run))]
    for cs, ce, cn in chunks:
        if ce - cs == 1 or ce - cs > _REFINE_MAX:
            out.append(cn)
            spans.extend([(cs, ce)] * len(cn))
            continue
        start, rest = cs, cn
        for j in range(cs + 1, ce):
            left = norm(form, text[start:j])
            right = norm(form, text[j:ce])
            if left + right == rest:
                out.append(left)
                spans.extend([(start, j)] * len(left))
                start, rest = j, right
        out.append(rest)
        spans.extend([(start, ce)] * len(rest))


class _UnicodeForm(Normalizer):
    __slots__ = ()
    form: ClassVar[_Form]

    space_local = True  # character-local, or acting at the ends only

    def keeps(self, char: str) -> bool:
        return True

    def normalize(self, text: str) -> str:
        return nf(self.form, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        return nf_aligned(self.form, text)


class NFC(_UnicodeForm):
    r"""Unicode canonical composition, with ``tokenizers``' Unicode tables.

    Cost: O(1) for ASCII text; otherwise one class search plus
    ``unicodedata.normalize`` (its quick check makes NFC text nearly free).

    >>> out, spans = NFC().normalize_aligned("e\u0301!")
    >>> out == "\u00e9!", spans
    (True, [(0, 2), (2, 3)])
    """

    __slots__ = ()
    type_name = "NFC"
    form = "NFC"


class NFD(_UnicodeForm):
    r"""Unicode canonical decomposition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> out, spans = NFD().normalize_aligned("\u00e9")
    >>> [hex(ord(c)) for c in out], spans
    (['0x65', '0x301'], [(0, 1), (0, 1)])
    """

    __slots__ = ()
    type_name = "NFD"
    form = "NFD"


class NFKC(_UnicodeForm):
    r"""Unicode compatibility composition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> NFKC().normalize("\ufb01\u2460")
    'fi1'
    """

    __slots__ = ()
    type_name = "NFKC"
    form = "NFKC"


class NFKD(_UnicodeForm):
    r"""Unicode compatibility decomposition, with ``tokenizers``' Unicode tables.

    Cost: as ``NFC``.

    >>> NFKD().normalize_aligned("\ufb01")
    ('fi', [(0, 1), (0, 1)])
    """

    __slots__ = ()
    type_name = "NFKD"
    form = "NFKD"


# ------------------------------------------------------------------------------- Nmt

_NMT_REMOVED: Final = [
    *range(0x01, 0x09),
    0x0B,
    *range(0x0E, 0x20),
    0x7F,
    0x8F,
    0x9F,
]
_NMT_SPACES: Final = [
    0x09,
    0x0A,
    0x0C,
    0x0D,
    0x1680,
    *range(0x200B, 0x2010),
    0x2028,
    0x2029,
    0x2581,
    0xFEFF,
    0xFFFD,
]

_NMT_TABLE: Final[dict[int, str | None]] = {
    **{cp: None for cp in _NMT_REMOVED},
    **{cp: " " for cp in _NMT_SPACES},
}
_NMT_RE: Final = re.compile(char_class((cp, cp) for cp in sorted(_NMT_TABLE)) + "+")


class Nmt(Normalizer):
    r"""The NMT normalizer: remove C0 controls (but tab, newline, FF, CR), DEL, U+008F,
    U+009F; turn tab, newline, FF, CR, U+1680, U+200B..U+200F, U+2028, U+2029, U+2581,
    U+FEFF and U+FFFD into ``" "``.

    Cost: one ``re.sub`` with a callback per run of such characters.

    >>> Nmt().normalize("a\tb\x01c")
    'a bc'
    """

    __slots__ = ()
    type_name = "Nmt"

    def normalize(self, text: str) -> str:
        return _NMT_RE.sub(_nmt_run, text)

    def normalize_aligned(self, text: str) -> tuple[str, Spans]:
        out: list[str] = []
        spans: Spans = []
        for k, c in enumerate(text):
            mapped = _NMT_TABLE.get(ord(c), c)
            if mapped is not None:
                out.append(mapped)
                spans.append((k, k + 1))
        return "".join(out), spans


def _nmt_run(m: re.Match[str]) -> str:
    return m.group().translate(_NMT_TABLE)
