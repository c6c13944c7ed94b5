"""JaxNav's hand-made test levels (``jaxmarl.environments.jaxnav.jaxnav_singletons``).

Against JaxMARL 0.2.0's, as ``make_singletons_reference.py`` recorded them
(``data/jaxmarl_singletons.npz``): every level's grid, starts, goals and ``rew_lambda``, the
observations at reset, and with square robots one step's observations, rewards and dones.
"""

from __future__ import annotations

import json
import pathlib
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import evaluate
from jaxmarl.env import MultiAgentEnv
from jaxmarl.environments.jaxnav import jaxnav_singletons as singletons
from tests.test_train_cli import train_tiny_gru_run

DATA = pathlib.Path(__file__).parent / "data" / "jaxmarl_singletons.npz"


@pytest.fixture(scope="module")
def reference():
    data = dict(np.load(DATA))
    return data, [json.loads(case) for case in data["cases"]]


def test_every_level_is_jaxmarls(reference):
    """Grids, starts, goals and lambda of every recorded case (no compile)."""
    data, cases = reference
    assert sorted({name for name, _ in cases}) == sorted(singletons.registered_singletons)
    for k, (name, kwargs) in enumerate(cases):
        env = singletons.make_jaxnav_singleton(name, **kwargs)
        where = f"case {k}: {name} {kwargs}"
        np.testing.assert_array_equal(env.map_data, data[f"c{k}_map"], err_msg=where)
        np.testing.assert_allclose(
            env.start_pose[:, :2], data[f"c{k}_pos"], atol=1e-5, err_msg=where
        )
        np.testing.assert_allclose(
            env.start_pose[:, 2], data[f"c{k}_theta"], atol=1e-5, err_msg=where
        )
        np.testing.assert_allclose(
            env.goal_pose[:, :2], data[f"c{k}_goal"], atol=1e-5, err_msg=where
        )
        assert env.rew_lambda == pytest.approx(float(data[f"c{k}_rew_lambda"])), where


def check_case(data, k, name, kwargs):
    """One case's reset state and observations, and (square robots) one step."""
    env = singletons.make_jaxnav_singleton(name, **kwargs)
    obs, state = env.reset(jax.random.key(k))
    where = f"case {k}: {name} {kwargs}"
    np.testing.assert_array_equal(state.map_data, data[f"c{k}_map"], err_msg=where)
    np.testing.assert_allclose(state.pos, data[f"c{k}_pos"], atol=1e-5, err_msg=where)
    np.testing.assert_allclose(state.theta, data[f"c{k}_theta"], atol=1e-5, err_msg=where)
    stack = lambda d: np.stack([np.asarray(d[a]) for a in env.agents])  # noqa: E731
    np.testing.assert_allclose(stack(obs), data[f"c{k}_obs0"], atol=1e-5, err_msg=where)
    if f"c{k}_obs1" not in data:  # JaxMARL cannot step disc robots
        return
    actions = {
        a: jnp.array([0.6, 0.2 * (i % 3 - 1)], jnp.float32) for i, a in enumerate(env.agents)
    }
    obs, _, rewards, dones, _ = env.step_env(jax.random.key(1), state, actions)
    np.testing.assert_allclose(stack(obs), data[f"c{k}_obs1"], atol=1e-5, err_msg=where)
    np.testing.assert_allclose(stack(rewards), data[f"c{k}_rewards"], atol=1e-6, err_msg=where)
    np.testing.assert_array_equal(stack(dones), data[f"c{k}_dones"], err_msg=where)


# A case of each kind for the default suite (each level compiles its own programs): disc
# robots, CircleCross (a beam along a cell edge from an edge), square robots stepped, the
# fixed lambda.
SOME = [("BlankCross2", {}), ("CircleCross", {}), ("Chicane4", {"map_id": "Grid-Rand-Poly"})]


def test_some_levels_observe_and_step_as_jaxmarls(reference):
    data, cases = reference
    picked = [cases.index([name, kwargs]) for name, kwargs in SOME] + [len(cases) - 1]
    for k in picked:
        check_case(data, k, *cases[k])


@pytest.mark.nightly  # every case compiles programs of its own
def test_every_level_observes_and_steps_as_jaxmarls(reference):
    data, cases = reference
    for k, case in enumerate(cases):
        check_case(data, k, *case)


def test_a_level_under_jit_and_vmap_restarts_on_itself():
    env = singletons.make_jaxnav_singleton("Corridor4", map_id="Grid-Rand-Poly", max_steps=5)
    assert isinstance(env, MultiAgentEnv) and env.name == "Corridor4"
    assert env.num_agents == 4 and env.observation_space("agent_0").shape == (205,)
    keys = jax.random.split(jax.random.key(0), 3)
    obs, states = jax.jit(jax.vmap(env.reset))(keys)
    np.testing.assert_array_equal(states.pos[0], states.pos[2])  # the key is not used
    assert obs["agent_0"].shape == (3, 205) and obs["agent_0"].dtype == jnp.float32
    actions = {a: jnp.tile(jnp.array([0.5, 0.1]), (3, 1)) for a in env.agents}
    step = jax.jit(jax.vmap(env.step))
    state = states
    for _ in range(5):  # the time limit ends the episode; the auto-reset is the level again
        obs, state, _, dones, infos = step(keys, state, actions)
    assert bool(dones["__all__"].all()) and bool(infos["truncated"].all())
    np.testing.assert_array_equal(state.pos, states.pos)
    np.testing.assert_array_equal(obs["agent_1"], jax.vmap(env.reset)(keys)[0]["agent_1"])


