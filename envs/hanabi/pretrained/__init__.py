"""Pretrained Hanabi agents: OBL's R2D2 network for JaxMARL's published weights
(``OBLAgentR2D2``; also at JaxMARL's path ``jaxmarl.environments.hanabi.pretrained``)."""

from .obl_r2d2_agent import OBLAgentR2D2

__all__ = ["OBLAgentR2D2"]
