"""Record JaxMARL 0.2.0's switch-riddle transitions as ``.npz`` fixtures for the parity test.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /work/main/tests/envs/switch_riddle/make_jaxmarl_reference.py

Each case plays ``S`` consecutive ``env.step`` calls (JaxMARL's auto-reset included) from one
reset. The agent in the room tells with probability ``TELL_PROB`` and otherwise does nothing
or switches the light with equal odds (so episodes both end by a tell and run into the time
limit); the other agents act uniformly at random (their actions must be ignored). Recorded
in ``data/jaxmarl_switch_riddle_<case>.npz``:

* ``reset_key`` [2] uint32, ``reset_obs`` [N, 2] and ``reset_<field>`` (the first state);
* ``step_key`` [S, 2] uint32 (raw ``PRNGKey`` data), ``actions`` [S, N] int32;
* ``pre_<field>`` [S, ...] and ``post_<field>`` [S, ...]: the state before and after each
  step (``bulb_state``, ``agent_in_room``, ``has_been``, ``done``, ``step``);
* ``obs`` [S, N, 2], ``rewards`` [S, N] float32, ``dones`` [S, N + 1] (agents, ``__all__``).
"""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.switch_riddle import SwitchRiddle  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
FIELDS = ("bulb_state", "agent_in_room", "has_been", "done", "step")
# name: (constructor kwargs, steps, seed)
CASES = {
    "n3": ({}, 60, 0),
    "n5": ({"num_agents": 5}, 60, 1),
    "n4_light_on": (
        {
            "num_agents": 4,
            "initial_bulb_state": True,
            "reward_all_die": -2.0,
            "reward_all_live": 0.5,
        },
        60,
        2,
    ),
}
TELL_PROB = 0.1


def _fields(state) -> dict[str, np.ndarray]:
    return {name: np.asarray(getattr(state, name)) for name in FIELDS}


def record(kwargs: dict, steps: int, seed: int) -> dict[str, np.ndarray]:
    env = SwitchRiddle(**kwargs)
    num_agents = env.num_agents
    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    key, reset_key = jax.random.split(key)
    obs, state = env.reset(reset_key)
    out = {"reset_key": np.asarray(reset_key)}
    out["reset_obs"] = np.stack([np.asarray(obs[a]) for a in env.agents])
    out.update({f"reset_{k}": v for k, v in _fields(state).items()})
    rows: dict[str, list] = {}
    step = jax.jit(env.step)
    for _ in range(steps):
        key, step_key = jax.random.split(key)
        actions = rng.integers(0, 3, size=num_agents).astype(np.int32)
        room = int(state.agent_in_room)
        actions[room] = 2 if rng.random() < TELL_PROB else int(rng.integers(0, 2))
        pre = _fields(state)
        obs, state, rewards, dones, _ = step(
            step_key, state, {a: jnp.int32(actions[i]) for i, a in enumerate(env.agents)}
        )
        row = {"step_key": np.asarray(step_key), "actions": actions}
        row.update({f"pre_{k}": v for k, v in pre.items()})
        row.update({f"post_{k}": v for k, v in _fields(state).items()})
        row["obs"] = np.stack([np.asarray(obs[a]) for a in env.agents])
        row["rewards"] = np.array([rewards[a] for a in env.agents], dtype=np.float32)
        row["dones"] = np.array([dones[a] for a in env.agents + ["__all__"]], dtype=bool)
        for name, value in row.items():
            rows.setdefault(name, []).append(value)
    out.update({name: np.stack(values) for name, values in rows.items()})
    return out


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for case, (kwargs, steps, seed) in CASES.items():
        data = record(kwargs, steps, seed)
        path = DATA / f"jaxmarl_switch_riddle_{case}.npz"
        np.savez_compressed(path, **data)
        ends = data["dones"][:, -1]
        told = ends & (data["rewards"][:, 0] != 0)
        print(f"{path.name}: {steps} steps, {ends.sum()} episode ends, {told.sum()} by a tell")


if __name__ == "__main__":
    main()