def test_collections_and_a_level_given_as_data():
    envs, names = singletons.make_jaxnav_singleton_collection("corridor", map_id="Grid-Rand-Poly")
    assert names == ["BlankCross4", "LongCorridor2", "Corridor4", "Corner2"]
    assert [env.num_agents for env in envs] == [4, 2, 4, 2]
    # Crowded for the random sampler, fine as a fixed level.
    assert singletons.make_jaxnav_singleton("Corridor8").num_agents == 8
    level = singletons.Level(
        ("1 1 1 1 1", "1 0 0 0 1", "1 1 1 1 1"), ((1.5, 1.5, 0.0),), ((3.5, 1.5, 0.0),)
    )
    env = singletons.JaxNavSingleton(1, level, map_id="Grid-Rand-Poly", level_name="Tiny")
    _, state = env.reset()
    assert state.map_data.shape == (3, 5) and env.name == "Tiny"
    frame = env.viz_testcase(save=False)
    assert frame.ndim == 3 and frame.shape[-1] == 3


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: singletons.make_jaxnav_singleton("Corridr4"), "did you mean 'Corridor4'"),
        (lambda: singletons.make_jaxnav_singleton("Corner2", num_agents=3), "use num_agents=2"),
        (
            lambda: singletons.make_jaxnav_singleton("Corner2", map_id="Grid-Rand-Barn"),
            "test levels are grids",
        ),
        (lambda: singletons.make_jaxnav_singleton_collection("easy"), "known: test, multi"),
        (lambda: singletons.make_jaxnav_singleton("CircleCross", num_agents=0), "num_agents >= 1"),
    ],
)
def test_bad_levels_and_names(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- a trained run on the test levels (evaluate_on_levels, jaxmarl.evaluate --jaxnav-levels) ---


@pytest.fixture(scope="module")
def jaxnav_run(tmp_path_factory):
    """A 2-seed, 2-robot IPPO run on JaxNav, one tiny update."""
    out = tmp_path_factory.mktemp("jaxnav_levels")
    return train_tiny_gru_run(out, "env=jaxnav", "env.env_kwargs.num_agents=2")


@pytest.mark.slow  # a training compile and two level compiles
def test_a_run_on_the_levels_equals_a_plain_loop(jaxnav_run, capsys):
    run = evaluate.load_run(jaxnav_run)
    results = singletons.evaluate_on_levels(run, ["corridor"])
    assert list(results.metrics) == ["LongCorridor2", "Corner2"]
    assert results.skipped == ("BlankCross4", "Corridor4") and results.num_agents == 2

    # Seed 1 on LongCorridor2 by hand: the run's greedy policy, the level's env, to the end.
    env = singletons.make_jaxnav_singleton(
        "LongCorridor2", **singletons.level_kwargs(dict(run.config.env.env_kwargs))
    )
    policy, step = run.policy(seed=1), jax.jit(env.step_env)
    obs, state = env.reset()
    carry, total, t, done = policy.initial_carry(), 0.0, 0, False
    while not done:
        carry, actions = policy.act(carry, obs, state, first=t == 0)
        obs, state, rewards, dones, infos = step(jax.random.key(t), state, actions)
        total += float(np.mean([rewards[a] for a in env.agents]))
        done, t = bool(dones["__all__"]), t + 1
    got = results.metrics["LongCorridor2"]
    assert got["episode_length"][1] == t
    assert got["episode_return"][1] == pytest.approx(total, rel=1e-5, abs=1e-5)
    assert got["success_rate"][1] == pytest.approx(float(np.mean(state.goal_reached)))

    assert evaluate.main([str(jaxnav_run), "--jaxnav-levels", "Corner2", "LongCorridor2"]) == 0
    out = capsys.readouterr().out
    assert "| Corner2 |" in out and "| LongCorridor2 |" in out
    record = json.loads(
        (jaxnav_run / "evaluation" / f"jaxnav_levels_step_{run.step}.json").read_text()
    )
    assert record["levels"]["LongCorridor2"]["episode_length"][1] == t


@pytest.mark.slow  # shares the run above
@pytest.mark.parametrize(
    "argv, message",
    [
        (["--jaxnav-levels", "easy"], "'easy' is neither a JaxNav test level nor a collection"),
        (["--jaxnav-levels", "Corridor8"], "none of ['Corridor8'] has the run's 2 robots"),
        (["--jaxnav-levels", "hard", "--cross-play"], "--jaxnav-levels goes without --cross-play"),
    ],
)
def test_level_flag_user_errors(jaxnav_run, capsys, argv, message):
    assert evaluate.main([str(jaxnav_run), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_levels_need_a_jaxnav_run():
    # (From the command line the core refuses it first: tests/test_evaluate.py.)
    not_jaxnav = SimpleNamespace(
        run_dir="runs/mpe", config=SimpleNamespace(env=SimpleNamespace(env_id="MPE_simple_v3"))
    )
    with pytest.raises(ValueError, match="runs/mpe trained on MPE_simple_v3"):
        singletons.evaluate_on_levels(not_jaxnav, "hard")
