#!/usr/bin/env bash
# How often does JaxMARL's own 512-wide QMIX collapse on SMAX 3m? Ours collapsed on 1 of 6 seeds
# in each arm of smax_truncation_ablation.sh / smax_soft_target.sh (2026-11-26, H200), the same
# seed each time; JaxMARL's 3 published-settings seeds did not, and 0 of 3 is what a 1-in-6 rate
# gives 58% of the time. This runs more JaxMARL seeds (PRNGKey(FIRST..)), at most 3 per process
# and only as many as the time left should fit, so that the call's limit loses no finished
# seed. Needs benchmarks/device/setup.sh (both sides) and .peer_scripts carried
# (device/prepare.sh). Writes $OUT/jaxmarl-3m-qmix-from<k>.json; join them with
#
#   python benchmarks/smax_vs_jaxmarl.py compare OUT/jaxmarl-3m-qmix-from*.json --md table.md
#
#   bash benchmarks/device/smax_peer_collapse_rate.sh [FIRST SEEDS SECONDS STEPS]
#
# On one H100 (2026-11-24) JaxMARL's 3 seeds of 999,424 steps took 59 s to compile and 257 s to
# train (86 s a seed, one after another in one process): with the default 540 s, 3 seeds and
# then 1 more.
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
