"""Record JaxMARL 0.2.0's STORM transitions as fixtures for ``test_storm_parity.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/storm/make_jaxmarl_reference.py

JaxMARL's ``storm`` is slow (every step permutes all 43758 start-cell combinations), so the
episodes are short; scripted openings put players face to face with coins in hand so that
zaps, interactions, freezes and respawns happen, and random actions (biased towards moving
and zapping) cover moves, collisions, coin pickups and regrowth. Each case plays episodes
of ``env.step_env`` from a (possibly edited) reset state and writes
``data/jaxmarl_<id>_<case>.npz`` with, per step ``t``:

* ``step_keys`` [S, 2] uint32 (the key given to ``step_env``) and ``actions`` [S, N] int32;
* ``pre_<field>`` / ``post_<field>``: the state before and after the step, in our field
  names (``pos``, ``grid``, ``inventory``, coins, ``freeze``, timers) plus ``inner_t``,
  ``outer_t`` and ``done`` (JaxMARL's clocks);
* ``obs`` (observation grids, int8 one-hot), ``obs_inventory`` (where JaxMARL has one),
  ``rewards`` [S, N] float32, ``done_all`` [S];
* for ``storm`` only, ``respawn_cells`` and ``restart_cells`` [S, N, 2]: the start cells
  JaxMARL drew in that step (our env draws them differently; the test passes these in);
* ``reset_key`` [2] uint32 and ``reset_<field>``: JaxMARL's reset state for that key (and
  ``reset_cells`` for ``storm``).
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

from jaxmarl.environments.storm import storm_env as grid_module  # noqa: E402
from jaxmarl.environments.storm.storm import InTheMatrix  # noqa: E402
from jaxmarl.environments.storm.storm_2p import InTheGrid_2p  # noqa: E402
from jaxmarl.environments.storm.storm_env import InTheGrid  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"


# ---------------------------------------------------------------- state translation
def fields_2p(env, state):
    return {
        "pos": np.stack([state.red_pos, state.blue_pos]).astype(np.int32),
        "grid": np.asarray(state.grid, np.int32),
        "inventory": np.stack([state.red_inventory, state.blue_inventory]).astype(np.float32),
        "red_coins": np.asarray(state.red_coins, np.int32),
        "blue_coins": np.asarray(state.blue_coins, np.int32),
        "freeze": np.asarray(state.freeze, np.int32),
    }


def fields_grid(env, state):
    return {
        "pos": np.asarray(state.agent_positions, np.int32),
        "grid": np.asarray(state.grid, np.int32),
        "inventory": np.asarray(state.agent_inventories, np.float32),
        "coop_coins": np.asarray(state.coin_coop, np.int32),
        "defect_coins": np.asarray(state.coin_defect, np.int32),
        "freeze": np.asarray(state.agent_freezes, np.int32),
        "coop_timer": np.asarray(state.coin_timer_coop, np.int32),
        "defect_timer": np.asarray(state.coin_timer_defect, np.int32),
    }


def fields_matrix(env, state):
    return {
        "pos": np.asarray(state.agent_locs, np.int32),
        "grid": np.asarray(state.grid, np.int32),
        "inventory": np.asarray(state.agent_invs, np.int32),
        "red_coins": np.asarray(state.red_coins, np.int32),
        "blue_coins": np.asarray(state.blue_coins, np.int32),
        "freeze": np.asarray(state.freeze, np.int32),
    }


def clocks(state):
    return {
        "inner_t": np.int32(state.step),
        "outer_t": np.int32(state.outer_t),
        "done": np.bool_(state.done),
    }


# ---------------------------------------------------------------- scripted positions
def place_2p(state, pos, inventory):
    grid = jnp.where((state.grid == 1) | (state.grid == 2), 0, state.grid)
    pos = jnp.asarray(pos, jnp.int8)
    grid = grid.at[pos[0, 0], pos[0, 1]].set(1).at[pos[1, 0], pos[1, 1]].set(2)
    inventory = jnp.asarray(inventory, jnp.float32)
    return state.replace(
        red_pos=pos[0], blue_pos=pos[1], grid=grid,
        red_inventory=inventory[0], blue_inventory=inventory[1],
    )  # fmt: skip


def place_grid(state, pos, inventory):
    n = len(pos)
    grid = jnp.where((state.grid >= 1) & (state.grid <= 8), 0, state.grid)
    pos = jnp.asarray(pos, jnp.int8)
    for i in range(n):
        grid = grid.at[pos[i, 0], pos[i, 1]].set(i + 1)
    return state.replace(
        agent_positions=pos, grid=grid,
        agent_inventories=jnp.asarray(inventory, jnp.float32),
    )  # fmt: skip


def place_matrix(state, pos, inventory):
    n = len(pos)
    grid = jnp.where(state.grid >= 5, 0, state.grid)
    pos = jnp.asarray(pos, jnp.int16)
    grid = grid.at[pos[:, 0], pos[:, 1]].set(5 + jnp.arange(n, dtype=jnp.int16))
    return state.replace(agent_locs=pos, grid=grid, agent_invs=jnp.asarray(inventory, jnp.int8))


# ---------------------------------------------------------------- cases
# An episode: (setup or None, scripted opening actions, total steps). A setup is
# (positions [(x, y, dir)], inventories). Direction 1 faces +x, 3 faces -x.
FACE_OFF_2 = ([(3, 3, 1), (4, 3, 3)], [(1, 0), (0, 2)])
STEP_INTO_2 = ([(2, 4, 1), (4, 4, 3)], [(0, 0), (0, 0)])
CASES = {
    "storm_2p": {
        "short": (
            {"num_inner_steps": 8, "num_outer_steps": 2},
            0,
            [(FACE_OFF_2, [(3, 4)], 16), (STEP_INTO_2, [(2, 2)] * 2, 16), (None, [], 10)],
        ),
        "random_coins": (
            {
                "num_inner_steps": 9,
                "fixed_coin_location": False,
                "payoff_matrix": [[[2, -1], [4, 0.5]], [[1, 3], [-2, 2]]],
                "freeze_penalty": 3,
            },
            1,
            [(FACE_OFF_2, [(4, 3), (3, 4)], 9), (None, [], 12)],
        ),
    },
    "storm": {
        "two": (
            {"num_inner_steps": 10, "num_outer_steps": 2},
            2,
            [(FACE_OFF_2, [(3, 3)], 20), (STEP_INTO_2, [(2, 2)], 6)],
        ),
        "three": (
            {
                "num_agents": 3,
                "num_inner_steps": 12,
                "fixed_coin_location": False,
                "payoff_matrix": [[[2, -1], [4, 0.5]], [[1, 3], [-2, 2]]],
            },
            3,
            [
                (
                    ([(3, 3, 1), (6, 6, 0), (4, 3, 3)], [(1, 1), (2, 0), (0, 3)]),
                    [(3, 4, 3)],
                    12,
                ),
                (([(2, 4, 1), (3, 5, 2), (4, 4, 3)], [(0, 0)] * 3), [(2, 4, 2)], 6),
            ],
        ),
    },
    "storm_np": {
        "two": (
            {"num_inner_steps": 10, "num_outer_steps": 2},
            4,
            [(FACE_OFF_2, [(4, 3)], 20), (STEP_INTO_2, [(2, 2)], 12)],
        ),
        "three": (
            {
                "num_agents": 3,
                "num_inner_steps": 12,
                "payoff_matrix": [[[2, -1], [4, 0.5]], [[1, 3], [-2, 2]]],
                "freeze_penalty": 3,
                "grid_size": 7,
                "obs_size": 3,
                "num_coins": 4,
            },
            5,
            [
                # 0 and 2 both zap 1: one-step zap and two-step zap contest the target.
                (([(3, 3, 1), (4, 3, 3), (4, 5, 2)], [(1, 1), (2, 0), (0, 3)]), [(4, 3, 5)], 12),
                # 0 and 2 both zap 1 from one step away: a random draw settles it.
                (([(3, 3, 1), (4, 3, 3), (5, 3, 3)], [(1, 1), (2, 0), (0, 3)]), [(4, 3, 3)], 8),
                (([(2, 4, 1), (3, 5, 2), (4, 4, 3)], [(0, 0)] * 3), [(2, 2, 2)], 6),
            ],
        ),
        "flat": (
            {"num_agents": 4, "num_inner_steps": 6, "cnn": False, "grid_size": 6},
            6,
            [(None, [], 7), (None, [], 7)],
        ),
    },
}
ENVS = {
    "storm_2p": (InTheGrid_2p, fields_2p, place_2p),
    "storm": (InTheGrid, fields_grid, place_grid),
    "storm_np": (InTheMatrix, fields_matrix, place_matrix),
}


def storm_spawns(env, key):
    """The start cells ``storm`` draws from ``key`` (JaxMARL's draw, done the same way)."""
    combo = jax.random.choice(key, grid_module.AGENT_SPAWNS, shape=(), replace=False)
    return np.asarray(combo[: env.num_agents], np.int32)


def storm_step_draws(env, key):
    key, _ = jax.random.split(key)
    key, _ = jax.random.split(key)
    key, respawn = jax.random.split(key)
    key, _ = jax.random.split(key)
    restart, _ = jax.random.split(key)
    _, layout = jax.random.split(restart)
    return storm_spawns(env, respawn), storm_spawns(env, layout)


def observations(env_id, obs):
    if env_id == "storm_2p":
        grids = np.stack([o["observation"] for o in obs])
        return grids, np.stack([o["inventory"] for o in obs]).astype(np.float32)
    if env_id == "storm":
        return np.asarray(obs["observations"]), np.asarray(obs["inventory"], np.float32)
    return np.asarray(obs), None


def rewards_of(env_id, rewards):
    return np.asarray(jnp.stack(rewards) if env_id == "storm_2p" else rewards, np.float32)


def record(env_id, kwargs, seed, episodes):
    cls, fields, place = ENVS[env_id]
    if "payoff_matrix" in kwargs:  # JaxMARL's in-the-grid envs need an array here
        kwargs = {**kwargs, "payoff_matrix": jnp.asarray(kwargs["payoff_matrix"])}
    env = cls(**kwargs)
    n = env.num_agents
    num_actions = env.num_actions
    # Moves and zaps more often than turns and stays, so things happen in short episodes.
    weights = np.ones(num_actions)
    weights[2] = 3.0
    weights[3 if env_id != "storm_np" else 4] = 2.0
    weights /= weights.sum()
    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    step = jax.jit(env.step_env)
    out = {}

    def add(name, value):
        out.setdefault(name, []).append(np.asarray(value))

    first = True
    for setup, opening, length in episodes:
        key, reset_key = jax.random.split(key)
        _, state = env.reset(reset_key)
        if first:
            out["reset_key"] = np.asarray(reset_key, np.uint32)
            for name, value in {**fields(env, state), **clocks(state)}.items():
                out["reset_" + name] = np.asarray(value)
            if env_id == "storm":
                out["reset_cells"] = storm_spawns(env, jax.random.split(reset_key)[1])
            first = False
        if setup is not None:
            state = place(state, *setup)
        for t in range(length):
            key, step_key = jax.random.split(key)
            if t < len(opening):
                action = np.asarray(opening[t], np.int32)
            else:
                action = rng.choice(num_actions, size=n, p=weights).astype(np.int32)
            for name, value in {**fields(env, state), **clocks(state)}.items():
                add("pre_" + name, value)
            actions = {a: jnp.int32(action[i]) for i, a in enumerate(env.agents)}
            if env_id == "storm_2p":
                # InTheGrid_2p unpacks its actions argument (a, b = actions); a dict would
                # unpack to its keys (0, 1) and every action would be ignored.
                actions = tuple(actions.values())
            obs, state, rewards, dones, infos = step(step_key, state, actions)
            for name, value in {**fields(env, state), **clocks(state)}.items():
                add("post_" + name, value)
            grids, inventory = observations(env_id, obs)
            add("obs", grids.astype(np.int8))
            if inventory is not None:
                add("obs_inventory", inventory)
            add("rewards", rewards_of(env_id, rewards))
            add("done_all", np.bool_(dones["__all__"]))
            add("step_keys", np.asarray(step_key, np.uint32))
            add("actions", action)
            if env_id == "storm":
                respawn, restart = storm_step_draws(env, step_key)
                add("respawn_cells", respawn)
                add("restart_cells", restart)
            if env_id == "storm_np":
                add("coin_ratio", np.float32(infos["coin_ratio"]))
            if bool(dones["__all__"]):
                break  # JaxMARL's step_env runs on past the end; the API resets here
    return {
        name: value if isinstance(value, np.ndarray) else np.stack(value)
        for name, value in out.items()
    }


def main(only=None):
    DATA.mkdir(exist_ok=True)
    for env_id, cases in CASES.items():
        if only and env_id not in only:
            continue
        for case, (kwargs, seed, episodes) in cases.items():
            arrays = record(env_id, kwargs, seed, episodes)
            path = DATA / f"jaxmarl_{env_id}_{case}.npz"
            np.savez_compressed(path, **arrays)
            frozen = (arrays["post_freeze"] > 0).any(
                axis=tuple(range(1, arrays["post_freeze"].ndim))
            )
            print(
                path.name,
                len(arrays["actions"]),
                "steps; rewarded",
                int((arrays["rewards"] != 0).any(-1).sum()),
                "frozen",
                int(frozen.sum()),
                "outer ends",
                int(arrays["done_all"].sum()),
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
