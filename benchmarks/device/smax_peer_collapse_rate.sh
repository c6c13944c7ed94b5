#!/usr/bin/env bash
# How often does JaxMARL's own 512-wide QMIX collapse on SMAX 3m? Ours collapsed on 1 of 6 seeds
# in each arm of smax_truncation_ablation.sh / smax_soft_target.sh (2026-11-26, H200), the same
# seed each time; JaxMARL's 3 published-settings seeds did not, and 0 of 3 is what a 1-in-6 rate
# gives 58% of the time. This runs more JaxMARL seeds (PRNGKey(FIRST..)), one process per seed so
# that the call's time limit loses at most the seed in flight. Needs benchmarks/device/setup.sh
# (both sides) and .peer_scripts carried. Writes $OUT/jaxmarl-3m-qmix-seed<k>.json; join them with
#
#   python benchmarks/smax_vs_jaxmarl.py compare OUT/jaxmarl-3m-qmix-seed*.json --md table.md
#
#   bash benchmarks/device/smax_peer_collapse_rate.sh [FIRST SEEDS SECONDS]
#
# On one H100 a JaxMARL seed of 999,424 steps took ~85 s plus ~20 s to start and compile, so 5
# seeds fit one 10-minute call.
set -uo pipefail
first=${1:-3} seeds=${2:-5} seconds=${3:-540}
source "$(dirname "$0")/common.sh"
mkdir -p /tmp/peer_scripts && cp -r "$repo/.peer_scripts/." /tmp/peer_scripts/
start=$SECONDS
for seed in $(seq "$first" $((first + seeds - 1))); do
    left=$((seconds - (SECONDS - start)))
    [ "$left" -gt 60 ] || { echo "time spent: not started: seed $seed"; continue; }
    (cd /tmp && timeout "$left" /tmp/venv_peer/bin/python -I "$repo/benchmarks/smax_vs_jaxmarl.py" \
        --side jaxmarl --alg qmix --scenario 3m --steps 999424 --seeds 1 --first-seed "$seed" \
        --out "$out/jaxmarl-3m-qmix-seed$seed.json" --note "collapse rate, on $gpu" 2>&1 | tail -2)
done
