"""Prefix-cache keys: ``planner`` (stable boundary -> chained block keys) and
``index`` (a small prefix index from block keys to payloads)."""

from __future__ import annotations

from .index import PrefixIndex
from .planner import CachePlan, PrefixCachePlanner

__all__ = ["CachePlan", "PrefixCachePlanner", "PrefixIndex"]
