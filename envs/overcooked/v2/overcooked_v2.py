"""OvercookedV2 (JaxMARL's ``overcooked_v2``): cooking with several ingredients and recipes.

Agents fetch ingredients from piles, put three in a pot (it cooks for 20 steps), plate the soup
and deliver it. Each episode asks for one recipe (three ingredients), shown by recipe
indicators; only the asked soup pays. See ``README.md`` in this folder for the rules, the
observation channels and the deviations from JaxMARL 0.2.0.

Observation (per agent): ``Box(0, 255, (H, W, 25 + 5 n), float32)`` for ``n`` ingredients
(``+1`` with ``indicate_successful_delivery``), ``H = W = 2 * agent_view_size + 1`` when the
view is cropped, else the grid's height and width. Channels, in order:

* own agent (``7 + n``): position, facing (up, down, right, left), held item (plate, cooked,
  count of each ingredient);
* the other agents, summed (``7 + n``), same layout;
* counters, delivery spots, pots, recipe indicators, button indicators, plate piles (6);
* ingredient piles (``n``);
* items on cells (``2 + n``): plate, cooked, count of each ingredient;
* the recipe (``2 + n``) on recipe indicators (and button indicators while lit);
* pot timers (1); successful delivery on delivery spots (1, optional).

Action: ``Discrete(6)``: right, down, left, up, stay, interact. Actions outside ``0..5`` are
``stay``.

Reward: 20 to every agent for each delivery of the asked soup (``-20`` for another soup with
``negative_rewards``), minus 5 for lighting a button indicator. ``infos["shaped_reward"]``:
per agent 3 for a useful ingredient in a pot, 5 for starting a pot with the asked recipe
(``start_cooking_interaction``), 5 for plating the asked soup, 3 for a useful plate pickup.

Termination / truncation: episodes end only at ``max_steps`` (truncation).

State: ``OvercookedV2State`` (fields below, all int32 unless noted).

>>> import jax, jaxmarl
>>> env = jaxmarl.make("overcooked_v2", layout="cramped_room_v2", agent_view_size=2)
>>> obs, state = env.reset(jax.random.key(0))
>>> actions = {agent: env.action_space(agent).sample(jax.random.key(1)) for agent in env.agents}
>>> obs, state, rewards, dones, infos = env.step(jax.random.key(2), state, actions)
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxmarl import spaces
from jaxmarl.env import MultiAgentEnv, jit_method
from jaxmarl.envs.overcooked.v2 import layouts as L
from jaxmarl.envs.overcooked.v2.layouts import Layout, get_layout

# Items (the dynamic grid channel and inventories) are bit fields: bit 0 a plate, bit 1 cooked,
# then two bits per ingredient holding how many of it there are (at most three).
PLATE = 1
COOKED = 2
DELIVERY_REWARD = 20.0
POT_COOK_TIME = 20
INDICATOR_ACTIVATION_TIME = 10
INDICATOR_ACTIVATION_COST = 5.0
SHAPED_REWARDS = {"PLACEMENT_IN_POT": 3.0, "POT_START_COOKING": 5.0, "DISH_PICKUP": 5.0,
                  "PLATE_PICKUP": 3.0}  # fmt: skip

# Directions (JaxMARL's order): up, down, right, left, as (dx, dy) with y growing downwards.
DIRECTION_VECTORS = np.array([[0, -1], [0, 1], [1, 0], [-1, 0]], dtype=np.int32)
# Action -> direction: right, down, left, up; stay and interact keep the facing.
ACTION_DIRECTIONS = np.array([2, 1, 3, 0, -1, -1], dtype=np.int32)
NUM_ACTIONS = 6
STAY = 4
INTERACT = 5
_STATIC_CHANNELS = (
    L.WALL,
    L.GOAL,
    L.POT,
    L.RECIPE_INDICATOR,
    L.BUTTON_RECIPE_INDICATOR,
    L.PLATE_PILE,
)


class ObservationType(str, enum.Enum):
    """JaxMARL's observation kinds; only ``DEFAULT`` (the grid encoding) is implemented."""

    DEFAULT = "default"
    FEATURIZED = "featurized"


def ingredient(index) -> Any:
    """Item code of one ingredient ``index`` (int or array)."""
    return 4 << (2 * index)


def recipe_code(recipe: Sequence[int]) -> int:
    """Item code of the three ingredients of ``recipe`` (no plate, not cooked)."""
    return int(sum(ingredient(int(i)) for i in recipe))


def ingredient_counts(items: jax.Array, num_ingredients: int) -> jax.Array:
    """``[..., num_ingredients]`` count of each ingredient in item codes ``items``."""
    shifts = 2 + 2 * jnp.arange(num_ingredients, dtype=jnp.int32)
    return (items[..., None] >> shifts) & 3


