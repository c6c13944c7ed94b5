"""Geometry, views, payoffs and argument checks shared by the three STORM environments.

Coordinates follow JaxMARL 0.2.0: a position is ``(x, y, direction)`` with ``x`` the first
grid index; direction ``d`` in 0..3 steps by ``STEP[d]``. Turning left adds one to the
direction, turning right subtracts one (modulo 4).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxmarl import random_unrolled as rng
from jaxmarl.env import MultiAgentEnv

# (dx, dy) of one step forward for directions 0..3.
STEP = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], dtype=np.int32)

DEFAULT_PAYOFF = (((3, 0), (5, 1)), ((3, 5), (0, 1)))


def move(pos: jax.Array, action: jax.Array, grid_size: int, codes: tuple[int, int, int]):
    """Turn or step every agent; ``codes`` are the (left, right, forward) action numbers.

    Args:
        pos: ``[N, 3]`` int32 positions ``(x, y, direction)``.
        action: ``[N]`` int32 actions.
        grid_size: side of the square board; steps off the board are clipped back onto it.
        codes: action numbers of turn left, turn right and step forward.

    Returns:
        ``(new_pos [N, 3] int32, moved [N] bool)``; ``moved`` is whether the cell changed (a
        step into the wall is no move, as in JaxMARL).
    """
    left, right, forward = codes
    direction = pos[:, 2]
    turn = jnp.where(action == left, 1, jnp.where(action == right, -1, 0))
    new_dir = (direction + turn) % 4
    step = jnp.asarray(STEP)[direction]
    xy = jnp.where((action == forward)[:, None], pos[:, :2] + step, pos[:, :2])
    xy = jnp.clip(xy, 0, grid_size - 1)
    moved = jnp.any(xy != pos[:, :2], axis=-1)
    return jnp.concatenate([xy, new_dir[:, None]], axis=-1), moved


def zap_targets(pos: jax.Array, grid_size: int) -> jax.Array:
    """``[N, 4, 2]`` int32 cells a zap reaches: one ahead, two ahead, ahead-right, ahead-left.

    One and two ahead are clipped onto the board; a diagonal cell off the board falls back to
    the cell one ahead (JaxMARL's rule, whose off-board test also looks at the direction
    component, so it fires for every direction ``>= grid_size``).
    """
    direction = pos[:, 2]
    xy = pos[:, :2]
    steps = jnp.asarray(STEP)
    ahead = steps[direction]
    one = jnp.clip(xy + ahead, 0, grid_size - 1)
    two = jnp.clip(xy + 2 * ahead, 0, grid_size - 1)

    def diagonal(side: jax.Array) -> jax.Array:
        cell = xy + ahead + steps[side]
        off = jnp.any((cell < 0) | (cell > grid_size - 1), axis=-1) | (direction > grid_size - 1)
        return jnp.where(off[:, None], one, cell)

    right = diagonal((direction + 1) % 4)
    left = diagonal((direction - 1) % 4)
    return jnp.stack([one, two, right, left], axis=1)


def _cell_ids(shape: tuple[int, ...]) -> jax.Array:
    """``[G, G']`` int32 flat index of every cell (row-major), compared against targets."""
    return jnp.asarray(np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape))


def write_cells(
    grid: jax.Array, cells: jax.Array, values: Any, where: jax.Array | None = None
) -> jax.Array:
    """``grid.at[cells[:, 0], cells[:, 1]].set(values)`` for in-board ``cells``, as selects.

    Writes go in order, so a later write to a cell wins, as in XLA's CPU scatter (a serial
    loop over the updates, which under ``vmap`` runs element by element and cannot fuse with
    anything; the selects here compile to one fused pass over the board).

    Args:
        grid: ``[G, G']`` board.
        cells: ``[K, 2]`` int32 cells on the board.
        values: ``[K]`` or a scalar, the values written.
        where: ``[K]`` bool, which writes happen (default: all).
    """
    ids = _cell_ids(grid.shape)
    target = cells[:, 0] * grid.shape[1] + cells[:, 1]
    values = jnp.broadcast_to(jnp.asarray(values, grid.dtype), target.shape)
    for k in range(cells.shape[0]):
        hit = ids == target[k]
        if where is not None:
            hit = hit & where[k]
        grid = jnp.where(hit, values[k], grid)
    return grid


def read_cells(grid: jax.Array, cells: jax.Array) -> jax.Array:
    """``grid[cells[:, 0], cells[:, 1]]`` (``[K]``) for in-board ``cells``, as a masked sum
    (fuses under ``vmap``, where a gather of a few cells does not)."""
    ids = _cell_ids(grid.shape)
    target = cells[:, 0] * grid.shape[1] + cells[:, 1]
    hit = ids[None] == target[:, None, None]
    return jnp.sum(jnp.where(hit, grid[None], jnp.zeros((), grid.dtype)), axis=(1, 2))


