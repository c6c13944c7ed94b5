"""The environment registry: ``make``, ``register``, ``spec`` and ``registered_envs``.

Entries are ``env_id -> EnvSpec(entry_point="module:Class", kwargs)`` and are imported lazily,
so ``import jaxmarl`` stays cheap and a family's dependencies load only when it is used.
JaxMARL's ids are kept verbatim; new environments use ``Name-vN`` and any change to their
dynamics bumps ``N``.

Each env family (a subpackage ``jaxmarl.envs.<family>``) registers its own ids from its package
``__init__`` with ``register_family``. The registry keeps no list of families: the first time it
is consulted (``make``, ``spec``, ``register``, ``registered_envs``) it imports every subpackage
of ``jaxmarl.envs``. So a family ``__init__`` must stay light: it registers entry-point strings
and imports none of its env modules (nor anything of another family), and adding a family
touches only its own folder. A family may also add options of its own to
``python -m jaxmarl.evaluate`` (``register_family``'s ``evaluate_flags``: a ``PartnerFlag`` or a
``ReportFlag``), declared here as strings and imported only when used.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jaxmarl.env import MultiAgentEnv


@dataclasses.dataclass(frozen=True)
class EnvSpec:
    """How to build one registered environment.

    Attributes:
        env_id: the id passed to ``make``.
        entry_point: ``"package.module:ClassName"`` or a callable returning an env.
        kwargs: default constructor keywords; ``make(env_id, **overrides)`` updates them.
    """

    env_id: str
    entry_point: str | Callable[..., MultiAgentEnv]
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def load(self) -> Callable[..., MultiAgentEnv]:
        if callable(self.entry_point):
            return self.entry_point
        module_name, _, attr = self.entry_point.partition(":")
        if not attr:
            raise ValueError(
                f"entry point {self.entry_point!r} of {self.env_id!r} must look like "
                f"'package.module:ClassName'"
            )
        return getattr(importlib.import_module(module_name), attr)


@dataclasses.dataclass(frozen=True)
class EvaluateFlag:
    """A family's own option of ``python -m jaxmarl.evaluate`` (``register_family``).

    Use one of its two kinds, ``PartnerFlag`` or ``ReportFlag``.

    Attributes:
        flag: the option, such as ``"--jaxnav-levels"``; it takes one or more strings.
        env_id: the env id of the runs it takes; a run on another env is refused (status 2).
        metavar: the name of its values in ``--help``.
        help: its ``--help`` text.
        target: ``"module:function"`` relative to the family package, imported only when the
            flag is given, and called as ``function(run, values)`` with the
            ``jaxmarl.evaluate.TrainedRun`` and the strings. It raises ``ValueError`` for bad
            values before anything compiles; the command line prints that as one line and exits
            with status 2.
    """

    flag: str
    env_id: str
    metavar: str
    help: str
    target: str

    def load(self) -> Callable[..., Any]:
        module_name, _, function = self.target.partition(":")
        return getattr(importlib.import_module(module_name), function)


@dataclasses.dataclass(frozen=True)
class PartnerFlag(EvaluateFlag):
    """Partners for ``--cross-play``, instead of ``--partner RUN_DIR``.

    ``target`` returns a ``jaxmarl.evaluate.Partner``: the columns of the cross-play matrix.
    """


@dataclasses.dataclass(frozen=True)
class ReportFlag(EvaluateFlag):
    """An evaluation of the family's own instead of the plain one (not with ``--cross-play``).

    ``target`` checks the values and returns ``report(seed)``, which plays the run, prints its
    table and writes its files under ``RUN_DIR/evaluation/``.
    """


_REGISTRY: dict[str, EnvSpec] = {}
# JaxMARL exposes the ids as a list (``registered_envs``, served by ``__getattr__`` below once the
# families are loaded); it is kept in step with the registry.
_ENV_IDS: list[str] = []
_families_loaded = False
# Families' explanations of unknown ids that look like theirs, as "package.module:function"
# (``register_family``'s ``unknown_id_hint``), imported only when an unknown id is looked up.
_UNKNOWN_ID_HINTS: list[str] = []
# Families' options of ``python -m jaxmarl.evaluate``, by flag, targets package-qualified.
_EVALUATE_FLAGS: dict[str, EvaluateFlag] = {}


def __getattr__(name: str) -> Any:
    if name == "registered_envs":
        _load_families()
        return _ENV_IDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load_families() -> None:
    """Import every ``jaxmarl.envs.<family>`` package once, so that each registers its ids."""
    global _families_loaded
    if _families_loaded:
        return
    # Set first: a family that consults the registry while it loads must not recurse.
    _families_loaded = True
    try:
        import jaxmarl.envs

        found = pkgutil.iter_modules(jaxmarl.envs.__path__)
        for family in sorted(module.name for module in found if module.ispkg):
            importlib.import_module(f"{jaxmarl.envs.__name__}.{family}")
    except BaseException:
        _families_loaded = False  # the next lookup tries again and raises the same error
        raise


def _add(env_spec: EnvSpec, overwrite: bool) -> EnvSpec:
    if env_spec.env_id in _REGISTRY and not overwrite:
        raise ValueError(
            f"environment id {env_spec.env_id!r} is already registered (entry point "
            f"{_REGISTRY[env_spec.env_id].entry_point!r}); choose a new id or pass overwrite=True"
        )
    _REGISTRY[env_spec.env_id] = env_spec
    if env_spec.env_id not in _ENV_IDS:
        _ENV_IDS.append(env_spec.env_id)
    return env_spec


def register(
    env_id: str,
    entry_point: str | Callable[..., MultiAgentEnv],
    *,
    kwargs: dict[str, Any] | None = None,
    overwrite: bool = False,
) -> EnvSpec:
    """Add an environment to the registry.

    Args:
        env_id: a new id (``Name-vN`` for new environments).
        entry_point: ``"package.module:ClassName"`` (imported on first ``make``) or a callable.
        kwargs: default constructor keywords.
        overwrite: replace an existing entry (a built-in id included) instead of refusing.

    Raises:
        ValueError: the id is taken and ``overwrite`` is false.
    """
    _load_families()  # so that a built-in id is refused (or overwritten) as taken
    env_spec = EnvSpec(env_id=env_id, entry_point=entry_point, kwargs=dict(kwargs or {}))
    return _add(env_spec, overwrite)


def register_family(
    package: str,
    entry_points: Mapping[str, str],
    *,
    unknown_id_hint: str | None = None,
    evaluate_flags: Sequence[EvaluateFlag] = (),
) -> None:
    """Register an env family's ids; called from the family's package ``__init__``.

    Unlike ``register`` this loads no other family, so importing one family imports nothing of
    the others. Registering the same entry point again (a reloaded package) is a no-op.

    Args:
        package: the family's package, i.e. ``__name__`` of its ``__init__``.
        entry_points: ``env_id -> "module:ClassName"``, the module relative to ``package``
            (``"simple_spread:SimpleSpreadMPE"``); imported on the id's first ``make``.
        unknown_id_hint: ``"module:function"`` relative to ``package``: ``function(env_id)``
            returns a sentence for an unknown id that looks like one of the family's (MABrax:
            the known factorisations for ``"ant_3x3"``) or ``None``; imported only when an
            unknown id is looked up, and added to that error.
        evaluate_flags: the family's options of ``python -m jaxmarl.evaluate``
            (``PartnerFlag``, ``ReportFlag``), their targets relative to ``package``.

    Raises:
        ValueError: an id is already registered with another entry point, or a flag is taken.
    """
    for env_id, entry_point in entry_points.items():
        env_spec = EnvSpec(env_id=env_id, entry_point=f"{package}.{entry_point}")
        if _REGISTRY.get(env_id) != env_spec:
            _add(env_spec, overwrite=False)
    if unknown_id_hint is not None and f"{package}.{unknown_id_hint}" not in _UNKNOWN_ID_HINTS:
        _UNKNOWN_ID_HINTS.append(f"{package}.{unknown_id_hint}")
    for flag in evaluate_flags:
        flag = dataclasses.replace(flag, target=f"{package}.{flag.target}")
        taken = _EVALUATE_FLAGS.setdefault(flag.flag, flag)
        if taken != flag:
            raise ValueError(
                f"evaluate flag {flag.flag} is already registered (for {taken.env_id} runs, "
                f"{taken.target}); give {package}'s flag another name"
            )


def evaluate_flags() -> tuple[EvaluateFlag, ...]:
    """Every family's options of ``python -m jaxmarl.evaluate``, in registration order."""
    _load_families()
    return tuple(_EVALUATE_FLAGS.values())


