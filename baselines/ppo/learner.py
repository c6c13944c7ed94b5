"""IPPO and MAPPO: one PPO core; MAPPO swaps the local critic for a centralised one.

``make_ppo(config)`` returns a ``Learner`` with pure functions ``init(key) -> TrainState`` and
``update(state) -> (state, metrics)``; ``make_train(config)`` composes them into
``train(key) -> (final_state, metrics)`` that ``jax.vmap`` runs over seeds. Everything shared
with other learners (rollout, GAE, losses, minibatching, networks, agent batching) comes from
``jaxmarl.training`` / ``jaxmarl.networks``; this file adds only what is PPO.

Parameters are shared across agents (one actor, one critic, agents stacked on an axis; add
``network.agent_id=true`` to let them tell themselves apart), or with ``share_parameters=false``
each agent has its own (``PerAgentActorCritic``: a leading agent axis on every parameter, applied
with ``jax.vmap``; minibatches then keep an env's agents together). A centralised critic reads the
world state plus a one-hot agent id, or with ``critic.agent_id=false`` the world state alone
(JaxMARL's MPE MAPPO critic): then every agent of an env has the same value, so the critic runs
once per env and minibatches keep an env's agents together. A local critic may read the actor's
embedding (``critic.shares_encoder=true``) and trunk (``critic.shares_trunk=true``); the
rollout and the loss then compute the shared layers once for both. Truncated episodes bootstrap
from the value of their real last observation (``bootstrap_truncation``; JaxMARL's scripts
treat a time limit as a termination, which ``bootstrap_truncation=false`` reproduces).
With ``normalize_obs`` the networks standardise their inputs by running statistics kept in the
parameters; each update merges its rollout into them before the gradient steps, so the
minibatches see the statistics the next rollout will act with.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from jaxmarl.baselines.ppo.config import PPOConfig, TanhToBounds
from jaxmarl.baselines.ppo.loss import PPOBatch, PPOMinibatch, merge_axes, ppo_loss
from jaxmarl.baselines.ppo.network import build_network
from jaxmarl.networks import ActorCritic, input_norm
from jaxmarl.networks.heads import sample_rows
from jaxmarl.training import targets
from jaxmarl.training.data_parallel import DataShards
from jaxmarl.training.learner import GreedyPolicy, Learner, make_train_from
from jaxmarl.training.minibatch import Minibatches, sequence_deal
from jaxmarl.training.rollout import Policy, TrainingEnv, episode_metrics, rollout, shaping_of
from jaxmarl.training.sgd import learning_rate, sgd_epochs
from jaxmarl.training.sweep import sweepable_optimiser
from jaxmarl.training.types import Runner, StepInput, TrainState, Transition


@dataclasses.dataclass(frozen=True)
class PPOParts:
    """The pure functions of PPO on one env, before an optimiser is chosen (the multi-task
    learner sums ``loss_fn`` over tasks; ``make_ppo`` uses them for one).

    Attributes:
        init_params: ``(params_key, env_key) -> (params, runner)``.
        collect: ``(params, runner, update=0) -> (runner, Rollout, metrics)``: one rollout
            (``update``: updates done, for the env's reward shaping) with
            advantages and value targets.
        minibatches: ``(key, Rollout) -> Minibatches`` of ``PPOMinibatch`` (``.stacked()``:
            one ``PPOMinibatch`` with a leading ``[M]`` axis).
        loss_fn: ``(params, PPOMinibatch) -> (loss, metrics)``.
        sampling_policy: ``params -> Policy``: the rollout's policy (``rollout``'s ``policy``:
            actions sampled, squashed with ``action_bounds=tanh``; log-probs and values).
        merge_inputs: ``(params, Rollout) -> params`` with the rollout's inputs merged into the
            input statistics (``normalize_obs``; the identity otherwise).
        greedy_policy, initial_carry: as in ``Learner``.
    """

    init_params: Callable[[jax.Array, jax.Array], tuple[Any, Runner]]
    collect: Callable[..., tuple[Runner, Rollout, dict[str, jax.Array]]]
    minibatches: Callable[[jax.Array, Rollout], Minibatches]
    loss_fn: Callable[[Any, PPOMinibatch], tuple[jax.Array, dict[str, jax.Array]]]
    sampling_policy: Callable[[Any], Policy]
    merge_inputs: Callable[[Any, Rollout], Any]
    greedy_policy: GreedyPolicy
    initial_carry: Callable[[int], tuple[jax.Array, jax.Array]]


@struct.dataclass
class Rollout:
    """One update's data: the steps (``[T, G, a, ...]``) and the carries the rollout began
    with (actor ``[B*A, H]``, critic ``[B*c, H]``)."""

    steps: PPOBatch
    actor_carry: jax.Array
    critic_carry: jax.Array


@dataclasses.dataclass(frozen=True)
class CriticLayout:
    """How critic evaluations map onto agents.

    A critic of the world state alone gives every agent of an env the same value, so it runs
    once per env (``shared = A``, ``per_env = 1``) and minibatches keep an env's agents
    together; any other critic runs once per agent (``shared = 1``, ``per_env = A``).
    """

    centralised: bool
    agent_id: bool
    num_agents: int

    @property
    def shared(self) -> int:
        return self.num_agents if self.centralised and not self.agent_id else 1

    @property
    def per_env(self) -> int:
        return self.num_agents // self.shared

    def inputs(self, env: TrainingEnv, inputs: StepInput) -> jax.Array:
        """``[..., B, c, C]`` (``c = per_env``): own observation, world state + one-hot agent
        id, or the world state alone (``c = 1``)."""
        if not self.centralised:
            return inputs.obs
        world = inputs.world_state[..., None, :]
        if not self.agent_id:
            return world
        *lead, _, width = world.shape
        world = jnp.broadcast_to(world, (*lead, self.num_agents, width))
        ids = jnp.broadcast_to(env.batch.agent_ids(), (*lead, self.num_agents, self.num_agents))
        return jnp.concatenate([world, ids], axis=-1)


def _per_agent(flags: jax.Array, count: int) -> jax.Array:
    """Per-env flags ``[..., B]`` -> ``[..., B, count]``."""
    return jnp.broadcast_to(flags[..., None], (*flags.shape, count))


def _split_axis(x: jax.Array, axis: int, inner: int) -> jax.Array:
    """Axis ``axis`` of size ``n * inner`` -> two axes ``[n, inner]``."""
    shape = x.shape
    return x.reshape((*shape[:axis], shape[axis] // inner, inner, *shape[axis + 1 :]))


def _one_step(x: jax.Array) -> jax.Array:
    """``[B, n, ...]`` -> ``[1, B*n, ...]``: one time step of every agent (or critic)."""
    return merge_axes(x, 0)[None]


def _env_major(x: jax.Array, envs: int) -> jax.Array:
    """``[1, B*n, ...]`` -> ``[B, n, ...]`` (``B = envs``), the inverse of ``_one_step``."""
    return x.reshape((envs, -1, *x.shape[2:]))


@dataclasses.dataclass(frozen=True)
class TanhSquash:
    """``action_bounds=tanh``: Gaussian samples ``u`` -> ``low + (tanh(u) + 1) * half_range``."""

    low: jax.Array
    half_range: jax.Array

    @classmethod
    def of(cls, config: PPOConfig, env: TrainingEnv) -> TanhSquash | None:
        """The squashing ``config`` asks for on ``env`` (``None`` for ``action_bounds=clip``).

        Raises:
            ValueError: ``action_bounds=tanh`` on discrete actions or unbounded ones.
        """
        if not isinstance(config.action_bounds, TanhToBounds):
            return None
        batch = env.batch
        if batch.discrete:
            raise ValueError(
                f"action_bounds=tanh squashes continuous actions, but {config.env.env_id} has "
                "discrete ones; leave action_bounds=clip"
            )
        low = np.asarray(batch.action_low, np.float32)
        high = np.asarray(batch.action_high, np.float32)
        if not np.all(np.isfinite(low) & np.isfinite(high)):
            raise ValueError(
                f"action_bounds=tanh needs finite action bounds, but {config.env.env_id}'s are "
                f"[{list(batch.action_low)}, {list(batch.action_high)}]; use action_bounds=clip"
            )
        return cls(low=jnp.asarray(low), half_range=jnp.asarray((high - low) / 2.0))

    def __call__(self, raw: jax.Array) -> jax.Array:
        return self.low + (jnp.tanh(raw) + 1.0) * self.half_range


def ppo_parts(config: PPOConfig, env: TrainingEnv, network: ActorCritic) -> PPOParts:
    """PPO's rollout, targets and loss for ``env`` and ``network``."""
    data = DataShards.of(config)
    squash = TanhSquash.of(config, env)
    num_envs, num_agents = data.local(config.env.num_envs), env.batch.num_agents  # this device's
    layout = CriticLayout(config.critic.centralised, not config.critic.one_per_env, num_agents)
    groups = num_envs * layout.per_env

    def values_of(params, critic_carry, inputs: StepInput):
        """Critic on one step: ``(critic carry, values [B, A])`` (shared values broadcast)."""
        first = _one_step(_per_agent(inputs.first, layout.per_env))
        critic_carry, value = network.value(
            params, critic_carry, _one_step(layout.inputs(env, inputs)), first
        )
        value = _env_major(value, inputs.first.shape[0])  # [B, c]
        return critic_carry, jnp.broadcast_to(value, (value.shape[0], num_agents))

    def act(params, actor_carry, inputs: StepInput):
        first = _one_step(_per_agent(inputs.first, num_agents))
        return network.policy(
            params, actor_carry, _one_step(inputs.obs), first, _one_step(inputs.avail_actions)
        )

    def act_and_value(params, carry, inputs: StepInput):
        """``act`` and ``values_of`` on one step; a local critic reads the actor's input, so
        ``policy_and_value`` computes the layers it shares with the actor once."""
        actor_carry, critic_carry = carry
        if layout.centralised:
            return act(params, actor_carry, inputs), values_of(params, critic_carry, inputs)
        first = _one_step(_per_agent(inputs.first, num_agents))
        actor, (critic_carry, value) = network.policy_and_value(
            params,
            actor_carry,
            critic_carry,
            _one_step(inputs.obs),
            first,
            _one_step(inputs.avail_actions),
        )
        return actor, (critic_carry, _env_major(value, inputs.first.shape[0]))  # [B, A]

    def sampling_policy(params) -> Policy:
        def policy(carry, inputs: StepInput, keys):
            (actor_carry, dist), (critic_carry, value) = act_and_value(params, carry, inputs)
            # One key per agent row, from its env's key: rows are env-major ``[1, B * A]``.
            row_keys = jax.vmap(lambda k: jax.random.split(k, num_agents))(keys).reshape(1, -1)
            action = sample_rows(dist, row_keys)
            num = inputs.first.shape[0]
            extras = {"log_prob": _env_major(dist.log_prob(action), num), "value": value}
            if squash is not None:  # the loss reads the sample; the env gets it squashed
                extras["raw_action"] = _env_major(action, num)
                action = squash(action)
            return (actor_carry, critic_carry), _env_major(action, num), extras

        return policy

    def greedy_policy(params, carry, inputs: StepInput):
        actor_carry, critic_carry = carry
        actor_carry, dist = act(params, actor_carry, inputs)
        action = dist.mode() if squash is None else squash(dist.mode())
        action = _env_major(action, inputs.first.shape[0])
        return (actor_carry, critic_carry), action

    def state_value(params):
        """``[B, A]`` values of inputs given the critic carry (no reset: not a first step)."""
        return lambda carry, inputs: values_of(params, carry[1], inputs)[1]

    def advantages_and_targets(params, trajectory: Transition, runner: Runner):
        values = trajectory.extras["value"]  # [T, B, A]
        last_value = state_value(params)(runner.policy_carry, env.runner_inputs(runner))
        done = _per_agent(trajectory.done, num_agents)
        if config.bootstrap_truncation:
            bootstrap = trajectory.extras["bootstrap_value"]
            terminated = _per_agent(trajectory.terminated, num_agents)
        else:
            bootstrap = jnp.zeros_like(values)
            terminated = done
        following = targets.next_values(values, last_value, done, bootstrap)
        return targets.gae(
            trajectory.reward, values, following, terminated, done, config.gamma, config.gae_lambda
        )

    def ppo_batch(trajectory: Transition, advantages, value_targets) -> PPOBatch:
        """Trajectory ``[T, B, A, ...]`` -> ``PPOBatch`` ``[T, G, a, ...]``."""
        seq = lambda x: x.reshape((config.num_steps, groups, layout.shared, *x.shape[3:]))
        return PPOBatch(
            obs=seq(trajectory.inputs.obs),
            # [T, B*c, ...]; a local critic reads ``obs``, which is not stored twice.
            critic_input=merge_axes(layout.inputs(env, trajectory.inputs), 1)
            if layout.centralised
            else None,
            avail_actions=seq(trajectory.inputs.avail_actions),
            first=seq(_per_agent(trajectory.inputs.first, num_agents)),
            action=seq(trajectory.action if squash is None else trajectory.extras["raw_action"]),
            log_prob=seq(trajectory.extras["log_prob"]),
            value=seq(trajectory.extras["value"]),
            advantages=seq(advantages),
            value_targets=seq(value_targets),
        )

    def initial_carry(n: int):
        return network.initial_carry(n * num_agents, n * layout.per_env)

    def init_params(params_key: jax.Array, env_key: jax.Array):
        runner = env.reset(env_key, num_envs, initial_carry(num_envs), data)
        inputs = env.runner_inputs(runner)
        params = network.init(
            params_key, _one_step(inputs.obs)[0], _one_step(layout.inputs(env, inputs))[0]
        )
        return params, runner

    def collect(params, runner: Runner, update: jax.Array | int = 0):
        actor_carry, critic_carry = runner.policy_carry
        runner, trajectory = rollout(
            env,
            sampling_policy(params),
            runner,
            config.num_steps,
            bootstrap=state_value(params) if config.bootstrap_truncation else None,
            shaping=shaping_of(config.env, update * config.steps_per_update),
            data=data,
        )
        advantages, value_targets = advantages_and_targets(params, trajectory, runner)
        steps = ppo_batch(trajectory, advantages, value_targets)
        rollout_data = Rollout(steps=steps, actor_carry=actor_carry, critic_carry=critic_carry)
        return runner, rollout_data, data.episode_metrics(episode_metrics(trajectory))

    # Independent parameters: an env's agents stay in one minibatch (each minibatch row then
    # still holds one step of every agent, in agent order, which the per-agent network needs).
    together = 1 if config.share_parameters else num_agents

    def minibatches(key: jax.Array, batch: Rollout) -> Minibatches:
        steps = batch.steps
        carries = (batch.actor_carry.reshape((groups, layout.shared, -1)), batch.critic_carry)
        if together > 1:  # [T, G, ...] -> [T, G / A, A, ...], carries [G, ...] -> [G / A, A, ...]
            steps = jax.tree.map(lambda x: _split_axis(x, 1, together), steps)
            carries = jax.tree.map(lambda x: _split_axis(x, 0, together), carries)
        dealt = sequence_deal(
            key, steps, carries, config.num_minibatches, config.network.recurrent, data
        )

        def minibatch(dealt_one) -> PPOMinibatch:
            steps, carries = dealt_one
            if together > 1:  # merge the agents back: [T, G_m, A, ...] -> [T, G_m * A, ...]
                steps = jax.tree.map(lambda x: merge_axes(x, 1), steps)
                carries = jax.tree.map(lambda x: merge_axes(x, 0), carries)
            actor_carry, critic_carry = carries
            return PPOMinibatch(steps=steps, actor_carry=actor_carry, critic_carry=critic_carry)

        return dealt.map(minibatch)

    def merged(stats, x: jax.Array, agents: int):
        """``stats`` with the rows of ``x`` (leading axes env-major, ``agents`` adjacent rows
        per env) merged in: all rows into one set, or each agent's into its own."""
        if config.share_parameters:
            return input_norm.merge(stats, x.reshape((-1, *stats["mean"].shape)), data)
        rows = x.reshape((-1, agents, *stats["mean"].shape[1:]))  # [n, A, *F]
        return jax.vmap(lambda s, r: input_norm.merge(s, r, data), (0, 1))(stats, rows)

    def merge_inputs(params, batch: Rollout):
        if not config.normalize_obs:
            return params
        stats = dict(params["input_norm"])
        stats["obs"] = merged(stats["obs"], batch.steps.obs, num_agents)
        if layout.centralised:
            stats["critic_input"] = merged(
                stats["critic_input"], batch.steps.critic_input, layout.per_env
            )
        return {**params, "input_norm": stats}

    return PPOParts(
        init_params=init_params,
        collect=collect,
        minibatches=minibatches,
        loss_fn=functools.partial(
            ppo_loss, network, config, tanh_half_range=None if squash is None else squash.half_range
        ),
        sampling_policy=sampling_policy,
        merge_inputs=merge_inputs,
        greedy_policy=greedy_policy,
        initial_carry=initial_carry,
    )


