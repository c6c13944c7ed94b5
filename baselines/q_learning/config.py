"""Hyperparameters every Q learner shares, the exploration schedule and the optimiser."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import jax
import optax

from jaxmarl.networks.mixers import (
    TEAM_REWARDS,
    MixerConfig,
    NoMixerConfig,
    QMIXMixerConfig,
    SHAQMixerConfig,
    TransformerMixerConfig,
    VDNMixerConfig,
)
from jaxmarl.training import targets
from jaxmarl.training.config import (
    EnvConfig,
    GRUTrunkConfig,
    NetworkConfig,
    RolloutUpdates,
    RunConfig,
    require,
    require_positive,
)
from jaxmarl.training.sgd import learning_rate
from jaxmarl.training.sweep import sweepable_optimiser

OPTIMISERS = ("adam", "radam")
MIXERS = (
    NoMixerConfig,
    VDNMixerConfig,
    QMIXMixerConfig,
    SHAQMixerConfig,
    TransformerMixerConfig,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class NStepReturns:
    """n-step TD targets (``returns=n_step``, ``returns.n=3``); ``n=1`` is one-step Q-learning.

    Attributes:
        n: steps before bootstrapping (at most the stored sequence length ``num_steps``).
    """

    kind: ClassVar[str] = "n_step"
    n: int = 1

    def __post_init__(self):
        require(self.n >= 1, f"returns.n must be >= 1, got {self.n}")

    def targets(self, reward, next_value, terminated, done, gamma: float) -> jax.Array:
        """``[T, ...]`` targets (``jaxmarl.training.targets.n_step_returns``)."""
        return targets.n_step_returns(reward, next_value, terminated, done, gamma, self.n)


@dataclasses.dataclass(frozen=True, kw_only=True)
class LambdaReturns:
    """TD(lambda) targets (``returns=lambda``, ``returns.td_lambda=0.7``).

    Attributes:
        td_lambda: in [0, 1]; 0 is the one-step target, 1 the return bootstrapped at the end of
            the sequence.
    """

    kind: ClassVar[str] = "lambda"
    td_lambda: float = 0.9

    def __post_init__(self):
        require(
            0.0 <= self.td_lambda <= 1.0,
            f"returns.td_lambda must be in [0, 1], got {self.td_lambda}",
        )

    def targets(self, reward, next_value, terminated, done, gamma: float) -> jax.Array:
        """``[T, ...]`` targets (``jaxmarl.training.targets.lambda_returns``)."""
        return targets.lambda_returns(reward, next_value, terminated, done, gamma, self.td_lambda)


Returns = NStepReturns | LambdaReturns


def q_network_defaults() -> NetworkConfig:
    """JaxMARL's Q-learning agent: ReLU dense 64 -> GRU 64 -> Q head, one-hot agent ids, the
    dense layer initialised orthogonally with gain 1 (not the sqrt(2) of the PPO bodies)."""
    return NetworkConfig(
        encoder_sizes=(),
        embed_dim=64,
        encoder_init_gain=1.0,
        trunk=GRUTrunkConfig(size=64),
        activation="relu",
        agent_id=True,
    )


ATTENTIONS = ("linear", "softmax")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TransformerNetworkConfig:
    """TransfQMIX's agents (``jaxmarl.networks.transformer.TransformerAgent``): a transformer
    over the env's entity observations with a recurrent hidden token (``network`` of
    ``alg=transf_qmix``; defaults are JaxMARL's ``transf_qmix_*.yaml``).

    Attributes:
        width: token width, shared with the transformer mixer (``AGENT_HIDDEN_DIM``).
        num_layers, num_heads, ff_dim: encoder blocks, attention heads (dividing ``width``)
            and the blocks' MLP width (``AGENT_TRANSF_NUM_LAYERS``, ``_NUM_HEADS``,
            ``_DIM_FF``).
        init_scale: orthogonal gain of the embedding and Q layers (``AGENT_INIT_SCALE``).
        embed_relu: ReLU after the embedding layers, the mixer's too (``EMBEDDER_USE_RELU``).
        attention: ``"linear"`` (JaxMARL's ``USE_FAST_ATTENTION``, the relu-kernel linear
            attention) or ``"softmax"`` (scaled dot-product, empty entity rows masked).
        entity_actions: read the Q-value of an action the env ties to an entity (SMAX's
            attacks) from that entity's token (TransfQMix's policy decoupling); off: every
            Q-value from the agent's own token.
    """

    agent_id: ClassVar[bool] = False  # the is-self row flag tells agents apart
    width: int = 32
    num_layers: int = 2
    num_heads: int = 8
    ff_dim: int = 128
    init_scale: float = 1.0
    embed_relu: bool = False
    attention: str = "linear"
    entity_actions: bool = True

    def __post_init__(self):
        require_positive(
            "network",
            width=self.width,
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            ff_dim=self.ff_dim,
            init_scale=self.init_scale,
        )
        require(
            self.width % self.num_heads == 0,
            f"network.num_heads={self.num_heads} must divide network.width={self.width}",
        )
        require(
            self.attention in ATTENTIONS,
            f"network.attention must be one of {ATTENTIONS}, got {self.attention!r}",
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class QCommonConfig(RolloutUpdates):
    """Hyperparameters shared by every Q learner (see ``baselines/q_learning.py``, ``pqn.py``).

    Attributes:
        env, network, run: shared sections (``jaxmarl.training.config``).
        mixer: ``NoMixerConfig`` (IQL, ``mixer=none``), ``VDNMixerConfig`` (``mixer=vdn``),
            ``QMIXMixerConfig`` (``mixer=qmix``, with ``mixer.embed_dim``,
            ``mixer.hypernet_hidden_dim``, ``mixer.init_scale``) or ``SHAQMixerConfig``
            (``mixer=shaq``; its ``mixer.lr`` gives the mixer its own optimiser).
        num_steps: rollout length ``T`` per update (also the stored sequence length).
        lr: learning rate; ``anneal_lr`` decays it linearly to 0 over training.
        optimiser: ``"radam"`` (JaxMARL's choice) or ``"adam"``.
        adam_eps: the optimiser's epsilon (JaxMARL's SHAQ uses 1e-3 on MPE).
        weight_decay: decoupled weight decay (AdamW; needs ``optimiser=adam``); 0 = none.
        max_grad_norm: global gradient-norm clip.
        gamma: discount.
        returns: ``NStepReturns`` (``returns=n_step``, ``returns.n``) or ``LambdaReturns``
            (TD(lambda): ``returns=lambda``, ``returns.td_lambda``).
        eps_start, eps_finish: epsilon-greedy exploration, linear from start to finish ...
        eps_decay: ... over this fraction of the updates, then constant.
        reward_scale: rewards are multiplied by this in the TD targets (JaxMARL's SMAX configs
            use 10, "the original scale of SMAC"); logged returns stay unscaled.
        team_reward: how VDN and QMIX (``mixer.team_reward``) make the team reward they regress
            from the agents' rewards: ``"sum"`` (MPE, where each agent's reward differs) or
            ``"mean"`` (envs with one shared reward per step, such as SMAX, where a sum would
            count it once per agent). IQL learns each agent's own reward either way. A field of
            the config, not of the mixer: it describes the env's rewards, and ``alg=vdn`` over a
            QMIX preset must keep it.
        bootstrap_truncation: value time-limited episodes' real last observation instead of
            counting the time limit as a termination (see the module docstring).
        dueling: a dueling Q head (``QHead``): after ``network.head_sizes``, a value stream
            and an advantage stream of one dense layer each, ``Q = V + A - mean(A)``
            (JaxMARL's PQN ``DUELING``, on in its Hanabi config). A field of the Q learners'
            config, not of ``network``: only Q heads have one, and the actor-critic learners
            share ``NetworkConfig``.
        q_init_gain: orthogonal gain of the Q layer (JaxMARL's SHAQ initialises it, and the
            embedding, with ``AGENT_INIT_SCALE`` = 2 on MPE).
    """

    env: EnvConfig = dataclasses.field(default_factory=lambda: EnvConfig(num_envs=8))
    network: NetworkConfig = dataclasses.field(default_factory=q_network_defaults)
    run: RunConfig = dataclasses.field(default_factory=lambda: RunConfig(total_timesteps=2_000_000))
    mixer: MixerConfig = QMIXMixerConfig()
    num_steps: int = 25
    lr: float = 5e-3
    anneal_lr: bool = True
    optimiser: str = "radam"
    adam_eps: float = 1e-8
    weight_decay: float = 0.0
    max_grad_norm: float = 25.0
    gamma: float = 0.9
    returns: Returns = NStepReturns()
    eps_start: float = 1.0
    eps_finish: float = 0.05
    eps_decay: float = 0.1
    reward_scale: float = 1.0
    team_reward: str = "sum"
    bootstrap_truncation: bool = True
    dueling: bool = False
    q_init_gain: float = 1.0

    def __post_init__(self):
        require(
            isinstance(self.dueling, bool),
            f"dueling must be true or false (a dueling Q head or a plain one), got "
            f"{self.dueling!r}",
        )
        require(
            isinstance(self.mixer, MIXERS),
            f"mixer must be one of {[m.__name__ for m in MIXERS]}, got {self.mixer!r}",
        )
        require(
            not self.mixer.reads_agent_states or isinstance(self.network, TransformerNetworkConfig),
            f"mixer={self.mixer.kind} mixes the hidden tokens of transformer agents; use "
            f"alg=transf_qmix, or another mixer",
        )
        require(
            isinstance(self.returns, NStepReturns | LambdaReturns),
            f"returns must be an NStepReturns or a LambdaReturns, got {self.returns!r}",
        )
        require(
            self.team_reward in TEAM_REWARDS,
            f"team_reward must be one of {TEAM_REWARDS}, got {self.team_reward!r}",
        )
        require(
            self.optimiser in OPTIMISERS,
            f"optimiser must be one of {OPTIMISERS}, got {self.optimiser!r}",
        )
        require(
            self.weight_decay == 0.0 or self.optimiser == "adam",
            f"weight_decay={self.weight_decay} is decoupled weight decay (AdamW), which needs "
            f"optimiser=adam (got {self.optimiser!r}); set optimiser=adam or weight_decay=0",
        )
        require(self.weight_decay >= 0.0, f"weight_decay must be >= 0, got {self.weight_decay}")
        require_positive(
            "q_learning",
            num_steps=self.num_steps,
            adam_eps=self.adam_eps,
            q_init_gain=self.q_init_gain,
            lr=self.lr,
            max_grad_norm=self.max_grad_norm,
            reward_scale=self.reward_scale,
        )
        require(0.0 < self.gamma <= 1.0, f"gamma must be in (0, 1], got {self.gamma}")
        require(
            not isinstance(self.returns, NStepReturns) or self.returns.n <= self.num_steps,
            f"returns.n={getattr(self.returns, 'n', None)} is longer than the stored sequences "
            f"(num_steps={self.num_steps}); choose returns.n <= num_steps",
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
    """Gradient clipping then (R)Adam (AdamW with ``weight_decay``), with the learning rate
    annealed to 0 if asked (held in the optimiser state with ``run.sweep.lr``:
    ``sweepable_optimiser``). A mixer with its own ``lr`` (SHAQ's ``mixer.lr``) gets its own
    clipping and optimiser, as in JaxMARL's SHAQ, which trains it with a second one."""

    def one(lr: float) -> optax.GradientTransformation:
        rate = learning_rate(lr, config.anneal_lr, optimiser_steps)
        if config.optimiser == "radam":
            step = optax.radam(rate, eps=config.adam_eps)
        elif config.weight_decay:
            step = optax.adamw(rate, eps=config.adam_eps, weight_decay=config.weight_decay)
        else:
            step = optax.adam(rate, eps=config.adam_eps)
        return optax.chain(optax.clip_by_global_norm(config.max_grad_norm), step)

    def build(lr: float) -> optax.GradientTransformation:
        if config.mixer.lr is None:
            return one(lr)
        labels = lambda params: {name: "mixer" if name == "mixer" else "agents" for name in params}
        return optax.multi_transform({"agents": one(lr), "mixer": one(config.mixer.lr)}, labels)

    return sweepable_optimiser(build, config.run.sweep.names, lr=config.lr)
