"""Rendering dispatch: each env family keeps its own ``render`` module next to its envs.

``save_episode_gif(env, states, path)`` finds ``<family package>.render.save_gif`` for the
env's class (``jaxmarl.envs.mpe.simple_spread`` -> ``jaxmarl.envs.mpe.render``) and calls it
with a stacked state pytree ``[T, ...]``. The family is that of the env's class, after
unwrapping wrappers (``env.unwrapped``), so subclasses in other modules of a family
(``HeuristicEnemySMAX`` in ``jaxmarl.envs.smax.heuristic_enemy_smax_env``) get their family's
renderer. Families without a renderer raise a clear error.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import jax
import numpy as np


def renderer_module(env: Any):
    """The ``render`` module of the (unwrapped) env's family, or ``None``."""
    env = getattr(env, "unwrapped", env)
    family = type(env).__module__.rsplit(".", 1)[0]
    name = f"{family}.render"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # Only "there is no render module" means no renderer; a missing import inside the
        # render module is a real error and is raised.
        if exc.name == name or name.startswith(f"{exc.name}."):
            return None
        raise


def can_render(env: Any) -> bool:
    return renderer_module(env) is not None


def save_episode_gif(env: Any, states: Any, path: str | Path, **kwargs: Any) -> Path:
    """Write the stacked ``states`` of one episode to a GIF at ``path``.

    Raises:
        NotImplementedError: the env's family has no ``render`` module.
    """
    module = renderer_module(env)
    env = getattr(env, "unwrapped", env)
    if module is None:
        raise NotImplementedError(
            f"{type(env).__name__} has no renderer (expected a 'render' module beside "
            f"{type(env).__module__})"
        )
    module.save_gif(env, states, Path(path), **kwargs)
    return Path(path)


def host_frames(states: Any, probe: str, frame_ndim: int) -> list[Any]:
    """One env's states as a list of host (NumPy) states, for a family's renderer.

    ``states`` is a list/tuple of states, one state, or states stacked over time ``[T, ...]``;
    the rank of the field ``probe`` tells which (it has ``frame_ndim`` axes in one env's
    state, e.g. MPE's ``p_pos``: 2).

    Raises:
        ValueError: ``probe`` has another rank (a batch of envs: index it first).
    """
    if isinstance(states, (list, tuple)):
        frames = [jax.tree.map(np.asarray, state) for state in states]
        stacked = False
    else:
        host = jax.tree.map(np.asarray, states)
        stacked = np.ndim(getattr(host, probe)) == frame_ndim + 1
        frames = [host]
    for frame in frames:
        shape = np.shape(getattr(frame, probe))
        if len(shape) != frame_ndim + stacked:
            raise ValueError(
                f"expected the states of one environment ({probe} with {frame_ndim} axes, or "
                f"{frame_ndim + 1} when stacked over time), got {probe} of shape {shape}; "
                f"index the batch first, e.g. jax.tree.map(lambda x: x[0], state)"
            )
    if not stacked:
        return frames
    host = frames[0]
    steps = np.shape(getattr(host, probe))[0]
    return [jax.tree.map(lambda x, t=t: x[t], host) for t in range(steps)]