def mark_zapped(
    grid: jax.Array, targets: jax.Array, zaps: jax.Array, empty: int, mark: int
) -> jax.Array:
    """``grid`` with every empty cell in the beam of a zapping agent set to ``mark``.

    Args:
        grid: ``[G, G]`` int32 cell contents.
        targets: ``[N, 4, 2]`` int32 beam cells per agent (``zap_targets``, on the board).
        zaps: ``[N]`` bool, which agents zap.
    """
    ids = _cell_ids(grid.shape)
    cells = targets.reshape((-1, 2))
    beam = jnp.repeat(zaps, targets.shape[1])
    hit = (ids[None] == (cells[:, 0] * grid.shape[1] + cells[:, 1])[:, None, None]) & beam[
        :, None, None
    ]
    return jnp.where(jnp.any(hit, axis=0) & (grid == empty), mark, grid)


def view_corner(pos: jax.Array, view_size: int) -> tuple[jax.Array, jax.Array]:
    """Top-left corner, in the padded grid, of the ``view_size`` square an agent sees.

    The view lies ahead of the agent: it stands in the middle of the view's near edge.
    The grid is padded by ``view_size - 1`` cells on every side.
    """
    x, y, direction = pos[0], pos[1], pos[2]
    pad = view_size - 1
    half = view_size // 2
    x0 = x + pad - jnp.where((direction == 0) | (direction == 2), half, 0)
    x0 = x0 - jnp.where(direction == 3, view_size - 1, 0)
    y0 = y + pad - jnp.where((direction == 1) | (direction == 3), half, 0)
    y0 = y0 - jnp.where(direction == 2, view_size - 1, 0)
    return x0, y0


def _turned_window_index(view_size: int) -> np.ndarray:
    """``[4, V, V, 2]`` int32: for each direction, the window cell each view cell shows.

    The view of an agent facing ``d`` is its window turned by ``rot90(k=d)``; reading the
    turned cells straight from the padded grid replaces four rotations and a select.
    """
    flat = np.arange(view_size * view_size).reshape(view_size, view_size)
    turned = np.stack([np.rot90(flat, k=k) for k in range(4)])
    return np.stack([turned // view_size, turned % view_size], axis=-1).astype(np.int32)


def egocentric_view(grid: jax.Array, pos: jax.Array, view_size: int, wall: int) -> jax.Array:
    """``[V, V]`` cells ahead of an agent, turned so that the agent always looks the same way.

    Equal to ``rot90(padded[x0:x0 + V, y0:y0 + V], k=direction)`` with ``padded`` the grid
    padded by ``V - 1`` cells of ``wall`` on every side and ``(x0, y0) = view_corner(...)``
    (JaxMARL's pad, slice and turn). Read as one gather from ``grid`` itself, cells off the
    board reading ``wall``: under ``vmap`` the padded copy was a pass of its own.
    """
    x0, y0 = view_corner(pos, view_size)
    cells = jnp.asarray(_turned_window_index(view_size))[pos[2]]
    x = x0 + cells[..., 0] - (view_size - 1)
    y = y0 + cells[..., 1] - (view_size - 1)
    rows, cols = grid.shape
    off = (x < 0) | (x >= rows) | (y < 0) | (y >= cols)
    flat = jnp.clip(x, 0, rows - 1) * cols + jnp.clip(y, 0, cols - 1)
    return jnp.where(off, jnp.asarray(wall, grid.dtype), grid.reshape(-1)[flat])


def two_one_hots(first: jax.Array, size: int, second: jax.Array, second_size: int) -> jax.Array:
    """``[..., size + second_size]`` float32: ``one_hot(first, size)`` followed by
    ``one_hot(second, second_size)`` (indices out of range give zeros), as one comparison
    against the channel number rather than two one-hots and a concatenation."""
    channel = jnp.arange(size + second_size)
    # A second index below 0 lands below ``size``, where only ``first`` is compared.
    target = jnp.where(channel < size, first[..., None], second[..., None] + size)
    return (target == channel).astype(jnp.float32)


def swap_codes(codes: jax.Array, a: int, b: int) -> jax.Array:
    """``codes`` with the values ``a`` and ``b`` exchanged (a channel swap before one-hot)."""
    if a == b:
        return codes
    return jnp.where(codes == a, b, jnp.where(codes == b, a, codes))


def flat_observations(obs: dict, agents: list[str]) -> jax.Array:
    """``[D]`` float32: every agent's observation leaves (``Dict`` ones too), flattened."""
    return jnp.concatenate(
        [jnp.ravel(leaf) for agent in agents for leaf in jax.tree.leaves(obs[agent])]
    )


RANK_LIMIT = 32  # largest n whose permutation is ranked rather than sorted (benchmarks: STORM)
# Largest n ranked item by item; above it (8-player ``storm``'s 28 pairs) one comparison table.
ITEMWISE_RANK_LIMIT = 21


def _sort_rounds(n: int) -> int:
    """How many sorts ``jax.random.permutation`` does for ``n`` items (JAX's stop rule)."""
    return int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))


