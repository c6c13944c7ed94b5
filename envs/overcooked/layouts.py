"""Overcooked kitchens written as ASCII text, and the parser that checks them.

A layout is one line per grid row, every row the same width, in overcooked-ai's symbols:

====  =====================================================
 X    counter (items can be put down on it)
 P    pot
 O    onion pile (dispenser)
 D    dish (plate) pile
 S    serving spot (delivery)
 1    agent ``agent_0`` (starts on floor)
 2    agent ``agent_1``
' '   floor
====  =====================================================

Leading and trailing blank lines and the indentation shared by all rows are ignored, so a
layout can be written as an indented triple-quoted string. ``overcooked_layouts`` holds the
five kitchens of JaxMARL 0.2.0 with JaxMARL's start positions (four of them differ from
overcooked-ai's own layout files; see ``README.md``). Pass your own text as
``jaxmarl.make("overcooked", layout=text)``, or register it here under a name with
``register_layout`` (a name already taken, a built-in one included, needs ``overwrite=True``).
JaxMARL's dict format (``wall_idx``, ``agent_idx``, ...) is accepted too.
"""

from __future__ import annotations

import dataclasses
import textwrap
from collections.abc import Mapping
from typing import Any

import numpy as np

# Tile codes of the static grid.
FLOOR, COUNTER, POT, ONION_PILE, DISH_PILE, SERVE = range(6)
_SYMBOLS = {" ": FLOOR, "X": COUNTER, "P": POT, "O": ONION_PILE, "D": DISH_PILE, "S": SERVE}
_AGENT_SYMBOLS = ("1", "2")
NUM_AGENTS = 2

overcooked_layouts: dict[str, str] = {
    "cramped_room": """
        XXPXX
        O1 2O
        X   X
        XDXSX
        """,
    "asymm_advantages": """
        XXXXXXXXX
        O XSXOX S
        X   P   X
        X 1 P2  X
        XXXDXDXXX
        """,
    "coord_ring": """
        XXXPX
        X 1 P
        D2X X
        O   X
        XOSXX
        """,
    "forced_coord": """
        XXXPX
        O X2P
        O1X X
        D X X
        XXXSX
        """,
    "counter_circuit": """
        XXXPPXXX
        X 1    X
        D XXXX S
        X     2X
        XXXOOXXX
        """,
}


@dataclasses.dataclass(frozen=True)
class Layout:
    """A parsed kitchen (static; NumPy arrays, never traced).

    Attributes:
        name: the layout's name, or ``"custom"``.
        grid: ``[h, w]`` int8 tile codes (``FLOOR``, ``COUNTER``, ``POT``, ...).
        agent_pos: ``[2, 2]`` int32 start cells ``(x, y)`` of ``agent_0`` and ``agent_1``.
    """

    name: str
    grid: np.ndarray
    agent_pos: np.ndarray

    @property
    def height(self) -> int:
        return int(self.grid.shape[0])

    @property
    def width(self) -> int:
        return int(self.grid.shape[1])

    def cells(self, tile: int) -> np.ndarray:
        """``[n, 2]`` int32 ``(x, y)`` of every cell of one tile type, in reading order."""
        ys, xs = np.nonzero(self.grid == tile)
        return np.stack([xs, ys], axis=1).astype(np.int32)

    def to_text(self) -> str:
        """The layout as ASCII text (the inverse of ``parse_layout``)."""
        chars = {code: symbol for symbol, code in _SYMBOLS.items()}
        rows = [[chars[int(c)] for c in row] for row in self.grid]
        for i, (x, y) in enumerate(self.agent_pos):
            rows[int(y)][int(x)] = _AGENT_SYMBOLS[i]
        return "\n".join("".join(row) for row in rows)


def register_layout(name: str, text: str, overwrite: bool = False) -> None:
    """Add a named layout (checked now) so that ``layout=name`` finds it in this process.

    Args:
        name: the layout's name (one line, no newline).
        text: the ASCII layout (see ``parse_layout``).
        overwrite: replace a layout already registered under ``name`` (a built-in one
            included) instead of refusing.

    Raises:
        ValueError: ``name`` is taken and ``overwrite`` is false, ``name`` is not a one-line
            string, or ``text`` is malformed.
    """
    if not isinstance(name, str) or not name.strip() or "\n" in name:
        raise ValueError(f"overcooked: a layout name must be a one-line string, got {name!r}")
    if name in overcooked_layouts and not overwrite:
        raise ValueError(
            f"overcooked: a layout named {name!r} is already registered; pick another name, "
            f"or pass overwrite=True to replace it for the whole process"
        )
    parse_layout(text, name=name)
    overcooked_layouts[name] = text


def get_layout(layout: Any) -> Layout:
    """A ``Layout`` from a name, ASCII text, a ``Layout``, or a JaxMARL layout dict.

    Raises:
        ValueError: an unknown name (the known ones are listed) or a malformed layout.
    """
    if isinstance(layout, Layout):
        return layout
    if isinstance(layout, Mapping):
        return _from_jaxmarl_dict(layout)
    if not isinstance(layout, str):
        raise ValueError(
            f"overcooked: layout must be a layout name, ASCII text or a JaxMARL layout dict, "
            f"got {type(layout).__name__}"
        )
    if "\n" not in layout.strip():
        if layout not in overcooked_layouts:
            raise ValueError(
                f"overcooked: unknown layout {layout!r}; known layouts: "
                f"{', '.join(sorted(overcooked_layouts))} (or pass the layout as ASCII text, "
                f"one line per row)"
            )
        return parse_layout(overcooked_layouts[layout], name=layout)
    return parse_layout(layout)


