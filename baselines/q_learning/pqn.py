"""PQN-VDN: parallel Q-learning without a replay buffer or target network (Gallici et al., 2024).

Many envs in parallel give decorrelated on-policy data, layer norm keeps the bootstrapped targets
stable, so PQN learns from each rollout right away: ``num_steps`` epsilon-greedy steps of
``env.num_envs`` envs, TD(lambda) targets computed with the current network (gradient stopped),
then ``num_epochs`` passes of ``num_minibatches`` minibatches of whole env sequences, exactly
like PPO's optimisation loop (``sgd_epochs``, ``sequence_deal``).

Everything else is the Q-learning core of ``jaxmarl.baselines.q_learning`` (network, mixer,
masked epsilon-greedy, ``td_loss`` with ``target_params=None``); ``alg=pqn_vdn`` fixes
``mixer=vdn`` (``mixer=none`` gives independent PQN, ``qmix`` a monotonic mixer).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from jaxmarl.baselines.q_learning.acting import q_policies
from jaxmarl.baselines.q_learning.config import (
    LambdaReturns,
    QCommonConfig,
    Returns,
    epsilon_schedule,
    make_optimiser,
)
from jaxmarl.baselines.q_learning.network import build_q_network
from jaxmarl.baselines.q_learning.td_loss import (
    QSequence,
    collect_sequence,
    sequence_minibatches_of,
    td_loss,
    truncation_slots,
)
from jaxmarl.networks.mixers import MixerConfig, VDNMixerConfig
from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig, require
from jaxmarl.training.data_parallel import DataShards, check_data_split
from jaxmarl.training.learner import Learner
from jaxmarl.training.rollout import TrainingEnv, episode_metrics, shaping_of
from jaxmarl.training.sgd import sgd_epochs
from jaxmarl.training.types import TrainState


def pqn_network_defaults() -> NetworkConfig:
    """JaxMARL's PQN-VDN-RNN agent: 2 x (dense 256, LayerNorm, ReLU) -> GRU 256 -> Q head."""
    return NetworkConfig(
        encoder_sizes=(256,),
        embed_dim=256,
        trunk=GRUTrunkConfig(size=256),
        activation="relu",
        layer_norm=True,
        agent_id=True,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class PQNConfig(QCommonConfig):
    """PQN; see ``QCommonConfig`` for the shared fields (defaults: JaxMARL's PQN-VDN on MPE).

    Attributes:
        num_epochs: passes over each rollout.
        num_minibatches: minibatches per pass (whole env sequences; must divide num_envs).
    """

    env: EnvConfig = dataclasses.field(default_factory=lambda: EnvConfig(num_envs=256))
    network: NetworkConfig = dataclasses.field(default_factory=pqn_network_defaults)
    run: RunConfig = dataclasses.field(
        default_factory=lambda: RunConfig(total_timesteps=488 * 256 * 16)
    )
    mixer: MixerConfig = VDNMixerConfig()
    num_steps: int = 16
    lr: float = 5e-4
    anneal_lr: bool = False
    max_grad_norm: float = 1.0
    returns: Returns = LambdaReturns(td_lambda=0.3)
    eps_finish: float = 0.1
    num_epochs: int = 4
    num_minibatches: int = 16

    def __post_init__(self):
        super().__post_init__()
        require(
            not self.mixer.needs_key,
            f"PQN does not support mixer={self.mixer.kind}; use alg={self.mixer.kind} (a target "
            f"network and a replay buffer) or mixer=vdn",
        )
        require(self.num_epochs > 0, f"num_epochs must be > 0, got {self.num_epochs}")
        require(
            self.num_minibatches > 0 and self.env.num_envs % self.num_minibatches == 0,
            f"env.num_envs={self.env.num_envs} is not divisible by num_minibatches="
            f"{self.num_minibatches} (minibatches split whole env sequences)",
        )
        self.num_updates  # noqa: B018 -- validates the run length
        data = self.run.data_devices
        if data > 1:  # minibatches are dealt from each device's own env sequences
            check_data_split(self.env.num_envs, data)
            require(
                (self.env.num_envs // data) % self.num_minibatches == 0,
                f"{self.env.num_envs // data} envs per data device are not divisible by "
                f"num_minibatches={self.num_minibatches}; lower run.data_devices or "
                "num_minibatches",
            )


def make_pqn(config: PQNConfig) -> Learner:
    """Build env, network and optimiser; return the learner's pure functions."""
    env = TrainingEnv.from_config(
        config.env, agent_id=config.network.agent_id, world_state=config.mixer.needs_world_state
    )
    batch = env.batch
    network = build_q_network(config, batch)
    data = DataShards.of(config)
    num_envs = data.local(config.env.num_envs)  # this device's
    slots = truncation_slots(env.env, config.num_steps)
    num_updates = config.num_updates
    epsilon = epsilon_schedule(config, num_updates)
    optimiser = make_optimiser(config, num_updates * config.num_epochs * config.num_minibatches)

    exploring_policy, greedy_policy = q_policies(network)

    def init(key: jax.Array) -> TrainState:
        params_key, env_key, train_key = jax.random.split(key, 3)
        runner = env.reset(env_key, num_envs, network.initial_carry(num_envs), data)
        inputs = env.runner_inputs(runner)
        params = network.init(params_key, inputs.obs, inputs.world_state)
        return TrainState(
            params=params,
            opt_state=optimiser.init(params),
            runner=runner,
            key=train_key,
            update=jnp.int32(0),
        )

    def loss_fn(params, minibatch: QSequence):
        return td_loss(network, config, params, None, minibatch)

    def update(state: TrainState) -> tuple[TrainState, dict[str, jax.Array]]:
        eps = epsilon(state.update)
        runner, trajectory, sequence = collect_sequence(
            env,
            exploring_policy(state.params, eps),
            state.runner,
            config.num_steps,
            record_terminal=config.bootstrap_truncation,
            slots=slots,
            shaping=shaping_of(config.env, state.update * config.steps_per_update),
            data=data,
        )

        def minibatches(key):
            return sequence_minibatches_of(key, sequence, config.num_minibatches, data)

        params, opt_state, key, train_metrics = sgd_epochs(
            loss_fn,
            optimiser,
            state.params,
            state.opt_state,
            state.key,
            minibatches,
            config.num_epochs,
            data,
        )
        new_state = TrainState(
            params=params, opt_state=opt_state, runner=runner, key=key, update=state.update + 1
        )
        episodes = data.episode_metrics(episode_metrics(trajectory))
        return new_state, {**episodes, **train_metrics, "epsilon": eps}

    return Learner(
        config=config,
        env=env,
        init=init,
        update=update,
        num_updates=num_updates,
        greedy_policy=greedy_policy,
        initial_carry=network.initial_carry,
        env_steps_per_update=config.steps_per_update,
        sweepable=("lr",),
    )
