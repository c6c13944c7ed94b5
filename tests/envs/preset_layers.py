"""What a PPO preset builds, read without compiling: its parameter tree's weight shapes by layer
path, for the tests that pin presets to a reference's network (Hanabi, JaxNav, OvercookedV2)."""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

from jaxmarl.baselines.ppo import build_network, ppo_parts
from jaxmarl.train import parse
from jaxmarl.training.rollout import TrainingEnv


class PresetNetwork(NamedTuple):
    config: Any  # the parsed learner config
    env: TrainingEnv
    parts: Any  # the learner's parts (``init_params``, ``loss_fn``, ...)
    params: Any  # the parameter tree's shapes (``jax.ShapeDtypeStruct`` leaves)


def preset_network(alg: str, preset: str, *overrides: str) -> PresetNetwork:
    """The network of ``alg=ALG preset=PRESET OVERRIDES...``, its parameters as shapes."""
    config = parse([f"alg={alg}", f"preset={preset}", *overrides, "--no-progress"]).config
    env = TrainingEnv.from_config(
        config.env, agent_id=config.network.agent_id, world_state=config.critic.centralised
    )
    parts = ppo_parts(config, env, build_network(config, env.batch))
    params, _ = jax.eval_shape(parts.init_params, jax.random.key(0), jax.random.key(1))
    return PresetNetwork(config, env, parts, params)


def kernel_shapes(params: Any) -> dict[str, tuple[int, ...]]:
    """Every weight array (biases follow from them) by its layer's path, e.g.
    ``"heads/policy/hidden_0": (128, 128)``."""
    return {
        "/".join(k.key for k in path).removesuffix("/kernel"): leaf.shape
        for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]
        if leaf.ndim >= 2
    }
