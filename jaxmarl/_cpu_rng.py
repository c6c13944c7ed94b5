"""Faster random numbers on CPU: lower JAX's threefry hash unrolled there, as on GPU/TPU.

JAX lowers the threefry-2x32 hash behind ``jax.random`` as a 5-iteration ``fori_loop`` on CPU
(a smaller program, so a faster compile) and unrolled everywhere else. Inside a training
program a rollout step draws random numbers three or four times (exploration, the env's
auto-reset), so on CPU every env step runs three or four small while loops, and XLA's CPU
runtime pays a fixed cost per loop iteration and per op. The unrolled hash computes the same
bits (same rounds, same key schedule; only the loop is written out), so registering JAX's own
unrolled lowering for CPU changes no random number, only speed: the QMIX update on MPE
simple_spread rolls out its 25 steps in ~1.0 ms instead of ~1.35 ms on a 2-core CPU.

It is still a different program, and XLA may fuse and order the floating-point work around the
draws differently. A single-seed QMIX run on MPE (100 updates, 20k env steps, checked) ends
with bit-identical parameters either way; with 3 seeds vmapped over 3 host devices the first
learning update's loss already differs in its last bits, and a chaotic 2e6-step run then ends
elsewhere (as with any XLA or jaxlib upgrade). Results compare across this setting only in
distribution, not bit for bit.

``import jaxmarl`` applies it (``apply()``) unless ``JAXMARL_ROLLED_THREEFRY=1`` is set. It
uses two JAX internals (the primitive and its out-of-line unrolled lowering rule); if a JAX
version moves them, nothing is changed and JAX's default stays in place.
"""

from __future__ import annotations

import os

OPT_OUT_VARIABLE = "JAXMARL_ROLLED_THREEFRY"
_applied = False


def apply() -> bool:
    """Register the unrolled threefry lowering for CPU; returns whether it is in place.

    Idempotent. Programs already compiled keep their lowering; call before ``jax.jit`` runs.
    """
    global _applied
    if _applied:
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
    _applied = True
    return True


def applied() -> bool:
    """Whether ``apply`` registered the unrolled lowering in this process."""
    return _applied
