"""Checkpoints of the whole training state (orbax ``CheckpointManager``), and of one subtree.

Host-side only: call between jitted chunks, never inside one. A run's checkpoint folder::

    RUN_DIR/checkpoints/
      40/state/                  the training-state pytree; orbax's files beside it hold the
                                 ``metadata`` given to ``save`` and, when ranked, its metric
      60.orbax-checkpoint-tmp-…  a write in progress or killed mid-way: never listed
      20.unreadable-…            a step ``restore_latest`` could not read, set aside

Orbax lists the steps, commits each one by renaming its temporary folder once complete, saves
asynchronously (``save`` returns once the arrays are in host memory; a thread writes them) and
deletes old steps by the retention settings. This module adds what orbax leaves to the caller:
checking a checkpoint against the restore target (tree, shapes, dtypes, PRNG implementation;
orbax would cast dtypes and restore keys with the saved implementation) with every difference
listed; naming the step and the problem when a step cannot be read, and falling back to the
newest readable step on resume; and leaving out zero-size leaves, which orbax refuses to write.
Orbax detects damaged metadata and truncated or missing array files when it reads them, but keeps
no checksum of the array data: a flipped byte inside compressed data can restore different
values without an error. So each step also stores two 32-bit sums per leaf (``_checksums``,
computed on device in one small program) and ``restore`` compares them; any single changed
element changes the plain sum.

Example::

    with Checkpointer(run_dir / "checkpoints", max_to_keep=3) as ckpt:
        ckpt.save(step, train_state, metadata={"env_steps": env_steps})
    step, train_state = Checkpointer(run_dir / "checkpoints").restore_latest(target=train_state)
"""

from __future__ import annotations

import json
import logging
import math
import operator
import os
import shutil
import sys
import time
import traceback
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxmarl.training.host.interrupts import ctrl_c_held

PyTree = Any

BEST_MODES = ("max", "min")
_STATE_ITEM = "state"
_CHECKSUMS = "_jaxmarl_checksums"  # reserved key of the custom metadata
_MAX_LISTED = 5  # mismatching paths listed in an error message


class CheckpointNotFoundError(FileNotFoundError):
    """There is no checkpoint where one was asked for."""


class CheckpointCorruptError(RuntimeError):
    """A checkpoint exists but cannot be read: truncated, damaged or incomplete."""


class CheckpointMismatchError(ValueError):
    """A checkpoint's tree structure, shapes or dtypes differ from the restore target."""


def check_retention(
    max_to_keep: int | None, keep_period: int, best_mode: str, *, section: str = ""
) -> None:
    """``ValueError`` naming the fix for an invalid retention setting (also ``RunConfig``'s)."""
    if max_to_keep is not None and max_to_keep < 0:
        raise ValueError(f"{section}max_to_keep must be >= 0 (0 keeps every checkpoint)")
    if keep_period < 0:
        raise ValueError(f"{section}keep_period must be >= 0 (0: no checkpoints kept by period)")
    if best_mode not in BEST_MODES:
        raise ValueError(f"{section}keep_best_mode must be one of {BEST_MODES}, got {best_mode!r}")


