"""Factorisation parity with MaMuJoCo (``gymnasium_robotics.mamujoco_v1``), as index lists.

For each id and observation distance k = 0, 1, 2, both sides' index lists are turned into
labels naming what each entry is (``("qpos", joint)``, ``("cinert", body, component)``, ...):
MaMuJoCo's indices address Gymnasium's observation vector, ours brax's, and the two models
name their joints and bodies alike. The labels must be equal, in order, once the model
differences listed in ``envs/mabrax/README.md`` are mapped (``MAPPED`` below). No JAX program
is compiled.
"""

from __future__ import annotations

import functools
import warnings

import mujoco
import numpy as np
import pytest

import jaxmarl

mamujoco = pytest.importorskip("gymnasium_robotics.envs.multiagent_mujoco.mujoco_multi")

SCENARIOS = {
    "ant_4x2": ("Ant", "4x2"),
    "halfcheetah_6x1": ("HalfCheetah", "6x1"),
    "hopper_3x1": ("Hopper", "3x1"),
    "humanoid_9|8": ("Humanoid", "9|8"),
    "walker2d_2x3": ("Walker2d", "2x3"),
}

# The model differences, mapped (see README.md, "Factorisation parity"):
# - brax's observations leave out external contact forces (cfrc_ext), which MaMuJoCo's Ant and
#   Humanoid observe at depth 0;
# - brax fuses the humanoid's feet into the shins (no joints between them), so the feet have no
#   body quantities of their own;
# - MaMuJoCo's humanoid nodes abdomen_y and abdomen_z read each other's joint (position,
#   velocity, actuator force) while actuating their own; here each node reads its own joint.
UNOBSERVED_CATEGORIES = {"cfrc_ext"}
FUSED_BODIES = {"right_foot", "left_foot"}
JOINT_SWAP = {"humanoid_9|8": {"abdomen_y": "abdomen_z", "abdomen_z": "abdomen_y"}}


def _joint_of(model, adr, kind):
    """(joint name, component) of generalised position/velocity address ``adr``."""
    start = model.jnt_qposadr if kind == "qpos" else model.jnt_dofadr
    j = int(np.searchsorted(start, adr, side="right") - 1)
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j), int(adr - start[j])


def _body(model, b):
    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b)


@functools.cache
def mamujoco_env(env_id, k):
    scenario, conf = SCENARIOS[env_id]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mamujoco.MultiAgentMujocoEnv(scenario, conf, agent_obsk=k)


@functools.cache
def mamujoco_labels(env_id, k):
    """Per agent: labels of MaMuJoCo's observation entries, and its actuated joints."""
    env = mamujoco_env(env_id, k)
    gym = env.single_agent_env.unwrapped
    model, layout = gym.model, gym.observation_structure
    labels = []
    for adr in range(layout["skipped_qpos"], model.nq):
        labels.append(("qpos", *_joint_of(model, adr, "qpos")))
    for adr in range(model.nv):
        labels.append(("qvel", *_joint_of(model, adr, "qvel")))
    for category, width in (("cinert", 10), ("cvel", 6)):
        for b in range(1, layout.get(category, 0) // width + 1):
            labels.extend((category, _body(model, b), c) for c in range(width))
    for adr in range(6, 6 + layout.get("qfrc_actuator", 0)):
        labels.append(("qfrc_actuator", *_joint_of(model, adr, "qvel")))
    for b in range(1, layout.get("cfrc_ext", 0) // 6 + 1):
        labels.extend(("cfrc_ext", _body(model, b), c) for c in range(6))
    assert len(labels) == gym.observation_space.shape[0]
    swap = JOINT_SWAP.get(env_id, {})
    obs, acts = {}, {}
    for agent, part in zip(env.possible_agents, env.agent_action_partitions):
        mapped = []
        for i in env.observation_factorization[agent]:
            label = labels[int(i)]
            if label[0] in UNOBSERVED_CATEGORIES or label[1] in FUSED_BODIES:
                continue
            if label[0] in ("qpos", "qvel", "qfrc_actuator"):
                label = (label[0], swap.get(label[1], label[1]), label[2])
            mapped.append(label)
        obs[agent] = mapped
        acts[agent] = [
            _joint_of(model, model.jnt_dofadr[model.actuator_trnid[n.act_ids, 0]], "qvel")[0]
            for n in part
        ]
    return obs, acts


@functools.cache
def our_labels(env_id, k):
    env = jaxmarl.make(env_id, agent_obsk=k)
    model = env.sys.mj_model
    layout = env.robot.layout
    links = list(env.sys.link_names)
    labels = []
    for adr in range(layout.skipped_qpos, layout.nq):
        labels.append(("qpos", *_joint_of(model, adr, "qpos")))
    for adr in range(layout.nv):
        labels.append(("qvel", *_joint_of(model, adr, "qvel")))
    for category, width in layout.body_cats:
        for link in range(layout.nbody):
            labels.extend((category, links[link], c) for c in range(width))
    if layout.qfrc_actuator:
        for adr in range(layout.nv):
            labels.append(("qfrc_actuator", *_joint_of(model, adr, "qvel")))
    assert len(labels) == env.obs_size
    obs = {a: [labels[i] for i in idx.tolist()] for a, idx in env.agent_obs_mapping.items()}
    acts = {
        a: [_joint_of(model, model.jnt_dofadr[model.actuator_trnid[i, 0]], "qvel")[0] for i in idx]
        for a, idx in env.agent_action_mapping.items()
    }
    return obs, acts, env.robot.global_qpos, env.robot.global_qvel


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("env_id", list(SCENARIOS))
def test_factorisation_matches_mamujoco(env_id, k):
    theirs_obs, theirs_acts = mamujoco_labels(env_id, k)
    ours_obs, ours_acts, _, _ = our_labels(env_id, k)
    assert list(ours_acts) == list(theirs_acts)
    assert ours_acts == theirs_acts  # the actuator partition, in MaMuJoCo's order
    for agent in theirs_obs:
        assert ours_obs[agent] == theirs_obs[agent], agent


@pytest.mark.parametrize("env_id", list(SCENARIOS))
def test_global_categories_match_mamujoco(env_id):
    """The root's entries every agent observes, at the end of each observation."""
    theirs_obs, _ = mamujoco_labels(env_id, 0)
    ours_obs, _, gq, gv = our_labels(env_id, 0)
    n = len(gq) + len(gv)
    for agent in theirs_obs:
        assert ours_obs[agent][-n:] == theirs_obs[agent][-n:]
        assert {label[0] for label in ours_obs[agent][-n:]} == {"qpos", "qvel"}
