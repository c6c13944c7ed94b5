"""Opt-in faster random numbers on CPU: lower JAX's threefry hash unrolled, as on GPU/TPU.

JAX lowers the threefry-2x32 hash behind ``jax.random`` as a small loop on CPU (a smaller
program, so a faster compile) and unrolled on every other backend. A training program draws
random numbers several times per env step, and XLA's CPU runtime pays a fixed cost per loop
iteration, so the unrolled form runs faster there. Both forms compute the same bits; the rest
of a compiled program may still be fused and rounded differently, so a run is reproducible bit
for bit only under the same setting. ``docs/cpu_rng.md`` has the measurements.

It changes how JAX lowers threefry for the whole process, so the library never applies it on
import: ``python -m jaxmarl.train`` calls ``use_fast_cpu_rng()`` before it compiles anything,
and scripts that build learners themselves may do the same. ``JAXMARL_ROLLED_THREEFRY=1`` makes
the call a no-op, to reproduce a run recorded with JAX's default lowering without editing code.

It uses two JAX internals (the primitive and its unrolled lowering rule); if a JAX version moves
them, nothing is changed and JAX's default stays in place.
"""

from __future__ import annotations

import os

OPT_OUT_VARIABLE = "JAXMARL_ROLLED_THREEFRY"
_in_use = False


def use_fast_cpu_rng() -> bool:
    """Lower threefry unrolled on CPU for the rest of this process; returns whether it is.

    Idempotent. Programs already compiled keep their lowering, so call it before ``jax.jit``
    runs. Returns False, changing nothing, when ``JAXMARL_ROLLED_THREEFRY`` is set to anything
    but ``0`` or when this JAX version lacks the internals it uses.
    """
    global _in_use
    if _in_use:
        return True
    if os.environ.get(OPT_OUT_VARIABLE, "") not in ("", "0"):
        return False
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as threefry
    except ImportError:
        return False
    primitive = getattr(threefry, "threefry2x32_p", None)
    unrolled_rule = getattr(threefry, "_threefry2x32_lowering_rule", None)
    if primitive is None or unrolled_rule is None:
        return False
    # ``inline=False``: one out-of-line function per call site, as JAX emits it elsewhere.
    mlir.register_lowering(primitive, unrolled_rule, platform="cpu", inline=False)
    _in_use = True
    return True


def fast_cpu_rng_in_use() -> bool:
    """Whether ``use_fast_cpu_rng`` registered the unrolled lowering in this process."""
    return _in_use
