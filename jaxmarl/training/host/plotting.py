"""Learning curves and result matrices from logged metrics (host side, after or between chunks).

matplotlib is optional (``pip install 'jaxmarl[viz]'``) and imported only when a plot is drawn.
Figures are drawn on matplotlib's Agg canvas through the object API (``Figure``), never
``pyplot``: no global backend switch, nothing left open, safe in headless runs and threads.
Files are written to a temporary name and renamed, so a viewer never sees half a PNG.

Example::

    plot_learning_curve(run_dir / "metrics.jsonl", path=run_dir / "curve.png")
    plot_curves({"IPPO": (steps, ippo_returns), "MAPPO": (steps, mappo_returns)}, "cmp.png")
    plot_matrix(cross_play_returns, "cross_play.png", row_label="seed of agent_0")
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxmarl.files import replace_bytes

Records = Sequence[Mapping[str, Any]]
BANDS = ("minmax", "iqr")


def plot_learning_curve(
    records: Records | str | os.PathLike,
    x: str = "env_steps",
    y: str = "episode_return",
    path: str | os.PathLike = "curve.png",
    title: str | None = None,
    ylabel: str | None = None,
) -> Path:
    """Plots ``y`` against ``x`` from metric records (or a ``metrics.jsonl`` file).

    Records without both keys, or with a non-finite ``y``, are skipped. When records carry a
    ``"seed"`` key the curve is the mean over seeds with a min/max band; seeds logged at
    different ``x`` are interpolated onto the ``x`` values inside every seed's range.

    Args:
        records: dicts as logged (``read_jsonl``), or the path of a JSONL file.
        x: the horizontal key, e.g. ``"env_steps"`` or ``"step"``.
        y: the vertical key.
        path: the PNG to write (its folder is created).
        title: figure title (default: none).
        ylabel: vertical axis label (default: ``y``).

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: no record has both ``x`` and ``y`` (the message lists the keys there are).
        ImportError: matplotlib is not installed.
    """
    if isinstance(records, str | os.PathLike):
        from jaxmarl.training.host.logging import read_jsonl

        records = read_jsonl(records)
    by_seed: dict[Any, list[tuple[float, float]]] = {}
    for record in records:
        if x in record and y in record and _is_finite(record[y]):
            by_seed.setdefault(record.get("seed"), []).append((record[x], record[y]))
    if not by_seed:
        keys = sorted({key for record in records for key in record})
        raise ValueError(
            f"no record has both x={x!r} and a finite y={y!r} ({len(records)} records); "
            f"available keys: {keys}"
        )
    curves = [np.asarray(sorted(points), dtype=np.float64).T for points in by_seed.values()]
    xs, ys = _align(curves)
    label = y if len(curves) == 1 else f"{y} (mean of {len(curves)} seeds, min-max band)"
    return plot_curves(
        {label: (xs, ys)},
        path,
        xlabel=x,
        ylabel=ylabel or y,
        title=title,
        legend=len(curves) > 1,
    )


def plot_curves(
    series: Mapping[str, tuple[Any, Any]],
    path: str | os.PathLike,
    *,
    xlabel: str | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    legend: bool = True,
    band: str = "minmax",
    figsize: tuple[float, float] = (6.4, 4.0),
    dpi: int = 120,
) -> Path:
    """Plots several labelled curves on one axis, e.g. two algorithms or two configs.

    Args:
        series: ``label -> (xs, ys)`` with ``xs`` of shape ``[T]`` and ``ys`` of shape ``[T]``,
            or ``[num_seeds, T]`` for a line over seeds with a band (``band``).
        path: the PNG to write (its folder is created).
        xlabel / ylabel / title: axis labels and title.
        legend: draw a legend with the labels.
        band: for ``[num_seeds, T]`` series, ``"minmax"`` (mean line, min/max band) or
            ``"iqr"`` (median line, 25-75% band: with many seeds, one collapsed seed then
            does not set the picture).
        figsize / dpi: figure size in inches and resolution.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: a series' shapes do not fit, or ``series`` is empty.
        ImportError: matplotlib is not installed.
    """
    if not series:
        raise ValueError("plot_curves needs at least one series (label -> (xs, ys))")
    if band not in BANDS:
        raise ValueError(f"band must be one of {BANDS}, got {band!r}")
    Figure, FigureCanvasAgg = _matplotlib()
    figure = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for label, (xs, ys) in series.items():
        xs, ys = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
        if xs.ndim != 1 or ys.ndim not in (1, 2) or ys.shape[-1] != xs.shape[0]:
            raise ValueError(
                f"series {label!r}: xs must be [T] and ys [T] or [num_seeds, T]; got xs "
                f"{xs.shape} and ys {ys.shape}"
            )
        if ys.ndim == 2:
            low, centre, high = _band(ys, band)
            (line,) = axes.plot(xs, centre, label=label)
            axes.fill_between(xs, low, high, color=line.get_color(), alpha=0.25)
        else:
            axes.plot(xs, ys, label=label)
    axes.set_xlabel(xlabel or "")
    axes.set_ylabel(ylabel or "")
    if title:
        axes.set_title(title)
    axes.grid(alpha=0.3)
    if legend:
        axes.legend()
    figure.tight_layout()
    return _save(figure, Path(path))


def plot_matrix(
    matrix: Any,
    path: str | os.PathLike,
    *,
    row_label: str = "",
    col_label: str = "",
    title: str | None = None,
    fmt: str = "{:.2f}",
    dpi: int = 120,
) -> Path:
    """Draws a square or rectangular matrix as a heatmap with every cell's value written in it,
    e.g. a cross-play table (rows: one seed's first agent, columns: another's partners).

    Args:
        matrix: ``[R, C]`` numbers; row ``i`` and column ``j`` are labelled ``i`` and ``j``.
        path: the PNG to write (its folder is created).
        row_label / col_label / title: axis labels and title.
        fmt: how each cell's value is written.
        dpi: resolution.

    Returns:
        ``path`` as a ``Path``.

    Raises:
        ValueError: ``matrix`` is not two-dimensional or is empty.
        ImportError: matplotlib is not installed.
    """
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2 or values.size == 0:
        raise ValueError(f"plot_matrix needs a non-empty [R, C] matrix, got shape {values.shape}")
    Figure, FigureCanvasAgg = _matplotlib()
    rows, cols = values.shape
    side = 1.2 + 0.6 * max(rows, cols)
    figure = Figure(figsize=(side + 1.2, side), dpi=dpi)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    image = axes.imshow(values, cmap="viridis")
    figure.colorbar(image, ax=axes)
    middle = np.nanmean(values) if np.isfinite(values).any() else 0.0
    for i in range(rows):
        for j in range(cols):
            # Dark text on the bright half of viridis, light text on the dark half.
            colour = "black" if values[i, j] > middle else "white"
            axes.text(j, i, fmt.format(values[i, j]), ha="center", va="center", color=colour)
    axes.set_xticks(range(cols))
    axes.set_yticks(range(rows))
    axes.set_xlabel(col_label)
    axes.set_ylabel(row_label)
    if title:
        axes.set_title(title)
    figure.tight_layout()
    return _save(figure, Path(path))


def _band(ys: np.ndarray, band: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``[num_seeds, T]`` -> ``(low, line, high)``, each ``[T]``, for ``band`` (``BANDS``)."""
    if band == "iqr":
        low, centre, high = np.percentile(ys, [25, 50, 75], axis=0)
        return low, centre, high
    return ys.min(axis=0), ys.mean(axis=0), ys.max(axis=0)


