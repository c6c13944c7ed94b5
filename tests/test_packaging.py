"""A regular (non-editable) wheel installs the one ``jaxmarl`` namespace with envs and baselines."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_installs_envs_and_baselines_into_a_fresh_venv(tmp_path):
    wheel_dir = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheel_dir), str(REPO)],
        check=True,
    )
    (wheel,) = wheel_dir.glob("jaxmarl-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    # Dependencies come from this interpreter's site-packages through PYTHONPATH, which (unlike
    # a site dir) does not run .pth files, so an editable install of the repo stays invisible.
    deps = sysconfig.get_paths()["purelib"]
    probe = (
        "import jax, jaxmarl, jaxmarl.envs.mpe, jaxmarl.baselines;"
        "assert 'venv' in jaxmarl.__file__, jaxmarl.__file__;"
        "assert jaxmarl.envs.mpe.__file__.startswith(jaxmarl.__path__[0]);"
        "env = jaxmarl.make('MPE_simple_spread_v3');"
        "obs, state = env.reset(jax.random.key(0));"
        "print(sorted(obs))"
    )
    result = subprocess.run(
        [str(python), "-c", probe],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": deps},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "agent_0" in result.stdout
