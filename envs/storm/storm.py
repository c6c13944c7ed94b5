"""STORM in the grid for 2 to 8 players (JaxMARL 0.2.0's ``storm``, ``InTheGrid``)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import random_unrolled as rng
from jaxmarl import spaces
from jaxmarl.env import jit_method, one_pass_step
from jaxmarl.typing import Actions, Observations

from .common import (
    DEFAULT_PAYOFF,
    InnerOuterEnv,
    check_payoff,
    check_positive_int,
    coin_infos,
    egocentric_view,
    flat_observations,
    mark_zapped,
    move,
    pair_reward,
    permutation,
    picked_up,
    read_cells,
    sorted_subset,
    swap_codes,
    two_one_hots,
    write_cells,
    zap_targets,
)
from .layout import (
    AGENT_CELLS,
    COIN_CELLS,
    EVEN_COIN_CELLS,
    GRID_SIZE,
    NUM_COINS,
    ODD_COIN_CELLS,
    VIEW_SIZE,
)

MAX_PLAYERS = 8
# Actions (JaxMARL's numbers).
LEFT, RIGHT, FORWARD, INTERACT, STAY = range(5)
# Grid cell contents (JaxMARL's numbers): players are 1..8.
EMPTY = 0
COOP_COIN, DEFECT_COIN, WALL, ZAPPED = 9, 10, 11, 12
NUM_ITEM_CHANNELS = 12  # one-hot of cell contents 1..12 (empty is all zeros)
NUM_CHANNELS = NUM_ITEM_CHANNELS + 4  # + JaxMARL's relative-direction channels
COIN_TIMER_RANGE = (3, 10)  # a coin's regrowth timer is drawn from 3..9


@struct.dataclass
class StormState:
    """Everything that changes in ``storm``.

    Attributes:
        pos: ``[N, 3]`` int32, ``(x, y, direction)`` of each player.
        grid: ``[8, 8]`` int32 cell contents (0 empty, 1..8 players, 9 cooperation coin,
            10 defection coin, 12 zap mark).
        inventory: ``[N, 2]`` float32 coins held (cooperation, defection).
        coop_coins: ``[6, 2]`` int32 cells of the cooperation coins.
        defect_coins: ``[6, 2]`` int32 cells of the defection coins.
        freeze: ``[N]`` int32; ``> 0``: frozen for that many more steps; ``<= 0``: free.
        coop_timer: ``[6]`` int32 steps until each cooperation coin may grow back.
        defect_timer: ``[6]`` int32 steps until each defection coin may grow back.
        collected: ``[2]`` int32 coins picked up by all players in the outer episode
            (cooperation, defection; ``infos["coop_coin_fraction"]`` and ``["coins_collected"]``).
        step: ``[]`` int32, steps taken in the outer episode.
        done: ``[]`` bool, whether the outer episode has ended.
    """

    pos: jax.Array
    grid: jax.Array
    inventory: jax.Array
    coop_coins: jax.Array
    defect_coins: jax.Array
    freeze: jax.Array
    coop_timer: jax.Array
    defect_timer: jax.Array
    collected: jax.Array
    step: jax.Array
    done: jax.Array


@struct.dataclass
class StepKeys:
    """The keys of one step, split from the step key exactly as JaxMARL 0.2.0 splits them."""

    tie: jax.Array  # collision coin flips
    pairs: jax.Array  # order in which pairs are tried
    respawn: jax.Array  # cells and directions of players whose freeze ends
    coop_timer: jax.Array  # new timers of cooperation coins
    defect_timer: jax.Array  # new timers of defection coins
    restart: jax.Array  # the next inner game's board


def step_keys(key: jax.Array) -> StepKeys:
    key, tie = rng.split(key)
    key, _ = rng.split(key)
    _, pairs = rng.split(key)
    key, respawn = rng.split(key)
    key, coop = rng.split(key)
    restart, defect = rng.split(key)
    return StepKeys(tie, pairs, respawn, coop, defect, restart)


class InTheGrid(InnerOuterEnv):
    """2 to 8 players collect coins on an 8x8 board and play matrix games by zapping each other.

    Players see a 5x5 window ahead of themselves, turned with them. Walking onto a coin
    takes it; every coin cell regrows its coin when its timer (3..9 steps, redrawn each
    time) runs out and the cell is free. Two players interact when both hold a coin, both
    zap, and each stands in the other's beam (one and two ahead, ahead-left, ahead-right):
    they play the matrix game with their inventories as mixed strategies (``share_i @
    payoff_matrix[k] @ share_j``). Interacting players are frozen for ``freeze_penalty``
    steps, then respawn at a start cell with empty hands.

    Episodes are nested: an inner game lasts ``num_inner_steps`` steps and ends with a fresh
    board and no reward on its last step; the outer episode lasts ``num_outer_steps`` inner
    games (``max_steps`` = their product, reported as ``infos["truncated"]``).
    ``infos["inner_episode_done"]`` marks inner boundaries; ``infos["coins_collected"]``
    counts the coins picked up in the outer episode and ``infos["coop_coin_fraction"]`` is the
    share of cooperation coins among them (ours; JaxMARL has no pickup count). The rules,
    quirks included, are JaxMARL 0.2.0's; ``README.md`` lists them and the deviations.

    Agents: ``"agent_0"`` .. ``"agent_{N-1}"`` (JaxMARL: integers 0 .. N-1).

    Observation (per agent, ``Dict``, float32):
        ``observation`` ``[5, 5, 16]``: one-hot cell contents (12 channels, players 1..8
        first with the observer swapped into channel 0) and JaxMARL's 4 direction channels.
        ``inventory`` ``[5, N]``: per player (the observer's column swapped to 0) the coins
        held (2 rows), whether it holds any, and its coins while it is frozen (2 rows).

    Action: ``Discrete(5)``: turn left, turn right, forward, interact (zap), stay.

    State: ``StormState``.

    >>> import jax, jaxmarl
    >>> env = jaxmarl.make("storm", num_agents=3)
    >>> obs, state = env.reset(jax.random.key(0))
    >>> actions = {agent: jnp.int32(2) for agent in env.agents}
    >>> obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    observations_from_state = True

    def __init__(
        self,
        num_inner_steps: int = 152,
        num_outer_steps: int = 1,
        num_agents: int = 2,
        fixed_coin_location: bool = True,
        payoff_matrix: Any = DEFAULT_PAYOFF,
        freeze_penalty: int = 5,
    ) -> None:
        """Build the game.

        Args:
            num_inner_steps: steps per inner game (>= 1).
            num_outer_steps: inner games per outer episode (>= 1).
            num_agents: players, 2 to 8.
            fixed_coin_location: lay coins out on fixed cells (else a random permutation of
                the twelve coin cells every inner game).
            payoff_matrix: ``[2, 2, 2]``; in a pair ``(i, j)`` with ``i < j``, player ``i``
                gets ``share_i @ payoff_matrix[0] @ share_j`` and player ``j``
                ``share_i @ payoff_matrix[1] @ share_j`` (rows and columns: cooperation
                coin, defection coin).
            freeze_penalty: steps interacting players stay frozen (>= 1).

        Raises:
            ValueError: fewer than 2 or more than 8 players, a bad step count or penalty, or a
                payoff matrix that is not ``[2, 2, 2]`` finite numbers.
        """
        name = type(self).__name__
        if isinstance(num_agents, bool) or int(num_agents) != num_agents:
            raise ValueError(f"{name}: num_agents must be an integer, got {num_agents!r}")
        if not 2 <= num_agents <= MAX_PLAYERS:
            raise ValueError(
                f"{name}: storm supports 2 to {MAX_PLAYERS} players (the board has 8 player "
                f"codes and 18 start cells), got num_agents={num_agents}; for more players "
                f"use jaxmarl.make('storm_np', num_agents=..., grid_size=...)"
            )
        super().__init__(num_agents=int(num_agents))
        self.num_inner_steps = check_positive_int(name, "num_inner_steps", num_inner_steps)
        self.num_outer_steps = check_positive_int(name, "num_outer_steps", num_outer_steps)
        self.freeze_penalty = check_positive_int(name, "freeze_penalty", freeze_penalty)
        self.payoff_matrix = check_payoff(name, payoff_matrix)
        self.fixed_coin_location = bool(fixed_coin_location)
        self.max_steps = self.num_inner_steps * self.num_outer_steps
        n = self.num_agents
        self._pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)], np.int32)
        # JaxMARL lists, for player i, the other players in the order 1, 2, ..., n-1 with
        # player 0 in i's own slot; collisions and coin flips are read through this table.
        self._others = np.array(
            [[s + 1 if s + 1 != i else 0 for s in range(n - 1)] for i in range(n)], np.int32
        )
        # Which coin flip each (player, other player) slot of the collision rule reads: index
        # p of pair (i, j) (i < j) for takes[i, j], p + P for takes[j, i] (the complement),
        # 2P for the diagonal (0); the slot holding player 0 reads takes[0, i].
        num_pairs = len(self._pairs)
        flip_index = np.full((n, n), 2 * num_pairs, np.int32)
        for p, (i, j) in enumerate(self._pairs):
            flip_index[i, j], flip_index[j, i] = p, p + num_pairs
        self._takes_slot = np.array(
            [
                [flip_index[0, i] if o == 0 else flip_index[i, o] for o in self._others[i]]
                for i in range(n)
            ],
            np.int32,
        )
        # JaxMARL writes pair rewards in pair order, each write overwriting the player's
        # earlier ones: a player ends up with its value from the last pair it belongs to.
        last = {}
        for p, (i, j) in enumerate(self._pairs):
            last[int(i)] = (p, 0)
            last[int(j)] = (p, 1)
        self._last_value = np.zeros((n, len(self._pairs), 2), bool)
        for i in range(n):
            self._last_value[i, last[i][0], last[i][1]] = True
        players = np.arange(n)
        self._first = self._pairs[:, :1] == players[None, :]  # [P, N]
        self._second = self._pairs[:, 1:] == players[None, :]

        observation = spaces.Box(0.0, 1.0, (VIEW_SIZE, VIEW_SIZE, NUM_CHANNELS), jnp.float32)
        inventory = spaces.Box(0.0, np.inf, (5, n), jnp.float32)
        self.observation_spaces = {
            agent: spaces.Dict({"observation": observation, "inventory": inventory})
            for agent in self.agents
        }
        self.action_spaces = {agent: spaces.Discrete(5) for agent in self.agents}

    # ----------------------------------------------------------------- randomness
    def spawn_cells(self, key: jax.Array) -> jax.Array:
        """``[N, 2]`` int32 start cells: a uniform 8-subset of the 18 start cells, sorted.

        JaxMARL draws the same thing as one of the C(18, 8) = 43758 combinations with
        ``jax.random.choice(..., replace=False)``, i.e. a permutation of all 43758; this
        draws the subset directly (same distribution, other random numbers).
        """
        chosen = sorted_subset(key, len(AGENT_CELLS), MAX_PLAYERS, self.num_agents)
        return jnp.asarray(AGENT_CELLS)[chosen]

    def _directions(self, key: jax.Array) -> jax.Array:
        # JaxMARL draws 0..2: a player never starts facing direction 3.
        return rng.randint(key, self.num_agents, 0, 3, jnp.int8).astype(jnp.int32)

    def _coin_timers(self, key: jax.Array) -> jax.Array:
        """``[6]`` int32 regrowth timers, 3..9 (JaxMARL draws them as int32 on a fresh board and
        as int8 on regrowth: both are sampled in 32 bits, so one key gives the same values)."""
        return rng.randint(key, NUM_COINS, *COIN_TIMER_RANGE)

    @staticmethod
    def _board_keys(key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """``(layout, coop timer, defect timer)`` keys of a fresh board, split as JaxMARL does."""
        key, layout_key = rng.split(key)
        key, coop_key = rng.split(key)
        _, defect_key = rng.split(key)
        return layout_key, coop_key, defect_key

    def _start_positions(self, key: jax.Array) -> jax.Array:
        """``[N, 3]`` int32 start cells and directions, both drawn from ``key`` (JaxMARL's
        ``_reset_state`` and respawn use one key for the two)."""
        return jnp.concatenate([self.spawn_cells(key), self._directions(key)[:, None]], -1)

    def _fresh_state(
        self, key: jax.Array, step: jax.Array, cells: jax.Array | None = None
    ) -> StormState:
        """A new board (JaxMARL's ``_reset_state``); ``cells`` overrides the start-cell draw."""
        layout_key, coop_key, defect_key = self._board_keys(key)
        if cells is None:
            cells = self.spawn_cells(layout_key)
        pos = jnp.concatenate([cells, self._directions(layout_key)[:, None]], axis=-1)
        return self._board(
            layout_key, pos, self._coin_timers(coop_key), self._coin_timers(defect_key), step
        )

    def _board(
        self,
        layout_key: jax.Array,
        pos: jax.Array,
        coop_timer: jax.Array,
        defect_timer: jax.Array,
        step: jax.Array,
    ) -> StormState:
        """A new board with its players at ``pos`` and the given coin timers; ``layout_key``
        lays out the coins when they are not on fixed cells."""
        if self.fixed_coin_location:
            defect, coop = jnp.asarray(ODD_COIN_CELLS), jnp.asarray(EVEN_COIN_CELLS)
        else:
            shuffled = jnp.asarray(COIN_CELLS)[permutation(layout_key, len(COIN_CELLS))]
            defect, coop = shuffled[:NUM_COINS], shuffled[NUM_COINS:]
        grid = jnp.zeros((GRID_SIZE, GRID_SIZE), jnp.int32)
        grid = write_cells(grid, pos[:, :2], jnp.arange(1, self.num_agents + 1))
        # Coins go down after the players and cover them (JaxMARL's order).
        grid = write_cells(grid, defect, DEFECT_COIN)
        grid = write_cells(grid, coop, COOP_COIN)
        return StormState(
            pos=pos,
            grid=grid,
            inventory=jnp.zeros((self.num_agents, 2), jnp.float32),
            coop_coins=coop,
            defect_coins=defect,
            freeze=jnp.full((self.num_agents,), -1, jnp.int32),
            coop_timer=coop_timer,
            defect_timer=defect_timer,
            collected=jnp.zeros((2,), jnp.int32),
            step=step,
            done=jnp.bool_(False),
        )

    # ----------------------------------------------------------------- contract
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, StormState]:
        state = self._fresh_state(key, jnp.int32(0))
        return self.get_obs(state), state

    def step_env(self, key: jax.Array, state: StormState, actions: Actions):
        keys = step_keys(key)
        _, layout_key = rng.split(keys.restart)
        return self.transition(
            keys,
            state,
            actions,
            self.spawn_cells(keys.respawn),
            self.spawn_cells(layout_key),
        )

    def transition(
        self,
        keys: StepKeys,
        state: StormState,
        actions: Actions,
        respawn_cells: jax.Array,
        restart_cells: jax.Array,
    ):
        """``step_env`` with the two start-cell draws given (the parity tests pass JaxMARL's)."""
        respawn = jnp.concatenate([respawn_cells, self._directions(keys.respawn)[:, None]], -1)
        played, rewards = self._play(
            keys,
            state,
            actions,
            respawn,
            self._coin_timers(keys.coop_timer),
            self._coin_timers(keys.defect_timer),
        )
        restart = self._fresh_state(keys.restart, played.step, restart_cells)
        return self.finish_step(played, restart, rewards)

    @one_pass_step
    def step(self, key: jax.Array, state: StormState, actions: Actions):
        """``MultiAgentEnv.step`` drawing one set of start positions and coin timers per step.

        The base class's ``step`` draws three: for players who respawn, for the next inner
        game's board (``step_env``) and for the auto-reset's board; under ``vmap`` all three
        are computed every step and two are thrown away. Exactly one is ever kept: a fresh
        board when the step ends an inner game (from the reset key if it also ends the
        episode, else from the restart key), the respawn and regrowth draws otherwise; and
        which one is known before the step, from ``state.step``. So this picks the key first
        and draws once: same keys, same results as the base class (tested). With a
        ``reset_state`` or terminal observations it is the base class's ``step``.
        """
        step_key, reset_key = rng.split(key)
        keys = step_keys(step_key)
        steps = state.step + 1
        inner_done = steps % self.num_inner_steps == 0
        outer_done = steps >= self.max_steps
        fresh = inner_done | outer_done

        def pick(board_draw, step_draw):
            return jnp.where(fresh, board_draw, step_draw)

        layout_key, coop_key, defect_key = self._board_keys(
            jnp.where(outer_done, reset_key, keys.restart)
        )
        position = self._start_positions(pick(layout_key, keys.respawn))
        coop_timer = self._coin_timers(pick(coop_key, keys.coop_timer))
        defect_timer = self._coin_timers(pick(defect_key, keys.defect_timer))
        played, rewards = self._play(keys, state, actions, position, coop_timer, defect_timer)
        board = self._board(
            layout_key, position, coop_timer, defect_timer, jnp.where(outer_done, 0, steps)
        )
        board = board.replace(collected=jnp.where(outer_done, 0, played.collected))
        next_state = jax.tree.map(pick, board, played).replace(done=jnp.zeros_like(outer_done))
        rewards = jnp.where(inner_done, 0.0, rewards).astype(jnp.float32)
        dones = {agent: outer_done for agent in self.agents}
        dones["__all__"] = outer_done
        infos = {"inner_episode_done": inner_done, **coin_infos(played.collected)}
        infos["terminated"], infos["truncated"] = self._episode_end(played, dones, infos)
        by_agent = {agent: rewards[i] for i, agent in enumerate(self.agents)}
        return self.get_obs(next_state), next_state, by_agent, dones, infos

    def _play(
        self,
        keys: StepKeys,
        state: StormState,
        actions: Actions,
        respawn: jax.Array,
        coop_regrow: jax.Array,
        defect_regrow: jax.Array,
    ) -> tuple[StormState, jax.Array]:
        """One step of the game before any restart: ``(state, rewards [N])``.

        ``respawn`` ``[N, 3]`` are the positions of players whose freeze ends; ``coop_regrow``
        and ``defect_regrow`` ``[6]`` the new timers of coins that regrow.
        """
        action = jnp.stack([jnp.asarray(actions[a], jnp.int32) for a in self.agents])
        action = jnp.where(state.freeze > 0, STAY, action)
        pos = self._resolve_moves(keys.tie, state.pos, action)

        under = read_cells(state.grid, pos[:, :2])
        inventory = state.inventory + jnp.stack([under == COOP_COIN, under == DEFECT_COIN], -1)

        # Zaps are judged on the board as it was before anyone moved (JaxMARL's order).
        grid, rewards, interacted = self._interact(keys.pairs, state.grid, pos, action, inventory)

        freeze = jnp.where(interacted, self.freeze_penalty, state.freeze - 1)
        thawed = freeze == 0
        pos = jnp.where(thawed[:, None], respawn, pos)
        inventory = jnp.where(thawed[:, None], 0.0, inventory)
        freeze = jnp.where(thawed, -1, freeze)

        grid = write_cells(grid, state.pos[:, :2], EMPTY)
        # In order: a later player covers an earlier one.
        grid = write_cells(grid, pos[:, :2], jnp.arange(1, self.num_agents + 1))
        grid, coop_timer = self._regrow(
            grid, state.coop_coins, state.coop_timer - 1, COOP_COIN, coop_regrow
        )
        grid, defect_timer = self._regrow(
            grid, state.defect_coins, state.defect_timer - 1, DEFECT_COIN, defect_regrow
        )
        played = state.replace(
            pos=pos,
            grid=grid,
            inventory=inventory,
            freeze=freeze,
            coop_timer=coop_timer,
            defect_timer=defect_timer,
            collected=state.collected + picked_up(under, COOP_COIN, DEFECT_COIN),
            step=state.step + 1,
        )
        return played, rewards

    def _resolve_moves(self, key: jax.Array, pos: jax.Array, action: jax.Array) -> jax.Array:
        """JaxMARL's collision rule, written per (player, other player) slot.

        A mover is sent back when some, but not all, of the others it collides with stood
        still (first pass), then when some, but not all, colliding movers win its coin flip
        (second pass). With two players the "some but not all" test never fires, so both
        may end on one cell (JaxMARL's behaviour, kept).
        """
        n = self.num_agents
        new, moved = move(pos, action, GRID_SIZE, (LEFT, RIGHT, FORWARD))
        collide = jnp.all(new[:, None, :2] == new[None, :, :2], axis=-1)
        others = jnp.asarray(self._others)
        rows = jnp.arange(n)[:, None]
        collide_slot = collide[rows, others]
        moved_slot = moved[others]

        def mixed(flags: jax.Array) -> jax.Array:
            return jnp.any(flags, axis=1) & ~jnp.all(flags, axis=1)

        first = collide_slot & moved[:, None] & ~moved_slot
        pos1 = jnp.where(mixed(first)[:, None], pos, new)

        # jax.random.choice(key, jnp.array([0, 1]), shape=(P,)), JaxMARL's call: its values
        # are its randint indices.
        bits = rng.randint(key, len(self._pairs), 0, 2)
        # takes[i, j]: pair (i, j)'s flip for i < j, its complement for i > j, 0 on the
        # diagonal; read per (player, other player) slot through static index tables. The
        # slot holding player 0 reads player 0's flip against i, not i's against 0.
        flips = jnp.concatenate([bits, (bits + 1) % 2, jnp.zeros((1,), bits.dtype)])
        takes_slot = flips[jnp.asarray(self._takes_slot)]
        second = collide_slot & moved[:, None] & moved_slot & (takes_slot == 0)
        return jnp.where(mixed(second)[:, None], pos, pos1)

    def _interact(self, key, grid, pos, action, inventory):
        """Zap marks, the pairs that interact, their rewards and who gets frozen.

        Per-pair and per-player lookups go through static incidence tables (``_first``,
        ``_second``: ``[P, N]``, which players a pair holds) as masked sums and selects:
        under ``vmap`` on a CPU, gathers and scatters of single elements are serial loops.
        """
        grid = jnp.where(grid == ZAPPED, EMPTY, grid)
        targets = zap_targets(pos, GRID_SIZE)
        seen = read_cells(grid, targets.reshape((-1, 2))).reshape(targets.shape[:2])  # [N, 4]
        zaps = action == INTERACT
        grid = mark_zapped(grid, targets, zaps, EMPTY, ZAPPED)
        holding = inventory.sum(-1) > 0

        first, second = jnp.asarray(self._first), jnp.asarray(self._second)
        codes = jnp.arange(1, self.num_agents + 1)
        sees = jnp.any(seen[:, :, None] == codes[None, None, :], axis=1)  # [N, N]: i sees j

        def of(table, flags):  # [P]: the flag of each pair's player in ``table``
            return jnp.any(table & flags[None, :], axis=1)

        a_sees_b = jnp.any(first[:, :, None] & second[:, None, :] & sees[None], axis=(1, 2))
        b_sees_a = jnp.any(second[:, :, None] & first[:, None, :] & sees[None], axis=(1, 2))
        able = holding & zaps
        ready_pairs = a_sees_b & b_sees_a & of(first, able) & of(second, able)

        num_pairs = len(self._pairs)
        pair_ids = jnp.arange(num_pairs)
        order = permutation(key, num_pairs)
        frozen = jnp.zeros((self.num_agents,), jnp.bool_)
        chosen = jnp.zeros((num_pairs,), jnp.bool_)
        # JaxMARL tries only as many pairs as there are players (clamping the index), so with
        # two players it tries the one pair twice and the second try clears its flag.
        for attempt in range(self.num_agents):
            hot = pair_ids == order[min(attempt, num_pairs - 1)]
            ready = jnp.any(hot & ready_pairs)
            busy = jnp.any(hot & (of(first, frozen) | of(second, frozen)))
            chosen = jnp.where(hot, ready & ~busy, chosen)
            members = jnp.any(hot[:, None] & (first | second), axis=0)  # [N]
            frozen = frozen | (members & ready)

        payoff = jnp.asarray(self.payoff_matrix)

        def holdings(table):  # [P, 2]: the inventory of each pair's player in ``table``
            return jnp.sum(jnp.where(table[:, :, None], inventory[None], 0.0), axis=1)

        values = jax.vmap(lambda a, b: pair_reward(a, b, payoff))(holdings(first), holdings(second))
        values = jnp.where(chosen[:, None], values, 0.0)
        last = jnp.asarray(self._last_value)  # [N, P, 2]: the value each player keeps
        rewards = jnp.sum(jnp.where(last, values[None], 0.0), axis=(1, 2))
        return grid, rewards, frozen

    def _regrow(self, grid, cells, timer, coin, fresh):
        """Coins whose timer ran out grow back on free cells; their timers become ``fresh``.

        A kind's coin cells are distinct, so the writes are independent and whether a cell is
        free can be tested cell by cell: one pass over the board (reading the coin cells
        first had XLA redo the board's earlier writes once per coin)."""
        ripe = timer == 0
        ripe_cells = write_cells(jnp.zeros(grid.shape, jnp.bool_), cells, ripe)
        grid = jnp.where(ripe_cells & (grid == EMPTY), coin, grid)
        return grid, jnp.where(ripe, fresh, timer)

    @jit_method
    def get_obs(self, state: StormState) -> Observations:
        n = self.num_agents
        holding = (state.inventory.sum(-1) > 0).astype(jnp.float32)
        shown = jnp.where((state.freeze >= 0)[:, None], state.inventory, 0.0)
        table = jnp.stack(
            [state.inventory[:, 0], state.inventory[:, 1], holding, shown[:, 0], shown[:, 1]]
        )  # [5, N]
        directions = state.pos[:, 2].astype(jnp.int8)
        obs = {}
        for me, agent in enumerate(self.agents):
            view = egocentric_view(state.grid, state.pos[me], VIEW_SIZE, WALL)
            # The observer sees itself in channel 0 (its code and player 1's swapped).
            own_first = swap_codes(view, 1, me + 1)
            angle = self._angles(view, me, directions)
            columns = list(range(n))
            columns[0], columns[me] = columns[me], columns[0]
            obs[agent] = {
                "observation": two_one_hots(own_first - 1, NUM_ITEM_CHANNELS, angle, 4),
                "inventory": jnp.stack([table[:, j] for j in columns], axis=1),
            }
        return obs

    def _angles(self, view: jax.Array, me: int, directions: jax.Array) -> jax.Array:
        """JaxMARL's four direction channels, reproduced as computed there.

        JaxMARL means to one-hot, on each other player's cell, that player's direction
        relative to the observer's. What it computes: for the codes ``me + 2 .. me + N``
        (cell codes, so this skips players ``0 .. me`` and can hit coins and walls), the
        direction of player ``code`` (one past the player drawn there; a missing player reads
        as int8 -128), as ``(theirs - mine + 1) % 5`` in int8, summed, minus one, one-hot.
        Returns ``[V, V]`` int32, the index that is one-hot (none where outside 0..3).
        """
        codes = jnp.arange(me + 2, me + self.num_agents + 1)
        missing = jnp.int8(np.iinfo(np.int8).min)
        theirs = jnp.stack(
            [
                directions[c] if c < self.num_agents else missing
                for c in range(me + 2, me + self.num_agents + 1)
            ]
        )
        mine = directions[me]
        value = ((theirs - mine) + jnp.int8(1)) % jnp.int8(5)
        hits = view[None] == codes[:, None, None]
        total = jnp.sum(jnp.where(hits, value[:, None, None], jnp.int8(0)).astype(jnp.int32), 0)
        return total - 1

    def get_world_state(self, state: StormState) -> jax.Array:
        """Every agent's observation and inventory, flattened and concatenated."""
        return flat_observations(self.get_obs(state), self.agents)

    @property
    def name(self) -> str:
        """JaxMARL's name for this env."""
        return "MGinTheGrid"

    @property
    def num_actions(self) -> int:
        """Number of actions (5)."""
        return 5
