"""The optional compiled core's pieces that the layers above the core use, by public
name (``_native_loader`` says which path runs; ``native_available()``)."""

from __future__ import annotations

from typing import Any

from ._native_loader import native

__all__ = ["TokenTrie"]

#: The vocabulary trie's compiled walk (``_native_walk.c``), or None on the pure path.
TokenTrie: Any = None if native is None else native.TokenTrie
