"""Checkpointer: exact round trips, retention, atomicity under simulated crashes, corrupt steps
and the error messages."""

from __future__ import annotations

import gc
import os
import signal

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import struct

from jaxmarl.training.host.checkpoint import (
    CheckpointCorruptError,
    Checkpointer,
    CheckpointMismatchError,
    CheckpointNotFoundError,
    load_params,
    save_params,
)

# When one array cannot be read, orbax leaves its reads of the others unawaited, and Python
# reports them when they are collected (the corrupt-checkpoint tests collect them at their end).
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@struct.dataclass
class TrainState:
    params: dict
    opt_state: optax.OptState
    key: jax.Array  # [] typed key (threefry)
    env_keys: jax.Array  # [3] typed keys (rbg)
    obs: jax.Array  # [3, 2] bfloat16
    done: jax.Array  # [3] bool
    counts: jax.Array  # [3] uint8
    step: jax.Array  # [] int32


def make_state(seed: int = 0, width: int = 4) -> TrainState:
    key = jax.random.key(seed)
    params = {
        "trunk": {"kernel": jax.random.normal(key, (2, width)), "bias": jnp.zeros(width)},
        "head": {"kernel": jnp.full((width, 1), 0.5 + seed)},
    }
    return TrainState(
        params=params,
        opt_state=optax.adam(1e-3).init(params),
        key=jax.random.fold_in(key, 7),
        env_keys=jax.random.split(jax.random.key(seed, impl="rbg"), 3),
        obs=jnp.arange(6, dtype=jnp.bfloat16).reshape(3, 2) + seed,
        done=jnp.array([True, False, True]),
        counts=jnp.array([1, 2, 255], jnp.uint8),
        step=jnp.int32(seed),
    )


def assert_bitwise_equal(actual, expected):
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for got, want in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
        assert got.dtype == want.dtype and got.shape == want.shape
        if jax.dtypes.issubdtype(want.dtype, jax.dtypes.prng_key):
            got, want = jax.random.key_data(got), jax.random.key_data(want)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_round_trip_is_bitwise_with_dtypes_and_typed_keys(tmp_path):
    state = make_state(seed=3)
    ckpt = Checkpointer(tmp_path / "checkpoints")
    ckpt.save(10, state, metadata={"env_steps": np.int64(640), "ret": jnp.float32(1.5)})
    # A fresh state of the same shapes as target (concrete arrays), and an abstract one.
    for target in (make_state(seed=0), jax.eval_shape(lambda: make_state(seed=0))):
        restored = ckpt.restore(target=target)
        assert isinstance(restored, TrainState)
        assert_bitwise_equal(restored, state)
        assert jax.random.key_impl(restored.env_keys) == jax.random.key_impl(state.env_keys)
    # The RNG stream continues exactly where it stopped.
    np.testing.assert_array_equal(
        jax.random.key_data(jax.random.split(restored.key)),
        jax.random.key_data(jax.random.split(state.key)),
    )
    assert ckpt.metadata(10) == {"env_steps": 640, "ret": 1.5}
    untargeted = ckpt.restore(10)
    assert set(untargeted) == {f.name for f in TrainState.__dataclass_fields__.values()}
    np.testing.assert_array_equal(untargeted["params"]["head"]["kernel"], 3.5)


def test_steps_listing_keep_limit_and_step_order(tmp_path):
    ckpt = Checkpointer(tmp_path / "ckpt", max_to_keep=2)
    assert ckpt.latest_step() is None and ckpt.all_steps() == []
    assert not (tmp_path / "ckpt").exists()  # nothing created until the first save
    for step in (1, 2, 3):
        ckpt.save(step, make_state(seed=step))
    assert ckpt.all_steps() == [2, 3] and ckpt.latest_step() == 3
    assert_bitwise_equal(ckpt.restore(2, target=make_state()), make_state(seed=2))
    with pytest.raises(ValueError, match="step 3 is not after the latest step 3"):
        ckpt.save(3, make_state())
    with pytest.raises(ValueError, match="step 1 is not after the latest step 3"):
        ckpt.save(1, make_state())
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        ckpt.save(4, make_state(), metadata={"fn": print})
    with pytest.raises(TypeError, match="must be an integer"):
        ckpt.save(4.0, make_state())
    ckpt.close()
    with pytest.raises(ValueError, match="max_to_keep must be >= 0"):
        Checkpointer(tmp_path / "ckpt", max_to_keep=-1)
    with pytest.raises(ValueError, match="keep_best_mode must be one of"):
        Checkpointer(tmp_path / "ckpt", best_metric="ret", best_mode="best")


