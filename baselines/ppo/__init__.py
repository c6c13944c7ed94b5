"""IPPO and MAPPO: one PPO core; MAPPO swaps the local critic for a centralised one.

``make_ppo(config)`` returns a ``Learner``; ``make_train(config)`` composes it into
``train(key) -> (final_state, metrics)`` that ``jax.vmap`` runs over seeds.
"""

from jaxmarl.algorithms import register_algorithm
from jaxmarl.baselines.ppo.config import CentralisedCritic, Critic, LocalCritic, PPOConfig
from jaxmarl.baselines.ppo.learner import PPOParts, make_ppo, make_train, ppo_optimiser, ppo_parts
from jaxmarl.baselines.ppo.loss import PPOBatch
from jaxmarl.baselines.ppo.network import build_network
from jaxmarl.training.types import TrainState

register_algorithm("ippo", PPOConfig, make_ppo, fixed=("critic=local",))
register_algorithm("mappo", PPOConfig, make_ppo, fixed=("critic=centralised",))

__all__ = [
    "CentralisedCritic",
    "Critic",
    "LocalCritic",
    "PPOBatch",
    "PPOConfig",
    "PPOParts",
    "TrainState",
    "build_network",
    "make_ppo",
    "make_train",
    "ppo_optimiser",
    "ppo_parts",
]
