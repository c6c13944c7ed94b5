"""Pieces of multi-task training with shared decision layers, and of transfer to new tasks.

Parameters of a multi-task learner are one dict::

    {"decision": <shared decision layers>, "tasks": {"task0": <perception, heads, mixer>, ...}}

A task's network reads ``task_view(params, name)``: its own subtree with ``"decision"`` put in,
so every task's loss differentiates the one shared subtree and nothing of the other tasks.

* Task specs: ``"ENV_ID"`` or ``"ENV_ID:key=value:key=value"`` (``parse_task``), checked
  against the registry before anything is built (``MultiTaskFields``).
* Task weights: ``"uniform"`` (every weight 1) or ``"loss_rate"`` (``task_weights``).
* Optimiser partitions: decision layers and task parts get separate learning rates; frozen
  decision layers get ``optax.set_to_zero`` and a ``stop_gradient`` (``partitioned_optimiser``).
* Evaluation: ``evaluate_every_task`` (greedy episodes of every task, per task and mean).
* Transfer: ``save_decision_layers`` / ``load_decision_layers`` (orbax, atomic, via
  ``jaxmarl.training.host.checkpoint.save_params``), with the shapes checked against the learner's
  own decision layers before anything compiles.
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct

from jaxmarl.training.config import require
from jaxmarl.training.host.checkpoint import load_params, save_params
from jaxmarl.training.minibatch import Minibatches
from jaxmarl.training.sgd import sgd_epochs

WEIGHTINGS = ("uniform", "loss_rate")
DECISION_DIR = "decision_layers"


# --------------------------------------------------------------------------- task specs
@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """One task: an env id and its constructor keywords (``name`` is its params key)."""

    name: str
    env_id: str
    env_kwargs: tuple[tuple[str, Any], ...]

    @property
    def label(self) -> str:
        kwargs = ",".join(f"{k}={v}" for k, v in self.env_kwargs)
        return f"{self.env_id}({kwargs})" if kwargs else self.env_id


def parse_task(spec: str, name: str) -> TaskSpec:
    """``"MPE_simple_spread_v3:num_agents=4:num_landmarks=4"`` -> ``TaskSpec``.

    Values are Python literals where they parse as one (``3``, ``0.5``, ``True``), else strings
    (``scenario=3m``).

    Raises:
        ValueError: an empty spec, a keyword without ``=``, a repeated keyword, or an env id
            that is not registered (with close matches).
    """
    import jaxmarl

    env_id, *items = spec.split(":")
    require(bool(env_id), f"task {spec!r} has no env id; write ENV_ID[:key=value...]")
    try:
        jaxmarl.spec(env_id)
    except Exception as error:
        raise ValueError(f"task {spec!r}: {error}") from None
    kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        require(
            bool(sep) and bool(key),
            f"task {spec!r}: {item!r} is not key=value (write e.g. {env_id}:num_agents=4)",
        )
        require(key not in kwargs, f"task {spec!r} sets {key!r} twice")
        try:
            kwargs[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            kwargs[key] = text
    return TaskSpec(name=name, env_id=env_id, env_kwargs=tuple(kwargs.items()))


def make_task_env(task: TaskSpec):
    """``jaxmarl.make`` for a task; a bad keyword becomes a ``ValueError`` naming the task."""
    import jaxmarl

    try:
        return jaxmarl.make(task.env_id, **dict(task.env_kwargs))
    except TypeError as error:
        raise ValueError(f"task {task.label}: {error}") from None


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultiTaskFields:
    """Config fields every multi-task learner has (mixed into its config dataclass).

    Attributes:
        tasks: task specs ``"ENV_ID[:key=value...]"``; empty = the one task ``env`` describes
            (the single-task form, e.g. the target of a transfer). Every task runs
            ``env.num_envs`` envs; ``run.total_timesteps`` counts env steps *per task*.
        task_weighting: ``"uniform"`` or ``"loss_rate"`` (see ``task_weights``).
        weight_ema: EMA rate of the per-task failure signal behind ``"loss_rate"``.
        decision_lr_scale: the decision layers' learning rate is ``lr * decision_lr_scale``.
        freeze_decision: keep the decision layers fixed (only perception/heads/mixers learn);
            without ``init_decision_from`` they stay at their random initialisation (a control).
        init_decision_from: a run directory (its ``decision_layers/``) or a folder written by
            ``save_decision_layers``; empty = fresh decision layers.
        decision_sizes: hidden widths of the shared decision MLP.
    """

    tasks: tuple[str, ...] = ()
    task_weighting: str = "uniform"
    weight_ema: float = 0.1
    decision_lr_scale: float = 1.0
    freeze_decision: bool = False
    init_decision_from: str = ""
    decision_sizes: tuple[int, ...] = (32,)

    def check_multitask(self) -> None:
        require(
            self.task_weighting in WEIGHTINGS,
            f"task_weighting must be one of {WEIGHTINGS}, got {self.task_weighting!r}",
        )
        require(
            0.0 < self.weight_ema <= 1.0, f"weight_ema must be in (0, 1], got {self.weight_ema}"
        )
        require(self.decision_lr_scale >= 0, "decision_lr_scale must be >= 0")
        require(
            len(self.decision_sizes) > 0 and all(w > 0 for w in self.decision_sizes),
            "decision_sizes needs at least one width, all > 0",
        )
        trunk = self.network.trunk
        require(
            trunk.recurrent or len(trunk.sizes) > 0,
            "network.trunk.sizes=[] leaves the multi-task learners no shared trunk; give it at "
            "least one width (e.g. network.trunk.sizes=[64])",
        )
        specs = self.task_specs  # parses and checks every spec
        require(len(specs) > 0, "tasks needs at least one task")
        require(
            self.run.data_devices == 1,
            f"run.data_devices={self.run.data_devices}: the multi-task learners do not split a "
            "seed's envs over devices yet; use run.data_devices=1 (run.devices spreads seeds)",
        )

    @property
    def task_specs(self) -> tuple[TaskSpec, ...]:
        env = self.env  # the learner config's EnvConfig
        if not self.tasks:
            return (TaskSpec("task0", env.env_id, tuple(sorted(env.env_kwargs.items()))),)
        return tuple(parse_task(spec, f"task{i}") for i, spec in enumerate(self.tasks))


# --------------------------------------------------------------------------- params
def task_view(params: Mapping[str, Any], name: str, freeze: bool = False) -> dict[str, Any]:
    """Task ``name``'s parameters with the shared decision layers put in.

    ``freeze`` stops their gradient (frozen layers cost no backward pass and cannot move).
    """
    decision = jax.lax.stop_gradient(params["decision"]) if freeze else params["decision"]
    return {**params["tasks"][name], "decision": decision}


def split_params(task_params: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per-task initial params (each with its own ``"decision"``) -> the shared layout.

    The first task's decision layers are kept (all tasks have the same shapes).
    """
    names = list(task_params)
    tasks = {n: {k: v for k, v in task_params[n].items() if k != "decision"} for n in names}
    return {"decision": task_params[names[0]]["decision"], "tasks": tasks}


