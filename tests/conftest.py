"""Test-wide settings.

A persistent XLA compilation cache: many tests build the same programs again (a fresh
``jax.jit`` per test, a resumed run recompiling its chunk), and compiling dominates the suite's
time on a 2-core CPU. Programs are keyed by their HLO, so the cache never changes results.
"""

import gc
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


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drops JAX's in-memory compiled programs after each test module.

    Each loaded XLA:CPU program holds a few memory mappings, and JAX's caches keep every program
    of a function that stays alive (a module-level ``jax.jit``, a cached env in a test module).
    Over a worker's share of the suite that reached the kernel's limit of mappings per process
    (65,530 by default), and XLA:CPU segfaulted in the next program it loaded (seen in CI;
    ``benchmarks/FINDINGS.md`` has the measurements and why it releases after every module).
    Later modules that need a program again read it from the persistent cache or compile it.
    """
    yield
    jax.clear_caches()
    gc.collect()
