"""Record JaxMARL 0.2.0's OvercookedV2 transitions as fixtures for ``test_overcooked_v2_parity.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/overcooked_v2/make_jaxmarl_reference.py

Uniformly random play almost never delivers a soup, so most cases are played by a scripted
cook written here (breadth-first walks to the next useful fixture: the missing ingredient, the
pot, a plate, the delivery spot), which takes a random action with probability ``eps`` and
fetches a random ingredient instead of the needed one with probability ``wrong``, so that
wrong soups get cooked and delivered too. Each case writes ``data/jaxmarl_ov2_<case>.npz``:

* ``reset_key`` [2] uint32, ``step_keys`` [S, 2] uint32: the raw keys of ``reset`` and of every
  ``env.step`` (auto-reset included);
* ``actions`` [S, A] int32;
* state fields after the reset (index 0) and after every step (index t + 1), [S + 1, ...]:
  ``x``, ``y``, ``dir``, ``inventory`` [A], ``grid`` [H, W, 3], ``recipe``,
  ``new_correct_delivery``, ``step``;
* ``obs`` [S + 1, A, h, w, C] uint8 (the observations after the reset and after every step;
  every value is a small count);
* ``rewards`` [S, A], ``shaped`` [S, A] float32, ``dones`` [S, A + 1] bool (``__all__`` last).
"""

from __future__ import annotations

import collections
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.overcooked_v2 import OvercookedV2  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
# name: (kwargs, steps, seed, policy: eps / wrong (None: uniform random actions))
CASES = {
    "cramped_room_v2_cook": (
        {
            "layout": "cramped_room_v2",
            "max_steps": 150,
            "negative_rewards": True,
            "sample_recipe_on_delivery": True,
            "indicate_successful_delivery": True,
        },
        320,
        0,
        (0.1, 0.25),
    ),
    "grounded_coord_simple_view2": (
        {
            "layout": "grounded_coord_simple",
            "max_steps": 120,
            "agent_view_size": 2,
            "negative_rewards": True,
            "sample_recipe_on_delivery": True,
            "random_agent_positions": True,
        },
        250,
        1,
        (0.15, 0.3),
    ),
    "cramped_room_v2_random_reset_start_cooking": (
        {
            "layout": "cramped_room_v2",
            "max_steps": 60,
            "agent_view_size": 3,
            "random_reset": True,
            "start_cooking_interaction": True,
        },
        130,
        2,
        (0.2, 0.2),
    ),
    "fun_coordination_permutations": (
        {"layout": "fun_coordination", "max_steps": 100, "op_ingredient_permutations": [0, 1]},
        120,
        3,
        (0.15, 0.2),
    ),
    "counter_circuit_random": ({"layout": "counter_circuit", "max_steps": 40}, 60, 4, None),
    "demo_cook_wide_view1_random_reset": (
        {"layout": "demo_cook_wide", "max_steps": 40, "agent_view_size": 1, "random_reset": True},
        50,
        5,
        (0.5, 0.5),
    ),
    "long_room_single_agent": ({"layout": "long_room", "max_steps": 150}, 200, 6, (0.05, 0.0)),
}

PLATE, COOKED = 1, 2
WALL, GOAL, POT, PLATE_PILE, PILE = 1, 4, 5, 9, 10
# Move actions (right, down, left, up) as (dx, dy).
MOVES = {0: (1, 0), 1: (0, 1), 2: (-1, 0), 3: (0, -1)}
INTERACT = 5
DIRECTION_VECTORS = [(0, -1), (0, 1), (1, 0), (-1, 0)]  # facing up, down, right, left


def counts(item, n):
    return [(item >> (2 + 2 * i)) & 3 for i in range(n)]


def targets_for(agent, state, n, rng, wrong, plate_held_by_other, start_cooking):
    """Cells the scripted agent wants to face next."""
    grid = np.asarray(state.grid)
    static, items, extra = grid[..., 0], grid[..., 1], grid[..., 2]
    held = int(state.agents.inventory[agent])
    recipe = counts(int(state.recipe), n)
    pots = static == POT
    cooked = pots & ((items & COOKED) != 0)
    cooking = pots & (extra > 0)
    idle = pots & ~cooked & ~cooking
    in_pots = [sum(c[i] for c in map(lambda v: counts(int(v), n), items[idle])) for i in range(n)]
    full_idle = idle & (np.vectorize(lambda v: sum(counts(int(v), n)))(items) == 3)
    if held & COOKED:
        return static == GOAL
    if held == PLATE:
        return (
            cooked
            if cooked.any()
            else (cooking | full_idle if (cooking | full_idle).any() else pots)
        )
    if held:  # an ingredient
        room = idle & (np.vectorize(lambda v: sum(counts(int(v), n)))(items) < 3)
        return room if room.any() else (static == WALL) & (items == 0)
    if start_cooking and full_idle.any():
        return full_idle
    if (cooked.any() or cooking.any() or full_idle.any()) and not plate_held_by_other:
        return static == PLATE_PILE
    missing = [i for i in range(n) if recipe[i] > in_pots[i]]
    if rng.random() < wrong or not missing:
        missing = [int(rng.integers(n))]
    return static == PILE + missing[0]


