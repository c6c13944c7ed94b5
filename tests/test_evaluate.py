"""``python -m jaxmarl.evaluate``: greedy evaluation of a run directory, read-only."""

import dataclasses
import json

import jax
import numpy as np
import pytest

from jaxmarl import evaluate, registry, train
from jaxmarl.training.host.logging import read_jsonl
from jaxmarl.training.learner import evaluate as learner_evaluate
from tests.test_train_cli import TINY

RUN = [
    *TINY,
    "--no-progress",
    "run.num_seeds=2",
    "run.eval_every=1",
    "run.keep_best=eval_episode_return",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A finished 2-seed TINY run with checkpoints 1, 2, 3 ranked by episode return."""
    out = tmp_path_factory.mktemp("evaluate")
    assert train.main([*RUN, f"run.out_dir={out}", "run.name=run"]) == 0
    return out / "run"


def test_evaluate_writes_a_table_per_seed_and_leaves_checkpoints_alone(run_dir, capsys):
    before = sorted(p.name for p in (run_dir / "checkpoints").iterdir())
    assert evaluate.main([str(run_dir), "--episodes", "3", "--no-gif"]) == 0
    out = capsys.readouterr().out
    assert "| seed | episode_return" in out and "| mean |" in out
    result = json.loads((run_dir / "evaluation" / "step_3.json").read_text())
    assert result["step"] == 3 and len(result["seeds"]) == 2
    assert all(row["episodes"] == 3 for row in result["seeds"])
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == before


def test_evaluation_equals_the_learners_own_evaluation_of_those_params(run_dir):
    run = evaluate.load_run(run_dir, step=2)
    rows = evaluate.evaluate_run(run, episodes=4, seed=7)
    keys = jax.random.split(jax.random.key(7), 2)
    for seed in range(2):
        direct = learner_evaluate(run.learner, run.seed_params(seed), keys[seed], 4)
        np.testing.assert_allclose(
            rows[seed]["episode_return"], float(direct["episode_return"]), rtol=1e-5
        )


def test_best_step_and_plain_python_loop(run_dir):
    run = evaluate.load_run(run_dir, best=True)
    # One update per chunk, so checkpoint step == update; best = highest mean over seeds.
    by_update = {}
    for row in read_jsonl(run_dir / "eval.jsonl"):
        by_update.setdefault(row["update"], []).append(row["eval_episode_return"])
    assert run.step == max(by_update, key=lambda u: np.mean(by_update[u]))
    env, policy = run.env, run.policy(seed=1)
    key = jax.random.key(0)
    obs, state = env.reset(key)
    carry = policy.initial_carry()
    total = 0.0
    for t in range(5):
        carry, actions = policy.act(carry, obs, state, first=t == 0)
        assert set(actions) == set(env.agents)
        key, step_key = jax.random.split(key)
        obs, state, rewards, dones, infos = env.step(step_key, state, actions)
        total += float(sum(rewards.values()))
    assert np.isfinite(total)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["{missing}"], "is not a jaxmarl run directory"),
        (["{run}", "--step", "9"], "has no checkpoint step 9; saved steps: [1, 2, 3]"),
        (["{run}", "--episodes", "0"], "--episodes must be at least 1"),
        (["{run}", "--step", "1", "--best"], "not allowed with argument"),
        (["{run}", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_user_errors_exit_2_with_one_line(run_dir, tmp_path, capsys, argv, message):
    argv = [a.format(run=run_dir, missing=tmp_path / "nothing") for a in argv]
    assert evaluate.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_best_needs_a_ranked_run(tmp_path, capsys):
    assert train.main([*TINY, "--no-progress", f"run.out_dir={tmp_path}", "run.name=plain"]) == 0
    assert evaluate.main([str(tmp_path / "plain"), "--best"]) == 2
    assert "--best needs a run trained with run.keep_best" in capsys.readouterr().err


def _train_pair(tmp_path_factory, action_type):
    """A finished 2-seed TINY run on a two-agent env (speaker and listener) with one
    parameter set per agent, so cross-play can be checked by splicing parameters, and a GRU,
    so each seed's recurrent state is carried."""
    out = tmp_path_factory.mktemp(f"cross_play_{action_type}")
    argv = [
        *TINY,
        "--no-progress",
        "env=MPE_simple_speaker_listener_v4",
        f"+env.env_kwargs.action_type={action_type}",
        "share_parameters=false",
        "network.trunk={kind: gru, size: 8}",
        "run.num_seeds=2",
        f"run.out_dir={out}",
        "run.name=run",
    ]
    assert train.main(argv) == 0
    return out / "run"


@pytest.fixture(scope="module")
def pair_run_dir(tmp_path_factory):
    return _train_pair(tmp_path_factory, "Discrete")


@pytest.fixture(scope="module")
def continuous_pair_run_dir(tmp_path_factory):
    # Continuous actions are [B, A, d]: the agent mask has its own axis there.
    return _train_pair(tmp_path_factory, "Continuous")


@pytest.mark.parametrize("which", ["pair_run_dir", "continuous_pair_run_dir"])
def test_cross_play_diagonal_is_self_play_and_cells_pair_the_seeds(which, request):
    run = evaluate.load_run(request.getfixturevalue(which))
    assert run.env.agents == ["speaker_0", "listener_0"]
    crossed = evaluate.cross_play(run, episodes=6, seed=3)
    assert crossed.row_agents == ("speaker_0",) and crossed.col_agents == ("listener_0",)
    returns = crossed.returns
    assert returns.shape == (2, 2)
    key = jax.random.key(3)
    for i in range(2):
        own = learner_evaluate(run.learner, run.seed_params(i), key, 6)
        np.testing.assert_allclose(returns[i, i], float(own["episode_return"]), rtol=1e-6)
    # With one parameter set per agent (leading [A] axis on every leaf), a pair is the same
    # as one parameter set spliced from both seeds: the speaker's row from seed i, the
    # listener's from seed j.
    for i, j in [(0, 1), (1, 0)]:
        spliced = jax.tree.map(
            lambda a, b: a.at[1].set(b[1]), run.seed_params(i), run.seed_params(j)
        )
        direct = learner_evaluate(run.learner, spliced, key, 6)
        np.testing.assert_allclose(returns[i, j], float(direct["episode_return"]), rtol=1e-6)
    assert returns[0, 1] != returns[1, 0]  # the cells tell the seeds' roles apart
    summary = crossed.summary()
    assert summary["self_play"] == pytest.approx(np.mean(np.diag(returns)))
    assert summary["cross_play"] == pytest.approx((returns[0, 1] + returns[1, 0]) / 2)


def test_cross_play_cli_writes_the_matrices(pair_run_dir, capsys):
    argv = [str(pair_run_dir), "--cross-play", "--episodes", "4", "--row-agents", "listener_0"]
    assert evaluate.main(argv) == 0
    out = capsys.readouterr().out
    assert "rows: listener_0, columns: speaker_0" in out and "self-play" in out
    step = evaluate.load_run(pair_run_dir).step
    result = json.loads((pair_run_dir / "evaluation" / f"cross_play_step_{step}.json").read_text())
    assert result["row_agents"] == ["listener_0"] and result["episodes_per_pair"] == 4
    assert np.asarray(result["metrics"]["episode_return"]).shape == (2, 2)
    assert (pair_run_dir / "evaluation" / f"cross_play_step_{step}.png").stat().st_size > 0


@pytest.mark.parametrize(
    "which, argv, message",
    [
        ("single", ["--cross-play"], "cross-play needs two or more agents"),
        ("pair", ["--cross-play", "--row-agents", "bob"], "unknown agents ['bob']"),
        (
            "pair",
            ["--cross-play", "--row-agents", "speaker_0", "listener_0"],
            "they must be some, not all",
        ),
        ("pair", ["--row-agents", "speaker_0"], "--row-agents goes with --cross-play"),
    ],
)
def test_cross_play_user_errors(run_dir, pair_run_dir, capsys, which, argv, message):
    target = run_dir if which == "single" else pair_run_dir
    assert evaluate.main([str(target), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_cross_play_needs_two_seeds(pair_run_dir):
    run = evaluate.load_run(pair_run_dir)
    one_seed = dataclasses.replace(run, params=jax.tree.map(lambda x: x[:1], run.params))
    with pytest.raises(evaluate.EvaluateError, match="cross-play pairs seeds, but .* has 1"):
        evaluate.cross_play(one_seed, episodes=2)


@pytest.fixture(scope="module")
def partner_run_dir(tmp_path_factory):
    """A 3-seed MAPPO run on the pair runs' env: one shared network told apart by agent ids,
    where the pair runs (IPPO, one network per agent) take none."""
    out = tmp_path_factory.mktemp("partner")
    argv = [
        *(arg for arg in TINY if not arg.startswith("alg=")),
        "alg=mappo",
        "--no-progress",
        "env=MPE_simple_speaker_listener_v4",
        "+env.env_kwargs.action_type=Discrete",
        "network.agent_id=true",
        "run.num_seeds=3",
        f"run.out_dir={out}",
        "run.name=partner",
    ]
    assert train.main(argv) == 0
    return out / "partner"


def test_cross_play_with_a_partner_run_of_another_learner(pair_run_dir, partner_run_dir):
    run, partner = evaluate.load_run(pair_run_dir), evaluate.load_run(partner_run_dir)
    assert not run.learner.env.batch.agent_id and partner.learner.env.batch.agent_id
    crossed = evaluate.cross_play(run, episodes=6, seed=3, partner=partner)
    assert crossed.returns.shape == (2, 3) and crossed.partner == partner_run_dir
    assert crossed.summary() == {"cross_play": pytest.approx(np.mean(crossed.returns))}
    # The same pairs with the roles of the runs swapped: MAPPO's listener rows, IPPO's speaker
    # columns, each policy fed by its own learner's inputs in the other's rollout.
    mirrored = evaluate.cross_play(
        partner, episodes=6, seed=3, row_agents=["listener_0"], partner=run
    )
    np.testing.assert_allclose(mirrored.returns, crossed.returns.T, rtol=1e-6)
    assert len(np.unique(crossed.returns)) > 1  # the cells tell the seeds apart
    # A run as its own partner gives its own cross-play.
    np.testing.assert_array_equal(
        evaluate.cross_play(run, episodes=6, seed=3, partner=run).returns,
        evaluate.cross_play(run, episodes=6, seed=3).returns,
    )


def test_cross_play_cli_with_a_partner(pair_run_dir, partner_run_dir, capsys):
    argv = [str(pair_run_dir), "--cross-play", "--partner", str(partner_run_dir)]
    assert evaluate.main([*argv, "--episodes", "4"]) == 0
    out = capsys.readouterr().out
    assert "with the 3 seeds of" in out and "episode return: cross-play" in out
    step, partner_step = (evaluate.load_run(d).step for d in (pair_run_dir, partner_run_dir))
    name = f"cross_play_step_{step}_vs_partner_step_{partner_step}"
    result = json.loads((pair_run_dir / "evaluation" / f"{name}.json").read_text())
    assert result["partner"]["alg"] == "mappo" and set(result["summary"]) == {"cross_play"}
    assert np.asarray(result["metrics"]["episode_return"]).shape == (2, 3)
    assert (pair_run_dir / "evaluation" / f"{name}.png").stat().st_size > 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--partner", "{partner}"], "--partner goes with --cross-play"),
        (["--cross-play", "--partner", "{continuous}"], "cross-play needs the same env"),
    ],
)
def test_partner_user_errors(
    pair_run_dir, partner_run_dir, continuous_pair_run_dir, capsys, argv, message
):
    dirs = {"partner": partner_run_dir, "continuous": continuous_pair_run_dir}
    argv = [arg.format(**dirs) for arg in argv]
    assert evaluate.main([str(pair_run_dir), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


# --- options that env families add (jaxmarl.registry.PartnerFlag / ReportFlag) ---

# What the fake family targets below were called with.
CALLS: list = []


def fake_report(run, values):
    if values == ["bad"]:
        raise ValueError("'bad' is not a level")
    CALLS.append(("checked", values))
    return lambda seed: CALLS.append(("report", run.step, seed)) or print("the fake report")


def fake_partner(run, values):
    CALLS.append(("partner", values))
    return "the fake partner"


@pytest.fixture
def family_flags(run_dir, monkeypatch):
    """A report flag for the run's env, a partner flag for it and a report flag for another."""
    env_id = evaluate.load_run(run_dir).config.env.env_id
    registry.evaluate_flags()  # the real families first, so that they do not land in the patch
    flags = [
        registry.ReportFlag("--fake-report", env_id, "X", "a report", f"{__name__}:fake_report"),
        registry.PartnerFlag("--fake-partner", env_id, "W", "partners", f"{__name__}:fake_partner"),
        registry.ReportFlag("--other-report", "hanabi", "X", "another", f"{__name__}:fake_report"),
    ]
    for flag in flags:
        monkeypatch.setitem(registry._EVALUATE_FLAGS, flag.flag, flag)
    CALLS.clear()
    return env_id


def test_a_family_report_flag_replaces_the_plain_evaluation(run_dir, family_flags, capsys):
    help_text = evaluate._parser().format_help()
    assert f"a report (runs on {family_flags})" in help_text and "--other-report" in help_text
    assert evaluate.main([str(run_dir), "--fake-report", "a", "b", "--seed", "7"]) == 0
    assert CALLS == [("checked", ["a", "b"]), ("report", 3, 7)]
    assert "the fake report" in capsys.readouterr().out


def test_a_family_partner_flag_gives_cross_plays_columns(run_dir, family_flags, monkeypatch):
    def cross_play(run, episodes, seed, row_agents, partner):
        CALLS.append(("cross_play", partner))
        raise evaluate.EvaluateError("stop before compiling")

    monkeypatch.setattr(evaluate, "cross_play", cross_play)
    assert evaluate.main([str(run_dir), "--cross-play", "--fake-partner", "w1", "w2"]) == 2
    assert CALLS == [("partner", ["w1", "w2"]), ("cross_play", "the fake partner")]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--other-report", "a"], "--other-report takes a run on hanabi; {run} trained on {env}"),
        (["--fake-report", "bad"], "--fake-report: 'bad' is not a level"),
        (["--fake-report", "a", "--cross-play"], "--fake-report goes without --cross-play"),
        (["--fake-partner", "w"], "--fake-partner goes with --cross-play"),
        (["--fake-report", "a", "--other-report", "b"], "not allowed with argument"),
        (["--cross-play", "--fake-partner", "w", "--partner", "p"], "not allowed with argument"),
    ],
)
def test_family_flag_user_errors(run_dir, family_flags, capsys, argv, message):
    assert evaluate.main([str(run_dir), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert message.format(run=run_dir, env=family_flags) in err and len(err.splitlines()) == 1
    assert not any(call[0] == "report" for call in CALLS)


def test_a_flag_name_is_one_familys():
    registry.evaluate_flags()
    taken = next(iter(registry._EVALUATE_FLAGS.values()))
    clash = dataclasses.replace(taken, target="elsewhere:function")
    with pytest.raises(ValueError, match=f"evaluate flag {taken.flag} is already registered"):
        registry.register_family("tests.fake_family", {}, evaluate_flags=[clash])
