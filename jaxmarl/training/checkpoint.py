"""Checkpoints of the whole training state, and of one parameter subtree on its own.

Host-side only: call between jitted chunks, never inside one.

Layout of a run's checkpoint directory (one orbax ``CheckpointManager`` step per folder)::

    RUN_DIR/checkpoints/
      40/                          a complete step (only complete steps have this name)
        state/                     the training-state pytree (orbax StandardCheckpointHandler)
        metadata/metadata          the JSON ``metadata`` dict given to ``save``
        commit_success.txt         written by orbax just before the final rename
        _CHECKPOINT_METADATA
        jaxmarl_manifest.json      size and sha256 of every file above (integrity check)
      60.orbax-checkpoint-tmp-…    a write in progress, or one killed mid-way (never read)

Atomicity. Orbax writes each step into ``<step>.orbax-checkpoint-tmp-<time>``, writes
``commit_success.txt`` inside it, then renames the folder to ``<step>`` (one POSIX ``rename``,
``orbax.checkpoint._src.path.atomicity.AtomicRenameTemporaryPath``, the default for local
disks). A crash mid-write therefore leaves a ``*.orbax-checkpoint-tmp-*`` folder, which orbax
never lists as a step and which this module deletes on the next save. This module adds two
guards for what the rename cannot cover:

* a step folder without ``commit_success.txt`` (copied half-way, or written by hand or by a file
  system without atomic rename) is *incomplete*: ``latest_step``/``all_steps`` skip it and the next
  ``save`` renames it to ``<step>.incomplete-<time>`` (orbax alone would count it as the newest
  step and could delete the last good one to respect ``max_to_keep``);
* ``jaxmarl_manifest.json`` records every file's size and sha256 right after the write; ``restore``
  checks it first, so a truncated or damaged file is reported by name before anything is read.
  A step without a manifest (a crash between orbax's rename and the manifest write) still
  restores: orbax's own commit marker says it is complete.

PRNG keys. Orbax (0.12) saves new-style typed keys (``jax.random.key``) natively: it stores the
``uint32`` key data and the implementation name (``random_key_impl`` in the array metadata) and
rebuilds the typed key on restore, so no conversion is needed. Orbax restores the *saved*
implementation even when the target asks for another one, so ``restore`` checks the restored
dtypes against the target and reports a changed implementation as a mismatch.

Example::

    ckpt = Checkpointer(run_dir / "checkpoints", max_to_keep=3)
    ckpt.save(step, train_state, metadata={"env_steps": env_steps})
    train_state = ckpt.restore(target=train_state)  # the latest step, checked against the target
"""

from __future__ import annotations

import hashlib
import json
import operator
import os
import shutil
import time
import uuid
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jax
import numpy as np

PyTree = Any

MANIFEST_FILE = "jaxmarl_manifest.json"
_COMMIT_FILE = "commit_success.txt"
_ORBAX_TMP_MARKER = ".orbax-checkpoint-tmp"
_STATE_ITEM = "state"
_METADATA_ITEM = "metadata"
_MAX_LISTED = 5  # mismatching paths listed in an error message


class CheckpointNotFoundError(FileNotFoundError):
    """There is no (complete) checkpoint where one was asked for."""


class CheckpointCorruptError(RuntimeError):
    """A checkpoint exists but cannot be read: incomplete, truncated or damaged."""


class CheckpointMismatchError(ValueError):
    """A checkpoint's tree structure, shapes or dtypes differ from the restore target."""


