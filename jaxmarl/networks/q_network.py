"""Agent Q-network factored as perception -> shared decision trunk -> Q head, plus a mixer.

Parameters are a plain dict with the same subtrees as the actor-critic networks, so the trunk
can be shared, frozen or saved on its own::

    {"encoder": ..., "trunk": ..., "heads": {"q": ...}, "mixer": ...}

Arrays keep the agent axis: observations ``[T, B, A, D]`` -> Q-values ``[T, B, A, n]``. Inside,
agents of all envs are flattened into the trunk's batch ``N = B * A`` so one parameter set
serves every agent; the recurrent state is kept as ``[B, A, H]`` so it can be stored and
shuffled per env (replay buffers, minibatches).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.trunks import initial_carry

Params = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class QNetwork:
    """Pure functions over encoder, trunk, Q head and mixer modules.

    Attributes:
        encoder: per-agent observation encoder (``[..., D] -> [..., E]``).
        trunk: decision trunk (``MLPTrunk`` or ``GRUTrunk``; see ``jaxmarl.networks.trunks``).
        head: ``QHead``.
        mixer: a mixer from ``jaxmarl.networks.mixers``.
        num_agents: ``A``.
    """

    encoder: nn.Module
    trunk: nn.Module
    head: nn.Module
    mixer: nn.Module
    num_agents: int

    def init(self, key: jax.Array, obs: jax.Array, world_state: jax.Array) -> Params:
        """Parameters from example inputs ``obs [B, A, D]`` and ``world_state [B, W]``."""
        keys = jax.random.split(key, 4)
        n = obs.shape[0] * obs.shape[1]
        flat = obs.reshape((1, n, *obs.shape[2:]))
        first = jnp.zeros((1, n), dtype=bool)
        carry = initial_carry(self.trunk, n)
        encoder = self.encoder.init(keys[0], flat)
        x = self.encoder.apply(encoder, flat)
        trunk = self.trunk.init(keys[1], carry, x, first)
        _, y = self.trunk.apply(trunk, carry, x, first)
        head = self.head.init(keys[2], y)
        mixer = init_mixer(self.mixer, keys[3], obs.shape[:2], world_state)
        return {
            "encoder": encoder["params"],
            "trunk": trunk.get("params", {}),  # none for a trunk without layers
            "heads": {"q": head["params"]},
            "mixer": mixer.get("params", {}),
        }

    def initial_carry(self, num_envs: int) -> jax.Array:
        """Zero recurrent state ``[B, A, H]`` (``H = 0`` for feed-forward trunks)."""
        carry = initial_carry(self.trunk, num_envs * self.num_agents)
        return carry.reshape((num_envs, self.num_agents, -1))

    def q_values(
        self, params: Params, carry: jax.Array, obs: jax.Array, first: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """Q-values of a sequence.

        Args:
            params: see the module docstring.
            carry: ``[B, A, H]`` recurrent state before ``obs[0]``.
            obs: ``[T, B, A, D]``.
            first: ``[T, B]`` bool, ``obs[t]`` starts an episode (the state is reset first).

        Returns:
            ``(carry [B, A, H], q [T, B, A, num_actions])``.
        """
        hidden, q, _ = self._forward(params, carry, obs, first)
        return hidden, q

    def q_values_and_states(
        self, params: Params, carry: jax.Array, obs: jax.Array, first: jax.Array
    ) -> tuple[jax.Array, jax.Array]:
        """As ``q_values``, but returns ``(q, states)``: ``states [T, B, A, H]`` is the
        recurrent state after each step (``H = 0`` for feed-forward trunks), the state from
        which ``q_values_after`` continues."""
        _, q, states = self._forward(params, carry, obs, first)
        return q, states

    def q_values_after(self, params: Params, states: jax.Array, obs: jax.Array) -> jax.Array:
        """Q-values of ``obs [T, B, A, D]``, each read one step after ``states [T, B, A, H]``.

        Every ``(states[t], obs[t])`` pair is an independent one-step continuation (no scan
        over ``T``): this values an episode's real last observation from the state its agents
        had reached, which the stored sequence cannot do because an auto-reset replaced it.
        """
        steps, num_envs, num_agents = obs.shape[:3]
        n = steps * num_envs * num_agents
        # One step of n independent one-agent "envs".
        flat = obs.reshape((1, n, 1, *obs.shape[3:]))
        carry = states.reshape((n, 1, -1))
        _, q, _ = self._forward(params, carry, flat, jnp.zeros((1, n), dtype=bool))
        return q.reshape((steps, num_envs, num_agents, -1))

    def _forward(self, params, carry, obs, first):
        """``(last carry [B, A, H], q [T, B, A, n], states [T, B, A, H])``."""
        steps, num_envs, num_agents = obs.shape[:3]
        n = num_envs * num_agents
        flat_obs = obs.reshape((steps, n, *obs.shape[3:]))
        flat_first = jnp.broadcast_to(first[..., None], (steps, num_envs, num_agents))
        x = self.encoder.apply({"params": params["encoder"]}, flat_obs)
        hidden, y = self.trunk.apply(
            {"params": params["trunk"]}, carry.reshape((n, -1)), x, flat_first.reshape((steps, n))
        )
        q = self.head.apply({"params": params["heads"]["q"]}, y)
        # A recurrent trunk's output at step t is its state after step t (GRUTrunk); a
        # feed-forward trunk has an empty state.
        states = y if self.trunk.carry_size else jnp.zeros((steps, n, 0), y.dtype)
        shape = (steps, num_envs, num_agents)
        return hidden.reshape(carry.shape), q.reshape((*shape, -1)), states.reshape((*shape, -1))

    def mix(
        self,
        params: Params,
        agent_q: jax.Array,
        world_state: jax.Array,
        greedy: jax.Array | None = None,
        key: jax.Array | None = None,
    ) -> jax.Array:
        """``agent_q [..., A]``, ``world_state [..., W]`` -> mixed values ``[..., K]``.

        ``greedy [..., A]``: whether each agent's action is its greedy one (``None``: all are);
        ``key``: the mixer's randomness (SHAQ's coalitions, needed with ``greedy``). Mixers
        other than SHAQ read neither (``jaxmarl.networks.mixers``).
        """
        return apply_mixer(self.mixer, params, agent_q, world_state, greedy, key)


def init_mixer(mixer: nn.Module, key: jax.Array, agents: tuple[int, int], world_state) -> dict:
    """A mixer's variables for ``agents = (B, A)`` agents and ``world_state [B, W]``, initialised
    with the online call's inputs (SHAQ's alpha reads ``greedy``)."""
    agent_q = jnp.zeros(agents, dtype=jnp.float32)
    greedy = jnp.zeros(agents, dtype=bool)
    coalitions = jax.random.fold_in(key, 1)  # keeps the other mixers' params as before SHAQ
    return mixer.init({"params": key, "coalitions": coalitions}, agent_q, world_state, greedy)


def apply_mixer(mixer, params, agent_q, world_state, greedy=None, key=None) -> jax.Array:
    """``mixer`` on ``params["mixer"]``; ``key`` feeds the ``"coalitions"`` stream (SHAQ)."""
    rngs = None if key is None else {"coalitions": key}
    return mixer.apply({"params": params["mixer"]}, agent_q, world_state, greedy, rngs=rngs)
