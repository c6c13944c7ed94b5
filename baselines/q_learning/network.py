"""The agents' Q-network and its mixer, built from a Q-learning config."""

from __future__ import annotations

from jaxmarl.baselines.q_learning.config import QCommonConfig
from jaxmarl.networks import QHead, encoder_from_config
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.wrappers.agent_batch import AgentBatch


def build_q_network(config: QCommonConfig, batch: AgentBatch) -> QNetwork:
    """Encoder -> trunk (GRU or MLP) -> Q head (``network.head_sizes`` hidden layers first,
    dueling streams with ``config.dueling``), plus the configured mixer.

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