def ppo_optimiser(config: PPOConfig, num_updates: int) -> optax.GradientTransformation:
    """Gradient-norm clip then Adam (eps 1e-5), the learning rate warmed up over the first
    ``int(lr_warmup * num_updates)`` updates and annealed (``lr_decay``) to 0 over the remaining
    minibatch steps when ``anneal_lr``; with ``separate_grad_clip`` the actor (``encoder``,
    ``trunk``, ``heads``) and the ``critic`` subtree each get their own clip and Adam. With
    ``run.sweep.lr`` the rate is held in the optimiser state (``sweepable_optimiser``)."""
    per_update = config.update_epochs * config.num_minibatches
    warmup = int(config.lr_warmup * num_updates) * per_update

    def build(lr: float) -> optax.GradientTransformation:
        rate = learning_rate(
            lr, config.anneal_lr, num_updates * per_update, warmup, config.lr_decay
        )

        def clipped_adam() -> optax.GradientTransformation:
            return optax.chain(
                optax.clip_by_global_norm(config.max_grad_norm), optax.adam(rate, eps=1e-5)
            )

        if not config.separate_grad_clip:
            return clipped_adam()
        networks = lambda params: {p: "critic" if p == "critic" else "actor" for p in params}
        return optax.multi_transform({"actor": clipped_adam(), "critic": clipped_adam()}, networks)

    return sweepable_optimiser(build, config.run.sweep.names, lr=config.lr)


