"""Step-by-step parity with JaxMARL 0.2.0's Coin Game, replaying recorded fixtures.

``make_jaxmarl_reference.py`` (run in JaxMARL's own venv) recorded the keys, actions, states,
observations, rewards and dones of two outer episodes per case; our env, reset and stepped
with the same raw keys, must give the same values at every step.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl

DATA = pathlib.Path(__file__).resolve().parent / "data"
CASES = {
    "default": {},
    "ego_cnn_short": {"num_inner_steps": 4, "num_outer_steps": 3, "egocentric": True, "cnn": True},
    "shared_payoff": {
        "num_inner_steps": 6,
        "num_outer_steps": 2,
        "shared_rewards": True,
        "payoff_matrix": [[2, 0.5, -3], [1.5, 3, -1]],
    },
}
POSITIONS = ("red_pos", "blue_pos", "red_coin_pos", "blue_coin_pos")


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_jaxmarl_step_by_step(case):
    ref = np.load(DATA / f"jaxmarl_coin_game_{case}.npz")
    env = jaxmarl.make("coin_game", **CASES[case])
    _, state = env.reset(jnp.asarray(ref["reset_key"]))
    step = jax.jit(env.step)
    for t in range(len(ref["actions"])):
        where = f"{case} step {t}"
        for name in POSITIONS:
            np.testing.assert_array_equal(getattr(state, name), ref["pre_" + name][t], where)
        actions = {agent: jnp.int32(ref["actions"][t, i]) for i, agent in enumerate(env.agents)}
        obs, state, rewards, dones, infos = step(jnp.asarray(ref["step_keys"][t]), state, actions)
        for name in POSITIONS:
            np.testing.assert_array_equal(getattr(state, name), ref["post_" + name][t], where)
        assert int(env.inner_step(state)) == ref["post_step"][t], where
        assert int(env.outer_step(state)) == ref["post_outer_t"][t], where
        assert bool(state.done) == ref["post_done"][t], where
        np.testing.assert_array_equal(
            np.stack([np.asarray(obs[a]).reshape(-1) for a in env.agents]), ref["obs"][t], where
        )
        np.testing.assert_array_equal([rewards[a] for a in env.agents], ref["rewards"][t], where)
        np.testing.assert_array_equal(
            [dones[a] for a in [*env.agents, "__all__"]], ref["dones"][t], where
        )
        assert bool(infos["inner_episode_done"]) == ref["inner_done"][t], where
    # The fixtures cover inner boundaries, outer ends and (for the default case) pickups.
    assert ref["dones"][:, -1].sum() == 2 and ref["inner_done"].sum() > 2
    assert (ref["rewards"] != 0).any()
