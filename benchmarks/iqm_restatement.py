"""Restate the learning comparisons with IQM, 95% stratified-bootstrap intervals and the
probability of improvement (``jaxmarl.stats``), from the per-seed scores in
``per_seed_finals.json``.

That file holds, for every learning row of the "Where we stand" table in ``README.md``, each
arm's per-seed finals with the commit, file and key they were read from (``comparisons``: ours
against JaxMARL, with other arms of ours such as the hard target copy; ``ablations``: the
ours-against-ours comparisons ``FINDINGS.md`` rests on; ``missing``: rows whose per-seed values
are nowhere in git history, with the reason).

One test per comparison, stated before looking: A is ahead of B when the 95% interval of
P(A > B) lies above 0.5, behind when it lies below, and otherwise the comparison does not
separate the two at this number of seeds (``jaxmarl.stats.verdict``). Only ours against JaxMARL
(and, in the ablation table, the two arms named) is tested; other arms get their IQM only.
With 3 seeds a side the bootstrap intervals are wide; they say how little three seeds can show.

    python benchmarks/iqm_restatement.py --out benchmarks/results/iqm_summary.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from jaxmarl import stats

HERE = Path(__file__).resolve().parent


def iqm_estimates(arms: dict[str, list[float]], reps: int, seed: int) -> dict[str, stats.Estimate]:
    """IQM with its interval per arm; an arm of one seed has no interval and is left out."""
    usable = {name: scores for name, scores in arms.items() if len(scores) > 1}
    table = stats.aggregate_table(usable, ("IQM",), reps=reps, seed=seed)
    return {name: row["IQM"] for name, row in table.items()}


def comparisons_table(items: list[dict], reps: int, seed: int) -> str:
    lines = [
        "| comparison | metric | seeds (ours / JaxMARL) | IQM ours [95% CI] | IQM JaxMARL [95% CI] "
        "| P(ours > JaxMARL) [95% CI] | verdict | other arm of ours: IQM [95% CI] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for item in items:
        arms = {"ours": item["ours"]["scores"]}
        if "jaxmarl" in item:
            arms["jaxmarl"] = item["jaxmarl"]["scores"]
        for i, other in enumerate(item.get("other_arms", ())):
            arms[f"other{i}"] = other["scores"]
        iqm = iqm_estimates(arms, reps, seed)
        if "jaxmarl" in item:
            improvement = stats.probability_of_improvement(
                arms["ours"], arms["jaxmarl"], reps=reps, seed=seed
            )
            jaxmarl_cells = [str(iqm["jaxmarl"]), str(improvement)]
            decision = stats.verdict(improvement, "ours", "JaxMARL")
            seeds = f"{len(arms['ours'])} / {len(arms['jaxmarl'])}"
        else:
            jaxmarl_cells = [item.get("note", "not run"), "—"]
            decision = "no comparison"
            seeds = f"{len(arms['ours'])} / —"
        others = "; ".join(
            f"{other['label']}: {iqm[f'other{i}']}"
            for i, other in enumerate(item.get("other_arms", ()))
        )
        label = item["ours"].get("label")
        name = item["name"] + (f" (ours: {label})" if label else "")
        cells = [name, item["metric"], seeds, str(iqm["ours"]), *jaxmarl_cells, decision, others]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ablations_table(items: list[dict], reps: int, seed: int) -> str:
    lines = [
        "| ablation (A against B) | metric | seeds (A / B) | IQM A [95% CI] | IQM B [95% CI] "
        "| P(A > B) [95% CI] | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for item in items:
        a, b = item["a"], item["b"]
        iqm = iqm_estimates({"a": a["scores"], "b": b["scores"]}, reps, seed)
        improvement = stats.probability_of_improvement(
            a["scores"], b["scores"], reps=reps, seed=seed
        )
        cells = [
            f"{item['name']} (A: {a['label']}, B: {b['label']})",
            item["metric"],
            f"{len(a['scores'])} / {len(b['scores'])}",
            str(iqm["a"]),
            str(iqm["b"]),
            str(improvement),
            stats.verdict(improvement, "A", "B"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def restate(data: dict, reps: int, seed: int) -> str:
    parts = [
        "## Ours against JaxMARL 0.2.0",
        "",
        comparisons_table(data["comparisons"], reps, seed),
    ]
    if data.get("ablations"):
        parts += ["", "## Ablations of ours", "", ablations_table(data["ablations"], reps, seed)]
    if data.get("missing"):
        parts += ["", "## Rows without per-seed data", ""]
        parts += [f"- **{m['name']}** ({m['metric']}): {m['reason']}." for m in data["missing"]]
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "per_seed_finals.json")
    parser.add_argument("--reps", type=int, default=5000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="Markdown file to write")
    args = parser.parse_args()
    text = restate(json.loads(args.data.read_text()), args.reps, args.seed)
    print(text)
    if args.out:
        header = (
            "# Learning results restated with IQM and stratified-bootstrap intervals\n\n"
            "Workload: `benchmarks/iqm_restatement.py` over the per-seed scores in "
            "`benchmarks/per_seed_finals.json` (each arm names the commit, file and key it was "
            f"read from). {args.reps} bootstrap resamples, seed {args.seed}. The test, stated "
            "before computing: A is ahead when the 95% interval of P(A > B) lies above 0.5, "
            "B ahead when it lies below, 'not separated' otherwise. Only the arms named in "
            "a row are tested; the other arms of ours get their IQM only.\n\n"
            "With 3 seeds a side, P = 1 [1, 1] only says that all nine pairs of seeds were "
            "ordered the same way: the bootstrap cannot widen an interval that no resample "
            "changes.\n\n"
        )
        args.out.write_text(header + text + "\n")


if __name__ == "__main__":
    main()
