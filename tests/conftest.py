"""Test-wide settings.

A persistent XLA compilation cache: many tests build the same programs again (a fresh
``jax.jit`` per test, a resumed run recompiling its chunk), and compiling dominates the suite's
time on a 2-core CPU. Programs are keyed by their HLO, so the cache never changes results.
"""

import os
import tempfile

# Tests compile hundreds of small XLA programs and run each for milliseconds, so LLVM's
# optimisation passes cost far more than they save (about 40% of a compile-bound test's time).
# They change code generation, not semantics: the programs' results are the same (parity tests
# against recorded reference trajectories run under this flag too). Benchmarks and training
# never set it. Must be set before JAX creates its CPU backend.
os.environ["XLA_FLAGS"] = " ".join(
    filter(None, [os.environ.get("XLA_FLAGS", ""), "--xla_backend_optimization_level=0"])
)

import jax  # noqa: E402
import pytest  # noqa: E402
from jax.experimental.compilation_cache import compilation_cache  # noqa: E402

_CACHE = os.environ.get(
    "JAXMARL_TEST_COMPILATION_CACHE", os.path.join(tempfile.gettempdir(), "jaxmarl-xla-cache")
)
jax.config.update("jax_compilation_cache_dir", _CACHE)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

# The train command opts in to the unrolled CPU threefry lowering (jaxmarl.cpu_rng), and the
# learners are tested as it runs them. Opting in once here, before any test compiles, also keeps
# the suite order-independent: the CLI tests call train.main in this process, which would
# otherwise switch the process-wide lowering midway and change the programs of every later
# test. What a plain ``import jaxmarl`` does is tested in subprocesses (tests/test_cpu_rng.py).
from jaxmarl.cpu_rng import use_fast_cpu_rng  # noqa: E402

use_fast_cpu_rng()

# A test whose worker process crashes runs once more, and the crash's stack is printed.
pytest_plugins = ["tests.worker_crashes"]


@pytest.fixture
def without_persistent_cache():
    """Compile this test's programs afresh, neither reading nor writing the persistent cache.

    XLA:CPU sometimes segfaults while loading a large cached executable (in
    ``backend.deserialize_executable``; seen twice in full-suite runs, both times on the swept
    Q-learning chunk of tests/training/test_sweep.py). The cache entries themselves are intact:
    they are zlib streams, so a torn one would be a caught exception, not a crash.
    """
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()  # the cache's on/off state is memoised at first use
    yield
    jax.config.update("jax_enable_compilation_cache", True)
    compilation_cache.reset_cache()
