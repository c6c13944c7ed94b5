"""benchmarks/tensorboard_seed_view.py on event files written by the run logger's dashboard rows."""

import pytest

pytest.importorskip("tensorboardX", reason="the tensorboard extra")

from jaxmarl.training.host.logging import TensorBoardLogger, dashboard_row  # noqa: E402
from tests.benchmark_scripts import load_benchmark_script  # noqa: E402

RETURNS = (0, 1, 2, 10)  # one outlying seed: the IQM (middle two) differs from the mean


def test_every_seed_tag_and_the_aggregates_come_back(tmp_path, capsys):
    view = load_benchmark_script("tensorboard_seed_view")
    run_dir = tmp_path / "run"
    with TensorBoardLogger(run_dir / "tb") as logger:
        for update in (1, 2):
            members = [
                {
                    "update": update,
                    "env_steps": 8 * update,
                    "seed": s,
                    "episode_return": RETURNS[s] - update,
                }
                for s in range(4)
            ]
            logger.log(update, dashboard_row(members))
    png = tmp_path / "seeds.png"
    assert view.main(["--run-dir", str(run_dir), "--png", str(png)]) == 0
    table = capsys.readouterr().out
    for s in range(4):
        assert f"| `episode_return/seed_{s}` | 2 | 1-2 | {RETURNS[s] - 2} |" in table
    assert "| `episode_return/mean` | 2 | 1-2 | 1.25 |" in table
    assert "| `episode_return/iqm` | 2 | 1-2 | -0.5 |" in table  # the middle two: -1 and 0
    assert png.stat().st_size > 5_000
    with pytest.raises(SystemExit, match="no loss"):
        view.main(["--run-dir", str(run_dir), "--png", str(png), "--metric", "loss"])
