"""The PPO actor-critic, built from the network config: one parameter set for every agent, or
(``share_parameters=false``) one per agent."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import distrax
import jax
import jax.numpy as jnp

from jaxmarl.baselines.ppo.config import PPOConfig
from jaxmarl.networks import (
    ActorCritic,
    CategoricalHead,
    GaussianHead,
    ValueHead,
    encoder_from_config,
)
from jaxmarl.networks.actor_critic import InputNorm, Params
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.wrappers import AgentBatch


def agents_first(x: jax.Array, axis: int, num_agents: int) -> jax.Array:
    """Split the agent-minor axis ``axis`` (``n * A``, an env's agents adjacent, as
    ``AgentBatch`` stacks them) into ``[A, ..., n, ...]`` with the agents leading."""
    shape = x.shape
    x = x.reshape((*shape[:axis], shape[axis] // num_agents, num_agents, *shape[axis + 1 :]))
    return jnp.moveaxis(x, axis + 1, 0)


def agents_back(x: jax.Array, axis: int) -> jax.Array:
    """Inverse of ``agents_first``: ``[A, ..., n, ...]`` (``n`` at ``axis + 1``) -> the
    agent-minor axis ``n * A`` at ``axis``."""
    x = jnp.moveaxis(x, 0, axis + 1)
    shape = x.shape
    return x.reshape((*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))


def _as_arrays(dist: distrax.Distribution) -> tuple[type, tuple[jax.Array, ...]]:
    """A policy distribution as its class and plain arrays, for a function under ``vmap``.

    A distrax distribution returned through ``vmap`` keeps the batch shape it had inside, so
    reading its ``loc`` afterwards fails on the added agent axis; its arrays batch cleanly.
    """
    if isinstance(dist, distrax.Categorical):
        return distrax.Categorical, (dist.logits,)
    if isinstance(dist, distrax.MultivariateNormalDiag):
        return distrax.MultivariateNormalDiag, (dist.loc, dist.scale_diag)
    raise TypeError(f"independent parameters do not support {type(dist).__name__} policies")


def _from_arrays(kind: type, arrays: tuple[jax.Array, ...]) -> distrax.Distribution:
    """``_as_arrays``'s output, batched ``[A, T, n, ...]``, as one distribution with batch
    ``[T, n * A]`` (agent-minor, as the learner stacks agents)."""
    return kind(*(agents_back(x, 1) for x in arrays))


@dataclasses.dataclass(frozen=True)
class PerAgentActorCritic:
    """``ActorCritic``'s interface with one parameter set per agent (independent learners).

    Every parameter leaf gets a leading ``[A]`` axis, and ``jax.vmap`` over it applies agent
    ``i``'s parameters to agent ``i``'s rows: the flat batches ``N`` (actor) and ``N_c``
    (critic) are agent-minor (``N = n * A``), as the learner stacks them. Recurrent states
    keep ``ActorCritic``'s ``[N, H]`` layout, so the learner is unchanged.

    Attributes:
        network: the network each agent has its own copy of.
        num_agents: ``A``.
    """

    network: ActorCritic
    num_agents: int

    def init(self, key: jax.Array, obs: jax.Array, critic_input: jax.Array) -> Params:
        """Parameters ``[A, ...]`` from example inputs ``obs`` ``[N, D]`` and ``critic_input``
        ``[N_c, Dc]`` (each agent from its own key)."""
        keys = jax.random.split(key, self.num_agents)
        split = lambda x: agents_first(x, 0, self.num_agents)
        return jax.vmap(self.network.init)(keys, split(obs), split(critic_input))

    def initial_carry(
        self, batch: int, critic_batch: int | None = None
    ) -> tuple[jax.Array, jax.Array]:
        return self.network.initial_carry(batch, critic_batch)

    def policy(
        self,
        params: Params,
        hidden: jax.Array,
        obs: jax.Array,
        first: jax.Array,
        avail: jax.Array | None = None,
    ) -> tuple[jax.Array, distrax.Distribution]:
        """``obs`` ``[T, N, D]``, ``first`` ``[T, N]`` -> (hidden, action distribution)."""
        kinds = []

        def one_agent(*args):
            hidden, dist = self.network.policy(*args)
            kind, arrays = _as_arrays(dist)
            kinds.append(kind)  # at trace time: the class to rebuild outside the vmap
            return hidden, arrays

        hidden, arrays = jax.vmap(one_agent)(
            params,
            agents_first(hidden, 0, self.num_agents),
            agents_first(obs, 1, self.num_agents),
            agents_first(first, 1, self.num_agents),
            None if avail is None else agents_first(avail, 1, self.num_agents),
        )
        return agents_back(hidden, 0), _from_arrays(kinds[0], arrays)

    def policy_and_value(
        self,
        params: Params,
        actor_hidden: jax.Array,
        critic_hidden: jax.Array,
        obs: jax.Array,
        first: jax.Array,
        avail: jax.Array | None = None,
    ) -> tuple[tuple[jax.Array, distrax.Distribution], tuple[jax.Array, jax.Array]]:
        """``ActorCritic.policy_and_value``, each agent with its own parameters."""
        split = lambda x, axis: agents_first(x, axis, self.num_agents)
        kinds = []

        def one_agent(*args):
            (actor_hidden, dist), critic = self.network.policy_and_value(*args)
            kind, arrays = _as_arrays(dist)
            kinds.append(kind)  # at trace time: the class to rebuild outside the vmap
            return (actor_hidden, arrays), critic

        (actor_hidden, arrays), (critic_hidden, values) = jax.vmap(one_agent)(
            params,
            split(actor_hidden, 0),
            split(critic_hidden, 0),
            split(obs, 1),
            split(first, 1),
            None if avail is None else split(avail, 1),
        )
        return (agents_back(actor_hidden, 0), _from_arrays(kinds[0], arrays)), (
            agents_back(critic_hidden, 0),
            agents_back(values, 1),
        )

    def value(
        self, params: Params, hidden: jax.Array, critic_input: jax.Array, first: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """``critic_input`` ``[T, N_c, Dc]`` -> (hidden, values ``[T, N_c]``)."""
        hidden, values = jax.vmap(self.network.value)(
            params,
            agents_first(hidden, 0, self.num_agents),
            agents_first(critic_input, 1, self.num_agents),
            agents_first(first, 1, self.num_agents),
        )
        return agents_back(hidden, 0), agents_back(values, 1)


def build_network(
    config: PPOConfig,
    batch: AgentBatch,
    world_state_leaves: Sequence[tuple[str, Sequence[int]]] = (),
) -> ActorCritic | PerAgentActorCritic:
    """Actor and critic towers from the network config (same shapes for both; with
    ``critic.shares_encoder`` one encoder for both, with ``critic.shares_trunk`` one trunk too;
    with ``normalize_obs`` running input statistics); with ``config.share_parameters=False``
    each agent gets its own copy.

    A centralised critic reads the flat world state (plus, with ``critic.agent_id``, a one-hot
    id): an MLP encoder reads it as it is; a CNN unflattens it by ``world_state_leaves``
    (``TrainingEnv.world_state_leaves``), convolves its grids and adds the id after the
    convolutions (``DictEncoder``).

    Raises:
        ValueError: a CNN encoder with a centralised critic whose world state has no grid.
    """
    net = config.network

    def encoder():
        return encoder_from_config(net, batch.input_shape, batch.input_leaves)

    def critic_encoder():
        if not config.critic.centralised:
            return encoder()
        if net.encoder.kind != "cnn":
            return encoder_from_config(net)  # the flat world state, whatever the obs' rank
        leaves = tuple((str(name), tuple(shape)) for name, shape in world_state_leaves)
        if not any(len(shape) == 3 for _, shape in leaves):
            raise ValueError(
                f"critic=centralised with network.encoder=cnn convolves the world state, but "
                f"{config.env.env_id}'s has no (h, w, c) grid ({dict(leaves)}); use critic=local "
                f"(IPPO) or network.encoder=mlp"
            )
        if config.critic.agent_id:
            leaves += (("agent_id", (batch.num_agents,)),)
        return encoder_from_config(net, obs_leaves=leaves)

    layers = dict(
        hidden_sizes=net.head_sizes, activation=net.activation, hidden_gain=net.head_init_gain
    )
    if batch.discrete:
        policy_head = CategoricalHead(batch.num_actions, **layers)
    else:
        policy_head = GaussianHead(batch.num_actions, init_log_std=config.init_log_std, **layers)
    network = ActorCritic(
        encoder=encoder(),
        trunk=trunk_from_config(net),
        policy_head=policy_head,
        critic_encoder=None if config.critic.shares_encoder else critic_encoder(),
        critic_trunk=None if config.critic.shares_trunk else trunk_from_config(net),
        value_head=ValueHead(**layers),
        input_norm=InputNorm(critic_reads_obs=not config.critic.centralised)
        if config.normalize_obs
        else None,
    )
    if config.share_parameters:
        return network
    return PerAgentActorCritic(network, batch.num_agents)