def test_max_to_keep_zero_keeps_every_step_and_keep_period_keeps_multiples(tmp_path):
    with Checkpointer(tmp_path / "all", max_to_keep=0) as ckpt:
        for step in range(1, 6):
            ckpt.save(step, {"x": jnp.float32(step)})
    assert Checkpointer(tmp_path / "all").all_steps() == [1, 2, 3, 4, 5]
    with Checkpointer(tmp_path / "period", max_to_keep=2, keep_period=3) as ckpt:
        for step in range(1, 8):
            ckpt.save(step, {"x": jnp.float32(step)})
    assert Checkpointer(tmp_path / "period").all_steps() == [3, 6, 7]


@pytest.mark.parametrize("mode, kept", [("max", [1, 3, 6]), ("min", [2, 4, 6])])
def test_best_by_metric_keeps_the_best_and_the_newest(tmp_path, mode, kept):
    returns = {1: 5.0, 2: -1.0, 3: 9.0, 4: 0.0, 5: float("nan")}
    directory = tmp_path / mode
    with Checkpointer(directory, max_to_keep=2, best_metric="ret", best_mode=mode) as ckpt:
        for step, value in returns.items():
            # Only "ret" counts; a NaN (or a missing metric) leaves the step unranked.
            ckpt.save(step, {"x": jnp.float32(step)}, metrics={"ret": value, "loss": 1e9})
    # The ranking survives a restart: orbax reads the saved metrics back.
    with Checkpointer(directory, max_to_keep=2, best_metric="ret", best_mode=mode) as ckpt:
        assert ckpt.all_steps() == sorted({*kept[:2], 5})  # 5: unranked but the newest
        ckpt.save(6, {"x": jnp.float32(6)}, metrics={"loss": 0.0})  # unranked, newest
    assert Checkpointer(directory).all_steps() == kept


def test_async_save_then_donated_state_then_restore(tmp_path):
    state = make_state(seed=4)
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(1, state, metadata={"updates": 8})
    # save returns once orbax holds a host copy: the next chunk may donate the buffers.
    double = jax.jit(lambda p: jax.tree.map(lambda x: x * 2, p), donate_argnums=0)
    jax.block_until_ready(double(state.params))
    ckpt.close()  # waits for the write
    other = Checkpointer(tmp_path / "ckpt")  # as another process would see it
    assert other.all_steps() == [1] and other.metadata() == {"updates": 8}
    assert_bitwise_equal(other.restore(target=make_state()), make_state(seed=4))


def test_interrupted_write_never_hides_the_last_good_step(tmp_path):
    directory = tmp_path / "ckpt"
    with Checkpointer(directory, max_to_keep=2) as ckpt:
        ckpt.save(5, make_state(seed=5))
    # A write killed before orbax's rename (a temporary folder, never listed), and a step
    # folder with nothing readable in it (copied half-way, or a file system without rename).
    tmp = directory / "6.orbax-checkpoint-tmp-1234"
    (tmp / "state").mkdir(parents=True)
    (tmp / "state" / "half").write_bytes(b"\0" * 10)
    (directory / "7" / "state").mkdir(parents=True)

    fresh = Checkpointer(directory, max_to_keep=2)  # as after a restart
    assert fresh.all_steps() == [5, 7]
    with pytest.raises(CheckpointCorruptError, match=r"step 7 .*_METADATA.*earlier steps: \[5\]"):
        fresh.restore(target=make_state())
    # Resuming uses step 5 and sets step 7 aside, so the resumed run can save 6 and 7 again.
    with pytest.warns(RuntimeWarning, match=r"step 7 .*Renamed it to 7.unreadable-"):
        step, state = fresh.restore_latest(target=make_state())
    assert step == 5
    assert_bitwise_equal(state, make_state(seed=5))
    fresh.save(6, make_state(seed=6))
    fresh.save(7, make_state(seed=7))
    fresh.close()
    assert fresh.all_steps() == [6, 7]
    assert not tmp.exists()  # orbax removes interrupted writes
    assert [p.name.split(".")[0] for p in directory.glob("7.unreadable-*")] == ["7"]


