"""In-program sweeps (``run.sweep.lr``): every point of the vmapped program equals a run of
its own with that learning rate, to float tolerance."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.algorithms import algorithm
from jaxmarl.baselines.ppo import PPOConfig
from jaxmarl.baselines.ppo.learner import ppo_optimiser
from jaxmarl.baselines.q_learning import make_optimiser
from jaxmarl.config import load_config, save_config
from jaxmarl.evaluate import load_run
from jaxmarl.training.host.loop import run
from jaxmarl.training.sweep import SweepConfig, set_hyperparameters

from ..test_train_cli import TINY
from ..test_train_cli_q import TINY as Q_TINY


@pytest.mark.parametrize(
    "make",
    [
        lambda sweep, **kw: ppo_optimiser(PPOConfig(**kw, run=_run(sweep)), 4),
        lambda sweep, **kw: ppo_optimiser(
            PPOConfig(**kw, separate_grad_clip=True, run=_run(sweep)), 4
        ),
        lambda sweep, **kw: make_optimiser(
            load_config(algorithm("vdn").config_class, None, [f"lr={kw['lr']}", *_flags(sweep)]),
            6,
        ),
    ],
    ids=["ppo", "ppo-separate-clip", "q-learning"],
)
def test_an_injected_learning_rate_steps_like_a_constant_one(make):
    params = {"encoder": jnp.ones((3, 2)), "critic": jnp.arange(4.0)}
    grads = [jax.tree.map(lambda x, i=i: jnp.sin(x + i), params) for i in range(5)]
    plain = make(SweepConfig(), lr=3e-3)
    swept = make(SweepConfig(lr=(1.0, 3e-3)), lr=1.0)  # the state, not the config, decides

    states = [plain.init(params), set_hyperparameters(swept.init(params), {"lr": 3e-3})]
    results = []
    for optimiser, state in zip((plain, swept), states, strict=True):
        p = params
        for g in grads:  # annealing (the default) runs the schedule over these steps
            updates, state = optimiser.update(g, state, p)
            p = jax.tree.map(lambda a, b: a + b, p, updates)
        results.append(p)
    jax.tree.map(lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-6), *results)


def _run(sweep):
    return load_config(PPOConfig, None, _flags(sweep)).run


def _flags(sweep):
    return [f"run.sweep.lr=[{','.join(map(str, sweep.lr))}]"] if sweep.lr else []


QUICK = ["run.updates_per_chunk=0", "run.eval_episodes=0", "run.loggers=[jsonl]", "run.num_seeds=2"]


def _train(alg, tiny, overrides, tmp_path, name):
    spec = algorithm(alg)
    args = [a for a in tiny if not a.startswith(("alg=", "env="))]
    env = next(a.split("=", 1)[1] for a in tiny if a.startswith("env="))
    config = load_config(
        spec.config_class, None, [*spec.fixed, f"env.env_id={env}", *args, *QUICK, *overrides]
    )
    save_config(config, tmp_path / name / "config.yaml")  # what train writes beside it
    (tmp_path / name / "run.json").write_text(json.dumps({"alg": alg}))
    return run(spec.make(config), config.run, tmp_path / name, show_progress=False)


def _assert_point_equals_run(swept, separate, point, num_seeds=2):
    members = slice(point * num_seeds, (point + 1) * num_seeds)
    jax.tree.map(
        lambda a, b: np.testing.assert_allclose(a[members], b, rtol=1e-5, atol=1e-6),
        swept.state.params,
        separate.state.params,
    )
    rows = [{k: v for k, v in r.items() if k != "point"} for r in swept.history]
    mine = [r for r, full in zip(rows, swept.history, strict=True) if full["point"] == point]
    assert len(mine) == len(separate.history)
    for a, b in zip(mine, separate.history, strict=True):
        assert a.keys() == b.keys()
        np.testing.assert_allclose(list(a.values()), list(b.values()), rtol=1e-5, atol=1e-6)


def test_ppo_sweep_points_equal_separate_runs(tmp_path):
    swept = _train("ippo", TINY, ["run.sweep.lr=[0.01,0.001]"], tmp_path, "swept")
    assert swept.point_labels == ("lr=0.01", "lr=0.001")
    assert swept.state.params["encoder"]["Dense_0"]["kernel"].shape[0] == 4  # 2 points x 2 seeds
    separate = _train("ippo", TINY, ["lr=0.001"], tmp_path, "separate")
    _assert_point_equals_run(swept, separate, point=1)
    # The points really differ (the learning rate reached the optimiser).
    kernels = swept.state.params["encoder"]["Dense_0"]["kernel"]
    assert not np.allclose(kernels[0], kernels[2])
    # python -m jaxmarl.evaluate reads a swept run's checkpoint: one member per point x seed.
    trained = load_run(tmp_path / "swept")
    assert trained.num_seeds == 4
    jax.tree.map(np.testing.assert_array_equal, trained.params, swept.state.params)


@pytest.mark.slow
def test_q_learning_sweep_points_equal_separate_runs(tmp_path):
    tiny = [a.replace("alg=qmix", "alg=iql") for a in Q_TINY if not a.startswith("mixer.")]
    swept = _train("iql", tiny, ["run.sweep.lr=[0.01,0.001]"], tmp_path, "swept")
    separate = _train("iql", tiny, ["lr=0.001"], tmp_path, "separate")
    _assert_point_equals_run(swept, separate, point=1)
