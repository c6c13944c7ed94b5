"""Multi-Particle Environments (MPE): PettingZoo's ``mpe2`` scenarios, vectorised in JAX.

Build them with ``jaxmarl.make("MPE_simple_spread_v3", ...)`` or the classes below. See
``README.md`` in this folder for every scenario's observations, actions and rewards.

Importing this package registers the family's ids and loads no env module: each public name
below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's ids, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {
        "MPE_simple_v3": "simple:SimpleMPE",
        "MPE_simple_tag_v3": "simple_tag:SimpleTagMPE",
        "MPE_simple_world_comm_v3": "simple_world_comm:SimpleWorldCommMPE",
        "MPE_simple_spread_v3": "simple_spread:SimpleSpreadMPE",
        "MPE_simple_crypto_v3": "simple_crypto:SimpleCryptoMPE",
        "MPE_simple_speaker_listener_v4": "simple_speaker_listener:SimpleSpeakerListenerMPE",
        "MPE_simple_push_v3": "simple_push:SimplePushMPE",
        "MPE_simple_adversary_v3": "simple_adversary:SimpleAdversaryMPE",
        "MPE_simple_reference_v3": "simple_reference:SimpleReferenceMPE",
        "MPE_simple_facmac_v1": "simple_facmac:SimpleFacmacMPE",
        "MPE_simple_facmac_3a_v1": "simple_facmac:SimpleFacmacMPE3a",
        "MPE_simple_facmac_6a_v1": "simple_facmac:SimpleFacmacMPE6a",
        "MPE_simple_facmac_9a_v1": "simple_facmac:SimpleFacmacMPE9a",
    },
)

_EXPORTS = {
    "CONTINUOUS_ACT": "_world",
    "DISCRETE_ACT": "_world",
    "MPEBase": "_world",
    "State": "_world",
    "SimpleMPE": "simple",
    "SimpleAdversaryMPE": "simple_adversary",
    "SimpleCryptoMPE": "simple_crypto",
    "SimpleFacmacMPE": "simple_facmac",
    "SimpleFacmacMPE3a": "simple_facmac",
    "SimpleFacmacMPE6a": "simple_facmac",
    "SimpleFacmacMPE9a": "simple_facmac",
    "SimplePushMPE": "simple_push",
    "SimpleReferenceMPE": "simple_reference",
    "SimpleSpeakerListenerMPE": "simple_speaker_listener",
    "SimpleSpreadMPE": "simple_spread",
    "SimpleTagMPE": "simple_tag",
    "SimpleWorldCommMPE": "simple_world_comm",
    # render imports matplotlib/imageio only when called (optional ``viz`` extra).
    "MPEVisualizer": "render",
    "plot_state": "render",
    "render_frame": "render",
    "save_gif": "render",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
