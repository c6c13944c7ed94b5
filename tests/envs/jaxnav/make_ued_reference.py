"""Record JaxMARL 0.2.0's JaxNav level mutations for ``test_jaxnav_ued.py``.

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/jaxnav/make_ued_reference.py

JaxMARL's default JaxNav (2 square robots, 11 x 11 ``Grid-Rand-Poly``) resets on four keys;
each level is mutated with ``make_level_mutator(10, env._map_obj)`` for ``n`` = 1, 4 and 10
edits (key ``PRNGKey(100 + level)``), and by ``flip_wall`` and ``move_goal`` alone (key
``PRNGKey(200 + level)``). ``data/jaxmarl_ued.npz`` holds, per level ``l<i>_``: the level
(``map``, ``pos``, ``theta``, ``goal``) and each result's ``map`` and ``goal``
(``n<k>_map`` ..., ``flip_map``, ``move_goal``).
"""

from __future__ import annotations

import pathlib
import sys

import jax
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.jaxnav.jaxnav_ued_utils import (  # noqa: E402
    flip_wall,
    make_level_mutator,
    move_goal,
)

OUT = pathlib.Path(__file__).resolve().parent / "data" / "jaxmarl_ued.npz"


def main():
    env = jaxmarl.make("jaxnav")
    mutate = jax.jit(make_level_mutator(10, env._map_obj), static_argnums=2)
    arrays = {}
    for i in range(4):
        _, state = env.reset(jax.random.PRNGKey(i))
        arrays.update(
            {
                f"l{i}_map": np.asarray(state.map_data, np.int8),
                f"l{i}_pos": np.asarray(state.pos, np.float32),
                f"l{i}_theta": np.asarray(state.theta, np.float32),
                f"l{i}_goal": np.asarray(state.goal, np.float32),
            }
        )
        for n in (1, 4, 10):
            new = mutate(jax.random.PRNGKey(100 + i), state, n)
            arrays[f"l{i}_n{n}_map"] = np.asarray(new.map_data, np.int8)
            arrays[f"l{i}_n{n}_goal"] = np.asarray(new.goal, np.float32)
        key = jax.random.PRNGKey(200 + i)
        arrays[f"l{i}_flip_map"] = np.asarray(flip_wall(key, env._map_obj, state).map_data, np.int8)
        arrays[f"l{i}_move_goal"] = np.asarray(move_goal(key, env._map_obj, state).goal, np.float32)
        changed = int((arrays[f"l{i}_n10_map"] != arrays[f"l{i}_map"]).sum())
        print(f"level {i}: 10 edits changed {changed} cells")
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
