"""Step-by-step parity with JaxMARL 0.2.0's STORM (``storm``, ``storm_2p``, ``storm_np``).

``make_jaxmarl_reference.py`` (run in JaxMARL's own venv) recorded, for every step, the state
before it, the step key, the actions, and JaxMARL's state, observations and rewards after
it (``step_env``, no auto-reset). Each step is replayed here from the recorded state with
the recorded key, and everything must agree. ``storm`` draws its start cells differently
from JaxMARL (see README), so those two draws are passed in from the recording.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl.envs.storm.storm import step_keys

DATA = pathlib.Path(__file__).resolve().parent / "data"
PAYOFF = [[[2, -1], [4, 0.5]], [[1, 3], [-2, 2]]]
CASES = {
    ("storm_2p", "short"): {"num_inner_steps": 8, "num_outer_steps": 2},
    ("storm_2p", "random_coins"): {
        "num_inner_steps": 9,
        "fixed_coin_location": False,
        "payoff_matrix": PAYOFF,
        "freeze_penalty": 3,
    },
    ("storm", "two"): {"num_inner_steps": 10, "num_outer_steps": 2},
    ("storm", "three"): {
        "num_agents": 3,
        "num_inner_steps": 12,
        "fixed_coin_location": False,
        "payoff_matrix": PAYOFF,
    },
    ("storm_np", "two"): {"num_inner_steps": 10, "num_outer_steps": 2},
    ("storm_np", "three"): {
        "num_agents": 3,
        "num_inner_steps": 12,
        "payoff_matrix": PAYOFF,
        "freeze_penalty": 3,
        "grid_size": 7,
        "obs_size": 3,
        "num_coins": 4,
    },
    ("storm_np", "flat"): {"num_agents": 4, "num_inner_steps": 6, "cnn": False, "grid_size": 6},
}
FIELDS = {
    "storm_2p": ("pos", "grid", "inventory", "red_coins", "blue_coins", "freeze"),
    "storm": (
        "pos",
        "grid",
        "inventory",
        "coop_coins",
        "defect_coins",
        "freeze",
        "coop_timer",
        "defect_timer",
    ),
    "storm_np": ("pos", "grid", "inventory", "red_coins", "blue_coins", "freeze"),
}


def our_state(env, env_id, ref, prefix, t=None):
    """Our state from JaxMARL's recorded fields (``t=None``: an unstacked record)."""
    pick = (lambda name: ref[prefix + name]) if t is None else (lambda name: ref[prefix + name][t])
    kwargs = {name: jnp.asarray(pick(name)) for name in FIELDS[env_id]}
    step = int(pick("outer_t")) * env.num_inner_steps + int(pick("inner_t"))
    cls = type(env.reset(jax.random.PRNGKey(0))[1])
    # ``collected`` is ours alone (JaxMARL counts no pickups); its infos are tested elsewhere.
    collected = jnp.zeros((2,), jnp.int32)
    return cls(**kwargs, collected=collected, step=jnp.int32(step), done=jnp.bool_(pick("done")))


def assert_state(env, env_id, state, ref, prefix, t, where):
    for name in FIELDS[env_id]:
        expected = ref[prefix + name] if t is None else ref[prefix + name][t]
        np.testing.assert_array_equal(getattr(state, name), expected, f"{where}: {name}")
    expected_step = ref[prefix + "outer_t"] * env.num_inner_steps + ref[prefix + "inner_t"]
    if t is not None:
        expected_step = expected_step[t]
    assert int(state.step) == int(expected_step), where
    done = ref[prefix + "done"] if t is None else ref[prefix + "done"][t]
    assert bool(state.done) == bool(done), where


def observation_arrays(env_id, env, obs):
    agents = env.agents
    if env_id == "storm_np":
        return np.stack([np.asarray(obs[a]) for a in agents]), None
    grids = np.stack([np.asarray(obs[a]["observation"]) for a in agents])
    inventory = np.stack([np.asarray(obs[a]["inventory"]) for a in agents])
    if env_id == "storm":
        # JaxMARL gives one [5, N] table to everyone; ours swaps each observer's column to 0.
        for i in range(env.num_agents):
            order = np.arange(env.num_agents)
            order[[0, i]] = order[[i, 0]]
            inventory[i] = inventory[i][:, order]
        inventory = inventory[0]
    return grids, inventory


