"""Every example notebook runs top to bottom (what a newcomer tries first) and prints its
training summary line."""

from pathlib import Path

import nbclient
import nbformat
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("notebook", sorted(EXAMPLES.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_runs(notebook, tmp_path):
    nb = nbformat.read(notebook, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "first / last return:" in text