# --------------------------------------------------------------------------- the manager
class Checkpointer:
    """Saves and restores whole training states, one folder per step (orbax ``CheckpointManager``).

    Nothing is created on disk until the first ``save``, so opening a checkpointer to look for a
    checkpoint to resume from has no side effects.

    Args:
        directory: the checkpoint folder, usually ``RUN_DIR/checkpoints``.
        max_to_keep: number of most recent steps kept (older ones are deleted after each save);
            ``None`` keeps every step.

    Raises:
        ValueError: ``max_to_keep`` is not a positive integer or ``None``.
    """

    def __init__(self, directory: str | os.PathLike, max_to_keep: int | None = 3) -> None:
        if max_to_keep is not None and (not isinstance(max_to_keep, int) or max_to_keep < 1):
            raise ValueError(
                f"max_to_keep={max_to_keep!r} must be a positive integer, or None to keep every "
                f"checkpoint"
            )
        # Orbax requires absolute paths.
        self.directory = Path(directory).expanduser().absolute()
        self.max_to_keep = max_to_keep
        self._manager = None

    # ------------------------------------------------------------------ writing
    def save(self, step: int, state: PyTree, metadata: Mapping[str, Any] | None = None) -> Path:
        """Writes ``state`` (and ``metadata``) as checkpoint ``step``; returns when it is on disk.

        Args:
            step: the step number, larger than every step already saved (e.g. the update count).
            state: any pytree of arrays (flax struct dataclasses, optax states, typed PRNG keys).
            metadata: JSON-serialisable dict stored next to the state (numpy and JAX scalars are
                converted), read back with ``metadata(step)``.

        Returns:
            The step's folder.

        Raises:
            ValueError: ``step`` is not after the latest saved step, or ``metadata`` is not JSON.
        """
        step = _as_step(step)
        metadata_json = _to_json_dict(metadata or {}, what="checkpoint metadata")
        steps = self.all_steps()
        if step in steps:
            raise ValueError(
                f"checkpoint step {step} already exists in {self.directory}; save each step once "
                f"(use a step counter that keeps increasing after a resume)"
            )
        if steps and step < steps[-1]:
            # Orbax would silently skip this save; a later step from another history would hide it.
            raise ValueError(
                f"checkpoint step {step} is older than the latest step {steps[-1]} in "
                f"{self.directory}; resume from the latest step, or delete the later step folders "
                f"{[s for s in steps if s > step]} if this run really replaces them"
            )
        if self._manager is None:
            self._quarantine_incomplete_steps()
            self._manager = self._make_manager()

        import orbax.checkpoint as ocp

        args = ocp.args.Composite(
            **{
                _STATE_ITEM: ocp.args.StandardSave(_without_empty(state)),
                _METADATA_ITEM: ocp.args.JsonSave(metadata_json),
            }
        )
        saved = self._manager.save(step, args=args)
        self._manager.wait_until_finished()
        if not saved:
            raise RuntimeError(
                f"orbax declined to save step {step} in {self.directory} (its save policy); "
                f"this is a bug in jaxmarl.training.checkpoint, please report it"
            )
        step_dir = self._step_dir(step)
        _write_manifest(step_dir)
        return step_dir

    def close(self) -> None:
        """Waits for pending writes and releases orbax's threads."""
        if self._manager is not None:
            self._manager.wait_until_finished()
            self._manager.close()
            self._manager = None

    def __enter__(self) -> Checkpointer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ reading
    def all_steps(self) -> list[int]:
        """Complete checkpoint steps, oldest first (``[]`` when the folder does not exist)."""
        return sorted(
            int(path.name) for path in self._step_dirs() if (path / _COMMIT_FILE).is_file()
        )

    def latest_step(self) -> int | None:
        """The newest complete step, or ``None`` if there is none (incomplete ones are skipped)."""
        steps = self.all_steps()
        return steps[-1] if steps else None

    def restore(self, step: int | None = None, target: PyTree | None = None) -> PyTree:
        """Reads checkpoint ``step`` (default: the latest complete one), exactly as saved.

        Args:
            step: the step to read, or ``None`` for the latest.
            target: a pytree of arrays or ``jax.ShapeDtypeStruct`` with the structure, shapes and
                dtypes expected (e.g. a freshly initialised training state, or
                ``jax.eval_shape(init, key)``); the result has the target's pytree types and
                shardings. Without a target orbax returns nested dicts and lists of arrays.

        Returns:
            The restored pytree; values, dtypes and typed PRNG keys are bit-for-bit those saved.

        Raises:
            CheckpointNotFoundError: no checkpoint in the folder, or not for ``step``.
            CheckpointCorruptError: the step is incomplete or a file is missing or damaged.
            CheckpointMismatchError: the checkpoint does not fit ``target``.
        """
        step = self._resolve_step(step)
        step_dir = self._step_dir(step)
        where = f"checkpoint step {step} in {self.directory}"
        hint = self._earlier_steps_hint(step)
        _verify_manifest(step_dir, where=where, hint=hint)
        return _restore_tree(step_dir / _STATE_ITEM, target, where=where, hint=hint)

    def metadata(self, step: int | None = None) -> dict[str, Any]:
        """The ``metadata`` dict saved with ``step`` (default: the latest complete step)."""
        step = self._resolve_step(step)
        path = self._step_dir(step) / _METADATA_ITEM / "metadata"
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise CheckpointCorruptError(
                f"metadata of checkpoint step {step} is unreadable ({path}: {error}); "
                f"{self._earlier_steps_hint(step)}"
            ) from error

    # ------------------------------------------------------------------ helpers
    def _make_manager(self):
        import orbax.checkpoint as ocp

        options = ocp.CheckpointManagerOptions(
            max_to_keep=self.max_to_keep,
            create=True,
            # save() is documented as blocking; a synchronous save also keeps the manifest
            # right after the data.
            enable_async_checkpointing=False,
            # Leftover *.orbax-checkpoint-tmp-* folders are interrupted writes: never a checkpoint.
            cleanup_tmp_directories=True,
        )
        return ocp.CheckpointManager(
            self.directory, item_names=(_STATE_ITEM, _METADATA_ITEM), options=options
        )

    def _step_dir(self, step: int) -> Path:
        return self.directory / str(step)

    def _step_dirs(self) -> Iterator[Path]:
        if not self.directory.is_dir():
            return iter(())
        return (p for p in self.directory.iterdir() if p.name.isdigit() and p.is_dir())

    def _incomplete_steps(self) -> list[int]:
        return sorted(int(p.name) for p in self._step_dirs() if not (p / _COMMIT_FILE).is_file())

    def _quarantine_incomplete_steps(self) -> None:
        # Renamed, not deleted: the folder may be the only trace of what went wrong.
        for step in self._incomplete_steps():
            source = self._step_dir(step)
            dest = self.directory / f"{step}.incomplete-{time.time_ns()}"
            warnings.warn(
                f"checkpoint step folder {source} is incomplete (no {_COMMIT_FILE}: its write was "
                f"interrupted or it was copied partially); renamed to {dest.name} so that it is "
                f"neither restored nor counted by max_to_keep",
                RuntimeWarning,
                stacklevel=3,
            )
            source.rename(dest)

    def _resolve_step(self, step: int | None) -> int:
        if not self.directory.is_dir():
            raise CheckpointNotFoundError(
                f"no checkpoint in {self.directory} (the folder does not exist); start without "
                f"--resume, or point --resume at the run directory that has it"
            )
        steps = self.all_steps()
        if step is None:
            if not steps:
                incomplete = self._incomplete_steps()
                extra = (
                    f" (incomplete step folders {incomplete} were skipped: their writes were "
                    f"interrupted)"
                    if incomplete
                    else ""
                )
                raise CheckpointNotFoundError(
                    f"no checkpoint in {self.directory}{extra}; start without --resume"
                )
            return steps[-1]
        step = _as_step(step)
        if step in steps:
            return step
        if step in self._incomplete_steps():
            raise CheckpointCorruptError(
                f"checkpoint step {step} in {self.directory} is incomplete (no {_COMMIT_FILE}: its "
                f"write was interrupted); {self._earlier_steps_hint(step)}"
            )
        raise CheckpointNotFoundError(
            f"no checkpoint for step {step} in {self.directory}; complete steps: {steps or 'none'}"
        )

    def _earlier_steps_hint(self, step: int) -> str:
        earlier = [s for s in self.all_steps() if s < step]
        if not earlier:
            return "no earlier complete step exists; start a new run without --resume"
        return f"earlier complete steps: {earlier} (restore one with step={earlier[-1]})"


