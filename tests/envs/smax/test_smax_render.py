"""SMAX episodes render to GIFs with unit types, health and attacks visible."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxmarl
from jaxmarl.env import random_actions
from jaxmarl.render import can_render, save_episode_gif

pytest.importorskip("matplotlib")
imageio = pytest.importorskip("imageio.v2")

ALLY_BLUE = np.array([0x1F, 0x5F, 0xBF])
ENEMY_RED = np.array([0xC0, 0x39, 0x2B])


def _count(frame, colour):
    return int((np.abs(frame.astype(int) - colour).sum(-1) < 10).sum())


def test_episode_gif_shows_both_teams_and_fighting(tmp_path):
    env = jaxmarl.make("HeuristicEnemySMAX", scenario="3m")
    assert can_render(env)
    _, state = env.reset(jax.random.key(3))
    step = jax.jit(env.step_env)
    states = [state]
    for t in range(40):
        actions = random_actions(env, jax.random.key(100 + t), state)
        _, state, _, dones, _ = step(jax.random.key(t), state, actions)
        states.append(state)
        if bool(dones["__all__"]):
            break
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    path = save_episode_gif(env, stacked, tmp_path / "battle.gif", fps=10)
    frames = imageio.mimread(path)
    assert len(frames) == len(states)
    first = np.asarray(frames[0])[..., :3]
    assert _count(first, ALLY_BLUE) > 50 and _count(first, ENEMY_RED) > 50
    # Somebody got hurt: the health bars changed between the first and the last frame.
    assert float(states[-1].unit_health.sum()) < float(states[0].unit_health.sum())
    last = np.asarray(frames[-1])[..., :3]
    assert not np.array_equal(first, last)
