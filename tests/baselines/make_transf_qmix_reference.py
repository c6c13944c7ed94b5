"""Record JaxMARL 0.2.0's TransfQMIX entity matrices as a fixture for ``test_transf_qmix.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /work/main/tests/baselines/make_transf_qmix_reference.py

``data/jaxmarl_transformer_views.npz`` holds, from JaxMARL's ``TransformersCTRolloutManager``:

* ``spread_p_pos`` / ``spread_p_vel`` [S, 6, 2]: MPE simple_spread states after random steps,
  ``spread_obs`` [S, 3, 6, 4] and ``spread_state`` [S, 6, 5]: its matrices of those states;
* ``smax_<case>_rows`` [S]: steps of the SMAX fixture ``tests/envs/smax/data/jaxmarl_smax_<case>
  .npz`` whose post-step states are used, ``smax_<case>_obs`` [S, A, N, 15]: the allies' matrices
  of those states, ``smax_<case>_state`` [S, N, 12]: the global state matrices.
"""

from __future__ import annotations

import ast
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.smax import map_name_to_scenario  # noqa: E402
from jaxmarl.environments.smax.smax_env import SMAX, State  # noqa: E402
from jaxmarl.wrappers.transformers import TransformersCTRolloutManager  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SMAX_DATA = HERE.parent / "envs" / "smax" / "data"
SMAX_CASES = ("3m", "3s5z_vs_3s6z_selfplay")
STEPS = 12


def spread(out: dict) -> None:
    env = jaxmarl.make("MPE_simple_spread_v3")
    manager = TransformersCTRolloutManager(env, batch_size=1)
    key = jax.random.PRNGKey(0)
    pos, vel, obs, state_rows = [], [], [], []
    _, state = env.reset(key)
    for _ in range(STEPS):
        key, act_key, step_key = jax.random.split(key, 3)
        actions = {
            a: jax.random.randint(k, (), 0, 5)
            for a, k in zip(env.agents, jax.random.split(act_key, env.num_agents))
        }
        _, state, _, _, _ = env.step_env(step_key, state, actions)
        view = manager.spread_wrapped_get_obs(state)
        pos.append(np.asarray(state.p_pos))
        vel.append(np.asarray(state.p_vel))
        obs.append(np.stack([np.asarray(view[a]) for a in env.agents]))
        state_rows.append(np.asarray(view["world_state"]))
    out.update(
        spread_p_pos=np.stack(pos),
        spread_p_vel=np.stack(vel),
        spread_obs=np.stack(obs),
        spread_state=np.stack(state_rows),
    )


def smax(out: dict, case: str) -> None:
    data = dict(np.load(SMAX_DATA / f"jaxmarl_smax_{case}.npz"))
    kwargs = dict(ast.literal_eval(str(data["kwargs"])))
    env = SMAX(scenario=map_name_to_scenario(str(data["scenario"])), **kwargs)
    manager = TransformersCTRolloutManager(env, batch_size=1)
    rows = np.linspace(0, len(data["actions"]) - 1, STEPS).astype(np.int32)
    obs, state_rows = [], []
    for row in rows:
        fields = {
            name: jnp.asarray(data[f"post_{name}"][row]) for name in State.__dataclass_fields__
        }
        state = State(**fields)
        flat = env.get_obs(state)
        allies = [a for a in env.agents if a.startswith("ally")]
        obs.append(
            np.stack([np.asarray(manager.smax_obs_vec_to_matrix(flat[a], None)) for a in allies])
        )
        world = {"world_state": env.get_world_state(state)}
        state_rows.append(np.asarray(manager.smax_global_state(world, state)))
    out.update(
        {
            f"smax_{case}_rows": rows,
            f"smax_{case}_obs": np.stack(obs),
            f"smax_{case}_state": np.stack(state_rows),
        }
    )


def main() -> None:
    out: dict = {}
    spread(out)
    for case in SMAX_CASES:
        smax(out, case)
    (HERE / "data").mkdir(exist_ok=True)
    np.savez_compressed(HERE / "data" / "jaxmarl_transformer_views.npz", **out)
    print({k: v.shape for k, v in out.items()})


if __name__ == "__main__":
    main()
