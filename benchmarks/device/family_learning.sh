#!/usr/bin/env bash
# GPU queue item 4 for the new families: one learning comparison at the published horizon,
# ours then JaxMARL's own script (one side at a time), through the family's driver. Needs
# benchmarks/device/setup.sh to have run and JaxMARL's scripts in /tmp/peer_scripts/IPPO/
# (carry .peer_scripts, filled by device/prepare.sh, and `cp -r .peer_scripts /tmp/peer_scripts`
# first). Our side is stopped at SECONDS, JaxMARL's at PEER_SECONDS (default SECONDS; its
# scripts run their seeds one after another, ours vmaps them); a side stopped at its limit
# leaves no record. The run folders come back as $OUT/<what>.tgz (unpack it, then the driver's
# --report-only --out-dir <what> turns them into its results file on the workstation).
#
#   bash benchmarks/device/family_learning.sh WHAT [STEPS SECONDS PEER_SECONDS]
#
# ROOT_SEED=S in the environment passes --seed S to the driver (more seeds to pool with a
# finished run: the driver's --report-only --pool), as <what>-seed<S>. JaxNav trains at the
# JaxNav paper's batch, 256 envs x 512 steps per update (JAXNAV_BATCH="ENVS STEPS" changes it;
# the CPU runs of 2026-11-28 used "64 128").
#
# WHAT: overcooked-<layout> (v1, ippo_ff_overcooked, published 5e6 steps), overcooked_v2
# (cramped_room_v2, ippo_rnn_overcooked_v2), hanabi (ippo_ff_hanabi; its published 1e10 steps
# do not fit a call: give STEPS), jaxnav (JaxMARL's generic ippo_rnn.py on its JaxNav; give
# STEPS, e.g. 10000000). Unmeasured on a GPU: size SECONDS to the call.
set -uo pipefail
what=${1:?overcooked-<layout> | overcooked_v2 | hanabi | jaxnav}
steps=${2:-} seconds=${3:-270}
peer_seconds=${4:-$seconds}
source "$(dirname "$0")/common.sh"
py=/tmp/venv_ours/bin/python
peer=(--peer-python /tmp/venv_peer/bin/python --peer-scripts /tmp/peer_scripts)
name=$what
seed_args=()
if [ -n "${ROOT_SEED:-}" ]; then
    case $what in
        overcooked* | hanabi | jaxnav) seed_args=(--seed "$ROOT_SEED") name=$what-seed$ROOT_SEED ;;
        *) echo "ROOT_SEED: $what's driver has no --seed" && exit 2 ;;
    esac
fi
case $what in
    overcooked-*) steps=${steps:-5000000} ;;
    hanabi | jaxnav) [ -n "$steps" ] || { echo "$what needs STEPS" && exit 2; } ;;
esac
dir=/tmp/family_learning/$name
step_args=()
[ -n "$steps" ] && step_args=(--steps "$steps")
for side in ours jaxmarl; do
    case $what in
        overcooked-*)
            driver=overcooked_ippo_vs_jaxmarl.py
            args=(--layouts "${what#overcooked-}" "${step_args[@]}" --sides "$side") ;;
        overcooked_v2)
            driver=overcooked_ippo_vs_jaxmarl.py
            args=(--workload v2 --layouts cramped_room_v2 "${step_args[@]}" --sides "$side") ;;
        hanabi)
            driver=hanabi_ippo_vs_jaxmarl.py
            args=("${step_args[@]}" --sides "$side") ;;
        jaxnav)
            driver=jaxnav_ippo_vs_jaxmarl.py
            read -r jaxnav_envs jaxnav_steps <<< "${JAXNAV_BATCH:-256 512}"
            args=("${step_args[@]}" --num-envs "$jaxnav_envs" --num-steps "$jaxnav_steps"
                --sides "$side") ;;
        *) echo "unknown: $what" && exit 2 ;;
    esac
    limit=$seconds
    [ "$side" = jaxmarl ] && limit=$peer_seconds
    timeout "$limit" "$py" "$repo/benchmarks/$driver" "${args[@]}" "${seed_args[@]}" "${peer[@]}" \
        --out-dir "$dir" 2>&1 | tail -n 6
    pack "$name" "$dir"
done
