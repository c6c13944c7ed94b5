"""PPO's config: IPPO (local critic) or MAPPO (centralised critic)."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

from jaxmarl.training.config import (
    EnvConfig,
    NetworkConfig,
    RolloutUpdates,
    RunConfig,
    require,
    require_positive,
)
from jaxmarl.training.data_parallel import check_data_split
from jaxmarl.training.sgd import LR_DECAYS


@dataclasses.dataclass(frozen=True, kw_only=True)
class LocalCritic:
    """IPPO's critic (``critic=local``): each agent's value from its own observation.

    Attributes:
        shares_encoder: the critic reads the actor's embedding (``critic.shares_encoder=true``:
            one encoder, trained by both losses and computed once, as JaxMARL's Hanabi IPPO)
            instead of embedding the observation with an encoder of its own.
        shares_trunk: the critic also reads the actor's trunk output, recurrent state included
            (``critic.shares_trunk=true``, with ``shares_encoder``): only the value head is its
            own, as JaxMARL's Hanabi IPPO-RNN, whose heads each have a hidden layer
            (``network.head_sizes``).
    """

    kind: ClassVar[str] = "local"
    centralised: ClassVar[bool] = False
    one_per_env: ClassVar[bool] = False
    shares_encoder: bool = False
    shares_trunk: bool = False

    def __post_init__(self):
        require(
            self.shares_encoder or not self.shares_trunk,
            "critic.shares_trunk=true reads the actor's trunk, which reads the actor's encoder; "
            "set critic.shares_encoder=true as well",
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class CentralisedCritic:
    """MAPPO's critic (``critic=centralised``): values from the env's world state.

    Attributes:
        agent_id: append a one-hot agent id to the world state (``critic.agent_id=false``
            leaves it out: one value per env, computed once per env instead of once per agent).
    """

    kind: ClassVar[str] = "centralised"
    centralised: ClassVar[bool] = True
    shares_encoder: ClassVar[bool] = False  # the world state is not what the actor embeds
    shares_trunk: ClassVar[bool] = False
    agent_id: bool = True

    @property
    def one_per_env(self) -> bool:
        """One critic evaluation per env, shared by its agents (the world state alone)."""
        return not self.agent_id


Critic = LocalCritic | CentralisedCritic


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClipToBounds:
    """Continuous actions (``action_bounds=clip``): the Gaussian policy's samples go to the env
    as they are and the env clips them to its bounds (JaxMARL's MABrax and MPE). The policy is
    then not told that its samples beyond a bound act alike."""

    kind: ClassVar[str] = "clip"


@dataclasses.dataclass(frozen=True, kw_only=True)
class TanhToBounds:
    """Continuous actions (``action_bounds=tanh``): the env gets ``tanh`` of the Gaussian sample,
    scaled to the action space's bounds (brax's and Mava's PPO), so every action is inside them.

    The rollout stores the sample before the squashing, and the ratio of new to old
    probabilities is the Gaussian's (the squashing's Jacobian is the same in both and cancels).
    The entropy bonus is the squashed distribution's, estimated at the stored sample
    (``ppo.loss.squashed_entropy``): a wider Gaussian, whose squashed samples pile up at the
    bounds, does not count as more random. Needs finite bounds.
    """

    kind: ClassVar[str] = "tanh"


ActionBounds = ClipToBounds | TanhToBounds


@dataclasses.dataclass(frozen=True, kw_only=True)
class PPOConfig(RolloutUpdates):
    """IPPO (``critic=LocalCritic()``) or MAPPO (``critic=CentralisedCritic()``).

    Attributes:
        env, network, run: shared sections (``jaxmarl.training.config``).
        critic: ``LocalCritic`` (``critic=local``) reads each agent's observation;
            ``CentralisedCritic`` (``critic=centralised``) reads the env's world state plus
            (``critic.agent_id``) a one-hot agent id.
        num_steps: rollout length ``T`` per update.
        lr: Adam learning rate; ``anneal_lr`` decays it to 0 over training (after the warmup).
        lr_warmup: the fraction of updates (JaxMARL's ``LR_WARMUP``) during which the rate
            first rises linearly from 0 to ``lr``, counted in whole updates
            (``int(lr_warmup * num_updates)``, as JaxMARL); the decay spans the rest. 0: none.
            Without ``anneal_lr`` the rate stays at ``lr`` after the warmup.
        lr_decay: the shape of ``anneal_lr``'s decay, ``"linear"`` or ``"cosine"`` (JaxMARL's
            ``ippo_rnn_overcooked_v2`` decays along a cosine after its warmup).
        gamma, gae_lambda: discount and GAE lambda.
        clip_eps: PPO ratio clip; also the value clip when ``clip_value``.
        ent_coef, vf_coef: entropy bonus and value-loss weights.
        max_grad_norm: global gradient-norm clip.
        separate_grad_clip: clip the actor's and the critic's gradients to ``max_grad_norm``
            each, as JaxMARL's MAPPO scripts do by training them with two optimisers. False
            clips their joint norm (one optimiser, as JaxMARL's IPPO), so a large value-loss
            gradient also shrinks the policy's step. Adam itself is per parameter either way.
        update_epochs: passes over each rollout.
        num_minibatches: minibatches per epoch (over envs x agents; sequences stay whole
            for recurrent networks).
        normalize_advantages: per-minibatch advantage normalisation.
        normalize_obs: standardise what the actor and the critic read (observations; a
            centralised critic's world state with statistics of its own) by the running mean
            and variance of every rollout so far, clipped to 10 standard deviations
            (``jaxmarl.networks.input_norm``). The statistics are part of the parameters
            (``params["input_norm"]``, one set per agent with ``share_parameters=false``) and
            are updated from each rollout before its gradient steps, as brax's PPO does.
        bootstrap_truncation: value truncated episodes' last observation (see module doc).
        share_parameters: one actor and one critic for every agent (True), or one of each per
            agent (``share_parameters=false``: independent learners, the parameter sets
            stacked on a leading agent axis and applied with ``jax.vmap``). Independent
            parameters need a critic evaluated per agent (not ``critic.agent_id=false``).
        action_bounds: how a Gaussian policy's samples meet the action bounds:
            ``ClipToBounds`` (``action_bounds=clip``, the env clips them) or ``TanhToBounds``
            (``action_bounds=tanh``, squashed into them). Discrete policies have none.
        init_log_std: the Gaussian policy's initial log standard deviation (continuous action
            spaces; a learned parameter per action dimension, independent of the state).
            -0.5 by default; 0 is JaxMARL's and the JaxNav paper's. Discrete policies have none.
    """

    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    run: RunConfig = dataclasses.field(default_factory=RunConfig)
    critic: Critic = LocalCritic()
    num_steps: int = 128
    lr: float = 2.5e-4
    anneal_lr: bool = True
    lr_warmup: float = 0.0
    lr_decay: str = "linear"
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    clip_value: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    separate_grad_clip: bool = False
    update_epochs: int = 4
    num_minibatches: int = 4
    normalize_advantages: bool = True
    normalize_obs: bool = False
    bootstrap_truncation: bool = True
    share_parameters: bool = True
    init_log_std: float = -0.5
    action_bounds: ActionBounds = ClipToBounds()

    def __post_init__(self):
        require(
            isinstance(self.critic, LocalCritic | CentralisedCritic),
            f"critic must be a LocalCritic or a CentralisedCritic, got {self.critic!r}",
        )
        require_positive(
            "ppo",
            num_steps=self.num_steps,
            lr=self.lr,
            update_epochs=self.update_epochs,
            num_minibatches=self.num_minibatches,
            max_grad_norm=self.max_grad_norm,
        )
        require(
            0.0 <= self.lr_warmup < 1.0,
            f"lr_warmup is a fraction of the updates in [0, 1), got {self.lr_warmup}",
        )
        require(
            self.lr_decay in LR_DECAYS,
            f"lr_decay must be one of {LR_DECAYS}, got {self.lr_decay!r}",
        )
        require(0.0 < self.gamma <= 1.0, f"gamma must be in (0, 1], got {self.gamma}")
        require(
            0.0 <= self.gae_lambda <= 1.0, f"gae_lambda must be in [0, 1], got {self.gae_lambda}"
        )
        require(self.clip_eps > 0, f"clip_eps must be > 0, got {self.clip_eps}")
        require(self.ent_coef >= 0 and self.vf_coef >= 0, "ent_coef and vf_coef must be >= 0")
        require(
            isinstance(self.action_bounds, ClipToBounds | TanhToBounds),
            f"action_bounds must be a ClipToBounds or a TanhToBounds, got {self.action_bounds!r}",
        )
        require(
            math.isfinite(self.init_log_std),
            f"init_log_std must be a finite number, got {self.init_log_std}",
        )
        require(
            self.share_parameters or not self.critic.one_per_env,
            "share_parameters=false gives every agent its own critic, but critic.agent_id=false "
            "asks for one critic evaluation per env; set critic.agent_id=true or "
            "share_parameters=true",
        )
        self.num_updates  # noqa: B018 -- validates the run length
        data = self.run.data_devices
        check_data_split(self.env.num_envs, data)
        envs = self.env.num_envs // data  # per device; minibatches are dealt per device
        label = f"env.num_envs={envs}" if data == 1 else f"{envs} envs per data device"
        if self.network.recurrent:
            # Sequences are envs times agents, which is only known with the env.
            require(
                envs % self.num_minibatches == 0,
                f"{label} is not divisible by num_minibatches="
                f"{self.num_minibatches} (recurrent minibatches split whole env sequences); "
                f"choose num_minibatches dividing {envs}",
            )
        else:
            samples = envs * self.num_steps
            require(
                samples % self.num_minibatches == 0,
                f"{label} x num_steps = {samples} is not divisible by "
                f"num_minibatches={self.num_minibatches}",
            )
