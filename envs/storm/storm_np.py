"""STORM in the matrix for N players (JaxMARL 0.2.0's ``storm_np``, ``InTheMatrix``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import jit_method
from jaxmarl.typing import Actions, Observations

from .common import (
    DEFAULT_PAYOFF,
    InnerOuterEnv,
    check_payoff,
    check_positive_int,
    egocentric_view,
    move,
    pair_reward,
    permutation,
    picked_up,
    zap_targets,
)

# Actions (JaxMARL's numbers).
LEFT, RIGHT, FORWARD, STAY, ZAP_FORWARD, ZAP_AHEAD, ZAP_RIGHT, ZAP_LEFT = range(8)
# Grid cell contents (JaxMARL's numbers); player i is FIRST_PLAYER + i.
EMPTY, WALL, ZAPPED, RED_COIN, BLUE_COIN = range(5)
FIRST_PLAYER = 5
NUM_CHANNELS = 14  # wall, zap mark, red coin, blue coin + 10 player features
SHOWN_FREEZE_SLOTS = 12  # JaxMARL reads at most 12 freeze entries when showing inventories


@struct.dataclass
class StormNpState:
    """Everything that changes in ``storm_np``.

    Attributes:
        pos: ``[N, 3]`` int32, ``(x, y, direction)`` of each player.
        grid: ``[G, G]`` int32 cell contents (0 empty, 2 zap mark, 3 red coin, 4 blue coin,
            ``5 + i`` player ``i``).
        inventory: ``[N, 2]`` int32 coins held (red, blue).
        red_coins: ``[C, 2]`` int32 cells of the red coins.
        blue_coins: ``[C, 2]`` int32 cells of the blue coins.
        freeze: ``[N, N]`` int32; ``freeze[i, j] > 0``: i and j interacted and are frozen for
            that many more steps; -1 initially.
        collected: ``[2]`` int32 coins picked up by all players in the outer episode
            (red, blue; ``infos["coop_coin_fraction"]`` and ``["coins_collected"]``).
        step: ``[]`` int32, steps taken in the outer episode.
        done: ``[]`` bool, whether the outer episode has ended.
    """

    pos: jax.Array
    grid: jax.Array
    inventory: jax.Array
    red_coins: jax.Array
    blue_coins: jax.Array
    freeze: jax.Array
    collected: jax.Array
    step: jax.Array
    done: jax.Array


class InTheMatrix(InnerOuterEnv):
    """N players collect coins on a ``grid_size`` board and zap each other to play matrix games.

    Each player sees an ``obs_size`` window ahead of itself, turned with it. Walking onto a
    coin takes it. A player holding a coin zaps one of four cells (one ahead, two ahead,
    ahead-right, ahead-left: one action each); a zap that hits a free player holding a coin
    is an interaction (the nearer zapper wins a contested target; ties are drawn at random).
    Zapper and target are paid from the matrix game on their inventory shares and frozen
    for ``freeze_penalty`` steps, after which frozen players respawn at random free cells
    with empty hands and taken coins are laid out again at random free cells.

    Episodes are nested: an inner game lasts ``num_inner_steps`` steps and ends with a fresh
    board and no reward on its last step; the outer episode lasts ``num_outer_steps`` inner
    games (``max_steps`` = their product, reported as ``infos["truncated"]``).
    ``infos["inner_episode_done"]`` marks inner boundaries and ``infos["coin_ratio"]`` is
    JaxMARL's share of red coins in the mean inventory after the step (0 on an inner game's
    last step, which reads the restarted board). ``infos["coins_collected"]`` counts the coins
    picked up in the outer episode and ``infos["coop_coin_fraction"]`` is the share of red
    coins (the payoff matrix's first row) among them. The rules, quirks included, are
    JaxMARL 0.2.0's; ``README.md`` lists them and the deviations.

    Agents: ``"agent_0"`` .. ``"agent_{N-1}"`` (JaxMARL: integers 0 .. N-1).

    Observation (per agent, float32): ``[obs_size, obs_size, 14]`` (flat with ``cnn=False``):
    per cell one-hot wall, zap mark, red coin, blue coin, then JaxMARL's player features
    (self flag, other-player flag, 4 relative-direction channels, holds-a-coin flag, 2
    shown inventory counts, frozen flag).

    Action: ``Discrete(8)``: turn left, turn right, forward, stay, zap forward (one
    ahead), zap ahead (two ahead), zap right, zap left.

    State: ``StormNpState``.

    >>> import jax, jaxmarl
    >>> env = jaxmarl.make("storm_np", num_agents=4)
    >>> obs, state = env.reset(jax.random.key(0))
    >>> actions = {agent: jnp.int32(2) for agent in env.agents}
    >>> obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    observations_from_state = True

    def __init__(
        self,
        num_inner_steps: int = 152,
        num_outer_steps: int = 1,
        fixed_coin_location: bool = True,
        num_agents: int = 2,
        payoff_matrix: Any = DEFAULT_PAYOFF,
        freeze_penalty: int = 5,
        grid_size: int = 8,
        obs_size: int = 5,
        num_coins: int = 6,
        cnn: bool = True,
    ) -> None:
        """Build the game.

        Args:
            num_inner_steps: steps per inner game (>= 1).
            num_outer_steps: inner games per outer episode (>= 1).
            fixed_coin_location: accepted for JaxMARL compatibility; JaxMARL's
                ``InTheMatrix`` ignores it (coins are always placed at random).
            num_agents: players (>= 2).
            payoff_matrix: ``[2, 2, 2]``: the target of a zap gets ``share_target @
                payoff_matrix[0] @ share_zapper``-based rewards as JaxMARL assigns them (see
                ``README.md``); rows and columns are red and blue coins.
            freeze_penalty: steps interacting players stay frozen (>= 1).
            grid_size: side of the square board (>= 2).
            obs_size: side of each player's view, at most ``grid_size``.
            num_coins: coins of each colour (>= 1).
            cnn: observations as ``[obs_size, obs_size, 14]`` grids (else flattened).

        Raises:
            ValueError: fewer than 2 players, a view larger than the board, more players and
                coins than cells, or another bad size, count or payoff matrix.
        """
        name = type(self).__name__
        num_agents = check_positive_int(name, "num_agents", num_agents, minimum=2)
        self.grid_size = check_positive_int(name, "grid_size", grid_size, minimum=2)
        self.obs_size = check_positive_int(name, "obs_size", obs_size)
        self.num_coins = check_positive_int(name, "num_coins", num_coins)
        if self.obs_size > self.grid_size:
            raise ValueError(
                f"{name}: obs_size={self.obs_size} is larger than the grid "
                f"(grid_size={self.grid_size}); pick obs_size <= grid_size"
            )
        if num_agents + 2 * self.num_coins > self.grid_size**2:
            raise ValueError(
                f"{name}: {num_agents} players and 2 x {self.num_coins} coins do not fit on a "
                f"{self.grid_size}x{self.grid_size} grid ({self.grid_size**2} cells); raise "
                f"grid_size or lower num_agents / num_coins"
            )
        super().__init__(num_agents=num_agents)
        self.num_inner_steps = check_positive_int(name, "num_inner_steps", num_inner_steps)
        self.num_outer_steps = check_positive_int(name, "num_outer_steps", num_outer_steps)
        self.freeze_penalty = check_positive_int(name, "freeze_penalty", freeze_penalty)
        self.payoff_matrix = check_payoff(name, payoff_matrix)
        self.fixed_coin_location = bool(fixed_coin_location)
        self.cnn = bool(cnn)
        self.max_steps = self.num_inner_steps * self.num_outer_steps
        g = self.grid_size
        # JaxMARL's cell list: entry k is the cell (k % G, k // G).
        k = np.arange(g * g)
        self._cells = np.stack([k % g, k // g], axis=1).astype(np.int32)
        shape = (
            (self.obs_size, self.obs_size, NUM_CHANNELS)
            if self.cnn
            else (self.obs_size**2 * NUM_CHANNELS,)
        )
        self.observation_spaces = {
            agent: spaces.Box(0.0, np.inf, shape, jnp.float32) for agent in self.agents
        }
        self.action_spaces = {agent: spaces.Discrete(8) for agent in self.agents}

    @property
    def _codes(self) -> jax.Array:
        return FIRST_PLAYER + jnp.arange(self.num_agents, dtype=jnp.int32)

    def _is_player(self, code: jax.Array) -> jax.Array:
        return (code >= FIRST_PLAYER) & (code < FIRST_PLAYER + self.num_agents)

    # ----------------------------------------------------------------- reset
    def _fresh_state(self, key: jax.Array, step: jax.Array) -> StormNpState:
        n, c = self.num_agents, self.num_coins
        _, layout_key = jax.random.split(key)
        cells = jnp.asarray(self._cells)[permutation(layout_key, len(self._cells))]
        red, blue = cells[n : n + c], cells[n + c : n + 2 * c]
        directions = jax.random.randint(layout_key, (n,), 0, 3, dtype=jnp.int8)
        pos = jnp.concatenate([cells[:n], directions.astype(jnp.int32)[:, None]], axis=-1)
        grid = jnp.zeros((self.grid_size, self.grid_size), jnp.int32)
        grid = grid.at[red[:, 0], red[:, 1]].set(RED_COIN).at[blue[:, 0], blue[:, 1]].set(BLUE_COIN)
        grid = grid.at[pos[:, 0], pos[:, 1]].set(self._codes)
        return StormNpState(
            pos=pos,
            grid=grid,
            inventory=jnp.zeros((n, 2), jnp.int32),
            red_coins=red,
            blue_coins=blue,
            freeze=jnp.full((n, n), -1, jnp.int32),
            collected=jnp.zeros((2,), jnp.int32),
            step=step,
            done=jnp.bool_(False),
        )

    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, StormNpState]:
        state = self._fresh_state(key, jnp.int32(0))
        return self.get_obs(state), state

    # ----------------------------------------------------------------- step
    def step_env(self, key: jax.Array, state: StormNpState, actions: Actions):
        action = jnp.stack([jnp.asarray(actions[a], jnp.int32) for a in self.agents])
        action = jnp.where(state.freeze.max(-1) > 0, STAY, action)
        new, moved = move(state.pos, action, self.grid_size, (LEFT, RIGHT, FORWARD))
        pos = self._resolve_collisions(key, state.pos, new, moved)

        under = state.grid[pos[:, 0], pos[:, 1]]
        inventory = state.inventory + jnp.stack([under == RED_COIN, under == BLUE_COIN], -1).astype(
            jnp.int32
        )
        grid = state.grid.at[state.pos[:, 0], state.pos[:, 1]].set(EMPTY)
        grid = grid.at[pos[:, 0], pos[:, 1]].set(self._codes)
        collected = state.collected + picked_up(under, RED_COIN, BLUE_COIN)
        moved_state = state.replace(pos=pos, grid=grid, inventory=inventory, collected=collected)

        rewards, grid, freeze = self._interact(key, moved_state, action)
        old_freeze = state.freeze
        freeze = jnp.where((freeze <= old_freeze) & (freeze > 0), freeze - 1, freeze)
        moved_state = moved_state.replace(grid=grid, freeze=freeze)
        thawed = (freeze == 0) & (old_freeze == 1)
        relaid = self._relayout(key, moved_state, jnp.any(thawed, axis=-1))
        next_state = jax.tree.map(
            lambda fresh, kept: jnp.where(jnp.any(thawed), fresh, kept), relaid, moved_state
        )
        next_state = next_state.replace(step=state.step + 1)

        restart = self._fresh_state(key, next_state.step)
        obs, next_state, rewards, dones, infos = self.finish_step(next_state, restart, rewards)
        mean_inventory = next_state.inventory.mean(axis=0)
        coin_ratio = jnp.clip(mean_inventory[0] / (mean_inventory.sum() + 1e-9), 0.0, 1.0)
        infos["coin_ratio"] = coin_ratio.astype(jnp.float32)
        return obs, next_state, rewards, dones, infos

    def _resolve_collisions(self, key, pos, new, moved):
        """JaxMARL's collision rule: settle collisions one group at a time, lowest index first.

        In a group with a player who did not move, one mover is sent back (the first
        non-mover's slot is freed, as JaxMARL does); if all moved, all but one random
        player are sent back. Groups are visited in a loop over the players; each visit
        draws from its own split of the key.
        """
        collide = jnp.all(new[:, None, :2] == new[None, :, :2], axis=-1)
        colliding = jnp.minimum(collide.sum(-1) - 1, 1)
        pending = jnp.maximum(colliding - (~moved).astype(jnp.int32), 0)

        def visit(index, carry):
            key, pending, collide, locs = carry
            group_key, key_next = jax.random.split(key)
            first = jnp.argmax(pending)
            group = collide[first]
            all_moved = jnp.all(~group | (pending == 1))
            stayed = group & (pending != 1) & ~all_moved
            stayed_index = jnp.where(jnp.any(stayed), jnp.argmax(stayed), 0)
            counts = jnp.cumsum(group)
            draw = jax.random.randint(group_key, (1,), 0, counts[-1])
            winner = jnp.argmax(counts > draw)
            back_random = group.at[winner].set(False)
            back_stayed = jnp.where(jnp.any(stayed), group.at[stayed_index].set(False), back_random)
            back = jnp.where(all_moved, back_random, back_stayed)
            settled = (
                key_next,
                jnp.clip(pending - group, 0, 1),
                collide.at[first].set(False),
                jnp.where(back[:, None], pos, locs),
            )
            # A loop over the players, as JaxMARL's scan; a visit only acts while its
            # player is still unsettled (select, not cond: under vmap they are the same).
            active = pending[index] > 0
            return jax.tree.map(lambda a, b: jnp.where(active, a, b), settled, carry)

        carry = (key, pending, collide, new)
        return jax.lax.fori_loop(0, self.num_agents, visit, carry)[3]

    def _interact(self, key, state: StormNpState, action):
        """Zaps: marks, interactions, rewards and the new freeze matrix (JaxMARL's rules)."""
        n = self.num_agents
        zaps = (action >= ZAP_FORWARD) & (action <= ZAP_LEFT)
        grid = jnp.where(state.grid == ZAPPED, EMPTY, state.grid)
        holding = state.inventory.sum(-1) > 0
        free = state.freeze.max(-1) <= 0
        targets = zap_targets(state.pos, self.grid_size)  # one, two, right, left
        seen = grid[targets[..., 0], targets[..., 1]]  # [N, 4]

        index = jnp.clip(seen - FIRST_PLAYER, 0, n - 1)
        valid = (
            self._is_player(seen) & (seen != self._codes[:, None]) & free[index] & holding[index]
        )
        # JaxMARL tests the zap-left action against the ahead-right cell.
        valid = valid.at[:, 3].set(valid[:, 2])
        slot = jnp.clip(action - ZAP_FORWARD, 0, 3)
        qualified = zaps & holding & free
        ready = valid[jnp.arange(n), slot] & qualified
        items = jnp.where(seen != EMPTY, seen, ZAPPED)  # [N, 4]

        chosen, new_freeze = self._settle_zaps(key, ready, action, state.freeze, items)
        target, freeze = (
            jnp.where(jnp.any(ready), chosen, 0),
            jnp.where(jnp.any(ready), new_freeze, state.freeze),
        )

        marked = grid
        for beam in range(4):
            cells = targets[:, beam]
            marked = marked.at[cells[:, 0], cells[:, 1]].set(
                jnp.where(qualified, items[:, beam], marked[cells[:, 0], cells[:, 1]])
            )
        grid = jnp.where(jnp.any(zaps), marked, grid)

        rewards = self._rewards(state.inventory, target)
        return rewards, grid, freeze

    def _settle_zaps(self, key, ready, action, freeze, items):
        """Who each zapper ends up hitting (a cell code, 0 for none) and the new freeze matrix."""
        n = self.num_agents
        _, forward_key, rest_key = jax.random.split(key, 3)
        forward = jnp.where((action == ZAP_FORWARD) & ready, items[:, 0], EMPTY)
        one_step = self._draw_winners(forward_key, forward)

        def beam(code, column):
            hit = jnp.where((action == code) & ready, items[:, column], EMPTY)
            return jnp.where((hit == one_step) & self._is_player(hit), EMPTY, hit)

        far = jnp.stack([beam(ZAP_AHEAD, 1), beam(ZAP_RIGHT, 2), beam(ZAP_LEFT, 3)], axis=1)
        far_zap = (action >= ZAP_AHEAD) & ready
        far_hit = jnp.where(far_zap, far[jnp.arange(n), jnp.clip(action - ZAP_AHEAD, 0, 2)], EMPTY)
        _, far_key = jax.random.split(rest_key)
        two_step = self._draw_winners(far_key, far_hit)

        free = freeze.max(-1) <= 0
        final = jnp.where(action == ZAP_FORWARD, one_step, two_step) * free
        target = jnp.clip(final - FIRST_PLAYER, 0, n - 1)
        final = jnp.where(self._is_player(final) & (freeze.max(-1)[target] > 0), EMPTY, final)
        hits = self._is_player(final)[:, None] & (
            jnp.arange(n)[None, :] == (final - FIRST_PLAYER)[:, None]
        )
        freeze = jnp.where(hits, self.freeze_penalty, freeze)
        freeze = jnp.where(hits.T, self.freeze_penalty, freeze)
        return final, freeze

    def _draw_winners(self, key, hit):
        """Among zappers hitting the same player, keep one drawn at random (JaxMARL's draw).

        Every zapper that hits a player starts a visit, even when alone; a visit draws among
        the zappers of the first unsettled target and clears the rest.
        """
        n = self.num_agents
        same = (hit[:, None] == hit[None, :]) & self._is_player(hit)[:, None]
        pending = jnp.clip(same.sum(-1), 0, 1)

        def visit(index, carry):
            key, pending, same, hit = carry
            draw_key, key_next = jax.random.split(key)
            first = jnp.argmax(pending > 0)
            group = same[first]
            members = jnp.nonzero(group, size=n, fill_value=-1)[0]
            draw = jax.random.randint(draw_key, (1,), 0, jnp.sum(members > -1))
            losers = group.at[members[draw]].set(False)
            cleared = jnp.where(group, 0, pending).at[first].set(0)
            settled = (
                key_next,
                cleared,
                same & (cleared > 0)[:, None],
                jnp.where(losers, EMPTY, hit),
            )
            active = pending[index] > 0
            return jax.tree.map(lambda a, b: jnp.where(active, a, b), settled, carry)

        return jax.lax.fori_loop(0, n, visit, (key, pending, same, hit))[3]

    def _rewards(self, inventory, target):
        """JaxMARL's reward assignment for zapper ``k`` hitting cell code ``target[k]``.

        ``value[k] = reward(target share, zapper share)``; the zapper gets the first entry of
        its target's own value row, the target the zapper's amount plus its second entry, the
        writes resolved as JaxMARL's scatter resolves them.
        """
        n = self.num_agents
        payoff = jnp.asarray(self.payoff_matrix)
        inventory = inventory.astype(jnp.float32)
        hit = self._is_player(target)
        victim = jnp.clip(target - FIRST_PLAYER, 0, n - 1)
        value = jax.vmap(lambda v, z: pair_reward(inventory[v], inventory[z], payoff))(
            victim, jnp.arange(n)
        )
        value = jnp.where(hit[:, None], value, 0.0)
        zapper = jnp.where(hit, value[victim, 0], 0.0)
        zapped = jnp.where(hit, zapper[victim] + value[:, 1], 0.0)
        zapped = jnp.where(hit, zapped, zapped[0])
        return zapper.at[jnp.maximum(target - FIRST_PLAYER, 0)].set(zapped)

    def _relayout(self, key, state: StormNpState, respawn):
        """Thawed players respawn and taken coins are laid out again, on free cells in a random
        order (JaxMARL's ``_soft_reset_state``, its cell-bookkeeping quirk included)."""
        n, c, g = self.num_agents, self.num_coins, self.grid_size
        _, order_key, direction_key = jax.random.split(key, 3)
        red_gone = state.grid[state.red_coins[:, 0], state.red_coins[:, 1]] != RED_COIN
        blue_gone = state.grid[state.blue_coins[:, 0], state.blue_coins[:, 1]] != BLUE_COIN
        # JaxMARL indexes this mask by x * G + y but reads it by position in the shuffled
        # cell list, so "occupied" does not describe the cell being considered.
        taken = jnp.zeros((g * g,), jnp.bool_)
        taken = taken.at[state.pos[:, 0] * g + state.pos[:, 1]].set(~respawn)
        taken = taken.at[state.red_coins[:, 0] * g + state.red_coins[:, 1]].set(~red_gone)
        taken = taken.at[state.blue_coins[:, 0] * g + state.blue_coins[:, 1]].set(~blue_gone)
        shuffled = jnp.asarray(self._cells)[permutation(order_key, len(self._cells))]

        def place(carry, k):
            players, reds, blues, taken, pi, ri, bi = carry
            cell, busy = shuffled[k], taken[k]
            want = (pi < n) & respawn[jnp.minimum(pi, n - 1)]
            put = want & ~busy
            players = jnp.where(put, players.at[pi].set(cell), players)
            pi = pi + (put | ~want)
            busy = busy | put
            want = (ri < c) & red_gone[jnp.minimum(ri, c - 1)]
            put = want & ~busy
            reds = jnp.where(put, reds.at[ri].set(cell), reds)
            ri = ri + (put | ~want)
            busy = busy | put
            want = (bi < c) & blue_gone[jnp.minimum(bi, c - 1)]
            put = want & ~busy
            blues = jnp.where(put, blues.at[bi].set(cell), blues)
            bi = bi + (put | ~want)
            return (players, reds, blues, taken.at[k].set(busy), pi, ri, bi), None

        zero = jnp.int32(0)
        start = (
            jnp.where(respawn[:, None], -1, state.pos[:, :2]),
            jnp.where(red_gone[:, None], -1, state.red_coins),
            jnp.where(blue_gone[:, None], -1, state.blue_coins),
            taken,
            zero,
            zero,
            zero,
        )
        (players, reds, blues, *_), _ = jax.lax.scan(place, start, jnp.arange(g * g))

        grid = state.grid.at[state.pos[:, 0], state.pos[:, 1]].set(EMPTY)
        grid = grid.at[players[:, 0], players[:, 1]].set(self._codes)
        grid = jnp.where(jnp.any(red_gone), grid.at[reds[:, 0], reds[:, 1]].set(RED_COIN), grid)
        grid = jnp.where(jnp.any(blue_gone), grid.at[blues[:, 0], blues[:, 1]].set(BLUE_COIN), grid)
        directions = jax.random.randint(direction_key, (n,), 0, 3, dtype=jnp.int8)
        directions = jnp.where(respawn, directions.astype(jnp.int32), state.pos[:, 2])
        return state.replace(
            pos=jnp.concatenate([players, directions[:, None]], axis=-1),
            grid=grid,
            inventory=jnp.where(respawn[:, None], 0, state.inventory),
            red_coins=reds,
            blue_coins=blues,
        )

    # ----------------------------------------------------------------- observations
    @jit_method
    def get_obs(self, state: StormNpState) -> Observations:
        views = jax.vmap(lambda p: egocentric_view(state.grid, p, self.obs_size, WALL))(state.pos)
        features = jax.vmap(self._features, in_axes=(0, 0, None))(
            jnp.arange(self.num_agents), views, state
        )
        if not self.cnn:
            features = features.reshape(self.num_agents, -1)
        return {agent: features[i] for i, agent in enumerate(self.agents)}

    def _features(self, me: jax.Array, view: jax.Array, state: StormNpState) -> jax.Array:
        """``[V, V, 14]`` float32 cell features of player ``me``, as JaxMARL computes them.

        Index arithmetic is JaxMARL's, with its clamping: the "self" flag reads channel
        ``5 + me`` of the one-hot (player ``me + 1``; the last player reads itself), and the
        freeze row consulted for shown inventories is ``min(5 + me, N - 1)``.
        """
        n = self.num_agents
        code = FIRST_PLAYER + me
        is_other = self._is_player(view) & (view != code)
        heading = (state.pos[jnp.clip(view - FIRST_PLAYER, 0, n - 1), 2] - state.pos[me, 2]) % 4
        angles = jax.nn.one_hot(jnp.where(is_other, heading, -1), 4, dtype=jnp.float32)
        onehot = jax.nn.one_hot(view - 1, n + 4, dtype=jnp.float32)  # [V, V, N + 4]
        self_flag = onehot[..., jnp.minimum(FIRST_PLAYER + me, n + 3)]
        players = onehot[..., 4:] > 0
        any_player = jnp.any(players, axis=-1)
        other = (any_player & (self_flag == 0)).astype(jnp.float32)
        first_item = jnp.argmax(onehot > 0, axis=-1)  # 0 when the cell is empty
        show = (state.freeze[me].max() > 0) & (first_item >= FIRST_PLAYER)
        shown_row = state.freeze[jnp.minimum(FIRST_PLAYER + me, n - 1)]
        shown_players = jnp.nonzero(shown_row, size=SHOWN_FREEZE_SLOTS, fill_value=-1)[0]
        listed = jnp.any((first_item - FIRST_PLAYER)[..., None] == shown_players, axis=-1)
        inventory = state.inventory.astype(jnp.float32)
        owner = _jax_index(first_item - FIRST_PLAYER, n)
        shown = jnp.where(((show & listed) | (self_flag > 0))[..., None], inventory[owner], 0.0)
        frozen = jnp.where(other > 0, state.freeze.max(-1)[owner] > 0, False)
        first_player = jnp.argmax(players, axis=-1)
        holding = (state.inventory.sum(-1) > 0).astype(jnp.float32)
        held = jnp.where(any_player, holding[first_player], 0.0)
        return jnp.concatenate(
            [
                onehot[..., :4],
                self_flag[..., None],
                other[..., None],
                angles,
                held[..., None],
                shown,
                frozen[..., None].astype(jnp.float32),
            ],
            axis=-1,
        )

    @property
    def name(self) -> str:
        """JaxMARL's name for this env."""
        return "MGinTheGrid"

    @property
    def num_actions(self) -> int:
        """Number of actions (8)."""
        return 8


def _jax_index(index: jax.Array, size: int) -> jax.Array:
    """``index`` as JAX's gather reads it: negative counts from the end once, then clamped."""
    return jnp.clip(jnp.where(index < 0, index + size, index), 0, size - 1)
