"""Hanabi: the cooperative card game, exact to DeepMind's Hanabi Learning Environment (JaxMARL's
``hanabi``).

``jaxmarl.make("hanabi", num_agents=2..5, card_knowledge="v0_belief" | "hle_bits")``; see
``README.md`` in this folder for the rules, observation, actions and the deviations from
JaxMARL 0.2.0.

Importing this package registers the family's id and loads no env module (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import PartnerFlag, register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {"hanabi": "hanabi:HanabiEnv"},
    evaluate_flags=[
        PartnerFlag(
            "--obl-partner",
            env_id="hanabi",
            metavar="WEIGHTS",
            help="with --cross-play on 2-player Hanabi: the columns are OBL's pretrained "
            "agents, from JaxMARL's obl-r2d2-flax weight files (*.safetensors) or folders "
            "holding them",
            target="pretrained.partner:obl_partner_of_run",
        )
    ],
)

_EXPORTS = {
    "CARD_KNOWLEDGE_MODES": "hanabi",
    "NO_CARD": "hanabi",
    "Hanabi": "hanabi",
    "HanabiEnv": "hanabi",
    "HanabiState": "hanabi",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
