"""Every example notebook runs top to bottom (what a newcomer tries first) and prints its
training summary line.

A notebook whose run is sized for a reader (learning shows) has a cell tagged ``parameters``
(papermill's convention); the default suite runs it with ``SHORT_RUNS``' values, set in a cell
inserted after that one, and the nightly suite runs it as written.
"""

import re
from pathlib import Path

import nbclient
import nbformat
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
SHORT_RUNS = {"q_learning.ipynb": {"total_timesteps": 30_000}}


def parameters_cell(nb) -> int:
    """The index of the notebook's one cell tagged ``parameters``."""
    tagged = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, f"expected one cell tagged 'parameters', found {len(tagged)}"
    return tagged[0]


def with_values(nb, values: dict):
    """``nb`` with ``values`` assigned in a cell right after its parameters cell."""
    index = parameters_cell(nb)
    declared = nb.cells[index].source
    for name in values:
        assert f"{name} = " in declared, f"the parameters cell does not set {name!r}"
    source = "\n".join(f"{name} = {value!r}" for name, value in values.items())
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source))
    return nb


def run_notebook(nb, tmp_path) -> str:
    """Executes ``nb`` in a fresh kernel; returns its stream output, after checking no cell
    raised."""
    client = nbclient.NotebookClient(
        nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    return "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(notebook, tmp_path):
    nb = nbformat.read(notebook, as_version=4)
    if notebook.name in SHORT_RUNS:
        nb = with_values(nb, SHORT_RUNS[notebook.name])
    assert "first / last return:" in run_notebook(nb, tmp_path)


def greedy_gains(text: str) -> dict[str, float]:
    """Per learner, its worst seed's greedy return minus its first training return (epsilon 1:
    random play), read from the lines the notebook prints."""
    first = {m[1]: float(m[2]) for m in re.finditer(r"(\w+) first / last return: (\S+) /", text)}
    greedy = {
        m[1]: min(float(r) for r in m[2].split(","))
        for m in re.finditer(r"(\w+) greedy return per seed: \[([^\]]*)\]", text)
    }
    assert first and first.keys() == greedy.keys(), text
    return {alg: greedy[alg] - first[alg] for alg in first}


@pytest.mark.nightly
@pytest.mark.parametrize(
    "notebook", [EXAMPLES / name for name in sorted(SHORT_RUNS)], ids=lambda p: p.name
)
def test_notebook_runs_as_written(notebook, tmp_path):
    """As written, the notebook shows what its text says: every greedy policy above random."""
    nb = nbformat.read(notebook, as_version=4)
    text = run_notebook(nb, tmp_path)
    print(text)  # shown when the check fails
    gains = greedy_gains(text)
    assert all(gain > 1.0 for gain in gains.values()), gains


def test_short_run_values_replace_the_notebooks_own(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("steps = 500", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("print('first / last return:', steps)"),
    ]
    assert "first / last return: 7" in run_notebook(with_values(nb, {"steps": 7}), tmp_path)
    with pytest.raises(AssertionError, match="does not set 'other'"):
        with_values(nbformat.v4.new_notebook(cells=list(nb.cells)), {"other": 1})


def test_greedy_gains_reads_each_learners_worst_seed():
    text = (
        "iql first / last return: -26.00 / -22.00\nvdn first / last return: -25.50 / -21.00\n"
        "iql greedy return per seed: [-21.5, -24.0]\nvdn greedy return per seed: [-20.0, -19.5]\n"
    )
    assert greedy_gains(text) == {"iql": 2.0, "vdn": 5.5}
    with pytest.raises(AssertionError):
        greedy_gains(text.replace("vdn greedy", "qmix greedy"))
