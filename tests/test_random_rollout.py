"""``python -m jaxmarl.random_rollout`` on every registered id, in-process through ``main``.

Each id compiles one tiny rollout (2 envs x 2 steps, one repeat); the first id of each family
also draws a 3-step GIF with the family's renderer (that is the slow part), the others run with
``--no-gif``. Bad input exits with status 2 and one message.
"""

from __future__ import annotations

import importlib
import json

import pytest

import jaxmarl
from jaxmarl import random_rollout
from jaxmarl.registry import spec
from tests.test_env_contract import NIGHTLY_IDS

ENV_IDS = list(jaxmarl.registered_envs)


def _family(env_id):
    return spec(env_id).entry_point.partition(":")[0].rsplit(".", 1)[0]


# The first id of each family with a renderer (``save_gif``) draws a GIF; HeuristicEnemySMAX was
# the id that crashed in the MPE renderer, so SMAX's GIF is drawn for it.
GIF_IDS = {
    _family(i): i
    for i in reversed(ENV_IDS)
    if "save_gif" in getattr(importlib.import_module(_family(i)), "__all__", ())
}
GIF_IDS[_family("HeuristicEnemySMAX")] = "HeuristicEnemySMAX"
GIF_IDS = set(GIF_IDS.values())

TINY = ["--num-envs", "2", "--steps", "2", "--repeats", "1"]


@pytest.mark.parametrize(
    "env_id",
    # Multi-agent MuJoCo compiles MJX physics for minutes on CI's CPU: nightly (as in the
    # contract suite, which lists them).
    [pytest.param(i, marks=pytest.mark.nightly) if i in NIGHTLY_IDS else i for i in ENV_IDS],
)
def test_every_registered_id_runs(env_id, tmp_path, capsys):
    gif = env_id in GIF_IDS
    argv = ["--env", env_id, *TINY, "--out", str(tmp_path)]
    argv += ["--gif-steps", "3"] if gif else ["--no-gif"]
    summary = random_rollout.main(argv)
    assert summary["env_steps_per_s"] > 0
    assert json.loads((tmp_path / "summary.json").read_text())["env"] == env_id
    assert (tmp_path / "summary.md").exists()
    if gif:
        assert (tmp_path / "episode.gif").stat().st_size > 0
        assert summary["gif"] == str(tmp_path / "episode.gif")
    assert "wrote" in capsys.readouterr().out


def test_env_kwargs_reach_the_env(tmp_path):
    argv = ["--env", "MPE_simple_spread_v3", *TINY, "--no-gif", "--out", str(tmp_path)]
    summary = random_rollout.main([*argv, "--env-kwargs", '{"num_agents": 2}'])
    assert summary["num_agents"] == 2 and summary["env_kwargs"] == {"num_agents": 2}


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--env", "Nope"], "unknown environment id 'Nope'"),
        (["--env", "SMAX", "--env-kwargs", '{"scenario": "zz"}'], "unknown SMAX scenario"),
        (["--env", "SMAX", "--env-kwargs", '{"bogus": 1}'], "unknown argument 'bogus'"),
        (["--env", "SMAX", "--env-kwargs", '{"scenario": '], "not valid JSON"),
        (["--env", "SMAX", "--env-kwargs", "scenario=3m"], "not valid JSON"),
        (["--env", "SMAX", "--env-kwargs", "[1]"], "must be a JSON object"),
        (["--steps", "0"], "must be >= 1"),
    ],
)
def test_bad_input_exits_2_with_one_message(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        random_rollout.main([*argv, "--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "error:" in line]) == 1
    assert not (tmp_path / "out").exists()


def test_help_documents_env_kwargs(capsys):
    with pytest.raises(SystemExit) as exit_info:
        random_rollout.main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--env-kwargs" in out and "JSON object" in out and "HeuristicEnemySMAX" in out
