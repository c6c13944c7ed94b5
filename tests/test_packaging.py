"""A regular (non-editable) wheel installs the one ``jaxmarl`` namespace: the top-level
``envs/`` and ``baselines/`` as ``jaxmarl.envs`` / ``jaxmarl.baselines``, and the YAML presets
of ``configs/`` as ``jaxmarl/configs``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel_python(tmp_path_factory):
    """Python of a fresh venv with only the built wheel installed (no dependencies)."""
    tmp = tmp_path_factory.mktemp("wheel")
    # Build from a copy: an in-tree build leaves build/ behind, which can leak stale files
    # into later wheels.
    source = tmp / "src"
    source.mkdir()
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for folder in ("jaxmarl", "envs", "baselines", "configs"):
        shutil.copytree(
            REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp / "dist"),
            str(source),
        ],
        check=True,
    )
    (wheel,) = (tmp / "dist").glob("jaxmarl-*.whl")
    venv.create(tmp / "venv", with_pip=True)
    python = tmp / "venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
    )
    return python


def _run(python: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    # Dependencies come from this interpreter's site-packages through PYTHONPATH, which (unlike
    # a site dir) does not run .pth files, so an editable install of the repo stays invisible.
    deps = sysconfig.get_paths()["purelib"]
    return subprocess.run(
        [str(python), "-c", code],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": deps},
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_wheel_installs_envs_baselines_and_presets(wheel_python, tmp_path):
    probe = "\n".join(
        [
            "import jax, jaxmarl, jaxmarl.envs.mpe, jaxmarl.baselines.ppo",
            "from jaxmarl.config import preset_path",
            "root = jaxmarl.__path__[0]",
            "assert 'venv' in root and 'site-packages' in root, root",
            "assert jaxmarl.envs.mpe.__file__.startswith(root)",
            "assert jaxmarl.baselines.ppo.__file__.startswith(root)",
            "preset = preset_path('mappo', 'MPE_simple_spread_v3')",
            "assert str(preset).startswith(root), preset",
            "env = jaxmarl.make('MPE_simple_spread_v3')",
            "obs, state = env.reset(jax.random.key(0))",
            "print(sorted(obs), preset.name)",
        ]
    )
    result = _run(wheel_python, probe, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "'agent_0'" in result.stdout and "MPE_simple_spread_v3.yaml" in result.stdout
