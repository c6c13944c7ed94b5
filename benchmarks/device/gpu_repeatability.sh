#!/usr/bin/env bash
# Do two runs of the same seeds repeat on this GPU, and do they with XLA's deterministic ops?
# Two H200 runs of Hanabi IPPO-FF with the same seeds and settings did not
# (benchmarks/results/hanabi_ippo_vs_jaxmarl.md). This trains our Hanabi IPPO-FF preset (1024
# envs x 128 steps, lr constant) for UPDATES updates x SEEDS seeds four times, each in a fresh
# process: twice as it is, twice with XLA_FLAGS=--xla_gpu_deterministic_ops=true. It compares
# each pair's metrics.jsonl row by row and writes $OUT/repeatability.md: rows identical, the
# largest difference of a seed's return at the last update, and the training env steps/s of
# each run (the flag's cost). Needs benchmarks/device/setup.sh (ours).
#
#   bash benchmarks/device/gpu_repeatability.sh [UPDATES SEEDS]
#
# OVERRIDES (environment, optional): more key=value overrides for every run, e.g.
# OVERRIDES="env.num_envs=16" for a quick check of the script on a CPU.
set -uo pipefail
updates=${1:-64} seeds=${2:-3}
source "$(dirname "$0")/common.sh"
py=/tmp/venv_ours/bin/python
runs=/tmp/repeatability
rm -rf "$runs"
read -r -a overrides <<<"${OVERRIDES:-}"
num_envs=1024
for o in "${overrides[@]}"; do [[ $o == env.num_envs=* ]] && num_envs=${o#env.num_envs=}; done
for name in plain-1 plain-2 deterministic-1 deterministic-2; do
    flags=${XLA_FLAGS:-}
    [[ $name == deterministic-* ]] && flags="$flags --xla_gpu_deterministic_ops=true"
    XLA_FLAGS=$flags timeout 140 "$py" -P -m jaxmarl.train alg=ippo env=hanabi \
        run.num_seeds="$seeds" run.total_timesteps=$((updates * num_envs * 128)) \
        run.out_dir="$runs" run.name="$name" "${overrides[@]}" --no-progress 2>&1 | tail -n 2
done
"$py" - "$runs" "$out/repeatability.md" "$gpu" <<'EOF'
import json
import sys
from pathlib import Path

runs, target, gpu = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]


def rows(name):
    path = runs / name / "metrics.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else None


def speed(name):
    path = runs / name / "summary.md"
    if not path.exists():
        return "did not finish"
    for line in path.read_text().splitlines():
        if line.startswith("| training env steps/s"):
            return line.split("|")[2].strip()
    return "?"


lines = [f"# Same seeds, two runs each ({gpu})", "",
         "| pair | rows identical | largest return difference at the last update | env steps/s |",
         "|---|---:|---:|---|"]
for kind in ("plain", "deterministic"):
    a, b = rows(f"{kind}-1"), rows(f"{kind}-2")
    if a is None or b is None:
        lines.append(f"| {kind} | did not finish | | {speed(kind + '-1')}, {speed(kind + '-2')} |")
        continue
    same = sum(x == y for x, y in zip(a, b))
    last = max(r["update"] for r in a)
    ret = lambda rs: {r["seed"]: r["episode_return"] for r in rs if r["update"] == last}  # noqa: E731
    gap = max(abs(ret(a)[s] - ret(b)[s]) for s in ret(a))
    lines.append(f"| {kind} | {same} of {len(a)} | {gap:.4g} | {speed(kind + '-1')}, {speed(kind + '-2')} |")
target.write_text("\n".join(lines) + "\n")
print("\n".join(lines))
EOF
for name in plain-1 plain-2 deterministic-1 deterministic-2; do
    cp "$runs/$name/metrics.jsonl" "$out/repeatability-$name.jsonl" 2>/dev/null
done
