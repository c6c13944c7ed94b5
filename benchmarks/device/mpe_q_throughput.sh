#!/usr/bin/env bash
# GPU queue item 2: IQL and PQN-VDN on MPE simple_spread, ours against JaxMARL 0.2.0's own
# scripts (ql_rnn_mpe.yaml / pqn_vdn_rnn_mpe.yaml), one side at a time, seeds vmapped on both
# sides, as the H100 QMIX and VDN rows of benchmarks/results/mpe_q_learning_vs_jaxmarl.md were
# run. Needs benchmarks/device/setup.sh (both sides) and .peer_scripts carried (device/prepare.sh).
# Copies the driver's results.json to $OUT/mpe_q_results.json (its run folders stay on the
# machine: too deep and too many files to come back); the call's reply shows the tables.
#
#   bash benchmarks/device/mpe_q_throughput.sh [STEPS SEEDS]
#
# Sizing: benchmarks/README.md ("On a lent GPU").
set -uo pipefail
steps=${1:-400000} seeds=${2:-3}
source "$(dirname "$0")/common.sh"
mkdir -p /tmp/peer_scripts && cp -r "$repo/.peer_scripts/." /tmp/peer_scripts/
/tmp/venv_ours/bin/python "$repo/benchmarks/q_learning_vs_jaxmarl.py" --algs iql,pqn_vdn \
    --steps "$steps" --seeds "$seeds" --sides ours,jaxmarl_notest \
    --peer-python /tmp/venv_peer/bin/python --peer-scripts /tmp/peer_scripts \
    --out-dir /tmp/mpe_q 2>&1 | tail -n 25
cp /tmp/mpe_q/results.json "$out/mpe_q_results.json"
