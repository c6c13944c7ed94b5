"""Checkpointer: exact round trips, atomicity under simulated crashes, and the error messages."""

from __future__ import annotations

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import struct

from jaxmarl.training.checkpoint import (
    MANIFEST_FILE,
    CheckpointCorruptError,
    Checkpointer,
    CheckpointMismatchError,
    CheckpointNotFoundError,
    load_params,
    save_params,
)


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
    with pytest.raises(ValueError, match="step 3 already exists"):
        ckpt.save(3, make_state())
    with pytest.raises(ValueError, match="older than the latest step 3"):
        ckpt.save(1, make_state())
    with pytest.raises(TypeError, match="must be JSON-serialisable"):
        ckpt.save(4, make_state(), metadata={"fn": print})
    with pytest.raises(TypeError, match="must be an integer"):
        ckpt.save(4.0, make_state())
    ckpt.close()


def test_crash_mid_write_never_hides_or_damages_the_last_good_step(tmp_path):
    directory = tmp_path / "ckpt"
    ckpt = Checkpointer(directory, max_to_keep=2)
    ckpt.save(5, make_state(seed=5))
    # A write killed before orbax's rename (a tmp folder) and one that left a partial step
    # folder without the commit marker (non-atomic copy or file system).
    tmp = directory / "6.orbax-checkpoint-tmp-1234"
    (tmp / "state").mkdir(parents=True)
    (tmp / "state" / "half").write_bytes(b"\0" * 10)
    (directory / "7" / "state").mkdir(parents=True)

    fresh = Checkpointer(directory, max_to_keep=2)  # as after a restart
    assert fresh.all_steps() == [5] and fresh.latest_step() == 5
    assert_bitwise_equal(fresh.restore(target=make_state()), make_state(seed=5))
    with pytest.raises(CheckpointCorruptError, match=r"step 7 .* is incomplete.*\[5\]"):
        fresh.restore(7, target=make_state())

    # The next save moves the incomplete folder aside and removes the tmp one; with
    # max_to_keep=2 the good step 5 must survive (orbax alone would count "7" and delete 5).
    with pytest.warns(RuntimeWarning, match="incomplete"):
        fresh.save(6, make_state(seed=6))
    assert fresh.all_steps() == [5, 6]
    assert not tmp.exists()
    assert [p.name.split(".")[0] for p in directory.glob("7.incomplete-*")] == ["7"]
    assert_bitwise_equal(fresh.restore(5, target=make_state()), make_state(seed=5))


def test_save_is_atomic_rename_of_a_tmp_folder(tmp_path, monkeypatch):
    # Evidence for the atomicity claim: while orbax writes, the step only exists under a
    # *.orbax-checkpoint-tmp-* name, and the final name appears through one rename.
    renames = []
    real_rename = os.rename

    def recording_rename(src, dst, *args, **kwargs):
        renames.append((os.fspath(src), os.fspath(dst)))
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", recording_rename)
    Checkpointer(tmp_path / "ckpt").save(3, make_state())
    step_renames = [(s, d) for s, d in renames if os.path.basename(d) == "3"]
    assert len(step_renames) == 1
    source = os.path.basename(step_renames[0][0])
    assert source.startswith("3.orbax-checkpoint-tmp"), renames
    assert (tmp_path / "ckpt" / "3" / "commit_success.txt").is_file()


def test_missing_directory_and_empty_directory_errors(tmp_path):
    with pytest.raises(CheckpointNotFoundError, match="start without --resume"):
        Checkpointer(tmp_path / "nope").restore()
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointNotFoundError, match=r"no checkpoint in .*empty; start without"):
        Checkpointer(tmp_path / "empty").restore(target=make_state())
    ckpt = Checkpointer(tmp_path / "one")
    ckpt.save(2, make_state())
    with pytest.raises(CheckpointNotFoundError, match=r"step 9 .* complete steps: \[2\]"):
        ckpt.restore(9)


@pytest.mark.parametrize("damage", ["truncate", "flip", "delete"])
def test_corrupt_checkpoint_names_step_file_and_earlier_steps(tmp_path, damage):
    ckpt = Checkpointer(tmp_path / "ckpt")
    ckpt.save(1, make_state(seed=1))
    step_dir = ckpt.save(2, make_state(seed=2))
    files = json.loads((step_dir / MANIFEST_FILE).read_text())["files"]
    name = max(files, key=lambda n: files[n]["size"] if n.startswith("state/") else -1)
    victim = step_dir / name
    data = victim.read_bytes()
    if damage == "truncate":
        victim.write_bytes(data[: len(data) // 2])
    elif damage == "flip":
        victim.write_bytes(bytes([data[0] ^ 0xFF]) + data[1:])
    else:
        victim.unlink()
    with pytest.raises(CheckpointCorruptError) as error:
        ckpt.restore(target=make_state())
    message = str(error.value)
    assert "step 2" in message and name.split("/")[-1] in message
    assert "earlier complete steps: [1]" in message
    # No silent fallback, but the earlier step is intact and restorable when asked for.
    assert_bitwise_equal(ckpt.restore(1, target=make_state()), make_state(seed=1))


def test_corrupt_checkpoint_without_manifest_still_fails_loudly(tmp_path):
    ckpt = Checkpointer(tmp_path / "ckpt")
    step_dir = ckpt.save(4, make_state())
    (step_dir / MANIFEST_FILE).unlink()  # as if the process died right after orbax's rename
    assert_bitwise_equal(ckpt.restore(target=make_state()), make_state())
    (step_dir / "state" / "_METADATA").write_text("{not json")
    with pytest.raises(CheckpointCorruptError, match=r"step 4 .*state/_METADATA"):
        ckpt.restore(target=make_state())


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
    import jaxmarl.training.checkpoint as checkpoint

    def crash(root):
        raise KeyboardInterrupt("killed while writing the manifest")

    monkeypatch.setattr(checkpoint, "_write_manifest", crash)
    with pytest.raises(KeyboardInterrupt):
        save_params(path, {"w": jnp.zeros(3)}, overwrite=True)
    np.testing.assert_array_equal(load_params(path)["w"], np.ones(3))


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
