"""OBL's pretrained-agent network (``jaxmarl.environments.hanabi.pretrained.OBLAgentR2D2``).

Against JaxMARL 0.2.0's own module, as ``make_obl_reference.py`` recorded it: a narrow network
saved with JaxMARL's ``save_params`` must load here and give the same advantages, greedy moves
and recurrent state on JaxMARL's recorded 2-player games, and the published network's parameter
tree must be this module's, so the OBL weight files load unchanged.
"""

from __future__ import annotations

import json
import pathlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxmarl
from jaxmarl import evaluate
from jaxmarl.environments.hanabi.pretrained import OBLAgentR2D2
from jaxmarl.envs.hanabi.pretrained.partner import obl_partner
from jaxmarl.wrappers.baselines import load_params, save_params
from tests.test_train_cli import train_tiny_gru_run

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def reference():
    return dict(np.load(DATA / "obl_reference.npz"))


@pytest.fixture(scope="module")
def small():
    """JaxMARL's narrow stand-in network (``hid_dim=16``) and its parameters."""
    return OBLAgentR2D2(hid_dim=16), load_params(DATA / "obl_small.safetensors")


def tree_lines(params):
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return sorted(
        "/".join(str(k.key) for k in path) + ":" + "x".join(map(str, leaf.shape))
        for path, leaf in flat
    )


def test_the_published_weights_have_this_modules_parameter_tree(reference):
    from jaxmarl.environments.hanabi.pretrained import obl_r2d2_agent

    assert obl_r2d2_agent.OBLAgentR2D2 is OBLAgentR2D2  # JaxMARL's module path too
    agent = OBLAgentR2D2()
    carry = agent.initialize_carry(jax.random.key(0), (2,))
    obs = jnp.zeros((2, 658))
    shapes = jax.eval_shape(lambda: agent.init(jax.random.key(0), carry, (obs, obs[:, 125:])))
    assert tree_lines(shapes) == reference["published_tree"].tolist()


