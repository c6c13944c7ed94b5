# Shared by the GPU scripts in this folder (sourced, not run): where the repository and the
# output folder are, which GPU this is, and how our side of a SMAX Q-learning run is started.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp/out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu=${gpu:-$(hostname)}
mkdir -p "$out"
export PYTHONUNBUFFERED=1

# pack NAME DIR: DIR (a folder under /tmp the script wrote) as one archive, $out/NAME.tgz,
# checkpoints left out. A device call returns at most 8 files and none more than 2 folders
# below $OUT, which a learning run's folder or several throughput tables exceed. Call it after
# each step, so that a call stopped later still returns what finished.
pack() {
    tar czf "$out/$1.tgz" --exclude=checkpoints -C "$(dirname "$2")" "$(basename "$2")"
}

# run_ours SECONDS NAME [smax_vs_jaxmarl.py arguments ...]: our side, stopped at SECONDS, into
# $out/NAME.json, its greedy evaluations into $out/NAME-eval.jsonl (kept even if it was stopped).
run_ours() {
    local seconds=$1 name=$2 run_dir
    shift 2
    run_dir=$(mktemp -d -u /tmp/run_ours_XXXX)
    timeout "$seconds" /tmp/venv_ours/bin/python "$repo/benchmarks/smax_vs_jaxmarl.py" \
        --side ours --eval-every 1 --run-dir "$run_dir" --out "$out/$name.json" "$@" 2>&1 | tail -2
    cp "$run_dir/eval.jsonl" "$out/$name-eval.jsonl" 2>/dev/null
}
