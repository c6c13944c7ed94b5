"""Pretrained Hanabi agents: OBL's R2D2 network for JaxMARL's published OBL weights
(``OBLAgentR2D2``, also at JaxMARL's path ``jaxmarl.environments.hanabi.pretrained``), and
those agents as cross-play partners of a trained run (``obl_partner``). Both load on first use.
"""

from jaxmarl._lazy import lazy_exports

_EXPORTS = {"OBLAgentR2D2": "obl_r2d2_agent", "obl_partner": "partner"}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
