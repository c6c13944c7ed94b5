import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl import spaces


def test_discrete_sample_contains_and_bounds():
    space = spaces.Discrete(4)
    assert space.n == 4 and space.shape == () and space.dtype == jnp.int32
    samples = jax.vmap(space.sample)(jax.random.split(jax.random.key(0), 256))
    assert samples.dtype == jnp.int32 and samples.shape == (256,)
    assert set(np.unique(samples).tolist()) == {0, 1, 2, 3}
    assert bool(space.contains(jnp.int32(3)))
    assert not bool(space.contains(jnp.int32(4)))
    assert not bool(space.contains(jnp.int32(-1)))
    assert not bool(space.contains(jnp.float32(1.0)))  # wrong dtype kind
    assert not bool(space.contains(jnp.zeros((1,), jnp.int32)))  # wrong shape


def test_multidiscrete():
    space = spaces.MultiDiscrete([2, 3, 5])
    assert space.shape == (3,)
    samples = jax.vmap(space.sample)(jax.random.split(jax.random.key(1), 512))
    assert samples.shape == (512, 3)
    assert (samples.max(axis=0) == jnp.array([1, 2, 4])).all()
    assert bool(space.contains(jnp.array([1, 2, 4], jnp.int32)))
    assert not bool(space.contains(jnp.array([2, 0, 0], jnp.int32)))
    assert not bool(space.contains(jnp.array([1, 2], jnp.int32)))
    with pytest.raises(ValueError, match="sizes >= 1"):
        spaces.MultiDiscrete([2, 0])


def test_box_bounds_shape_dtype():
    space = spaces.Box(-1.0, 2.0, (3, 2))
    x = space.sample(jax.random.key(2))
    assert x.shape == (3, 2) and x.dtype == jnp.float32
    assert bool(space.contains(x))
    assert bool(((x >= -1.0) & (x <= 2.0)).all())
    assert not bool(space.contains(jnp.full((3, 2), 2.5)))
    assert not bool(space.contains(jnp.zeros((2, 3))))
    assert not bool(space.contains(jnp.zeros((3, 2), jnp.int32)))
    unbounded = spaces.Box(-jnp.inf, jnp.inf, (4,))
    y = unbounded.sample(jax.random.key(3))
    assert bool(jnp.isfinite(y).all()) and bool(unbounded.contains(y))
    with pytest.raises(ValueError, match="low <= high"):
        spaces.Box(1.0, 0.0, (2,))


def test_dict_and_tuple():
    space = spaces.Dict({"a": spaces.Discrete(2), "b": spaces.Box(0.0, 1.0, (2,))})
    sample = space.sample(jax.random.key(4))
    assert list(sample) == ["a", "b"]
    assert bool(space.contains(sample))
    assert not bool(space.contains({"a": jnp.int32(0)}))
    tup = spaces.Tuple([spaces.Discrete(2), spaces.Box(0.0, 1.0, (1,))])
    sample = tup.sample(jax.random.key(5))
    assert len(sample) == 2 and bool(tup.contains(sample))
    assert not bool(tup.contains((jnp.int32(5), sample[1])))


def test_contains_under_jit_and_vmap():
    space = spaces.Box(0.0, 1.0, (2,))
    xs = jnp.array([[0.5, 0.5], [1.5, 0.0]], jnp.float32)
    result = jax.jit(jax.vmap(space.contains))(xs)
    assert result.tolist() == [True, False]


def test_spaces_compare_by_value():
    assert spaces.Discrete(3) == spaces.Discrete(3)
    assert spaces.Discrete(3) != spaces.Discrete(4)
    assert spaces.Box(0.0, 1.0, (2,)) == spaces.Box(0.0, 1.0, (2,))


def test_box_with_some_infinite_bounds():
    space = spaces.Box(jnp.array([0.0, -jnp.inf]), jnp.array([1.0, 0.0]), (2,))
    xs = jax.vmap(space.sample)(jax.random.split(jax.random.key(6), 500))
    assert bool(jax.vmap(space.contains)(xs).all())
    assert float(xs[:, 0].min()) >= 0.0 and float(xs[:, 0].max()) <= 1.0
    assert float(xs[:, 1].max()) <= 0.0 and float(xs[:, 1].min()) < -1.0  # normal tail