def partition_labels(params: Mapping[str, Any]) -> dict[str, Any]:
    """``"decision"`` for every shared leaf, ``"task"`` for every per-task leaf."""
    return {
        "decision": jax.tree.map(lambda _: "decision", params["decision"]),
        "tasks": jax.tree.map(lambda _: "task", params["tasks"]),
    }


def partitioned_optimiser(
    make_step: Callable[[Any], optax.GradientTransformation],
    lr: float | optax.Schedule,
    *,
    decision_lr_scale: float,
    freeze_decision: bool,
    max_grad_norm: float,
) -> optax.GradientTransformation:
    """Global-norm clipping, then ``make_step(lr)`` on task parts and ``make_step(lr * scale)``
    on the decision layers (``optax.set_to_zero`` when frozen), via ``optax.multi_transform``.
    """
    if callable(lr):
        decision_lr = lambda count: decision_lr_scale * lr(count)
    else:
        decision_lr = decision_lr_scale * lr
    decision = optax.set_to_zero() if freeze_decision else make_step(decision_lr)
    return optax.chain(
        optax.clip_by_global_norm(max_grad_norm),
        optax.multi_transform({"decision": decision, "task": make_step(lr)}, partition_labels),
    )


# --------------------------------------------------------------------------- weighting
def task_weights(weighting: str, failure: jax.Array) -> jax.Array:
    """Per-task loss weights ``[K]`` (mean 1, gradient stopped).

    ``"uniform"``: all 1. ``"loss_rate"``: ``w_k = K (f_k + eps) / sum_j (f_j + eps)`` with
    ``f_k`` the EMA of task k's failure signal (``update_failure``), ``eps = 0.05`` so a solved
    task keeps a small weight: tasks still being lost get more of the shared layers' gradient.
    """
    if weighting == "uniform":
        return jnp.ones_like(failure)
    raw = failure + 0.05
    return jax.lax.stop_gradient(failure.shape[0] * raw / jnp.sum(raw))