def test_save_is_atomic_rename_of_a_tmp_folder(tmp_path, monkeypatch):
    # Evidence for the atomicity claim: while orbax writes, the step only exists under a
    # *.orbax-checkpoint-tmp-* name, and the final name appears through one rename.
    renames = []
    real_rename = os.rename

    def recording_rename(src, dst, *args, **kwargs):
        renames.append((os.fspath(src), os.fspath(dst)))
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", recording_rename)
    with Checkpointer(tmp_path / "ckpt") as ckpt:
        ckpt.save(3, make_state())
    step_renames = [(s, d) for s, d in renames if os.path.basename(d) == "3"]
    assert len(step_renames) == 1
    source = os.path.basename(step_renames[0][0])
    assert source.startswith("3.orbax-checkpoint-tmp"), renames
    assert Checkpointer(tmp_path / "ckpt").all_steps() == [3]


def test_ctrl_c_during_a_save_completes_the_step_then_interrupts(tmp_path):
    # Raised inside orbax's save, the KeyboardInterrupt left one of orbax's threads waiting for
    # ever and the process hung at exit; held, the step is written and kept.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ckpt = Checkpointer(tmp_path / "ckpt")
        orbax_save = ckpt._manager.save

        def save_interrupted_at_its_start(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGINT)
            return orbax_save(*args, **kwargs)

        ckpt._manager.save = save_interrupted_at_its_start
        with pytest.raises(KeyboardInterrupt):
            ckpt.save(1, make_state(seed=1))
        ckpt.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    reader = Checkpointer(tmp_path / "ckpt")
    assert reader.all_steps() == [1]
    assert_bitwise_equal(reader.restore(1, target=make_state()), make_state(seed=1))


def test_missing_directory_and_empty_directory_errors(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match="does not exist.*start without --resume"):
        Checkpointer(tmp_path / "nope").restore()
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointNotFoundError, match=r"no checkpoint in .*empty; start without"):
        Checkpointer(tmp_path / "empty").restore_latest(target=make_state())
    ckpt = Checkpointer(tmp_path / "one")
    ckpt.save(2, make_state())
    with pytest.raises(CheckpointNotFoundError, match=r"step 9 .* saved steps: \[2\]"):
        ckpt.restore(9)


def _largest_data_file(step_dir):
    data = [p for p in (step_dir / "state").rglob("*") if p.parent.name == "d"]
    return max(data, key=os.path.getsize)


def _big_state(seed):
    # 16 KiB of array data: above OCDBT's inline limit, so it has a data file of its own.
    return {"w": jax.random.normal(jax.random.key(seed), (64, 64)), "key": jax.random.key(seed)}


@pytest.mark.parametrize("damage", ["truncate", "flip", "flip_inside", "delete"])
def test_corrupt_latest_step_is_named_and_resuming_falls_back(tmp_path, damage):
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(1, _big_state(1))
    ckpt.save(2, _big_state(2))
    ckpt.wait()
    victim = _largest_data_file(tmp_path / "ckpt" / "2")
    data = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        victim.write_bytes(bytes([data[0] ^ 0xFF]) + data[1:])
    elif damage == "flip_inside":  # orbax reads this without an error; the checksum catches it
        middle = len(data) // 2
        victim.write_bytes(data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1 :])
    else:
        victim.unlink()
    with pytest.raises(CheckpointCorruptError) as error:
        ckpt.restore(target=_big_state(0))
    message = str(error.value)
    # The step, where its state is, what TensorStore found, and what to do.
    assert "checkpoint step 2" in message and "cannot be read" in message
    assert str(tmp_path / "ckpt" / "2" / "state") in message
    assert ("Error reading" in message) != (damage == "flip_inside")
    if damage == "flip_inside":
        assert "checksum mismatch" in message
    assert "earlier steps: [1]" in message
    with pytest.warns(
        RuntimeWarning, match=r"(?s)checkpoint step 2 .* cannot be read.*resuming from step 1"
    ):
        step, state = ckpt.restore_latest(target=_big_state(0))
    assert step == 1
    assert_bitwise_equal(state, _big_state(1))
    gc.collect()


def test_damaged_tree_metadata_names_the_file(tmp_path):
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(4, make_state())
    ckpt.wait()
    (tmp_path / "ckpt" / "4" / "state" / "_METADATA").write_text("{not json")
    with pytest.raises(CheckpointCorruptError, match=r"step 4 .*state/_METADATA"):
        ckpt.restore(target=make_state())
    with pytest.raises(CheckpointCorruptError, match=r"no checkpoint in .* can be read"):
        ckpt.restore_latest(target=make_state())
    assert ckpt.all_steps() == [4]  # nothing set aside when there is nothing to resume from
    gc.collect()


