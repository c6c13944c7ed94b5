"""JaxNav's 2-D lidar: ranges to the nearest wall or other robot along each beam.

JaxMARL samples every beam at ``num_samples = int(max_range / range_resolution)`` points
``ranges = linspace(0, max_range, num_samples)`` and reports the first sample that lies in a
wall cell (or the sample index of the first robot edge the beam crosses), ``max_range`` when
nothing is hit. Testing every sample costs ``beams x samples`` map reads per robot; here a
grid traversal (Amanatides & Woo) visits only the cells a beam crosses and, for the first
wall cell that contains a sample, returns that sample: the same reading with about a tenth of
the work. Readings agree with JaxMARL's except where a sample lies within float rounding of
a cell edge.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .maps import GridMap, footprint_vertices


def sample_ranges(max_range: float, range_resolution: float) -> np.ndarray:
    """The ranges a beam is sampled at (JaxMARL's ``lidar_ranges``), float32."""
    count = int(max_range / range_resolution)
    return np.linspace(0.0, max_range, count, dtype=np.float32)


def wall_sample_index(
    pos: jax.Array,
    angles: jax.Array,
    map_data: jax.Array,
    cell_size: float,
    spacing: float,
    num_samples: int,
) -> jax.Array:
    """Index of the first sample inside a wall along each beam, ``num_samples`` if none.

    Args:
        pos: ``[..., 2]`` float32 beam origins (m).
        angles: ``[..., B]`` float32 beam directions (rad, world frame).
        map_data: ``[H, W]`` int32 occupancy grid; cells outside it count as walls.
        cell_size: cell side (m).
        spacing: distance between samples (m).
        num_samples: samples per beam.

    Returns:
        ``[..., B]`` int32.
    """
    height, width = map_data.shape
    max_range = spacing * (num_samples - 1)
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    origin_x = (pos[..., 0:1] / cell_size) + jnp.zeros_like(angles)  # [..., B]
    origin_y = (pos[..., 1:2] / cell_size) + jnp.zeros_like(angles)
    cell_x = jnp.floor(origin_x).astype(jnp.int32)
    cell_y = jnp.floor(origin_y).astype(jnp.int32)
    step_x = jnp.where(cos > 0, 1, -1)
    step_y = jnp.where(sin > 0, 1, -1)
    inv_x = jnp.where(cos == 0, jnp.inf, cell_size / jnp.abs(cos))  # metres per cell in x
    inv_y = jnp.where(sin == 0, jnp.inf, cell_size / jnp.abs(sin))
    frac_x = jnp.where(cos > 0, cell_x + 1 - origin_x, origin_x - cell_x)
    frac_y = jnp.where(sin > 0, cell_y + 1 - origin_y, origin_y - cell_y)
    # Distance (m) to the next vertical / horizontal cell edge; never for a beam parallel to
    # those edges (0 * inf would be NaN for one that starts on an edge).
    next_x = jnp.where(cos == 0, jnp.inf, frac_x * inv_x)
    next_y = jnp.where(sin == 0, jnp.inf, frac_y * inv_y)
    # A beam of length L crosses at most L (|cos| + |sin|) / cell_size + 1 edges.
    num_cells = int(np.ceil(max_range * np.sqrt(2.0) / cell_size)) + 2
    none = jnp.full(angles.shape, num_samples, jnp.int32)

    def visit(carry, _):
        ix, iy, t_in, next_x, next_y, first = carry
        t_out = jnp.minimum(next_x, next_y)
        inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
        wall = ~inside | (map_data[jnp.clip(iy, 0, height - 1), jnp.clip(ix, 0, width - 1)] == 1)
        k = jnp.ceil(t_in / spacing).astype(jnp.int32)
        hit = wall & (k.astype(jnp.float32) * spacing < t_out) & (k < num_samples)
        first = jnp.where((first == num_samples) & hit, k, first)
        cross_x = next_x <= next_y
        ix = jnp.where(cross_x, ix + step_x, ix)
        iy = jnp.where(cross_x, iy, iy + step_y)
        next_x = jnp.where(cross_x, next_x + inv_x, next_x)
        next_y = jnp.where(cross_x, next_y, next_y + inv_y)
        return (ix, iy, t_out, next_x, next_y, first), None

    start = (
        cell_x,
        cell_y,
        jnp.zeros(angles.shape, jnp.float32),
        next_x,
        next_y,
        none,
    )
    (*_, first), _ = jax.lax.scan(visit, start, None, length=num_cells)
    return first


def robot_sample_index(
    pos: jax.Array,
    theta: jax.Array,
    angles: jax.Array,
    skip: jax.Array,
    grid: GridMap,
    max_range: float,
    range_resolution: float,
    num_samples: int,
) -> jax.Array:
    """Sample index at which each beam first meets another robot, ``num_samples`` if none.

    JaxMARL's rule: the beam is the segment from the robot's centre to ``max_range`` along
    it; the index is ``floor(distance / range_resolution)`` of the nearest crossing with
    another robot's outline (polygon edges, or the near side of a disc).

    Args:
        pos: ``[n, 2]`` robot centres; theta: ``[n]`` headings.
        angles: ``[n, B]`` beam directions per robot.
        skip: ``[n, n]`` bool, ``skip[i, j]``: robot ``i`` does not see robot ``j``.
        grid: the map (footprint and radius).

    Returns:
        ``[n, B]`` int32.
    """
    x1 = pos[:, 0, None, None]  # [n, 1, 1]  (observer, beam, other robot)
    y1 = pos[:, 1, None, None]
    x2 = max_range * jnp.cos(angles)[..., None] + x1  # [n, B, 1], JaxMARL's beam end point
    y2 = max_range * jnp.sin(angles)[..., None] + y1
    dx, dy = x2 - x1, y2 - y1
    if grid.footprint == "circle":
        fx = x1 - pos[None, None, :, 0]  # [n, 1, m]
        fy = y1 - pos[None, None, :, 1]
        a = dx * dx + dy * dy
        b = 2 * (fx * dx + fy * dy)  # [n, B, m]
        c = fx * fx + fy * fy - grid.rad**2
        disc = b**2 - 4 * a * c
        t1 = (-b - jnp.sqrt(disc)) / (2 * a)
        miss = (disc < 0) | (t1 < 0) | (t1 > 1)
        dist = jnp.sqrt((t1 * dx) ** 2 + (t1 * dy) ** 2)
    else:
        verts = footprint_vertices(pos, theta, jnp.asarray(grid.coords, jnp.float32))  # [m, V, 2]
        ends = jnp.roll(verts, -1, axis=1)
        x3, y3 = verts[None, None, :, :, 0], verts[None, None, :, :, 1]  # [1, 1, m, V]
        x4, y4 = ends[None, None, :, :, 0], ends[None, None, :, :, 1]
        x1, y1, x2, y2 = (v[..., None] for v in (x1, y1, x2, y2))  # [n, B, 1, 1]
        den = (y4 - y3) * (x2 - x1) - (x4 - x3) * (y2 - y1)
        u_a = ((x4 - x3) * (y1 - y3) - (y4 - y3) * (x1 - x3)) / den
        u_b = ((x2 - x1) * (y1 - y3) - (y2 - y1) * (x1 - x3)) / den
        crosses = (u_a >= 0) & (u_a <= 1) & (u_b >= 0) & (u_b <= 1)
        hit_x = x1 + u_a * (x2 - x1)
        hit_y = y1 + u_a * (y2 - y1)
        edge_dist = jnp.sqrt((hit_x - x1) ** 2 + (hit_y - y1) ** 2)
        dist = jnp.min(jnp.where(crosses, edge_dist, jnp.inf), axis=-1)  # [n, B, m]
        miss = ~jnp.isfinite(dist)
    index = jnp.floor(dist / range_resolution)
    index = jnp.where(miss | skip[:, None, :] | (index >= num_samples), num_samples, index)
    return jnp.min(index, axis=-1).astype(jnp.int32)
