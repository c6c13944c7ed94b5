"""Candidate-action Q-network: per-task perception, decision layers shared across tasks.

The value-based network of multi-task MARL with shared decision layers (Wang et al., 2023,
"Multi-Task Multi-Agent Shared Layers are Universal Cognition of Multi-Agent Coordination",
arXiv 2312.15674). A task's *perception* reads one agent's observation (with its one-hot agent
id) and, for every *candidate* action ``c``, produces an embedding of "this agent considering
``c``"; the *decision* layers map each embedding to one scalar ``Q(agent, c)``. The decision
layers never see an observation size, an action count or an agent count, so one set of them
serves tasks that differ in all three, without padding, and can be transferred to a new task.

Per task (perception)::

    obs ++ agent id -> MLPEncoder -> perception trunk (GRUTrunk or MLPTrunk) -> h   [T, N, H]
    candidate layer: relu(Dense([h, one_hot(c)]))  for every c                   [T, N, n, H]

Shared (decision)::

    MLPTrunk(decision_sizes) -> ValueHead  ->  Q                                 [T, N, n]

Deviation from the reference code (MTAPN, PyTorch): there the candidate one-hot is part of the
GRU's input, so the GRU runs once per (agent, candidate) and the next recurrent state is the
one of the action actually taken. Here the candidate enters after the recurrent layer: one GRU
step per agent, a recurrent state that does not depend on the chosen action (so the shared
Q-learning core stores and replays it unchanged), and the decision layers still read a
per-candidate embedding. The last action is not an input (the Q-learning core's sequences do not
carry it; JaxMARL's Q agents do not read it either).

Parameters (one task)::

    {"encoder": ..., "trunk": ..., "candidate": ..., "decision": {"trunk", "head"}, "mixer": ...}

``QNetwork``'s interface (``init``, ``initial_carry``, ``q_values``, ``q_values_after``, ``mix``)
is kept, so the Q-learning core (``jaxmarl.baselines.q_learning``: ``q_policies``, ``td_loss``)
works unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from flax import linen as nn

from jaxmarl.networks.init import BIAS, HIDDEN
from jaxmarl.networks.q_network import QNetwork
from jaxmarl.networks.trunks import initial_carry

Params = dict[str, Any]


class CandidateLayer(nn.Module):
    """``h [..., H]`` -> ``[..., n, width]``: one embedding per candidate action."""

    num_actions: int
    width: int

    @nn.compact
    def __call__(self, h: jax.Array) -> jax.Array:
        candidates = jnp.eye(self.num_actions, dtype=h.dtype)  # [n, n]
        lead = h.shape[:-1]
        per_candidate = jnp.concatenate(
            [
                jnp.broadcast_to(h[..., None, :], (*lead, self.num_actions, h.shape[-1])),
                jnp.broadcast_to(candidates, (*lead, self.num_actions, self.num_actions)),
            ],
            axis=-1,
        )
        return nn.relu(nn.Dense(self.width, kernel_init=HIDDEN, bias_init=BIAS)(per_candidate))


@dataclasses.dataclass(frozen=True)
class CandidateQNetwork:
    """Pure functions over one task's perception modules, the shared decision modules and a mixer.

    Attributes:
        encoder: per-task observation encoder (``[..., D] -> [..., E]``).
        trunk: per-task perception trunk (``GRUTrunk`` or ``MLPTrunk``) over embeddings.
        candidate: per-task ``CandidateLayer``.
        decision_trunk: shared ``MLPTrunk`` over candidate embeddings.
        decision_head: shared ``ValueHead`` (one scalar per candidate).
        mixer: per-task mixer (``jaxmarl.networks.mixers``).
        num_agents: ``A``.
    """

    encoder: nn.Module
    trunk: nn.Module
    candidate: CandidateLayer
    decision_trunk: nn.Module
    decision_head: nn.Module
    mixer: nn.Module
    num_agents: int

    def init(self, key: jax.Array, obs: jax.Array, world_state: jax.Array) -> Params:
        """Parameters from example inputs ``obs [B, A, *input_shape]`` and ``world_state
        [B, W]``."""
        keys = jax.random.split(key, 6)
        n = obs.shape[0] * obs.shape[1]
        flat = obs.reshape((1, n, *obs.shape[2:]))
        first = jnp.zeros((1, n), dtype=bool)
        encoder = self.encoder.init(keys[0], flat)
        x = self.encoder.apply(encoder, flat)
        carry = initial_carry(self.trunk, n)
        trunk = self.trunk.init(keys[1], carry, x, first)
        _, h = self.trunk.apply(trunk, carry, x, first)
        candidate = self.candidate.init(keys[2], h)
        y = self.candidate.apply(candidate, h).reshape((1, n * self.candidate.num_actions, -1))
        decision_first = jnp.zeros(y.shape[:2], dtype=bool)
        no_carry = initial_carry(self.decision_trunk, y.shape[1])
        decision_trunk = self.decision_trunk.init(keys[3], no_carry, y, decision_first)
        _, z = self.decision_trunk.apply(decision_trunk, no_carry, y, decision_first)
        decision_head = self.decision_head.init(keys[4], z)
        mixer = self.mixer.init(keys[5], jnp.zeros(obs.shape[:2], jnp.float32), world_state)
        return {
            "encoder": encoder["params"],
            "trunk": trunk["params"],
            "candidate": candidate["params"],
            "decision": {"trunk": decision_trunk["params"], "head": decision_head["params"]},
            "mixer": mixer.get("params", {}),
        }

    # Same as QNetwork's: they read only ``trunk``, ``num_agents``, ``mixer`` and ``_forward``.
    initial_carry = QNetwork.initial_carry
    mix = QNetwork.mix
    q_values = QNetwork.q_values
    q_values_and_states = QNetwork.q_values_and_states
    q_values_after = QNetwork.q_values_after

    def _forward(self, params: Params, carry: jax.Array, obs: jax.Array, first: jax.Array):
        """``(last carry [B, A, H], q [T, B, A, num_actions], states [T, B, A, H])`` of a
        sequence, as ``QNetwork._forward`` (``obs [T, B, A, D]``, ``first [T, B]``)."""
        steps, num_envs, num_agents = obs.shape[:3]
        n = num_envs * num_agents
        flat_first = jnp.broadcast_to(first[..., None], (steps, num_envs, num_agents))
        flat_obs = obs.reshape((steps, n, *obs.shape[3:]))  # a grid stays a grid
        x = self.encoder.apply({"params": params["encoder"]}, flat_obs)
        hidden, h = self.trunk.apply(
            {"params": params["trunk"]},
            carry.reshape((n, -1)),
            x,
            flat_first.reshape((steps, n)),
        )
        y = self.candidate.apply({"params": params["candidate"]}, h)  # [T, N, n, H]
        y = y.reshape((steps, n * self.candidate.num_actions, -1))
        decision = params["decision"]
        no_carry = initial_carry(self.decision_trunk, y.shape[1])
        _, z = self.decision_trunk.apply(
            {"params": decision["trunk"]}, no_carry, y, jnp.zeros(y.shape[:2], dtype=bool)
        )
        q = self.decision_head.apply({"params": decision["head"]}, z)  # [T, N * n]
        states = h if self.trunk.carry_size else jnp.zeros((steps, n, 0), h.dtype)
        shape = (steps, num_envs, num_agents)
        return hidden.reshape(carry.shape), q.reshape((*shape, -1)), states.reshape((*shape, -1))
