"""benchmarks/iqm_restatement.py on hand-made per-seed finals, and the committed input's shape."""

import json
import re

import pytest

pytest.importorskip("rliable", reason="the stats extra")

from tests.benchmark_scripts import BENCHMARKS, load_benchmark_script  # noqa: E402


def arm(scores, label=None):
    return {"source": "made up", "scores": scores, **({"label": label} if label else {})}


def test_tables_verdicts_and_missing_rows():
    restatement = load_benchmark_script("iqm_restatement")
    data = {
        "comparisons": [
            {
                "name": "clear",
                "metric": "m",
                "ours": arm([5.0, 6.0, 7.0, 8.0], "preset"),
                "jaxmarl": arm([1.0, 2.0, 3.0, 4.0]),
                "other_arms": [arm([0.0, 1.0, 2.0], "old")],
            },
            {"name": "alone", "metric": "m", "ours": arm([1.0, 2.0]), "note": "not run"},
        ],
        "ablations": [
            {"name": "abl", "metric": "m", "a": arm([0.0, 1.0], "x"), "b": arm([2.0, 3.0], "y")}
        ],
        "missing": [{"name": "lost", "metric": "m", "reason": "never committed"}],
    }
    text = restatement.restate(data, reps=200, seed=0)
    rows = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| ")}
    clear = rows["| clear (ours: preset)"]
    assert "| 6.5 [" in clear and "| 2.5 [" in clear  # IQMs: the middle two of four
    assert "| 1 [1, 1] | ours ahead | old: 1 [" in clear  # every pair ordered: P = 1
    assert "| not run | — | no comparison |" in rows["| alone"]
    assert rows["| abl (A: x, B: y)"].endswith("| 0 [0, 0] | B ahead |")
    assert "- **lost** (m): never committed." in text


def test_the_committed_finals_name_their_source():
    data = json.loads((BENCHMARKS / "per_seed_finals.json").read_text())
    arms = [item[k] for item in data["comparisons"] for k in ("ours", "jaxmarl") if k in item]
    arms += [other for item in data["comparisons"] for other in item.get("other_arms", ())]
    arms += [item[k] for item in data["ablations"] for k in ("a", "b")]
    for each in arms:
        assert re.match(r"[0-9a-f]{7,40}:benchmarks/results/\S+ \S", each["source"]), each["source"]
        assert len(each["scores"]) >= 2