@struct.dataclass
class Position:
    """Cells of the agents: ``x`` (column) and ``y`` (row), each ``[num_agents]`` int32."""

    x: jax.Array
    y: jax.Array


@struct.dataclass
class Agents:
    """The agents (JaxMARL's ``Agent`` pytree, stacked).

    Attributes:
        pos: ``Position`` with ``[num_agents]`` int32 fields.
        dir: ``[num_agents]`` int32 facing, 0 up, 1 down, 2 right, 3 left.
        inventory: ``[num_agents]`` int32 item code held (0: nothing).
    """

    pos: Position
    dir: jax.Array
    inventory: jax.Array


@struct.dataclass
class OvercookedV2State:
    """State of one kitchen.

    Attributes:
        agents: positions, facings and held items.
        grid: ``[height, width, 3]`` int32: static object code, item code on the cell, and
            extra (pot timer, or the steps a button indicator stays lit).
        recipe: ``[]`` int32 item code of the asked recipe.
        new_correct_delivery: ``[]`` bool, the asked soup was delivered this step.
        ingredient_permutations: ``[num_agents, num_ingredients]`` int32, how each agent's
            observation relabels ingredients (the identity unless
            ``op_ingredient_permutations``).
        step: ``[]`` int32 steps taken in the episode.
        done: ``[]`` bool, the episode has ended.
    """

    agents: Agents
    grid: jax.Array
    recipe: jax.Array
    new_correct_delivery: jax.Array
    ingredient_permutations: jax.Array
    step: jax.Array
    done: jax.Array


State = OvercookedV2State  # JaxMARL's name


