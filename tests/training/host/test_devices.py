"""Seeds split over several devices (``run.devices``): same results as one device.

The device count is fixed when JAX's backend starts, and this test process started it with one
CPU device, so the multi-device runs happen in a fresh interpreter (``DEVICE_SCRIPT``).
"""

import subprocess
import sys
import textwrap

import jax
import pytest

from jaxmarl.training.config import RunConfig
from jaxmarl.training.host.devices import Placement, check_split, use_devices

DEVICE_SCRIPT = textwrap.dedent(
    """
    import sys, tempfile
    import dataclasses
    from pathlib import Path
    from jaxmarl.training.host.devices import use_devices
    use_devices(2)
    import chex, jax
    from jaxmarl.baselines.ppo import CentralisedCritic, PPOConfig, make_ppo
    from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig
    from jaxmarl.training.host.logging import read_jsonl
    from jaxmarl.training.host.loop import run

    assert jax.device_count() == 2, jax.devices()
    learner = make_ppo(PPOConfig(
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
        network=NetworkConfig(trunk=GRUTrunkConfig(size=16), embed_dim=16),
        critic=CentralisedCritic(),
        run=RunConfig(total_timesteps=4 * 8 * 3),
        num_steps=8, num_minibatches=2, update_epochs=1,
    ))
    common = dict(seed=5, num_seeds=2, updates_per_chunk=1, checkpoint_every=1,
                  eval_episodes=4, gif=False)
    on = lambda devices: dataclasses.replace(learner.config.run, devices=devices, **common)
    out = Path(tempfile.mkdtemp())
    one = run(learner, on(1), out / "one", show_progress=False)
    run(learner, on(2), out / "two", stop_after_chunks=2, show_progress=False)
    two = run(learner, on(2), out / "two", resume=True, show_progress=False)

    # the two seeds really ran on different devices
    assert len(jax.tree.leaves(two.state.params)[0].sharding.device_set) == 2
    chex.assert_trees_all_close(one.state.params, two.state.params, rtol=1e-5, atol=1e-6)
    rows_one = read_jsonl(out / "one" / "metrics.jsonl")
    rows_two = read_jsonl(out / "two" / "metrics.jsonl")
    assert len(rows_one) == len(rows_two) == 3 * 2
    for a, b in zip(rows_one, rows_two):
        assert a.keys() == b.keys()
        for k in a:
            assert abs(a[k] - b[k]) <= 1e-4 * (1 + abs(a[k])), (k, a[k], b[k])
    evals = [read_jsonl(out / name / "eval.jsonl") for name in ("one", "two")]
    assert [r["seed"] for r in evals[1]] == [0, 1]
    for a, b in zip(*evals):
        assert abs(a["eval_episode_return"] - b["eval_episode_return"]) <= 1e-3
    print("DEVICES-OK")
    """
)


def test_two_devices_give_the_results_of_one_and_resume():
    completed = subprocess.run(
        [sys.executable, "-c", DEVICE_SCRIPT], capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "DEVICES-OK" in completed.stdout


def test_seeds_must_split_evenly():
    with pytest.raises(ValueError, match=r"run.devices in \[1, 3\]"):
        check_split(3, 2)
    check_split(4, 2)
    with pytest.raises(ValueError, match="does not split evenly over run.devices=2"):
        RunConfig(num_seeds=3, devices=2)
    with pytest.raises(ValueError, match="run.devices must be > 0"):
        RunConfig(devices=0)


def test_too_many_devices_is_a_clear_error():
    # Once the backend runs, the device count is fixed: asking for more names the fix.
    more = jax.device_count() + 1
    with pytest.raises(ValueError, match=f"xla_force_host_platform_device_count={more}"):
        use_devices(more)
    with pytest.raises(ValueError, match="use_devices"):
        Placement(more, 1).mesh()
