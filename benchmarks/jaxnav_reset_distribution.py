"""The levels JaxNav's default reset draws, summarised, so two libraries' resets can be compared.

Runs unchanged under either library's interpreter (``-I`` keeps the repository's ``jaxmarl``
from shadowing an installed JaxMARL)::

    .venv/bin/python -I benchmarks/jaxnav_reset_distribution.py --resets 16384 --seeds 7 8
    /tmp/peer/bin/python -I benchmarks/jaxnav_reset_distribution.py --resets 16384 --seeds 7 8

For each seed: ``--resets`` default resets (2 robots, 11 x 11 ``Grid-Rand-Poly``, fill 0.3)
vmapped under one key split, and as many maps from the map generator alone. Printed per seed
as one Markdown row: the mean number of interior wall cells after reset and from the generator
(a reset that draws the map again when a case fails shifts the first from the second), the
start-goal distance (m, mean and median), the shortest 4-connected path from the start cell to
the goal cell (cells; mean over the pairs that have one) and the share of pairs with no such
path (the default draws without a path check).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections import deque

import jax
import numpy as np


def make_env():
    if importlib.util.find_spec("jaxmarl.envs") is None:  # JaxMARL 0.2.0 (ours: jaxmarl.envs)
        from jaxmarl.environments.jaxnav import JaxNav

        return "JaxMARL 0.2.0", JaxNav(num_agents=2)
    import jaxmarl

    return "ours", jaxmarl.make("jaxnav")


def path_length(grid: np.ndarray, start: tuple[int, int], goal: tuple[int, int]) -> int:
    """Cells on the shortest 4-connected free path (``-1``: none)."""
    seen, queue = {start}, deque([(start, 0)])
    while queue:
        (y, x), d = queue.popleft()
        if (y, x) == goal:
            return d
        for y2, x2 in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            inside = 0 <= y2 < grid.shape[0] and 0 <= x2 < grid.shape[1]
            if inside and not grid[y2, x2] and (y2, x2) not in seen:
                seen.add((y2, x2))
                queue.append(((y2, x2), d + 1))
    return -1


def summary(env, seed: int, resets: int) -> dict:
    keys = jax.random.split(jax.random.PRNGKey(seed), resets)
    _, state = jax.jit(jax.vmap(env.reset))(keys)
    maps = np.asarray(jax.jit(jax.vmap(env.map_obj.sample_map))(keys))
    grid, pos, goal = (np.asarray(x) for x in (state.map_data, state.pos, state.goal))
    cell = lambda p: (int(p[1]), int(p[0]))  # noqa: E731 - (row, column) of a point, 1 m cells
    paths = np.array(
        [
            path_length(g, cell(s), cell(t))
            for g, ss, tt in zip(grid, pos, goal)
            for s, t in zip(ss, tt)
        ]
    )
    dist = np.linalg.norm(pos - goal, axis=-1)
    return {
        "walls_reset": grid[:, 1:-1, 1:-1].sum((1, 2)).mean(),
        "walls_generator": maps[:, 1:-1, 1:-1].sum((1, 2)).mean(),
        "dist_mean": dist.mean(),
        "dist_median": np.median(dist),
        "path_mean": paths[paths >= 0].mean(),
        "no_path": (paths < 0).mean(),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--resets", type=int, default=16384)
    parser.add_argument("--seeds", type=int, nargs="+", default=[7, 8])
    args = parser.parse_args(argv)
    side, env = make_env()
    for seed in args.seeds:
        s = summary(env, seed, args.resets)
        print(
            f"| {side} | {seed} | {args.resets:,} | {s['walls_reset']:.2f} "
            f"| {s['walls_generator']:.2f} | {s['dist_mean']:.3f} | {s['dist_median']:.3f} "
            f"| {s['path_mean']:.2f} | {s['no_path']:.4f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
