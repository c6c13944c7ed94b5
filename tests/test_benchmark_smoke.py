"""Smoke test of the throughput benchmark's workload (benchmarks/_workload.py), run in-process.

Tiny sizes only (batch 2, 3 steps, 1 repeat): this checks that the workload runs against our
environments and reports sane numbers, not how fast anything is. It never needs the peer venv.
"""

import math

import pytest

from tests.benchmark_scripts import load_benchmark_script


def test_measure_reports_positive_finite_rates():
    workload = load_benchmark_script("_workload")
    result = workload.measure("MPE_simple_spread_v3", batch=2, steps=3, repeats=1, min_repeat_s=0.0)

    assert set(result) == set(workload.RESULT_KEYS)
    assert (result["status"], result["num_agents"], result["checksum_finite"]) == ("ok", 3, True)
    assert math.isfinite(result["env_steps_per_s"]) and result["env_steps_per_s"] > 0
    assert workload.measure("MPE_not_an_env_v0", batch=2, steps=3, repeats=1)["status"] == (
        "unavailable"
    )


class _StandInEnv:
    """One agent, ``Discrete(5)``; each step observes the action taken (``kind="action"``) or a
    uniform draw from the step key (``kind="key"``), so the workload's checksum sums those."""

    agents = ["agent_0"]

    class _Space:
        n, shape, dtype = 5, (), None

    def __init__(self, kind):
        self.kind = kind

    def action_space(self, agent):
        return self._Space()

    def reset(self, key):
        import jax.numpy as jnp

        return {"agent_0": jnp.float32(0.0)}, jnp.int32(0)

    def step(self, key, state, actions):
        import jax
        import jax.numpy as jnp

        if self.kind == "action":
            seen = actions["agent_0"].astype(jnp.float32)
        else:
            seen = jax.random.uniform(key)
        done = jnp.bool_(False)
        return {"agent_0": seen}, state, {"agent_0": 0.0}, {"agent_0": done, "__all__": done}, {}


@pytest.mark.parametrize("draws", ["per_step", "ahead"])
def test_both_draws_give_fresh_uniform_actions_and_keys_every_step(draws):
    import jax
    import numpy as np

    workload = load_benchmark_script("_workload")
    batch, steps = 256, 50
    for kind, per_step_mean in (("action", 2.0), ("key", 0.5)):
        rollout = jax.jit(workload.make_rollout(_StandInEnv(kind), batch, steps, draws))
        per_step = np.asarray(rollout(jax.random.PRNGKey(3))) / steps  # [batch] step means
        # uniform on {0..4} / on [0, 1): the mean of 12,800 draws is within 0.1 of its mean
        assert abs(per_step.mean() - per_step_mean) < 0.1, (kind, per_step.mean())
        # fresh every step: a draw reused over the 50 steps would spread these means as one
        # draw does (std 1.41 / 0.29), fresh ones 50 times less in variance (0.2 / 0.04)
        assert 0.0 < per_step.std() < {"action": 0.4, "key": 0.08}[kind], (kind, per_step.std())
    with pytest.raises(ValueError, match="draws must be one of"):
        workload.make_rollout(_StandInEnv("action"), batch, steps, "sometimes")


def test_xla_threads_reach_every_measuring_process(monkeypatch, capsys):
    throughput = load_benchmark_script("env_throughput")
    seen, real_run = [], throughput.subprocess.run

    def fake_run(command, **kwargs):
        if "env" not in kwargs:  # the header's git and uname calls
            return real_run(command, **kwargs)
        seen.append((command[0], kwargs["env"].get("PJRT_NPROC")))
        raise throughput.subprocess.TimeoutExpired(command, 1)

    monkeypatch.delenv("PJRT_NPROC", raising=False)
    monkeypatch.setattr(throughput.subprocess, "run", fake_run)
    argv = ["--envs", "MPE_simple_v3", "--batches", "2", "--repeats", "1", "--peer", "peer-py"]
    throughput.main([*argv, "--xla-threads", "1"])
    assert sorted(seen) == sorted([("peer-py", "1"), (throughput.sys.executable, "1")])
    seen.clear()
    throughput.main(argv)
    assert [threads for _, threads in seen] == [None, None]
    with pytest.raises(SystemExit):
        throughput.main([*argv, "--xla-threads", "0"])
    assert "--xla-threads must be at least 1" in capsys.readouterr().err


def test_jaxmarl_scripts_runner_trains_a_jaxmarl_style_script(tmp_path):
    # A stand-in for one of JaxMARL's scripts, written here: a module-level import of the
    # stubbed packages, make_train(config) reading the YAML's keys, and JaxMARL's step pattern
    # ([num_envs, 1] actions through its LogWrapper). The runner trains it in a fresh process.
    here = load_benchmark_script("jaxmarl_scripts_here")
    script = tmp_path / "ippo_stand_in.py"
    script.write_text(
        "import hydra, wandb, jax, jax.numpy as jnp, jaxmarl\n"
        "from jaxmarl.wrappers.baselines import LogWrapper\n"
        "def make_train(config):\n"
        "    env = LogWrapper(jaxmarl.make(config['ENV_NAME']))\n"
        "    n = config['NUM_ENVS']\n"
        "    def train(key):\n"
        "        keys = jax.random.split(key, n)\n"
        "        _, state = jax.vmap(env.reset)(keys)\n"
        "        acts = {a: jnp.zeros((n, 1), jnp.int32) for a in env.agents}\n"
        "        out = jax.vmap(env.step)(keys, state, acts)\n"
        "        return jax.tree.map(lambda x: x.reshape((-1,)), out[4])\n"
        "    config['NUM_UPDATES'] = 1\n"
        "    return train\n"
        "def main(config):\n"  # what the mains do after training, with wandb stubbed
        "    run = wandb.init(project='p')\n"
        "    jax.block_until_ready(make_train(config)(jax.random.PRNGKey(0)))\n"
        "    table = wandb.Table(data=[[0, 1.0]], columns=['updates', 'returns'])\n"
        "    wandb.log({'plot': wandb.plot.line(table, 'updates', 'returns')})\n"
        "    assert config['SEED'] == 0, 'main saw another config'\n"
        "    open(f'{run.project}-{run.name}.txt', 'w').write('saved')\n"
    )
    config = tmp_path / "config.yaml"
    config.write_text("ENV_NAME: MPE_simple_spread_v3\nNUM_ENVS: 8\nSEED: 0\n")
    assert here.run_script(script, config) == (True, "")
    assert here.run_script(script, config, whole=True) == (True, "")
    config.write_text("ENV_NAME: MPE_no_such_env_v0\nNUM_ENVS: 8\nSEED: 0\n")
    trained, detail = here.run_script(script, config)
    assert not trained and "MPE_no_such_env_v0" in detail
    config.write_text("ENV_NAME: MPE_simple_spread_v3\nNUM_ENVS: 8\nSEED: 1\n")
    ran, detail = here.run_script(script, config, whole=True)
    assert not ran and "main saw another config" in detail
