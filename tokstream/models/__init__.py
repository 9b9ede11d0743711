"""Segmentation models: turn one pre-token into ids."""

from .bpe import BytePairEncoder

__all__ = ["BytePairEncoder"]
