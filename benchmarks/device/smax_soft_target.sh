#!/usr/bin/env bash
# Does the soft target update that ended QMIX's collapses on MPE
# (benchmarks/FINDINGS.md: tau 0.005 every update instead of a hard copy every 200 updates, the
# same time constant) also prevent the 512-wide SMAX collapse
# (benchmarks/results/smax_q_vs_jaxmarl.md)? The SMAX preset copies every 10 updates, so the
# soft update with the same time constant is tau 0.1 every update. Runs our published-settings
# QMIX preset with it; the control is the bootstrap_truncation=true arm of
# smax_truncation_ablation.sh (the preset as it is, same seeds). Needs benchmarks/device/setup.sh
# to have run. Writes $OUT/ours-<scenario>-qmix-soft-target.json and its eval.jsonl; compare with
#
#   python benchmarks/smax_vs_jaxmarl.py compare OUT/ours-3m-qmix-bootstrap-true.json \
#       OUT/ours-3m-qmix-soft-target.json --md table.md
#
#   bash benchmarks/device/smax_soft_target.sh [SCENARIO STEPS SEEDS SECONDS]
#
# Sized like one arm of smax_truncation_ablation.sh (6 seeds of 999,424 steps, ~5 minutes).
set -uo pipefail
scenario=${1:-3m} steps=${2:-999424} seeds=${3:-6} seconds=${4:-560}
source "$(dirname "$0")/common.sh"
run_ours "$seconds" "ours-$scenario-qmix-soft-target" --alg qmix \
    --scenario "$scenario" --steps "$steps" --seeds "$seeds" \
    --ours-override target_update_interval=1 --ours-override tau=0.1 \
    --note "soft target update, $seeds seeds on $gpu"
