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
        pos: ``[2]`` float32 beam origin (m).
        angles: ``[B]`` float32 beam directions (rad, world frame).
        map_data: ``[H, W]`` int32 occupancy grid; cells outside it count as walls.
        cell_size: cell side (m).
        spacing: distance between samples (m).
        num_samples: samples per beam.

    Returns:
        ``[B]`` int32.
    """
    height, width = map_data.shape
    max_range = spacing * (num_samples - 1)
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    origin = pos / cell_size
    cell = jnp.floor(origin).astype(jnp.int32)  # [2]
    step_x = jnp.where(cos > 0, 1, -1)
    step_y = jnp.where(sin > 0, 1, -1)
    inv_x = jnp.where(cos == 0, jnp.inf, cell_size / jnp.abs(cos))  # metres per cell in x
    inv_y = jnp.where(sin == 0, jnp.inf, cell_size / jnp.abs(sin))
    frac_x = jnp.where(cos > 0, cell[0] + 1 - origin[0], origin[0] - cell[0])
    frac_y = jnp.where(sin > 0, cell[1] + 1 - origin[1], origin[1] - cell[1])
    next_x = frac_x * inv_x  # distance (m) to the next vertical cell edge
    next_y = frac_y * inv_y
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
        jnp.broadcast_to(cell[0], angles.shape),
        jnp.broadcast_to(cell[1], angles.shape),
        jnp.zeros(angles.shape, jnp.float32),
        next_x,
        next_y,
        none,
    )
    (*_, first), _ = jax.lax.scan(visit, start, None, length=num_cells)
    return first


def robot_sample_index(
    pos: jax.Array,
    angles: jax.Array,
    others_pos: jax.Array,
    others_theta: jax.Array,
    skip: jax.Array,
    grid: GridMap,
    max_range: float,
    range_resolution: float,
    num_samples: int,
) -> jax.Array:
    """Sample index at which each beam first meets another robot, ``num_samples`` if none.

    JaxMARL's rule: the beam is the segment from ``pos`` to ``max_range`` along it; the index
    is ``floor(distance / range_resolution)`` of the nearest crossing with another robot's
    outline (polygon edges, or the near side of a disc).

    Args:
        pos: ``[2]`` beam origin; angles: ``[B]`` beam directions.
        others_pos, others_theta: ``[n, 2]``, ``[n]`` every robot's pose.
        skip: ``[n]`` bool, robots not to see (the robot itself).
        grid: the map (footprint and radius).

    Returns:
        ``[B]`` int32.
    """
    end = jnp.stack([max_range * jnp.cos(angles) + pos[0], max_range * jnp.sin(angles) + pos[1]], -1)
    d = end - pos  # [B, 2]
    if grid.footprint == "circle":
        f = pos - others_pos  # [n, 2]
        a = jnp.sum(d * d, -1)[:, None]  # [B, 1]
        b = 2 * (d @ f.T)  # [B, n]
        c = jnp.sum(f * f, -1)[None, :] - grid.rad**2
        disc = b**2 - 4 * a * c
        t1 = (-b - jnp.sqrt(disc)) / (2 * a)
        miss = (disc < 0) | (t1 < 0) | (t1 > 1)
        dist = jnp.linalg.norm(t1[..., None] * d[:, None, :], axis=-1)
    else:
        coords = jnp.asarray(grid.coords, jnp.float32)
        verts = jax.vmap(footprint_vertices, in_axes=(0, 0, None))(others_pos, others_theta, coords)
        p3 = verts[:, None, :, :]  # [n, 1, V, 2]
        p4 = jnp.roll(verts, -1, axis=1)[:, None, :, :]
        x1, y1 = pos[0], pos[1]
        x2 = end[None, :, None, 0]  # [1, B, 1]
        y2 = end[None, :, None, 1]
        x3, y3, x4, y4 = p3[..., 0], p3[..., 1], p4[..., 0], p4[..., 1]
        den = (y4 - y3) * (x2 - x1) - (x4 - x3) * (y2 - y1)
        u_a = ((x4 - x3) * (y1 - y3) - (y4 - y3) * (x1 - x3)) / den
        u_b = ((x2 - x1) * (y1 - y3) - (y2 - y1) * (x1 - x3)) / den
        crosses = (u_a >= 0) & (u_a <= 1) & (u_b >= 0) & (u_b <= 1)
        hit_x = x1 + u_a * (x2 - x1)
        hit_y = y1 + u_a * (y2 - y1)
        edge_dist = jnp.sqrt((hit_x - x1) ** 2 + (hit_y - y1) ** 2)
        edge_dist = jnp.where(crosses, edge_dist, jnp.inf)
        dist = jnp.min(edge_dist, axis=-1).T  # [B, n]
        miss = ~jnp.isfinite(dist)
    index = jnp.floor(dist / range_resolution)
    index = jnp.where(miss | skip[None, :] | (index >= num_samples), num_samples, index)
    return jnp.min(index, axis=1).astype(jnp.int32)
