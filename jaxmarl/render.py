"""Rendering dispatch: each env family keeps its own ``render`` module next to its envs.

``save_episode_gif(env, states, path)`` finds ``<family package>.render.save_gif`` for the
env's class (``jaxmarl.envs.mpe.simple_spread`` -> ``jaxmarl.envs.mpe.render``) and calls it
with a stacked state pytree ``[T, ...]``. Families without a renderer raise a clear error.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any


def renderer_module(env: Any):
    """The ``render`` module of the env's family, or ``None``."""
    module = type(env).__module__
    family = module.rsplit(".", 1)[0]
    try:
        return importlib.import_module(f"{family}.render")
    except ModuleNotFoundError:
        return None


def can_render(env: Any) -> bool:
    return renderer_module(env) is not None


def save_episode_gif(env: Any, states: Any, path: str | Path, **kwargs: Any) -> Path:
    """Write the stacked ``states`` of one episode to a GIF at ``path``.

    Raises:
        NotImplementedError: the env's family has no ``render`` module.
    """
    module = renderer_module(env)
    if module is None:
        raise NotImplementedError(
            f"{type(env).__name__} has no renderer (expected a 'render' module beside "
            f"{type(env).__module__})"
        )
    module.save_gif(env, states, Path(path), **kwargs)
    return Path(path)
