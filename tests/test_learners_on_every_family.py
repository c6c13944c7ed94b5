"""Every learner on one id of every env family (multi-task learners: two tasks of a family):
it builds and its update traces, or it refuses before compiling with the error that names the
fix.

``jax.eval_shape`` traces ``init`` and ``update`` without compiling them (about a second per
pair), so a learner that breaks on a family's observations or actions (a grid, a ``Dict``, an
action mask, continuous actions) fails here, not after a user's compile. Learning itself is
tested per family and per learner elsewhere.
"""

import jax
import pytest

from jaxmarl.algorithms import algorithms, preset_config
from jaxmarl.registry import registered_envs, spec
from jaxmarl.training.learner import evaluate

# One id per family (the test below checks that none is missing), plus the second form of
# families whose ids differ in kind: OvercookedV2's views, STORM's three games.
IDS = [
    "MPE_simple_spread_v3",
    "HeuristicEnemySMAX",
    "overcooked",
    "overcooked_v2",
    "hanabi",
    "storm",
    "storm_2p",
    "storm_np",
    "coin_game",
    "switch_riddle",
    "hopper_3x1",
    "jaxnav",
]
CONTINUOUS = {"hopper_3x1", "jaxnav"}
Q_LEARNERS = {"iql", "vdn", "qmix", "shaq", "transf_qmix", "pqn_vdn"}
ENTITY_VIEWS = {"MPE_simple_spread_v3", "HeuristicEnemySMAX"}  # what alg=transf_qmix reads

_STEPS = ["num_steps=4", "run.total_timesteps=8"]
_PPO = [*_STEPS, "num_minibatches=1", "update_epochs=1"]
_REPLAY = [*_STEPS, "buffer_size=4", "batch_size=2", "learning_starts=0"]
SMALL = {
    "ippo": _PPO,
    "mappo": _PPO,
    "pqn_vdn": [*_STEPS, "num_minibatches=1", "num_epochs=1"],
    **dict.fromkeys(("iql", "vdn", "qmix", "shaq", "transf_qmix"), _REPLAY),
}


def _family(env_id: str) -> str:
    return spec(env_id).entry_point.split(":")[0].split(".")[2]


def test_every_family_is_in_the_matrix():
    families = {_family(env_id) for env_id in registered_envs}
    assert families == {_family(env_id) for env_id in IDS}


def _trace(alg: str, env_id: str, overrides=()):
    """Build the learner and trace one update and one greedy evaluation (no compile)."""
    config = preset_config(alg, None, ["env.num_envs=2", *SMALL[alg], *overrides], env=env_id)
    learner = algorithms()[alg].make(config)
    state = jax.eval_shape(learner.init, jax.random.key(0))
    _, metrics = jax.eval_shape(learner.update, state)
    assert metrics["loss"].shape == ()
    jax.eval_shape(lambda p: evaluate(learner, p, jax.random.key(1), 2), state.params)


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("alg", sorted(SMALL))
def test_learner_traces_or_refuses_clearly(alg, env_id):
    if alg == "transf_qmix" and env_id not in ENTITY_VIEWS:
        with pytest.raises(ValueError, match="has no entity view.*get_entity_obs"):
            _trace(alg, env_id)
    elif alg in Q_LEARNERS and env_id in CONTINUOUS:
        with pytest.raises(ValueError, match="Q-learning needs discrete actions.*alg=ippo"):
            _trace(alg, env_id)
    else:
        _trace(alg, env_id)


@pytest.mark.parametrize(
    "alg, env_id, overrides",
    [
        # Grid observations through the CNN: the actor's, and MAPPO's critic on the world state.
        ("ippo", "overcooked_v2", ["network.encoder=cnn"]),
        ("mappo", "overcooked", ["network.encoder=cnn"]),
        ("mappo", "overcooked_v2", ["network.encoder=cnn", "network.trunk=gru"]),
        ("qmix", "overcooked", ["network.encoder=cnn"]),  # agent ids as channels
        ("ippo", "storm", ["network.encoder=cnn"]),  # Dict observations: grid + inventory
        # One parameter set per agent, with masks (Hanabi) and continuous actions.
        ("mappo", "hanabi", ["share_parameters=false", "network.trunk=gru"]),
        ("ippo", "hopper_3x1", ["share_parameters=false", "action_bounds=tanh"]),
        ("ippo", "jaxnav", ["network.trunk=gru", "critic=centralised"]),
    ],
)
def test_learner_options_trace_on_the_families_they_suit(alg, env_id, overrides):
    _trace(alg, env_id, overrides)


# Multi-task learners: two tasks of one family (their own encoders, one shared trunk).
TASKS = {
    "overcooked": "[overcooked:layout=cramped_room,overcooked:layout=coord_ring]",
    "hanabi": "[hanabi:num_agents=2,hanabi:num_agents=3]",
    "storm": "[storm_2p,storm_np]",
    "switch_riddle": "[switch_riddle:num_agents=3,switch_riddle:num_agents=4]",
    "mabrax": "[hopper_3x1,walker2d_2x3]",
}
MULTITASK = {
    "mt_mappo": _PPO,
    "mtapn_qmix": [*_STEPS, "num_minibatches=1", "num_epochs=1"],
}


@pytest.mark.parametrize("family", sorted(TASKS))
@pytest.mark.parametrize("alg", sorted(MULTITASK))
def test_multitask_learner_traces_or_refuses_clearly(alg, family):
    overrides = ["env.num_envs=2", *MULTITASK[alg], f"tasks={TASKS[family]}"]
    if alg == "mtapn_qmix" and family == "mabrax":
        with pytest.raises(ValueError, match="task .hopper_3x1. has continuous ones.*mt_ippo"):
            algorithms()[alg].make(preset_config(alg, None, overrides))
        return
    learner = algorithms()[alg].make(preset_config(alg, None, overrides))
    state = jax.eval_shape(learner.init, jax.random.key(0))
    jax.eval_shape(learner.update, state)
    jax.eval_shape(lambda p: evaluate(learner, p, jax.random.key(1), 2), state.params)


def test_a_cnn_critic_on_a_world_state_without_a_grid_is_refused():
    with pytest.raises(ValueError, match=r"storm's has no \(h, w, c\) grid.*critic=local"):
        _trace("mappo", "storm", ["network.encoder=cnn"])
