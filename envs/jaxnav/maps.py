"""JaxNav's worlds: occupancy grids, robot footprints, collisions and start/goal sampling.

A map is an ``int32`` occupancy grid ``map_data[y, x]`` (1 = wall) whose cells are
``cell_size`` metres wide; world coordinates are metres with the origin at the grid's
lower-left corner, so the point ``(x, y)`` lies in cell ``floor((x, y) / cell_size)``.
Generated maps have a wall border.

Robots are convex polygons (``footprint="polygon"``, JaxMARL's default square of side 0.5 m)
or discs of radius ``rad`` (``footprint="circle"``, map id ``Grid-Rand``).

Map ids (JaxMARL 0.2.0's): ``Grid-Rand`` (random walls, disc robots), ``Grid-Rand-Poly``
(random walls, square robots; the default), ``Grid-Rand-Barn`` (BARN-style smoothed caves on a
fine grid, one Jackal-shaped robot), ``Grid-Rand-Poly-Single`` (one fixed map given as rows of
``"0 1 ..."`` strings) and ``Grid-Buffer`` (a stack of maps given as data, one drawn per
episode; this is the level input of curriculum / UED methods).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

# Footprint of JaxMARL's default robot: a 0.5 m square around its centre, in its own frame
# (x forward).
SQUARE_COORDS = np.array([[-0.25, -0.25], [-0.25, 0.25], [0.25, 0.25], [0.25, -0.25]])
# Clearpath Jackal footprint used by the BARN maps (JaxMARL's ``jackal_coords``).
JACKAL_COORDS = np.array([[-0.254, -0.215], [-0.254, 0.215], [0.254, 0.215], [0.254, -0.215]])

MAP_IDS = (
    "Grid-Rand",
    "Grid-Rand-Poly",
    "Grid-Rand-Barn",
    "Grid-Rand-Poly-Single",
    "Grid-Buffer",
)
# Bounded retries before a whole scenario (map and cases) is drawn again: an empty map always
# admits a case, so sampling ends (JaxMARL's loops can spin forever on a blocked map).
MAX_PAIR_ATTEMPTS = 64
# Goal discs are checked against walls with this radius (JaxMARL's ``Map.goal_radius``).
GOAL_CLEARANCE = 0.3
_NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def rotation(theta: jax.Array) -> jax.Array:
    """``[2, 2]`` rotation matrix by ``theta`` radians (counter-clockwise)."""
    c, s = jnp.cos(theta), jnp.sin(theta)
    return jnp.array([[c, -s], [s, c]])


def footprint_vertices(pos: jax.Array, theta: jax.Array, coords: jax.Array) -> jax.Array:
    """World coordinates ``[V, 2]`` of a polygon robot at ``pos`` ``[2]`` with heading ``theta``."""
    return coords @ rotation(theta).T + pos


def edge_normals(vertices: jax.Array) -> jax.Array:
    """Unnormalised outward-or-inward normals ``[V, 2]`` of a closed polygon's edges."""
    edges = vertices - jnp.roll(vertices, 1, axis=0)
    return jnp.stack([edges[:, 1], -edges[:, 0]], axis=-1)


def convex_overlap(a: jax.Array, b: jax.Array) -> jax.Array:
    """Whether closed convex polygons ``a`` ``[V, 2]`` and ``b`` ``[U, 2]`` intersect (SAT).

    Touching counts as overlapping, as in JaxMARL's edge-intersection tests.
    """
    axes = jnp.concatenate([edge_normals(a), edge_normals(b)])  # [V + U, 2]
    pa, pb = a @ axes.T, b @ axes.T  # [V, K], [U, K]
    separated = (pa.max(0) < pb.min(0)) | (pb.max(0) < pa.min(0))
    return ~jnp.any(separated)


def polygon_cell_overlap(vertices: jax.Array, cell: jax.Array, size: float) -> jax.Array:
    """Whether a convex polygon ``[V, 2]`` touches the square cell with corner ``cell`` ``[2]``."""
    square = cell + size * jnp.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]])
    return convex_overlap(vertices, square)


