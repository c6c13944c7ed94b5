#!/usr/bin/env bash
# How often does JaxMARL's own 512-wide QMIX collapse on SMAX 3m? Ours collapsed on one seed in
# each arm of smax_truncation_ablation.sh / smax_soft_target.sh, and JaxMARL's 3 seeds are too
# few to show its own rate (benchmarks/results/smax_q_vs_jaxmarl.md). This runs more JaxMARL
# seeds (PRNGKey(FIRST..)), at most 3 per process and only as many as the time left should fit,
# so that the call's limit loses no finished seed. Needs benchmarks/device/setup.sh (both sides)
# and .peer_scripts carried (device/prepare.sh). Writes $OUT/jaxmarl-3m-qmix-from<k>.json; join
# them with
#
#   python benchmarks/smax_vs_jaxmarl.py compare OUT/jaxmarl-3m-qmix-from*.json --md table.md
#
#   bash benchmarks/device/smax_peer_collapse_rate.sh [FIRST SEEDS SECONDS STEPS]
#
# PER_SEED_S and START_S (seconds a seed trains; seconds a process takes to start and compile)
# size the processes; their defaults come from the H100 timings in benchmarks/README.md
# ("On a lent GPU").
set -uo pipefail
first=${1:-3} seeds=${2:-5} seconds=${3:-540} steps=${4:-999424}
per_seed_s=${PER_SEED_S:-90} start_s=${START_S:-75}
source "$(dirname "$0")/common.sh"
mkdir -p /tmp/peer_scripts && cp -r "$repo/.peer_scripts/." /tmp/peer_scripts/
start=$SECONDS seed=$first last=$((first + seeds - 1))
while [ "$seed" -le "$last" ]; do
    left=$((seconds - (SECONDS - start)))
    fit=$(((left - start_s) / per_seed_s))
    n=$((last - seed + 1))
    [ "$n" -gt 3 ] && n=3
    [ "$n" -gt "$fit" ] && n=$fit
    [ "$n" -ge 1 ] || { echo "time spent: seeds $seed-$last not started"; break; }
    (cd /tmp && timeout "$left" /tmp/venv_peer/bin/python -I "$repo/benchmarks/smax_vs_jaxmarl.py" \
        --side jaxmarl --alg qmix --scenario 3m --steps "$steps" --seeds "$n" --first-seed "$seed" \
        --out "$out/jaxmarl-3m-qmix-from$seed.json" --note "collapse rate, on $gpu" 2>&1 | tail -2)
    seed=$((seed + n))
done