class OvercookedV2(MultiAgentEnv):
    """OvercookedV2 with JaxMARL 0.2.0's keywords and defaults (see the module docstring).

    Args:
        layout: a layout name (``overcooked_v2_layouts``), an ASCII layout or a ``Layout``.
        max_steps: episode length.
        observation_type: ``"default"`` (or a list of it, one per agent).
        agent_view_size: view radius: each agent sees the ``2 v + 1`` square around itself
            (cells outside the grid are zero); ``None``: the whole grid.
        random_reset: start from random agent cells, facings, held items, pots and counters.
        random_agent_positions: start agents at random cells of their own room.
        start_cooking_interaction: pots cook only when an agent with empty hands interacts
            (otherwise as soon as the third ingredient is in).
        negative_rewards: a wrong soup delivered pays ``-20``.
        sample_recipe_on_delivery: draw a new recipe after each correct delivery.
        indicate_successful_delivery: add a channel marking delivery spots after a correct
            delivery.
        op_ingredient_permutations: ingredient indices whose labels each agent's observation
            shuffles (one random permutation per agent and episode).
        initial_state_buffer: states stacked on a leading axis; each reset starts from one of
            them (drawn uniformly) instead of the layout.
        force_path_planning: JaxMARL's switch for featurized observations (not implemented;
            only ``False``).

    Raises:
        ValueError: unknown layout (lists the known ones), malformed ASCII layout (names the
            row and character), an ``agent_view_size`` below 1 or larger than the grid needs,
            a bad ``max_steps``, observation type or permutation list.
        NotImplementedError: featurized observations.
    """

    observations_from_state = True

    def __init__(
        self,
        layout: str | Layout = "cramped_room",
        max_steps: int = 400,
        observation_type: str | list[str] = ObservationType.DEFAULT,
        agent_view_size: int | None = None,
        random_reset: bool = False,
        random_agent_positions: bool = False,
        start_cooking_interaction: bool = False,
        negative_rewards: bool = False,
        sample_recipe_on_delivery: bool = False,
        indicate_successful_delivery: bool = False,
        op_ingredient_permutations: Sequence[int] | None = None,
        initial_state_buffer: OvercookedV2State | None = None,
        force_path_planning: bool = False,
    ):
        layout = get_layout(layout)
        super().__init__(num_agents=len(layout.agent_positions))
        self.layout = layout
        self.height, self.width = layout.height, layout.width
        self.num_ingredients = layout.num_ingredients
        if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)):
            raise ValueError(f"max_steps must be an int >= 1, got {max_steps!r}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        self.max_steps = int(max_steps)
        self.observation_type = _check_observation_type(
            observation_type, self.num_agents, force_path_planning
        )
        self.agent_view_size = _check_view_size(agent_view_size, self.height, self.width)
        self.random_reset = bool(random_reset)
        self.random_agent_positions = bool(random_agent_positions)
        self.start_cooking_interaction = bool(start_cooking_interaction)
        self.negative_rewards = bool(negative_rewards)
        self.sample_recipe_on_delivery = bool(sample_recipe_on_delivery)
        self.indicate_successful_delivery = bool(indicate_successful_delivery)
        self.op_ingredient_permutations = _check_permutations(
            op_ingredient_permutations, self.num_ingredients
        )
        self.initial_state_buffer = initial_state_buffer
        if initial_state_buffer is not None and not isinstance(
            initial_state_buffer, OvercookedV2State
        ):
            raise ValueError(
                "initial_state_buffer must be an OvercookedV2State with the states stacked on "
                f"a leading axis, got {type(initial_state_buffer).__name__}"
            )

        self.possible_recipes = jnp.asarray(layout.possible_recipes, dtype=jnp.int32)
        self._recipe_codes = np.array([recipe_code(r) for r in layout.possible_recipes], np.int32)
        self._static = np.asarray(layout.static_objects, dtype=np.int32)
        self.enclosed_spaces = _rooms(self._static == L.EMPTY)
        self.action_set = jnp.arange(NUM_ACTIONS, dtype=jnp.int32)

        self._channel_table = _channel_table(self.num_ingredients, indicate_successful_delivery)
        view = None if self.agent_view_size is None else 2 * self.agent_view_size + 1
        channels = 25 + 5 * self.num_ingredients + int(self.indicate_successful_delivery)
        self.obs_shape = (view or self.height, view or self.width, channels)
        obs_space = spaces.Box(0, 255, self.obs_shape, dtype=jnp.float32)
        self.observation_spaces = {agent: obs_space for agent in self.agents}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.agents}

    @property
    def name(self) -> str:
        return "Overcooked V2"  # JaxMARL's

    @property
    def num_actions(self) -> int:
        return NUM_ACTIONS

    # ----------------------------------------------------------------- reset
    @jit_method
    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], OvercookedV2State]:
        if self.initial_state_buffer is not None:
            buffer = self.initial_state_buffer
            count = jax.tree.leaves(buffer)[0].shape[0]
            index = jax.random.randint(key, (), 0, count)
            return self.reset_from_state(jax.tree.map(lambda x: x[index], buffer), key)
        static = jnp.asarray(self._static)
        grid = jnp.stack([static, jnp.zeros_like(static), jnp.zeros_like(static)], axis=-1)
        xs, ys = zip(*self.layout.agent_positions)
        agents = Agents(
            pos=Position(x=jnp.array(xs, jnp.int32), y=jnp.array(ys, jnp.int32)),
            dir=jnp.zeros((self.num_agents,), jnp.int32),
            inventory=jnp.zeros((self.num_agents,), jnp.int32),
        )
        # Key use follows JaxMARL so that the same key gives the same episode.
        key, recipe_key = jax.random.split(key)
        state = OvercookedV2State(
            agents=agents,
            grid=grid,
            recipe=self._sample_recipe(recipe_key),
            new_correct_delivery=jnp.bool_(False),
            ingredient_permutations=self._sample_permutations(key),
            step=jnp.int32(0),
            done=jnp.bool_(False),
        )
        key, random_key = jax.random.split(key)
        if self.random_reset:
            state = self._randomize_state(state, random_key)
        elif self.random_agent_positions:
            state = self._randomize_agent_positions(state, random_key)
        return self.get_obs(state), state

    @jit_method
    def reset_from_state(
        self, state: OvercookedV2State, key: jax.Array
    ) -> tuple[dict[str, jax.Array], OvercookedV2State]:
        """Start an episode from ``state``'s kitchen, agents and recipe (JaxMARL's method)."""
        state = state.replace(
            step=jnp.int32(0),
            done=jnp.bool_(False),
            new_correct_delivery=jnp.bool_(False),
            ingredient_permutations=self._sample_permutations(key),
        )
        return self.get_obs(state), state

    def _sample_recipe(self, key: jax.Array) -> jax.Array:
        index = jax.random.randint(key, (), 0, len(self._recipe_codes))
        return jnp.asarray(self._recipe_codes)[index]

    def _sample_permutations(self, key: jax.Array) -> jax.Array:
        identity = jnp.arange(self.num_ingredients, dtype=jnp.int32)
        if self.op_ingredient_permutations is None:
            return jnp.tile(identity, (self.num_agents, 1))
        shuffled = jnp.asarray(self.op_ingredient_permutations, jnp.int32)

        def one(agent_key):
            perm = jax.random.permutation(agent_key, shuffled)
            return identity.at[shuffled].set(identity[perm])

        _, perm_key = jax.random.split(key)
        return jax.vmap(one)(jax.random.split(perm_key, self.num_agents))

    def _randomize_agent_positions(self, state: OvercookedV2State, key: jax.Array):
        rooms = jnp.asarray(self.enclosed_spaces)
        pos = state.agents.pos
        key, cells_key = jax.random.split(key)

        def place(taken, agent):
            x, y, agent_key = agent
            allowed = ((rooms == rooms[y, x]) & ~taken).ravel()
            cell = jax.random.choice(agent_key, allowed.size, (), p=allowed / jnp.sum(allowed))
            cell = cell.astype(jnp.int32)
            new_x, new_y = cell % self.width, cell // self.width
            return taken.at[new_y, new_x].set(True), (new_x, new_y)

        taken = jnp.zeros(rooms.shape, jnp.bool_)
        agent_keys = jax.random.split(cells_key, self.num_agents)
        _, (xs, ys) = jax.lax.scan(place, taken, (pos.x, pos.y, agent_keys))
        _, dir_key = jax.random.split(key)
        dirs = jax.random.randint(dir_key, (self.num_agents,), 0, 4).astype(jnp.int32)
        agents = state.agents.replace(pos=Position(x=xs, y=ys), dir=dirs)
        return state.replace(agents=agents)

    def _random_dish(self, key: jax.Array) -> jax.Array:
        return self._sample_recipe(key) | COOKED | PLATE

    def _randomize_state(self, state: OvercookedV2State, key: jax.Array) -> OvercookedV2State:
        key, positions_key = jax.random.split(key)
        state = self._randomize_agent_positions(state, positions_key)
        n = self.num_ingredients

        def inventory(agent_key):
            dish_key, ingredient_key, choice_key = jax.random.split(agent_key, 3)
            options = jnp.stack(
                [
                    jnp.int32(0),
                    jnp.int32(PLATE),
                    ingredient(jax.random.randint(ingredient_key, (), 0, n)),
                    self._random_dish(dish_key),
                ]
            ).astype(jnp.int32)
            return jax.random.choice(choice_key, options, (), p=jnp.array([0.5, 0.1, 0.25, 0.15]))

        key, inventory_key = jax.random.split(key)
        inventories = jax.vmap(inventory)(jax.random.split(inventory_key, self.num_agents))

        def pot(cell, cell_key):
            cell_key, ing_key, num_key, timer_key = jax.random.split(cell_key, 4)
            items = ingredient(jax.random.randint(ing_key, (3,), 0, n))
            filled = jax.random.randint(num_key, (), 1, 4)
            partial_items = jnp.sum(items * (jnp.arange(3) < filled))
            cooking_items = partial_items if self.start_cooking_interaction else jnp.sum(items)
            timer = jax.random.randint(timer_key, (), 0, POT_COOK_TIME) + 1
            options = jnp.stack(
                [
                    cell,
                    jnp.stack([cell[0], partial_items, 0]),
                    jnp.stack([cell[0], cooking_items, timer]),
                    jnp.stack([cell[0], cooking_items | COOKED, 0]),
                ]
            ).astype(jnp.int32)
            return jax.random.choice(cell_key, options, p=jnp.array([0.4, 0.35, 0.15, 0.1]))

        def counter(cell, cell_key):
            cell_key, ing_key, dish_key = jax.random.split(cell_key, 3)
            options = jnp.stack(
                [
                    jnp.int32(0),
                    jnp.int32(PLATE),
                    ingredient(jax.random.randint(ing_key, (), 0, n)),
                    self._random_dish(dish_key),
                ]
            ).astype(jnp.int32)
            item = jax.random.choice(cell_key, options, p=jnp.array([0.5, 0.1, 0.3, 0.1]))
            return cell.at[1].set(item)

        def cell_state(cell, cell_key):
            return jnp.where(
                cell[0] == L.POT,
                pot(cell, cell_key),
                jnp.where(cell[0] == L.WALL, counter(cell, cell_key), cell),
            )

        key, grid_key = jax.random.split(key)
        cell_keys = jax.random.split(grid_key, (self.height, self.width))
        grid = jax.vmap(jax.vmap(cell_state))(state.grid, cell_keys)
        return state.replace(agents=state.agents.replace(inventory=inventories), grid=grid)

    # ----------------------------------------------------------------- step
    def step_env(self, key: jax.Array, state: OvercookedV2State, actions: dict[str, Any]):
        acts = jnp.stack([jnp.asarray(actions[agent]) for agent in self.agents]).astype(jnp.int32)
        acts = jnp.where((acts >= 0) & (acts < NUM_ACTIONS), acts, STAY)
        state, reward, shaped = self._step_agents(key, state, acts)
        step = state.step + 1
        done = (step >= self.max_steps) | state.done
        state = state.replace(step=step, done=done)
        obs = self.get_obs(state)
        rewards = {agent: reward for agent in self.agents}
        dones = {agent: done for agent in self.agents}
        dones["__all__"] = done
        infos = {"shaped_reward": {agent: shaped[i] for i, agent in enumerate(self.agents)}}
        return obs, state, rewards, dones, infos

    def _step_agents(self, key: jax.Array, state: OvercookedV2State, acts: jax.Array):
        agents = self._move(state, acts)
        grid = state.grid
        reward = jnp.float32(0.0)
        delivered = jnp.bool_(False)
        held_before = agents.inventory
        inventories = agents.inventory
        shaped = []
        # Agents interact one after the other in index order, each seeing the kitchen as the
        # previous ones left it (JaxMARL's order).
        for i in range(self.num_agents):
            outcome = self._interact(
                grid,
                agents.pos.x[i],
                agents.pos.y[i],
                agents.dir[i],
                inventories[i],
                held_before,
                state.recipe,
            )
            acting = acts[i] == INTERACT
            grid = jnp.where(acting, outcome["grid"], grid)
            inventories = inventories.at[i].set(
                jnp.where(acting, outcome["inventory"], inventories[i])
            )
            reward = reward + jnp.where(acting, outcome["reward"], 0.0)
            delivered = delivered | (acting & outcome["correct_delivery"])
            shaped.append(jnp.where(acting, outcome["shaped"], 0.0))
        grid = self._tick(grid)
        recipe = state.recipe
        if self.sample_recipe_on_delivery:
            _, recipe_key = jax.random.split(key)
            recipe = jnp.where(delivered, self._sample_recipe(recipe_key), recipe)
        state = state.replace(
            agents=agents.replace(inventory=inventories),
            grid=grid,
            recipe=recipe,
            new_correct_delivery=delivered,
        )
        return state, reward, jnp.stack(shaped).astype(jnp.float32)

    def _move(self, state: OvercookedV2State, acts: jax.Array) -> Agents:
        """Moves, then collisions (colliders stay, repeatedly), then swaps (both stay)."""
        agents = state.agents
        x, y = agents.pos.x, agents.pos.y
        is_move = acts < 4
        facing = jnp.where(is_move, jnp.asarray(ACTION_DIRECTIONS)[acts], agents.dir)
        vectors = jnp.asarray(DIRECTION_VECTORS)[facing]
        target_x = jnp.clip(x + vectors[:, 0], 0, self.width - 1)
        target_y = jnp.clip(y + vectors[:, 1], 0, self.height - 1)
        free = state.grid[target_y, target_x, 0] == L.EMPTY
        new_x = jnp.where(is_move & free, target_x, x)
        new_y = jnp.where(is_move & free, target_y, y)

        others = ~jnp.eye(self.num_agents, dtype=jnp.bool_)
        stuck = jnp.zeros((self.num_agents,), jnp.bool_)
        # Each round with a collision stops at least one more agent, so num_agents rounds
        # settle it (JaxMARL loops until none is left).
        for _ in range(self.num_agents):
            px, py = jnp.where(stuck, x, new_x), jnp.where(stuck, y, new_y)
            same = (px[:, None] == px[None, :]) & (py[:, None] == py[None, :]) & others
            stuck = stuck | same.any(axis=1)
        new_x, new_y = jnp.where(stuck, x, new_x), jnp.where(stuck, y, new_y)
        onto = (new_x[:, None] == x[None, :]) & (new_y[:, None] == y[None, :]) & others
        swapped = (onto & onto.T).any(axis=0)
        new_x, new_y = jnp.where(swapped, x, new_x), jnp.where(swapped, y, new_y)
        return agents.replace(pos=Position(x=new_x, y=new_y), dir=facing)

    def _interact(self, grid, x, y, facing, held, held_before, recipe) -> dict[str, jax.Array]:
        """What one agent's interact does to the cell it faces and to its hands."""
        vector = jnp.asarray(DIRECTION_VECTORS)[facing]
        fx, fy = x + vector[0], y + vector[1]
        static, items, extra = grid[fy, fx, 0], grid[fy, fx, 1], grid[fy, fx, 2]
        n = self.num_ingredients
        asked_dish = recipe | PLATE | COOKED

        is_plate_pile = static == L.PLATE_PILE
        is_ingredient_pile = static >= L.INGREDIENT_PILE_BASE
        is_pot = static == L.POT
        is_counter = static == L.WALL
        cell_empty = items == 0
        hands_empty = held == 0
        holds_ingredient = ((held >> 2) != 0) & ((held & PLATE) == 0)
        holds_plate = held == PLATE
        holds_dish = (held & COOKED) != 0
        merged = items + held

        pot_cooking = is_pot & (extra > 0)
        pot_cooked = is_pot & ((items & COOKED) != 0)
        pot_idle = is_pot & ~pot_cooking & ~pot_cooked
        pot_count = ingredient_counts(items, n).sum()

        dish_pickup = pot_cooked & holds_plate
        pickup = ((is_plate_pile | is_ingredient_pile) & hands_empty) | dish_pickup
        pickup = pickup | (is_counter & ~cell_empty & hands_empty)
        light_button = (static == L.BUTTON_RECIPE_INDICATOR) & hands_empty & cell_empty
        placement = pot_idle & holds_ingredient & (pot_count < 3)
        drop = (is_counter & cell_empty & ~hands_empty) | placement
        delivery = (static == L.GOAL) & holds_dish
        no_effect = ~pickup & ~drop & ~delivery

        pile_index = jnp.clip(static - L.INGREDIENT_PILE_BASE, 0, L.MAX_INGREDIENTS - 1)
        pile_item = jnp.where(is_plate_pile, PLATE, 0)
        pile_item = pile_item + jnp.where(is_ingredient_pile, ingredient(pile_index), 0)
        new_items = jnp.where(drop, merged, jnp.where(no_effect, items, 0))
        new_held = jnp.where(pickup, pile_item + merged, jnp.where(no_effect, held, 0))

        start_cooking = pot_idle & ~cell_empty & hands_empty & self.start_cooking_interaction
        full_after = ingredient_counts(new_items, n).sum() == 3
        auto_cook = pot_idle & full_after & (not self.start_cooking_interaction)
        new_extra = jnp.where(
            start_cooking | auto_cook,
            POT_COOK_TIME,
            jnp.where(light_button, INDICATOR_ACTIVATION_TIME, extra),
        )
        new_grid = grid.at[fy, fx].set(jnp.stack([static, new_items, new_extra]))

        correct = held == asked_dish
        wrong_value = -DELIVERY_REWARD if self.negative_rewards else 0.0
        reward = jnp.where(delivery, jnp.where(correct, DELIVERY_REWARD, wrong_value), 0.0)
        reward = reward - jnp.where(light_button, INDICATOR_ACTIVATION_COST, 0.0)

        # A placement helps when the pot holds fewer of that ingredient than the recipe asks.
        this_ingredient = held | (held << 1)
        useful_placement = (items & this_ingredient) < (recipe & this_ingredient)
        # A plate pickup helps when fewer plates are held (before anyone's interact this step)
        # than pots have something in them, and no plate lies around.
        plates_held = jnp.sum(held_before == PLATE)
        busy_pots = jnp.sum((grid[:, :, 0] == L.POT) & (grid[:, :, 1] != 0))
        no_loose_plates = ~jnp.any(grid[:, :, 1] == PLATE)
        plate_pickup = pickup & (new_held == PLATE) & (plates_held < busy_pots) & no_loose_plates
        shaped = (
            jnp.where(dish_pickup & (merged == asked_dish), SHAPED_REWARDS["DISH_PICKUP"], 0.0)
            + jnp.where(placement & useful_placement, SHAPED_REWARDS["PLACEMENT_IN_POT"], 0.0)
            + jnp.where(start_cooking & (items == recipe), SHAPED_REWARDS["POT_START_COOKING"], 0.0)
            + jnp.where(plate_pickup, SHAPED_REWARDS["PLATE_PICKUP"], 0.0)
        )
        return dict(
            grid=new_grid,
            inventory=new_held,
            reward=reward,
            shaped=shaped,
            correct_delivery=delivery & correct,
        )

    def _tick(self, grid: jax.Array) -> jax.Array:
        """One step of time: pots cook (and are done at 0), lit button indicators dim."""
        static, items, extra = grid[..., 0], grid[..., 1], grid[..., 2]
        cooking = (static == L.POT) & (extra > 0)
        extra = jnp.where(cooking, extra - 1, extra)
        items = jnp.where(cooking & (extra == 0), items | COOKED, items)
        button = static == L.BUTTON_RECIPE_INDICATOR
        extra = jnp.where(button, jnp.maximum(extra - 1, 0), extra)
        return jnp.stack([static, items, extra], axis=-1)

    # ----------------------------------------------------------------- observations
    @jit_method
    def get_obs(self, state: OvercookedV2State) -> dict[str, jax.Array]:
        agents = state.agents
        windows, top, left = self._windows(state)  # [A, h, w, 3], [A], [A]
        static, items, extra = windows[..., 0], windows[..., 1], windows[..., 2]
        height, width = static.shape[1:]
        # cells[o, a]: agent a's cell in observer o's window. Agents never share a cell, so a
        # cell shows at most one agent's facing and held item.
        rows = jnp.arange(height)[None, None, :] + top[:, None, None] == agents.pos.y[None, :, None]
        cols = jnp.arange(width)[None, None, :] + left[:, None, None] == agents.pos.x[None, :, None]
        cells = (rows[..., :, None] & cols[..., None, :]).astype(jnp.int32)  # [A, A, h, w]
        own = jnp.einsum("oahw,oa->ohw", cells, jnp.eye(self.num_agents, dtype=jnp.int32))
        anyone = cells.sum(axis=1)
        lit = (static == L.RECIPE_INDICATOR) | ((static == L.BUTTON_RECIPE_INDICATOR) & (extra > 0))
        sources = (
            jnp.ones_like(static),
            jnp.einsum("oahw,a->ohw", cells, agents.dir),
            jnp.einsum("oahw,a->ohw", cells, agents.inventory),
            static,
            items,
            jnp.where(lit, state.recipe, 0),
            jnp.where(static == L.POT, extra, 0),
            jnp.where(static == L.GOAL, state.new_correct_delivery.astype(jnp.int32), 0),
        )
        gates = (jnp.ones_like(static), own, anyone - own)
        # Every channel is one formula over the per-cell sources (see _channel_table), so the
        # whole observation is one fused elementwise loop with no concatenation.
        table = self._channel_table
        value = sum(src[..., None] * (table["source"] == k) for k, src in enumerate(sources))
        gate = sum(g[..., None] * (table["gate"] == k) for k, g in enumerate(gates))
        equals, shift = table["equals"], table["shift"]
        if self.op_ingredient_permutations is not None:
            # Ingredient channel k of observer o shows ingredient permutation[o, k].
            ingredient_of = table["ingredient"]
            shown = state.ingredient_permutations[:, jnp.maximum(ingredient_of, 0)]  # [A, C]
            relabelled = ingredient_of >= 0
            equals = jnp.where(relabelled & (equals >= 0), L.INGREDIENT_PILE_BASE + shown, equals)
            shift = jnp.where(relabelled & (equals < 0), 2 + 2 * shown, shift)
            equals, shift = equals[:, None, None, :], shift[:, None, None, :]
        bits = (value >> shift) & table["mask"]
        obs = jnp.where(equals >= 0, value == equals, bits) * gate
        obs = obs.astype(jnp.float32)
        return {agent: obs[i] for i, agent in enumerate(self.agents)}

    def _windows(self, state: OvercookedV2State):
        """Each agent's view of the grid and its top-left cell: ``[A, h, w, 3]``, ``[A]``, ``[A]``.

        The whole grid without ``agent_view_size``; else the ``2 v + 1`` square centred on the
        agent, where cells outside the grid read as static code -1 (no channel) and no item.
        Cropping the 3-channel grid before building the channels does the least work.
        """
        if self.agent_view_size is None:
            zeros = jnp.zeros((self.num_agents,), jnp.int32)
            windows = jnp.broadcast_to(state.grid, (self.num_agents, *state.grid.shape))
            return windows, zeros, zeros
        v = self.agent_view_size
        outside = jnp.array([-1, 0, 0], jnp.int32)
        padded = jnp.pad(state.grid - outside, ((v, v), (v, v), (0, 0))) + outside
        size = (2 * v + 1, 2 * v + 1, 3)

        def window(x, y):
            return jax.lax.dynamic_slice(padded, (y, x, jnp.int32(0)), size)

        x, y = state.agents.pos.x, state.agents.pos.y
        return jax.vmap(window)(x, y), y - v, x - v

    # ----------------------------------------------------------------- logging hook
    def episode_return_groups(self, state: OvercookedV2State) -> dict[str, jax.Array]:
        """Which recipe the running episode asks for, for ``LogWrapper``'s per-group returns.

        Returns ``{"0_0_1": bool, ...}`` keyed by JaxMARL's recipe names (ingredient indices
        joined by ``_``); exactly one is true.
        """
        return {
            "_".join(str(i) for i in recipe): state.recipe == code
            for recipe, code in zip(self.layout.possible_recipes, self._recipe_codes)
        }

    episode_return_group_kind = "recipe"


