"""Record JaxMARL 0.2.0's JaxNav test levels ("singletons") for ``test_jaxnav_singletons.py``.

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/jaxnav/make_singletons_reference.py

For each case (a level name and keywords of ``make_jaxnav_singleton``) JaxMARL builds the
level and resets it; with square robots (``map_id="Grid-Rand-Poly"``) it also takes one
``step_env`` with fixed actions (agent ``i``: v = 0.6, w = 0.2 (i mod 3 - 1)). Its default,
``map_id="Grid-Rand"`` (disc robots), resets but crashes in ``step_env`` (JaxMARL has no
disc-robot map collision; ``envs/jaxnav/README.md``). Saved in ``data/jaxmarl_singletons.npz``,
per case ``c<k>_``: the level (``map``, ``pos``, ``theta``, ``goal``, ``rew_lambda``), the
reset observations ``obs0`` [n, 205] float32 and, after the step, ``obs1``, ``rewards`` [n]
and ``dones`` [n]; ``cases`` holds each case's name and keywords as JSON.
"""

from __future__ import annotations

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.jaxnav.jaxnav_singletons import (  # noqa: E402
    make_jaxnav_singleton,
    registered_singletons,
)

OUT = pathlib.Path(__file__).resolve().parent / "data" / "jaxmarl_singletons.npz"
POLY = {"map_id": "Grid-Rand-Poly"}
CASES = [
    *((name, {}) for name in registered_singletons),
    *((name, POLY) for name in registered_singletons),
    ("CircleCross", {**POLY, "num_agents": 6, "circle_rad": 4}),
    ("BlankCross2", {**POLY, "fixed_lambda": True, "rew_lambda": 0.7}),
]


def main():
    arrays = {"cases": np.array([json.dumps([name, kw]) for name, kw in CASES])}
    for k, (name, kwargs) in enumerate(CASES):
        env = make_jaxnav_singleton(name, **kwargs)
        obs, state = env.reset(jax.random.PRNGKey(0))
        stack = lambda d: np.stack([np.asarray(d[a], np.float32) for a in env.agents])  # noqa: E731
        if kwargs.get("map_id") == "Grid-Rand-Poly":
            actions = {
                a: jnp.array([0.6, 0.2 * (i % 3 - 1)], jnp.float32)
                for i, a in enumerate(env.agents)
            }
            obs1, _, rewards, dones, _ = env.step_env(jax.random.PRNGKey(1), state, actions)
            arrays.update(
                {
                    f"c{k}_obs1": stack(obs1),
                    f"c{k}_rewards": stack(rewards),
                    f"c{k}_dones": np.array([bool(dones[a]) for a in env.agents]),
                }
            )
        arrays.update(
            {
                f"c{k}_map": np.asarray(state.map_data, np.int8),
                f"c{k}_pos": np.asarray(state.pos, np.float32),
                f"c{k}_theta": np.asarray(state.theta, np.float32),
                f"c{k}_goal": np.asarray(state.goal, np.float32),
                f"c{k}_rew_lambda": np.float32(state.rew_lambda),
                f"c{k}_obs0": stack(obs),
            }
        )
        print(name, kwargs, env.num_agents, "agents")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