# --------------------------------------------------------------------------- one subtree
def save_params(path: str | os.PathLike, params: PyTree, *, overwrite: bool = False) -> Path:
    """Saves one parameter subtree on its own (e.g. a shared decision trunk), atomically.

    The tree is written by orbax into a hidden sibling folder ``.NAME.partial-<id>`` together with
    its manifest, then renamed to ``path``; an interrupted save leaves only that hidden folder.

    Args:
        path: the folder to create.
        params: a pytree of arrays, e.g. ``train_state.params["trunk"]``.
        overwrite: replace an existing folder. The old one is renamed aside first and deleted
            only once the new one is in place.

    Returns:
        ``path`` as an absolute ``Path``.

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
    staging = path.parent / f".{path.name}.partial-{uuid.uuid4().hex[:8]}"
    with ocp.Checkpointer(ocp.StandardCheckpointHandler()) as checkpointer:
        checkpointer.save(staging, args=ocp.args.StandardSave(_without_empty(params)))
    _write_manifest(staging)
    if path.exists():
        retired = path.parent / f".{path.name}.replaced-{uuid.uuid4().hex[:8]}"
        path.rename(retired)
        staging.rename(path)
        shutil.rmtree(retired)
    else:
        staging.rename(path)
    return path


def load_params(path: str | os.PathLike, target: PyTree | None = None) -> PyTree:
    """Loads a subtree written by ``save_params``.

    Args:
        path: the folder given to ``save_params``.
        target: optional pytree of arrays or ``jax.ShapeDtypeStruct`` to check the saved tree
            against (structure, shapes, dtypes) and to take pytree types and shardings from.

    Returns:
        The saved subtree, bit-for-bit (nested dicts without a target).

    Raises:
        CheckpointNotFoundError: ``path`` is not a saved subtree.
        CheckpointCorruptError: a file is missing or damaged.
        CheckpointMismatchError: the saved tree does not fit ``target``.
    """
    path = Path(path).expanduser().absolute()
    if not (path / _COMMIT_FILE).is_file():
        state = "does not exist" if not path.exists() else "is not a complete saved subtree"
        raise CheckpointNotFoundError(
            f"{path} {state}; give the folder written by save_params (check the path)"
        )
    where = f"saved parameters {path}"
    hint = "save them again from the run that produced them"
    _verify_manifest(path, where=where, hint=hint)
    return _restore_tree(path, target, where=where, hint=hint, config_hint=False)


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
        if isinstance(value, np.generic | np.ndarray | jax.Array) and np.ndim(value) == 0:
            return np.asarray(value).item()
        if isinstance(value, np.ndarray | jax.Array):
            return np.asarray(value).tolist()
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        raise TypeError(
            f"{what} must be JSON-serialisable; got a {type(value).__name__} ({value!r:.80}); "
            f"convert it to a str, number, list or dict"
        )

    return json.loads(json.dumps(dict(mapping), default=default))


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(root: Path) -> None:
    files = {
        str(p.relative_to(root)): {"size": p.stat().st_size, "sha256": _file_digest(p)}
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != MANIFEST_FILE
    }
    # Write then rename, so a reader never sees half a manifest.
    partial = root / f".{MANIFEST_FILE}.partial"
    with partial.open("w") as handle:
        json.dump({"version": 1, "files": files}, handle, indent=1)
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(root / MANIFEST_FILE)


def _verify_manifest(root: Path, *, where: str, hint: str) -> None:
    manifest_path = root / MANIFEST_FILE
    if not manifest_path.is_file():
        return  # written after orbax's commit; a crash in between leaves a complete checkpoint
    try:
        files = json.loads(manifest_path.read_text())["files"]
    except (OSError, ValueError, KeyError) as error:
        raise CheckpointCorruptError(
            f"{where}: its manifest {manifest_path} is unreadable ({error}); {hint}"
        ) from error
    for name, expected in files.items():
        file = root / name
        if not file.is_file():
            problem = "is missing"
        elif file.stat().st_size != expected["size"]:
            problem = f"has {file.stat().st_size} bytes instead of {expected['size']} (truncated?)"
        elif _file_digest(file) != expected["sha256"]:
            problem = "has the right size but different contents (damaged)"
        else:
            continue
        raise CheckpointCorruptError(f"{where} is corrupt: file {file} {problem}; {hint}")


def _is_empty(leaf: Any) -> bool:
    return hasattr(leaf, "shape") and int(np.prod(leaf.shape)) == 0


def _without_empty(tree: PyTree) -> PyTree:
    """Zero-size arrays (e.g. a feed-forward net's empty recurrent state) as ``None``.

    Orbax refuses to write zero-size arrays; they hold no data, so they are left out and
    rebuilt from the target's shape and dtype on restore.
    """
    return jax.tree.map(lambda leaf: None if _is_empty(leaf) else leaf, tree)


def _with_empty(restored: PyTree, target: PyTree) -> PyTree:
    """Put back the zero-size leaves ``_without_empty`` left out, from ``target``."""
    target_leaves, treedef = jax.tree.flatten(target)
    restored_leaves = iter(jax.tree.leaves(restored))
    leaves = [
        jax.numpy.zeros(leaf.shape, leaf.dtype) if _is_empty(leaf) else next(restored_leaves)
        for leaf in target_leaves
    ]
    return jax.tree.unflatten(treedef, leaves)


def _restore_tree(
    directory: Path, target: PyTree | None, *, where: str, hint: str, config_hint: bool = True
) -> PyTree:
    if target is not None and any(_is_empty(leaf) for leaf in jax.tree.leaves(target)):
        stripped = _restore_tree(
            directory, _without_empty(target), where=where, hint=hint, config_hint=config_hint
        )
        return _with_empty(stripped, target)
    import orbax.checkpoint as ocp
    from etils import epath

    try:
        saved_tree = ocp.StandardCheckpointHandler().metadata(epath.Path(directory)).tree
    except Exception as error:  # orbax raises many types; all mean "cannot read this folder"
        raise CheckpointCorruptError(
            f"{where}: cannot read its tree metadata {directory / '_METADATA'} "
            f"({type(error).__name__}: "
            f"{error}); {hint}"
        ) from error
    if target is not None:
        _check_matches(saved_tree, target, where=where, config_hint=config_hint)
        args = ocp.args.StandardRestore(jax.tree.map(_abstract, target))
    else:
        args = ocp.args.StandardRestore()
    try:
        with ocp.Checkpointer(ocp.StandardCheckpointHandler()) as checkpointer:
            restored = checkpointer.restore(directory, args=args)
    except Exception as error:  # tensorstore errors name the damaged file in their message
        raise CheckpointCorruptError(
            f"{where}: reading {directory} failed ({type(error).__name__}: {str(error)[:500]}); "
            f"{hint}"
        ) from error
    if target is not None:
        _check_restored_dtypes(restored, target, where=where, config_hint=config_hint)
    return restored


def _abstract(leaf: Any) -> Any:
    if isinstance(leaf, jax.ShapeDtypeStruct | jax.Array):
        return leaf  # orbax takes shape, dtype and sharding from either
    array = np.asarray(leaf)
    return jax.ShapeDtypeStruct(array.shape, array.dtype)


def _path_names(path: tuple[Any, ...]) -> tuple[str, ...]:
    names = []
    for entry in path:
        for attribute in ("key", "name", "idx"):
            if hasattr(entry, attribute):
                names.append(str(getattr(entry, attribute)))
                break
        else:
            names.append(str(entry))
    return tuple(names)


def _is_key(dtype: Any) -> bool:
    return jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def _describe(shape: tuple[int, ...], dtype: Any) -> str:
    return f"{dtype}[{', '.join(map(str, shape))}]"


def _expected_storage(leaf: Any) -> tuple[tuple[int, ...], Any, str]:
    """(stored shape, stored dtype, description) of one target leaf; typed keys store key data."""
    leaf = _abstract(leaf)
    if _is_key(leaf.dtype):
        data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct(leaf.shape, leaf.dtype))
        return tuple(data.shape), np.dtype(data.dtype), _describe(leaf.shape, leaf.dtype)
    return tuple(leaf.shape), np.dtype(leaf.dtype), _describe(leaf.shape, leaf.dtype)


def _flat(tree: PyTree) -> dict[tuple[str, ...], Any]:
    return {_path_names(path): leaf for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _check_matches(saved_tree: PyTree, target: PyTree, *, where: str, config_hint: bool) -> None:
    saved, expected = _flat(saved_tree), _flat(target)
    problems = []
    for name, leaf in expected.items():
        shape, dtype, description = _expected_storage(leaf)
        if name not in saved:
            problems.append(f"{'/'.join(name)}: not in the checkpoint (expected {description})")
            continue
        saved_shape = tuple(getattr(saved[name], "shape", ()) or ())
        saved_dtype = getattr(saved[name], "dtype", None)
        if saved_shape != shape or (saved_dtype is not None and np.dtype(saved_dtype) != dtype):
            saved_description = _describe(saved_shape, saved_dtype)
            if _is_key(_abstract(leaf).dtype):
                description += f" = key data {_describe(shape, dtype)}"
            problems.append(f"{'/'.join(name)}: saved {saved_description}, expected {description}")
    problems += [
        f"{'/'.join(name)}: in the checkpoint but not in the target"
        for name in saved
        if name not in expected
    ]
    if problems:
        _raise_mismatch(problems, where=where, config_hint=config_hint)


def _check_restored_dtypes(
    restored: PyTree, target: PyTree, *, where: str, config_hint: bool
) -> None:
    # Orbax restores typed keys with the *saved* implementation whatever the target says.
    problems = [
        f"{'/'.join(_path_names(path))}: saved {got.dtype}, expected {want.dtype}"
        for (path, got), want in zip(
            jax.tree_util.tree_flatten_with_path(restored)[0],
            jax.tree_util.tree_leaves(jax.tree.map(_abstract, target)),
        )
        if got.dtype != want.dtype
    ]
    if problems:
        _raise_mismatch(problems, where=where, config_hint=config_hint)


def _raise_mismatch(problems: list[str], *, where: str, config_hint: bool) -> None:
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