def _channel_table(num_ingredients: int, delivery_channel: bool) -> dict[str, np.ndarray]:
    """How each observation channel is computed from the per-cell sources of ``get_obs``.

    Sources: 0 one, 1 facing of the agent on the cell, 2 its held item, 3 static code, 4 item
    on the cell, 5 recipe (on lit indicators), 6 pot timer, 7 delivery flag (on ``X``). Gates:
    0 always, 1 the observer is on the cell, 2 another agent is. A channel's value is
    ``(source == equals)`` when ``equals >= 0``, else ``(source >> shift) & mask``, times its
    gate; ``ingredient`` marks the channels of ingredient ``k`` (relabelled by permutations).
    """
    rows = []  # (source, gate, equals, shift, mask, ingredient)

    def item_channels(source, gate):
        rows.append((source, gate, -1, 0, 1, -1))  # plate
        rows.append((source, gate, -1, 1, 1, -1))  # cooked
        rows.extend((source, gate, -1, 2 + 2 * k, 3, k) for k in range(num_ingredients))

    for gate in (1, 2):  # the observer, then the other agents
        rows.append((0, gate, -1, 0, 1, -1))  # position
        rows.extend((1, gate, facing, 0, 0, -1) for facing in range(4))
        item_channels(2, gate)
    rows.extend((3, 0, code, 0, 0, -1) for code in _STATIC_CHANNELS)
    rows.extend((3, 0, L.INGREDIENT_PILE_BASE + k, 0, 0, k) for k in range(num_ingredients))
    item_channels(4, 0)
    item_channels(5, 0)
    rows.append((6, 0, -1, 0, -1, -1))  # pot timer, all bits
    if delivery_channel:
        rows.append((7, 0, -1, 0, 1, -1))
    columns = np.array(rows, dtype=np.int32).T
    names = ("source", "gate", "equals", "shift", "mask", "ingredient")
    return dict(zip(names, columns))


