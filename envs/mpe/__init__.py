"""Multi-Particle Environments (MPE): PettingZoo's ``mpe2`` scenarios, vectorised in JAX.

Build them with ``jaxmarl.make("MPE_simple_spread_v3", ...)`` or the classes below. See
``README.md`` in this folder for every scenario's observations, actions and rewards.
"""

from jaxmarl.envs.mpe._world import CONTINUOUS_ACT, DISCRETE_ACT, MPEBase, State
from jaxmarl.envs.mpe.simple import SimpleMPE
from jaxmarl.envs.mpe.simple_adversary import SimpleAdversaryMPE
from jaxmarl.envs.mpe.simple_crypto import SimpleCryptoMPE
from jaxmarl.envs.mpe.simple_facmac import (
    SimpleFacmacMPE,
    SimpleFacmacMPE3a,
    SimpleFacmacMPE6a,
    SimpleFacmacMPE9a,
)
from jaxmarl.envs.mpe.simple_push import SimplePushMPE
from jaxmarl.envs.mpe.simple_reference import SimpleReferenceMPE
from jaxmarl.envs.mpe.simple_speaker_listener import SimpleSpeakerListenerMPE
from jaxmarl.envs.mpe.simple_spread import SimpleSpreadMPE
from jaxmarl.envs.mpe.simple_tag import SimpleTagMPE
from jaxmarl.envs.mpe.simple_world_comm import SimpleWorldCommMPE

# render imports matplotlib/imageio only when called (optional ``viz`` extra).
from jaxmarl.envs.mpe.render import plot_state, render_frame, save_gif  # noqa: E402  isort: skip

__all__ = [
    "CONTINUOUS_ACT",
    "DISCRETE_ACT",
    "MPEBase",
    "SimpleAdversaryMPE",
    "SimpleCryptoMPE",
    "SimpleFacmacMPE",
    "SimpleFacmacMPE3a",
    "SimpleFacmacMPE6a",
    "SimpleFacmacMPE9a",
    "SimpleMPE",
    "SimplePushMPE",
    "SimpleReferenceMPE",
    "SimpleSpeakerListenerMPE",
    "SimpleSpreadMPE",
    "SimpleTagMPE",
    "SimpleWorldCommMPE",
    "State",
    "plot_state",
    "render_frame",
    "save_gif",
]
