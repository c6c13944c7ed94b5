"""Multi-task learners with shared decision layers, and transfer of those layers to new tasks.

``learners`` builds MTAPN (value-based, candidate actions, VDN or QMIX mixer per task) and
multi-task PPO (per-task encoders, heads and critics around one shared actor trunk); ``tasks``
holds the pieces both use: task specs, parameter views, task weighting, per-task evaluation
and saving / loading decision layers.
"""

from pathlib import Path

import jax

from jaxmarl.algorithms import register_algorithm
from jaxmarl.baselines.multitask.learners import (
    MTAPNConfig,
    MultiTask,
    MultiTaskPPOConfig,
    build_candidate_network,
    build_mtapn,
    build_multitask_ppo,
    make_mtapn,
    make_multitask_ppo,
    make_train,
)
from jaxmarl.baselines.multitask.tasks import (
    DECISION_DIR,
    MultiTaskFields,
    MultiTaskState,
    TaskSpec,
    evaluate_every_task,
    load_decision_layers,
    parse_task,
    save_decision_layers,
)


def save_seed0_decision_layers(result) -> Path:
    """After a run: seed 0's shared decision layers to ``RUN_DIR/decision_layers``, the path
    ``init_decision_from=RUN_DIR`` reads."""
    decision = jax.tree.map(lambda x: x[0], result.state.params["decision"])
    return save_decision_layers(result.run_dir / DECISION_DIR, decision, overwrite=True)


for _name, _config, _make, _fixed in (
    ("mtapn_vdn", MTAPNConfig, make_mtapn, "mixer=vdn"),
    ("mtapn_qmix", MTAPNConfig, make_mtapn, "mixer=qmix"),
    ("mt_ippo", MultiTaskPPOConfig, make_multitask_ppo, "critic=local"),
    ("mt_mappo", MultiTaskPPOConfig, make_multitask_ppo, "critic=centralised"),
):
    register_algorithm(
        _name, _config, _make, fixed=(_fixed,), multitask=True, after_run=save_seed0_decision_layers
    )

__all__ = [
    "DECISION_DIR",
    "MTAPNConfig",
    "MultiTask",
    "MultiTaskFields",
    "MultiTaskPPOConfig",
    "MultiTaskState",
    "TaskSpec",
    "build_candidate_network",
    "build_mtapn",
    "build_multitask_ppo",
    "evaluate_every_task",
    "load_decision_layers",
    "make_mtapn",
    "make_multitask_ppo",
    "make_train",
    "parse_task",
    "save_decision_layers",
    "save_seed0_decision_layers",
]