def _check_observation_type(observation_type, num_agents: int, force_path_planning: bool):
    kinds = observation_type if isinstance(observation_type, list) else [observation_type]
    if isinstance(observation_type, list) and len(kinds) != num_agents:
        raise ValueError(
            f"observation_type lists {len(kinds)} types for {num_agents} agents; give one per "
            f"agent or a single type"
        )
    for kind in kinds:
        try:
            kind = ObservationType(kind)
        except ValueError:
            raise ValueError(
                f"unknown observation_type {kind!r}; use 'default' (the grid encoding)"
            ) from None
        if kind is ObservationType.FEATURIZED:
            raise NotImplementedError(
                "observation_type 'featurized' (JaxMARL's overcooked-ai features) is not "
                "implemented here; use 'default'"
            )
    if force_path_planning:
        raise NotImplementedError(
            "force_path_planning only serves featurized observations, which are not "
            "implemented here; leave it False"
        )
    return ObservationType.DEFAULT


def _check_view_size(agent_view_size, height: int, width: int) -> int | None:
    if agent_view_size is None:
        return None
    if isinstance(agent_view_size, bool) or not isinstance(agent_view_size, (int, np.integer)):
        raise ValueError(
            f"agent_view_size must be an int >= 1 (a view radius) or None for the whole grid, "
            f"got {agent_view_size!r}"
        )
    largest = max(height, width) - 1
    if agent_view_size < 1:
        raise ValueError(
            f"agent_view_size={agent_view_size}: the view radius must be >= 1 (the agent sees "
            f"the 2 * agent_view_size + 1 square around itself); use None for the whole grid"
        )
    if agent_view_size > largest:
        raise ValueError(
            f"agent_view_size={agent_view_size} is larger than the {height}x{width} grid: a "
            f"radius of {largest} already shows every cell from anywhere; use at most "
            f"{largest}, or None for the whole grid"
        )
    return int(agent_view_size)


def _check_permutations(indices, num_ingredients: int) -> tuple[int, ...] | None:
    if indices is None or len(indices) == 0:
        return None
    indices = tuple(int(i) for i in indices)
    bad = [i for i in indices if not 0 <= i < num_ingredients]
    if bad or len(set(indices)) != len(indices):
        raise ValueError(
            f"op_ingredient_permutations={list(indices)} must be distinct ingredient indices "
            f"of this layout (0..{num_ingredients - 1})"
        )
    return indices


def _rooms(floor: np.ndarray) -> np.ndarray:
    """``[H, W]`` int32 room id of each floor cell (4-connected), -1 elsewhere."""
    rooms = np.full(floor.shape, -1, np.int32)
    next_id = 0
    for start in zip(*np.nonzero(floor)):
        if rooms[start] != -1:
            continue
        stack = [start]
        rooms[start] = next_id
        while stack:
            r, c = stack.pop()
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                nr, nc = r + dr, c + dc
                inside = 0 <= nr < floor.shape[0] and 0 <= nc < floor.shape[1]
                if inside and floor[nr, nc] and rooms[nr, nc] == -1:
                    rooms[nr, nc] = next_id
                    stack.append((nr, nc))
        next_id += 1
    return rooms
