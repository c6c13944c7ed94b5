"""The PPO actor-critic, built from the network config."""

from __future__ import annotations

from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.networks import (
    ActorCritic,
    CategoricalHead,
    GaussianHead,
    ValueHead,
    encoder_from_config,
)
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.wrappers import AgentBatch


def build_network(config: PPOConfig, batch: AgentBatch) -> ActorCritic:
    """Actor and critic towers from the network config (same shapes for both)."""
    net = config.network

    def encoder():
        return encoder_from_config(net, batch.input_shape)

    head = CategoricalHead if batch.discrete else GaussianHead
    return ActorCritic(
        encoder=encoder(),
        trunk=trunk_from_config(net),
        policy_head=head(batch.num_actions),
        critic_encoder=encoder(),
        critic_trunk=trunk_from_config(net),
        value_head=ValueHead(),
    )
