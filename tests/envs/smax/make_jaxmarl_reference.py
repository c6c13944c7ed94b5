"""Record JaxMARL 0.2.0's SMAX transitions as ``.npz`` fixtures for ``test_smax_parity.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /work/main/tests/envs/smax/make_jaxmarl_reference.py

Battles are played with JaxMARL's own scripted policy on both teams, each unit replaced by a
uniformly random available action with probability 0.3 (so units fight, die and episodes are
won and lost, and moves and invalid attacks are exercised too). Every step of ``E`` episodes of
up to ``T`` steps is recorded (episodes that end are restarted from a fresh reset), once per
case ``data/jaxmarl_smax_<case>.npz``:

* ``pre_<field>`` [S, ...]: the state before each step (every ``State`` field);
* ``actions`` [S, N] int32 (discrete) or float32 [S, N, 4] (continuous);
* ``noise`` [S, W, N] float32: the weapon-cooldown deviation JaxMARL draws for unit ``n`` in
  world step ``w`` (recomputed from the step key with JaxMARL's key splits: ``step_env``
  splits off the decode key, every world step splits the carried key, then one key per unit),
  so our env can be driven with exactly the same randomness;
* ``obs`` [S, N, D], ``rewards`` [S, N], ``dones`` [S, N + 1] (agents, then ``__all__``),
  ``avail`` [S, N, max actions] uint8 (padded with 0; of the post-step state), ``world_state``
  [S, 12 N], and ``post_<field>`` for the state after the step (``step_env``, no reset);
* for the heuristic cases, ``enemy_obs`` [S, E, D], ``policy_in_<field>``, ``policy_out_<field>``
  and ``enemy_actions`` [S, E]: JaxMARL's heuristic decisions on the enemy team.

Continuous cases translate the perturbed script (moves: ``r = 1`` and the direction's angle;
stop: ``r = 0``; attacks: a random offset) and use ``do_shoot`` and ``shoot_last_enemy`` in
{0, 1} only, where JaxMARL's random draws are certain.
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

from jaxmarl.environments.smax import map_name_to_scenario  # noqa: E402
from jaxmarl.environments.smax.heuristic_enemy import (  # noqa: E402
    create_heuristic_policy,
    get_heuristic_policy_initial_state,
)
from jaxmarl.environments.smax.smax_env import SMAX  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
STATE_FIELDS = (
    "unit_positions",
    "unit_alive",
    "unit_teams",
    "unit_health",
    "unit_types",
    "unit_weapon_cooldowns",
    "prev_movement_actions",
    "prev_attack_actions",
    "step",
    "done",
)
POLICY_FIELDS = ("default_target", "last_attacked_enemy")
# name: (scenario, kwargs, episodes, steps per episode)
CASES = {
    "3m": ("3m", {}, 4, 40),
    "2s3z": ("2s3z", {}, 2, 40),
    "5m_vs_6m_blind": ("5m_vs_6m", {"see_enemy_actions": False}, 3, 30),
    "6h_vs_8z": ("6h_vs_8z", {}, 2, 25),
    "3s5z_vs_3s6z_selfplay": ("3s5z_vs_3s6z", {"use_self_play_reward": True}, 1, 30),
    "smacv2_5_units": ("smacv2_5_units", {}, 3, 30),
    "3m_nowalls_short": ("3m", {"walls_cause_death": False, "max_steps": 12}, 3, 30),
    "3m_conic": ("3m", {"observation_type": "conic"}, 2, 30),
    "2s3z_continuous": ("2s3z", {"action_type": "continuous"}, 2, 30),
}
RANDOM_ACTION_PROB = 0.3


def jaxmarl_noise(env: SMAX, key: jax.Array) -> jax.Array:
    """``[W, N]``: the cooldown deviations JaxMARL's ``step_env(key, ...)`` draws."""
    key, _ = jax.random.split(key)  # step_env: (key, action_key)
    draws = []
    for _ in range(env.world_steps_per_env_step):
        key, world_key = jax.random.split(key)
        unit_keys = jax.random.split(world_key, env.num_agents)
        draws.append(
            jax.vmap(
                lambda k: jax.random.uniform(
                    k, minval=-env.time_per_step, maxval=2 * env.time_per_step
                )
            )(unit_keys)
        )
    return jnp.stack(draws)


def _stack(tree_list):
    return jax.tree.map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *tree_list)


