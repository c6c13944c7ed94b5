"""JaxNav's worlds: occupancy grids, robot footprints, collisions and start/goal sampling.

A map is an ``int32`` occupancy grid ``map_data[y, x]`` (1 = wall) whose cells are
``cell_size`` metres wide; world coordinates are metres with the origin at the grid's
lower-left corner, so the point ``(x, y)`` lies in cell ``floor((x, y) / cell_size)``.
Generated maps have a wall border; for collisions and the lidar, cells outside the grid count
as walls, so maps given as data need no border.

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
# Start/goal pairs drawn at once per agent; if none is valid the case is drawn again on the
# same map, and after CASE_ROUNDS such rounds the map as well. An empty map always admits a
# case, so sampling ends (JaxMARL's loops can spin forever on a blocked map).
CANDIDATES = 32
CASE_ROUNDS = 16
# Goal discs are checked against walls with this radius (JaxMARL's ``Map.goal_radius``).
GOAL_CLEARANCE = 0.3
# BARN cases (JaxMARL's ``GridMapBarn``): starts and goals lie on cells more than this many
# cells (Chebyshev) from every wall, and the goal more than BARN_MIN_CELLS cells from the
# start along x or y.
BARN_INFLATE = 2
BARN_MIN_CELLS = 19
# Placement check (NumPy, at construction): candidate points per cell side, and per axis at
# most.
LATTICE_PER_CELL = 8
LATTICE_MAX = 160
_NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def footprint_vertices(pos: jax.Array, theta: jax.Array, coords: jax.Array) -> jax.Array:
    """World vertices ``[..., V, 2]`` of polygon robots at ``pos`` ``[..., 2]``, ``theta``."""
    c, s = jnp.cos(theta)[..., None], jnp.sin(theta)[..., None]
    x = c * coords[:, 0] - s * coords[:, 1] + pos[..., None, 0]
    y = s * coords[:, 0] + c * coords[:, 1] + pos[..., None, 1]
    return jnp.stack([x, y], axis=-1)


def edge_normals(vertices: jax.Array) -> jax.Array:
    """Unnormalised normals ``[..., V, 2]`` of the edges of closed polygons ``[..., V, 2]``."""
    edges = vertices - jnp.roll(vertices, 1, axis=-2)
    return jnp.stack([edges[..., 1], -edges[..., 0]], axis=-1)


def convex_overlap(a: jax.Array, b: jax.Array) -> jax.Array:
    """Whether closed convex polygons ``a`` ``[..., V, 2]`` and ``b`` ``[..., U, 2]`` intersect.

    Separating-axis test over both polygons' edge normals; touching counts as overlapping,
    as in JaxMARL's edge-intersection tests. Leading dimensions broadcast.
    """
    lead = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    normals_a = jnp.broadcast_to(edge_normals(a), lead + a.shape[-2:])
    normals_b = jnp.broadcast_to(edge_normals(b), lead + b.shape[-2:])
    axes = jnp.concatenate([normals_a, normals_b], axis=-2)  # [..., V + U, 2]
    pa = jnp.einsum("...vd,...kd->...vk", a, axes)
    pb = jnp.einsum("...ud,...kd->...uk", b, axes)
    separated = (pa.max(-2) < pb.min(-2)) | (pb.max(-2) < pa.min(-2))
    return ~jnp.any(separated, axis=-1)


def cell_squares(cells: jax.Array, size: float) -> jax.Array:
    """Corners ``[..., 4, 2]`` of square cells with lower-left corners ``cells`` ``[..., 2]``."""
    corners = jnp.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]], jnp.float32)
    return cells[..., None, :] + size * corners


def dilate(walls: Any, radius: int, xp: Any = jnp) -> Any:
    """Cells ``[H, W]`` bool within ``radius`` cells (Chebyshev) of a wall in ``walls``.

    Cells outside the grid are not walls here (JaxMARL's obstacle inflation). ``xp`` is
    ``jax.numpy`` or ``numpy``.
    """
    height, width = walls.shape
    padded = xp.pad(walls, radius)
    near = walls
    for dy in range(-radius, radius + 1):
        for dx in range(-radius, radius + 1):
            near = (
                near | padded[radius + dy : radius + dy + height, radius + dx : radius + dx + width]
            )
    return near


def component_labels(free: np.ndarray) -> np.ndarray:
    """``[H, W]`` int labels of the 4-connected regions of ``free`` cells (-1: not free), NumPy."""
    height, width = free.shape
    labels = np.full(free.shape, -1, np.int64)
    count = 0
    for y, x in zip(*np.nonzero(free)):
        if labels[y, x] >= 0:
            continue
        labels[y, x] = count
        stack = [(y, x)]
        while stack:
            cy, cx = stack.pop()
            for dy, dx in _NEIGHBOURS:
                ny, nx = cy + dy, cx + dx
                if 0 <= ny < height and 0 <= nx < width and free[ny, nx] and labels[ny, nx] < 0:
                    labels[ny, nx] = count
                    stack.append((ny, nx))
        count += 1
    return labels


def component_mask(free: jax.Array, start: jax.Array) -> jax.Array:
    """Cells ``[H, W]`` bool 4-connected to cell ``start`` (``[x, y]``) through ``free`` cells."""
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
        sample_test_case_type: ``"random"`` (continuous starts/goals, JaxMARL's default),
            ``"grid"`` (cell centres) or ``"barn"`` (``Grid-Rand-Barn``: cell corners away
            from inflated walls, far apart).
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

    def _window_cells(self, pos: jax.Array, window: int) -> tuple[jax.Array, jax.Array]:
        """Cell indices ``[..., C, 2]`` (x, y) around ``pos`` ``[..., 2]`` and their corners (m)."""
        offsets = np.arange(-window, window + 1)
        grid = np.stack(np.meshgrid(offsets, offsets), -1).reshape(-1, 2)  # [C, 2]
        base = jnp.floor(pos / self.cell_size).astype(jnp.int32)
        cells = base[..., None, :] + grid
        return cells, cells.astype(jnp.float32) * self.cell_size

    def map_collision(self, pos: jax.Array, theta: jax.Array, map_data: jax.Array) -> jax.Array:
        """Whether robots at ``pos`` ``[..., 2]``, heading ``theta`` ``[...]`` touch a wall."""
        if self.footprint == "circle":
            return self.disc_map_collision(pos, self.rad, map_data)
        cells, touch = self._touched_cells(pos, theta)
        return jnp.any(touch & self._occupied(map_data, cells), axis=-1)

    def _touched_cells(self, pos: jax.Array, theta: jax.Array) -> tuple[jax.Array, jax.Array]:
        """The cells ``[..., C, 2]`` (x, y) around robots at ``pos`` ``[..., 2]`` and whether
        each robot's footprint touches each ``[..., C]``."""
        cells, corners = self._window_cells(pos, self.window)
        if self.footprint == "circle":
            centre = pos[..., None, :]
            nearest = jnp.clip(centre, corners, corners + self.cell_size)
            return cells, jnp.linalg.norm(nearest - centre, axis=-1) <= self.rad
        vertices = footprint_vertices(pos, theta, jnp.asarray(self.coords, jnp.float32))
        touch = convex_overlap(vertices[..., None, :, :], cell_squares(corners, self.cell_size))
        return cells, touch

    def footprint_cells(self, pos: jax.Array, theta: jax.Array) -> jax.Array:
        """``[H, W]`` bool: the grid cells that robots at ``pos`` ``[n, 2]``, heading ``theta``
        ``[n]``, touch."""
        cells, touch = self._touched_cells(pos, theta)
        xs, ys = cells[..., 0].ravel(), cells[..., 1].ravel()
        inside = (xs >= 0) & (xs < self.width) & (ys >= 0) & (ys < self.height)
        flat = jnp.where(inside & touch.ravel(), ys * self.width + xs, self.height * self.width)
        grid = jnp.zeros((self.height * self.width,), jnp.bool_).at[flat].set(True, mode="drop")
        return grid.reshape(self.height, self.width)

    def disc_map_collision(self, pos: jax.Array, rad: Any, map_data: jax.Array) -> jax.Array:
        """Whether discs at ``pos`` ``[..., 2]`` of radius ``rad`` touch a wall cell."""
        window = int(np.ceil(max(self.rad * self.start_pad, GOAL_CLEARANCE) / self.cell_size))
        cells, corners = self._window_cells(pos, window)
        centre = pos[..., None, :]
        nearest = jnp.clip(centre, corners, corners + self.cell_size)
        touch = jnp.linalg.norm(nearest - centre, axis=-1) <= rad
        return jnp.any(touch & self._occupied(map_data, cells), axis=-1)

    def _occupied(self, map_data: jax.Array, cells: jax.Array) -> jax.Array:
        """Wall flags of cells ``[..., 2]`` (x, y); cells outside the grid count as walls, as
        for the lidar, so a robot cannot leave a map that has no wall border."""
        height, width = map_data.shape
        xs, ys = cells[..., 0], cells[..., 1]
        inside = (xs >= 0) & (xs < width) & (ys >= 0) & (ys < height)
        return ~inside | (map_data[jnp.clip(ys, 0, height - 1), jnp.clip(xs, 0, width - 1)] == 1)

    def agent_collisions(self, pos: jax.Array, theta: jax.Array) -> jax.Array:
        """``[n]`` bool: whether each robot touches any other robot."""
        n = pos.shape[0]
        if n < 2:
            return jnp.zeros((n,), jnp.bool_)
        if self.footprint == "circle":
            dist = jnp.linalg.norm(pos[:, None] - pos[None], axis=-1)
            touch = dist <= 2 * self.rad
        else:
            vertices = footprint_vertices(pos, theta, jnp.asarray(self.coords, jnp.float32))
            touch = convex_overlap(vertices[:, None], vertices[None, :])
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

    @property
    def map_draws(self) -> int:
        """Uniform numbers one map needs."""
        return 1 if self.fixed_maps is not None else 1 + (self.width - 2) * (self.height - 2)

    def sample_map(self, key: jax.Array) -> jax.Array:
        """Draw an ``[H, W]`` int32 map."""
        return self.map_from_uniform(jax.random.uniform(key, (self.map_draws,), jnp.float32))

    def map_from_uniform(self, u: jax.Array) -> jax.Array:
        """The map for uniform draws ``u`` ``[map_draws]``.

        Random maps: ``floor(u[0] * max_walls)`` inner walls (JaxMARL: ``randint(0,
        n_clutter)``) on uniformly chosen cells: the cells with the smallest ``u[1:]``.
        """
        if self.fixed_maps is not None:
            maps = jnp.asarray(self.fixed_maps, jnp.int32)
            return maps[jnp.minimum((u[0] * maps.shape[0]).astype(jnp.int32), maps.shape[0] - 1)]
        num_walls = jnp.minimum((u[0] * max(self.max_walls, 1)).astype(jnp.int32), self.max_walls)
        cells = u[1:]
        threshold = jnp.sort(cells)[jnp.minimum(num_walls, cells.size - 1)]
        walls = ((cells < threshold) | (num_walls >= cells.size)).astype(jnp.int32)
        grid = self.base_grid().at[1:-1, 1:-1].set(walls.reshape(self.height - 2, self.width - 2))
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

        Draws the case again on the same map until every agent has a valid start and goal, as
        JaxMARL does, so the maps keep the generator's distribution (redrawing the map as well
        would favour maps with fewer walls, on which a case is easier to place). After
        ``CASE_ROUNDS`` failed cases the map is drawn again too, so a map on which no case fits
        cannot stall the reset (JaxMARL loops forever there). All the numbers of one draw come
        from one ``uniform`` call: on CPU each PRNG call is a sizeable program of its own to
        compile and run.
        """

        def cond(carry):
            return ~carry[0]

        def body(carry):
            _, key, map_data, _, tries = carry
            key, draw_key = jax.random.split(key)
            u = jax.random.uniform(draw_key, (self.map_draws + self.case_draws,), jnp.float32)
            fresh_map = tries % CASE_ROUNDS == 0
            map_data = jnp.where(fresh_map, self.map_from_uniform(u[: self.map_draws]), map_data)
            valid, case = self.case_from_uniform(u[self.map_draws :], map_data)
            return valid, key, map_data, case, tries + 1

        start = (
            jnp.bool_(False),
            key,
            jnp.zeros((self.height, self.width), jnp.int32),
            jnp.zeros((self.num_agents, 2, 3), jnp.float32),
            jnp.int32(0),
        )
        _, _, map_data, case, _ = jax.lax.while_loop(cond, body, start)
        return map_data, case

    @property
    def case_draws(self) -> int:
        """Uniform numbers one case needs."""
        if self.sample_test_case_type in ("grid", "barn"):
            return self.num_agents * (2 * self.width * self.height + 2)
        return self.num_agents * CANDIDATES * 6

    def sample_case(self, key: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Draw starts and goals on ``map_data``: ``(valid, case [n, 2, 3])``."""
        return self.case_from_uniform(
            jax.random.uniform(key, (self.case_draws,), jnp.float32), map_data
        )

    def case_from_uniform(self, u: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Starts and goals for uniform draws ``u`` ``[case_draws]``: ``(valid, case)``."""
        if self.sample_test_case_type == "grid":
            return self._grid_case(u.reshape(self.num_agents, -1), map_data)
        if self.sample_test_case_type == "barn":
            return self._barn_case(u, map_data)
        return self._random_case(u.reshape(self.num_agents, CANDIDATES, 6), map_data)

    @property
    def random_case_limits(self) -> tuple[np.ndarray, np.ndarray, float, float, float]:
        """``random`` cases' draw box ``(low [2], high [2])`` (m), start-goal distance range
        ``(min_dist, max_dist)`` and start clearance ``rad * start_pad``."""
        low = np.full(2, self.cell_size + self.rad, np.float32)
        high = self.size_m - self.cell_size - self.rad
        min_dist = self.min_dist_to_goal if self.min_dist_to_goal is not None else 1 + self.rad
        max_dist = (
            self.max_dist_to_goal
            if self.max_dist_to_goal is not None
            else self.height * self.cell_size - 1 - self.rad
        )
        return low, high, float(min_dist), float(max_dist), self.rad * self.start_pad

    def _random_case(self, u: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Continuous starts and goals, agent after agent (JaxMARL's ``random`` cases).

        Each agent takes the first valid of ``CANDIDATES`` pairs (JaxMARL redraws one pair at
        a time until one is valid: the same distribution, without a loop). ``u``:
        ``[n, CANDIDATES, 6]`` uniforms.
        """
        low, high, min_dist, max_dist, clear = self.random_case_limits
        low, high = jnp.asarray(low), jnp.asarray(high)

        def draw(u):
            start = low + u[:, 0:2] * (high - low)
            dist = min_dist + u[:, 2:3] * (max_dist - min_dist)
            angle = jnp.pi * (2 * u[:, 3:4] - 1)
            offset = dist * jnp.concatenate([jnp.cos(angle), jnp.sin(angle)], -1)
            goal = jnp.clip(start + offset, low, high)
            theta = jnp.pi * (2 * u[:, 4:6] - 1)
            return jnp.concatenate([jnp.stack([start, goal], 1), theta[..., None]], -1)

        def valid(pairs, case, placed):
            start, goal = pairs[:, 0, :2], pairs[:, 1, :2]
            walls = self.disc_map_collision(start, clear, map_data) | self.disc_map_collision(
                goal, GOAL_CLEARANCE, map_data
            )
            gap_start = jnp.linalg.norm(start[:, None] - case[None, :, 0, :2], axis=-1)
            gap_goal = jnp.linalg.norm(goal[:, None] - case[None, :, 1, :2], axis=-1)
            crowded = jnp.any(((gap_start <= 2 * clear) | (gap_goal <= 2 * clear)) & placed, -1)
            near = jnp.linalg.norm(start - goal, axis=-1) <= 2 * self.rad
            ok = ~(walls | crowded | near)
            if self.valid_path_check:
                ok = ok & jax.vmap(self._connected, in_axes=(None, 0, 0))(map_data, start, goal)
            return ok

        def place(carry, xs):
            case, ok = carry
            agent_u, index = xs
            pairs = draw(agent_u)
            good = valid(pairs, case, jnp.arange(self.num_agents) < index)
            pick = jnp.argmax(good)
            return (case.at[index].set(pairs[pick]), ok & good[pick]), None

        case = jnp.zeros((self.num_agents, 2, 3), jnp.float32)
        xs = (u, jnp.arange(self.num_agents))
        (case, ok), _ = jax.lax.scan(place, (case, jnp.bool_(True)), xs)
        return ok, case

    def _connected(self, map_data: jax.Array, start: jax.Array, goal: jax.Array) -> jax.Array:
        cell = lambda p: jnp.floor(p / self.cell_size).astype(jnp.int32)
        region = component_mask(map_data == 0, cell(start))
        goal_cell = cell(goal)
        return region[goal_cell[1], goal_cell[0]]

    def _grid_case(self, u: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """Starts and goals at free cell centres, distinct per agent (JaxMARL's ``grid``).

        ``u``: ``[n, 2 H W + 2]`` uniforms; a cell is picked uniformly among the allowed ones
        as the allowed cell with the largest draw.
        """
        free = (map_data == 0).ravel()
        cells = free.size

        def pick(allowed, draws):
            return jnp.argmax(jnp.where(allowed, draws, -1.0)), jnp.any(allowed)

        def place(carry, agent_u):
            starts_used, goals_used, ok = carry
            start, has_start = pick(free & ~starts_used, agent_u[:cells])
            start_xy = jnp.array([start % self.width, start // self.width])
            region = free
            if self.valid_path_check:
                region = component_mask(free.reshape(map_data.shape), start_xy).ravel()
            allowed = (region & ~goals_used).at[start].set(False)
            goal, has_goal = pick(allowed, agent_u[cells : 2 * cells])
            ok = ok & has_start & has_goal
            return (starts_used.at[start].set(True), goals_used.at[goal].set(True), ok), (
                start,
                goal,
            )

        none = jnp.zeros_like(free)
        (_, _, ok), (starts, goals) = jax.lax.scan(place, (none, none, jnp.bool_(True)), u)
        picked = jnp.stack([starts, goals], axis=1)  # [n, 2]
        xy = jnp.stack([picked % self.width, picked // self.width], -1).astype(jnp.float32)
        xy = (xy + 0.5) * self.cell_size
        theta = jnp.pi * (2 * u[:, -2:, None] - 1)
        return ok, jnp.concatenate([xy, theta], axis=-1)

    def _barn_case(self, u: jax.Array, map_data: jax.Array) -> tuple[jax.Array, jax.Array]:
        """One robot's start and goal on a BARN map (JaxMARL's ``barn_test_case``).

        Walls are inflated by ``BARN_INFLATE`` cells; the start is a uniformly drawn cell
        outside the inflation, the goal one connected to it through such cells and more than
        ``BARN_MIN_CELLS`` cells from it along x or y. Both lie at their cell's lower-left
        corner, as in JaxMARL, with headings in multiples of pi/2. ``u``: ``[2 H W + 2]``.
        """
        free = ~dilate(map_data == 1, BARN_INFLATE)
        cells = free.size
        start = jnp.argmax(jnp.where(free.ravel(), u[:cells], -1.0))
        start_xy = jnp.array([start % self.width, start // self.width])
        region = component_mask(free, start_xy)
        ys, xs = np.mgrid[: self.height, : self.width]
        far = (jnp.abs(xs - start_xy[0]) > BARN_MIN_CELLS) | (
            jnp.abs(ys - start_xy[1]) > BARN_MIN_CELLS
        )
        allowed = (region & far).ravel()
        goal = jnp.argmax(jnp.where(allowed, u[cells : 2 * cells], -1.0))
        ok = jnp.any(free) & jnp.any(allowed)
        picked = jnp.stack([start, goal])
        xy = jnp.stack([picked % self.width, picked // self.width], -1).astype(jnp.float32)
        quarter = jnp.minimum(jnp.floor(u[-2:] * 4), 3.0) - 2.0  # -2 ... 1: in [-pi, pi)
        theta = quarter * (jnp.pi / 2)
        case = jnp.concatenate([xy * self.cell_size, theta[:, None]], axis=-1)
        return ok, case[None]

    # ------------------------------------------------------------------ placement check
    def placement_problem(self, map_data: np.ndarray) -> str | None:
        """Why no start/goal case can be drawn on ``map_data`` (NumPy), or ``None``.

        Applies the sampler's rules without compiling anything. ``grid`` and ``barn`` cases
        are checked exactly (free cells, distinct cells, connected regions). ``random``
        cases are searched on a lattice of ``cell_size / LATTICE_PER_CELL`` spacing (cell
        centres first), robot after robot: the rules are strict inequalities, so around a
        case found there the sampler draws valid ones with positive probability; a map whose
        only cases fall between the lattice points (slivers thinner than the spacing) is
        reported too.
        """
        grid = np.asarray(map_data)
        if self.sample_test_case_type == "grid":
            return self._grid_placement_problem(grid == 0)
        if self.sample_test_case_type == "barn":
            free = ~dilate(grid == 1, BARN_INFLATE, np)
            labels = component_labels(free)
            for label in range(labels.max() + 1):
                ys, xs = np.nonzero(labels == label)
                if max(np.ptp(xs), np.ptp(ys)) > BARN_MIN_CELLS:
                    return None
            return (
                f"no two cells {BARN_MIN_CELLS + 1} cells apart along x or y are connected "
                f"through cells more than {BARN_INFLATE} cells from every wall (JaxMARL's BARN "
                "start and goal rule)"
            )
        return self._random_placement_problem(grid)

    def _grid_placement_problem(self, free: np.ndarray) -> str | None:
        # Each robot needs a start and a different goal cell; starts are distinct, goals are
        # distinct (a goal may be another robot's start). m robots fit in a region of c >= 2
        # cells if m <= c (goals: the starts shifted by one).
        if self.valid_path_check:
            labels = component_labels(free)
            sizes = np.bincount(labels[labels >= 0], minlength=1)
            capacity = int(sizes[sizes >= 2].sum())
            where = "in regions of 2 or more connected free cells (valid_path_check)"
        else:
            count = int(free.sum())
            capacity = count if count >= 2 else 0
            where = "on the free cells"
        if capacity >= self.num_agents:
            return None
        return (
            f"{self.num_agents} robots need a start and a different goal cell each {where}, "
            f"and there is room for {capacity}"
        )

    def _random_placement_problem(self, grid: np.ndarray) -> str | None:
        low, high, *_ = self.random_case_limits
        if (high < low).any():
            return (
                f"the start area (cells more than cell_size + rad = {low[0]:.2f} m from the "
                "map's edge) is empty"
            )
        # Cell centres first (enough on most maps), then the fine lattice with the box edges.
        centres = [
            c[(c >= lo) & (c <= hi)]
            for c, lo, hi in zip(
                [(np.arange(n) + 0.5) * self.cell_size for n in (self.width, self.height)],
                low,
                high,
            )
        ]
        spacing = max(self.cell_size / LATTICE_PER_CELL, float((high - low).max()) / LATTICE_MAX)
        fine = [np.unique(np.append(np.arange(lo, hi, spacing), hi)) for lo, hi in zip(low, high)]
        problem = None
        for axes in (centres, fine):
            points = np.stack(np.meshgrid(*axes), -1).reshape(-1, 2).astype(np.float64)
            problem = self._lattice_placement_problem(points, grid)
            if problem is None:
                return None
        return problem

    def _lattice_placement_problem(self, points: np.ndarray, grid: np.ndarray) -> str | None:
        """Place the robots one by one on candidate ``points`` ``[P, 2]`` by the sampler's
        ``random`` rules (first start, then first goal, in lattice order)."""
        low, high, min_dist, max_dist, clear = self.random_case_limits
        if not len(points):
            return "no candidate points"
        wall_gap = self._wall_distance(points, grid, max(clear, GOAL_CLEARANCE))
        starts, goals = points[wall_gap > clear], points[wall_gap > GOAL_CLEARANCE]
        if not len(starts):
            return f"no start point keeps rad * start_pad = {clear:.2f} m clear of walls"
        if not len(goals):
            return f"no goal point keeps {GOAL_CLEARANCE} m clear of walls"
        # A goal on the draw box's edge is also reached by clipping from any farther point.
        on_edge = ((goals == low) | (goals == high)).any(1)
        near_dist, far_dist = sorted((min_dist, max_dist))
        labels = component_labels(grid == 0) if self.valid_path_check else None

        def region(p: np.ndarray) -> np.ndarray:
            cell = np.floor(p / self.cell_size).astype(int)
            return labels[cell[:, 1], cell[:, 0]]

        for agent in range(self.num_agents):
            pair = None
            for first in range(0, len(starts), 16):
                chunk = starts[first : first + 16]
                delta = chunk[:, None] - goals[None]
                dist = np.sqrt(delta[..., 0] ** 2 + delta[..., 1] ** 2)
                ok = (dist > 2 * self.rad) & (dist < far_dist) & ((dist >= near_dist) | on_edge)
                if labels is not None:
                    ok &= region(chunk)[:, None] == region(goals)[None]
                rows = np.nonzero(ok.any(1))[0]
                if rows.size:
                    pair = chunk[rows[0]], goals[np.argmax(ok[rows[0]])]
                    break
            if pair is None:
                if agent:
                    return (
                        f"only {agent} of {self.num_agents} robots' starts and goals fit "
                        f"2 rad start_pad = {2 * clear:.2f} m apart"
                    )
                path = ", connected through free cells," if labels is not None else ""
                return (
                    f"no start and goal{path} are more than 2 rad = {2 * self.rad:.2f} m "
                    f"apart at a distance the sampler draws ({near_dist:.2f} to {far_dist:.2f} m)"
                )
            keep_start = np.linalg.norm(starts - pair[0], axis=-1) > 2 * clear
            keep_goal = np.linalg.norm(goals - pair[1], axis=-1) > 2 * clear
            starts, goals, on_edge = starts[keep_start], goals[keep_goal], on_edge[keep_goal]
        return None

    def _wall_distance(self, points: np.ndarray, grid: np.ndarray, reach: float) -> np.ndarray:
        """Distance (m) from ``points`` ``[P, 2]`` to the nearest wall cell within ``reach``
        (cells outside the grid are walls), ``inf`` beyond it; NumPy."""
        window = int(np.ceil(reach / self.cell_size)) + 1
        padded = np.pad(grid, window, constant_values=1)
        offsets = np.arange(-window, window + 1)
        offsets = np.stack(np.meshgrid(offsets, offsets), -1).reshape(-1, 2)
        cells = np.floor(points / self.cell_size).astype(int)[:, None] + offsets  # [P, C, 2]
        corners = cells * self.cell_size
        nearest = np.clip(points[:, None], corners, corners + self.cell_size)
        dist = np.linalg.norm(nearest - points[:, None], axis=-1)
        wall = padded[cells[..., 1] + window, cells[..., 0] + window] == 1
        return np.where(wall, dist, np.inf).min(-1)


def parse_map_rows(rows: Any) -> np.ndarray:
    """A map given as rows of ``"0 1 0 ..."`` strings (JaxMARL's format) or as a 2-D array."""
    if isinstance(rows, (list, tuple)) and rows and isinstance(rows[0], str):
        return np.array([[int(v) for v in row.split()] for row in rows], dtype=np.int32)
    return np.asarray(rows, dtype=np.int32)