def disc_cell_overlap(pos: jax.Array, rad: float, cell: jax.Array, size: float) -> jax.Array:
    """Whether the disc at ``pos`` of radius ``rad`` touches the cell with corner ``cell``."""
    nearest = jnp.clip(pos, cell, cell + size)
    return jnp.linalg.norm(nearest - pos) <= rad


def component_mask(free: jax.Array, start: jax.Array) -> jax.Array:
    """Cells ``[H, W]`` bool 4-connected to cell ``start`` (``[x, y]`` int) through ``free`` cells."""
    height, width = free.shape
    seed = jnp.zeros_like(free).at[start[1], start[0]].set(True) & free

    def grow(mask):
        padded = jnp.pad(mask, 1)
        near = mask
        for dy, dx in _NEIGHBOURS:
            near = near | padded[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width]
        return near & free

    def cond(carry):
        mask, previous = carry
        return jnp.any(mask != previous)

    def body(carry):
        mask, _ = carry
        return grow(mask), mask

    mask, _ = jax.lax.while_loop(cond, body, (grow(seed), seed))
    return mask


@dataclass(frozen=True, eq=False)
class GridMap:
    """Static description of one map id: grid size, robot footprint and how cases are drawn.

    Attributes:
        map_id: JaxMARL's map id.
        num_agents, rad: agents and their radius (m); ``rad`` is the disc radius of circle
            robots and, for every footprint, the clearance used when sampling starts.
        width, height: grid size in cells (``map_size = (width, height)``).
        cell_size: cell side in metres.
        fill: most walls drawn inside the border, as a fraction of the free cells.
        footprint: ``"polygon"`` or ``"circle"``.
        coords: ``[V, 2]`` polygon footprint in the robot frame (polygon robots).
        sample_test_case_type: ``"random"`` (continuous starts/goals, JaxMARL's default) or
            ``"grid"`` (cell centres).
        start_pad: starts keep ``rad * start_pad`` clear of walls and of other starts.
        min_dist_to_goal, max_dist_to_goal: start-goal distance range (``"random"``).
        valid_path_check: only accept a goal connected to its start through free cells.
        fixed_maps: ``[M, H, W]`` int32 maps to draw from instead of random walls, or ``None``.
        smoothing: BARN smoothing ``(iterations, upper count, lower count)``, or ``None``.
    """

    map_id: str
    num_agents: int
    rad: float
    width: int
    height: int
    cell_size: float = 1.0
    fill: float = 0.4
    footprint: str = "polygon"
    coords: np.ndarray = field(default_factory=lambda: SQUARE_COORDS)
    sample_test_case_type: str = "random"
    start_pad: float = 1.5
    min_dist_to_goal: float | None = None
    max_dist_to_goal: float | None = None
    valid_path_check: bool = False
    fixed_maps: np.ndarray | None = None
    smoothing: tuple[int, int, int] | None = None

    # ------------------------------------------------------------------ geometry
    @property
    def size_m(self) -> np.ndarray:
        """World extent ``[width, height]`` in metres."""
        return np.array([self.width, self.height], dtype=np.float32) * self.cell_size

    @property
    def window(self) -> int:
        """Cells either side of a robot's cell that its footprint can reach."""
        if self.footprint == "circle":
            reach = self.rad
        else:
            reach = float(np.max(np.linalg.norm(self.coords, axis=1)))
        return int(np.ceil(reach / self.cell_size))

    def map_collision(self, pos: jax.Array, theta: jax.Array, map_data: jax.Array) -> jax.Array:
        """Whether a robot at ``pos`` ``[2]``, heading ``theta`` touches a wall cell (bool)."""
        if self.footprint == "circle":
            return self.disc_map_collision(pos, self.rad, map_data)
        vertices = footprint_vertices(pos, theta, jnp.asarray(self.coords, jnp.float32))
        offsets = jnp.arange(-self.window, self.window + 1)
        base = jnp.floor(pos / self.cell_size).astype(jnp.int32)
        xs = (base[0] + offsets)[None, :].repeat(offsets.size, 0).ravel()
        ys = (base[1] + offsets)[:, None].repeat(offsets.size, 1).ravel()
        cells = jnp.stack([xs, ys], -1).astype(jnp.float32) * self.cell_size
        touch = jax.vmap(polygon_cell_overlap, in_axes=(None, 0, None))(
            vertices, cells, self.cell_size
        )
        return jnp.any(touch & self._occupied(map_data, xs, ys))

    def disc_map_collision(self, pos: jax.Array, rad: Any, map_data: jax.Array) -> jax.Array:
        """Whether the disc at ``pos`` of radius ``rad`` touches a wall cell (bool)."""
        window = int(np.ceil(max(self.rad * self.start_pad, GOAL_CLEARANCE) / self.cell_size))
        offsets = jnp.arange(-window, window + 1)
        base = jnp.floor(pos / self.cell_size).astype(jnp.int32)
        xs = (base[0] + offsets)[None, :].repeat(offsets.size, 0).ravel()
        ys = (base[1] + offsets)[:, None].repeat(offsets.size, 1).ravel()
        cells = jnp.stack([xs, ys], -1).astype(jnp.float32) * self.cell_size
        touch = jax.vmap(disc_cell_overlap, in_axes=(None, None, 0, None))(
            pos, rad, cells, self.cell_size
        )
        return jnp.any(touch & self._occupied(map_data, xs, ys))

    def _occupied(self, map_data: jax.Array, xs: jax.Array, ys: jax.Array) -> jax.Array:
        """Wall flags of cells ``(xs, ys)``; cells outside the grid count as free (JaxMARL)."""
        height, width = map_data.shape
        inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
        return inside & (map_data[jnp.clip(ys, 0, height - 1), jnp.clip(xs, 0, width - 1)] == 1)

    def agent_collisions(self, pos: jax.Array, theta: jax.Array) -> jax.Array:
        """``[n]`` bool: whether each robot touches any other robot."""
        n = pos.shape[0]
        if n < 2:
            return jnp.zeros((n,), jnp.bool_)
        if self.footprint == "circle":
            dist = jnp.linalg.norm(pos[:, None] - pos[None], axis=-1)
            touch = dist <= 2 * self.rad
        else:
            coords = jnp.asarray(self.coords, jnp.float32)
            vertices = jax.vmap(footprint_vertices, in_axes=(0, 0, None))(pos, theta, coords)
            touch = jax.vmap(jax.vmap(convex_overlap, in_axes=(None, 0)), in_axes=(0, None))(
                vertices, vertices
            )
        return jnp.any(touch & ~jnp.eye(n, dtype=jnp.bool_), axis=1)

    # ------------------------------------------------------------------ maps
    def base_grid(self) -> jax.Array:
        """``[H, W]`` int32 grid with walls on the border only."""
        grid = jnp.ones((self.height, self.width), jnp.int32)
        return grid.at[1:-1, 1:-1].set(0)

    @property
    def max_walls(self) -> int:
        """Exclusive upper bound of the number of random inner walls (JaxMARL's ``n_clutter``)."""
        return int(np.floor((self.width - 2) * (self.height - 2) * self.fill))

    def sample_map(self, key: jax.Array) -> jax.Array:
        """Draw an ``[H, W]`` int32 map."""
        if self.fixed_maps is not None:
            maps = jnp.asarray(self.fixed_maps, jnp.int32)
            return maps[jax.random.randint(key, (), 0, maps.shape[0])]
        count_key, perm_key = jax.random.split(key)
        inner = (self.width - 2) * (self.height - 2)
        num_walls = jax.random.randint(count_key, (), 0, max(self.max_walls, 1))
        walls = (jnp.arange(inner) < num_walls).astype(jnp.int32)
        walls = jax.random.permutation(perm_key, walls).reshape(self.height - 2, self.width - 2)
        grid = self.base_grid().at[1:-1, 1:-1].set(walls)
        if self.smoothing is not None:
            grid = self._smooth(grid)
        return grid

    def _smooth(self, grid: jax.Array) -> jax.Array:
        """BARN cellular-automaton smoothing of the inner cells (JaxMARL's rule)."""
        iterations, upper, lower = self.smoothing
        height, width = grid.shape
        inner = jnp.zeros_like(grid, dtype=jnp.bool_).at[1:-1, 1:-1].set(True)

        def once(grid, _):
            counted = jnp.where(inner, grid, 0)
            padded = jnp.pad(counted, 1)
            neighbours = sum(
                padded[1 + dy : 1 + dy + height, 1 + dx : 1 + dx + width]
                for dy in (-1, 0, 1)
                for dx in (-1, 0, 1)
                if (dy, dx) != (0, 0)
            )
            filled = ((neighbours > upper) | (grid == 1)) & (neighbours > lower)
            return jnp.where(inner, filled.astype(jnp.int32), grid), None

        grid, _ = jax.lax.scan(once, grid, None, length=iterations)
        return grid

    # ------------------------------------------------------------------ cases
    def sample_scenario(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Draw a map and a case ``[n, 2, 3]`` (per agent: start and goal ``(x, y, theta)``).

        Draws again (map included) until every agent has a valid start and goal.
        """

        def attempt(key):
            map_key, case_key = jax.random.split(key)
            map_data = self.sample_map(map_key)
            valid, case = self.sample_case(case_key, map_data)
            return valid, map_data, case

        def cond(carry):
            return ~carry[0]

        def body(carry):
            _, key, _, _ = carry
            key, sub = jax.random.split(key)
            valid, map_data, case = attempt(sub)
            return valid, key, map_data, case

        key, sub = jax.random.split(key)
        valid, map_data, case = attempt(sub)
        _, _, map_data, case = jax.lax.while_loop(cond, body, (valid, key, map_data, case))
        return map_data, case

    def sample_case(self, key: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Draw starts and goals on ``map_data``: ``(valid, case [n, 2, 3])``."""
        if self.sample_test_case_type == "grid":
            return self._grid_case(key, map_data)
        return self._random_case(key, map_data)

    def _random_case(self, key: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Continuous starts and goals by rejection, agent after agent (JaxMARL's ``random``)."""
        size = jnp.asarray(self.size_m)
        low, high = self.cell_size + self.rad, size - self.cell_size - self.rad
        min_dist = self.min_dist_to_goal if self.min_dist_to_goal is not None else 1 + self.rad
        max_dist = (
            self.max_dist_to_goal
            if self.max_dist_to_goal is not None
            else self.height * self.cell_size - 1 - self.rad
        )
        clear = self.rad * self.start_pad
        far = jnp.full((2, 3), 1e6, jnp.float32)

        def draw(key):
            start_key, dist_key, angle_key, theta_key = jax.random.split(key, 4)
            start = jax.random.uniform(start_key, (2,), minval=low, maxval=high)
            dist = jax.random.uniform(dist_key, (), minval=min_dist, maxval=max_dist)
            angle = jax.random.uniform(angle_key, (), minval=-jnp.pi, maxval=jnp.pi)
            goal = jnp.clip(start + dist * jnp.array([jnp.cos(angle), jnp.sin(angle)]), low, high)
            theta = jax.random.uniform(theta_key, (2,), minval=-jnp.pi, maxval=jnp.pi)
            return jnp.concatenate([jnp.stack([start, goal]), theta[:, None]], axis=1)

        def invalid(pair, case):
            start, goal = pair[0, :2], pair[1, :2]
            walls = self.disc_map_collision(start, clear, map_data) | self.disc_map_collision(
                goal, GOAL_CLEARANCE, map_data
            )
            near_start = jnp.any(jnp.linalg.norm(case[:, 0, :2] - start, axis=1) <= 2 * clear)
            near_goal = jnp.any(jnp.linalg.norm(case[:, 1, :2] - goal, axis=1) <= 2 * clear)
            bad = walls | near_start | near_goal | (jnp.linalg.norm(start - goal) <= 2 * self.rad)
            if self.valid_path_check:
                bad = bad | ~self._connected(map_data, start, goal)
            return bad

        def place(carry, xs):
            case, ok = carry
            agent_key, index = xs

            def cond(c):
                tries, _, pair = c
                return (tries < MAX_PAIR_ATTEMPTS) & invalid(pair, case)

            def body(c):
                tries, key, _ = c
                key, sub = jax.random.split(key)
                return tries + 1, key, draw(sub)

            key, sub = jax.random.split(agent_key)
            tries, _, pair = jax.lax.while_loop(cond, body, (jnp.int32(1), key, draw(sub)))
            ok = ok & ~invalid(pair, case)
            return (case.at[index].set(pair), ok), None

        case = jnp.broadcast_to(far, (self.num_agents, 2, 3))
        xs = (jax.random.split(key, self.num_agents), jnp.arange(self.num_agents))
        (case, ok), _ = jax.lax.scan(place, (case, jnp.bool_(True)), xs)
        return ok, case

    def _connected(self, map_data: jax.Array, start: jax.Array, goal: jax.Array) -> jax.Array:
        cell = lambda p: jnp.floor(p / self.cell_size).astype(jnp.int32)
        region = component_mask(map_data == 0, cell(start))
        goal_cell = cell(goal)
        return region[goal_cell[1], goal_cell[0]]

    def _grid_case(self, key: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Starts and goals at free cell centres, distinct per agent (JaxMARL's ``grid``)."""
        free = map_data == 0
        flat = free.size

        def place(carry, agent_key):
            starts_used, goals_used, ok = carry
            start_key, goal_key = jax.random.split(agent_key)

            def draw(key):
                start_key, goal_key = jax.random.split(key)
                start_p = (free & ~starts_used).ravel()
                start = jax.random.choice(start_key, flat, p=start_p / jnp.maximum(start_p.sum(), 1))
                start_xy = jnp.array([start % self.width, start // self.width])
                region = component_mask(free, start_xy) if self.valid_path_check else free
                goal_p = (region & ~goals_used).ravel().at[start].set(False)
                goal = jax.random.choice(goal_key, flat, p=goal_p / jnp.maximum(goal_p.sum(), 1))
                valid = start_p.any() & goal_p.any()
                return valid, start, goal

            def cond(c):
                tries, _, valid, _, _ = c
                return (tries < MAX_PAIR_ATTEMPTS) & ~valid

            def body(c):
                tries, key, *_ = c
                key, sub = jax.random.split(key)
                return (tries + 1, key, *draw(sub))

            first = draw(start_key)
            _, _, valid, start, goal = jax.lax.while_loop(
                cond, body, (jnp.int32(1), goal_key, *first)
            )
            starts_used = starts_used.ravel().at[start].set(True).reshape(free.shape)
            goals_used = goals_used.ravel().at[goal].set(True).reshape(free.shape)
            return (starts_used, goals_used, ok & valid), (start, goal)

        theta_key, key = jax.random.split(key)
        keys = jax.random.split(key, self.num_agents)
        none = jnp.zeros_like(free)
        (_, _, ok), (starts, goals) = jax.lax.scan(place, (none, none, jnp.bool_(True)), keys)
        cells = jnp.stack([starts, goals], axis=1)  # [n, 2]
        xy = jnp.stack([cells % self.width, cells // self.width], axis=-1).astype(jnp.float32)
        xy = (xy + 0.5) * self.cell_size
        theta = jax.random.uniform(theta_key, (self.num_agents, 2, 1), minval=-jnp.pi, maxval=jnp.pi)
        return ok, jnp.concatenate([xy, theta], axis=-1)


def parse_map_rows(rows: Any) -> np.ndarray:
    """A map given as rows of ``"0 1 0 ..."`` strings (JaxMARL's format) or as a 2-D array."""
    if isinstance(rows, (list, tuple)) and rows and isinstance(rows[0], str):
        return np.array([[int(v) for v in row.split()] for row in rows], dtype=np.int32)
    return np.asarray(rows, dtype=np.int32)
