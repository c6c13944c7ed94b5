"""Learning-curve plots: real PNGs from records, JSONL files, several seeds and comparisons."""

from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest

from jaxmarl.training.host.logging import JsonlLogger
from jaxmarl.training.host.plotting import _align, _band, plot_curves, plot_learning_curve


def assert_real_png(path, min_bytes=8_000):
    assert path.is_file() and path.stat().st_size > min_bytes
    image = iio.imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4) and min(image.shape[:2]) > 100
    assert image.std() > 5  # something was drawn, not a blank canvas
    assert not list(path.parent.glob(".*partial"))


def test_learning_curve_from_a_jsonl_file(tmp_path):
    with JsonlLogger(tmp_path / "metrics.jsonl") as logger:
        for update in range(20):
            logger.log(update, {"env_steps": 64 * update, "episode_return": np.sin(update / 3)})
        logger.log(20, {"loss": 0.1})  # records without the keys are skipped
    path = plot_learning_curve(
        tmp_path / "metrics.jsonl", path=tmp_path / "plots" / "curve.png", title="IPPO"
    )
    assert path == tmp_path / "plots" / "curve.png"
    assert_real_png(path)


def test_learning_curve_with_seeds_and_missing_keys(tmp_path):
    records = [
        {"seed": seed, "step": t, "ret": float(t + seed)} for seed in range(3) for t in range(10)
    ]
    assert_real_png(plot_learning_curve(records, x="step", y="ret", path=tmp_path / "seeds.png"))
    with pytest.raises(
        ValueError, match=r"x='env_steps'.*available keys: \['ret', 'seed', 'step'\]"
    ):
        plot_learning_curve(records, path=tmp_path / "none.png")


def test_seed_alignment_mean_band_inputs():
    same = [np.array([[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]), np.array([[0.0, 1.0, 2.0], [3.0, 4, 5]])]
    xs, ys = _align(same)
    np.testing.assert_array_equal(xs, [0, 1, 2])
    np.testing.assert_array_equal(ys, [[1, 2, 3], [3, 4, 5]])
    # Seed 2 logged at other x: both are interpolated on the shared range [1, 2].
    shifted = [np.array([[0.0, 2.0], [0.0, 2.0]]), np.array([[1.0, 3.0], [10.0, 30.0]])]
    xs, ys = _align(shifted)
    np.testing.assert_array_equal(xs, [1, 2])
    np.testing.assert_allclose(ys, [[1, 2], [10, 20]])


def test_plot_curves_compares_series_with_bands(tmp_path):
    steps = np.arange(50) * 100
    rng = np.random.default_rng(0)
    path = plot_curves(
        {
            "IPPO": (steps, np.log1p(steps) + rng.normal(size=(4, 50))),  # [seeds, T]: band
            "MAPPO": (steps, np.log1p(steps) * 1.1),
        },
        tmp_path / "compare.png",
        xlabel="env steps",
        ylabel="return",
        title="MPE_simple_spread_v3",
    )
    assert_real_png(path)
    with pytest.raises(ValueError, match="series 'bad'"):
        plot_curves({"bad": (steps, steps[:-1])}, tmp_path / "bad.png")


def test_iqr_band_is_median_and_quartiles_where_minmax_is_mean_and_range(tmp_path):
    steps = np.arange(5.0)
    seeds = np.stack([steps + k for k in range(5)])  # seed k is steps + k
    seeds[4] = -100.0  # one collapsed seed moves the mean and the range, not the median
    low, line, high = _band(seeds, "iqr")
    np.testing.assert_allclose(line, steps + 1)  # median of {steps + 0, 1, 2, 3, -100}
    np.testing.assert_allclose(low, steps)
    np.testing.assert_allclose(high, steps + 2)
    low, line, high = _band(seeds, "minmax")
    np.testing.assert_allclose(line, (4 * steps + 6 - 100) / 5)
    np.testing.assert_allclose(low, -100.0)
    np.testing.assert_allclose(high, steps + 3)
    assert_real_png(plot_curves({"s": (steps, seeds)}, tmp_path / "iqr.png", band="iqr"))
    with pytest.raises(ValueError, match=r"band must be one of \('minmax', 'iqr'\)"):
        plot_curves({"s": (steps, seeds)}, tmp_path / "x.png", band="std")


def test_missing_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"pip install 'jaxmarl\[viz\]'"):
        plot_curves({"a": ([0, 1], [0, 1])}, tmp_path / "a.png")
