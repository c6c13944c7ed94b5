"""Hyperparameters swept inside one compiled program (``run.sweep``), the PureJaxRL trick.

``run.sweep.lr=[1e-3,3e-4,1e-4]`` (on the command line ``sweep.lr=[...]``) trains every value
times ``run.num_seeds`` seeds as one ``vmap``-ped program: the learner's optimiser is wrapped
in ``optax.inject_hyperparams``, so the learning rate is an array in the optimiser state
instead of a constant folded into the program, and the host loop writes each point's value
into the initial state of its members. Member ``i`` of the vmapped axis is point
``i // num_seeds``, seed ``i % num_seeds``; every point uses the same seed keys as a run of
its own, so point ``p``, seed ``s`` equals a separate run with ``lr=<value p>`` to float
tolerance (``tests/training/test_sweep.py``). ``anneal_lr`` still decays each point's rate
linearly to 0: the schedule is built inside the injected factory from the swept value.

Only hyperparameters that live in the optimiser are swept this way (``lr`` for the PPO and
Q-learning learners, which list it in ``Learner.sweepable``). Values that change shapes
(``num_envs``, network widths) cannot share a program: sweep those on the host
(``python -m jaxmarl.train -m network.embed_dim=32,64``), one run directory per point.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import optax

# JAX and optax are imported where used: configs (and the command line) load without them.
HYPERPARAMETERS = ("lr",)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepConfig:
    """Values vmapped in one program (``run.sweep``); every combination is a point.

    Attributes:
        lr: learning rates (empty: not swept; the learner's ``lr`` is used).
    """

    lr: tuple[float, ...] = ()

    def __post_init__(self):
        if any(not value > 0 for value in self.lr):
            raise ValueError(f"run.sweep.lr values must be > 0, got {list(self.lr)}")
        if len(set(self.lr)) != len(self.lr):
            raise ValueError(f"run.sweep.lr lists a value twice: {list(self.lr)}")

    @property
    def names(self) -> tuple[str, ...]:
        """The swept hyperparameters, in field order."""
        return tuple(name for name in HYPERPARAMETERS if getattr(self, name))

    def labels(self) -> tuple[str, ...]:
        """``point_label`` of every point (``()`` when nothing is swept)."""
        return tuple(point_label(point) for point in self.points()) if self.names else ()

    def points(self) -> list[dict[str, float]]:
        """Every combination of the swept values (``[{}]`` when nothing is swept)."""
        names = self.names
        values = [getattr(self, name) for name in names]
        return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def point_label(point: dict[str, float]) -> str:
    """``"lr=0.001"``: how logs, tables and tags name a point (``""`` for no sweep)."""
    return ",".join(f"{name}={value:g}" for name, value in point.items())


def sweepable_optimiser(
    build: Callable[..., optax.GradientTransformation], swept: tuple[str, ...], **values: float
) -> optax.GradientTransformation:
    """``build(**values)``, or when any of ``values`` is ``swept`` the same optimiser with those
    values held in its state (``optax.inject_hyperparams``), so ``with_hyperparameters`` can set
    them per vmapped member. ``build`` must only do arithmetic with them (schedules included).
    """
    import optax

    if not set(values) & set(swept):
        return build(**values)
    return optax.inject_hyperparams(build)(**values)


def with_hyperparameters(state: Any, values: dict[str, Any]) -> Any:
    """``state`` (a train state whose ``opt_state`` ``sweepable_optimiser`` made) holding
    ``values`` (``set_hyperparameters``)."""
    if not values:
        return state
    return state.replace(opt_state=set_hyperparameters(state.opt_state, values))


def set_hyperparameters(opt_state: Any, values: dict[str, Any]) -> Any:
    """An ``optax.inject_hyperparams`` state holding ``values`` instead of its own.

    Raises:
        ValueError: the state does not hold one of ``values`` (a learner that cannot sweep it).
    """
    import jax.numpy as jnp

    held = getattr(opt_state, "hyperparams", {})
    missing = [name for name in values if name not in held]
    if missing:
        raise ValueError(
            f"this learner's optimiser does not hold {missing}; run.sweep cannot vary them"
        )
    hyperparams = dict(held)
    for name, value in values.items():
        hyperparams[name] = jnp.asarray(value, dtype=held[name].dtype)
    return opt_state._replace(hyperparams=hyperparams)


def check_sweepable(sweep: SweepConfig, sweepable: tuple[str, ...], alg: str = "this learner"):
    """``ValueError`` naming the fix when ``sweep`` varies what the learner cannot vmap."""
    unsupported = [name for name in sweep.names if name not in sweepable]
    if unsupported:
        can = f"it can sweep {', '.join(sweepable)}" if sweepable else "it sweeps none in-program"
        raise ValueError(
            f"run.sweep.{unsupported[0]} is not supported by {alg} ({can}); sweep it on the host "
            f"instead: python -m jaxmarl.train -m {unsupported[0]}=A,B,..."
        )
