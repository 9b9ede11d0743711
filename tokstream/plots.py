"""PNG figures for ``tokstream stats --plot`` and ``tokstream train --plot``.

matplotlib is the optional ``plot`` extra (``pip install 'tokstream[plot]'``): imported
only when a figure is drawn, and a missing one is one ``TokstreamError`` naming the
extra. Figures are drawn on a ``matplotlib.figure.Figure`` with the Agg canvas, never
through ``pyplot``, so no global backend or figure state is touched in the caller's
process.

- ``stats_figure``: tokens per byte and tokens per word for each tokenizer (grouped
  bars) and each file: the seed tutorials' fertility figure, on the user's files;
- ``training_figure``: held-out bytes per token against vocabulary size along training
  (``train.curve``): the compression-against-vocabulary figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .errors import TokstreamError

__all__ = ["stats_figure", "training_figure"]

_WIDTH, _HEIGHT, _DPI = 9.0, 4.0, 100


def _figure(width: float = _WIDTH, height: float = _HEIGHT) -> Any:
    """A new Agg-backed matplotlib Figure, or the error naming the extra."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise TokstreamError("--plot needs matplotlib: pip install 'tokstream[plot]'") from None
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, out: str | Path) -> None:
    try:
        fig.savefig(out, format="png")
    except OSError as e:
        raise OSError(f"cannot write {str(out)!r}: {e.strerror or e}") from None


def stats_figure(results: Mapping[str, Mapping[str, Mapping[str, Any]]], out: str | Path) -> None:
    """Write ``out`` (PNG): ``results[tokenizer][file]`` is ``metrics.stats`` of that
    file; one panel per ratio (tokens per byte, tokens per word), files along x, one
    bar per tokenizer. A ratio whose denominator was 0 (no words) is left out."""
    fig = _figure()
    names = list(results)
    files = list(dict.fromkeys(f for per in results.values() for f in per))
    width = 0.8 / max(1, len(names))
    for ax, key, label in zip(
        fig.subplots(1, 2), ("tokens_per_byte", "tokens_per_word"), ("tokens per byte", "tokens per word")
    ):
        for k, name in enumerate(names):
            xs = [i + (k - (len(names) - 1) / 2) * width for i in range(len(files))]
            ys = [results[name].get(f, {}).get(key) for f in files]
            ax.bar([x for x, y in zip(xs, ys) if y is not None], [y for y in ys if y is not None], width, label=name)
        ax.set_xticks(range(len(files)), [Path(f).name or f for f in files], rotation=20, ha="right")
        ax.set_title(label + " (lower: fewer tokens)")
        ax.grid(axis="y", alpha=0.3)
    fig.axes[0].legend(fontsize="small")
    _save(fig, out)


def training_figure(curve: Sequence[tuple[int, float]], out: str | Path, *, title: str) -> None:
    """Write ``out`` (PNG): held-out bytes per token (y) against vocabulary size (x)."""
    fig = _figure(7.0, 4.0)
    ax = fig.subplots()
    points = sorted(curve)
    ax.plot([v for v, _ in points], [b for _, b in points], marker="o")
    ax.set_xlabel("vocabulary size")
    ax.set_ylabel("held-out bytes per token (higher: better compression)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _save(fig, out)
