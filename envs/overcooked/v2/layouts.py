"""OvercookedV2 kitchens: the ASCII layouts of JaxMARL 0.2.0 and the parser that reads them.

A layout is text, one line per grid row::

    W  counter (items can be put down on it)   A  an agent's start cell (an empty floor cell)
    X  delivery spot                           B  plate pile
    P  pot                                     R  recipe indicator (shows the recipe)
    L  button recipe indicator (shows the      0-9  ingredient pile 0..9
       recipe for a while after an interact,   O  ingredient pile 0 (overcooked-ai's onion)
       at a cost)                              ' '  empty floor

Agents are numbered in reading order (row by row, left to right); ``swap_agents=True`` reverses
that, which JaxMARL uses for two overcooked-ai layouts. A kitchen lists the recipes it can ask
for (three ingredient indices each); without a list every multiset of three of its ingredients
is possible, which needs a recipe indicator so that agents can learn which one is asked.

``Layout.from_string`` checks the text and raises ``ValueError`` naming the row (counted from 1)
and the character of the first problem, so a malformed kitchen fails before anything compiles.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import numpy as np

# Codes of the static grid channel (JaxMARL's values, so recorded grids compare directly).
EMPTY = 0
WALL = 1
GOAL = 4
POT = 5
RECIPE_INDICATOR = 6
BUTTON_RECIPE_INDICATOR = 7
PLATE_PILE = 9
INGREDIENT_PILE_BASE = 10  # ingredient pile i is INGREDIENT_PILE_BASE + i
MAX_INGREDIENTS = 10
RECIPE_SIZE = 3

_CHARS = {
    " ": EMPTY,
    "A": EMPTY,
    "W": WALL,
    "X": GOAL,
    "B": PLATE_PILE,
    "P": POT,
    "R": RECIPE_INDICATOR,
    "L": BUTTON_RECIPE_INDICATOR,
    "O": INGREDIENT_PILE_BASE,
    **{str(i): INGREDIENT_PILE_BASE + i for i in range(MAX_INGREDIENTS)},
}


@dataclasses.dataclass(frozen=True)
class Layout:
    """A parsed kitchen.

    Attributes:
        agent_positions: start cell ``(x, y)`` of each agent.
        static_objects: ``[height, width]`` int grid of the static codes above.
        num_ingredients: one more than the largest ingredient pile index.
        possible_recipes: the recipes a episode can ask for, each three sorted ingredient
            indices.
    """

    agent_positions: tuple[tuple[int, int], ...]
    static_objects: np.ndarray
    num_ingredients: int
    possible_recipes: tuple[tuple[int, ...], ...]

    @property
    def height(self) -> int:
        return int(self.static_objects.shape[0])

    @property
    def width(self) -> int:
        return int(self.static_objects.shape[1])

    @staticmethod
    def from_string(
        grid: str,
        possible_recipes: Sequence[Sequence[int]] | None = None,
        swap_agents: bool = False,
    ) -> Layout:
        """Parse an ASCII kitchen (JaxMARL's ``Layout.from_string`` signature).

        Args:
            grid: the text; one leading and one trailing empty line are ignored.
            possible_recipes: recipes as lists of three ingredient indices; ``None``: every
                multiset of three available ingredients (the kitchen then needs an ``R``).
            swap_agents: number the agents in reverse reading order.

        Raises:
            ValueError: naming the row and character of the problem: an unknown character,
                rows of different lengths, an empty floor cell on the border, no pot,
                delivery spot, plate pile, ingredient pile or agent, or recipes that do not
                fit the kitchen.
        """
        return _parse(grid, possible_recipes, swap_agents)


def _parse(grid: str, possible_recipes, swap_agents: bool) -> Layout:
    if not isinstance(grid, str):
        raise TypeError(f"an ASCII layout must be a string, got {type(grid).__name__}")
    rows = grid.split("\n")
    if rows and rows[0] == "":
        rows = rows[1:]
    if rows and rows[-1] == "":
        rows = rows[:-1]
    if not rows:
        raise ValueError("the ASCII layout is empty; write one line per grid row")
    width = len(rows[0])
    static = np.zeros((len(rows), width), dtype=np.int32)
    agents: list[tuple[int, int]] = []
    legend = "W X B P R L A O 0-9 and space"
    for r, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(
                f"row {r + 1} of the layout has {len(row)} characters, row 1 has {width}; "
                f"pad every row to the same width ({row!r})"
            )
        for c, char in enumerate(row):
            if char not in _CHARS:
                raise ValueError(
                    f"row {r + 1}, column {c + 1} of the layout: unknown character {char!r} "
                    f"in {row!r}; use {legend}"
                )
            static[r, c] = _CHARS[char]
            if char == "A":
                agents.append((c, r))
            border = r in (0, len(rows) - 1) or c in (0, width - 1)
            if border and static[r, c] == EMPTY:
                raise ValueError(
                    f"row {r + 1}, column {c + 1} of the layout: {char!r} is floor on the border "
                    f"of the kitchen in {row!r}; surround the kitchen with counters 'W' or "
                    f"other fixtures"
                )
    for code, char, what in (
        (POT, "P", "pot"),
        (GOAL, "X", "delivery spot"),
        (PLATE_PILE, "B", "plate pile"),
    ):
        if not (static == code).any():
            raise ValueError(f"the layout has no {what}: add a {char!r} to one of its rows")
    piles = static[static >= INGREDIENT_PILE_BASE] - INGREDIENT_PILE_BASE
    if piles.size == 0:
        raise ValueError("the layout has no ingredient pile: add a '0' (or 'O') to one of its rows")
    if not agents:
        raise ValueError("the layout has no agent: mark each agent's start cell with an 'A'")
    num_ingredients = int(piles.max()) + 1
    if possible_recipes is None:
        if not (static == RECIPE_INDICATOR).any():
            raise ValueError(
                "the layout has no recipe indicator 'R', so agents cannot tell which recipe is "
                "asked: add an 'R' or pass possible_recipes (e.g. [[0, 0, 0]])"
            )
        # Recipes are drawn by index, so their order is JaxMARL's: that of a Python set of
        # the sorted tuples filled in ``itertools.combinations`` order (deterministic: int
        # tuples hash the same in every run).
        pool = list(range(num_ingredients)) * RECIPE_SIZE
        recipes = list({tuple(sorted(c)) for c in itertools.combinations(pool, RECIPE_SIZE)})
    else:
        recipes = _check_recipes(possible_recipes, num_ingredients)
    if swap_agents:
        agents = agents[::-1]
    return Layout(
        agent_positions=tuple(agents),
        static_objects=static,
        num_ingredients=num_ingredients,
        possible_recipes=tuple(recipes),
    )


def _check_recipes(possible_recipes, num_ingredients: int) -> list[tuple[int, ...]]:
    recipes = []
    if isinstance(possible_recipes, (str, bytes)) or not len(possible_recipes):
        raise ValueError(
            f"possible_recipes must be a non-empty list of recipes, got {possible_recipes!r}"
        )
    for recipe in possible_recipes:
        recipe = tuple(int(i) for i in recipe)
        if len(recipe) != RECIPE_SIZE:
            raise ValueError(
                f"recipe {list(recipe)} has {len(recipe)} ingredients; every recipe has "
                f"{RECIPE_SIZE}"
            )
        if min(recipe) < 0 or max(recipe) >= num_ingredients:
            raise ValueError(
                f"recipe {list(recipe)} uses an ingredient the layout has no pile for; its "
                f"piles are 0..{num_ingredients - 1}"
            )
        recipes.append(recipe)
    return recipes


# JaxMARL 0.2.0's kitchens, as text. The first five are overcooked-ai's.
_ONION_SOUP = [[0, 0, 0]]
_TWO_SOUPS = [[0, 0, 0], [1, 1, 1]]
# name: (text, possible_recipes, swap_agents)
_KITCHENS: dict[str, tuple[str, list[list[int]] | None, bool]] = {
    "cramped_room": ("WWPWW\nOA AO\nW   W\nWBWXW", _ONION_SOUP, True),
    "asymm_advantages": (
        "WWWWWWWWW\nO WXWOW X\nW   P   W\nW A PA  W\nWWWBWBWWW",
        _ONION_SOUP,
        False,
    ),
    "coord_ring": ("WWWPW\nW A P\nBAW W\nO   W\nWOXWW", _ONION_SOUP, False),
    "forced_coord": ("WWWPW\nO WAP\nOAW W\nB W W\nWWWXW", _ONION_SOUP, False),
    "counter_circuit": (
        "WWWPPWWW\nW A    W\nB WWWW X\nW     AW\nWWWOOWWW",
        _ONION_SOUP,
        True,
    ),
    "cramped_room_v2": ("WWPWW\n0A A1\nW   R\nWBWXW", None, False),
    "asymm_advantages_recipes_center": (
        "WWWWWWWWW\n0 WXR01 X\n1   P   W\nW A PA  W\nWWWBWBWWW",
        None,
        False,
    ),
    "asymm_advantages_recipes_right": (
        "WWWWWWWWW\n0 WXW01 X\n1   P   R\nW A PA  W\nWWWBWBWWW",
        None,
        False,
    ),
    "asymm_advantages_recipes_left": (
        "WWWWWWWWW\n0 WXW01 X\n1   P   R\nR A PA  W\nWWWBWBWWW",
        None,
        False,
    ),
    "two_rooms": ("WWWWWB10W\nW   W   R\nP A W A W\nW   W   X\nWWWWWWWWW", None, False),
    "two_rooms_both": ("W01BWB10W\nW   W   R\nP A W A W\nW   W   X\nWWWWWWWWW", None, False),
    "long_room": (
        "WWWWWWWWWWWWWWW\nB            AP\n0             X\nWWWWWWWWWWWWWWW",
        _ONION_SOUP,
        False,
    ),
    "fun_coordination": (
        "WWWWWWWWW\n0   X   2\nRA  P  AW\n1   B   3\nWWWWWWWWW",
        [[0, 0, 2], [1, 1, 3]],
        False,
    ),
    "more_fun_coordination": (
        "WWWWWWWWW\nW   X   W\nRA  P  A1\n0   P   2\nW   B   W\nWWWWWWWWW",
        [[0, 1, 1], [0, 2, 2]],
        False,
    ),
    "fun_symmetries": ("WWWWBWW\n2  W  0\nR APA X\n2  W  1\nWWWWBWW", _TWO_SOUPS, False),
    "fun_symmetries_plates": (
        "WWWWWWW\nB  W  0\nR APA X\nB  W  1\nWWWWWWW",
        _TWO_SOUPS,
        False,
    ),
    "fun_symmetries1": (
        "WWWWWBWW\n2  WW  0\nR AWPA X\n2  WW  1\nWWWWWBWW",
        _TWO_SOUPS,
        False,
    ),
    "grounded_coord_simple": (
        "WW2WWWWW\nW  WB  0\nR ALPA X\nW  WB  1\nWW2WWWWW",
        _TWO_SOUPS,
        False,
    ),
    "grounded_coord_ring": (
        "WWW2R2WWW\nW       W\nW WWLWW W\n2 0   B 2\nRAXAP X R\n2 1   B 2\nW WWLWW W\n"
        "W       W\nWWW2R2WWW",
        _TWO_SOUPS,
        False,
    ),
    "test_time_simple": (
        "WW2WWWWW\nW  WB  0\nR AWPA X\nW  WB  1\nWW2WWWWW",
        _TWO_SOUPS,
        False,
    ),
    "test_time_wide": (
        "WWXBWW\n0 A  0\n1    1\nWPWPWW\n3 A  3\nW    W\nWWRWWW",
        _TWO_SOUPS,
        False,
    ),
    "demo_cook_simple": (
        "WWWWWR2W0WW\n0      W  B\nW     APA X\n1      W  B\nWWWWWR2W1WW",
        _TWO_SOUPS,
        False,
    ),
    "demo_cook_wide": (
        "WWWWBXBWWWW\nWWW0 A 1WWW\nWWWWWPWWWWW\nW    A    W\n0  W3R3W  0\nW1WWWWWWW1W",
        _TWO_SOUPS,
        False,
    ),
}

LAYOUT_TEXT = {name: text for name, (text, _, _) in _KITCHENS.items()}
overcooked_v2_layouts: dict[str, Layout] = {
    name: Layout.from_string(text, possible_recipes=recipes, swap_agents=swap)
    for name, (text, recipes, swap) in _KITCHENS.items()
}


def get_layout(layout: str | Layout) -> Layout:
    """A built-in layout by name, an ASCII layout (text with line breaks) or a ``Layout``.

    Raises:
        ValueError: an unknown name (the message lists the known ones) or a malformed text.
        TypeError: neither a string nor a ``Layout``.
    """
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, str):
        if layout in overcooked_v2_layouts:
            return overcooked_v2_layouts[layout]
        if "\n" in layout:
            return Layout.from_string(layout)
        raise ValueError(
            f"unknown OvercookedV2 layout {layout!r}; known layouts: "
            f"{', '.join(sorted(overcooked_v2_layouts))} (or pass an ASCII layout or a Layout)"
        )
    raise TypeError(
        f"layout must be a layout name, an ASCII layout or a Layout, got {type(layout).__name__}"
    )
