"""The wrapper base class: forwards everything it does not override to the wrapped env."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from jaxmarl.env import MultiAgentEnv


def step_options(reset_state: Any, with_terminal_obs: bool) -> dict[str, Any]:
    """The optional ``step`` arguments a wrapper passes on: only those given, since wrappers
    below it in JaxMARL's style (its scripts' world-state wrappers) define
    ``step(key, state, actions)`` alone."""
    options: dict[str, Any] = {} if reset_state is None else {"reset_state": reset_state}
    if with_terminal_obs:
        options["with_terminal_obs"] = True
    return options


def wrapper_layers(env: Any) -> Iterator[Any]:
    """``env``, then each env it wraps, down to the unwrapped one."""
    while isinstance(env, Wrapper):
        yield env
        env = env._env
    yield env


class Wrapper:
    """Wraps an environment; attribute access falls through to it (``wrapper.agents`` ...).

    A wrapper that changes the state type keeps the wrapped state in ``state.env_state`` and
    overrides the methods that take a state.
    """

    # True for a wrapper whose get_world_state is its own (not the wrapped env's, nor the
    # default concatenation of observations), so learners must call it.
    provides_world_state: ClassVar[bool] = False

    def __init__(self, env: MultiAgentEnv):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, so overridden methods win.
        if name == "_env":
            raise AttributeError(name)
        return getattr(self._env, name)

    # A copy compiles its own methods, as an env's does (jit_method).
    __getstate__ = MultiAgentEnv.__getstate__

    @property
    def unwrapped(self) -> MultiAgentEnv:
        env = self._env
        return env.unwrapped if isinstance(env, Wrapper) else env

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._env!r})"
