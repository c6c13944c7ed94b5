"""Record JaxMARL 0.2.0's Coin Game transitions as fixtures for ``test_coin_game_parity.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/coin_game/make_jaxmarl_reference.py

Each case plays ``S`` steps of ``env.step`` (auto-reset included, so two outer episodes and
the start of a third) with uniformly random actions, and writes
``data/jaxmarl_coin_game_<case>.npz``:

* ``reset_key`` [2] uint32 and ``step_keys`` [S, 2] uint32: the raw keys given to ``reset``
  and to every ``step`` (our env splits them the same way, so it sees the same randomness);
* ``actions`` [S, 2] int32 (agents "0", "1");
* ``pre_<field>`` and ``post_<field>`` [S, ...]: JaxMARL's state before and after each step,
  for ``red_pos``, ``blue_pos``, ``red_coin_pos``, ``blue_coin_pos`` ([S, 2] int32), ``step``
  (its inner step counter), ``outer_t`` and ``done``;
* ``obs`` [S, 2, D] (the observations after each step, cast to float32; D = 36, or 3 * 3 * 4
  flattened for ``cnn``), ``rewards`` [S, 2] float32, ``dones`` [S, 3] (agents, ``__all__``)
  and ``inner_done`` [S] (``infos["inner_episode_done"]``).
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

from jaxmarl.environments.coin_game.coin_game import CoinGame  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
POSITIONS = ("red_pos", "blue_pos", "red_coin_pos", "blue_coin_pos")
# name: (kwargs, steps, seed)
CASES = {
    "default": ({}, 205, 0),
    "ego_cnn_short": (
        {"num_inner_steps": 4, "num_outer_steps": 3, "egocentric": True, "cnn": True},
        30,
        1,
    ),
    "shared_payoff": (
        {
            "num_inner_steps": 6,
            "num_outer_steps": 2,
            "shared_rewards": True,
            "payoff_matrix": [[2, 0.5, -3], [1.5, 3, -1]],
        },
        30,
        2,
    ),
}


def record(kwargs, steps, seed):
    env = CoinGame(**kwargs)
    key = jax.random.PRNGKey(seed)
    key, reset_key, action_key = jax.random.split(key, 3)
    step_keys = jax.random.split(key, steps)
    actions = jax.random.randint(action_key, (steps, 2), 0, 5, dtype=jnp.int32)
    step = jax.jit(env.step)
    _, state = env.reset(reset_key)
    out = {name: [] for name in ("obs", "rewards", "dones", "inner_done")}
    for prefix in ("pre_", "post_"):
        for name in (*POSITIONS, "step", "outer_t", "done"):
            out[prefix + name] = []
    for t in range(steps):
        action = {agent: actions[t, i] for i, agent in enumerate(env.agents)}
        for name in (*POSITIONS, "step", "outer_t", "done"):
            out["pre_" + name].append(np.asarray(getattr(state, name)))
        obs, state, rewards, dones, infos = step(step_keys[t], state, action)
        for name in (*POSITIONS, "step", "outer_t", "done"):
            out["post_" + name].append(np.asarray(getattr(state, name)))
        out["obs"].append(
            np.stack([np.asarray(obs[a], np.float32).reshape(-1) for a in env.agents])
        )
        out["rewards"].append(np.asarray([rewards[a] for a in env.agents], np.float32))
        out["dones"].append(np.asarray([dones[a] for a in [*env.agents, "__all__"]], bool))
        out["inner_done"].append(np.asarray(infos["inner_episode_done"], bool))
    arrays = {name: np.stack(values) for name, values in out.items()}
    arrays["reset_key"] = np.asarray(reset_key, np.uint32)
    arrays["step_keys"] = np.asarray(step_keys, np.uint32)
    arrays["actions"] = np.asarray(actions, np.int32)
    return arrays


def main():
    DATA.mkdir(exist_ok=True)
    for name, (kwargs, steps, seed) in CASES.items():
        arrays = record(kwargs, steps, seed)
        path = DATA / f"jaxmarl_coin_game_{name}.npz"
        np.savez_compressed(path, **arrays)
        print(path, int(arrays["dones"][:, -1].sum()), "outer episodes ended")


if __name__ == "__main__":
    main()