def test_mismatch_lists_paths_with_saved_and_expected_shapes(tmp_path):
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(1, make_state(width=4))
    with pytest.raises(CheckpointMismatchError) as error:
        ckpt.restore(target=make_state(width=8))
    message = str(error.value)
    assert "params/trunk/kernel: saved float32[2, 4], expected float32[2, 8]" in message
    assert "and" in message and "more" in message  # 11 differences, first 5 listed
    assert "config" in message and "--resume" in message

    changed_dtype = make_state().replace(counts=jnp.zeros(3, jnp.int32))
    with pytest.raises(CheckpointMismatchError, match=r"counts: saved uint8\[3\], expected int32"):
        ckpt.restore(target=changed_dtype)

    extra = make_state().replace(params={**make_state().params, "new": jnp.zeros(2)})
    with pytest.raises(CheckpointMismatchError, match="params/new: not in the checkpoint"):
        ckpt.restore(target=extra)

    fewer = make_state().replace(params={"trunk": make_state().params["trunk"]})
    with pytest.raises(CheckpointMismatchError, match="head/kernel: in the checkpoint but not"):
        ckpt.restore(target=fewer.replace(opt_state=optax.adam(1e-3).init(fewer.params)))


def test_changed_prng_implementation_is_a_mismatch(tmp_path):
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(1, make_state())
    # unsafe_rbg keys have the same key-data shape as rbg keys; orbax would restore rbg keys.
    other_impl = make_state().replace(
        env_keys=jax.random.split(jax.random.key(0, impl="unsafe_rbg"), 3)
    )
    message = "env_keys: saved key<rbg>, expected key<urbg>"
    with pytest.raises(CheckpointMismatchError, match=message):
        ckpt.restore(target=other_impl)
    threefry = make_state().replace(env_keys=jax.random.split(jax.random.key(0), 3))
    with pytest.raises(CheckpointMismatchError, match=r"env_keys: saved uint32\[3, 4\]"):
        ckpt.restore(target=threefry)


def test_save_and_load_one_params_subtree(tmp_path):
    trunk = make_state(seed=2).params["trunk"]
    path = save_params(tmp_path / "trunk", trunk)
    assert path == tmp_path / "trunk"
    assert not list(tmp_path.glob(".trunk*"))  # no staging leftovers
    assert_bitwise_equal(load_params(path, target=make_state().params["trunk"]), trunk)
    assert_bitwise_equal(load_params(path), trunk)  # plain dicts need no target

    with pytest.raises(FileExistsError, match="overwrite=True"):
        save_params(path, trunk)
    save_params(path, make_state(seed=5).params["trunk"], overwrite=True)
    assert_bitwise_equal(load_params(path), make_state(seed=5).params["trunk"])
    assert not list(tmp_path.glob(".trunk*"))

    with pytest.raises(CheckpointMismatchError, match="kernel: saved float32\\[2, 4\\]"):
        load_params(path, target=make_state(width=3).params["trunk"])
    with pytest.raises(CheckpointNotFoundError, match="does not exist"):
        load_params(tmp_path / "missing")


def test_interrupted_params_save_leaves_the_old_subtree(tmp_path, monkeypatch):
    path = save_params(tmp_path / "trunk", {"w": jnp.ones(3)})
    import orbax.checkpoint as ocp

    def crash(self, directory, *args, **kwargs):
        raise KeyboardInterrupt("killed while writing")

    monkeypatch.setattr(ocp.StandardCheckpointHandler, "save", crash)
    with pytest.raises(KeyboardInterrupt):
        save_params(path, {"w": jnp.zeros(3)}, overwrite=True)
    monkeypatch.undo()
    np.testing.assert_array_equal(load_params(path)["w"], np.ones(3))
    save_params(path, {"w": jnp.zeros(3)}, overwrite=True)  # what the crash left is replaced
    np.testing.assert_array_equal(load_params(path)["w"], np.zeros(3))


def test_zero_size_leaves_round_trip(tmp_path):
    """Orbax refuses zero-size arrays; a feed-forward net's empty recurrent state is one."""
    state = {
        "carry": jnp.zeros((4, 0), jnp.float32),
        "goal": jnp.zeros((0,), jnp.int32),
        "params": jnp.arange(3.0),
        "key": jax.random.key(1),
    }
    checkpointer = Checkpointer(tmp_path / "ckpt")
    checkpointer.save(1, state)
    restored = checkpointer.restore(1, target=state)
    assert restored["carry"].shape == (4, 0) and restored["carry"].dtype == jnp.float32
    assert restored["goal"].shape == (0,) and restored["goal"].dtype == jnp.int32
    np.testing.assert_array_equal(restored["params"], state["params"])
    key_data = jax.random.key_data
    np.testing.assert_array_equal(key_data(restored["key"]), key_data(state["key"]))