def step_towards(agent, state, targets, rng):
    """First action of a shortest walk to a floor cell next to a target, then turn, interact."""
    grid = np.asarray(state.grid)
    floor = grid[..., 0] == 0
    # Other agents block the walk (they may have moved by the time we get there: fine).
    floor[np.asarray(state.agents.pos.y), np.asarray(state.agents.pos.x)] = False
    x, y = int(state.agents.pos.x[agent]), int(state.agents.pos.y[agent])
    facing = int(state.agents.dir[agent])
    h, w = floor.shape
    start = (x, y)
    first = {start: None}
    queue = collections.deque([start])
    while queue:
        cx, cy = queue.popleft()
        for action, (dx, dy) in MOVES.items():
            nx, ny = cx + dx, cy + dy
            if not (0 <= nx < w and 0 <= ny < h):
                continue
            if targets[ny, nx]:
                if (cx, cy) == start:
                    fx, fy = DIRECTION_VECTORS[facing]
                    return INTERACT if (x + fx, y + fy) == (nx, ny) else action
                return first[(cx, cy)]
            if floor[ny, nx] and (nx, ny) not in first:
                first[(nx, ny)] = action if (cx, cy) == start else first[(cx, cy)]
                queue.append((nx, ny))
    return int(rng.integers(6))


def scripted_actions(env, state, rng, eps, wrong, start_cooking):
    n = env.layout.num_ingredients
    inventories = np.asarray(state.agents.inventory)
    out = []
    for agent in range(env.num_agents):
        if rng.random() < eps:
            out.append(int(rng.integers(6)))
            continue
        others = np.delete(inventories, agent)
        targets = targets_for(agent, state, n, rng, wrong, (others == PLATE).any(), start_cooking)
        out.append(step_towards(agent, state, targets, rng))
    return out


def snapshot(state, obs, agents):
    return {
        "x": np.asarray(state.agents.pos.x, np.int32),
        "y": np.asarray(state.agents.pos.y, np.int32),
        "dir": np.asarray(state.agents.dir, np.int32),
        "inventory": np.asarray(state.agents.inventory, np.int32),
        "grid": np.asarray(state.grid, np.int32),
        "recipe": np.asarray(state.recipe, np.int32),
        "new_correct_delivery": np.asarray(state.new_correct_delivery, bool),
        "step": np.asarray(state.step, np.int32),
        "obs": np.stack([np.asarray(obs[a]) for a in agents]).astype(np.uint8),
    }


def record(kwargs, steps, seed, policy):
    env = OvercookedV2(**kwargs)
    rng = np.random.default_rng(seed)
    key = jax.random.PRNGKey(seed)
    key, reset_key = jax.random.split(key)
    step_keys = jax.random.split(key, steps)
    step = jax.jit(env.step)
    obs, state = jax.jit(env.reset)(reset_key)
    frames = [snapshot(state, obs, env.agents)]
    actions, rewards, shaped, dones = [], [], [], []
    for t in range(steps):
        if policy is None:
            action = [int(rng.integers(6)) for _ in env.agents]
        else:
            start_cooking = kwargs.get("start_cooking_interaction", False)
            action = scripted_actions(env, state, rng, *policy, start_cooking)
        actions.append(action)
        act = {agent: jnp.uint32(action[i]) for i, agent in enumerate(env.agents)}
        obs, state, reward, done, info = step(step_keys[t], state, act)
        frames.append(snapshot(state, obs, env.agents))
        rewards.append([float(reward[a]) for a in env.agents])
        shaped.append([float(info["shaped_reward"][a]) for a in env.agents])
        dones.append([bool(done[a]) for a in [*env.agents, "__all__"]])
    arrays = {name: np.stack([f[name] for f in frames]) for name in frames[0]}
    arrays["reset_key"] = np.asarray(reset_key, np.uint32)
    arrays["step_keys"] = np.asarray(step_keys, np.uint32)
    arrays["actions"] = np.asarray(actions, np.int32)
    arrays["rewards"] = np.asarray(rewards, np.float32)
    arrays["shaped"] = np.asarray(shaped, np.float32)
    arrays["dones"] = np.asarray(dones, bool)
    return arrays


def main():
    DATA.mkdir(exist_ok=True)
    for name, (kwargs, steps, seed, policy) in CASES.items():
        arrays = record(kwargs, steps, seed, policy)
        path = DATA / f"jaxmarl_ov2_{name}.npz"
        np.savez_compressed(path, **arrays)
        rewards = arrays["rewards"][:, 0]
        print(
            f"{path.name}: {path.stat().st_size // 1024} KB, deliveries "
            f"+{int((rewards >= 20).sum())} -{int((rewards <= -20).sum())}, "
            f"recipes {sorted(set(arrays['recipe'].tolist()))}, "
            f"episode ends {int(arrays['dones'][:, -1].sum())}, "
            f"shaped {int((arrays['shaped'] != 0).sum())}"
        )


if __name__ == "__main__":
    main()