def test_matches_jaxmarl_move_for_move_on_recorded_games(reference, small):
    agent, params = small
    games = np.load(DATA / "jaxmarl_games.npz")
    obs = jnp.asarray(games["p2_obs"], jnp.float32)
    legal = jnp.asarray(np.unpackbits(games["p2_legal"], axis=-1)[..., :21], jnp.float32)

    def step(carry, inputs):
        _, advantages = agent.advantages(params, carry, inputs[0])
        carry, moves = agent.greedy_act(params, carry, inputs)
        return carry, (advantages, moves)

    carry = agent.initialize_carry(jax.random.key(0), (2,))
    carry, (advantages, moves) = jax.jit(lambda c: jax.lax.scan(step, c, (obs, legal)))(carry)

    np.testing.assert_allclose(advantages, reference["advantages"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(moves, reference["moves"])
    np.testing.assert_allclose(carry[0], reference["carry_c"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(carry[1], reference["carry_h"], rtol=1e-5, atol=1e-6)
    # The recorded games exercise the masking: the agent to move picks among several moves.
    on_turn = np.asarray(moves).min(axis=1)
    assert len(np.unique(on_turn)) > 3


def test_greedy_move_is_the_best_legal_one():
    agent = OBLAgentR2D2(hid_dim=8)
    carry = agent.initialize_carry(jax.random.key(0), (4,))
    obs = jax.random.bernoulli(jax.random.key(1), 0.3, (4, 658)).astype(jnp.float32)
    params = agent.init(jax.random.key(2), carry, (obs, obs[:, 125:]))
    legal = jax.random.bernoulli(jax.random.key(3), 0.4, (4, 21)).at[:, 20].set(True)
    _, advantages = agent.advantages(params, carry, obs)
    _, moves = agent.greedy_act(params, carry, (obs, legal.astype(jnp.float32)))
    best = [max(np.flatnonzero(row), key=lambda m, a=a: a[m]) for row, a in zip(legal, advantages)]
    np.testing.assert_array_equal(moves, best)


def test_jaxmarls_documented_example_self_plays_on_this_hanabi(small):
    """JaxMARL's docs example (one move), then whole self-play games, jitted and vmapped."""
    agent, params = small
    env = jaxmarl.make("hanabi")
    obs, state = env.reset(jax.random.PRNGKey(0))
    batchify = lambda x: jnp.stack([x[a] for a in env.agents])  # noqa: E731
    carry = agent.initialize_carry(jax.random.PRNGKey(0), batch_dims=(2,))
    carry, actions = agent.greedy_act(
        params, carry, (batchify(obs), batchify(env.get_legal_moves(state)))
    )
    actions = {a: actions[i] for i, a in enumerate(env.agents)}
    assert env.action_encoding[int(actions[env.agents[0]])]
    env.step(jax.random.PRNGKey(1), state, actions)

    def play(key):
        obs, state = env.reset(key)

        def turn(loop, key):
            carry, obs, state, score, over = loop
            legal = env.get_legal_moves(state)
            carry, moves = agent.greedy_act(params, carry, (batchify(obs), batchify(legal)))
            actions = {a: moves[i] for i, a in enumerate(env.agents)}
            obs, state, rewards, dones, infos = env.step(key, state, actions)
            score = score + jnp.where(over, 0.0, rewards[env.agents[0]])
            illegal = infos["illegal_action"].any() & ~over
            return (carry, obs, state, score, over | dones["__all__"]), illegal

        start = (agent.initialize_carry(None, (2,)), obs, state, jnp.float32(0), jnp.bool_(False))
        (_, _, _, score, over), illegal = jax.lax.scan(
            turn, start, jax.random.split(key, env.longest_game)
        )
        return score, over, illegal.any()

    keys = jax.random.split(jax.random.key(3), 8)
    score, over, illegal = jax.jit(jax.vmap(play))(keys)
    again = jax.jit(jax.vmap(play))(keys)[0]
    assert bool(over.all()) and not bool(illegal.any())
    np.testing.assert_array_equal(score, again)
    assert ((score >= 0) & (score <= 25)).all()


@pytest.fixture
def not_obl(tmp_path):
    """A safetensors file that is not an OBL network."""
    path = tmp_path / "x.safetensors"
    save_params({"params": {"dense": {"kernel": np.zeros((2, 2), np.float32)}}}, path)
    return path


# --- OBL agents as cross-play partners of a trained run (jaxmarl.evaluate --obl-partner) ---


@pytest.fixture(scope="module")
def hanabi_run(tmp_path_factory):
    """A 2-seed IPPO run on Hanabi, one tiny update (GRU: its carry is checked too)."""
    out = tmp_path_factory.mktemp("hanabi_obl")
    return train_tiny_gru_run(out, "env=hanabi")


@pytest.fixture(scope="module")
def weights(tmp_path_factory, small):
    """The recorded OBL stand-in, and a folder with a second agent (its advantages negated)."""
    folder = tmp_path_factory.mktemp("obl_weights") / "level2"
    (folder / "sub").mkdir(parents=True)
    _, params = small
    other = jax.tree.map(lambda x: x, params)
    other["params"]["fc_a"] = jax.tree.map(lambda x: -x, params["params"]["fc_a"])
    save_params(other, folder / "sub" / "negated.safetensors")
    return DATA / "obl_small.safetensors", folder


def test_cross_play_with_obl_agents_equals_a_plain_loop(hanabi_run, weights, small):
    run = evaluate.load_run(hanabi_run)
    partner = obl_partner(weights, dict(run.config.env.env_kwargs))
    assert partner.members == ("obl_small", "sub/negated")
    crossed = evaluate.cross_play(run, episodes=3, seed=5, partner=partner)
    assert crossed.returns.shape == (2, 2) and crossed.partner == partner.name

    # Cell [1, 1] by hand: run seed 1 as agent_0, the negated OBL agent as agent_1, in the
    # same three deals (the envs cross_play resets with its key), each game to its end.
    agent, params = small
    params = jax.tree.map(lambda x: x, params)  # a copy: the fixture is shared
    params["params"]["fc_a"] = jax.tree.map(lambda x: -x, params["params"]["fc_a"])
    runner = run.learner.env.reset(jax.random.key(5), 3, run.learner.initial_carry(3))
    env, policy = run.env, run.policy(seed=1)
    scores, lengths = [], []
    for i in range(3):
        obs = jax.tree.map(lambda x, i=i: x[i], runner.obs)
        state = jax.tree.map(lambda x, i=i: x[i], runner.env_state.env_state)
        carry, obl_carry, score, done, t = (
            policy.initial_carry(),
            agent.initialize_carry(None, (1,)),
            0.0,
            False,
            0,
        )
        while not done:
            carry, actions = policy.act(carry, obs, state, first=t == 0)
            legal = env.get_avail_actions(state)["agent_1"][None].astype(jnp.float32)
            obl_carry, move = agent.greedy_act(params, obl_carry, (obs["agent_1"][None], legal))
            actions["agent_1"] = move[0]
            obs, state, rewards, dones, _ = env.step_env(jax.random.key(t), state, actions)
            score, done, t = score + float(rewards["agent_0"]), bool(dones["__all__"]), t + 1
        scores.append(score)
        lengths.append(t)
    np.testing.assert_allclose(crossed.returns[1, 1], np.mean(scores), rtol=1e-6)
    # Untrained players mostly lose all lives (score 0): how long each game lasts is what
    # tells the pairings apart.
    np.testing.assert_allclose(crossed.metrics["episode_length"][1, 1], np.mean(lengths))
    assert len(np.unique(crossed.metrics["episode_length"])) > 1


def test_cross_play_cli_with_obl_agents(hanabi_run, weights, capsys):
    argv = [str(hanabi_run), "--cross-play", "--episodes", "2", "--obl-partner", *map(str, weights)]
    assert evaluate.main(argv) == 0
    out = capsys.readouterr().out
    assert "with the 2 agents of OBL agents (obl_small, sub/negated)" in out
    assert "columns: 0 = obl_small, 1 = sub/negated" in out
    step = evaluate.load_run(hanabi_run).step
    name = f"cross_play_step_{step}_vs_obl_obl_small_and_1_more"
    result = json.loads((hanabi_run / "evaluation" / f"{name}.json").read_text())
    assert result["partner"]["members"] == ["obl_small", "sub/negated"]
    assert np.asarray(result["metrics"]["episode_return"]).shape == (2, 2)


def test_obl_partner_user_errors(hanabi_run, weights, not_obl, tmp_path, capsys):
    small_file, folder = weights
    narrow = OBLAgentR2D2(hid_dim=8)
    zeros = jnp.zeros((1, 658))
    save_params(
        narrow.init(
            jax.random.key(0), narrow.initialize_carry(None, (1,)), (zeros, zeros[:, 125:])
        ),
        tmp_path / "narrow.safetensors",
    )
    cases = [
        ([tmp_path / "missing"], {}, "no such OBL weight file or folder"),
        ([not_obl], {}, "x is not an OBL R2D2 weight file"),
        ([small_file, tmp_path / "narrow.safetensors"], {}, "are different networks"),
        ([small_file], {"num_agents": 3}, "OBL's agents play 2-player Hanabi"),
        ([small_file], {"card_knowledge": "hle_bits"}, "card_knowledge='hle_bits'"),
    ]
    for files, env_kwargs, message in cases:
        with pytest.raises(evaluate.EvaluateError, match=re.escape(message)):
            obl_partner(files, env_kwargs)
    # From the command line: one line and status 2.
    argv = [str(hanabi_run), "--cross-play", "--obl-partner", str(not_obl)]
    assert evaluate.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "is not an OBL R2D2 weight file" in err and len(err.splitlines()) == 1
    assert evaluate.main([str(hanabi_run), "--obl-partner", str(small_file)]) == 2
    assert "--obl-partner goes with --cross-play" in capsys.readouterr().err


# --- the terminal game (python -m jaxmarl.envs.hanabi.manual_game) ---


def replay_transcript(lines, seed, obl=None):
    """Replay the printed moves from the same deal: ``(final score, turns)`` of the env. With
    ``obl=(agent, params)`` also check that agent_1's moves are that OBL agent's greedy moves,
    fed agent_1's observation at every step (its turn or not)."""
    env = jaxmarl.make("hanabi")
    # Stepped as the game steps it (jitted): the OBL player's moves are compared exactly.
    step = jax.jit(env.step_env)
    obs, state = env.reset(jax.random.key(seed))
    turns = [line.split(": ", 1)[1].split() for line in lines if line.startswith("turn ")]
    carry = None if obl is None else obl[0].initialize_carry(None, (1,))
    score = 0.0
    for agent, _, move, *_ in turns:
        legal = env.get_avail_actions(state)
        assert bool(legal[agent][int(move)])
        if obl is not None:
            inputs = (obs["agent_1"][None], legal["agent_1"][None].astype(jnp.float32))
            carry, greedy = obl[0].greedy_act(obl[1], carry, inputs)
            assert agent != "agent_1" or int(greedy[0]) == int(move)
        actions = {a: jnp.int32(int(move) if a == agent else env.noop) for a in env.agents}
        obs, state, rewards, dones, _ = step(jax.random.key(0), state, actions)
        score += float(rewards[agent])
    assert bool(dones["__all__"])
    return (int(score), len(turns)) if obl is None else (int(score), len(turns), carry)


def test_manual_game_human_against_obl(small):
    from jaxmarl.envs.hanabi import manual_game

    answers = iter(["abc", "99", "0", *["5"] * 40])  # 0 (a discard) is illegal at 8 tokens
    out = []
    argv = ["--player1", "obl", "--weight1", str(DATA / "obl_small.safetensors"), "--seed", "3"]
    assert manual_game.main(argv, read=lambda _: next(answers), write=out.append) == 0
    text = "\n".join(out)
    assert "'abc' is not a legal move" in text and "'99' is not a legal move" in text
    assert "'0' is not a legal move" in text and "agent_0, your view:" in text
    lines = text.splitlines()
    human = [line for line in lines if line.startswith("turn ") and "agent_0 plays" in line]
    assert human and all("plays 5 P0" in line for line in human)
    score, turns, _ = replay_transcript(lines, 3, obl=small)
    assert lines[-1] == f"game over after {turns} turns: score {score}"

    # The OBL player saw every step, not only its turns: its memory is the replay's.
    answers = iter(["5"] * 40)
    human = manual_game.ManualPlayer("agent_0", lambda _: next(answers), lambda _: None)
    obl = manual_game.OBLPlayer("agent_1", DATA / "obl_small.safetensors")
    env, out = jaxmarl.make("hanabi"), []
    manual_game.play(env, [human, obl], jax.random.key(3), out.append)
    *_, carry = replay_transcript(out, 3, obl=small)
    np.testing.assert_allclose(obl.carry[0], carry[0], rtol=1e-6)
    np.testing.assert_allclose(obl.carry[1], carry[1], rtol=1e-6)


def test_manual_game_trained_run_against_random_and_leaving(hanabi_run):
    from jaxmarl.envs.hanabi import manual_game

    out = []
    argv = ["--player0", "run", "--weight0", str(hanabi_run), "--player1", "random", "--seed", "1"]
    assert manual_game.main(argv, write=out.append) == 0
    lines = "\n".join(out).splitlines()
    score, turns = replay_transcript(lines, 1)
    assert lines[-1] == f"game over after {turns} turns: score {score}"

    def leave(_):
        raise EOFError

    out = []
    assert (
        manual_game.main(["--player1", "random", "--seed", "1"], read=leave, write=out.append) == 0
    )
    assert out[-1] == "\nleft the game"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--player1", "obl"], "--player1 obl needs --weight1"),
        (["--player0", "run", "--weight0", "nowhere"], "--weight0: no such file or directory"),
        (["--player1", "obl", "--weight1", "{not_obl}"], "is not an OBL R2D2 weight file"),
        (["--player0", "run", "--weight0", "{data}"], "is not a jaxmarl run directory"),
        (["--player0", "bogus"], "invalid choice: 'bogus'"),
    ],
)
def test_manual_game_bad_flags_exit_2_with_one_line(not_obl, capsys, argv, message):
    from jaxmarl.envs.hanabi import manual_game

    argv = [a.format(not_obl=not_obl, data=DATA) for a in argv]
    with pytest.raises(SystemExit) as exit_info:
        manual_game.main(argv, read=lambda _: "5", write=lambda _: None)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
