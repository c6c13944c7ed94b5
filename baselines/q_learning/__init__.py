"""Value-based learners: IQL, VDN, QMIX, SHAQ and TransfQMIX (replay buffer and target
network) and PQN (neither).

They share one recurrent Q-learning core, told apart by the mixer: ``acting`` (epsilon-greedy
over available actions), ``config`` (``QCommonConfig``), ``network`` (agents' Q-network and
mixer) and ``td_loss`` (``QSequence`` and the TD loss).
"""

from jaxmarl.algorithms import register_algorithm
from jaxmarl.baselines.q_learning.acting import epsilon_greedy, greedy_actions, q_policies
from jaxmarl.baselines.q_learning.config import (
    LambdaReturns,
    NStepReturns,
    QCommonConfig,
    Returns,
    TransformerNetworkConfig,
    epsilon_schedule,
    make_optimiser,
)
from jaxmarl.baselines.q_learning.learner import (
    QLearningConfig,
    QTrainState,
    TransfQMIXConfig,
    make_q_learning,
)
from jaxmarl.baselines.q_learning.network import build_mixer, build_q_network
from jaxmarl.baselines.q_learning.pqn import PQNConfig, make_pqn
from jaxmarl.baselines.q_learning.td_loss import QSequence, td_loss, truncation_slots
from jaxmarl.training.learner import make_train_from


def make_train(config: QCommonConfig):
    """``train(key) -> (final state, metrics [num_updates])`` for a ``QLearningConfig`` (IQL,
    VDN, QMIX) or a ``PQNConfig``: pure, ``vmap``-able."""
    make = make_pqn if isinstance(config, PQNConfig) else make_q_learning
    return make_train_from(make(config))


register_algorithm("iql", QLearningConfig, make_q_learning, fixed=("mixer=none",))
register_algorithm("vdn", QLearningConfig, make_q_learning, fixed=("mixer=vdn",))
register_algorithm("qmix", QLearningConfig, make_q_learning, fixed=("mixer=qmix",))
register_algorithm("shaq", QLearningConfig, make_q_learning, fixed=("mixer=shaq",))
register_algorithm("transf_qmix", TransfQMIXConfig, make_q_learning, fixed=("mixer=transformer",))
register_algorithm("pqn_vdn", PQNConfig, make_pqn, fixed=("mixer=vdn",))

__all__ = [
    "LambdaReturns",
    "NStepReturns",
    "Returns",
    "PQNConfig",
    "QCommonConfig",
    "QLearningConfig",
    "QSequence",
    "QTrainState",
    "TransfQMIXConfig",
    "TransformerNetworkConfig",
    "build_mixer",
    "build_q_network",
    "epsilon_greedy",
    "epsilon_schedule",
    "greedy_actions",
    "make_optimiser",
    "make_pqn",
    "make_q_learning",
    "make_train",
    "q_policies",
    "td_loss",
    "truncation_slots",
]
