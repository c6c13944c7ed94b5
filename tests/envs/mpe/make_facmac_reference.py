"""Record reference rollouts of JaxMARL 0.2.0's MPE envs as ``.npz`` fixtures.

The facmac scenarios have no PettingZoo/mpe2 counterpart, so their reference is JaxMARL 0.2.0
itself; ``MPE_simple_spread_v3`` is recorded too, as a cross-check that JaxMARL's semantics and
ours agree where mpe2 is also available. JaxMARL has the same import name as this package, so
this script runs in a separate virtual environment and is never imported by the tests::

    /tmp/peer/bin/python tests/envs/mpe/make_facmac_reference.py

Each fixture ``data/jaxmarl_<env_id>_<action_type>.npz`` holds, for ``E`` episodes of ``T``
steps (``T = max_steps + 1``: JaxMARL's time limit fires on the 26th ``step_env`` call):

* ``agents`` [A] str, ``init_<field>`` for every state field of the reset (``p_pos``,
  ``p_vel``, ``c``, ``done``, ``step``, and ``goal`` where the scenario has one),
  ``init_obs`` [E, A, obs_dim] f32;
* ``keys`` [E, T, 2] uint32: the key given to ``env.step`` at each step (``step_env`` receives
  ``jax.random.split(key)[0]``, JaxMARL's and our order);
* ``actions``: [E, T, A] int32 (discrete) or [E, T, A, 5] f32 (continuous, multiples of 1/255
  so they are stored exactly as uint8 ``actions_u8``);
* ``obs`` [E, T, A, obs_dim] f32 (pre-reset, from ``step_env``), ``rewards`` [E, T, A] f32,
  ``dones`` [E, T, A + 1] bool (agents in order, then ``__all__``), ``p_pos`` / ``p_vel``
  [E, T, num_entities, 2] f32, ``c`` [E, T, A, dim_c] f32, ``step`` [E, T] int32.
"""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if getattr(jaxmarl, "__version__", None) == "0.1.0.dev0" or not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python), not ours")

DATA = pathlib.Path(__file__).resolve().parent / "data"

# (env_id, action_type, episodes): facmac is continuous-only in JaxMARL.
RECORDINGS = [
    ("MPE_simple_facmac_v1", "Continuous", 20),
    ("MPE_simple_facmac_3a_v1", "Continuous", 20),
    ("MPE_simple_facmac_6a_v1", "Continuous", 20),
    ("MPE_simple_facmac_9a_v1", "Continuous", 20),
    ("MPE_simple_spread_v3", "Discrete", 20),
    ("MPE_simple_spread_v3", "Continuous", 20),
]
STATE_FIELDS = ("p_pos", "p_vel", "c", "done", "step", "goal")


def record(env_id: str, action_type: str, episodes: int, seed: int) -> dict[str, np.ndarray]:
    kwargs = {} if "facmac" in env_id else {"action_type": action_type}
    env = jaxmarl.make(env_id, **kwargs)
    agents = list(env.agents)
    steps = env.max_steps + 1
    rng = np.random.default_rng(seed)

    reset_keys = jax.random.split(jax.random.PRNGKey(seed), episodes)
    obs0, state = jax.vmap(env.reset)(reset_keys)
    out: dict[str, np.ndarray] = {"agents": np.array(agents)}
    for field in STATE_FIELDS:
        value = getattr(state, field, None)
        if value is not None:
            out[f"init_{field}"] = np.asarray(value)
    out["init_obs"] = np.stack([np.asarray(obs0[a]) for a in agents], axis=1)

    step_keys = np.asarray(
        jax.random.split(jax.random.PRNGKey(seed + 1), episodes * steps)
    ).reshape(episodes, steps, 2)
    if action_type == "Discrete":
        sizes = np.array([env.action_space(a).n for a in agents])
        actions = (rng.random((episodes, steps, len(agents))) * sizes).astype(np.int32)
        out["actions"] = actions
    else:
        dims = {env.action_space(a).shape for a in agents}
        assert len(dims) == 1, f"{env_id}: continuous action shapes differ {dims}"
        actions_u8 = rng.integers(0, 256, (episodes, steps, len(agents), *dims.pop()), np.uint8)
        out["actions_u8"] = actions_u8
        actions = actions_u8.astype(np.float32) / np.float32(255)

    @jax.jit
    def step_all(keys, state, actions):
        def one(key, state, actions):
            step_key, _ = jax.random.split(key)
            return env.step_env(step_key, state, {a: actions[i] for i, a in enumerate(agents)})

        return jax.vmap(one)(keys, state, actions)

    traj: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "rewards", "dones", "p_pos")}
    traj.update({"p_vel": [], "c": [], "step": []})
    for t in range(steps):
        obs, state, rewards, dones, _ = step_all(
            jnp.asarray(step_keys[:, t]), state, jnp.asarray(actions[:, t])
        )
        traj["obs"].append(np.stack([np.asarray(obs[a]) for a in agents], axis=1))
        traj["rewards"].append(np.stack([np.asarray(rewards[a]) for a in agents], axis=1))
        traj["dones"].append(np.stack([np.asarray(dones[a]) for a in [*agents, "__all__"]], axis=1))
        for field in ("p_pos", "p_vel", "c", "step"):
            traj[field].append(np.asarray(getattr(state, field)))
    out.update({k: np.stack(v, axis=1) for k, v in traj.items()})
    out["keys"] = step_keys
    out["rewards"] = out["rewards"].astype(np.float32)
    return out


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for seed, (env_id, action_type, episodes) in enumerate(RECORDINGS):
        arrays = record(env_id, action_type, episodes, seed=1000 + 10 * seed)
        path = DATA / f"jaxmarl_{env_id}_{action_type.lower()}.npz"
        np.savez_compressed(path, **arrays)
        print(
            f"{path.name}: {path.stat().st_size / 1024:.0f} KiB",
            {k: v.shape for k, v in arrays.items()},
        )


if __name__ == "__main__":
    main()