def _shuffle_ranks(key: jax.Array, n: int) -> list[jax.Array]:
    """``n`` int32 scalars: where ``jax.random.permutation(key, n)`` puts each item (one sort
    round).

    JAX sorts the items by 32 random bits drawn from the second half of ``split(key)``, stably;
    an item's place is the number of items whose bits are smaller, or equal with a lower
    index. Counting them is a few hundred comparisons, which is much cheaper under ``vmap`` on
    a CPU than XLA's sort, and gives the very same permutation. They are written item by item
    (scalars, not an ``[n, n]`` table): under ``vmap`` each is then one operation over the
    batch, which XLA vectorizes, where a table's rows would be vectorized over their ``n``
    entries only (measured: STORM section of ``benchmarks/results/env_throughput.md``).
    """
    _, sort_key = rng.split(key)
    bits = rng.bits32(sort_key, n)
    items = [bits[i] for i in range(n)]
    return [
        sum(
            (
                ((items[j] <= items[i]) if j < i else (items[j] < items[i])).astype(jnp.int32)
                for j in range(n)
                if j != i
            ),
            jnp.int32(0),
        )
        for i in range(n)
    ]


def permutation(key: jax.Array, n: int) -> jax.Array:
    """``[n]`` int32, equal to ``jax.random.permutation(key, n)``.

    Up to ``RANK_LIMIT`` items it ranks the random keys instead of sorting them (faster under
    ``vmap`` on a CPU): item by item up to ``ITEMWISE_RANK_LIMIT``, then with one comparison
    table; above ``RANK_LIMIT`` the comparisons grow quadratically, so it calls JAX.
    """
    if n > RANK_LIMIT or _sort_rounds(n) != 1:
        return jax.random.permutation(key, n).astype(jnp.int32)
    if n > ITEMWISE_RANK_LIMIT:
        return _permutation_by_table(key, n)
    ranks = _shuffle_ranks(key, n)
    # Ranks are a permutation: slot j holds the one item ranked j (a sum of selects rather
    # than a scatter, which is a serial loop on a CPU).
    return jnp.stack(
        [sum(jnp.where(rank == j, i, 0) for i, rank in enumerate(ranks)) for j in range(n)]
    ).astype(jnp.int32)


def _permutation_by_table(key: jax.Array, n: int) -> jax.Array:
    """``permutation`` from an ``[n, n]`` table of the same comparisons as ``_shuffle_ranks``.

    The item-by-item form is thousands of scalar operations at this size, which XLA takes
    far longer to compile (8-player ``storm``) while the table runs about as fast.
    """
    _, sort_key = rng.split(key)
    bits = rng.bits32(sort_key, n)
    item = jnp.arange(n, dtype=jnp.int32)
    # before[i, j]: item j sorts before item i (smaller bits, or equal bits and lower index).
    before = (bits[None, :] < bits[:, None]) | (
        (bits[None, :] == bits[:, None]) & (item[None, :] < item[:, None])
    )
    rank = jnp.sum(before, axis=1, dtype=jnp.int32)
    # Slot j holds the one item ranked j.
    return jnp.sum(jnp.where(rank[None, :] == item[:, None], item[None, :], 0), axis=1).astype(
        jnp.int32
    )


def first_of_permutation(key: jax.Array, n: int) -> jax.Array:
    """``[]`` int32, equal to ``jax.random.permutation(key, n)[0]`` (JaxMARL's ``choice``)."""
    if _sort_rounds(n) != 1:
        return jax.random.permutation(key, n)[0].astype(jnp.int32)
    _, sort_key = rng.split(key)
    return jnp.argmin(rng.bits32(sort_key, n)).astype(jnp.int32)


def sorted_subset(key: jax.Array, n: int, size: int, count: int) -> jax.Array:
    """``[count]`` int32: the first ``count`` of ``sorted(jax.random.permutation(key, n)[:size])``.

    A uniform ``size``-subset of ``range(n)`` in increasing order, cut to ``count`` items.
    """
    if _sort_rounds(n) != 1:
        return jnp.sort(jax.random.permutation(key, n)[:size])[:count].astype(jnp.int32)
    chosen = [rank < size for rank in _shuffle_ranks(key, n)]
    # Walk the items in order, counting the chosen ones seen (item by item, as the ranks).
    found = jnp.int32(0)
    first = [jnp.int32(0)] * count
    for item in range(n):
        first = [jnp.where(chosen[item] & (found == k), item, f) for k, f in enumerate(first)]
        found = found + chosen[item].astype(jnp.int32)
    return jnp.stack(first)


