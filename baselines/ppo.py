"""IPPO and MAPPO: one PPO core; MAPPO swaps the local critic for a centralised one.

``make_ppo(config)`` returns a ``Learner`` with pure functions ``init(key) -> TrainState`` and
``update(state) -> (state, metrics)``; ``make_train(config)`` composes them into
``train(key) -> (final_state, metrics)`` that ``jax.vmap`` runs over seeds. Everything shared
with other learners (rollout, GAE, losses, minibatching, networks, agent batching) comes from
``jaxmarl.training`` / ``jaxmarl.networks``; this file adds only what is PPO.

Parameters are shared across agents (one actor, one critic, agents stacked on an axis; add
``network.agent_id=true`` to let them tell themselves apart). A centralised critic reads the
world state plus a one-hot agent id, or with ``critic_agent_id=false`` the world state alone
(JaxMARL's MPE MAPPO critic): then every agent of an env has the same value, so the critic runs
once per env and minibatches keep an env's agents together. Truncated episodes bootstrap
from the value of their real last observation (``bootstrap_truncation``; JaxMARL's scripts
treat a time limit as a termination, which ``bootstrap_truncation=false`` reproduces).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

import jaxmarl
from jaxmarl.networks import (
    ActorCritic,
    CategoricalHead,
    GaussianHead,
    ValueHead,
    encoder_from_config,
)
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.training import losses, targets
from jaxmarl.training.config import (
    EnvConfig,
    NetworkConfig,
    RolloutUpdates,
    RunConfig,
    require,
    require_positive,
)
from jaxmarl.training.learner import Learner, make_train_from
from jaxmarl.training.minibatch import sequence_minibatches
from jaxmarl.training.rollout import episode_metrics, reset_runner, rollout, step_inputs
from jaxmarl.training.sgd import learning_rate, sgd_epochs
from jaxmarl.training.types import Runner, StepInput, Transition
from jaxmarl.wrappers import AgentBatch, LogWrapper

CRITICS = ("local", "centralised")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PPOConfig(RolloutUpdates):
    """IPPO (``critic="local"``) or MAPPO (``critic="centralised"``).

    Attributes:
        env, network, run: shared sections (``jaxmarl.training.config``).
        critic: ``"local"`` reads each agent's observation; ``"centralised"`` reads the env's
            world state plus (``critic_agent_id``) a one-hot agent id.
        critic_agent_id: give the centralised critic the agent id. Without it the critic is
            one value per env, computed once per env instead of once per agent.
        num_steps: rollout length ``T`` per update.
        lr: Adam learning rate; ``anneal_lr`` decays it linearly to 0 over training.
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
        bootstrap_truncation: value truncated episodes' last observation (see module doc).
    """

    env: EnvConfig = dataclasses.field(default_factory=EnvConfig)
    network: NetworkConfig = dataclasses.field(default_factory=NetworkConfig)
    run: RunConfig = dataclasses.field(default_factory=RunConfig)
    critic: str = "local"
    critic_agent_id: bool = True
    num_steps: int = 128
    lr: float = 2.5e-4
    anneal_lr: bool = True
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
    bootstrap_truncation: bool = True

    def __post_init__(self):
        require(self.critic in CRITICS, f"critic must be one of {CRITICS}, got {self.critic!r}")
        require(
            self.critic == "centralised" or self.critic_agent_id,
            "critic_agent_id=false needs critic=centralised (a local critic reads each agent's "
            "own observation; use network.agent_id to add ids to it)",
        )
        require_positive(
            "ppo",
            num_steps=self.num_steps,
            lr=self.lr,
            update_epochs=self.update_epochs,
            num_minibatches=self.num_minibatches,
            max_grad_norm=self.max_grad_norm,
        )
        require(0.0 < self.gamma <= 1.0, f"gamma must be in (0, 1], got {self.gamma}")
        require(
            0.0 <= self.gae_lambda <= 1.0, f"gae_lambda must be in [0, 1], got {self.gae_lambda}"
        )
        require(self.clip_eps > 0, f"clip_eps must be > 0, got {self.clip_eps}")
        require(self.ent_coef >= 0 and self.vf_coef >= 0, "ent_coef and vf_coef must be >= 0")
        self.num_updates  # noqa: B018 -- validates the run length
        if self.network.recurrent:
            sequences = self.env.num_envs  # times agents, which is only known with the env
            require(
                sequences % self.num_minibatches == 0,
                f"env.num_envs={self.env.num_envs} is not divisible by "
                f"num_minibatches={self.num_minibatches} (recurrent minibatches split whole "
                f"env sequences); choose num_minibatches dividing {self.env.num_envs}",
            )
        else:
            samples = self.env.num_envs * self.num_steps
            require(
                samples % self.num_minibatches == 0,
                f"env.num_envs * num_steps = {samples} is not divisible by "
                f"num_minibatches={self.num_minibatches}",
            )


@struct.dataclass
class TrainState:
    """Everything a PPO run carries between updates (checkpointed whole).

    Attributes:
        params: actor-critic parameters (``encoder``/``trunk``/``heads``/``critic`` subtrees).
        opt_state: optax state.
        runner: env states, observations, recurrent carries, rollout key.
        key: key for minibatch shuffling.
        update: ``[]`` int32, updates done.
    """

    params: Any
    opt_state: Any
    runner: Runner
    key: jax.Array
    update: jax.Array


@struct.dataclass
class PPOBatch:
    """What the PPO loss reads, laid out ``[T, G, a, ...]``: time, then the ``G`` units that
    minibatches shuffle, each holding ``a`` agents that share one critic evaluation (``a = 1``,
    ``G`` = envs x agents for per-agent critics; ``a`` = agents, ``G`` = envs for a critic of the
    world state alone).

    Attributes:
        obs: ``[T, G, a, D]`` actor input.  critic_input: ``[T, G, C]``.
        avail_actions: ``[T, G, a, num_actions]`` bool.  first: ``[T, G, a]`` bool.
        action: ``[T, G, a]`` or ``[T, G, a, d]``.  log_prob, value: ``[T, G, a]`` at
        collection time.  advantages, value_targets: ``[T, G, a]``.
    """

    obs: jax.Array
    critic_input: jax.Array
    avail_actions: jax.Array
    first: jax.Array
    action: jax.Array
    log_prob: jax.Array
    value: jax.Array
    advantages: jax.Array
    value_targets: jax.Array


def merge_axes(x: jax.Array, axis: int) -> jax.Array:
    """``x`` with axes ``axis`` and ``axis + 1`` merged into one (row-major)."""
    shape = x.shape
    return x.reshape((*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))


def build_network(config: PPOConfig, batch: AgentBatch) -> ActorCritic:
    """Actor and critic towers from the network config (same shapes for both)."""
    net = config.network

    def encoder():
        return encoder_from_config(net)

    head = CategoricalHead if batch.discrete else GaussianHead
    return ActorCritic(
        encoder=encoder(),
        trunk=trunk_from_config(net),
        policy_head=head(batch.num_actions),
        critic_encoder=encoder(),
        critic_trunk=trunk_from_config(net),
        value_head=ValueHead(),
    )


@dataclasses.dataclass(frozen=True)
class PPOParts:
    """The pure functions of PPO on one env, before an optimiser is chosen (the multi-task
    learner sums ``loss_fn`` over tasks; ``make_ppo`` uses them for one).

    Attributes:
        init_params: ``(params_key, env_key) -> (params, runner)``.
        collect: ``(params, runner) -> (runner, (PPOBatch, start_carry), metrics)``: one
            rollout with advantages and value targets.
        minibatches: ``(key, data) -> (PPOBatch [M, ...], carries [M, ...])``.
        loss_fn: ``(params, minibatch) -> (loss, metrics)``.
        greedy_policy, initial_carry, uses_world_state: as in ``Learner``.
    """

    init_params: Any
    collect: Any
    minibatches: Any
    loss_fn: Any
    greedy_policy: Any
    initial_carry: Any
    uses_world_state: bool


def ppo_parts(config: PPOConfig, env: Any, batch: AgentBatch, network: ActorCritic) -> PPOParts:
    """PPO's rollout, targets and loss for ``env`` (``LogWrapper``-wrapped) and ``network``."""
    num_envs, num_agents = config.env.num_envs, batch.num_agents
    centralised = config.critic == "centralised"
    # Agents per critic evaluation: all of an env's agents when the critic reads the world
    # state alone (their values are equal), else one. Minibatches shuffle whole such groups.
    shared = num_agents if centralised and not config.critic_agent_id else 1
    critics_per_env = num_agents // shared

    def critic_input(inputs: StepInput) -> jax.Array:
        """``[..., B, c, C]`` (``c = critics_per_env``): own observation, world state + one-hot
        agent id, or the world state alone (``c = 1``)."""
        if not centralised:
            return inputs.obs
        world = inputs.world_state[..., None, :]
        if not config.critic_agent_id:
            return world
        *lead, _, width = world.shape
        world = jnp.broadcast_to(world, (*lead, num_agents, width))
        ids = jnp.broadcast_to(batch.agent_ids(), (*lead, num_agents, num_agents))
        return jnp.concatenate([world, ids], axis=-1)

    def per_agent(first: jax.Array, count: int = num_agents) -> jax.Array:
        """Per-env flags ``[..., B]`` -> ``[..., B, count]``."""
        return jnp.broadcast_to(first[..., None], (*first.shape, count))

    def one_step(x: jax.Array) -> jax.Array:
        """``[B, n, ...]`` -> ``[1, B*n, ...]``: one time step of every agent (or critic)."""
        return merge_axes(x, 0)[None]

    def env_major(x: jax.Array, envs: int) -> jax.Array:
        """``[1, B*n, ...]`` -> ``[B, n, ...]`` (``B = envs``), the inverse of ``one_step``."""
        return x.reshape((envs, -1, *x.shape[2:]))

    def values_of(params, critic_carry, inputs: StepInput):
        """Critic on one step: ``(critic carry, values [B, A])`` (shared values broadcast)."""
        first = one_step(per_agent(inputs.first, critics_per_env))
        critic_carry, value = network.value(
            params, critic_carry, one_step(critic_input(inputs)), first
        )
        value = env_major(value, inputs.first.shape[0])  # [B, c]
        return critic_carry, jnp.broadcast_to(value, (value.shape[0], num_agents))

    def act(params, actor_carry, inputs: StepInput):
        first = one_step(per_agent(inputs.first))
        return network.policy(
            params, actor_carry, one_step(inputs.obs), first, one_step(inputs.avail_actions)
        )

    def policy_fn(params, carry, inputs: StepInput, key):
        actor_carry, critic_carry = carry
        actor_carry, dist = act(params, actor_carry, inputs)
        critic_carry, value = values_of(params, critic_carry, inputs)
        action = dist.sample(seed=key)
        num = inputs.first.shape[0]
        extras = {"log_prob": env_major(dist.log_prob(action), num), "value": value}
        return (actor_carry, critic_carry), env_major(action, num), extras

    def greedy_policy(params, carry, inputs: StepInput):
        actor_carry, critic_carry = carry
        actor_carry, dist = act(params, actor_carry, inputs)
        action = env_major(dist.mode(), inputs.first.shape[0])
        return (actor_carry, critic_carry), action

    def state_value(params, carry, inputs: StepInput) -> jax.Array:
        """``[B, A]`` values of ``inputs`` given the critic carry (no reset: not a first step)."""
        return values_of(params, carry[1], inputs)[1]

    def loss_fn(params, minibatch: tuple[PPOBatch, tuple[jax.Array, jax.Array]]):
        minibatch, (actor_carry, critic_carry) = minibatch
        agents = lambda x: merge_axes(x, 1)  # [T, G, a, ...] -> [T, G*a, ...]
        _, dist = network.policy(
            params,
            merge_axes(actor_carry, 0),  # [G, a, H] -> [G*a, H]
            agents(minibatch.obs),
            agents(minibatch.first),
            agents(minibatch.avail_actions),
        )
        _, values = network.value(
            params, critic_carry, minibatch.critic_input, minibatch.first[..., 0]
        )  # [T, G]
        values = jnp.broadcast_to(values[..., None], minibatch.value_targets.shape)
        advantages = minibatch.advantages
        if config.normalize_advantages:
            advantages = losses.normalize(advantages)
        policy_loss, stats = losses.ppo_policy_loss(
            dist.log_prob(agents(minibatch.action)),
            agents(minibatch.log_prob),
            agents(advantages),
            config.clip_eps,
        )
        value_clip = config.clip_eps if config.clip_value else None
        value_loss = losses.value_loss(values, minibatch.value, minibatch.value_targets, value_clip)
        entropy = jnp.mean(dist.entropy())
        total = policy_loss + config.vf_coef * value_loss - config.ent_coef * entropy
        return total, {
            "loss": total,
            "policy_loss": policy_loss,
            "value_loss": value_loss,
            "entropy": entropy,
            **stats,
        }

    def advantages_and_targets(params, trajectory: Transition, runner: Runner):
        values = trajectory.extras["value"]  # [T, B, A]
        last_inputs = step_inputs(
            env, batch, runner.obs, runner.env_state, runner.first, centralised
        )
        last_value = state_value(params, runner.policy_carry, last_inputs)
        done = per_agent(trajectory.done)
        if config.bootstrap_truncation:
            bootstrap = trajectory.extras["bootstrap_value"]
            terminated = per_agent(trajectory.terminated)
        else:
            bootstrap = jnp.zeros_like(values)
            terminated = done
        following = targets.next_values(values, last_value, done, bootstrap)
        return targets.gae(
            trajectory.reward, values, following, terminated, done, config.gamma, config.gae_lambda
        )

    groups = num_envs * critics_per_env

    def ppo_batch(trajectory: Transition, advantages, value_targets) -> PPOBatch:
        """Trajectory ``[T, B, A, ...]`` -> ``PPOBatch`` ``[T, G, a, ...]``."""
        t = config.num_steps
        seq = lambda x: x.reshape((t, groups, shared, *x.shape[3:]))
        return PPOBatch(
            obs=seq(trajectory.inputs.obs),
            critic_input=merge_axes(critic_input(trajectory.inputs), 1),  # [T, B*c, ...]
            avail_actions=seq(trajectory.inputs.avail_actions),
            first=seq(per_agent(trajectory.inputs.first)),
            action=seq(trajectory.action),
            log_prob=seq(trajectory.extras["log_prob"]),
            value=seq(trajectory.extras["value"]),
            advantages=seq(advantages),
            value_targets=seq(value_targets),
        )

    def init_params(params_key: jax.Array, env_key: jax.Array):
        runner = reset_runner(env, env_key, num_envs, initial_carry(num_envs))
        inputs = step_inputs(env, batch, runner.obs, runner.env_state, runner.first, centralised)
        params = network.init(
            params_key, one_step(inputs.obs)[0], one_step(critic_input(inputs))[0]
        )
        return params, runner

    def initial_carry(n: int):
        return network.initial_carry(n * num_agents, n * critics_per_env)

    def collect(params, runner: Runner):
        start_carry = runner.policy_carry
        runner, trajectory = rollout(
            env,
            batch,
            policy_fn,
            params,
            runner,
            config.num_steps,
            bootstrap_fn=state_value if config.bootstrap_truncation else None,
            world_state=centralised,
        )
        advantages, value_targets = advantages_and_targets(params, trajectory, runner)
        data = ppo_batch(trajectory, advantages, value_targets)
        return runner, (data, start_carry), episode_metrics(trajectory)

    def minibatches(key: jax.Array, data):
        steps, (actor_carry, critic_carry) = data
        actor_carry = actor_carry.reshape((groups, shared, actor_carry.shape[-1]))
        return sequence_minibatches(
            key,
            steps,
            (actor_carry, critic_carry),
            config.num_minibatches,
            config.network.recurrent,
        )

    return PPOParts(
        init_params=init_params,
        collect=collect,
        minibatches=minibatches,
        loss_fn=loss_fn,
        greedy_policy=greedy_policy,
        initial_carry=initial_carry,
        uses_world_state=centralised,
    )


