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
import os
import pkgutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# The env whose preset the train command (and ``preset_config``) loads when given neither.
DEFAULT_ENV = "MPE_simple_spread_v3"

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


def find_preset(alg: str, preset: str | os.PathLike | None, env_id: str) -> Path | None:
    """The YAML file ``preset`` names for ``alg``: a path to a YAML file, or a packaged
    preset's name (``configs/<alg>/<name>.yaml``); with ``preset=None``, the packaged preset
    named after ``env_id`` if ``alg`` has one, else ``None`` (the config class's defaults).

    Raises:
        FileNotFoundError: no such preset; the message lists the ones there are.
    """
    from jaxmarl.config import available_presets, preset_path

    if preset is not None:
        path = Path(preset)
        if path.suffix in (".yaml", ".yml") and path.exists():
            return path
        return preset_path(alg, str(preset))
    return preset_path(alg, env_id) if env_id in available_presets(alg) else None


def preset_config(
    alg: str,
    preset: str | os.PathLike | None = None,
    overrides: Sequence[str] = (),
    *,
    env: str | None = None,
) -> Any:
    """The frozen config that ``python -m jaxmarl.train alg=<alg> [env=<env>]
    [preset=<preset>] <overrides>`` trains, for use from Python::

        config = jaxmarl.preset_config("ippo", "overcooked", ["env.num_envs=8"])
        train = jax.jit(jaxmarl.baselines.ppo.make_train(config))  # train(key)

    As on the command line, ``env.env_id=<env>`` comes first, then the algorithm's own fixed
    overrides (``ippo``: ``critic=local``; ``vdn``: ``mixer=vdn``), then ``overrides``, all
    over the preset.

    Args:
        alg: a registered algorithm name (``python -m jaxmarl.train --list``).
        preset: a packaged preset's name, a YAML path, or ``None``: the preset named after
            ``env`` (after the default env when ``env`` is ``None``) if there is one.
        overrides: ``"key=value"`` strings, as ``jaxmarl.config.load_config`` takes them.
        env: an env id to train on (``env.env_id``).

    Raises:
        KeyError: an unknown algorithm (close matches named).
        FileNotFoundError: an unknown preset (the known ones listed).
        jaxmarl.config.ConfigError: an override that does not fit the config.
    """
    from jaxmarl.config import load_config

    spec = algorithm(alg)
    path = find_preset(alg, preset, env or DEFAULT_ENV)
    env_override = [f"env.env_id={env}"] if env is not None else []
    return load_config(spec.config_class, path, [*env_override, *spec.fixed, *overrides])
