"""Test-wide settings.

A persistent XLA compilation cache: many tests build the same programs again (a fresh
``jax.jit`` per test, a resumed run recompiling its chunk), and compiling dominates the suite's
time on a 2-core CPU. Programs are keyed by their HLO, so the cache never changes results.
"""

import os
import tempfile

import jax

_CACHE = os.environ.get(
    "JAXMARL_TEST_COMPILATION_CACHE", os.path.join(tempfile.gettempdir(), "jaxmarl-xla-cache")
)
jax.config.update("jax_compilation_cache_dir", _CACHE)
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
