"""The environment registry: ``make``, ``register`` and ``registered_envs``.

Entries are ``env_id -> EnvSpec(entry_point="module:Class", kwargs)`` and are imported lazily,
so ``import jaxmarl`` stays cheap and a family's dependencies load only when it is used.
JaxMARL's ids are kept verbatim; new environments use ``Name-vN`` and any change to their
dynamics bumps ``N``.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from jaxmarl.env import MultiAgentEnv


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """How to build one registered environment.

    Attributes:
        env_id: the id passed to ``make``.
        entry_point: ``"package.module:ClassName"`` or a callable returning an env.
        kwargs: default constructor keywords; ``make(env_id, **overrides)`` updates them.
    """

    env_id: str
    entry_point: str | Callable[..., MultiAgentEnv]
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def load(self) -> Callable[..., MultiAgentEnv]:
        if callable(self.entry_point):
            return self.entry_point
        module_name, _, attr = self.entry_point.partition(":")
        if not attr:
            raise ValueError(
                f"entry point {self.entry_point!r} of {self.env_id!r} must look like "
                f"'package.module:ClassName'"
            )
        return getattr(importlib.import_module(module_name), attr)


_REGISTRY: dict[str, EnvSpec] = {}
# JaxMARL exposes the ids as a list; this list is kept in step with the registry.
registered_envs: list[str] = []


def register(
    env_id: str,
    entry_point: str | Callable[..., MultiAgentEnv],
    *,
    kwargs: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> EnvSpec:
    """Add an environment to the registry.

    Args:
        env_id: a new id (``Name-vN`` for new environments).
        entry_point: ``"package.module:ClassName"`` (imported on first ``make``) or a callable.
        kwargs: default constructor keywords.
        overwrite: replace an existing entry instead of refusing.

    Raises:
        ValueError: the id is taken and ``overwrite`` is false.
    """
    if env_id in _REGISTRY and not overwrite:
        raise ValueError(
            f"environment id {env_id!r} is already registered (entry point "
            f"{_REGISTRY[env_id].entry_point!r}); choose a new id or pass overwrite=True"
        )
    spec = EnvSpec(env_id=env_id, entry_point=entry_point, kwargs=dict(kwargs or {}))
    _REGISTRY[env_id] = spec
    if env_id not in registered_envs:
        registered_envs.append(env_id)
    return spec


def spec(env_id: str) -> EnvSpec:
    """The ``EnvSpec`` of ``env_id``; unknown ids raise with the closest registered ids."""
    try:
        return _REGISTRY[env_id]
    except KeyError:
        close = difflib.get_close_matches(env_id, list(_REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"unknown environment id {env_id!r}{hint} (jaxmarl.registered_envs lists all "
            f"{len(_REGISTRY)} ids)"
        ) from None


def make(env_id: str, **kwargs: Any) -> MultiAgentEnv:
    """Build a registered environment: ``jaxmarl.make("MPE_simple_spread_v3", num_agents=4)``.

    Raises:
        ValueError: unknown ``env_id`` (the message names the closest ids).
        TypeError: a keyword the environment does not take (the message names close ones).
    """
    env_spec = spec(env_id)
    constructor = env_spec.load()
    _check_keywords(env_id, constructor, kwargs)
    return constructor(**{**env_spec.kwargs, **kwargs})


def _check_keywords(env_id: str, constructor: Callable[..., Any], kwargs: dict) -> None:
    try:
        signature = inspect.signature(constructor)
    except (TypeError, ValueError):
        return
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    accepted = [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    for name in kwargs:
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise TypeError(
                f"{env_id} got an unknown argument {name!r}{hint} (it takes: {', '.join(accepted)})"
            )