def pair_reward(inv_a: jax.Array, inv_b: jax.Array, payoff: jax.Array) -> jax.Array:
    """``[2]`` float32 rewards of an interaction: ``share_a @ payoff[k] @ share_b`` for k=0, 1.

    ``share`` is an inventory divided by its total (JaxMARL's mixed strategy); an empty
    inventory counts as all zeros (interactions need a coin on both sides, so this only
    keeps masked-out values finite).
    """
    share_a = inv_a / jnp.maximum(inv_a.sum(), 1).astype(inv_a.dtype)
    share_b = inv_b / jnp.maximum(inv_b.sum(), 1).astype(inv_b.dtype)
    return jnp.stack([share_a @ payoff[0] @ share_b, share_a @ payoff[1] @ share_b])


def check_payoff(env: str, payoff_matrix: Any) -> np.ndarray:
    """``payoff_matrix`` as a float32 ``[2, 2, 2]`` array, or a ``ValueError`` saying why not."""
    try:
        payoff = np.asarray(payoff_matrix, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"{env}: payoff_matrix must be numbers shaped [2, 2, 2] (one 2x2 matrix per "
            f"player, rows and columns indexed by coin type), got {payoff_matrix!r}"
        ) from error
    if payoff.shape != (2, 2, 2) or not np.isfinite(payoff).all():
        raise ValueError(
            f"{env}: payoff_matrix must be finite numbers shaped [2, 2, 2] (one 2x2 matrix "
            f"per player, rows and columns indexed by coin type), e.g. "
            f"{[[list(r) for r in m] for m in DEFAULT_PAYOFF]}; got shape {payoff.shape}"
        )
    return payoff


def check_positive_int(env: str, name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an ``int`` ``>= minimum``, or a ``ValueError`` naming the argument."""
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{env}: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def picked_up(under: jax.Array, first: int, second: int) -> jax.Array:
    """``[2]`` int32: coins of each type (``first``, ``second`` cell codes) picked up in a step,
    from the cell codes ``under`` ``[N]`` the players stepped onto."""
    return jnp.stack([jnp.sum(under == first), jnp.sum(under == second)]).astype(jnp.int32)


def coin_infos(collected: jax.Array) -> dict[str, jax.Array]:
    """The social-dilemma infos of a state's ``collected`` ``[2]`` (coins of the payoff
    matrix's first and second type picked up so far in the outer episode)."""
    total = jnp.sum(collected)
    first = collected[0] / jnp.maximum(total, 1).astype(jnp.float32)
    return {
        "coop_coin_fraction": first.astype(jnp.float32),
        "coins_collected": total.astype(jnp.int32),
    }


class InnerOuterEnv(MultiAgentEnv):
    """A STORM env whose ``state.step`` counts the whole outer episode: the JaxMARL clocks."""

    num_inner_steps: int

    def inner_step(self, state: Any) -> jax.Array:
        """``[]`` int32: steps taken in the current inner game (JaxMARL's ``state.step``)."""
        return state.step % self.num_inner_steps

    def outer_step(self, state: Any) -> jax.Array:
        """``[]`` int32: inner games completed in this outer episode (JaxMARL's ``outer_t``)."""
        return state.step // self.num_inner_steps

    def finish_step(self, next_state: Any, restart: Any, rewards: jax.Array) -> tuple:
        """The end of every STORM step: at an inner boundary the board restarts (``restart``,
        built for ``next_state.step``) and pays nothing; the outer episode ends at
        ``max_steps``. Returns the step's ``(obs, state, rewards by agent, dones, infos)``,
        infos ``inner_episode_done`` and ``coin_infos``; the count of coins picked up
        (``collected``) carries over inner games."""
        inner_done = next_state.step % self.num_inner_steps == 0
        restart = restart.replace(collected=next_state.collected)
        next_state = jax.tree.map(
            lambda fresh, kept: jnp.where(inner_done, fresh, kept), restart, next_state
        )
        outer_done = next_state.step >= self.max_steps
        next_state = next_state.replace(done=outer_done)
        rewards = jnp.where(inner_done, 0.0, rewards).astype(jnp.float32)
        dones = {agent: outer_done for agent in self.agents}
        dones["__all__"] = outer_done
        by_agent = {agent: rewards[i] for i, agent in enumerate(self.agents)}
        infos = {"inner_episode_done": inner_done, **coin_infos(next_state.collected)}
        return self.get_obs(next_state), next_state, by_agent, dones, infos
