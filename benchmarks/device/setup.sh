#!/usr/bin/env bash
# Builds two virtual environments on a lent GPU machine (no network there) from wheels carried
# in .whl/: /tmp/venv_ours (this jaxmarl) and /tmp/venv_peer (PyPI jaxmarl 0.2.0 + the packages
# its baseline scripts import). Both see the machine's own jax/jaxlib/CUDA/flax/optax/chex through
# a .pth file, so the two sides run on the same JAX build; each keeps its own jaxmarl, which has
# the same import name on both sides. Fill .whl/ on the workstation first (benchmarks/README.md,
# "On a lent GPU").
#
#   bash benchmarks/device/setup.sh [SIDE ...]     (default: ours peer; `ours` alone needs no
#                                                   .whl/peer, for runs of our side only)
set -euo pipefail
cd "$(dirname "$0")/../.."
base_site=$(python3 -c 'import site; print(site.getsitepackages()[0])')
sides=("$@")
[ ${#sides[@]} -gt 0 ] || sides=(ours peer)
for side in "${sides[@]}"; do
    venv=/tmp/venv_$side
    python3 -m venv --without-pip "$venv"
    site=$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')
    # Appended after the venv's own site-packages, so the carried wheels take precedence.
    echo "$base_site" >"$site/_machine_site.pth"
    # MABrax's physics (brax, MJX) only where .whl/mujoco was carried (~38 MB of wheels), on
    # both sides: JaxMARL 0.2.0's MABrax imports the same brax.
    extra=()
    [ -d .whl/mujoco ] && extra=(.whl/mujoco/*.whl)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
        --target "$site" .whl/common/*.whl ".whl/$side"/*.whl "${extra[@]}"
    "$venv/bin/python" -I -c "import jax, jaxmarl, flax, optax; print('$side', 'jaxmarl', \
jaxmarl.__version__ if hasattr(jaxmarl, '__version__') else '?', 'jax', jax.__version__, \
'flax', flax.__version__, 'optax', optax.__version__, jax.devices())"
done
