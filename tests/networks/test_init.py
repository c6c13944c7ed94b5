"""The orthogonal initialiser: same matrices as flax's, orthonormal, and safe under vmap."""

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import linen as nn

from jaxmarl.networks.init import householder_q, orthogonal


@pytest.mark.parametrize("shape", [(16, 16), (8, 24), (24, 8), (3, 4, 5)])
def test_orthogonal_matches_flax_up_to_rounding(shape):
    for seed in range(3):
        key = jax.random.key(seed)
        ours = orthogonal(1.5)(key, shape)
        theirs = nn.initializers.orthogonal(1.5)(key, shape)
        assert ours.shape == theirs.shape and ours.dtype == jnp.float32
        np.testing.assert_allclose(ours, theirs, atol=2e-5)


@pytest.mark.parametrize("shape", [(12, 5), (5, 12)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = np.asarray(orthogonal(2.0)(jax.random.key(1), shape)) / 2.0
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-5)


def test_householder_q_factorises_with_positive_diagonal():
    a = jax.random.normal(jax.random.key(2), (9, 6))
    q = householder_q(a)
    r = q.T @ a
    np.testing.assert_allclose(np.tril(r, -1), 0.0, atol=1e-5)
    assert np.all(np.diag(r) > 0)
    np.testing.assert_allclose(q @ r, a, atol=1e-5)


def test_orthogonal_rejects_vectors():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        orthogonal()(jax.random.key(0), (5,))


def test_many_vmapped_orthogonal_layers_do_not_deadlock():
    # Regression: with flax's LAPACK-based initialiser, vmapping an init with many orthogonal
    # layers over 8 seeds hung forever on 2-core CPUs (concurrent batched QR kernels blocking
    # the whole XLA thread pool; seen as MAPPO-RNN with run.num_seeds=3 never starting).
    script = textwrap.dedent(
        """
        import jax
        from jaxmarl.networks.init import orthogonal
        init = orthogonal()
        def layers(key):
            return [init(k, (64, 64)) for k in jax.random.split(key, 8)]
        out = jax.jit(jax.vmap(layers))(jax.random.split(jax.random.key(0), 8))
        jax.block_until_ready(out)
        print("done")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "done" in result.stdout
