"""Several seeds (and sweep points) on the dashboards, W&B settings and resume, results export."""

from __future__ import annotations

import importlib.machinery
import json
import sys
import types

import numpy as np
import pytest
from scipy import stats

from jaxmarl.training.host.logging import (
    WANDB_ID_FILE,
    WandbConfig,
    dashboard_row,
    iqm,
    make_run_logger,
    read_event_scalars,
    read_jsonl,
)
from jaxmarl.training.host.results import final_results, marl_eval_json, merge_marl_eval


def _rows(update, returns, points=None):
    return [
        {
            "update": update,
            "env_steps": 16 * update,
            "seed": seed % 3 if points else seed,
            **({"point": seed // 3} if points else {}),
            "episode_return": value,
        }
        for seed, value in enumerate(returns)
    ]


@pytest.mark.parametrize("n", [1, 3, 4, 5, 8, 9])
def test_iqm_is_the_25_percent_trimmed_mean(n):
    values = np.random.default_rng(n).normal(size=n)
    assert iqm(values) == pytest.approx(stats.trim_mean(values, 0.25))


def test_dashboard_row_has_a_tag_per_seed_plus_mean_and_iqm():
    row = dashboard_row(_rows(1, [1.0, 2.0, 9.0, 4.0]))
    assert row == {
        "env_steps": 16,
        "episode_return/seed_0": 1.0,
        "episode_return/seed_1": 2.0,
        "episode_return/seed_2": 9.0,
        "episode_return/seed_3": 4.0,
        "episode_return/mean": 4.0,
        "episode_return/iqm": 3.0,  # drops 1 and 9
    }
    # One seed and no sweep: the names stay as they were.
    assert dashboard_row(_rows(1, [1.5])) == {"env_steps": 16, "episode_return": 1.5}
    swept = dashboard_row(_rows(1, [1.0, 2.0, 3.0, 7.0, 8.0, 9.0], points=True), ("lr=1", "lr=2"))
    assert swept["episode_return/lr=2/seed_0"] == 7.0
    assert swept["episode_return/lr=1/mean"] == 2.0 and swept["episode_return/lr=2/iqm"] == 8.0
    assert "episode_return/mean" not in swept


def test_tensorboard_gets_one_value_per_tag_and_step(tmp_path):
    pytest.importorskip("tensorboardX")
    with make_run_logger(("jsonl", "tensorboard"), tmp_path) as logger:
        for update in (1, 2):
            logger.log_rows(update, _rows(update, [1.0 * update, 2.0, 3.0]))
    scalars = read_event_scalars(tmp_path / "tb")
    keys = [(tag, step) for tag, step, _ in scalars]
    assert len(keys) == len(set(keys))  # before: three values per tag and step
    assert ("episode_return/seed_2", 2) in keys and ("episode_return/iqm", 1) in keys
    assert ("episode_return/mean", 2, pytest.approx(7 / 3)) in [(t, s, v) for t, s, v in scalars]
    # The record files keep one row per seed.
    assert [r["seed"] for r in read_jsonl(tmp_path / "metrics.jsonl")] == [0, 1, 2, 0, 1, 2]


class _FakeWandb(types.ModuleType):
    """Records ``wandb.init`` keywords and logged rows (wandb itself is not a dependency)."""

    def __init__(self):
        super().__init__("wandb")
        self.__spec__ = importlib.machinery.ModuleSpec("wandb", None)
        self.inits, self.logged, self.finished = [], [], 0

    def init(self, **kwargs):
        self.inits.append(kwargs)
        fake = self

        class Run:
            def log(self, metrics, step):
                fake.logged.append((step, metrics))

            def finish(self):
                fake.finished += 1

        return Run()


def test_wandb_settings_and_a_resumed_run_continue_the_same_wandb_run(tmp_path, monkeypatch):
    fake = _FakeWandb()
    monkeypatch.setitem(sys.modules, "wandb", fake)
    settings = WandbConfig(project="marl", group="study", tags=("a", "b"), mode="offline")
    with make_run_logger(("wandb",), tmp_path, wandb=settings, config={"lr": 0.1}) as logger:
        logger.log_rows(1, _rows(1, [1.0, 3.0]))
    first = fake.inits[0]
    run_id = (tmp_path / WANDB_ID_FILE).read_text().strip()
    assert first == {
        "config": {"lr": 0.1},
        "project": "marl",
        "name": tmp_path.name,
        "tags": ["a", "b"],
        "mode": "offline",
        "dir": str(tmp_path),
        "group": "study",
        "id": run_id,
        "resume": "allow",
    }
    assert fake.logged == [
        (1, {"env_steps": 16, **{f"episode_return/{k}": v for k, v in _SEEDS.items()}})
    ]
    with make_run_logger(("wandb",), tmp_path, resume_step=1, wandb=settings):
        pass
    assert fake.inits[1]["id"] == run_id and fake.finished == 2
    with make_run_logger(("wandb",), tmp_path, wandb=settings):  # a new run: a new W&B run
        pass
    assert fake.inits[2]["id"] != run_id


_SEEDS = {"seed_0": 1.0, "seed_1": 3.0, "mean": 2.0, "iqm": 2.0}


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_final_results_and_marl_eval_export_per_point(tmp_path):
    labels = ("lr=0.1", "lr=0.2")
    history = _rows(1, [0.0] * 6, points=True) + _rows(2, [1, 2, 3, 4, 5, 6], points=True)
    _write(tmp_path / "metrics.jsonl", history)
    evaluations = [
        {**row, "eval_episode_return": 10.0 * row["episode_return"], "eval_win_rate": 0.5}
        for row in history
    ]
    _write(
        tmp_path / "eval.jsonl",
        [{k: v for k, v in r.items() if k != "episode_return"} for r in evaluations],
    )
    results = final_results(tmp_path, labels)
    assert [r["point"] for r in results] == list(labels)
    assert results[1]["episode_return"] == pytest.approx(5.0)
    assert results[1]["eval_episode_return"] == pytest.approx(50.0)
    assert results[0]["seeds"] == 3 and results[0]["env_steps"] == 32

    exported = marl_eval_json(
        tmp_path, env_name="mpe", task_name="MPE_simple_v3", algorithm="ippo", point_labels=labels
    )
    runs = exported["mpe"]["MPE_simple_v3"]["ippo[lr=0.2]"]
    assert sorted(runs) == ["seed_0", "seed_1", "seed_2"]
    assert runs["seed_1"]["step_2"] == {
        "step_count": 32,
        "episode_return": [50.0],
        "win_rate": [0.5],
    }
    assert runs["seed_1"]["absolute_metrics"] == {"episode_return": [50.0], "win_rate": [0.5]}
    merged = merge_marl_eval(exported, {"mpe": {"MPE_simple_v3": {"mappo": {"seed_0": {}}}}})
    assert sorted(merged["mpe"]["MPE_simple_v3"]) == ["ippo[lr=0.1]", "ippo[lr=0.2]", "mappo"]


def test_a_swept_run_plots_one_curve_per_point_over_the_steps_all_its_seeds_logged():
    from jaxmarl.training.host.loop import _point_curves

    records = _rows(1, [1, 2, 3, 4, 5, 6], points=True) + _rows(2, [7, 8, 9, 1, 1, 1], points=True)
    records = [r for r in records if not (r["update"] == 2 and r["point"] == 1 and r["seed"] == 0)]
    curves = _point_curves(records, ("lr=1", "lr=2"))
    np.testing.assert_array_equal(curves["lr=1"][0], [16, 32])
    np.testing.assert_array_equal(curves["lr=1"][1], [[1, 7], [2, 8], [3, 9]])
    np.testing.assert_array_equal(curves["lr=2"][0], [16])  # seed 0 of lr=2 missed step 32
