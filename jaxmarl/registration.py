"""JaxMARL's ``jaxmarl.registration`` module path: ``make``, ``registered_envs``,
``MultiAgentEnv`` and ``SUBMODULE_ENVIRONMENTS``, from this project's registry
(:mod:`jaxmarl.registry`)."""

from __future__ import annotations

from typing import Any

from jaxmarl import registry
from jaxmarl.env import MultiAgentEnv
from jaxmarl.environments import SUBMODULE_ENVIRONMENTS
from jaxmarl.registry import make

# ``registered_envs`` comes from ``__getattr__`` (``from jaxmarl.registration import
# registered_envs`` works; a star import leaves it out).
__all__ = ["SUBMODULE_ENVIRONMENTS", "MultiAgentEnv", "make"]


def __getattr__(name: str) -> Any:
    # Served on access, after the registry has loaded the env families (as ``jaxmarl``'s).
    if name == "registered_envs":
        return registry.registered_envs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