def record(name: str, scenario: str, kwargs: dict, episodes: int, steps: int, seed: int):
    env = SMAX(scenario=map_name_to_scenario(scenario), **kwargs)
    agents = env.agents
    n = env.num_agents
    a = env.num_allies
    continuous = env.action_type == "continuous"
    policies = [create_heuristic_policy(env, team) for team in (0, 1)]
    max_actions = max(env.num_ally_actions, env.num_enemy_actions)
    rng = np.random.default_rng(seed)

    @jax.jit
    def scripted(key, memory, state):
        obs = env.get_obs_unit_list(state)
        obs = jnp.stack([obs[agent] for agent in agents])
        keys = jax.random.split(key, n)
        ally, ally_memory = jax.vmap(policies[0])(
            keys[:a], jax.tree.map(lambda x: x[:a], memory), obs[:a]
        )
        enemy, enemy_memory = jax.vmap(policies[1])(
            keys[a:], jax.tree.map(lambda x: x[a:], memory), obs[a:]
        )
        actions = jnp.concatenate([ally, enemy])
        new_memory = jax.tree.map(lambda x, y: jnp.concatenate([x, y]), ally_memory, enemy_memory)
        return actions, new_memory, obs[a:]

    @jax.jit
    def transition(key, state, actions):
        if continuous:
            action_dict = {agent: actions[i] for i, agent in enumerate(agents)}
        else:
            action_dict = {agent: actions[i].astype(jnp.int32) for i, agent in enumerate(agents)}
        obs, post, rewards, dones, _ = env.step_env(key, state, action_dict)
        avail = env.get_avail_actions(post)
        avail = jnp.stack(
            [jnp.pad(avail[agent], (0, max_actions - avail[agent].shape[0])) for agent in agents]
        )
        return dict(
            obs=jnp.stack([obs[agent] for agent in agents]),
            world_state=obs["world_state"],
            rewards=jnp.stack([rewards[agent] for agent in agents]),
            dones=jnp.stack([dones[agent] for agent in [*agents, "__all__"]]),
            avail=avail,
            post=post,
            noise=jaxmarl_noise(env, key),
        )

    initial_memory = jax.tree.map(
        lambda x: jnp.stack([jnp.asarray(x)] * n), get_heuristic_policy_initial_state()
    )
    records = []
    key = jax.random.PRNGKey(seed)
    for _ in range(episodes):
        key, reset_key = jax.random.split(key)
        _, state = env.reset(reset_key)
        memory = initial_memory
        for _ in range(steps):
            key, policy_key, step_key = jax.random.split(key, 3)
            actions, new_memory, enemy_obs = scripted(policy_key, memory, state)
            actions = np.array(actions)
            scripted_actions = actions.copy()
            avail = env.get_avail_actions(state)
            for i, agent in enumerate(agents):
                if rng.random() < RANDOM_ACTION_PROB:
                    actions[i] = rng.integers(0, len(avail[agent]))  # may be unavailable
            if continuous:
                # Follow the (perturbed) script: its moves as (r=1, theta of the direction),
                # stop as r=0, attacks as "shoot" at a random offset (the closest enemy to it).
                cont = rng.random((n, 4)).astype(np.float32)
                cont[:, 0] = rng.integers(0, 2, n)
                cont[:, 1] = actions < 5
                moving = actions < 4
                cont[moving, 2] = 1.0
                cont[moving, 3] = np.array([0.25, 0.0, 0.75, 0.5], np.float32)[actions[moving]]
                cont[actions == 4, 2] = 0.0
                step_actions = jnp.asarray(cont)
            else:
                step_actions = jnp.asarray(actions, dtype=jnp.int32)
            out = transition(step_key, state, step_actions)
            rec = {f"pre_{f}": getattr(state, f) for f in STATE_FIELDS}
            rec.update({f"post_{f}": getattr(out["post"], f) for f in STATE_FIELDS})
            rec.update({k: v for k, v in out.items() if k != "post"})
            rec["actions"] = step_actions
            rec["enemy_obs"] = enemy_obs
            rec["enemy_actions"] = scripted_actions[a:]
            for f in POLICY_FIELDS:
                rec[f"policy_in_{f}"] = getattr(memory, f)[a:]
                rec[f"policy_out_{f}"] = getattr(new_memory, f)[a:]
            records.append(rec)
            memory = new_memory
            state = out["post"]
            if bool(state.done):
                break
    arrays = _stack(records)
    for k, v in arrays.items():
        if v.dtype == np.float64:
            arrays[k] = v.astype(np.float32)
    arrays["scenario"] = np.array(scenario)
    arrays["kwargs"] = np.array(repr(sorted(kwargs.items())))
    return arrays


def main() -> None:
    DATA.mkdir(exist_ok=True)
    selected = sys.argv[1:] or list(CASES)
    for index, name in enumerate(CASES):
        if name not in selected:
            continue
        scenario, kwargs, episodes, steps = CASES[name]
        arrays = record(name, scenario, kwargs, episodes, steps, seed=100 + index)
        path = DATA / f"jaxmarl_smax_{name}.npz"
        np.savez_compressed(path, **arrays)
        print(
            f"{path.name}: {len(arrays['actions'])} steps, "
            f"{int(arrays['post_done'].sum())} episode ends, "
            f"{path.stat().st_size / 1024:.0f} KiB",
            flush=True,
        )


if __name__ == "__main__":
    main()
