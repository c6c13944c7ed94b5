"""Actor-critic networks factored as perception -> shared decision layers -> heads.

Parameters are a plain dict with one subtree per part, so the decision trunk can be saved,
loaded, shared across tasks or frozen (``optax.multi_transform`` on these labels)::

    {"encoder": ..., "trunk": ..., "heads": {"policy": ...},
     "critic": {"encoder": ..., "trunk": ..., "head": ...}}

The critic is a separate tower (as in the IPPO/MAPPO reference setups): its input is the agent's
own observation (IPPO) or the world state (MAPPO). Or, with ``critic_encoder=None``, it reads the
actor's embedding: the encoder and its parameters are the actor's (there is then no
``critic/encoder``) and both losses train it (JaxMARL's Hanabi IPPO network). With
``critic_trunk=None`` as well it reads the actor's trunk output, so only the value head is its
own (no ``critic/trunk``; JaxMARL's Hanabi IPPO-RNN): the critic's recurrent state is then the
actor's, carried as a copy so that ``value`` works on its own. ``policy_and_value`` computes
the shared layers once for both heads. All arrays are ``[T, N, ...]``: time, then a
flat batch ``N`` (envs x agents), so one parameter set serves every agent. The critic's batch
may differ from the actor's: a critic that reads only the world state gives every agent of an env
the same value, so it runs once per env (``N_c`` = envs) instead of once per agent.

With ``input_norm`` the inputs are standardised by running statistics held in the parameters
(``jaxmarl.networks.input_norm``) before anything else reads them: ``params["input_norm"]`` has
``"obs"`` for the actor's input and, for a critic that reads something else (the world state),
``"critic_input"`` for the critic's. The learner merges each rollout into them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import distrax
import jax
from flax import linen as nn

from jaxmarl.networks import input_norm as norm
from jaxmarl.networks.trunks import initial_carry

Params = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class InputNorm:
    """Running normalisation of an ``ActorCritic``'s inputs.

    Attributes:
        critic_reads_obs: the critic's input is the actor's observation (IPPO), normalised with
            the same statistics; False (MAPPO's world state) gives it statistics of its own.
    """

    critic_reads_obs: bool


@dataclasses.dataclass(frozen=True)
class ActorCritic:
    """Pure functions over an actor and a critic built from encoder, trunk and head modules."""

    encoder: nn.Module
    trunk: nn.Module
    policy_head: nn.Module
    critic_encoder: nn.Module | None  # None: the actor's encoder, parameters included
    critic_trunk: nn.Module | None  # None: the actor's trunk (needs critic_encoder=None)
    value_head: nn.Module
    input_norm: InputNorm | None = None  # None: inputs are read as they are

    def __post_init__(self):
        if self.critic_trunk is None and self.critic_encoder is not None:
            raise ValueError(
                "a critic that reads the actor's trunk (critic_trunk=None) reads the actor's "
                "encoder too: pass critic_encoder=None"
            )

    def init(self, key: jax.Array, obs: jax.Array, critic_input: jax.Array) -> Params:
        """Parameters from example inputs ``obs`` ``[N, D]`` and ``critic_input`` ``[N_c, Dc]``."""
        keys = jax.random.split(key, 6)
        n, n_critic = obs.shape[0], critic_input.shape[0]
        first = jax.numpy.zeros((1, n), dtype=bool)
        embed = self.encoder.init(keys[0], obs[None])
        x = self.encoder.apply(embed, obs[None])
        trunk = self.trunk.init(keys[1], initial_carry(self.trunk, n), x, first)
        _, y = self.trunk.apply(trunk, initial_carry(self.trunk, n), x, first)
        policy = self.policy_head.init(keys[2], y)
        if self.critic_encoder is None:
            critic_embed = None
            cx = self.encoder.apply(embed, critic_input[None])
        else:
            critic_embed = self.critic_encoder.init(keys[3], critic_input[None])
            cx = self.critic_encoder.apply(critic_embed, critic_input[None])
        critic_first = jax.numpy.zeros((1, n_critic), dtype=bool)
        critic_carry = initial_carry(self._critic_trunk, n_critic)
        if self.critic_trunk is None:
            critic_trunk = None
            _, cy = self.trunk.apply(trunk, critic_carry, cx, critic_first)
        else:
            critic_trunk = self.critic_trunk.init(keys[4], critic_carry, cx, critic_first)
            _, cy = self.critic_trunk.apply(critic_trunk, critic_carry, cx, critic_first)
        value = self.value_head.init(keys[5], cy)
        critic = {"head": value["params"]}
        if critic_trunk is not None:
            critic = {"trunk": critic_trunk.get("params", {}), **critic}
        if critic_embed is not None:
            critic = {"encoder": critic_embed["params"], **critic}
        params = {
            "encoder": embed["params"],
            # .get: a trunk without layers (network.trunk.sizes=[]) has no parameters
            "trunk": trunk.get("params", {}),
            "heads": {"policy": policy["params"]},
            "critic": critic,
        }
        if self.input_norm is not None:
            stats = {"obs": norm.initial(obs.shape[1:])}
            if not self.input_norm.critic_reads_obs:
                stats["critic_input"] = norm.initial(critic_input.shape[1:])
            params["input_norm"] = stats
        return params

    def _obs(self, params: Params, obs: jax.Array) -> jax.Array:
        """The actor's input as its layers read it (normalised with ``input_norm``)."""
        if self.input_norm is None:
            return obs
        return norm.normalise(params["input_norm"]["obs"], obs)

    def _critic_input(self, params: Params, critic_input: jax.Array) -> jax.Array:
        """The critic's input as its layers read it (normalised with ``input_norm``)."""
        if self.input_norm is None:
            return critic_input
        if self.input_norm.critic_reads_obs:
            return self._obs(params, critic_input)
        return norm.normalise(params["input_norm"]["critic_input"], critic_input)

    def initial_carry(
        self, batch: int, critic_batch: int | None = None
    ) -> tuple[jax.Array, jax.Array]:
        """Zero recurrent states ``(actor [N, H], critic [N_c, Hc])``; ``N_c`` defaults to ``N``."""
        critic_batch = batch if critic_batch is None else critic_batch
        return initial_carry(self.trunk, batch), initial_carry(self._critic_trunk, critic_batch)

    @property
    def _critic_trunk(self) -> nn.Module:
        return self.trunk if self.critic_trunk is None else self.critic_trunk

    def policy(
        self,
        params: Params,
        hidden: jax.Array,
        obs: jax.Array,
        first: jax.Array,
        avail: jax.Array | None = None,
    ) -> tuple[jax.Array, distrax.Distribution]:
        """``obs`` ``[T, N, D]``, ``first`` ``[T, N]`` -> (hidden, action distribution)."""
        x = self.encoder.apply({"params": params["encoder"]}, self._obs(params, obs))
        return self._actor(params, hidden, x, first, avail)

    def value(
        self, params: Params, hidden: jax.Array, critic_input: jax.Array, first: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """``critic_input`` ``[T, N_c, Dc]`` -> (hidden, values ``[T, N_c]``)."""
        critic_input = self._critic_input(params, critic_input)
        if self.critic_encoder is None:
            x = self.encoder.apply({"params": params["encoder"]}, critic_input)
        else:
            x = self.critic_encoder.apply({"params": params["critic"]["encoder"]}, critic_input)
        return self._critic(params, hidden, x, first)

    def policy_and_value(
        self,
        params: Params,
        actor_hidden: jax.Array,
        critic_hidden: jax.Array,
        obs: jax.Array,
        first: jax.Array,
        avail: jax.Array | None = None,
    ) -> tuple[tuple[jax.Array, distrax.Distribution], tuple[jax.Array, jax.Array]]:
        """``policy`` and ``value`` of a critic that reads the same ``obs`` (IPPO's): ``(actor
        hidden, distribution), (critic hidden, values)``.

        Shared layers are computed once here, which matters for the gradient: two applications
        would each add a weight-gradient product of the shared first layer (XLA merges the
        forward passes, not the backward ones). With a shared trunk the critic's hidden state
        returned is the actor's (``critic_hidden`` is not read).
        """
        if self.critic_encoder is not None:
            return (
                self.policy(params, actor_hidden, obs, first, avail),
                self.value(params, critic_hidden, obs, first),
            )
        x = self.encoder.apply({"params": params["encoder"]}, self._obs(params, obs))
        if self.critic_trunk is not None:
            return (
                self._actor(params, actor_hidden, x, first, avail),
                self._critic(params, critic_hidden, x, first),
            )
        hidden, y = self.trunk.apply({"params": params["trunk"]}, actor_hidden, x, first)
        policy = self.policy_head.apply({"params": params["heads"]["policy"]}, y, avail)
        value = self.value_head.apply({"params": params["critic"]["head"]}, y)
        return (hidden, policy), (hidden, value)

    def _actor(self, params, hidden, x, first, avail) -> tuple[jax.Array, distrax.Distribution]:
        """Trunk and policy head over the actor's embedding ``x``."""
        hidden, y = self.trunk.apply({"params": params["trunk"]}, hidden, x, first)
        return hidden, self.policy_head.apply({"params": params["heads"]["policy"]}, y, avail)

    def _critic(self, params, hidden, x, first) -> tuple[jax.Array, jax.Array]:
        """The critic's trunk (or the actor's, shared) and value head over its embedding ``x``."""
        critic = params["critic"]
        trunk = params["trunk"] if self.critic_trunk is None else critic["trunk"]
        hidden, y = self._critic_trunk.apply({"params": trunk}, hidden, x, first)
        return hidden, self.value_head.apply({"params": critic["head"]}, y)
