"""TransfQMIX's networks: transformer agents over entity observations and a transformer mixer.

TransfQMix (Gallici et al., 2023, arXiv 2301.05334) reads observations and the world state as
matrices with one row per entity (``jaxmarl.wrappers.entities``) and attends over the rows, so
its weights do not depend on how many entities there are.

Agent (one step, every agent of every env at once)::

    entity rows [E, F] -> Embedder -> [E, H]
    tokens = [h_{t-1}; rows]           [1 + E, H]   (h: the agent's recurrent token)
    -> num_layers EncoderBlocks -> h_t = tokens[0]
    Q(own actions) = Dense(h_t);  Q(action tied to entity e) = Dense(tokens[1 + e])

The second Q layer is TransfQMix's policy decoupling (SMAX: an attack's value is read from the
embedding of its target), used for the actions an env ties to an entity
(``entity_action_rows``).

Mixer (one step)::

    tokens = [g_{t-1}; Embedder(world rows) [S, H]; agents' h_t [A, H]] -> EncoderBlocks
    g_t = tokens[0];  W1 = |tokens[-A:]| [A, H], b1 = g_t, w2 = |g_t|, b2 = Dense(relu(g_t))
    Q_tot = elu(q W1 + b1) . w2 + b2                   (monotonic in every agent's q)

Both tokens are reset at episode starts. The agents' hidden tokens reach the mixer without
gradient, as in JaxMARL.

Differences from JaxMARL's ``transf_qmix.py`` (all listed in ``baselines/q_learning/README.md``):
LayerNorm where it has BatchNorm on the embeddings and no normalisation of the raw inputs
(batch statistics would make a Q-value depend on the batch it is computed in and need state
threaded through acting, the loss and the target network; both entity views are already of
order one); and with softmax attention, empty entity rows are masked out (JaxMARL's mask keeps
only them). Kept from JaxMARL: its "fast" attention is the
default (``linear_attention``), and each block doubles its normalised output (JaxMARL adds a
zero-rate dropout of ``x`` to ``x``), which the learning rates were tuned with.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import linen as nn

from jaxmarl.networks.init import BIAS, orthogonal
from jaxmarl.networks.q_network import apply_mixer, init_mixer

Params = dict[str, Any]

ATTENTIONS = ("linear", "softmax")
KERNEL_EPSILON = 1e-3  # added to every attention feature (the Performer code's default)
XAVIER = nn.initializers.xavier_uniform()


def linear_attention(query: jax.Array, key: jax.Array, value: jax.Array, **_: Any) -> jax.Array:
    """Attention with the kernel ``phi(q) . phi(k)``, ``phi = relu + 1e-3``, normalised over keys.

    JaxMARL's "fast attention" (the Performer code's generalized attention with deterministic
    features): ``out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j)``. Its cost is
    linear in the number of tokens, and it takes no mask. Shapes are flax's
    ``[..., tokens, heads, depth]``, one depth for query, key and value.

    The heads are computed together: the ``[width, width]`` context of all features, masked to
    its per-head diagonal blocks, in place of ``heads`` separate ``[depth, depth]`` ones. That
    is ``heads`` times the multiply-adds, but a few larger products, which XLA:CPU runs faster
    than many tiny per-head ones, under the seed ``vmap`` too (``benchmarks/FINDINGS.md``).
    """
    q = jax.nn.relu(query) + KERNEL_EPSILON
    k = jax.nn.relu(key) + KERNEL_EPSILON
    *lead, tokens, heads, depth = q.shape
    flat = lambda x: x.reshape((*lead, tokens, heads * depth))
    same_head = np.kron(np.eye(heads, dtype=np.float32), np.ones((depth, depth), np.float32))
    q, k, v = flat(q), flat(k), flat(value)
    context = jnp.einsum("...td,...te->...de", k, v) * same_head  # [..., width, width]
    numerator = jnp.einsum("...td,...de->...te", q, context)
    # Column e: the normaliser of e's head, sum_d q_d sum_t k_td over the head's features d.
    normaliser = same_head * jnp.sum(k, axis=-2)[..., :, None]
    denominator = jnp.einsum("...td,...de->...te", q, normaliser)
    return (numerator / denominator).reshape(query.shape)


class EncoderBlock(nn.Module):
    """Post-norm transformer encoder layer: self-attention, then a two-layer ReLU MLP, each
    added to its input and layer-normalised (and doubled, see the module docstring)."""

    width: int
    num_heads: int
    ff_dim: int
    attention: str = "linear"

    @nn.compact
    def __call__(self, x: jax.Array, keep: jax.Array | None = None) -> jax.Array:
        """``x [..., tokens, width]``; ``keep [..., tokens]`` bool, tokens that may be attended
        to (softmax attention only)."""
        linear = self.attention == "linear"
        attend = nn.MultiHeadDotProductAttention(
            num_heads=self.num_heads,
            kernel_init=XAVIER,
            use_bias=False,
            attention_fn=linear_attention if linear else nn.dot_product_attention,
        )
        mask = None if linear or keep is None else nn.make_attention_mask(keep, keep)
        x = 2.0 * nn.LayerNorm()(attend(x, x, mask=mask) + x)
        y = nn.Dense(self.ff_dim, kernel_init=XAVIER, bias_init=BIAS)(x)
        y = nn.Dense(self.width, kernel_init=XAVIER, bias_init=BIAS)(nn.relu(y))
        return 2.0 * nn.LayerNorm()(y + x)


class Embedder(nn.Module):
    """``[..., F] -> [..., width]``: dense (orthogonal, ``init_scale``), optional ReLU,
    LayerNorm."""

    width: int
    init_scale: float = 1.0
    relu: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = nn.Dense(self.width, kernel_init=orthogonal(self.init_scale), bias_init=BIAS)(x)
        return nn.LayerNorm()(nn.relu(x) if self.relu else x)


class TokenTransformer(nn.Module):
    """One step of a recurrent token: ``(token [N, H], rows [N, R, H], keep [N, R], first [N])
    -> (token', tokens [N, 1 + R, H])``; the token is zeroed first where ``first``."""

    width: int
    num_layers: int
    num_heads: int
    ff_dim: int
    attention: str

    @nn.compact
    def __call__(self, token, step):
        rows, keep, first = step
        token = jnp.where(first[:, None], 0.0, token)
        x = jnp.concatenate([token[:, None, :], rows], axis=1)
        keep = jnp.concatenate([jnp.ones_like(keep[:, :1]), keep], axis=1)
        for _ in range(self.num_layers):
            x = EncoderBlock(self.width, self.num_heads, self.ff_dim, self.attention)(x, keep)
        return x[:, 0], x


def _scanned(transformer: TokenTransformer) -> nn.Module:
    """``transformer`` scanned over a leading time axis, one parameter set for every step."""
    scan = nn.scan(
        TokenTransformer,
        variable_broadcast="params",
        split_rngs={"params": False},
        in_axes=0,
        out_axes=0,
    )
    return scan(
        transformer.width,
        transformer.num_layers,
        transformer.num_heads,
        transformer.ff_dim,
        transformer.attention,
        name="transformer",
    )


class EntityTransformer(nn.Module):
    """Entity rows embedded, then attended over by a recurrent token, step by step:
    ``(token [N, H], rows [T, N, R, F], first [T, N], keep [T, N, R] | None,
    extra [T, N, X, H] | None) -> (token [N, H], tokens [T, N, 1 + R + X, H])``; ``extra`` rows
    join after embedding (the mixer's agent tokens), ``keep`` marks the rows softmax attention
    may read (default: all)."""

    width: int = 32
    num_layers: int = 2
    num_heads: int = 8
    ff_dim: int = 128
    init_scale: float = 1.0
    embed_relu: bool = False
    attention: str = "linear"

    @nn.compact
    def __call__(self, token, rows, first, keep=None, extra=None):
        embedded = Embedder(self.width, self.init_scale, self.embed_relu)(rows)
        if keep is None:
            keep = jnp.ones(embedded.shape[:-1], bool)
        if extra is not None:
            embedded = jnp.concatenate([embedded, extra], axis=2)
            keep = jnp.concatenate([keep, jnp.ones(extra.shape[:-1], bool)], axis=2)
        step = TokenTransformer(
            self.width, self.num_layers, self.num_heads, self.ff_dim, self.attention
        )
        return _scanned(step)(token, (embedded, keep, first))


class TransformerAgent(nn.Module):
    """Q-values of entity observations over time (see the module docstring).

    ``__call__(token [N, H], obs [T, N, E, F], first [T, N], action_rows [N, n] | None)
    -> (token [N, H], tokens [T, N, H], q [T, N, n])``; ``body.init_scale`` is also the Q
    layers' orthogonal gain.
    """

    num_actions: int
    body: EntityTransformer = EntityTransformer()

    @property
    def width(self) -> int:
        return self.body.width

    @nn.compact
    def __call__(self, token, obs, first, action_rows=None):
        keep = jnp.any(obs != 0.0, axis=-1)  # empty rows: absent, dead or unseen entities
        token, tokens = self.body(token, obs, first, keep)
        own = tokens[..., 0, :]
        init = orthogonal(self.body.init_scale)
        q = nn.Dense(self.num_actions, kernel_init=init, bias_init=BIAS, name="q")(own)
        if action_rows is None:
            return token, own, q
        # Actions tied to entity e read token 1 + e (token 0 is the agent's own).
        index = jnp.maximum(action_rows, -1) + 1  # [N, n]
        picked = jnp.take_along_axis(tokens, index[None, :, :, None], axis=2)  # [T, N, n, H]
        tied = nn.Dense(1, kernel_init=init, bias_init=BIAS, name="q_entity")(picked)[..., 0]
        return token, own, jnp.where(action_rows >= 0, tied, q)


class TransformerMixer(nn.Module):
    """Monotonic mixing by a transformer over the world's entity rows and the agents' tokens.

    ``__call__(agent_q [T, B, A], world [T, B, S * G], agent_states [T, B, A, H],
    first [T, B]) -> [T, B, 1]``; its own token starts at zero at ``T = 0``;
    ``body.init_scale`` is also the gain of its last bias layer.
    """

    world_shape: tuple[int, int]
    body: EntityTransformer = EntityTransformer()

    @nn.compact
    def __call__(self, agent_q, world, agent_states, first):
        steps, batch, num_agents = agent_q.shape
        world = world.reshape((steps, batch, *self.world_shape))
        token = jnp.zeros((batch, self.body.width), agent_q.dtype)
        # The mixer masks nothing (as JaxMARL's).
        _, tokens = self.body(token, world, first, extra=agent_states)
        hyper = tokens[..., 0, :]  # [T, B, H]
        w1 = jnp.abs(tokens[..., -num_agents:, :])  # [T, B, A, H]
        hidden = nn.elu(jnp.einsum("tba,tbah->tbh", agent_q, w1) + hyper)
        init = orthogonal(self.body.init_scale)
        b2 = nn.Dense(1, kernel_init=init, bias_init=BIAS)(nn.relu(hyper))
        return jnp.sum(hidden * jnp.abs(hyper), axis=-1, keepdims=True) + b2


@dataclasses.dataclass(frozen=True)
class TransformerQNetwork:
    """``QNetwork``'s interface over a ``TransformerAgent`` and any mixer, so the Q-learning
    core (``q_policies``, ``td_loss``) runs it unchanged.

    Parameters: ``{"agent": ..., "mixer": ...}``. Observations are entity matrices
    ``[T, B, A, E, F]``; the recurrent state is each agent's token ``[B, A, H]``.

    Attributes:
        agent: the ``TransformerAgent``.
        mixer: a ``TransformerMixer`` or any module of ``jaxmarl.networks.mixers``.
        num_agents: ``A``.
        action_rows: ``[A, n]`` int, the entity row each action reads (-1: the agent's own
            token), or ``None`` (every action reads the agent's token).
    """

    agent: TransformerAgent
    mixer: nn.Module
    num_agents: int
    action_rows: np.ndarray | None = dataclasses.field(default=None, hash=False, compare=False)

    @property
    def mixer_reads_agent_states(self) -> bool:
        return isinstance(self.mixer, TransformerMixer)

    def init(self, key: jax.Array, obs: jax.Array, world_state: jax.Array) -> Params:
        """Parameters from example inputs ``obs [B, A, E, F]`` and ``world_state [B, W]``."""
        agent_key, mixer_key = jax.random.split(key)
        num_envs = obs.shape[0]
        carry = self.initial_carry(num_envs)
        agent = self.agent.init(agent_key, *self._agent_inputs(carry, obs[None], None))
        if self.mixer_reads_agent_states:
            agent_q = jnp.zeros((1, *obs.shape[:2]), jnp.float32)
            states = jnp.zeros((1, *carry.shape), jnp.float32)
            first = jnp.ones((1, num_envs), bool)
            mixer = self.mixer.init(mixer_key, agent_q, world_state[None], states, first)
        else:
            mixer = init_mixer(self.mixer, mixer_key, obs.shape[:2], world_state)
        return {"agent": agent["params"], "mixer": mixer.get("params", {})}

    def initial_carry(self, num_envs: int) -> jax.Array:
        """Zero tokens ``[B, A, H]``."""
        return jnp.zeros((num_envs, self.num_agents, self.agent.width), jnp.float32)

    def _agent_inputs(self, carry, obs, first):
        """``carry [B, A, H]``, ``obs [T, B, A, ...]``, ``first [T, B]`` (``None``: no
        resets) flattened into the agent's batch ``N = B * A`` (agents fastest)."""
        steps, num_envs, num_agents = obs.shape[:3]
        n = num_envs * num_agents
        flat_obs = obs.reshape((steps, n, *obs.shape[3:]))
        if first is None:
            flat_first = jnp.zeros((steps, n), bool)
        else:
            flat_first = jnp.repeat(first, num_agents, axis=1)
        rows = None
        if self.action_rows is not None:
            rows = jnp.tile(jnp.asarray(self.action_rows, jnp.int32), (n // self.num_agents, 1))
        return carry.reshape((n, -1)), flat_obs, flat_first, rows

    def _forward(self, params, carry, obs, first):
        token, states, q = self.agent.apply(
            {"params": params["agent"]}, *self._agent_inputs(carry, obs, first)
        )
        shape = (*obs.shape[:3], -1)
        return token.reshape(carry.shape), q.reshape(shape), states.reshape(shape)

    def q_values(self, params, carry, obs, first):
        """``(carry [B, A, H], q [T, B, A, n])`` of ``obs [T, B, A, E, F]``."""
        carry, q, _ = self._forward(params, carry, obs, first)
        return carry, q

    def q_values_and_states(self, params, carry, obs, first):
        """``(q, states [T, B, A, H])``: the agents' tokens after each step."""
        _, q, states = self._forward(params, carry, obs, first)
        return q, states

    def q_values_after(self, params, states, obs, with_states: bool = False):
        """Q-values of ``obs [T, B, A, E, F]``, each one step on from ``states [T, B, A, H]``
        (independent continuations, run as one step of ``T * B`` envs); with ``with_states``
        also the tokens they reach."""
        steps, num_envs = obs.shape[:2]
        flat_obs = obs.reshape((1, steps * num_envs, *obs.shape[2:]))
        carry = states.reshape((steps * num_envs, *states.shape[2:]))
        _, q, after = self._forward(params, carry, flat_obs, None)
        q = q.reshape((*obs.shape[:3], -1))
        if with_states:
            return q, after.reshape(states.shape)
        return q

    def mix(
        self,
        params: Params,
        agent_q: jax.Array,
        world_state: jax.Array,
        greedy: jax.Array | None = None,
        key: jax.Array | None = None,
        agent_states: jax.Array | None = None,
        first: jax.Array | None = None,
    ) -> jax.Array:
        """``agent_q [T, B, A]``, ``world_state [T, B, W]`` -> ``[T, B, K]``. The transformer
        mixer also reads ``agent_states [T, B, A, H]`` and ``first [T, B]`` (its token is
        reset there); other mixers read ``greedy`` and ``key`` as in ``QNetwork.mix``."""
        if self.mixer_reads_agent_states:
            states = jax.lax.stop_gradient(agent_states)
            return self.mixer.apply(
                {"params": params["mixer"]}, agent_q, world_state, states, first
            )
        return apply_mixer(self.mixer, params, agent_q, world_state, greedy, key)
