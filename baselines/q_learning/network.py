"""The agents' Q-network and its mixer, built from a Q-learning config."""

from __future__ import annotations

from typing import Any

from jaxmarl.baselines.q_learning.config import QCommonConfig, TransformerNetworkConfig
from jaxmarl.networks import QHead, encoder_from_config
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.networks.transformer import (
    EntityTransformer,
    TransformerAgent,
    TransformerMixer,
    TransformerQNetwork,
)
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.wrappers.agent_batch import AgentBatch


def build_q_network(
    config: QCommonConfig, batch: AgentBatch, env: Any = None
) -> QNetwork | TransformerQNetwork:
    """Encoder -> trunk (GRU or MLP) -> Q head (``network.head_sizes`` hidden layers first,
    dueling streams with ``config.dueling``), plus the configured mixer; or, for a
    ``TransformerNetworkConfig``, TransfQMIX's agents over ``env``'s entity view (the
    ``TrainingEnv``'s wrapped env) with the configured mixer.

    Raises:
        ValueError: the env's actions are not discrete.
    """
    if not batch.discrete:
        raise ValueError(
            f"Q-learning needs discrete actions, but {config.env.env_id} has continuous ones; "
            f"use alg=ippo or alg=mappo, or the env's discrete actions where it has them "
            f"(MPE: +env.env_kwargs.action_type=Discrete, JaxNav: "
            f"+env.env_kwargs.act_type=Discrete)"
        )
    net = config.network
    if isinstance(net, TransformerNetworkConfig):
        return _transformer_network(config, batch, env)
    trunk = trunk_from_config(net)
    return QNetwork(
        encoder=encoder_from_config(net, batch.input_shape, batch.input_leaves),
        trunk=trunk,
        head=QHead(
            batch.num_actions,
            net.head_sizes,
            net.activation,
            net.head_init_gain,
            dueling=config.dueling,
            output_gain=config.q_init_gain,
        ),
        mixer=build_mixer(config),
        num_agents=batch.num_agents,
    )


def build_mixer(config: QCommonConfig):
    """The linen module of the configured mixer (``config.mixer``)."""
    return config.mixer.module()


def _transformer_network(config: QCommonConfig, batch: AgentBatch, env: Any) -> TransformerQNetwork:
    net, mixer = config.network, config.mixer
    shared = dict(width=net.width, embed_relu=net.embed_relu, attention=net.attention)
    agent_body = EntityTransformer(
        num_layers=net.num_layers,
        num_heads=net.num_heads,
        ff_dim=net.ff_dim,
        init_scale=net.init_scale,
        **shared,
    )
    if mixer.reads_agent_states:
        mixer_body = EntityTransformer(
            num_layers=mixer.num_layers,
            num_heads=mixer.num_heads,
            ff_dim=mixer.ff_dim,
            init_scale=mixer.init_scale,
            **shared,
        )
        world_shape = tuple(int(d) for d in env.entity_world_shape)
        mixer_module = TransformerMixer(world_shape, mixer_body)
    else:
        mixer_module = mixer.module()
    rows = env.action_rows() if net.entity_actions else None
    agent = TransformerAgent(batch.num_actions, agent_body)
    return TransformerQNetwork(agent, mixer_module, batch.num_agents, rows)
