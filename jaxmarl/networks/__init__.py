"""Networks: encoders (perception), decision trunks (shared layers), heads, mixers."""

from jaxmarl.networks.actor_critic import ActorCritic
from jaxmarl.networks.encoders import CNNEncoder, DictEncoder, MLPEncoder, encoder_from_config
from jaxmarl.networks.heads import CategoricalHead, GaussianHead, QHead, ValueHead, masked_logits
from jaxmarl.networks.mixers import (
    MixerConfig,
    NoMixer,
    NoMixerConfig,
    QMixer,
    QMIXMixerConfig,
    ShapleyAlpha,
    SHAQMixer,
    SHAQMixerConfig,
    TransformerMixerConfig,
    VDNMixer,
    VDNMixerConfig,
)
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.networks.transformer import TransformerAgent, TransformerMixer, TransformerQNetwork
from jaxmarl.networks.trunks import GRUTrunk, MLPTrunk, initial_carry

__all__ = [
    "ActorCritic",
    "CNNEncoder",
    "DictEncoder",
    "CategoricalHead",
    "GRUTrunk",
    "GaussianHead",
    "MLPEncoder",
    "MLPTrunk",
    "MixerConfig",
    "NoMixer",
    "NoMixerConfig",
    "QMIXMixerConfig",
    "QMixer",
    "QNetwork",
    "QHead",
    "SHAQMixer",
    "SHAQMixerConfig",
    "ShapleyAlpha",
    "TransformerAgent",
    "TransformerMixer",
    "TransformerMixerConfig",
    "TransformerQNetwork",
    "VDNMixer",
    "VDNMixerConfig",
    "ValueHead",
    "encoder_from_config",
    "initial_carry",
    "masked_logits",
]