def parse_layout(text: str, name: str = "custom") -> Layout:
    """Parse and check ASCII layout text (symbols in the module docstring).

    An agent's start cell is floor.

    Raises:
        ValueError: naming the row and character at fault: an unknown symbol, rows of
            different widths, an agent marked twice or missing (not exactly agents ``1`` and
            ``2``), a missing pot, serving spot, onion pile or dish pile, an agent on the
            border (first or last row or column), or floor on the border.
    """
    lines = textwrap.dedent(text.strip("\n")).rstrip().split("\n")
    rows = [line.rstrip("\n") for line in lines]
    width = max(len(row) for row in rows)
    grid = np.zeros((len(rows), width), np.int8)
    agents: dict[str, tuple[int, int]] = {}
    where = f"overcooked layout {name!r}"
    for y, row in enumerate(rows):
        if len(row) != width:
            raise ValueError(
                f"{where}: row {y} ({row!r}) has {len(row)} characters, other rows have "
                f"{width}; every row must be the same width (pad with 'X' counters)"
            )
        for x, char in enumerate(row):
            if char in _AGENT_SYMBOLS:
                if char in agents:
                    raise ValueError(
                        f"{where}: agent {char!r} appears twice (row {agents[char][1]} and "
                        f"row {y}, column {x}); mark each agent's start cell once"
                    )
                agents[char] = (x, y)
                continue
            if char not in _SYMBOLS:
                raise ValueError(
                    f"{where}: row {y}, column {x}: unknown character {char!r}; use "
                    f"X counter, P pot, O onion pile, D dish pile, S serving spot, "
                    f"1 / 2 agents, space floor"
                )
            grid[y, x] = _SYMBOLS[char]
    missing_agents = [a for a in _AGENT_SYMBOLS if a not in agents]
    if missing_agents:
        raise ValueError(
            f"{where}: found {len(agents)} agent(s) {sorted(agents)}, need exactly "
            f"{NUM_AGENTS}: mark agent_0's start cell with '1' and agent_1's with '2' "
            f"(missing {missing_agents})"
        )
    for tile, what, symbol in (
        (POT, "pot", "P"),
        (SERVE, "delivery (serving) spot", "S"),
        (ONION_PILE, "onion pile", "O"),
        (DISH_PILE, "dish pile", "D"),
    ):
        if not (grid == tile).any():
            raise ValueError(f"{where}: no {what}; add at least one {symbol!r} on the edge")
    height = grid.shape[0]
    for char, (x, y) in agents.items():
        if x in (0, width - 1) or y in (0, height - 1):
            raise ValueError(
                f"{where}: agent {char!r} at row {y}, column {x} is on the border; agents "
                f"must start inside a closed kitchen (the border is counters and dispensers)"
            )
    border = np.concatenate([grid[0], grid[-1], grid[:, 0], grid[:, -1]])
    if (border == FLOOR).any():
        ys, xs = np.nonzero(grid == FLOOR)
        on_edge = [(y, x) for y, x in zip(ys, xs) if x in (0, width - 1) or y in (0, height - 1)]
        y, x = on_edge[0]
        raise ValueError(
            f"{where}: row {y}, column {x} is floor on the border; close the kitchen with "
            f"'X' counters (agents would walk off the grid)"
        )
    agent_pos = np.array([agents[a] for a in _AGENT_SYMBOLS], np.int32)
    return Layout(name=name, grid=grid, agent_pos=agent_pos)


def _from_jaxmarl_dict(layout: Mapping[str, Any]) -> Layout:
    """JaxMARL's flat-index layout dict (``height``, ``width``, ``wall_idx``, ...).

    Raises:
        ValueError: a missing key, not exactly two ``agent_idx`` (v1 has two agents), or a
            flat index outside the ``height * width`` grid (naming the key and the index).
    """
    keys = ("wall_idx", "goal_idx", "plate_pile_idx", "onion_pile_idx", "pot_idx", "agent_idx")
    missing = [key for key in ("height", "width", *keys) if key not in layout]
    if missing:
        raise ValueError(
            f"overcooked: a JaxMARL layout dict needs height, width, wall_idx, agent_idx, "
            f"goal_idx, plate_pile_idx, onion_pile_idx and pot_idx; missing {missing}"
        )
    height, width = layout["height"], layout["width"]
    for key, value in (("height", height), ("width", width)):
        if not _is_int(value) or value < 3:
            raise ValueError(
                f"overcooked: JaxMARL layout dict: {key} must be an int >= 3 (a closed "
                f"kitchen), got {value!r}"
            )
    size = int(height) * int(width)
    indices = {key: np.asarray(layout[key]).ravel().tolist() for key in keys}
    for key, values in indices.items():
        for index in values:
            if not _is_int(index) or not 0 <= index < size:
                raise ValueError(
                    f"overcooked: JaxMARL layout dict: {key} holds {index!r}, outside the "
                    f"{height}x{width} grid (flat indices 0..{size - 1}, row * width + column)"
                )
    if len(indices["agent_idx"]) != NUM_AGENTS:
        raise ValueError(
            f"overcooked: JaxMARL layout dict: agent_idx has {len(indices['agent_idx'])} "
            f"entries {indices['agent_idx']}, need exactly {NUM_AGENTS} (overcooked "
            f"v1 has two agents; use overcooked_v2 for more)"
        )
    grid = np.full(size, " ")
    for key, symbol in zip(keys, ("X", "S", "D", "O", "P")):
        grid[np.asarray(indices[key], int)] = symbol
    for i, index in enumerate(indices["agent_idx"]):
        grid[int(index)] = _AGENT_SYMBOLS[i]
    text = "\n".join("".join(row) for row in grid.reshape(height, width))
    return parse_layout(text, name=str(layout.get("name", "custom")))


def _is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python or NumPy), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
