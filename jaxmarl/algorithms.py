"""The algorithm registry: the names ``alg=`` accepts, each a config class and a ``make_*``.

Every learner package under ``jaxmarl.baselines`` registers its own names when imported
(``register_algorithm("ippo", PPOConfig, make_ppo, fixed=("critic=local",))``), so adding a
learner touches only its own folder. ``algorithms()`` imports every such package once and
returns what they registered; ``python -m jaxmarl.train --list`` prints it.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any

_REGISTRY: dict[str, Algorithm] = {}
_discovered = False


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """How the train command builds one learner.

    Attributes:
        name: the ``alg=`` value.
        config_class: the learner's frozen config dataclass.
        make: ``config -> Learner``.
        fixed: config overrides that define the algorithm (``"mixer=vdn"``), applied before the
            user's and checked on ``--resume``.
        multitask: the config takes ``tasks=[...]`` (labels runs by their tasks).
        after_run: called with the ``RunResult`` once training ends, for what the learner
            saves beside its checkpoints (multi-task: the shared decision layers); returns the
            path it wrote, or ``None``.
    """

    name: str
    config_class: type
    make: Callable[[Any], Any]
    fixed: tuple[str, ...] = ()
    multitask: bool = False
    after_run: Callable[[Any], Any] | None = None


def register_algorithm(
    name: str,
    config_class: type,
    make: Callable[[Any], Any],
    *,
    fixed: tuple[str, ...] = (),
    multitask: bool = False,
    after_run: Callable[[Any], Any] | None = None,
) -> Algorithm:
    """Make ``alg=name`` build ``make(config_class(...))`` (the same name twice is an error)."""
    algorithm = Algorithm(name, config_class, make, tuple(fixed), multitask, after_run)
    existing = _REGISTRY.get(name)
    if existing is not None and existing != algorithm:
        raise ValueError(f"algorithm {name!r} is already registered (by {existing.make!r})")
    _REGISTRY[name] = algorithm
    return algorithm


def algorithms() -> dict[str, Algorithm]:
    """Every registered algorithm, by name (imports the learner packages on first use)."""
    global _discovered
    if not _discovered:
        import jaxmarl.baselines as package

        for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
            if module.ispkg:
                importlib.import_module(module.name)
        _discovered = True
    return dict(_REGISTRY)


def algorithm(name: str) -> Algorithm:
    """The algorithm registered as ``name``; a ``KeyError`` with close matches otherwise."""
    known = algorithms()
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.4)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise KeyError(f"unknown algorithm alg={name!r}{hint} (choose from {sorted(known)})")
    return known[name]