def _is_finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _align(curves: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Aligns ``[2, n_i]`` (x, y) curves: x grid ``[T]``, ys ``[T]`` or ``[num_seeds, T]``."""
    if len(curves) == 1:
        return curves[0][0], curves[0][1]
    first_xs = curves[0][0]
    if all(c.shape == curves[0].shape and np.array_equal(c[0], first_xs) for c in curves):
        return first_xs, np.stack([c[1] for c in curves])
    # Different x per seed: interpolate onto the union of xs where every seed has data.
    low, high = max(c[0][0] for c in curves), min(c[0][-1] for c in curves)
    grid = np.unique(np.concatenate([c[0] for c in curves]))
    grid = grid[(grid >= low) & (grid <= high)]
    if grid.size == 0:
        raise ValueError("the seeds' x ranges do not overlap; plot them with plot_curves instead")
    return grid, np.stack([np.interp(grid, c[0], c[1]) for c in curves])


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise ImportError(
            "plotting needs matplotlib, which is not installed: pip install 'jaxmarl[viz]' "
            "(or pip install matplotlib)"
        ) from error
    return Figure, FigureCanvasAgg


def _save(figure: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = io.BytesIO()
    figure.savefig(image, format=path.suffix.lstrip(".") or "png")
    replace_bytes(path, image.getvalue())
    return path
