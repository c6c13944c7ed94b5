"""Off-belief learning's (OBL) R2D2 Q-network for 2-player Hanabi, for pretrained weights.

Hu et al. (2021) trained Hanabi agents by off-belief learning, level by level (OBL1 to OBL5);
their recurrent Q-networks are the usual partners for zero-shot coordination studies. JaxMARL
0.2.0 published those weights converted to flax (``huggingface.co/mttga/obl-r2d2-flax``, one
safetensors file per agent, read with :func:`jaxmarl.wrappers.baselines.load_params`). This
module has the parameter tree those files hold, name for name and shape for shape, so they load
here unchanged and play on this project's Hanabi, whose default observation (``card_knowledge=
"v0_belief"``) is the one they were trained on.

The network (inference only; ``[B]`` is any batch of agents):

* the private stream reads the whole observation ``[B, 658]``: three ReLU layers of
  ``hid_dim`` (``priv_net_dense_0..2``);
* the public stream reads the observation without the other players' hands
  (``obs[..., private_obs_size:]``, 533 features): ``num_ff_layer`` ReLU layers
  (``publ_net_dense_<i>``), then ``num_lstm_layer`` stacked LSTM cells (``lstm/l<i>``, flax's
  ``LSTMCell`` gate layout);
* their elementwise product goes to the advantage head ``fc_a`` (``out_dim`` = 21 moves).

Only the advantage head is built: OBL's value head adds the same number to every move, so it
never changes the greedy move. The recurrent carry is ``(c, h)``, each
``[num_lstm_layer, B, hid_dim]``, as JaxMARL's ``initialize_carry`` makes it.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from jaxmarl.env import jit_method

Carry = tuple[jax.Array, jax.Array]  # (c, h), each [num_lstm_layer, B, hid_dim]

__all__ = ["OBLAgentR2D2"]


class _StackedLSTM(nn.Module):
    """``num_layers`` LSTM cells (``l0``, ``l1``, ...), each feeding the next one's input."""

    num_layers: int
    features: int

    @nn.compact
    def __call__(self, carry: Carry, inputs: jax.Array) -> tuple[Carry, jax.Array]:
        cells, hiddens = carry
        new_cells, new_hiddens = [], []
        for layer in range(self.num_layers):
            cell = nn.LSTMCell(self.features, name=f"l{layer}")
            (c, h), inputs = cell((cells[layer], hiddens[layer]), inputs)
            new_cells.append(c)
            new_hiddens.append(h)
        return (jnp.stack(new_cells), jnp.stack(new_hiddens)), inputs


class OBLAgentR2D2(nn.Module):
    """OBL's R2D2 Q-network (JaxMARL's ``OBLAgentR2D2``: same fields, parameters and methods).

    Attributes:
        hid_dim: width of every layer and LSTM cell (512 in the published weights).
        out_dim: number of moves (21 for 2-player Hanabi).
        num_lstm_layer: stacked LSTM cells in the public stream (2 published).
        num_ff_layer: ReLU layers before the LSTM in the public stream (1 published).
        private_obs_size: leading observation features the public stream does not see: the
            other players' hands, ``(num_players - 1) * hand_size * 25`` = 125 for 2 players.
    """

    hid_dim: int = 512
    out_dim: int = 21
    num_lstm_layer: int = 2
    num_ff_layer: int = 1
    private_obs_size: int = 125

    @nn.compact
    def __call__(self, carry: Carry, inputs: tuple[jax.Array, jax.Array]):
        """``(carry, (private_obs [B, 658], public_obs [B, 533]))`` to
        ``(carry, advantages [B, 21])``."""
        private, public = inputs
        for i in range(3):
            private = nn.relu(nn.Dense(self.hid_dim, name=f"priv_net_dense_{i}")(private))
        for i in range(self.num_ff_layer):
            public = nn.relu(nn.Dense(self.hid_dim, name=f"publ_net_dense_{i}")(public))
        carry, public = _StackedLSTM(self.num_lstm_layer, self.hid_dim, name="lstm")(carry, public)
        return carry, nn.Dense(self.out_dim, name="fc_a")(private * public)

    def advantages(self, params, carry: Carry, obs: jax.Array) -> tuple[Carry, jax.Array]:
        """The advantage of every move, ``[B, out_dim]``, from whole observations ``[B, 658]``."""
        return self.apply(params, carry, (obs, obs[..., self.private_obs_size :]))

    @jit_method
    def greedy_act(self, params, carry: Carry, inputs: tuple[jax.Array, jax.Array]):
        """``(carry, (obs [B, 658], legal [B, 21])) -> (carry, move [B])``: the legal move of
        highest advantage (the no-op, when it is the only legal move, off turn)."""
        obs, legal = inputs
        carry, advantages = self.advantages(params, carry, obs)
        return carry, jnp.argmax(jnp.where(legal > 0, advantages, -jnp.inf), axis=-1)

    @nn.nowrap
    def initialize_carry(self, rng: jax.Array, batch_dims: tuple[int, ...]) -> Carry:
        """Zero LSTM state for ``batch_dims`` agents (``rng`` is unused, kept for JaxMARL)."""
        del rng
        shape = (self.num_lstm_layer, *batch_dims, self.hid_dim)
        return jnp.zeros(shape, jnp.float32), jnp.zeros(shape, jnp.float32)
