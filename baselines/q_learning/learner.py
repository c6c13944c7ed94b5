"""IQL, VDN and QMIX: one recurrent Q-learning core with a replay buffer; they differ by mixer.

``make_q_learning(config)`` returns a ``Learner`` (``init(key) -> QTrainState``,
``update(state) -> (state, metrics)``); ``make_train(config)`` composes them into
``train(key)`` that ``jax.vmap`` runs over seeds. One update:

1. roll out ``num_steps`` epsilon-greedy steps in ``env.num_envs`` envs (the shared
   ``rollout``; the runner carries on across updates, so sequences need not start at resets --
   each stores the recurrent state it started from, and ``burn_in`` can keep the steps that
   state is stale for out of the loss); with ``env.reward_shaping`` the stored rewards include
   the annealed shaping, weighted by the env steps done when the update began;
2. add the ``num_envs`` sequences to the in-jit replay buffer (``jaxmarl.training.replay``);
3. once ``learning_starts`` env steps are done and the buffer holds a batch, take
   ``num_epochs`` gradient steps, each on ``batch_size`` sampled sequences (``td_loss``:
   target network, double Q, n-step or TD(lambda) targets, mixer);
4. every ``target_update_interval`` updates move the target network towards the online one
   (``tau = 1``: hard copy; ``tau < 1``: soft/Polyak).

Everything shared with PQN is in this package's ``acting``, ``config``, ``network`` and
``td_loss`` modules; this file adds the buffer and the target network.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxmarl.baselines.q_learning.acting import q_policies
from jaxmarl.baselines.q_learning.config import (
    LambdaReturns,
    QCommonConfig,
    Returns,
    TransformerNetworkConfig,
    epsilon_schedule,
    make_optimiser,
)
from jaxmarl.baselines.q_learning.network import build_q_network
from jaxmarl.baselines.q_learning.td_loss import (
    QSequence,
    collect_sequence,
    td_loss,
    truncation_slots,
)
from jaxmarl.networks.mixers import MixerConfig, TransformerMixerConfig
from jaxmarl.training import replay
from jaxmarl.training.config import require, require_positive
from jaxmarl.training.data_parallel import DataShards, check_data_split
from jaxmarl.training.learner import Learner
from jaxmarl.training.rollout import TrainingEnv, episode_metrics, shaping_of
from jaxmarl.training.sgd import sgd_epochs
from jaxmarl.training.types import Runner


@dataclasses.dataclass(frozen=True, kw_only=True)
class QLearningConfig(QCommonConfig):
    """IQL (``mixer=none``), VDN (``mixer=vdn``), QMIX (``mixer=qmix``) or SHAQ
    (``mixer=shaq``); see ``QCommonConfig``.

    Attributes:
        buffer_size: sequences (of ``num_steps`` steps each) the replay buffer holds.
        batch_size: sequences per gradient step.
        learning_starts: env steps (all envs) before the first gradient step.
        num_epochs: gradient steps per update, each on a fresh sample.
        target_update_interval: updates between target-network updates.
        tau: target update rate (1.0 = hard copy).
        double_q: pick next actions with the online network, value them with the target one.
        burn_in: steps at the start of a replayed sequence that only warm up the recurrent
            state when the sequence began mid-episode (its stored carry is stale): left out of
            the loss up to the sequence's first episode start (R2D2's burn-in; 0 = off, the
            JaxMARL behaviour; at most ``num_steps``).
    """

    buffer_size: int = 5000
    batch_size: int = 32
    learning_starts: int = 10_000
    num_epochs: int = 1
    target_update_interval: int = 200
    tau: float = 1.0
    double_q: bool = True
    burn_in: int = 0

    def __post_init__(self):
        super().__post_init__()
        require_positive(
            "q_learning",
            buffer_size=self.buffer_size,
            batch_size=self.batch_size,
            num_epochs=self.num_epochs,
            target_update_interval=self.target_update_interval,
        )
        require(
            self.buffer_size >= self.batch_size,
            f"buffer_size={self.buffer_size} sequences cannot hold one batch of batch_size="
            f"{self.batch_size}; raise buffer_size or lower batch_size",
        )
        require(
            self.buffer_size >= self.env.num_envs,
            f"buffer_size={self.buffer_size} sequences cannot hold one update's "
            f"env.num_envs={self.env.num_envs} sequences; raise buffer_size",
        )
        require(self.learning_starts >= 0, "learning_starts must be >= 0")
        require(0.0 < self.tau <= 1.0, f"tau must be in (0, 1], got {self.tau}")
        require(
            0 <= self.burn_in <= self.num_steps,
            f"burn_in must be in [0, num_steps={self.num_steps}], got {self.burn_in}",
        )
        self.num_updates  # noqa: B018 -- validates the run length
        data = self.run.data_devices
        if data > 1:  # each device holds its envs' share of the buffer and of every sample
            check_data_split(self.env.num_envs, data)
            require(
                self.buffer_size % self.env.num_envs == 0,
                f"run.data_devices={data} splits the replay buffer by env, which needs "
                f"buffer_size={self.buffer_size} to be a multiple of env.num_envs="
                f"{self.env.num_envs}; use buffer_size="
                f"{-(-self.buffer_size // self.env.num_envs) * self.env.num_envs}",
            )
            require(
                self.batch_size % data == 0,
                f"batch_size={self.batch_size} does not split over run.data_devices={data}; "
                f"use a batch_size that is a multiple of {data}",
            )


@dataclasses.dataclass(frozen=True, kw_only=True)
class TransfQMIXConfig(QLearningConfig):
    """TransfQMIX (``alg=transf_qmix``; Gallici et al., 2023): transformer agents over the env's
    entity view and a transformer mixer (``jaxmarl.networks.transformer``), trained by the
    Q-learning core above. Defaults are JaxMARL's ``transf_qmix_mpe.yaml`` (Adam with eps 1e-6,
    lr 1e-3 annealed linearly, TD(lambda = 0.6), gamma 0.9, target copy every 200 updates) but
    the run length; presets: ``configs/transf_qmix/``.

    Attributes:
        network: ``TransformerNetworkConfig``.
        mixer: ``TransformerMixerConfig``.
    """

    network: TransformerNetworkConfig = TransformerNetworkConfig()
    mixer: MixerConfig = TransformerMixerConfig()
    lr: float = 1e-3
    optimiser: str = "adam"
    adam_eps: float = 1e-6
    max_grad_norm: float = 10.0
    returns: Returns = LambdaReturns(td_lambda=0.6)
    learning_starts: int = 6400

    def __post_init__(self):
        super().__post_init__()
        mixer = self.mixer
        if mixer.reads_agent_states:
            require(
                self.network.width % mixer.num_heads == 0,
                f"mixer.num_heads={mixer.num_heads} must divide network.width="
                f"{self.network.width} (the mixer's tokens are as wide as the agents')",
            )


@struct.dataclass
class QTrainState:
    """Everything a Q-learning run carries between updates (checkpointed whole, buffer too).

    Attributes:
        params, target_params: online and target network parameters (mixer included).
        opt_state: optax state.
        buffer: ``ReplayBuffer`` of ``QSequence`` items (batch-major, ``[capacity, ...]``).
        runner: env states, observations, recurrent carry ``[B, A, H]``, rollout key.
        key: key for sampling from the buffer.
        update: ``[]`` int32, updates done.
    """

    params: Any
    target_params: Any
    opt_state: Any
    buffer: replay.ReplayBuffer
    runner: Runner
    key: jax.Array
    update: jax.Array


def make_q_learning(config: QLearningConfig) -> Learner:
    """Build env, networks, optimiser and buffer layout; return the learner's functions."""
    env = TrainingEnv.from_config(
        config.env,
        agent_id=config.network.agent_id,
        world_state=config.mixer.needs_world_state,
        entities=isinstance(config.network, TransformerNetworkConfig),
    )
    batch = env.batch
    network = build_q_network(config, batch, env.env)
    data = DataShards.of(config)
    num_envs, num_steps = data.local(config.env.num_envs), config.num_steps  # this device's
    slots = truncation_slots(env.env, num_steps)
    num_updates = config.num_updates
    epsilon = epsilon_schedule(config, num_updates)
    optimiser = make_optimiser(config, num_updates * config.num_epochs)

    exploring_policy, greedy_policy = q_policies(network)

    def init(key: jax.Array) -> QTrainState:
        params_key, env_key, train_key = jax.random.split(key, 3)
        runner = env.reset(env_key, num_envs, network.initial_carry(num_envs), data)
        inputs = env.runner_inputs(runner)
        params = network.init(params_key, inputs.obs, inputs.world_state)
        steps = lambda x, length: jnp.zeros((length, *x.shape[1:]), x.dtype)
        example = QSequence(  # one env's item
            inputs=jax.tree.map(lambda x: steps(x, num_steps + 1), inputs),
            action=jnp.zeros((num_steps, batch.num_agents), jnp.int32),
            reward=jnp.zeros((num_steps, batch.num_agents), jnp.float32),
            terminated=jnp.zeros((num_steps,), jnp.bool_),
            done=jnp.zeros((num_steps,), jnp.bool_),
            carry=runner.policy_carry[0],
        )
        if config.bootstrap_truncation:
            example = example.replace(
                terminal_inputs=jax.tree.map(lambda x: steps(x, slots), inputs),
                terminal_step=jnp.zeros((slots,), jnp.int32),
            )
        return QTrainState(
            params=params,
            target_params=params,
            opt_state=optimiser.init(params),
            buffer=replay.init(example, data.local(config.buffer_size)),
            runner=runner,
            key=train_key,
            update=jnp.int32(0),
        )

    def update(state: QTrainState) -> tuple[QTrainState, dict[str, jax.Array]]:
        eps = epsilon(state.update)
        runner, trajectory, sequence = collect_sequence(
            env,
            exploring_policy(state.params, eps),
            state.runner,
            num_steps,
            record_terminal=config.bootstrap_truncation,
            slots=slots,
            shaping=shaping_of(config.env, state.update * config.steps_per_update),
            data=data,
        )
        buffer = replay.add(state.buffer, sequence.batch_major())
        env_steps = (state.update + 1) * config.steps_per_update
        learn = replay.can_sample(buffer, data.local(config.batch_size)) & (
            env_steps >= config.learning_starts
        )
        key, learn_key = jax.random.split(state.key)
        # The mixer's draws (SHAQ's coalitions), one set per update; the other mixers draw none.
        mix_key = jax.random.fold_in(learn_key, 1)

        def loss_fn(params, minibatch):
            return td_loss(
                network,
                config,
                params,
                state.target_params,
                minibatch,
                config.double_q,
                config.burn_in,
                mix_key,
            )

        def sample(key):
            items = replay.sample_split(buffer, key, config.batch_size, data, config.env.num_envs)
            return jax.tree.map(lambda x: x[None], items.time_major())  # one minibatch

        def learn_step(params, opt_state):
            params, opt_state, _, metrics = sgd_epochs(
                loss_fn, optimiser, params, opt_state, learn_key, sample, config.num_epochs, data
            )
            return params, opt_state, metrics

        def skip(params, opt_state):
            shapes = jax.eval_shape(learn_step, params, opt_state)[2]
            return params, opt_state, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)

        params, opt_state, train_metrics = jax.lax.cond(
            learn, learn_step, skip, state.params, state.opt_state
        )
        sync = (state.update + 1) % config.target_update_interval == 0
        moved = optax.incremental_update(params, state.target_params, config.tau)
        target_params = jax.tree.map(
            lambda new, old: jnp.where(sync, new, old), moved, state.target_params
        )
        new_state = QTrainState(
            params=params,
            target_params=target_params,
            opt_state=opt_state,
            buffer=buffer,
            runner=runner,
            key=key,
            update=state.update + 1,
        )
        metrics = {
            **data.episode_metrics(episode_metrics(trajectory)),
            **train_metrics,
            "epsilon": eps,
            "learning": learn.astype(jnp.float32),
        }
        return new_state, metrics

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
