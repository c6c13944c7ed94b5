#!/usr/bin/env bash
# One SMAX Q-learning comparison on a lent GPU, one side at a time: ours (seeds vmapped in one
# program), then JaxMARL 0.2.0's script (seeds one after another), both with JaxMARL's published
# ql_rnn_smax.yaml settings (512 wide, no overrides). Needs benchmarks/device/setup.sh
# to have run and .peer_scripts carried. Writes $OUT/{ours,jaxmarl}-<scenario>-<alg>.json and our
# eval.jsonl; each side is stopped at its time limit so the call ends inside the 10-minute limit.
#
#   bash benchmarks/device/smax_q_pair.sh ALG SCENARIO STEPS [OURS_SECONDS PEER_SECONDS]
#
# At the published 512 wide on one H100 (2026-11-24, 3m): ours ~0.13 s per update for 3 seeds,
# JaxMARL ~0.17 s per update per seed, so 999,424 steps (488 updates) take ~1.5 min + compile
# for ours and ~4.5 min + compile for JaxMARL's 3 seeds. 2s3z costs more per step.
set -uo pipefail
alg=$1 scenario=$2 steps=$3 ours_s=${4:-200} peer_s=${5:-330}
source "$(dirname "$0")/common.sh"
note="one side at a time on $gpu"
mkdir -p /tmp/peer_scripts && cp -r "$repo/.peer_scripts/." /tmp/peer_scripts/
run_ours "$ours_s" "ours-$scenario-$alg" --alg "$alg" --scenario "$scenario" --steps "$steps" \
    --seeds 3 --note "$note"
(cd /tmp && timeout "$peer_s" /tmp/venv_peer/bin/python -I "$repo/benchmarks/smax_vs_jaxmarl.py" \
    --side jaxmarl --alg "$alg" --scenario "$scenario" --steps "$steps" --seeds 3 \
    --out "$out/jaxmarl-$scenario-$alg.json" --note "$note" 2>&1 | tail -4)