# --------------------------------------------------------------------------- the manager
class Checkpointer:
    """Saves and restores whole training states, one orbax ``CheckpointManager`` step per save.

    Saves are asynchronous; reads and ``close`` wait for pending writes first. Close the
    checkpointer (or use it as a context manager) before the process exits, or the last write
    may be lost. Nothing is created on disk until the first ``save``.

    Args:
        directory: the checkpoint folder, usually ``RUN_DIR/checkpoints``.
        max_to_keep: steps kept, the newest (or with ``best_metric`` the best) ones; ``0`` or
            ``None`` keeps every step.
        keep_period: also keep every step that is a multiple of this (``0``: none).
        best_metric: rank steps by this entry of the ``metrics`` given to ``save`` instead of by
            recency; steps saved without it are not ranked and go once newer steps exist. The
            newest step is kept as well, to resume from.
        best_mode: ``"max"`` (larger is better) or ``"min"``.
        read_only: only read (``python -m jaxmarl.evaluate``): nothing is created, saved or
            deleted, and the temporary folders of a run still writing are left alone.
    """

    def __init__(
        self,
        directory: str | os.PathLike,
        *,
        max_to_keep: int | None = 3,
        keep_period: int = 0,
        best_metric: str = "",
        best_mode: str = "max",
        read_only: bool = False,
    ) -> None:
        check_retention(max_to_keep, keep_period, best_mode)
        import orbax.checkpoint as ocp

        policies = ocp.checkpoint_managers
        # Orbax requires absolute paths.
        self.directory = Path(directory).expanduser().absolute()
        self.best_metric = best_metric
        keep = max_to_keep or None
        if best_metric:
            retention = [
                policies.BestN(
                    get_metric_fn=operator.itemgetter(best_metric),
                    reverse=best_mode == "min",
                    n=keep,
                    keep_checkpoints_without_metrics=False,
                ),
                policies.LatestN(n=1),
            ]
        else:
            retention = [policies.LatestN(n=keep)]
        if keep_period:
            retention.append(policies.EveryNSteps(interval_steps=keep_period))
        options = ocp.CheckpointManagerOptions(
            create=False,  # the first save creates the folder
            # Leftover temporary folders are interrupted writes, unless another process (the
            # training run a reader looks at) is writing them now.
            cleanup_tmp_directories=not read_only,
            read_only=read_only,
            save_interval_steps=0 if read_only else 1,  # orbax warns unless read-only says 0
            enable_async_checkpointing=True,
            preservation_policy=policies.AnyPreservationPolicy(retention),
            # Set so that orbax writes and reads the metrics that BestN ranks.
            best_fn=operator.itemgetter(best_metric) if best_metric else None,
            best_mode=best_mode,
        )
        absl_log = logging.getLogger("absl")
        level = absl_log.level
        if read_only:  # orbax logs a warning that read-only is on: it is what was asked
            absl_log.setLevel(logging.ERROR)
        try:
            self._manager = ocp.CheckpointManager(
                self.directory,
                item_handlers={_STATE_ITEM: ocp.StandardCheckpointHandler()},
                options=options,
            )
        finally:
            absl_log.setLevel(level)

    # ------------------------------------------------------------------ writing
    def save(
        self,
        step: int,
        state: PyTree,
        metadata: Mapping[str, Any] | None = None,
        metrics: Mapping[str, float] | None = None,
    ) -> None:
        """Starts writing ``state`` as checkpoint ``step``; returns before the files are written.

        ``state`` may be changed or donated once this returns (orbax holds a host copy). A
        background write that fails raises at the next ``save``, read or ``close``.

        Args:
            step: larger than every step already saved (e.g. chunks done).
            state: any pytree of arrays (flax struct dataclasses, optax states, typed PRNG keys).
            metadata: JSON-serialisable dict (numpy and JAX scalars are converted), read back
                with ``metadata(step)``.
            metrics: numbers describing the step; only a finite ``best_metric`` is kept.

        Raises:
            ValueError: ``step`` is not after the latest saved step (orbax would skip it).
            TypeError: ``step`` is not an integer, or ``metadata`` is not JSON-serialisable.
        """
        import orbax.checkpoint as ocp

        step = _as_step(step)
        latest = self._manager.latest_step()
        if latest is not None and step <= latest:
            raise ValueError(
                f"checkpoint step {step} is not after the latest step {latest} in "
                f"{self.directory}; save each step once, with a step counter that keeps "
                f"increasing after a resume"
            )
        value = (metrics or {}).get(self.best_metric) if self.best_metric else None
        ranked = value is not None and math.isfinite(float(value))
        with ctrl_c_held():
            saved = self._manager.save(
                step,
                args=ocp.args.Composite(
                    **{_STATE_ITEM: ocp.args.StandardSave(_without_empty(state))}
                ),
                metrics={self.best_metric: float(value)} if ranked else None,
                custom_metadata={
                    **_to_json_dict(metadata or {}, what="checkpoint metadata"),
                    _CHECKSUMS: _checksums(_without_empty(state)),
                },
            )
        if not saved:
            raise RuntimeError(
                f"orbax declined to save step {step} in {self.directory}; this is a bug in "
                f"jaxmarl.training.host.checkpoint, please report it"
            )

    def wait(self) -> None:
        """Blocks until pending writes are on disk; raises what a background write raised."""
        with ctrl_c_held():
            self._manager.wait_until_finished()

    def close(self) -> None:
        """Waits for pending writes and releases orbax's threads."""
        with ctrl_c_held():
            self._manager.close()

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading
    def all_steps(self) -> list[int]:
        """Saved steps, oldest first (``[]`` when the folder does not exist)."""
        self.wait()
        return list(self._manager.all_steps())

    def latest_step(self) -> int | None:
        """The newest saved step, or ``None`` if there is none."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def best_step(self) -> int | None:
        """The best saved step by ``best_metric`` (``None``: no ranked step, or no metric)."""
        if not self.best_metric:
            return None
        self.wait()
        return self._manager.best_step()

    def restore(self, step: int | None = None, target: PyTree | None = None) -> PyTree:
        """Reads checkpoint ``step`` (default: the latest) bit-for-bit, typed PRNG keys included.

        Args:
            step: the step to read, or ``None`` for the latest.
            target: arrays or ``jax.ShapeDtypeStruct`` with the expected structure, shapes and
                dtypes (e.g. ``jax.eval_shape(init, key)``); the result takes its pytree types
                and shardings. Without one, orbax returns nested dicts and lists of arrays.

        Raises:
            CheckpointNotFoundError: no checkpoint in the folder, or not for ``step``.
            CheckpointCorruptError: a file of the step is missing, truncated or damaged.
            CheckpointMismatchError: the checkpoint does not fit ``target``.
        """
        steps = self.all_steps()
        if not steps:
            raise self._not_found()
        step = steps[-1] if step is None else _as_step(step)
        if step not in steps:
            raise CheckpointNotFoundError(
                f"no checkpoint for step {step} in {self.directory}; saved steps: {steps}"
            )
        earlier = [s for s in steps if s < step]
        hint = (
            f"earlier steps: {earlier} (resuming falls back to step {earlier[-1]}; pick one "
            f"with --resume RUN_DIR --step N, or restore(step=N))"
            if earlier
            else "no earlier step exists; start a new run without --resume"
        )
        where = f"checkpoint step {step} in {self.directory}"
        state_dir = self.directory / str(step) / _STATE_ITEM
        restored = _restore_tree(state_dir, target, where, hint)
        saved = (self._manager.metadata(step).custom_metadata or {}).get(_CHECKSUMS)
        if saved is not None:  # steps written before checksums were stored have none
            damaged = [
                name
                for name, sums in _checksums(_without_empty(restored)).items()
                if saved.get(name) != sums
            ]
            if damaged:
                raise CheckpointCorruptError(
                    f"{where} cannot be read: the data of {', '.join(damaged[:_MAX_LISTED])} in "
                    f"{state_dir} differs from what was saved (checksum mismatch); {hint}"
                )
        return restored

    def restore_latest(self, target: PyTree | None = None) -> tuple[int, PyTree]:
        """``(step, state)`` of the newest step that can be read: what a resumed run starts from.

        Newer steps that cannot be read are renamed to ``<step>.unreadable-<time>`` (kept for
        inspection; no longer listed, so the resumed run can save those steps again), each
        with a ``RuntimeWarning`` saying what was wrong.

        Raises:
            CheckpointNotFoundError: there is no checkpoint.
            CheckpointCorruptError: no step can be read (each one's problem is listed).
            CheckpointMismatchError: as for ``restore`` (not retried: a changed config).
        """
        unreadable: list[tuple[int, CheckpointCorruptError]] = []
        for step in reversed(self.all_steps()):
            try:
                state = self.restore(step, target)
            except CheckpointCorruptError as error:
                unreadable.append((step, error))
                continue
            names = self._set_aside([bad for bad, _ in unreadable], "unreadable")
            for (_, error), name in zip(unreadable, names):
                warnings.warn(
                    f"{error}. Renamed it to {name}; resuming from step {step}.",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return step, state
        if not unreadable:
            raise self._not_found()
        listed = " | ".join(str(error) for _, error in unreadable)
        raise CheckpointCorruptError(f"no checkpoint in {self.directory} can be read: {listed}")

    def set_aside_after(self, step: int) -> list[str]:
        """Renames the steps newer than ``step`` to ``<step>.unused-<time>`` (kept, no longer
        listed), so that a run resumed from ``step`` can save those steps again; returns the
        new names."""
        step = _as_step(step)
        return self._set_aside([s for s in self.all_steps() if s > step], "unused")

    def _set_aside(self, steps: list[int], label: str) -> list[str]:
        """Renames each step folder to ``<step>.<label>-<time>`` (orbax no longer lists it, so
        the step can be saved again); returns the new names."""
        renamed = []
        for step in steps:
            aside = self.directory / f"{step}.{label}-{time.time_ns()}"
            (self.directory / str(step)).rename(aside)
            renamed.append(aside.name)
        self._manager.reload()
        return renamed

    def metadata(self, step: int | None = None) -> dict[str, Any]:
        """The ``metadata`` dict saved with ``step`` (default: the latest step)."""
        step = self.latest_step() if step is None else _as_step(step)
        if step is None:
            raise self._not_found()
        self.wait()
        saved = dict(self._manager.metadata(step).custom_metadata or {})
        saved.pop(_CHECKSUMS, None)
        return saved

    def _not_found(self) -> CheckpointNotFoundError:
        missing = "" if self.directory.is_dir() else " (the folder does not exist)"
        return CheckpointNotFoundError(
            f"no checkpoint in {self.directory}{missing}; start without --resume"
        )


# --------------------------------------------------------------------------- one subtree
def save_params(path: str | os.PathLike, params: PyTree, *, overwrite: bool = False) -> Path:
    """Saves one parameter subtree on its own (e.g. a shared decision trunk) to ``path``.

    Orbax writes under a temporary name and renames when complete. With ``overwrite`` the new
    tree is written beside the old one first, so an interrupted save leaves the old one.

    Returns:
        ``path``, absolute.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
    """
    import orbax.checkpoint as ocp

    path = Path(path).expanduser().absolute()
    if path.exists() and not overwrite:
        raise FileExistsError(
            f"{path} already exists; choose a new path or pass overwrite=True to replace it"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    written = path.with_name(f".{path.name}.new") if path.exists() else path
    with ctrl_c_held(), ocp.Checkpointer(ocp.StandardCheckpointHandler()) as checkpointer:
        # force: replace what an interrupted overwrite left at ``written``.
        checkpointer.save(written, args=ocp.args.StandardSave(_without_empty(params)), force=True)
    if written != path:
        retired = path.rename(path.with_name(f".{path.name}.old"))
        written.rename(path)
        shutil.rmtree(retired)
    return path


def load_params(path: str | os.PathLike, target: PyTree | None = None) -> PyTree:
    """Loads a subtree written by ``save_params``, bit-for-bit; ``target`` as for ``restore``.

    Raises:
        CheckpointNotFoundError: ``path`` does not exist.
        CheckpointCorruptError: a file is missing or damaged.
        CheckpointMismatchError: the saved tree does not fit ``target``.
    """
    path = Path(path).expanduser().absolute()
    if not path.is_dir():
        raise CheckpointNotFoundError(
            f"{path} does not exist; give the folder written by save_params (check the path)"
        )
    hint = "save them again from the run that produced them"
    return _restore_tree(path, target, f"saved parameters {path}", hint, config_hint=False)


# --------------------------------------------------------------------------- internals
def _as_step(step: Any) -> int:
    try:
        value = operator.index(step)
    except TypeError:
        raise TypeError(
            f"checkpoint step must be an integer, got {step!r} ({type(step).__name__})"
        ) from None
    if value < 0:
        raise ValueError(f"checkpoint step must be >= 0, got {value}")
    return value


def _to_json_dict(mapping: Mapping[str, Any], *, what: str) -> dict[str, Any]:
    def default(value: Any) -> Any:
        if isinstance(value, np.generic | np.ndarray | jax.Array):
            return np.asarray(value).tolist()
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        raise TypeError(
            f"{what} must be JSON-serialisable; got a {type(value).__name__} ({value!r:.80}); "
            f"convert it to a str, number, list or dict"
        )

    return json.loads(json.dumps(dict(mapping), default=default))


def _is_empty(leaf: Any) -> bool:
    return hasattr(leaf, "shape") and math.prod(leaf.shape) == 0


def _without_empty(tree: PyTree) -> PyTree:
    """Zero-size arrays (e.g. a feed-forward net's empty recurrent state), which orbax refuses
    to write, as ``None``; ``_with_empty`` rebuilds them from the target."""
    return jax.tree.map(lambda leaf: None if _is_empty(leaf) else leaf, tree)


def _with_empty(restored: PyTree, target: PyTree) -> PyTree:
    target_leaves, treedef = jax.tree.flatten(target)
    restored_leaves = iter(jax.tree.leaves(restored))
    leaves = [
        jax.numpy.zeros(leaf.shape, leaf.dtype) if _is_empty(leaf) else next(restored_leaves)
        for leaf in target_leaves
    ]
    return jax.tree.unflatten(treedef, leaves)


def _leaf_sums(leaf: jax.Array) -> jax.Array:
    """``[2]`` uint32: the wrapping sum of a leaf's elements as unsigned integers, and the sum
    weighted by odd position factors (so that swapped elements count too)."""
    import jax.numpy as jnp

    if jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        leaf = jax.random.key_data(leaf)
    if leaf.dtype == jnp.bool_:
        leaf = leaf.astype(jnp.uint8)
    unsigned = {1: jnp.uint8, 2: jnp.uint16, 4: jnp.uint32, 8: jnp.uint32}[leaf.dtype.itemsize]
    bits = jax.lax.bitcast_convert_type(leaf, unsigned).ravel().astype(jnp.uint32)
    odd = jnp.arange(bits.size, dtype=jnp.uint32) * 2 + 1
    return jnp.stack([jnp.sum(bits, dtype=jnp.uint32), jnp.sum(bits * odd, dtype=jnp.uint32)])


_all_sums = None


def _checksums(tree: PyTree) -> dict[str, list[int]]:
    """``{leaf name: [sum, weighted sum]}`` of every leaf (computed where the leaves live)."""
    global _all_sums
    if _all_sums is None:
        _all_sums = jax.jit(lambda leaves: [_leaf_sums(leaf) for leaf in leaves])
    flat = jax.tree_util.tree_flatten_with_path(tree)[0]
    if not flat:
        return {}
    sums = jax.device_get(_all_sums([leaf for _, leaf in flat]))
    return {_name(path): [int(v) for v in value] for (path, _), value in zip(flat, sums)}


def _root_cause(error: BaseException) -> str:
    """The innermost error's first line: TensorStore names the array and the problem there."""
    while (error.__cause__ or error.__context__) is not None:
        error = error.__cause__ or error.__context__
    lines = str(error).splitlines() or [""]
    return f"{type(error).__name__}: {lines[0][:400]}"


def _is_closed_loop_callback(unraisable: Any) -> bool:
    """Whether an unraisable error is a late asyncio callback into an event loop already closed.

    When orbax's read of a damaged checkpoint fails, it closes its event loop while TensorStore
    still has reads in flight; each one finishing later calls ``call_soon_threadsafe`` on the
    closed loop, and Python prints the ``RuntimeError`` with a full traceback (dozens of them,
    hiding the error that matters). They carry no information: the read already failed."""
    error = unraisable.exc_value
    if not isinstance(error, RuntimeError) or str(error) != "Event loop is closed":
        return False
    frames = traceback.extract_tb(unraisable.exc_traceback)
    return bool(frames) and frames[-1].name == "_check_closed"


def _quiet_closed_loop_callbacks() -> None:
    """Installs (once) a ``sys.unraisablehook`` that drops ``_is_closed_loop_callback`` errors
    and passes every other one to the hook that was there before."""
    previous = sys.unraisablehook
    if getattr(previous, "_jaxmarl_quiet", False):
        return

    def hook(unraisable: Any) -> None:
        if not _is_closed_loop_callback(unraisable):
            previous(unraisable)

    hook._jaxmarl_quiet = True  # type: ignore[attr-defined]
    sys.unraisablehook = hook


def _restore_tree(
    directory: Path, target: PyTree | None, where: str, hint: str, *, config_hint: bool = True
) -> PyTree:
    _quiet_closed_loop_callbacks()
    if target is not None and any(_is_empty(leaf) for leaf in jax.tree.leaves(target)):
        stripped = _restore_tree(
            directory, _without_empty(target), where, hint, config_hint=config_hint
        )
        return _with_empty(stripped, target)
    import orbax.checkpoint as ocp
    from etils import epath

    try:
        saved_tree = ocp.StandardCheckpointHandler().metadata(epath.Path(directory)).tree
    except Exception as error:  # orbax raises many types; all mean "cannot read this folder"
        raise CheckpointCorruptError(
            f"{where} cannot be read: its tree metadata {directory / '_METADATA'} is "
            f"unreadable ({_root_cause(error)}); {hint}"
        ) from error
    if target is not None:
        _check_matches(saved_tree, target, where, config_hint)
    abstract = None if target is None else jax.tree.map(_abstract, target)
    try:
        with ocp.Checkpointer(ocp.StandardCheckpointHandler()) as checkpointer:
            restored = checkpointer.restore(directory, args=ocp.args.StandardRestore(abstract))
    except Exception as error:  # TensorStore's errors name the array and what is wrong
        raise CheckpointCorruptError(
            f"{where} cannot be read: its arrays in {directory} are damaged "
            f"({_root_cause(error)}); {hint}"
        ) from error
    if target is not None:
        # Orbax restores typed keys with the *saved* implementation whatever the target says.
        problems = [
            f"{_name(path)}: saved {got.dtype}, expected {want.dtype}"
            for (path, got), want in zip(
                jax.tree_util.tree_flatten_with_path(restored)[0], jax.tree.leaves(abstract)
            )
            if got.dtype != want.dtype
        ]
        _raise_mismatch(problems, where, config_hint)
    return restored


def _abstract(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct | jax.Array):
        return leaf  # orbax takes shape, dtype and sharding from either
    array = np.asarray(leaf)
    return jax.ShapeDtypeStruct(array.shape, array.dtype)


def _name(path: tuple[Any, ...]) -> str:
    return jax.tree_util.keystr(path, simple=True, separator="/")


def _describe(shape: tuple[int, ...], dtype: Any) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _check_matches(saved_tree: PyTree, target: PyTree, where: str, config_hint: bool) -> None:
    flat = jax.tree_util.tree_flatten_with_path
    saved = {_name(path): leaf for path, leaf in flat(saved_tree)[0]}
    expected = {_name(path): _abstract(leaf) for path, leaf in flat(target)[0]}
    problems = []
    for name, leaf in expected.items():
        description = _describe(leaf.shape, leaf.dtype)
        stored = leaf
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):  # stored as its key data
            stored = jax.eval_shape(
                jax.random.key_data, jax.ShapeDtypeStruct(leaf.shape, leaf.dtype)
            )
            description += f" = key data {_describe(stored.shape, stored.dtype)}"
        if name not in saved:
            problems.append(f"{name}: not in the checkpoint (expected {description})")
            continue
        shape = tuple(getattr(saved[name], "shape", ()) or ())
        dtype = getattr(saved[name], "dtype", None)
        if shape != tuple(stored.shape) or (dtype is not None and np.dtype(dtype) != stored.dtype):
            problems.append(f"{name}: saved {_describe(shape, dtype)}, expected {description}")
    problems += [
        f"{name}: in the checkpoint but not in the target"
        for name in saved.keys() - expected.keys()
    ]
    _raise_mismatch(problems, where, config_hint)


def _raise_mismatch(problems: list[str], where: str, config_hint: bool) -> None:
    if not problems:
        return
    listed = "\n  ".join(problems[:_MAX_LISTED])
    more = f"\n  ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
    fix = (
        "The configuration probably changed since the checkpoint was written (network sizes, "
        "num_envs, the environment or its agent count, the optimiser, the PRNG implementation): "
        "resume with the run's saved config.yaml, or start a new run without --resume."
        if config_hint
        else "The network these parameters came from differs from the target; build the target "
        "with the same network configuration."
    )
    raise CheckpointMismatchError(
        f"{where} does not match the target ({len(problems)} difference"
        f"{'s' if len(problems) != 1 else ''}):\n  {listed}{more}\n{fix}"
    )