def ppo_optimiser(config: PPOConfig, num_updates: int) -> optax.GradientTransformation:
    """Gradient-norm clip then Adam (eps 1e-5), the learning rate annealed linearly to 0 over
    all minibatch steps when ``anneal_lr``; with ``separate_grad_clip`` the actor (``encoder``,
    ``trunk``, ``heads``) and the ``critic`` subtree each get their own clip and Adam."""
    optimiser_steps = num_updates * config.update_epochs * config.num_minibatches
    lr = learning_rate(config.lr, config.anneal_lr, optimiser_steps)

    def clipped_adam() -> optax.GradientTransformation:
        return optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm), optax.adam(lr, eps=1e-5)
        )

    if not config.separate_grad_clip:
        return clipped_adam()
    networks = lambda params: {part: "critic" if part == "critic" else "actor" for part in params}
    return optax.multi_transform({"actor": clipped_adam(), "critic": clipped_adam()}, networks)


def make_ppo(config: PPOConfig) -> Learner:
    """Build env, networks and optimiser; return the learner's pure functions."""
    env = LogWrapper(jaxmarl.make(config.env.env_id, **config.env.env_kwargs))
    batch = AgentBatch.from_env(env, agent_id=config.network.agent_id)
    parts = ppo_parts(config, env, batch, build_network(config, batch))
    num_updates = config.num_updates

    optimiser = ppo_optimiser(config, num_updates)

    def init(key: jax.Array) -> TrainState:
        params_key, env_key, train_key = jax.random.split(key, 3)
        params, runner = parts.init_params(params_key, env_key)
        return TrainState(
            params=params,
            opt_state=optimiser.init(params),
            runner=runner,
            key=train_key,
            update=jnp.int32(0),
        )

    def update(state: TrainState) -> tuple[TrainState, dict[str, jax.Array]]:
        runner, data, metrics = parts.collect(state.params, state.runner)
        params, opt_state, key, train_metrics = sgd_epochs(
            parts.loss_fn,
            optimiser,
            state.params,
            state.opt_state,
            state.key,
            lambda key: parts.minibatches(key, data),
            config.update_epochs,
        )
        new_state = TrainState(
            params=params, opt_state=opt_state, runner=runner, key=key, update=state.update + 1
        )
        return new_state, {**metrics, **train_metrics}

    return Learner(
        config=config,
        env=env,
        batch=batch,
        init=init,
        update=update,
        num_updates=num_updates,
        greedy_policy=parts.greedy_policy,
        initial_carry=parts.initial_carry,
        env_steps_per_update=config.steps_per_update,
        uses_world_state=parts.uses_world_state,
    )


def make_train(config: PPOConfig):
    """``train(key) -> (final TrainState, metrics [num_updates])``: pure, ``vmap``-able."""
    return make_train_from(make_ppo(config))
