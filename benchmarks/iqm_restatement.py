"""Restate the ours-vs-JaxMARL comparisons with IQM, 95% stratified-bootstrap intervals and the
probability of improvement (``jaxmarl.stats``), from the per-seed scores in
``per_seed_finals.json``.

One test per comparison, stated before looking: ours is ahead when the 95% interval of
P(ours > JaxMARL) lies above 0.5, behind when it lies below, and otherwise the comparison does
not separate the two at this number of seeds. With 3 seeds a side the bootstrap intervals are
wide; they say how little three seeds can show.

    python benchmarks/iqm_restatement.py --out benchmarks/results/iqm_summary.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxmarl import stats

HERE = Path(__file__).resolve().parent


def verdict(improvement: stats.Estimate) -> str:
    if improvement.low > 0.5:
        return "ours ahead"
    if improvement.high < 0.5:
        return "JaxMARL ahead"
    return "not separated"


def restate(data: dict, reps: int, seed: int) -> str:
    lines = [
        "| comparison | metric | seeds (ours / JaxMARL) | IQM ours [95% CI] | IQM JaxMARL [95% CI] "
        "| P(ours > JaxMARL) [95% CI] | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in data["comparisons"]:
        scores = {"ours": item["ours"], "jaxmarl": item["jaxmarl"]}
        table = stats.aggregate_table(scores, ("IQM",), reps=reps, seed=seed)
        improvement = stats.probability_of_improvement(
            item["ours"], item["jaxmarl"], reps=reps, seed=seed
        )
        lines.append(
            f"| {item['name']} | {item['metric']} | {len(item['ours'])} / {len(item['jaxmarl'])} "
            f"| {table['ours']['IQM']} | {table['jaxmarl']['IQM']} | {improvement} "
            f"| {verdict(improvement)} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "per_seed_finals.json")
    parser.add_argument("--reps", type=int, default=20000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="Markdown file to write")
    args = parser.parse_args()
    table = restate(json.loads(args.data.read_text()), args.reps, args.seed)
    print(table)
    if args.out:
        header = (
            "# Ours against JaxMARL 0.2.0, restated with IQM and stratified-bootstrap intervals\n\n"
            "Workload: `benchmarks/iqm_restatement.py` over the per-seed scores in "
            "`benchmarks/per_seed_finals.json` (each row names its source). "
            f"{args.reps} bootstrap resamples, seed {args.seed}. The test, stated before "
            "computing: 'ours ahead' when the 95% interval of P(ours > JaxMARL) lies above 0.5, "
            "'JaxMARL ahead' below, 'not separated' otherwise.\n\n"
        )
        args.out.write_text(header + table + "\n")


if __name__ == "__main__":
    main()
