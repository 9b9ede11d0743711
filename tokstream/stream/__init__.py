"""Streaming: decode ids to text and encode text to ids while either side is still
arriving.

``decoder`` turns ids into final text (UTF-8-safe, stop strings via ``stops``),
``encoder`` turns text chunks into ids that no later text can change (through
``Tokenizer.stable_boundary``), ``aio`` wraps both for asyncio.
"""

from __future__ import annotations

from .aio import DecodeStream, adecode, aencode
from .decoder import FinishReason, StreamDecoder
from .encoder import StreamEncoder

__all__ = ["DecodeStream", "FinishReason", "StreamDecoder", "StreamEncoder", "adecode", "aencode"]