def update_failure(
    failure: jax.Array, signal: jax.Array, valid: jax.Array, rate: float
) -> jax.Array:
    """EMA ``f <- (1 - rate) f + rate * signal`` where ``valid`` (``[K]`` each).

    The signal is ``1 - win rate`` when every task reports ``won`` (SMAX), otherwise the task's
    TD loss divided by the mean over tasks (tasks whose loss is relatively high are "being
    lost"); ``valid`` is false for a task with no finished episode in the rollout.
    """
    return jnp.where(valid, (1.0 - rate) * failure + rate * signal, failure)


# --------------------------------------------------------------------------- evaluation
def evaluate_every_task(
    evaluators: Mapping[str, Callable[[Any, jax.Array, int], dict[str, jax.Array]]],
    params: Any,
    key: jax.Array,
    num_envs: int,
) -> dict[str, jax.Array]:
    """Greedy evaluation of every task of a multi-task learner (pure; jit/vmap as usual).

    Args:
        evaluators: per task (in task order), ``(params, key, num_envs) -> metrics``: greedy
            episodes of that task's policy in ``num_envs`` fresh envs of that task.
        params: the learner's whole ``{"decision": ..., "tasks": ...}``.
        key: task 0 evaluates with ``key`` itself (so a one-task learner evaluates exactly as
            the single-task evaluation does), task ``i > 0`` with ``fold_in(key, i)``.
        num_envs: envs per task (static).

    Returns:
        ``"<task>/<metric>"`` for every task's metric, plus each metric over tasks under its own
        name: the mean over the tasks that report it (e.g. ``won`` over the SMAX tasks of a
        mixed set), except ``episodes``, which is the total. All ``[]`` float32.
    """
    results = {}
    for index, (name, evaluate_task) in enumerate(evaluators.items()):
        task_key = key if index == 0 else jax.random.fold_in(key, index)
        results[name] = evaluate_task(params, task_key, num_envs)
    metrics = {f"{name}/{k}": v for name, result in results.items() for k, v in result.items()}
    for metric in dict.fromkeys(k for result in results.values() for k in result):
        values = jnp.stack([r[metric] for r in results.values() if metric in r])
        metrics[metric] = jnp.sum(values) if metric == "episodes" else jnp.mean(values)
    return metrics


# --------------------------------------------------------------------------- transfer
def save_decision_layers(
    path: str | os.PathLike, decision: Any, *, overwrite: bool = False
) -> Path:
    """Saves the decision layers alone (orbax, atomic); see ``checkpoint.save_params``."""
    return save_params(path, decision, overwrite=overwrite)


def decision_path(path: str | os.PathLike) -> Path:
    """A run directory's ``decision_layers/`` folder, or ``path`` itself."""
    path = Path(path).expanduser()
    return path / DECISION_DIR if (path / DECISION_DIR).is_dir() else path


def load_decision_layers(path: str | os.PathLike, like: Any | None = None) -> Any:
    """Loads decision layers written by ``save_decision_layers`` (or a run's ``decision_layers``).

    Args:
        path: the folder, or a run directory holding ``decision_layers/``.
        like: the learner's own decision layers (arrays or ``jax.ShapeDtypeStruct``); when
            given, the saved layers must have the same structure and shapes.

    Raises:
        ValueError: shapes or structure differ; the message names the layers and the fix.
        jaxmarl.training.host.checkpoint.CheckpointNotFoundError: nothing saved at ``path``.
    """
    saved = load_params(decision_path(path))
    if like is None:
        return saved
    want = _shapes(like)
    have = _shapes(saved)
    if want != have:
        problems = [
            f"{key}: saved {have.get(key, 'absent')}, this learner {want.get(key, 'absent')}"
            for key in sorted(set(want) | set(have))
            if want.get(key) != have.get(key)
        ]
        raise ValueError(
            f"the decision layers in {decision_path(path)} do not fit this learner: "
            + "; ".join(problems)
            + ". The first decision layer reads the perception's output, so the new task's "
            "perception width (network.trunk.size for a GRU perception, else the last of "
            "network.trunk.sizes) and decision_sizes must be those of the run that saved them"
        )
    return jax.tree.map(lambda x, ref: jnp.asarray(x, ref.dtype), saved, like)


def _shapes(tree: Any) -> dict[str, tuple[int, ...]]:
    flat = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {jax.tree_util.keystr(path): tuple(np.shape(leaf)) for path, leaf in flat}


