"""Step-by-step parity with JaxMARL 0.2.0's ``SwitchRiddle`` (fixtures recorded by
``make_jaxmarl_reference.py`` in JaxMARL's own environment).

Our env is reset and stepped with the same keys and actions as JaxMARL's, carrying its own
state (auto-resets included); every state, observation, reward and done must be equal.
"""

from __future__ import annotations

import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.envs.switch_riddle import SwitchRiddle

DATA = pathlib.Path(__file__).resolve().parent / "data"
# Must match CASES in make_jaxmarl_reference.py.
CASES = {
    "n3": {},
    "n5": {"num_agents": 5},
    "n4_light_on": {
        "num_agents": 4,
        "initial_bulb_state": True,
        "reward_all_die": -2.0,
        "reward_all_live": 0.5,
    },
}
FIELDS = ("bulb_state", "agent_in_room", "has_been", "done", "step")


def _key(raw: np.ndarray) -> jax.Array:
    return jax.random.wrap_key_data(jnp.asarray(raw, dtype=jnp.uint32))


def _assert_state(state, data, prefix: str, index=None, where: str = "") -> None:
    for name in FIELDS:
        want = data[f"{prefix}_{name}"]
        if index is not None:
            want = want[index]
        # JaxMARL keeps has_been as 0/1 integers; ours is bool.
        np.testing.assert_array_equal(
            np.asarray(getattr(state, name)).astype(np.int64),
            np.asarray(want).astype(np.int64),
            err_msg=f"{where} {prefix} {name}",
        )


@pytest.mark.parametrize("case", list(CASES))
def test_matches_jaxmarl_step_by_step(case):
    data = np.load(DATA / f"jaxmarl_switch_riddle_{case}.npz")
    env = SwitchRiddle(**CASES[case])
    obs, state = env.reset(_key(data["reset_key"]))
    _assert_state(state, data, "reset", where="reset")
    np.testing.assert_array_equal(np.stack([obs[a] for a in env.agents]), data["reset_obs"])
    step = jax.jit(env.step)
    num_steps = len(data["actions"])
    for t in range(num_steps):
        where = f"{case} step {t}:"
        _assert_state(state, data, "pre", t, where)
        actions = {a: jnp.int32(data["actions"][t, i]) for i, a in enumerate(env.agents)}
        obs, state, rewards, dones, infos = step(_key(data["step_key"][t]), state, actions)
        _assert_state(state, data, "post", t, where)
        np.testing.assert_array_equal(
            np.stack([obs[a] for a in env.agents]), data["obs"][t], err_msg=where
        )
        np.testing.assert_array_equal(
            np.array([rewards[a] for a in env.agents], dtype=np.float32),
            data["rewards"][t],
            err_msg=where,
        )
        np.testing.assert_array_equal(
            np.array([dones[a] for a in env.agents + ["__all__"]]), data["dones"][t], err_msg=where
        )
    # The fixtures exercise both ways an episode ends.
    ends = data["dones"][:, -1]
    told = ends & (data["actions"][np.arange(num_steps), data["pre_agent_in_room"]] == 2)
    assert told.any() and (ends & ~told).any()
