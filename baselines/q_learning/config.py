"""Hyperparameters every Q learner shares, the exploration schedule and the optimiser."""

from __future__ import annotations

import dataclasses

import optax

from jaxmarl.networks.mixers import MIXERS, TEAM_REWARDS
from jaxmarl.training.config import (
    EnvConfig,
    NetworkConfig,
    RolloutUpdates,
    RunConfig,
    require,
    require_positive,
)
from jaxmarl.training.sgd import learning_rate

RETURNS = ("n_step", "lambda")
OPTIMISERS = ("adam", "radam")


def q_network_defaults() -> NetworkConfig:
    """JaxMARL's Q-learning agent: ReLU dense 64 -> GRU 64 -> Q head, one-hot agent ids, the
    dense layer initialised orthogonally with gain 1 (not the sqrt(2) of the PPO bodies)."""
    return NetworkConfig(
        encoder_sizes=(),
        embed_dim=64,
        encoder_init_gain=1.0,
        trunk="gru",
        gru_size=64,
        activation="relu",
        agent_id=True,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class QCommonConfig(RolloutUpdates):
    """Hyperparameters shared by every Q learner (see ``baselines/q_learning.py``, ``pqn.py``).

    Attributes:
        env, network, run: shared sections (``jaxmarl.training.config``).
        mixer: ``"none"`` (IQL), ``"vdn"`` or ``"qmix"``.
        mixer_embed_dim, mixer_hypernet_hidden_dim, mixer_init_scale: QMIX mixing network.
        num_steps: rollout length ``T`` per update (also the stored sequence length).
        lr: learning rate; ``anneal_lr`` decays it linearly to 0 over training.
        optimiser: ``"radam"`` (JaxMARL's choice) or ``"adam"``.
        max_grad_norm: global gradient-norm clip.
        gamma: discount.
        returns: ``"n_step"`` (with ``n_step``) or ``"lambda"`` (TD(lambda), ``td_lambda``).
        eps_start, eps_finish: epsilon-greedy exploration, linear from start to finish ...
        eps_decay: ... over this fraction of the updates, then constant.
        reward_scale: rewards are multiplied by this in the TD targets (JaxMARL's SMAX configs
            use 10, "the original scale of SMAC"); logged returns stay unscaled.
        team_reward: how VDN and QMIX make the team reward they regress from the agents'
            rewards: ``"sum"`` (MPE, where each agent's reward differs) or ``"mean"`` (envs
            with one shared reward per step, such as SMAX, where a sum would count it once per
            agent). IQL learns each agent's own reward either way.
        bootstrap_truncation: value time-limited episodes' real last observation instead of
            counting the time limit as a termination (see the module docstring).
    """

    env: EnvConfig = dataclasses.field(default_factory=lambda: EnvConfig(num_envs=8))
    network: NetworkConfig = dataclasses.field(default_factory=q_network_defaults)
    run: RunConfig = dataclasses.field(default_factory=lambda: RunConfig(total_timesteps=2_000_000))
    mixer: str = "qmix"
    mixer_embed_dim: int = 32
    mixer_hypernet_hidden_dim: int = 128
    mixer_init_scale: float = 1e-3
    num_steps: int = 25
    lr: float = 5e-3
    anneal_lr: bool = True
    optimiser: str = "radam"
    max_grad_norm: float = 25.0
    gamma: float = 0.9
    returns: str = "n_step"
    n_step: int = 1
    td_lambda: float = 0.9
    eps_start: float = 1.0
    eps_finish: float = 0.05
    eps_decay: float = 0.1
    reward_scale: float = 1.0
    team_reward: str = "sum"
    bootstrap_truncation: bool = True

    def __post_init__(self):
        require(self.mixer in MIXERS, f"mixer must be one of {MIXERS}, got {self.mixer!r}")
        require(self.returns in RETURNS, f"returns must be one of {RETURNS}, got {self.returns!r}")
        require(
            self.team_reward in TEAM_REWARDS,
            f"team_reward must be one of {TEAM_REWARDS}, got {self.team_reward!r}",
        )
        require(
            self.optimiser in OPTIMISERS,
            f"optimiser must be one of {OPTIMISERS}, got {self.optimiser!r}",
        )
        require_positive(
            "q_learning",
            num_steps=self.num_steps,
            lr=self.lr,
            max_grad_norm=self.max_grad_norm,
            n_step=self.n_step,
            mixer_embed_dim=self.mixer_embed_dim,
            mixer_hypernet_hidden_dim=self.mixer_hypernet_hidden_dim,
            mixer_init_scale=self.mixer_init_scale,
            reward_scale=self.reward_scale,
        )
        require(0.0 < self.gamma <= 1.0, f"gamma must be in (0, 1], got {self.gamma}")
        require(0.0 <= self.td_lambda <= 1.0, f"td_lambda must be in [0, 1], got {self.td_lambda}")
        require(
            self.n_step <= self.num_steps,
            f"n_step={self.n_step} is longer than the stored sequences (num_steps="
            f"{self.num_steps}); choose n_step <= num_steps",
        )
        for name in ("eps_start", "eps_finish"):
            value = getattr(self, name)
            require(0.0 <= value <= 1.0, f"{name} must be in [0, 1], got {value}")
        require(0.0 < self.eps_decay <= 1.0, f"eps_decay must be in (0, 1], got {self.eps_decay}")


def epsilon_schedule(config: QCommonConfig, num_updates: int) -> optax.Schedule:
    """``update -> epsilon``: linear over ``eps_decay * num_updates`` updates, then flat."""
    return optax.linear_schedule(
        config.eps_start, config.eps_finish, max(1, int(config.eps_decay * num_updates))
    )


def make_optimiser(config: QCommonConfig, optimiser_steps: int) -> optax.GradientTransformation:
    """Gradient clipping then (R)Adam, with the learning rate annealed to 0 if asked."""
    lr = learning_rate(config.lr, config.anneal_lr, optimiser_steps)
    step = optax.radam(lr) if config.optimiser == "radam" else optax.adam(lr)
    return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), step)
