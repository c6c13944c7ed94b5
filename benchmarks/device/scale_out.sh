#!/usr/bin/env bash
# Issue 36's GPU rows (docs/scale_out.md): the overhead of the data-parallel split on one GPU
# (the same MAPPO program with its data axis emulated two ways on that device, against the plain
# program) and, where the machine has several GPUs, the scaling from 1 to all of them. Needs
# benchmarks/device/setup.sh to have run. Writes $OUT/scale_out_emulated.md and, with >1 GPU,
# $OUT/scale_out_gpus.md; merge them into benchmarks/results/scale_out.md.
#
#   bash benchmarks/device/scale_out.sh [UPDATES REPEATS]
#
# Sized for about 2-4 minutes on one H100 (two workloads, compile included).
set -uo pipefail
updates=${1:-16} repeats=${2:-3}
source "$(dirname "$0")/common.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
/tmp/venv_ours/bin/python "$repo/benchmarks/scale_out.py" --emulate --devices 2 \
    --updates "$updates" --repeats "$repeats" --out "$out/scale_out_emulated.md"
if [ "$gpus" -gt 1 ]; then
    /tmp/venv_ours/bin/python "$repo/benchmarks/scale_out.py" --devices "$gpus" \
        --updates "$updates" --repeats "$repeats" --out "$out/scale_out_gpus.md"
fi
