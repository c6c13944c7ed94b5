#!/usr/bin/env bash
# Does bootstrapping at SMAX's time limit let our 512-wide QMIX collapse into a stalling policy?
# (benchmarks/results/smax_q_vs_jaxmarl.md: one of 3 seeds on 3m fell from a 0.72 greedy win
# rate to 0.05, with greedy episodes of 80-94 of the 100 steps.) Runs our published-settings
# preset twice with the same seeds, vmapped in one program: bootstrap_truncation=true (our
# default) and false (a time limit counts as a termination, which is roughly what JaxMARL's
# scripts end up doing). Needs benchmarks/device/setup.sh to have run. Writes
# $OUT/ours-<scenario>-qmix-bootstrap-{true,false}.json and their eval.jsonl files; compare with
#
#   python benchmarks/smax_vs_jaxmarl.py compare OUT/ours-3m-qmix-bootstrap-*.json --md table.md
#
#   bash benchmarks/device/smax_truncation_ablation.sh [SCENARIO STEPS SEEDS SECONDS_EACH]
#
# On one H100: 3 seeds of 999,424 steps took 33 s to compile and 65 s to train (2026-11-24),
# so 6 seeds x 2 settings fit one 10-minute call.
set -uo pipefail
scenario=${1:-3m} steps=${2:-999424} seeds=${3:-6} each_s=${4:-280}
source "$(dirname "$0")/common.sh"
for bootstrap in true false; do
    run_ours "$each_s" "ours-$scenario-qmix-bootstrap-$bootstrap" --alg qmix \
        --scenario "$scenario" --steps "$steps" --seeds "$seeds" \
        --ours-override "bootstrap_truncation=$bootstrap" \
        --note "truncation ablation, $seeds seeds on $gpu"
done
