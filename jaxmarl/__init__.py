"""jaxmarl: multi-agent reinforcement learning environments and learners in JAX.

>>> import jax, jaxmarl
>>> env = jaxmarl.make("MPE_simple_spread_v3")
>>> obs, state = env.reset(jax.random.key(0))
"""

from jaxmarl import _cpu_rng, spaces
from jaxmarl.env import MultiAgentEnv, State
from jaxmarl.registry import EnvSpec, make, register, registered_envs, spec

# Import for its side effect: registers every built-in env id (the modules load lazily).
from jaxmarl import _builtin_envs  # noqa: E402,F401  isort: skip

# Same random bits, fewer loop iterations on CPU (see ``jaxmarl._cpu_rng``).
_cpu_rng.apply()

__version__ = "0.1.0.dev0"

__all__ = [
    "EnvSpec",
    "MultiAgentEnv",
    "State",
    "make",
    "register",
    "registered_envs",
    "spaces",
    "spec",
]
