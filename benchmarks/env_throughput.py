"""Environment throughput: env steps/s and agent steps/s of jaxmarl, optionally next to JaxMARL.

For every (env id, batch size) cell the workload in ``_workload.py`` (a jitted ``lax.scan`` of
``--steps`` vmapped steps with random valid actions, after a vmapped reset) runs in a fresh
subprocess, so peak RSS is per measurement and no compile cache leaks between cells. With
``--peer /path/to/python`` the same workload file runs under that interpreter (a virtual
environment with PyPI ``jaxmarl``, which has the same import name and so needs its own process)
immediately before or after ours, alternating the order from cell to cell so machine load
affects both sides alike. Tables go to stdout and, with ``--out``, to a Markdown file with a
header describing the machine, plus the raw results as JSON next to it.

Example::

    python benchmarks/env_throughput.py --peer /tmp/peer/bin/python \\
        --out runs/bench/mpe-cpu.md

See benchmarks/README.md for setting up the peer environment and for what each column means.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORKLOAD = HERE / "_workload.py"
sys.path.insert(0, str(HERE))

from _workload import DRAWS, RESULT_MARKER  # noqa: E402

DEFAULT_BATCHES = (1, 64, 1024, 4096)


def available_env_ids(prefix: str = "MPE_") -> list[str]:
    """Registered ids starting with ``prefix`` whose implementation module exists in this tree."""
    import jaxmarl
    from jaxmarl.registry import spec

    env_ids = []
    for env_id in jaxmarl.registered_envs:
        if not env_id.startswith(prefix):
            continue
        entry_point = spec(env_id).entry_point
        if callable(entry_point):
            env_ids.append(env_id)
            continue
        try:
            found = importlib.util.find_spec(entry_point.partition(":")[0]) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            env_ids.append(env_id)
    return env_ids


def run_cell(
    python: str, env_id: str, batch: int, args: argparse.Namespace, side: str
) -> dict[str, Any]:
    """Run one measurement of ``_workload.py`` under ``python`` in a fresh process.

    ``-I`` (isolated mode) keeps the working directory and ``PYTHONPATH`` off ``sys.path``, so
    each interpreter imports its own installed ``jaxmarl`` and never this checkout by accident.
    """
    command = [
        python,
        "-I",
        str(WORKLOAD),
        env_id,
        "--batch",
        str(batch),
        "--steps",
        str(args.steps),
        "--repeats",
        str(args.repeats),
        "--min-repeat-s",
        str(args.min_repeat_s),
        "--devices",
        str(args.devices),
        "--draws",
        args.draws,
        "--json",
    ]
    if args.env_kwargs:
        command += ["--env-kwargs", json.dumps(args.env_kwargs)]
    environment = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2"}
    if args.xla_threads:
        # The size of XLA's CPU thread pool (jaxlib reads PJRT_NPROC), the same on both sides.
        environment["PJRT_NPROC"] = str(args.xla_threads)
    load_before = os.getloadavg()
    try:
        completed = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=args.timeout,
            cwd=tempfile.gettempdir(),
            env=environment,
        )
    except subprocess.TimeoutExpired:
        return _failed(env_id, batch, side, f"timed out after {args.timeout} s", load_before)
    for line in completed.stdout.splitlines():
        if line.startswith(RESULT_MARKER):
            result = json.loads(line[len(RESULT_MARKER) :])
            result["side"] = side
            result["loadavg_before"] = load_before
            result["loadavg_after"] = os.getloadavg()
            return result
    tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
    reason = f"exit code {completed.returncode}: " + " | ".join(tail)
    return _failed(env_id, batch, side, reason, load_before)


def _failed(
    env_id: str, batch: int, side: str, reason: str, load: tuple[float, ...]
) -> dict[str, Any]:
    return {
        "env_id": env_id,
        "batch": batch,
        "side": side,
        "status": "error",
        "error": reason,
        "loadavg_before": load,
    }


# ---------------------------------------------------------------------------------- formatting
def _ok(result: dict[str, Any] | None) -> bool:
    return bool(result) and result.get("status") == "ok"


def _rate(result: dict[str, Any] | None, key: str = "env_steps_per_s") -> str:
    if not result:
        return "-"
    if result.get("status") == "unavailable":
        return "n/a"
    if result.get("status") != "ok":
        return "error"
    return f"{result[key]:,.0f}"


def _seconds(result: dict[str, Any] | None) -> str:
    return f"{result['compile_total_s']:.2f}" if _ok(result) else _rate(result)


def _ratio(numerator: float | None, denominator: float | None, suffix: str = "x") -> str:
    if not numerator or not denominator:
        return "n/a"
    return f"{numerator / denominator:.2f}{suffix}"


def _mib(result: dict[str, Any] | None) -> str:
    return f"{result['peak_rss_mib']:.0f}" if _ok(result) else "-"


def _state_bytes(result: dict[str, Any] | None) -> str:
    value = (result or {}).get("state_bytes_per_env") if _ok(result) else None
    return f"{value}" if value is not None else "-"


def env_table(env_id: str, cells: list[dict[str, Any]], with_peer: bool) -> str:
    """Markdown table of one env: one row per batch size."""
    num_agents = next((c["ours"]["num_agents"] for c in cells if _ok(c["ours"])), None)
    lines = [f"### {env_id} ({num_agents} agents)", ""]
    if with_peer:
        lines += [
            "| batch | ours env steps/s | ours agent steps/s | peer env steps/s | ratio "
            "| ours compile s | peer compile s | peak RSS MiB ours / peer "
            "| state bytes/env ours / peer |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
    else:
        lines += [
            "| batch | ours env steps/s | ours agent steps/s | ours compile s | peak RSS MiB |",
            "|---:|---:|---:|---:|---:|",
        ]
    for cell in cells:
        ours, peer = cell["ours"], cell.get("peer")
        row = [str(cell["batch"]), _rate(ours), _rate(ours, "agent_steps_per_s")]
        if with_peer:
            ratio = (
                _ratio(ours["env_steps_per_s"], peer["env_steps_per_s"])
                if _ok(ours) and _ok(peer)
                else "n/a"
            )
            row += [_rate(peer), ratio, _seconds(ours), _seconds(peer)]
            row.append(f"{_mib(ours)} / {_mib(peer)}")
            row.append(f"{_state_bytes(ours)} / {_state_bytes(peer)}")
        else:
            row += [_seconds(ours), _mib(ours)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def summary_table(results: dict[str, list[dict[str, Any]]], with_peer: bool) -> str:
    """One row per env at its largest batch: throughput ratio and compile-time ratio."""
    lines = ["### Summary at the largest batch", ""]
    if with_peer:
        lines += [
            "| env | batch | ours env steps/s | peer env steps/s | ratio "
            "| ours compile s | peer compile s | peer/ours compile |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
    else:
        lines += ["| env | batch | ours env steps/s | ours compile s |", "|---|---:|---:|---:|"]
    for env_id, cells in results.items():
        cell = max(cells, key=lambda c: c["batch"])
        ours, peer = cell["ours"], cell.get("peer")
        row = [env_id, str(cell["batch"]), _rate(ours)]
        if with_peer:
            both = _ok(ours) and _ok(peer)
            row += [
                _rate(peer),
                _ratio(ours["env_steps_per_s"], peer["env_steps_per_s"]) if both else "n/a",
                _seconds(ours),
                _seconds(peer),
                _ratio(peer["compile_total_s"], ours["compile_total_s"]) if both else "n/a",
            ]
        else:
            row.append(_seconds(ours))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- machine
def _command_output(command: list[str], cwd: Path | None = None) -> str:
    try:
        return subprocess.run(
            command, capture_output=True, text=True, check=True, cwd=cwd
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_info() -> dict[str, Any]:
    """Date, host, CPU and commit, as recorded in the results header."""
    cpu_model = "unknown"
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    cpu_model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        cpu_model = platform.processor() or "unknown"
    dirty = _command_output(["git", "status", "--porcelain", "--untracked-files=no"], REPO)
    return {
        "date": _command_output(["date"]),
        "uname": _command_output(["uname", "-a"]),
        "nproc": _command_output(["nproc"]),
        "cpu_model": cpu_model,
        "commit": _command_output(["git", "rev-parse", "--short", "HEAD"], REPO),
        "commit_dirty": bool(dirty and dirty != "unknown"),
        "xla_flags": os.environ.get("XLA_FLAGS"),
    }


def _first_versions(results: dict[str, list[dict[str, Any]]], side: str) -> dict[str, Any]:
    for cells in results.values():
        for cell in cells:
            result = cell.get(side)
            if result and result.get("versions"):
                return result["versions"]
    return {}


def header(
    info: dict[str, Any], results: dict[str, list[dict[str, Any]]], args: argparse.Namespace
) -> str:
    ours, peer = _first_versions(results, "ours"), _first_versions(results, "peer")

    def describe(versions: dict[str, Any]) -> str:
        if not versions:
            return "not run"
        return (
            f"jaxmarl {versions['jaxmarl']} ({versions['jaxmarl_file']}), "
            f"python {versions['python']}, jax {versions['jax']}, jaxlib {versions['jaxlib']}, "
            f"flax {versions['flax']}, numpy {versions['numpy']}, device {versions['device']}"
        )

    loads = [
        result["loadavg_before"]
        for cells in results.values()
        for cell in cells
        for result in (cell["ours"], cell.get("peer"))
        if result
    ]
    load_1min = [load[0] for load in loads]
    dirty = " (with uncommitted changes)" if info["commit_dirty"] else ""
    lines = [
        "# Environment throughput",
        "",
        f"- date: {info['date']}",
        f"- machine: `{info['uname']}`",
        f"- CPU: {info['cpu_model']}, nproc {info['nproc']}",
        f"- commit: {info['commit']}{dirty}",
        f"- ours: {describe(ours)}",
        f"- peer: {describe(peer)}",
        f"- workload: {args.steps} steps per rollout (`lax.scan` in `jax.jit`, vmapped reset "
        f"and step, random valid actions drawn {args.draws.replace('_', ' ')}), best of "
        f"{args.repeats} repeats of at least "
        f"{args.min_repeat_s} s each; each cell in a fresh process, ours and peer back to back",
        f"- host devices: {args.devices} (the batch split evenly over that many XLA CPU devices "
        "with `shard_map`, one thread each; 1 = a plain `jit`)",
        f"- XLA CPU threads per process: "
        f"{args.xla_threads or os.environ.get('PJRT_NPROC') or 'one per core (XLA default)'}",
        f"- load average (1 min) before each measurement: min {min(load_1min, default=0):.2f}, "
        f"max {max(load_1min, default=0):.2f}, "
        f"mean {sum(load_1min) / max(len(load_1min), 1):.2f}",
        f"- XLA_FLAGS: {info['xla_flags']}",
        f"- command: `{args.command_line}`",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- main
def _progress(total: int):
    try:
        from tqdm import tqdm

        return tqdm(total=total, unit="run", file=sys.stderr, dynamic_ncols=True)
    except ImportError:
        return None


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--envs",
        nargs="+",
        help="env ids (default: every MPE id present); '<SMAX id>/<map>' picks a SMAX scenario, "
        "e.g. HeuristicEnemySMAX/3m; 'overcooked/<layout>' an Overcooked layout",
    )
    parser.add_argument("--batches", nargs="+", type=int, default=list(DEFAULT_BATCHES))
    parser.add_argument("--steps", type=int, default=100, help="steps per rollout")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats (best is kept)")
    parser.add_argument(
        "--min-repeat-s", type=float, default=0.2, help="shortest timed repeat, in seconds"
    )
    parser.add_argument("--ours", default=sys.executable, help="interpreter for this jaxmarl")
    parser.add_argument("--peer", help="interpreter with PyPI jaxmarl, e.g. /tmp/peer/bin/python")
    parser.add_argument(
        "--devices",
        type=int,
        default=1,
        help="split each batch over this many XLA host devices (both sides alike)",
    )
    parser.add_argument(
        "--env-kwargs",
        type=json.loads,
        default=None,
        help="constructor keywords for every env, as a JSON object (both sides alike), e.g. "
        '\'{"layout": "grounded_coord_simple", "agent_view_size": 2}\'',
    )
    parser.add_argument(
        "--draws",
        choices=DRAWS,
        default="per_step",
        help="per_step: actions and step keys drawn inside the scan; ahead: all drawn before "
        "it (both sides alike; see _workload.py)",
    )
    parser.add_argument(
        "--xla-threads",
        type=int,
        default=None,
        help="threads in XLA's CPU pool of every measuring process (PJRT_NPROC, both sides "
        "alike; default: XLA's, one per core)",
    )
    parser.add_argument("--timeout", type=float, default=1200, help="seconds per measurement")
    parser.add_argument("--out", type=Path, help="Markdown results file (JSON written beside)")
    args = parser.parse_args(argv)
    if args.xla_threads is not None and args.xla_threads < 1:
        parser.error(f"--xla-threads must be at least 1, got {args.xla_threads}")
    # SIGTERM as an exception, so subprocess.run kills the measuring child on the way out.
    signal.signal(signal.SIGTERM, _raise_system_exit)
    given = sys.argv[1:] if argv is None else argv
    args.command_line = shlex.join(["python", "benchmarks/env_throughput.py", *given])

    env_ids = args.envs or available_env_ids()
    if not env_ids:
        parser.error("no environments to measure (no MPE module present yet?)")
    info = machine_info()
    sides = [("ours", args.ours)] + ([("peer", args.peer)] if args.peer else [])
    progress = _progress(len(env_ids) * len(args.batches) * len(sides))
    results: dict[str, list[dict[str, Any]]] = {}
    for env_id in env_ids:
        results[env_id] = []
        for index, batch in enumerate(args.batches):
            cell: dict[str, Any] = {"batch": batch}
            # Alternate who goes first so a load spike does not always hit the same side.
            for side, python in sides if index % 2 == 0 else sides[::-1]:
                label = f"{env_id} batch {batch} {side}"
                if progress is not None:
                    progress.set_description(label)
                else:
                    print(f"running {label} ...", file=sys.stderr, flush=True)
                cell[side] = run_cell(python, env_id, batch, args, side)
                if cell[side]["status"] == "error":
                    print(f"  {label}: {cell[side]['error']}", file=sys.stderr, flush=True)
                if progress is not None:
                    progress.update(1)
            results[env_id].append(cell)
        _check_interpreters(results[env_id])
        table = env_table(env_id, results[env_id], bool(args.peer))
        if progress is not None:
            progress.write("\n" + table + "\n")
        else:
            print("\n" + table + "\n", flush=True)
    if progress is not None:
        progress.close()

    summary = summary_table(results, bool(args.peer))
    print(summary)
    if args.out:
        tables = [env_table(env_id, cells, bool(args.peer)) for env_id, cells in results.items()]
        document = "\n\n".join([header(info, results, args), summary, *tables]) + "\n"
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(document)
        raw = {"machine": info, "args": _jsonable(vars(args)), "results": results}
        args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
        print(f"\nwrote {args.out} and {args.out.with_suffix('.json')}", file=sys.stderr)
    return results


def _raise_system_exit(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def _check_interpreters(cells: list[dict[str, Any]]) -> None:
    """Warn when a side imported the other side's ``jaxmarl`` (a ``sys.path`` mix-up)."""
    for cell in cells:
        for side in ("ours", "peer"):
            result = cell.get(side) or {}
            location = (result.get("versions") or {}).get("jaxmarl_file")
            if location is None:
                continue
            inside = Path(location).resolve().is_relative_to(REPO)
            if inside != (side == "ours"):
                print(
                    f"warning: the {side} run imported jaxmarl from {location}",
                    file=sys.stderr,
                )


def _jsonable(values: dict[str, Any]) -> dict[str, Any]:
    return {
        name: str(value) if isinstance(value, Path) else value for name, value in values.items()
    }


if __name__ == "__main__":
    main()
