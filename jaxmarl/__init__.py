"""jaxmarl: multi-agent reinforcement learning environments and learners in JAX.

>>> import jax, jaxmarl
>>> env = jaxmarl.make("MPE_simple_spread_v3")
>>> obs, state = env.reset(jax.random.key(0))
>>> config = jaxmarl.preset_config("ippo", "overcooked")  # what the train command would run

Importing jaxmarl loads no env family and changes no JAX setting: the registry imports the
families' light package ``__init__``s the first time it is consulted, and
``use_fast_cpu_rng`` (which the train command calls) is opt-in.
"""

from typing import Any

from jaxmarl import registry, spaces
from jaxmarl.algorithms import preset_config
from jaxmarl.cpu_rng import use_fast_cpu_rng
from jaxmarl.env import MultiAgentEnv, State
from jaxmarl.registry import EnvSpec, make, register, spec

__version__ = "0.1.0.dev0"

__all__ = [
    "EnvSpec",
    "MultiAgentEnv",
    "State",
    "make",
    "preset_config",
    "register",
    "registered_envs",
    "spaces",
    "spec",
    "use_fast_cpu_rng",
]


def __getattr__(name: str) -> Any:
    # ``registered_envs`` is served on access, after the registry has loaded the env families.
    if name == "registered_envs":
        return registry.registered_envs
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
