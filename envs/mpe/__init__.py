"""Multi-Particle Environments (MPE): PettingZoo's ``mpe2`` scenarios, vectorised in JAX.

Build them with ``jaxmarl.make("MPE_simple_spread_v3", ...)`` or the classes below. See
``README.md`` in this folder for every scenario's observations, actions and rewards.
"""

from jaxmarl.envs.mpe._world import CONTINUOUS_ACT, DISCRETE_ACT, MPEBase, State
from jaxmarl.envs.mpe.simple import SimpleMPE
from jaxmarl.envs.mpe.simple_spread import SimpleSpreadMPE

__all__ = [
    "CONTINUOUS_ACT",
    "DISCRETE_ACT",
    "MPEBase",
    "SimpleMPE",
    "SimpleSpreadMPE",
    "State",
]
