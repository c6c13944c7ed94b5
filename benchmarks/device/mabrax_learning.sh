#!/usr/bin/env bash
# GPU queue item 4 for MABrax (issue 33's learning target): IPPO on ant_4x2 with the preset
# (JaxMARL's ippo_ff_mabrax settings, 1e7 env steps per seed), seeds vmapped, through
# benchmarks/mabrax_ippo.py, stopped after DEADLINE_MIN minutes. Needs benchmarks/device/setup.sh
# (ours) with .whl/mujoco carried (device/prepare.sh fills it). Writes $OUT/metrics.jsonl,
# $OUT/timing.json and the driver's report ($OUT/mabrax_ippo.md, .png): the curve so far and
# the extrapolated time of the whole horizon on this GPU (the CPU's: results/mabrax_ippo.md).
#
#   bash benchmarks/device/mabrax_learning.sh [SEEDS DEADLINE_MIN]
set -uo pipefail
seeds=${1:-3} deadline=${2:-8}
source "$(dirname "$0")/common.sh"
# No MUJOCO_GL: the GPU machine has no EGL loader (mujoco then fails at import), and
# training draws nothing (run.gif=false).
unset MUJOCO_GL
run=/tmp/mabrax_ippo
py=/tmp/venv_ours/bin/python
(cd /tmp && $py "$repo/benchmarks/mabrax_ippo.py" --out-dir "$run" --seeds "$seeds" \
    --deadline-min "$deadline")
tail -n 5 "$run/train.log"
cp "$run/timing.json" "$run"/*/metrics.jsonl "$out/" 2>/dev/null
(cd /tmp && $py "$repo/benchmarks/mabrax_ippo.py" --out-dir "$run" --report-only \
    --md "$out/mabrax_ippo.md" --png "$out/mabrax_ippo.png")
