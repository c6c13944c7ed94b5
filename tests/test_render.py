"""``jaxmarl.render`` picks the renderer of the env's family, through subclasses and wrappers."""

from __future__ import annotations

import pytest

import jaxmarl
from jaxmarl.render import can_render, renderer_module, save_episode_gif
from jaxmarl.wrappers import LogWrapper


@pytest.mark.parametrize(
    "env_id, family",
    [
        ("MPE_simple_spread_v3", "jaxmarl.envs.mpe"),
        ("SMAX", "jaxmarl.envs.smax"),
        ("HeuristicEnemySMAX", "jaxmarl.envs.smax"),
        ("LearnedPolicyEnemySMAX", "jaxmarl.envs.smax"),
    ],
)
def test_renderer_of_the_family_even_when_wrapped(env_id, family):
    env = jaxmarl.make(env_id)
    assert renderer_module(env).__name__ == f"{family}.render"
    assert renderer_module(LogWrapper(env)).__name__ == f"{family}.render"


def test_every_id_of_a_family_with_a_renderer_can_render():
    """An id renders exactly when its family ships a ``render`` module (Switch Riddle has none)."""
    import importlib.util

    for env_id in jaxmarl.registered_envs:
        family = jaxmarl.spec(env_id).entry_point.split(":")[0].rsplit(".", 1)[0]
        has_module = importlib.util.find_spec(f"{family}.render") is not None
        assert can_render(jaxmarl.make(env_id)) == has_module, env_id


def test_a_family_without_render_module_cannot_render():
    from tests.toy_envs import CounterEnv

    env = CounterEnv(target=3, max_steps=3)
    assert not can_render(env)
    with pytest.raises(NotImplementedError, match="CounterEnv has no renderer"):
        save_episode_gif(env, None, "never.gif")
