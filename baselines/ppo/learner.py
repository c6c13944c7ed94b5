"""IPPO and MAPPO: one PPO core; MAPPO swaps the local critic for a centralised one.

``make_ppo(config)`` returns a ``Learner`` with pure functions ``init(key) -> TrainState`` and
``update(state) -> (state, metrics)``; ``make_train(config)`` composes them into
``train(key) -> (final_state, metrics)`` that ``jax.vmap`` runs over seeds. Everything shared
with other learners (rollout, GAE, losses, minibatching, networks, agent batching) comes from
``jaxmarl.training`` / ``jaxmarl.networks``; this file adds only what is PPO.

Parameters are shared across agents (one actor, one critic, agents stacked on an axis; add
``network.agent_id=true`` to let them tell themselves apart). A centralised critic reads the
world state plus a one-hot agent id, or with ``critic.agent_id=false`` the world state alone
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

import jaxmarl
from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.baselines.ppo.loss import PPOBatch, merge_axes
from jaxmarl.baselines.ppo.network import build_network
from jaxmarl.networks import (
    ActorCritic,
)
from jaxmarl.training import losses, targets
from jaxmarl.training.learner import Learner, make_train_from
from jaxmarl.training.minibatch import sequence_minibatches
from jaxmarl.training.rollout import episode_metrics, reset_runner, rollout, step_inputs
from jaxmarl.training.sgd import learning_rate, sgd_epochs
from jaxmarl.training.types import Runner, StepInput, TrainState, Transition
from jaxmarl.wrappers import AgentBatch, LogWrapper


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
    centralised = config.critic.centralised
    # Agents per critic evaluation: all of an env's agents when the critic reads the world
    # state alone (their values are equal), else one. Minibatches shuffle whole such groups.
    shared = num_agents if config.critic.one_per_env else 1
    critics_per_env = num_agents // shared

    def critic_input(inputs: StepInput) -> jax.Array:
        """``[..., B, c, C]`` (``c = critics_per_env``): own observation, world state + one-hot
        agent id, or the world state alone (``c = 1``)."""
        if not centralised:
            return inputs.obs
        world = inputs.world_state[..., None, :]
        if config.critic.one_per_env:
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
