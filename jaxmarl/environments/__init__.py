"""JaxMARL's import paths, pointing at this project's code (no second implementation).

Code written for JaxMARL 0.2.0 imports environments from ``jaxmarl.environments``::

    from jaxmarl.environments import SimpleSpreadMPE, MultiAgentEnv
    from jaxmarl.environments.smax import map_name_to_scenario
    from jaxmarl.environments.spaces import Box
    from jaxmarl.environments.mpe.simple_spread import SimpleSpreadMPE

Here the families live in ``jaxmarl.envs.<family>``. This package makes JaxMARL's paths
name the same module objects (not copies), so ``isinstance`` checks and registry lookups agree
whichever path was used:

* ``jaxmarl.environments.<family>[.<module>]`` is ``jaxmarl.envs.<family>[.<module>]`` (and
  the few families whose folder is named differently here are mapped in ``_RENAMED``);
* ``jaxmarl.environments.spaces`` is ``jaxmarl.spaces`` and
  ``jaxmarl.environments.multi_agent_env`` is ``jaxmarl.env``;
* JaxMARL's top-level names (``SimpleSpreadMPE``, ``SMAX``, ``CoinGame``, ...) load on first
  use from the family that defines them, so importing this package loads no env.

Nothing is imported eagerly: like ``import jaxmarl``, this package costs no family import.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from typing import Any

# JaxMARL module paths (after ``jaxmarl.environments.``) whose target is not the family folder
# of the same name.
_RENAMED = {
    "spaces": "jaxmarl.spaces",
    "multi_agent_env": "jaxmarl.env",
    "overcooked_v2": "jaxmarl.envs.overcooked.v2",
}
# Whole JaxMARL module paths whose module has another name here (same public classes).
_RENAMED_MODULES = {
    "mabrax.mabrax_env": "jaxmarl.envs.mabrax.mabrax",  # MABraxEnv, Ant, HalfCheetah, ...
    "mpe.mpe_visualizer": "jaxmarl.envs.mpe.render",  # MPEVisualizer
    "overcooked_v2.overcooked": "jaxmarl.envs.overcooked.v2.overcooked_v2",  # OvercookedV2
}

# JaxMARL 0.2.0's top-level names -> the module here that defines them.
_NAMES = {
    "MultiAgentEnv": "jaxmarl.env",
    "State": "jaxmarl.env",
    **{
        name: "jaxmarl.envs.mpe"
        for name in (
            "SimpleMPE",
            "SimpleAdversaryMPE",
            "SimpleCryptoMPE",
            "SimpleFacmacMPE",
            "SimpleFacmacMPE3a",
            "SimpleFacmacMPE6a",
            "SimpleFacmacMPE9a",
            "SimplePushMPE",
            "SimpleReferenceMPE",
            "SimpleSpeakerListenerMPE",
            "SimpleSpreadMPE",
            "SimpleTagMPE",
            "SimpleWorldCommMPE",
        )
    },
    "SMAX": "jaxmarl.envs.smax",
    "HeuristicEnemySMAX": "jaxmarl.envs.smax",
    "LearnedPolicyEnemySMAX": "jaxmarl.envs.smax",
    "CoinGame": "jaxmarl.envs.coin_game",
    "SwitchRiddle": "jaxmarl.envs.switch_riddle",
    "Hanabi": "jaxmarl.envs.hanabi",
    "JaxNav": "jaxmarl.envs.jaxnav",
    "Overcooked": "jaxmarl.envs.overcooked",
    "overcooked_layouts": "jaxmarl.envs.overcooked",
    "OvercookedV2": "jaxmarl.envs.overcooked.v2",
    "overcooked_v2_layouts": "jaxmarl.envs.overcooked.v2",
    "InTheGrid": "jaxmarl.envs.storm",
    "InTheGrid_2p": "jaxmarl.envs.storm",
    "InTheMatrix": "jaxmarl.envs.storm",
    **{
        name: "jaxmarl.envs.mabrax"
        for name in ("Ant", "HalfCheetah", "Hopper", "Humanoid", "Walker2d")
    },
}

# JaxMARL's flag for its jaxrobotarium submodule, which has no counterpart here.
SUBMODULE_ENVIRONMENTS = False


def target_module(jaxmarl_name: str) -> str:
    """The module here behind JaxMARL's ``jaxmarl.environments.<jaxmarl_name>`` path."""
    if jaxmarl_name in _RENAMED_MODULES:
        return _RENAMED_MODULES[jaxmarl_name]
    head, _, rest = jaxmarl_name.partition(".")
    base = _RENAMED.get(head, f"jaxmarl.envs.{head}")
    return f"{base}.{rest}" if rest else base


def __getattr__(name: str) -> Any:
    if name == "MABRAX_AVAILABLE":
        return importlib.util.find_spec("brax") is not None
    if name in _NAMES:
        module = _NAMES[name]
        try:
            value = getattr(importlib.import_module(module), name)
        except (ModuleNotFoundError, AttributeError) as error:
            raise AttributeError(
                f"jaxmarl.environments.{name} is JaxMARL's name for an env of {module!r}, "
                f"which this installation cannot load ({error}); see jaxmarl.registered_envs "
                f"for the envs that exist here"
            ) from error
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, "MABRAX_AVAILABLE"})


__all__ = sorted({*_NAMES, "MABRAX_AVAILABLE", "SUBMODULE_ENVIRONMENTS"})


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by importing its target and handing back that very module object."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return importlib.import_module(self.target)

    def exec_module(self, module: Any) -> None:
        # The target ran its own code when it was imported; nothing more to do.
        return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Resolves ``jaxmarl.environments.<path>`` to the module ``target_module(path)``."""

    prefix = __name__ + "."

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if not fullname.startswith(self.prefix):
            return None
        module = target_module(fullname[len(self.prefix) :])
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            found = None
        if found is None:
            return None  # the usual ModuleNotFoundError, naming JaxMARL's path
        return importlib.machinery.ModuleSpec(
            fullname, _AliasLoader(module), is_package=found.submodule_search_locations is not None
        )


if not any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
    sys.meta_path.insert(0, _AliasFinder())