def _families_hints(env_id: str) -> list[str]:
    """The registered families' sentences about ``env_id`` (an id no family registers)."""
    hints = []
    for target in _UNKNOWN_ID_HINTS:
        module_name, _, function = target.partition(":")
        hint = getattr(importlib.import_module(module_name), function)(env_id)
        if hint:
            hints.append(hint)
    return hints


def spec(env_id: str) -> EnvSpec:
    """The ``EnvSpec`` of ``env_id``; unknown ids raise with the closest registered ids."""
    _load_families()
    try:
        return _REGISTRY[env_id]
    except KeyError:
        close = difflib.get_close_matches(env_id, list(_REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        families = "".join(f". {sentence}" for sentence in _families_hints(env_id))
        raise ValueError(
            f"unknown environment id {env_id!r}{hint} (jaxmarl.registered_envs lists all "
            f"{len(_REGISTRY)} ids){families}"
        ) from None


def make(env_id: str, **kwargs: Any) -> MultiAgentEnv:
    """Build a registered environment: ``jaxmarl.make("MPE_simple_spread_v3", num_agents=4)``.

    Raises:
        ValueError: unknown ``env_id`` (the message names the closest ids).
        TypeError: a keyword the environment does not take (the message names close ones).
    """
    env_spec = spec(env_id)
    constructor = env_spec.load()
    _check_keywords(env_id, constructor, kwargs)
    return constructor(**{**env_spec.kwargs, **kwargs})


def _check_keywords(env_id: str, constructor: Callable[..., Any], kwargs: dict) -> None:
    try:
        signature = inspect.signature(constructor)
    except (TypeError, ValueError):
        return
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return
    accepted = [p.name for p in params if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    for name in kwargs:
        if name not in accepted:
            close = difflib.get_close_matches(name, accepted, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise TypeError(
                f"{env_id} got an unknown argument {name!r}{hint} (it takes: {', '.join(accepted)})"
            )
