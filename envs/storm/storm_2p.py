"""STORM in the grid for two players (JaxMARL 0.2.0's ``storm_2p``, ``InTheGrid_2p``)."""

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
    first_of_permutation,
    flat_observations,
    mark_zapped,
    move,
    pair_reward,
    permutation,
    picked_up,
    swap_codes,
    zap_targets,
)
from .layout import (
    COIN_CELLS,
    EVEN_COIN_CELLS,
    GRID_SIZE,
    NUM_COINS,
    ODD_COIN_CELLS,
    PLAYER_PAIRS,
    VIEW_SIZE,
)

# Actions (JaxMARL's numbers).
LEFT, RIGHT, FORWARD, INTERACT, STAY = range(5)
# Grid cell contents (JaxMARL's numbers).
EMPTY, RED_AGENT, BLUE_AGENT, RED_COIN, BLUE_COIN, WALL, ZAPPED = range(7)
NUM_ITEM_CHANNELS = 6  # one-hot of cell contents 1..6 (empty is all zeros)
NUM_CHANNELS = NUM_ITEM_CHANNELS + 4  # + relative direction of the other player


@struct.dataclass
class Storm2pState:
    """Everything that changes in ``storm_2p``.

    Attributes:
        pos: ``[2, 3]`` int32, ``(x, y, direction)`` of the red (0) and blue (1) player.
        grid: ``[8, 8]`` int32 cell contents (``EMPTY`` .. ``ZAPPED``).
        inventory: ``[2, 2]`` float32 coins held by each player (red coins, blue coins).
        red_coins: ``[6, 2]`` int32 cells where red coins are laid out.
        blue_coins: ``[6, 2]`` int32 cells where blue coins are laid out.
        freeze: ``[]`` int32, steps both players stay frozen after an interaction (-1: none).
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


class InTheGrid2p(InnerOuterEnv):
    """Two players collect red and blue coins on an 8x8 board and play a matrix game by zapping.

    Players see a 5x5 window ahead of themselves, turned with them. Walking onto a coin
    takes it (picked coins stay gone until the board is laid out again). A player holding a
    coin may zap: the beam covers the cells one and two ahead and ahead-left/right. If either
    player zaps the other while both hold a coin, they play the matrix game with their
    inventories as mixed strategies: player ``k`` gets ``share_red @ payoff_matrix[k] @
    share_blue``. Both are then frozen (they only stay) for ``freeze_penalty`` steps, after
    which coins and players are laid out afresh and inventories emptied.

    Episodes are nested: an inner game lasts ``num_inner_steps`` steps and ends with a fresh
    board and no reward on its last step; the outer episode lasts ``num_outer_steps`` inner
    games (``max_steps`` = their product, reported as ``infos["truncated"]``).
    ``infos["inner_episode_done"]`` marks inner boundaries; ``infos["coins_collected"]``
    counts the coins picked up in the outer episode and ``infos["coop_coin_fraction"]`` is the
    share of red coins (the payoff matrix's first row) among them.

    Agents: ``"agent_0"`` (red) and ``"agent_1"`` (blue).

    Observation (per agent, ``Dict``, float32):
        ``observation`` ``[5, 5, 10]``: one-hot cell contents (own player, other player,
        red coin, blue coin, wall, zap mark) and the one-hot direction of the other player
        relative to the observer; blue sees itself in channel 0 as red does.
        ``inventory`` ``[6]``: own coins (red, blue), whether self and other hold a coin, the
        other's coins while the players are frozen (zeros otherwise).

    Action: ``Discrete(5)``: turn left, turn right, forward, interact (zap), stay.

    State: ``Storm2pState``.

    >>> import jax, jaxmarl
    >>> env = jaxmarl.make("storm_2p")
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
    ) -> None:
        """Build the game.

        Args:
            num_inner_steps: steps per inner game (>= 1).
            num_outer_steps: inner games per outer episode (>= 1).
            fixed_coin_location: lay coins out on fixed cells (else a random permutation of
                the twelve coin cells every time the board is laid out).
            num_agents: must be 2 (kept as JaxMARL's keyword; ``storm`` takes up to 8).
            payoff_matrix: ``[2, 2, 2]``: player ``k``'s matrix ``payoff_matrix[k]``, rows
                indexed by red's coin kind and columns by blue's.
            freeze_penalty: steps the players stay frozen after an interaction (>= 1).

        Raises:
            ValueError: ``num_agents`` other than 2, a bad step count or penalty, or a payoff
                matrix that is not ``[2, 2, 2]`` finite numbers.
        """
        name = type(self).__name__
        if num_agents != 2:
            raise ValueError(
                f"{name}: storm_2p is a two-player game, got num_agents={num_agents!r}; "
                f"use jaxmarl.make('storm', num_agents=...) for up to 8 players"
            )
        super().__init__(num_agents=2)
        self.num_inner_steps = check_positive_int(name, "num_inner_steps", num_inner_steps)
        self.num_outer_steps = check_positive_int(name, "num_outer_steps", num_outer_steps)
        self.freeze_penalty = check_positive_int(name, "freeze_penalty", freeze_penalty)
        self.payoff_matrix = check_payoff(name, payoff_matrix)
        self.fixed_coin_location = bool(fixed_coin_location)
        self.max_steps = self.num_inner_steps * self.num_outer_steps
        observation = spaces.Box(0.0, 1.0, (VIEW_SIZE, VIEW_SIZE, NUM_CHANNELS), jnp.float32)
        inventory = spaces.Box(0.0, np.inf, (6,), jnp.float32)
        self.observation_spaces = {
            agent: spaces.Dict({"observation": observation, "inventory": inventory})
            for agent in self.agents
        }
        self.action_spaces = {agent: spaces.Discrete(5) for agent in self.agents}

    # ----------------------------------------------------------------- layouts
    def _layout(self, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        """Player positions ``[2, 3]`` and the red and blue coin cells ``[6, 2]``.

        JaxMARL's draw: one key picks the start-cell pair, the directions (0..2; JaxMARL never
        draws 3) and, with random coins, the permutation of the coin cells.
        """
        pos = self._start(key)
        if self.fixed_coin_location:
            red, blue = jnp.asarray(ODD_COIN_CELLS), jnp.asarray(EVEN_COIN_CELLS)
        else:
            shuffled = jnp.asarray(COIN_CELLS)[permutation(key, len(COIN_CELLS))]
            red, blue = shuffled[:NUM_COINS], shuffled[NUM_COINS:]
        return pos, red, blue

    def _start(self, key: jax.Array) -> jax.Array:
        """``[2, 3]`` start positions: JaxMARL's ``choice(key, pairs, replace=False)`` of a
        start-cell pair and ``randint(key, (2,), 0, 3)`` directions, from the same key."""
        cells = jnp.asarray(PLAYER_PAIRS)[first_of_permutation(key, len(PLAYER_PAIRS))]
        directions = jax.random.randint(key, (2,), 0, 3, dtype=jnp.int8).astype(jnp.int32)
        return jnp.concatenate([cells, directions[:, None]], axis=-1)

    def _fresh_state(self, key: jax.Array, step: jax.Array) -> Storm2pState:
        _, layout_key = jax.random.split(key)
        pos, red, blue = self._layout(layout_key)
        grid = jnp.zeros((GRID_SIZE, GRID_SIZE), jnp.int32)
        grid = grid.at[pos[0, 0], pos[0, 1]].set(RED_AGENT).at[pos[1, 0], pos[1, 1]].set(BLUE_AGENT)
        # Coins go down after the players, so a coin cell wins over a start cell (JaxMARL).
        grid = grid.at[red[:, 0], red[:, 1]].set(RED_COIN).at[blue[:, 0], blue[:, 1]].set(BLUE_COIN)
        return Storm2pState(
            pos=pos,
            grid=grid,
            inventory=jnp.zeros((2, 2), jnp.float32),
            red_coins=red,
            blue_coins=blue,
            freeze=jnp.int32(-1),
            collected=jnp.zeros((2,), jnp.int32),
            step=step,
            done=jnp.bool_(False),
        )

    def _relayout(self, key: jax.Array, state: Storm2pState) -> Storm2pState:
        """After a freeze: same coin cells, all coins back, players at new cells, no coins held."""
        pos = self._start(key)
        grid = jnp.zeros((GRID_SIZE, GRID_SIZE), jnp.int32)
        grid = grid.at[state.red_coins[:, 0], state.red_coins[:, 1]].set(RED_COIN)
        grid = grid.at[state.blue_coins[:, 0], state.blue_coins[:, 1]].set(BLUE_COIN)
        # Here the players go down last and cover a coin (JaxMARL's order).
        grid = grid.at[pos[0, 0], pos[0, 1]].set(RED_AGENT).at[pos[1, 0], pos[1, 1]].set(BLUE_AGENT)
        return state.replace(
            pos=pos, grid=grid, inventory=jnp.zeros((2, 2), jnp.float32), freeze=jnp.int32(-1)
        )

    # ----------------------------------------------------------------- contract
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, Storm2pState]:
        state = self._fresh_state(key, jnp.int32(0))
        return self.get_obs(state), state

    def step_env(self, key: jax.Array, state: Storm2pState, actions: Actions):
        action = jnp.stack([jnp.asarray(actions[a], jnp.int32) for a in self.agents])
        action = jnp.where(state.freeze > 0, STAY, action)
        pos, moved = self._resolve_moves(key, state.pos, action)

        # Coins under the new cells (read from the board before anyone moved).
        under = state.grid[pos[:, 0], pos[:, 1]]
        inventory = state.inventory + jnp.stack([under == RED_COIN, under == BLUE_COIN], -1)
        grid = state.grid
        grid = grid.at[state.pos[0, 0], state.pos[0, 1]].set(EMPTY)
        grid = grid.at[state.pos[1, 0], state.pos[1, 1]].set(EMPTY)
        grid = grid.at[pos[0, 0], pos[0, 1]].set(RED_AGENT).at[pos[1, 0], pos[1, 1]].set(BLUE_AGENT)

        grid, interact = self._zap(grid, pos, action, inventory)
        payoff = jnp.asarray(self.payoff_matrix)
        rewards = jnp.where(interact, pair_reward(inventory[0], inventory[1], payoff), 0.0)

        freeze = jnp.where(interact, self.freeze_penalty, state.freeze)
        freeze = jnp.where(freeze > 0, freeze - 1, freeze)
        moved_state = state.replace(
            pos=pos,
            grid=grid,
            inventory=inventory,
            freeze=freeze,
            collected=state.collected + picked_up(under, RED_COIN, BLUE_COIN),
        )
        relaid = self._relayout(key, moved_state)
        next_state = jax.tree.map(
            lambda fresh, kept: jnp.where(freeze == 0, fresh, kept), relaid, moved_state
        )
        next_state = next_state.replace(
            freeze=jnp.where(interact, self.freeze_penalty, next_state.freeze),
            step=state.step + 1,
        )

        restart = self._fresh_state(key, next_state.step)
        return self.finish_step(next_state, restart, rewards)

    def _resolve_moves(self, key: jax.Array, pos: jax.Array, action: jax.Array):
        """New positions: a player stepping onto the other's new cell is pushed back.

        The player who did not move keeps the cell; if both moved, a coin flip drawn from the
        step key (JaxMARL's draw) decides who gets it.
        """
        new, moved = move(pos, action, GRID_SIZE, (LEFT, RIGHT, FORWARD))
        collide = jnp.all(new[0, :2] == new[1, :2])
        red_takes = jax.random.choice(key, jnp.array([0, 1]))
        both = collide & moved[0] & moved[1]
        back = jnp.stack(
            [
                (collide & moved[0] & ~moved[1]) | (both & (red_takes == 0)),
                (collide & ~moved[0] & moved[1]) | (both & (red_takes == 1)),
            ]
        )
        return jnp.where(back[:, None], pos, new), moved

    def _zap(self, grid: jax.Array, pos: jax.Array, action: jax.Array, inventory: jax.Array):
        """Clear old zap marks, mark zapped empty cells, say whether the players interact."""
        grid = jnp.where(grid == ZAPPED, EMPTY, grid)
        targets = zap_targets(pos, GRID_SIZE)  # [2, 4, 2]
        seen = grid[targets[..., 0], targets[..., 1]]  # [2, 4]
        other = jnp.array([BLUE_AGENT, RED_AGENT])
        hits = jnp.any(seen == other[:, None], axis=-1)
        zaps = action == INTERACT
        grid = mark_zapped(grid, targets, zaps, EMPTY, ZAPPED)
        holding = inventory.sum(-1) > 0
        interact = jnp.any(zaps & hits) & holding[0] & holding[1]
        return grid, interact

    @jit_method
    def get_obs(self, state: Storm2pState) -> Observations:
        holding = (state.inventory.sum(-1) > 0).astype(jnp.float32)
        shown = jnp.where(state.freeze >= 0, state.inventory, 0.0)
        obs = {}
        for me, agent in enumerate(self.agents):
            other = 1 - me
            view = egocentric_view(state.grid, state.pos[me], VIEW_SIZE, WALL)
            # Each player sees itself in channel 0 (blue's and red's codes swapped for blue).
            own_first = swap_codes(view, RED_AGENT, BLUE_AGENT) if me == 1 else view
            channels = jax.nn.one_hot(own_first - 1, NUM_ITEM_CHANNELS, dtype=jnp.float32)
            relative = (state.pos[other, 2] - state.pos[me, 2]) % 4
            other_code = (RED_AGENT, BLUE_AGENT)[other]
            heading = jnp.where(view == other_code, relative, -1)
            angles = jax.nn.one_hot(heading, 4, dtype=jnp.float32)
            inventory = jnp.concatenate(
                [state.inventory[me], holding[me, None], holding[other, None], shown[other]]
            )
            obs[agent] = {
                "observation": jnp.concatenate([channels, angles], axis=-1),
                "inventory": inventory,
            }
        return obs

    def get_world_state(self, state: Storm2pState) -> jax.Array:
        """Every agent's observation and inventory, flattened and concatenated."""
        return flat_observations(self.get_obs(state), self.agents)

    @property
    def name(self) -> str:
        """JaxMARL's name for this env."""
        return "2PMGinTheGrid"

    @property
    def num_actions(self) -> int:
        """Number of actions (5)."""
        return 5


# JaxMARL 0.2.0 names this class ``InTheGrid_2p`` (jaxmarl.environments.InTheGrid_2p).
InTheGrid_2p = InTheGrid2p
