#!/usr/bin/env bash
# GPU queue item 3: env steps/s at 4k, 16k and 65k envs for the families the H100 table in
# benchmarks/results/env_throughput.md does not have yet, ours next to JaxMARL 0.2.0 (one side at
# a time, alternating per cell: env_throughput.py). Needs benchmarks/device/setup.sh to have run.
# Writes throughput-<name>.md (+ .json) per family, returned as one archive,
# $OUT/throughput.tgz; stops starting new families once BUDGET seconds have passed, so a call
# returns with what finished.
#
#   bash benchmarks/device/env_throughput.sh [BUDGET FAMILY ...]
#
# FAMILY names (default all, in this order): overcooked overcooked_v2 hanabi coin_game
# switch_riddle storm_2p storm jaxnav; not in the default: storm_8p (`storm` with 8 players,
# ours only), mabrax (ant_4x2, each library's default pipeline: ours MJX, JaxMARL's
# positional) and mabrax_mjx (both on MJX), the last two only where setup.sh had .whl/mujoco.
# JaxMARL's `storm` draws its start cells from a 700 KB table per env (its section in the
# results file), so `storm` (2 players, the id's default) runs ours only.
set -uo pipefail
budget=${1:-420}
shift || true
families=("$@")
[ ${#families[@]} -eq 0 ] && families=(overcooked overcooked_v2 hanabi coin_game switch_riddle storm_2p storm jaxnav)
source "$(dirname "$0")/common.sh"
start=$SECONDS
tables=/tmp/throughput
mkdir -p "$tables"
for family in "${families[@]}"; do
    if [ $((SECONDS - start)) -ge "$budget" ]; then
        echo "budget of $budget s spent: not started: $family" && continue
    fi
    peer=(--peer /tmp/venv_peer/bin/python)
    envs=("$family") kwargs=()
    case $family in
        overcooked) envs=(overcooked/cramped_room overcooked/counter_circuit) ;;
        overcooked_v2) kwargs=(--env-kwargs '{"layout": "cramped_room_v2"}') ;;
        storm) peer=() ;;
        mabrax) envs=(ant_4x2) ;;
        mabrax_mjx) envs=(ant_4x2) kwargs=(--env-kwargs '{"backend": "mjx"}') ;;
        storm_8p) envs=(storm) peer=() kwargs=(--env-kwargs '{"num_agents": 8}') ;;
    esac
    timeout $((budget + 120 - (SECONDS - start))) /tmp/venv_ours/bin/python \
        "$repo/benchmarks/env_throughput.py" --envs "${envs[@]}" "${kwargs[@]}" \
        --batches 4096 16384 65536 --steps 50 --repeats 2 --timeout 150 \
        --ours /tmp/venv_ours/bin/python "${peer[@]}" --out "$tables/throughput-$family.md" \
        2>&1 | grep -v "^running" | tail -n 12
    pack throughput "$tables"
done