# One case per id runs in CI (each case compiles its own env, which dominates the cost); the
# others run nightly.
CI_CASES = {("storm_2p", "short"), ("storm", "three"), ("storm_np", "three")}
PARAMS = [
    pytest.param(*case, marks=() if case in CI_CASES else pytest.mark.nightly)
    for case in sorted(CASES)
]


@pytest.mark.parametrize(("env_id", "case"), PARAMS)
def test_matches_jaxmarl_step_by_step(env_id, case):
    ref = np.load(DATA / f"jaxmarl_{env_id}_{case}.npz")
    env = jaxmarl.make(env_id, **CASES[(env_id, case)])

    # The reset state for the recorded key.
    if env_id == "storm":
        state = env._fresh_state(
            jnp.asarray(ref["reset_key"]), jnp.int32(0), jnp.asarray(ref["reset_cells"])
        )
    else:
        _, state = env.reset(jnp.asarray(ref["reset_key"]))
    assert_state(env, env_id, state, ref, "reset_", None, f"{env_id}/{case} reset")

    if env_id == "storm":

        def step(key, state, actions, respawn, restart):
            return env.transition(step_keys(key), state, actions, respawn, restart)

    else:

        def step(key, state, actions, respawn, restart):
            return env.step_env(key, state, actions)

    step = jax.jit(step)
    zero_cells = np.zeros((env.num_agents, 2), np.int32)
    for t in range(len(ref["actions"])):
        where = f"{env_id}/{case} step {t}"
        state = our_state(env, env_id, ref, "pre_", t)
        actions = {a: jnp.int32(ref["actions"][t, i]) for i, a in enumerate(env.agents)}
        respawn = ref["respawn_cells"][t] if env_id == "storm" else zero_cells
        restart = ref["restart_cells"][t] if env_id == "storm" else zero_cells
        obs, state, rewards, dones, infos = step(
            jnp.asarray(ref["step_keys"][t]), state, actions, respawn, restart
        )
        assert_state(env, env_id, state, ref, "post_", t, where)
        grids, inventory = observation_arrays(env_id, env, obs)
        expected = ref["obs"][t].reshape(grids.shape)
        np.testing.assert_array_equal(grids, expected, where + ": observation")
        if inventory is not None:
            np.testing.assert_array_equal(inventory, ref["obs_inventory"][t], where + ": inventory")
        np.testing.assert_allclose(
            [rewards[a] for a in env.agents], ref["rewards"][t], rtol=1e-6, atol=1e-6,
            err_msg=where + ": rewards",
        )  # fmt: skip
        assert bool(dones["__all__"]) == bool(ref["done_all"][t]), where
        if env_id == "storm_np":
            np.testing.assert_allclose(infos["coin_ratio"], ref["coin_ratio"][t], rtol=1e-6)


def test_fixtures_cover_the_rules():
    """Every id's recording has interactions (or JaxMARL's zero-reward freezes), freezes,
    thaws, coin pickups, inner and outer episode ends."""
    for env_id in ("storm_2p", "storm", "storm_np"):
        refs = [np.load(p) for p in sorted(DATA.glob(f"jaxmarl_{env_id}_*.npz"))]
        assert refs, env_id

        def total(fn):
            return sum(int(fn(ref)) for ref in refs)

        axes = lambda a: tuple(range(1, a.ndim))  # noqa: E731
        frozen = total(lambda r: (r["post_freeze"] > 0).any(axis=axes(r["post_freeze"])).sum())
        thawed = total(
            lambda r: (
                ((r["pre_freeze"] > 0) & (r["post_freeze"] <= 0))
                .any(axis=axes(r["pre_freeze"]))
                .sum()
            )
        )
        pickups = total(lambda r: (r["post_inventory"] > r["pre_inventory"]).sum())
        inner = total(lambda r: (r["post_inner_t"] == 0).sum())
        outer = total(lambda r: r["done_all"].sum())
        assert frozen > 0 and thawed > 0 and pickups > 0 and inner > 0 and outer > 0, env_id
        if env_id != "storm":  # JaxMARL's two-player storm never pays (see README)
            assert total(lambda r: (r["rewards"] != 0).any(-1).sum()) > 0, env_id
