"""Coin Game (Lerer & Peysakhovich 2017; Foerster et al. 2018, LOLA) as in JaxMARL 0.2.0."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import random_unrolled, spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions, Observations

GRID_SIZE = 3
NUM_CHANNELS = 4  # own player, other player, own coin, other coin
# Row/column offsets of the five actions, in JaxMARL's order and with JaxMARL's names.
MOVES = jnp.array(
    [
        [0, 1],  # 0 right
        [0, -1],  # 1 left
        [1, 0],  # 2 up
        [-1, 0],  # 3 down
        [0, 0],  # 4 stay
    ],
    dtype=jnp.int32,
)
DEFAULT_PAYOFF = ((1.0, 1.0, -2.0), (1.0, 1.0, -2.0))


@struct.dataclass
class CoinGameState:
    """Everything that changes in a Coin Game (one outer episode of inner games).

    Attributes:
        red_pos: ``[2]`` int32, (row, column) of the red player (agent ``"0"``).
        blue_pos: ``[2]`` int32, (row, column) of the blue player (agent ``"1"``).
        red_coin_pos: ``[2]`` int32, (row, column) of the red coin.
        blue_coin_pos: ``[2]`` int32, (row, column) of the blue coin.
        step: ``[]`` int32, steps taken in the outer episode (JaxMARL counts inner steps
            here; ``CoinGame.inner_step`` and ``CoinGame.outer_step`` give both clocks).
        done: ``[]`` bool, whether the outer episode has ended.
        own_coins: ``[2]`` int32, coins of its own colour each agent picked up (rewarded
            pickups in the outer episode so far).
        other_coins: ``[2]`` int32, coins of the other colour each agent picked up.
        returns: ``[2]`` float32, each agent's summed rewards in the outer episode so far.
        inner_returns: ``[2]`` float32, each agent's summed rewards in the running inner game
            so far (0 again after each inner boundary).
    """

    red_pos: jax.Array
    blue_pos: jax.Array
    red_coin_pos: jax.Array
    blue_coin_pos: jax.Array
    step: jax.Array
    done: jax.Array
    own_coins: jax.Array
    other_coins: jax.Array
    returns: jax.Array
    inner_returns: jax.Array


class CoinGame(MultiAgentEnv):
    """Two players, a red and a blue coin, on a 3x3 grid that wraps around (a torus).

    A player ``i`` who steps onto a coin takes it and gets ``payoff_matrix[i][0]`` for the red
    coin or ``payoff_matrix[i][1]`` for the blue one (JaxMARL's columns: by coin colour, not
    own/other); a player whose coin the other takes gets ``payoff_matrix[i][2]``. Default:
    +1 for any coin, -2 when the other player takes yours. Both players may take the same
    coin in one step; a taken coin reappears at a uniformly random cell (possibly under a
    player or the other coin).

    Episodes are nested: an inner game lasts ``num_inner_steps`` steps and the outer (meta)
    episode ``num_outer_steps`` inner games. On the last step of an inner game the move is
    discarded and nobody is rewarded: players and coins restart at random cells (JaxMARL's
    rule). ``dones`` mark only the outer episode's end (``max_steps = num_inner_steps *
    num_outer_steps``, reported as ``infos["truncated"]``); ``infos["inner_episode_done"]``
    marks the inner boundary.

    Agents: ``"0"`` (red) and ``"1"`` (blue), JaxMARL's names.

    Observation (per agent, float32 in {0, 1}): a ``[3, 3, 4]`` grid with channels (own
    player, other player, own coin, other coin), flattened to ``[36]`` unless ``cnn``. Every
    agent sees itself as "red". With ``egocentric`` the grid is shifted (wrapping) so the
    observing player is at the centre cell ``(1, 1)``.

    Action: ``Discrete(5)`` int: right, left, up, down, stay (``MOVES``; "up" adds one to
    the row). Any integer is accepted; out-of-range actions index ``MOVES`` clamped.

    Reward: float32 per agent as above; with ``shared_rewards`` both agents get the sum.

    Infos (per environment scalars): ``inner_episode_done`` bool; ``mean_inner_return``
    float32, the agents' mean return per completed inner game in this outer episode (the
    running inner game is left out; 0 until the first inner game ends); ``inner_return``
    float32, the agents' mean return of the inner game that ended at this step (0 on steps
    where ``inner_episode_done`` is false);
    ``own_coin_fraction`` float32, the share of rewarded pickups that were of the picker's
    own colour (0 before any pickup); ``coins_collected`` int32, rewarded pickups so far.

    State: ``CoinGameState``.

    >>> import jax, jaxmarl
    >>> env = jaxmarl.make("coin_game", egocentric=True)
    >>> obs, state = env.reset(jax.random.key(0))
    >>> actions = {agent: jnp.int32(4) for agent in env.agents}
    >>> obs, state, rewards, dones, infos = env.step(jax.random.key(1), state, actions)
    """

    observations_from_state = True

    def __init__(
        self,
        num_inner_steps: int = 10,
        num_outer_steps: int = 10,
        cnn: bool = False,
        egocentric: bool = False,
        shared_rewards: bool = False,
        payoff_matrix: Any = DEFAULT_PAYOFF,
    ) -> None:
        """Build the game.

        Args:
            num_inner_steps: steps per inner game (>= 1).
            num_outer_steps: inner games per outer episode (>= 1).
            cnn: observations as ``[3, 3, 4]`` grids instead of flat ``[36]`` vectors.
            egocentric: centre each agent's observation on itself.
            shared_rewards: give both agents the sum of their rewards.
            payoff_matrix: ``[2, 3]`` numbers; row ``i`` is agent ``i``'s (red coin, blue
                coin, penalty when the other player takes agent ``i``'s coin).

        Raises:
            ValueError: a step count below 1, or a payoff matrix that is not ``[2, 3]``
                finite numbers.
        """
        super().__init__(num_agents=2)
        self.agents = ["0", "1"]
        for name, value in (
            ("num_inner_steps", num_inner_steps),
            ("num_outer_steps", num_outer_steps),
        ):
            if int(value) != value or value < 1:
                raise ValueError(f"CoinGame: {name} must be an integer >= 1, got {value!r}")
        try:
            payoff = np.asarray(payoff_matrix, dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"CoinGame: payoff_matrix must be 2 rows of 3 numbers "
                f"[[red coin, blue coin, penalty], ...] per agent, got {payoff_matrix!r}"
            ) from error
        if payoff.shape != (2, 3) or not np.isfinite(payoff).all():
            raise ValueError(
                f"CoinGame: payoff_matrix must be 2 rows (one per agent) of 3 finite numbers "
                f"[red coin, blue coin, penalty when the other takes yours], e.g. "
                f"[[1, 1, -2], [1, 1, -2]]; got shape {payoff.shape}: {payoff_matrix!r}"
            )
        self.payoff_matrix = payoff
        self.num_inner_steps = int(num_inner_steps)
        self.num_outer_steps = int(num_outer_steps)
        self.max_steps = self.num_inner_steps * self.num_outer_steps
        self.cnn = bool(cnn)
        self.egocentric = bool(egocentric)
        self.shared_rewards = bool(shared_rewards)
        obs_shape = (
            (GRID_SIZE, GRID_SIZE, NUM_CHANNELS) if self.cnn else (GRID_SIZE**2 * NUM_CHANNELS,)
        )
        self.observation_spaces = {
            agent: spaces.Box(0.0, 1.0, obs_shape, jnp.float32) for agent in self.agents
        }
        self.action_spaces = {agent: spaces.Discrete(len(MOVES)) for agent in self.agents}

    # ----------------------------------------------------------------- clocks
    def inner_step(self, state: CoinGameState) -> jax.Array:
        """``[]`` int32: steps taken in the current inner game (JaxMARL's ``state.step``)."""
        return state.step % self.num_inner_steps

    def outer_step(self, state: CoinGameState) -> jax.Array:
        """``[]`` int32: inner games completed in this outer episode (JaxMARL's ``outer_t``)."""
        return state.step // self.num_inner_steps

    # ----------------------------------------------------------------- contract
    def _placement(self, key: jax.Array) -> jax.Array:
        """``[4, 2]`` int32 random cells: red, blue, red coin, blue coin (JaxMARL's draw)."""
        _, place_key = random_unrolled.split(key)
        return random_unrolled.randint(place_key, 8, 0, GRID_SIZE).reshape(4, 2)

    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, CoinGameState]:
        cells = self._placement(key)
        state = CoinGameState(
            red_pos=cells[0],
            blue_pos=cells[1],
            red_coin_pos=cells[2],
            blue_coin_pos=cells[3],
            step=jnp.int32(0),
            done=jnp.bool_(False),
            own_coins=jnp.zeros((2,), jnp.int32),
            other_coins=jnp.zeros((2,), jnp.int32),
            returns=jnp.zeros((2,), jnp.float32),
            inner_returns=jnp.zeros((2,), jnp.float32),
        )
        return self.get_obs(state), state

    def step_env(self, key: jax.Array, state: CoinGameState, actions: Actions):
        red_pos = (state.red_pos + MOVES[actions[self.agents[0]]]) % GRID_SIZE
        blue_pos = (state.blue_pos + MOVES[actions[self.agents[1]]]) % GRID_SIZE
        red_on_red = jnp.all(red_pos == state.red_coin_pos)
        red_on_blue = jnp.all(red_pos == state.blue_coin_pos)
        blue_on_red = jnp.all(blue_pos == state.red_coin_pos)
        blue_on_blue = jnp.all(blue_pos == state.blue_coin_pos)

        payoff = jnp.asarray(self.payoff_matrix)
        zero = jnp.float32(0.0)
        # Summed in JaxMARL's order (red coin, blue coin, penalty) so floats agree exactly.
        red_reward = (
            jnp.where(red_on_red, payoff[0, 0], zero)
            + jnp.where(red_on_blue, payoff[0, 1], zero)
            + jnp.where(blue_on_red, payoff[0, 2], zero)
        )
        blue_reward = (
            jnp.where(blue_on_red, payoff[1, 0], zero)
            + jnp.where(blue_on_blue, payoff[1, 1], zero)
            + jnp.where(red_on_blue, payoff[1, 2], zero)
        )

        # JaxMARL's key use: split off the respawn draw, then the inner reset's draw.
        key, respawn_key = random_unrolled.split(key)
        respawn = random_unrolled.randint(respawn_key, 4, 0, GRID_SIZE).reshape(2, 2)
        red_coin_pos = jnp.where(red_on_red | blue_on_red, respawn[0], state.red_coin_pos)
        blue_coin_pos = jnp.where(red_on_blue | blue_on_blue, respawn[1], state.blue_coin_pos)

        step = state.step + 1
        inner_done = step % self.num_inner_steps == 0
        outer_done = step >= self.max_steps
        # The last step of an inner game restarts the board and pays nothing (as JaxMARL).
        cells = self._placement(key)
        restart = lambda fresh, moved: jnp.where(inner_done, fresh, moved)  # noqa: E731
        red_reward = restart(zero, red_reward)
        blue_reward = restart(zero, blue_reward)
        picked = ~inner_done
        own = jnp.stack([red_on_red, blue_on_blue]) & picked
        other = jnp.stack([red_on_blue, blue_on_red]) & picked
        if self.shared_rewards:
            team = red_reward + blue_reward
            red_reward, blue_reward = team, team
        rewards_vec = jnp.stack([red_reward, blue_reward])
        # The boundary step pays nothing, so this is the whole inner game's return there.
        inner_returns = state.inner_returns + rewards_vec
        next_state = CoinGameState(
            red_pos=restart(cells[0], red_pos),
            blue_pos=restart(cells[1], blue_pos),
            red_coin_pos=restart(cells[2], red_coin_pos),
            blue_coin_pos=restart(cells[3], blue_coin_pos),
            step=step,
            done=outer_done,
            own_coins=state.own_coins + own.astype(jnp.int32),
            other_coins=state.other_coins + other.astype(jnp.int32),
            returns=state.returns + rewards_vec,
            inner_returns=jnp.where(inner_done, jnp.float32(0.0), inner_returns),
        )
        rewards = {self.agents[0]: red_reward, self.agents[1]: blue_reward}
        dones = {agent: outer_done for agent in self.agents}
        dones["__all__"] = outer_done
        return (
            self.get_obs(next_state),
            next_state,
            rewards,
            dones,
            self._infos(next_state, inner_done, inner_returns),
        )

    def _infos(
        self, state: CoinGameState, inner_done: jax.Array, inner_returns: jax.Array
    ) -> dict[str, jax.Array]:
        # Only completed inner games count: the running game's partial return is left out.
        games = jnp.maximum(self.outer_step(state), 1).astype(jnp.float32)
        completed_return = jnp.mean(state.returns - state.inner_returns)
        collected = jnp.sum(state.own_coins + state.other_coins)
        own_fraction = jnp.sum(state.own_coins) / jnp.maximum(collected, 1).astype(jnp.float32)
        return {
            "inner_episode_done": inner_done,
            "mean_inner_return": completed_return / games,
            "inner_return": jnp.where(inner_done, jnp.mean(inner_returns), jnp.float32(0.0)),
            "own_coin_fraction": own_fraction.astype(jnp.float32),
            "coins_collected": collected.astype(jnp.int32),
        }

    @jit_method
    def get_obs(self, state: CoinGameState) -> Observations:
        # Each agent sees itself as red: (own player, other player, own coin, other coin).
        views = (
            jnp.stack([state.red_pos, state.blue_pos, state.red_coin_pos, state.blue_coin_pos]),
            jnp.stack([state.blue_pos, state.red_pos, state.blue_coin_pos, state.red_coin_pos]),
        )
        obs = {}
        for agent, cells in zip(self.agents, views):
            if self.egocentric:
                cells = (cells - cells[0] + 1) % GRID_SIZE  # own player to the centre (1, 1)
            # Channel c is one-hot at cells[c] (a comparison: a scatter is a serial loop under
            # vmap on a CPU).
            x = jnp.arange(GRID_SIZE)[:, None, None]
            y = jnp.arange(GRID_SIZE)[None, :, None]
            grid = ((x == cells[:, 0]) & (y == cells[:, 1])).astype(jnp.float32)
            obs[agent] = grid if self.cnn else grid.reshape(-1)
        return obs

    @property
    def name(self) -> str:
        """JaxMARL's name for this env."""
        return "CoinGame-v1"

    @property
    def num_actions(self) -> int:
        """Number of actions (5)."""
        return len(MOVES)
