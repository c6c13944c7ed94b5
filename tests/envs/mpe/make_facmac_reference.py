"""Record reference rollouts of JaxMARL 0.2.0's MPE envs as ``.npz`` fixtures.

The facmac scenarios have no PettingZoo/mpe2 counterpart, so their reference is JaxMARL 0.2.0
itself; ``MPE_simple_spread_v3`` is recorded too, as a cross-check that JaxMARL's semantics and
ours agree where mpe2 is also available. JaxMARL has the same import name as this package, so
this script runs in a separate virtual environment and is never imported by the tests::

    /tmp/peer/bin/python tests/envs/mpe/make_facmac_reference.py

Each env and action type is recorded twice, ``data/jaxmarl_<env_id>_<action_type>_<p>.npz``:

* ``p = x64``: JaxMARL under ``jax.enable_x64`` (float64 physics), reset positions rounded to
  float32 first so they are exact in either precision. The test replays whole episodes with our
  env in float64: MPE's contact dynamics amplify float32 rounding by orders of magnitude over an
  episode, so two float32 implementations that order their sums differently drift apart by up to
  ~1e-4 by step 25 (and by how much depends on the CPU's FMA use); float64 leaves only the
  formulas to compare.
* ``p = f32``: JaxMARL as shipped (float32). The test takes one step from each recorded state
  (no drift), which checks our shipped float32 env, facmac's float32 random prey moves included.

Arrays, for ``E`` episodes of ``T = max_steps + 1`` steps (JaxMARL's time limit fires on the
26th ``step_env`` call); floats are stored as float32:

* ``agents`` [A] str; ``init_<field>`` for every state field of the reset (``p_pos``,
  ``p_vel``, ``c``, ``done``, ``step``, and ``goal`` where the scenario has one);
  ``init_obs`` [E, A, obs_dim];
* ``keys`` [E, T, 2] uint32: the key given to ``env.step`` at each step (``step_env`` receives
  ``jax.random.split(key)[0]``, JaxMARL's and our order);
* ``actions`` [E, T, A] int32 (discrete) or ``actions_u8`` [E, T, A, 5] uint8 (continuous:
  the action is ``actions_u8 / 255`` in float32, stored exactly);
* after each step (``step_env``, no reset): ``obs`` [E, T, A, obs_dim], ``rewards`` [E, T, A],
  ``dones`` [E, T, A + 1] bool (agents in order, then ``__all__``), ``p_pos`` / ``p_vel``
  [E, T, num_entities, 2], ``c`` [E, T, A, dim_c], ``step`` [E, T].
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

# (env_id, action_type): facmac is continuous-only in JaxMARL.
RECORDINGS = [
    ("MPE_simple_facmac_v1", "Continuous"),
    ("MPE_simple_facmac_3a_v1", "Continuous"),
    ("MPE_simple_facmac_6a_v1", "Continuous"),
    ("MPE_simple_facmac_9a_v1", "Continuous"),
    ("MPE_simple_spread_v3", "Discrete"),
    ("MPE_simple_spread_v3", "Continuous"),
]
EPISODES = {"x64": 20, "f32": 10}
STATE_FIELDS = ("p_pos", "p_vel", "c", "done", "step", "goal")


def _stored(value) -> np.ndarray:
    value = np.asarray(value)
    return value.astype(np.float32) if np.issubdtype(value.dtype, np.floating) else value


def record(env_id: str, action_type: str, episodes: int, seed: int) -> dict[str, np.ndarray]:
    """Roll ``episodes`` episodes of ``env_id`` (in the ambient precision) and collect arrays."""
    kwargs = {} if "facmac" in env_id else {"action_type": action_type}
    env = jaxmarl.make(env_id, **kwargs)
    agents = list(env.agents)
    steps = env.max_steps + 1
    rng = np.random.default_rng(seed)

    reset_keys = jax.random.split(jax.random.PRNGKey(seed), episodes)
    _, state = jax.vmap(env.reset)(reset_keys)
    # Reset positions exactly representable in float32, so both precisions start alike.
    state = state.replace(p_pos=state.p_pos.astype(jnp.float32).astype(state.p_pos.dtype))
    init_obs = jax.vmap(env.get_obs)(state)
    out: dict[str, np.ndarray] = {"agents": np.array(agents)}
    for field in STATE_FIELDS:
        value = getattr(state, field, None)
        if value is not None:
            out[f"init_{field}"] = _stored(value)
    out["init_obs"] = _stored(np.stack([np.asarray(init_obs[a]) for a in agents], axis=1))

    step_keys = np.asarray(
        jax.random.split(jax.random.PRNGKey(seed + 1), episodes * steps)
    ).reshape(episodes, steps, 2)
    if action_type == "Discrete":
        sizes = np.array([env.action_space(a).n for a in agents])
        actions = rng.integers(0, sizes, (episodes, steps, len(agents))).astype(np.int32)
        out["actions"] = actions
    else:
        shapes = {env.action_space(a).shape for a in agents}
        assert len(shapes) == 1, f"{env_id}: continuous action shapes differ {shapes}"
        actions_u8 = rng.integers(0, 256, (episodes, steps, len(agents), *shapes.pop()), np.uint8)
        out["actions_u8"] = actions_u8
        actions = actions_u8.astype(np.float32) / np.float32(255)

    @jax.jit
    def step_all(keys, state, actions):
        def one(key, state, actions):
            step_key, _ = jax.random.split(key)
            return env.step_env(step_key, state, {a: actions[i] for i, a in enumerate(agents)})

        return jax.vmap(one)(keys, state, actions)

    traj: dict[str, list[np.ndarray]] = {
        k: [] for k in ("obs", "rewards", "dones", "p_pos", "p_vel", "c", "step")
    }
    for t in range(steps):
        obs, state, rewards, dones, _ = step_all(
            jnp.asarray(step_keys[:, t]), state, jnp.asarray(actions[:, t])
        )
        traj["obs"].append(np.stack([np.asarray(obs[a]) for a in agents], axis=1))
        traj["rewards"].append(np.stack([np.asarray(rewards[a]) for a in agents], axis=1))
        traj["dones"].append(np.stack([np.asarray(dones[a]) for a in [*agents, "__all__"]], axis=1))
        for field in ("p_pos", "p_vel", "c", "step"):
            traj[field].append(np.asarray(getattr(state, field)))
    out.update({k: _stored(np.stack(v, axis=1)) for k, v in traj.items()})
    out["rewards"] = out["rewards"].astype(np.float32)
    out["keys"] = step_keys
    return out


def main() -> None:
    DATA.mkdir(exist_ok=True)
    for index, (env_id, action_type) in enumerate(RECORDINGS):
        for precision, episodes in EPISODES.items():
            seed = 1000 + 10 * index + (5 if precision == "f32" else 0)
            with jax.enable_x64(precision == "x64"):
                arrays = record(env_id, action_type, episodes, seed)
            path = DATA / f"jaxmarl_{env_id}_{action_type.lower()}_{precision}.npz"
            np.savez_compressed(path, **arrays)
            print(f"{path.name}: {path.stat().st_size / 1024:.0f} KiB", flush=True)


if __name__ == "__main__":
    main()
