"""Overcooked (Carroll et al. 2019) with overcooked-ai's rules: JaxMARL 0.2.0's ``overcooked``."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.typing import Actions, Observations

from .layouts import COUNTER, DISH_PILE, FLOOR, ONION_PILE, POT, SERVE, Layout, get_layout

# Held / placed items.
EMPTY, ONION, DISH, SOUP = 0, 1, 2, 3
ITEM_NAMES = ("empty", "onion", "dish", "soup")

# Actions, in JaxMARL's and overcooked-ai's order; the facing index uses the first four.
NORTH, SOUTH, EAST, WEST, STAY, INTERACT = range(6)
DIRECTIONS = np.array([[0, -1], [0, 1], [1, 0], [-1, 0]], np.int32)  # (dx, dy)

SOUP_ONIONS = 3
COOK_TIME = 20
DELIVERY_REWARD = 20.0
ONION_IN_POT_REWARD = 3.0
DISH_PICKUP_REWARD = 3.0
SOUP_PICKUP_REWARD = 5.0
URGENCY_STEPS = 40
NUM_CHANNELS = 26


@struct.dataclass
class OvercookedState:
    """Everything that changes in an Overcooked kitchen.

    Attributes:
        agent_pos: ``[2, 2]`` int32 ``(x, y)`` cell of each agent.
        agent_dir_idx: ``[2]`` int32 facing: 0 north, 1 south, 2 east, 3 west.
        agent_inv: ``[2]`` int32 held item (``EMPTY``, ``ONION``, ``DISH``, ``SOUP``).
        counter_items: ``[h, w]`` int32 item lying on each counter cell (``EMPTY`` elsewhere).
        pot_onions: ``[P]`` int32 onions in each pot (0..3), pots in reading order.
        pot_tick: ``[P]`` int32 overcooked-ai's cooking tick: -1 not cooking, 1..20 cooking
            (20: ready). The soup's cook time remaining is ``20 - pot_tick``.
        step: ``[]`` int32 steps taken in the episode.
        done: ``[]`` bool, whether the episode has ended.
        layout_text: the kitchen as ASCII text (``Layout.to_text()``). Static: part of the
            pytree's structure, not an array, so it costs nothing per env; it lets a state be
            drawn without its env (JaxMARL's ``OvercookedVisualizer()``).
    """

    agent_pos: jax.Array
    agent_dir_idx: jax.Array
    agent_inv: jax.Array
    counter_items: jax.Array
    pot_onions: jax.Array
    pot_tick: jax.Array
    step: jax.Array
    done: jax.Array
    layout_text: str = struct.field(pytree_node=False, default="")


class Overcooked(MultiAgentEnv):
    """Two cooks make and serve onion soups: overcooked-ai's game with its old dynamics.

    Rules (overcooked-ai's, with cooking starting by itself, as JaxMARL): an agent moves
    north, south, east or west (turning to face that way even when blocked), stays, or
    interacts with the tile it faces. Interactions are resolved first, ``agent_0`` then
    ``agent_1``, before anyone moves: take an onion or a dish from a pile (empty hands), put
    down or pick up an item on a counter, put an onion into a pot that is not cooking, take a
    ready soup from a pot with a dish, or serve a soup at a serving spot. A pot with 3 onions
    starts cooking at the end of that step and is ready 20 steps later. Agents may only stand
    on floor; two agents moving onto one cell, or swapping cells, both stay where they were.

    Reward: 20 for each soup served, shared by both agents. ``infos["shaped_reward"]`` (per
    agent, float32) holds overcooked-ai's shaping: 3 for an onion into a pot, 5 for taking a
    soup, 3 for a useful dish pickup from a pile (fewer dishes held than non-empty pots at
    the start of the step, and none on counters).

    Observation (per agent, float32 ``[h, w, 26]``): overcooked-ai's lossless encoding,
    channel for channel, as rows ``y`` by columns ``x``: own and other agent's cell (0, 1),
    own and other agent's facing (2-5, 6-9), pots, counters, onion piles, tomato piles,
    dish piles, serving spots (10-15), onions in idle pots, tomatoes in pots, onions in
    soups, tomatoes in soups, cook time remaining, soup ready (16-21), dishes, onions,
    tomatoes (22-24, held items at their holder's cell) and urgency (25: all ones in the
    last 40 steps). Tomato channels are always zero.

    Action: ``Discrete(6)``: north (up), south (down), east (right), west (left), stay,
    interact. An action outside ``0..5`` is ``stay``.

    >>> env = jaxmarl.make("overcooked", layout="counter_circuit")
    >>> obs, state = env.reset(jax.random.key(0))
    """

    observations_from_state = True

    def __init__(
        self,
        layout: Any = "cramped_room",
        random_reset: bool = False,
        max_steps: int = 400,
        random_agent_positions: bool = False,
    ) -> None:
        """Build a kitchen.

        Args:
            layout: a layout name (``overcooked_layouts``), ASCII layout text, or a JaxMARL
                layout dict.
            random_reset: JaxMARL's random initial state: agents on random floor cells with
                random facing and random held items (nothing, onion, dish or soup), pots in
                random states (empty to ready).
            max_steps: episode length (overcooked-ai's horizon).
            random_agent_positions: only the agents' start cells are random (facing north,
                empty hands, empty pots).

        Raises:
            ValueError: an unknown layout, a malformed layout, or ``max_steps < 1``.
        """
        super().__init__(num_agents=2)
        self.layout: Layout = get_layout(layout)
        number = isinstance(max_steps, (int, float, np.integer, np.floating)) and not (
            isinstance(max_steps, (bool, np.bool_))
        )
        if not number or not float(max_steps).is_integer() or max_steps < 1:
            raise ValueError(
                f"overcooked: max_steps (the episode length) must be a positive int, got "
                f"{max_steps!r} ({type(max_steps).__name__})"
            )
        self.max_steps = int(max_steps)
        self.random_reset = bool(random_reset)
        self.random_agent_positions = bool(random_agent_positions)
        self.height, self.width = self.layout.height, self.layout.width
        # JaxMARL's attribute, which its scripts pass to OvercookedVisualizer; v1 agents see
        # the whole grid, so it changes no observation.
        self.agent_view_size = 5
        grid = self.layout.grid
        self._grid = grid
        self._pot_cells = self.layout.cells(POT)
        pot_index = np.full(grid.shape, -1, np.int32)
        pot_index[self._pot_cells[:, 1], self._pot_cells[:, 0]] = np.arange(len(self._pot_cells))
        self._pot_index = pot_index
        self._floor_cells = self.layout.cells(FLOOR)
        # Static observation channels 10-15 (tomato piles: none).
        self._static_channels = np.stack(
            [
                grid == POT,
                grid == COUNTER,
                grid == ONION_PILE,
                np.zeros_like(grid, bool),
                grid == DISH_PILE,
                grid == SERVE,
            ],
            axis=-1,
        ).astype(np.float32)
        self.obs_shape = (self.height, self.width, NUM_CHANNELS)
        self.observation_spaces = {
            agent: spaces.Box(0.0, float(COOK_TIME), self.obs_shape, jnp.float32)
            for agent in self.agents
        }
        self.action_spaces = {agent: spaces.Discrete(6) for agent in self.agents}

    # ----------------------------------------------------------------- reset
    @jit_method
    def reset(self, key: jax.Array) -> tuple[Observations, OvercookedState]:
        state = self.initial_state()
        if self.random_reset or self.random_agent_positions:
            pos_key, dir_key, inv_key, pot_key = jax.random.split(key, 4)
            floor = jnp.asarray(self._floor_cells)
            picks = jax.random.choice(pos_key, len(self._floor_cells), (2,), replace=False)
            state = state.replace(agent_pos=floor[picks])
            if self.random_reset:
                state = state.replace(
                    agent_dir_idx=jax.random.randint(dir_key, (2,), 0, 4, dtype=jnp.int32),
                    agent_inv=jax.random.randint(inv_key, (2,), 0, 4, dtype=jnp.int32),
                    **self._random_pots(pot_key),
                )
        return self.get_obs(state), state

    def initial_state(self) -> OvercookedState:
        """The layout's start: agents at their cells facing north, empty hands and pots."""
        num_pots = len(self._pot_cells)
        return OvercookedState(
            agent_pos=jnp.asarray(self.layout.agent_pos, jnp.int32),
            agent_dir_idx=jnp.full((2,), NORTH, jnp.int32),
            agent_inv=jnp.zeros((2,), jnp.int32),
            counter_items=jnp.zeros(self._grid.shape, jnp.int32),
            pot_onions=jnp.zeros((num_pots,), jnp.int32),
            pot_tick=jnp.full((num_pots,), -1, jnp.int32),
            step=jnp.int32(0),
            done=jnp.bool_(False),
            layout_text=self.layout.to_text(),
        )

    def _random_pots(self, key: jax.Array) -> dict[str, jax.Array]:
        """JaxMARL's random pot status (uniform over 24): 0..3 onions idle, or cooking/ready.

        JaxMARL's status ``s`` counts down from 23 (empty): 23..21 hold 0..2 onions, 20 holds
        3 onions not yet cooking (cooking starts at the end of the first step), 19..0 cook
        with ``s`` steps remaining (0: ready).
        """
        status = jax.random.randint(key, (len(self._pot_cells),), 0, 24, dtype=jnp.int32)
        onions = jnp.minimum(23 - status, SOUP_ONIONS)
        tick = jnp.where(status < 20, COOK_TIME - status, -1)
        return {"pot_onions": onions.astype(jnp.int32), "pot_tick": tick.astype(jnp.int32)}

    # ----------------------------------------------------------------- step
    def step_env(self, key: jax.Array, state: OvercookedState, actions: Actions):
        acts = jnp.stack([jnp.asarray(actions[a]).astype(jnp.int32) for a in self.agents])
        next_state, sparse, shaped = self.transition(state, acts)
        done = next_state.step >= self.max_steps
        next_state = next_state.replace(done=done)
        reward = jnp.sum(sparse)
        rewards = {agent: reward for agent in self.agents}
        dones = {agent: done for agent in self.agents}
        dones["__all__"] = done
        infos = {"shaped_reward": {agent: shaped[i] for i, agent in enumerate(self.agents)}}
        return self.get_obs(next_state), next_state, rewards, dones, infos

    def transition(
        self, state: OvercookedState, actions: jax.Array
    ) -> tuple[OvercookedState, jax.Array, jax.Array]:
        """One step of overcooked-ai's ``get_state_transition`` (old dynamics).

        ``actions`` is ``[2]`` int; an action outside ``0..5`` is ``stay``. Returns the next
        state (``step`` counted, ``done`` unchanged) and ``[2]`` float32 sparse and shaped
        rewards per agent.
        """
        actions = jnp.where((actions >= 0) & (actions <= INTERACT), actions, STAY)
        # overcooked-ai judges a dish pickup against the pots at the start of the step.
        nonempty_pots = self._pots_for_dishes(state)
        sparse, shaped = [], []
        for i in range(2):
            after, sparse_i, shaped_i = self._interact(state, i, nonempty_pots)
            interacting = actions[i] == INTERACT
            state = jax.tree.map(lambda new, old: jnp.where(interacting, new, old), after, state)
            sparse.append(jnp.where(interacting, sparse_i, 0.0))
            shaped.append(jnp.where(interacting, shaped_i, 0.0))
        state = self._move(state, actions)
        state = self._cook(state)
        state = state.replace(step=state.step + 1)
        return state, jnp.stack(sparse), jnp.stack(shaped)

    def _pots_for_dishes(self, state: OvercookedState) -> jax.Array:
        """Pots that make a dish pickup useful: 1-2 onions, cooking, or ready."""
        partial_pot = (state.pot_tick < 0) & (state.pot_onions > 0) & (state.pot_onions < 3)
        return jnp.sum(partial_pot | (state.pot_tick >= 0))

    def _interact(
        self, state: OvercookedState, i: int, nonempty_pots: jax.Array
    ) -> tuple[OvercookedState, jax.Array, jax.Array]:
        """Agent ``i`` interacts with the tile it faces (applied only if it chose to)."""
        direction = jnp.asarray(DIRECTIONS)[state.agent_dir_idx[i]]
        x, y = state.agent_pos[i, 0] + direction[0], state.agent_pos[i, 1] + direction[1]
        tile = jnp.asarray(self._grid)[y, x]
        held = state.agent_inv[i]
        on_counter = state.counter_items[y, x]
        hands_free = held == EMPTY

        # Counters: put down into an empty spot, or pick up.
        is_counter = tile == COUNTER
        drop = is_counter & ~hands_free & (on_counter == EMPTY)
        pick = is_counter & hands_free & (on_counter != EMPTY)
        # Piles.
        take_onion = (tile == ONION_PILE) & hands_free
        take_dish = (tile == DISH_PILE) & hands_free
        # Pots (a pot index of -1 is never used: every branch below requires a pot tile).
        pot = jnp.maximum(jnp.asarray(self._pot_index)[y, x], 0)
        is_pot = tile == POT
        onions, tick = state.pot_onions[pot], state.pot_tick[pot]
        add_onion = is_pot & (held == ONION) & (tick < 0) & (onions < SOUP_ONIONS)
        take_soup = is_pot & (held == DISH) & (tick >= COOK_TIME)
        serve = (tile == SERVE) & (held == SOUP)

        dishes_on_counters = jnp.sum(state.counter_items == DISH)
        dishes_held = jnp.sum(state.agent_inv == DISH)
        useful_dish = (dishes_on_counters == 0) & (dishes_held < nonempty_pots)

        new_held = held
        new_held = jnp.where(drop | add_onion | serve, EMPTY, new_held)
        new_held = jnp.where(pick, on_counter, new_held)
        new_held = jnp.where(take_onion, ONION, new_held)
        new_held = jnp.where(take_dish, DISH, new_held)
        new_held = jnp.where(take_soup, SOUP, new_held)
        new_counter = jnp.where(drop, held, jnp.where(pick, EMPTY, on_counter))
        pot_onions = state.pot_onions.at[pot].set(
            jnp.where(add_onion, onions + 1, jnp.where(take_soup, 0, onions))
        )
        pot_tick = state.pot_tick.at[pot].set(jnp.where(take_soup, -1, tick))
        shaped = (
            jnp.where(add_onion, ONION_IN_POT_REWARD, 0.0)
            + jnp.where(take_soup, SOUP_PICKUP_REWARD, 0.0)
            + jnp.where(take_dish & useful_dish, DISH_PICKUP_REWARD, 0.0)
        )
        sparse = jnp.where(serve, DELIVERY_REWARD, 0.0)
        next_state = state.replace(
            agent_inv=state.agent_inv.at[i].set(new_held),
            counter_items=state.counter_items.at[y, x].set(new_counter),
            pot_onions=pot_onions,
            pot_tick=pot_tick,
        )
        return next_state, sparse.astype(jnp.float32), shaped.astype(jnp.float32)

    def _move(self, state: OvercookedState, actions: jax.Array) -> OvercookedState:
        """Moves (face the move's direction; step onto floor only; collisions undo both)."""
        is_move = actions < STAY
        direction = jnp.asarray(DIRECTIONS)[jnp.minimum(actions, 3)]
        target = state.agent_pos + direction
        free = jnp.asarray(self._grid)[target[:, 1], target[:, 0]] == FLOOR
        new_pos = jnp.where((is_move & free)[:, None], target, state.agent_pos)
        same_cell = jnp.all(new_pos[0] == new_pos[1])
        swapped = jnp.all(new_pos[0] == state.agent_pos[1]) & jnp.all(
            new_pos[1] == state.agent_pos[0]
        )
        new_pos = jnp.where(same_cell | swapped, state.agent_pos, new_pos)
        new_dir = jnp.where(is_move, actions, state.agent_dir_idx)
        return state.replace(agent_pos=new_pos, agent_dir_idx=new_dir)

    def _cook(self, state: OvercookedState) -> OvercookedState:
        """Full idle pots start cooking, then every cooking pot advances one tick."""
        full = (state.pot_tick < 0) & (state.pot_onions == SOUP_ONIONS)
        tick = jnp.where(full, 0, state.pot_tick)
        tick = jnp.where((tick >= 0) & (tick < COOK_TIME), tick + 1, tick)
        return state.replace(pot_tick=tick)

    # ----------------------------------------------------------------- observations
    @jit_method
    def get_obs(self, state: OvercookedState) -> Observations:
        h, w = self.height, self.width
        cells = jnp.zeros((2, h, w), jnp.float32)
        rows, cols = state.agent_pos[:, 1], state.agent_pos[:, 0]
        at_agent = cells.at[jnp.arange(2), rows, cols].set(1.0)  # [2, h, w]
        facing = jnp.zeros((2, 4, h, w), jnp.float32)
        facing = facing.at[jnp.arange(2), state.agent_dir_idx, rows, cols].set(1.0)

        # Items: counter items plus held items at their holder's cell.
        items = state.counter_items.at[rows, cols].set(state.agent_inv)
        pot_cells = self._pot_cells
        pot_layer = lambda values: (  # noqa: E731
            jnp.zeros((h, w), jnp.float32).at[pot_cells[:, 1], pot_cells[:, 0]].set(values)
        )
        idle = state.pot_tick < 0
        onions = state.pot_onions.astype(jnp.float32)
        soup_items = (items == SOUP).astype(jnp.float32)
        onions_in_pot = pot_layer(jnp.where(idle, onions, 0.0))
        onions_in_soup = pot_layer(jnp.where(idle, 0.0, onions)) + SOUP_ONIONS * soup_items
        remaining = pot_layer(jnp.where(idle, 0.0, COOK_TIME - state.pot_tick).astype(jnp.float32))
        ready = pot_layer((state.pot_tick >= COOK_TIME).astype(jnp.float32)) + soup_items
        zeros = jnp.zeros((h, w), jnp.float32)
        urgent = (self.max_steps - state.step) < URGENCY_STEPS
        variable = jnp.stack(
            [
                onions_in_pot,
                zeros,
                onions_in_soup,
                zeros,
                remaining,
                ready,
                (items == DISH).astype(jnp.float32),
                (items == ONION).astype(jnp.float32),
                zeros,
                jnp.full((h, w), urgent, jnp.float32),
            ],
            axis=-1,
        )
        shared = jnp.concatenate([jnp.asarray(self._static_channels), variable], axis=-1)
        obs = {}
        for i, agent in enumerate(self.agents):
            order = jnp.array([i, 1 - i])
            own = jnp.concatenate([at_agent[order], facing[order].reshape(8, h, w)], axis=0)
            obs[agent] = jnp.concatenate([jnp.moveaxis(own, 0, -1), shared], axis=-1)
        return obs

    def get_world_state(self, state: OvercookedState) -> jax.Array:
        """``agent_0``'s observation ``(h, w, 26)``: it holds the whole state."""
        return self.get_obs(state)[self.agents[0]]

    # ----------------------------------------------------------------- info
    @property
    def name(self) -> str:
        """JaxMARL's name for this env."""
        return "Overcooked"

    @property
    def num_actions(self) -> int:
        """Number of actions (6)."""
        return 6
