"""The fixed 8x8 layout of JaxMARL 0.2.0's in-the-grid STORM (``storm`` and ``storm_2p``).

Coin cells hug the four corners; agents start in the corners' other cells. Cells are
``(x, y)`` on the board.
"""

from __future__ import annotations

import numpy as np

GRID_SIZE = 8
VIEW_SIZE = 5
NUM_COINS = 6  # of each of the two kinds
_LAST = GRID_SIZE - 1

# Twelve coin cells, three per corner; JaxMARL's order (even entries and odd entries form
# the two kinds' fixed layouts).
COIN_CELLS = np.array(
    [
        [1, 1], [1, 2], [2, 1],
        [1, _LAST - 1], [2, _LAST - 1], [1, _LAST - 2],
        [_LAST - 1, 2], [_LAST - 2, 1], [_LAST - 1, 1],
        [_LAST - 1, _LAST - 1], [_LAST - 1, _LAST - 2], [_LAST - 2, _LAST - 1],
    ],
    dtype=np.int32,
)  # fmt: skip
EVEN_COIN_CELLS = COIN_CELLS[0::2]
ODD_COIN_CELLS = COIN_CELLS[1::2]

# Eighteen agent start cells, JaxMARL's order.
AGENT_CELLS = np.array(
    [
        [0, 0], [0, 1], [0, 2], [1, 0], [1, 2],
        [0, _LAST], [0, _LAST - 1], [0, _LAST - 2], [1, _LAST],
        [_LAST, 0], [_LAST, 1], [_LAST, 2], [_LAST - 1, 0],
        [_LAST, _LAST], [_LAST, _LAST - 1], [_LAST, _LAST - 2], [_LAST - 1, _LAST],
        [_LAST - 1, _LAST - 2],
    ],
    dtype=np.int32,
)  # fmt: skip

# storm_2p starts the two players point-symmetric: for a listed cell (i, j) player 0 takes
# (j, i) and player 1 its mirror image through the board's centre.
PLAYER_PAIRS = np.stack([AGENT_CELLS[:, ::-1], _LAST - AGENT_CELLS[:, ::-1]], axis=1).astype(
    np.int32
)  # [18, 2, 2]