# --------------------------------------------------------------------------- the update
@dataclasses.dataclass(frozen=True)
class TaskFns:
    """What a learner supplies per task (each a pure function of that task's params view).

    Attributes:
        collect: ``(view, runner, update) -> (runner, data, metrics)``: roll out and prepare
            the loss's data (``update`` is the ``[]`` int32 update index, e.g. for epsilon).
        loss: ``(view, minibatch) -> (loss, metrics)``.
        minibatches: ``(key, data) -> minibatches`` with a leading ``[M]`` axis, or
            ``Minibatches``; every task must give the same ``M``.
    """

    collect: Callable[[Any, Any, jax.Array], tuple[Any, Any, dict]]
    loss: Callable[[Any, Any], tuple[jax.Array, dict]]
    minibatches: Callable[[jax.Array, Any], Any]


@struct.dataclass
class MultiTaskState:
    """Everything a multi-task run carries between updates (checkpointed whole).

    Attributes:
        params: ``{"decision": ..., "tasks": {name: ...}}``.
        opt_state: optax state of the partitioned optimiser.
        runners: ``{name: Runner}``, each task's env batch.
        failure: ``[K]`` float32 EMA of each task's failure signal (``update_failure``).
        key: key for minibatch shuffling.
        update: ``[]`` int32, updates done.
    """

    params: Any
    opt_state: Any
    runners: dict[str, Any]
    failure: jax.Array
    key: jax.Array
    update: jax.Array


def make_multitask_update(
    tasks: Mapping[str, TaskFns],
    optimiser: optax.GradientTransformation,
    *,
    num_epochs: int,
    weighting: str,
    weight_ema: float,
    freeze_decision: bool,
) -> Callable[[MultiTaskState], tuple[MultiTaskState, dict[str, jax.Array]]]:
    """One update over every task: K rollouts, then ``num_epochs`` passes of gradient steps on
    ``sum_k w_k loss_k`` (one gradient over the shared and all per-task parameters).

    ``tasks`` is static (a Python loop at trace time), so K rollouts and losses are one program.
    Metrics: ``"<task>/<name>"`` per task, plus ``loss`` (task mean), ``episode_return`` (mean
    over the tasks that ended an episode in the update) and ``episodes`` (all tasks' count).
    """
    names = list(tasks)

    def loss_fn(params, minibatch, weights):
        total = jnp.float32(0.0)
        metrics = {}
        for i, name in enumerate(names):
            view = task_view(params, name, freeze_decision)
            loss, task_metrics = tasks[name].loss(view, minibatch[name])
            total = total + weights[i] * loss
            metrics.update({f"{name}/{k}": v for k, v in task_metrics.items()})
        return total, {**metrics, "loss": total / len(names)}

    def update(state: MultiTaskState) -> tuple[MultiTaskState, dict[str, jax.Array]]:
        runners, data, metrics = {}, {}, {}
        for name in names:
            view = task_view(state.params, name)
            runners[name], data[name], task_metrics = tasks[name].collect(
                view, state.runners[name], state.update
            )
            metrics.update({f"{name}/{k}": v for k, v in task_metrics.items()})
        weights = task_weights(weighting, state.failure)

        def minibatches(key):
            keys = jax.random.split(key, len(names))
            return Minibatches.merge(
                {n: tasks[n].minibatches(k, data[n]) for n, k in zip(names, keys)}
            )

        params, opt_state, key, train_metrics = sgd_epochs(
            lambda p, mb: loss_fn(p, mb, weights),
            optimiser,
            state.params,
            state.opt_state,
            state.key,
            minibatches,
            num_epochs,
        )
        won = [metrics.get(f"{n}/won") for n in names]
        if all(w is not None for w in won):
            signal = 1.0 - jnp.stack(won)
            valid = jnp.stack([metrics[f"{n}/episodes"] > 0 for n in names])
        else:
            losses = jnp.stack([train_metrics[f"{n}/loss"] for n in names])
            signal = losses / jnp.maximum(jnp.mean(losses), jnp.finfo(jnp.float32).tiny)
            valid = jnp.ones((len(names),), dtype=bool)
        failure = update_failure(state.failure, signal, valid, weight_ema)
        new_state = MultiTaskState(
            params=params,
            opt_state=opt_state,
            runners=runners,
            failure=failure,
            key=key,
            update=state.update + 1,
        )
        returns = jnp.stack([metrics[f"{n}/episode_return"] for n in names])
        counts = jnp.stack([metrics[f"{n}/episodes"] for n in names])
        metrics.update(train_metrics)
        metrics.update({f"{n}/weight": weights[i] for i, n in enumerate(names)})
        # Mean over the tasks that ended an episode in this update: a task that ended none
        # logs a placeholder return of 0 (see episode_metrics).
        ended = counts > 0
        ended_returns = jnp.sum(jnp.where(ended, returns, 0.0))
        metrics["episode_return"] = ended_returns / jnp.maximum(jnp.sum(ended), 1)
        metrics["episodes"] = jnp.sum(counts)
        return new_state, metrics

    return update