def make_ppo(config: PPOConfig) -> Learner:
    """Build env, networks and optimiser; return the learner's pure functions."""
    env = TrainingEnv.from_config(
        config.env, agent_id=config.network.agent_id, world_state=config.critic.centralised
    )
    parts = ppo_parts(config, env, build_network(config, env.batch, env.world_state_leaves()))
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
        runner, batch, metrics = parts.collect(state.params, state.runner, state.update)
        params, opt_state, key, train_metrics = sgd_epochs(
            parts.loss_fn,
            optimiser,
            parts.merge_inputs(state.params, batch),
            state.opt_state,
            state.key,
            lambda key: parts.minibatches(key, batch),
            config.update_epochs,
            DataShards.of(config),
        )
        new_state = TrainState(
            params=params, opt_state=opt_state, runner=runner, key=key, update=state.update + 1
        )
        return new_state, {**metrics, **train_metrics}

    return Learner(
        config=config,
        env=env,
        init=init,
        update=update,
        num_updates=num_updates,
        greedy_policy=parts.greedy_policy,
        initial_carry=parts.initial_carry,
        env_steps_per_update=config.steps_per_update,
        sweepable=("lr",),
    )


def make_train(config: PPOConfig):
    """``train(key) -> (final TrainState, metrics [num_updates])``: pure, ``vmap``-able."""
    return make_train_from(make_ppo(config))
