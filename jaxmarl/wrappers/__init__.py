"""Wrappers and the agent-batching utility shared by every learner."""

from jaxmarl.wrappers.agent_batch import AgentBatch
from jaxmarl.wrappers.base import Wrapper
from jaxmarl.wrappers.log import LogEnvState, LogWrapper
from jaxmarl.wrappers.vec import VecEnv

__all__ = ["AgentBatch", "LogEnvState", "LogWrapper", "VecEnv", "Wrapper"]
