"""OBL's pretrained agents as cross-play partners of a trained Hanabi run.

``python -m jaxmarl.evaluate RUN_DIR --cross-play --obl-partner WEIGHTS...`` (or
:func:`obl_partner` with :func:`jaxmarl.evaluate.cross_play`) pairs every seed of a 2-player
Hanabi run with every OBL agent given, the zero-shot coordination measure of the OBL paper.
``WEIGHTS`` are JaxMARL's converted OBL files (``*.safetensors``) or folders holding them (all
``*.safetensors`` below, sorted), e.g. a clone of ``huggingface.co/mttga/obl-r2d2-flax``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import jax
import jax.numpy as jnp

import jaxmarl
from jaxmarl.evaluate import EvaluateError, Partner, TrainedRun
from jaxmarl.training.types import StepInput
from jaxmarl.wrappers import AgentBatch

from .obl_r2d2_agent import OBLAgentR2D2

__all__ = ["obl_network_of", "obl_partner", "obl_partner_of_run", "weight_files"]


def weight_files(weights: Sequence[str | Path]) -> list[tuple[str, Path]]:
    """``(name, file)`` of every ``.safetensors`` file given or found below a given folder."""
    found = []
    for given in map(Path, weights):
        if given.is_dir():
            files = sorted(given.rglob("*.safetensors"))
            if not files:
                raise EvaluateError(f"{given} holds no .safetensors file (OBL's weight files)")
            found += [(str(f.relative_to(given).with_suffix("")), f) for f in files]
        elif given.is_file():
            found.append((given.stem, given))
        else:
            raise EvaluateError(f"no such OBL weight file or folder: {given}")
    return found


def obl_network_of(name: str, params) -> OBLAgentR2D2:
    """The network a weight file holds (its widths read from the file), or a clear error."""
    try:
        tree = params["params"]
        hid_dim, out_dim = tree["fc_a"]["kernel"].shape
        agent = OBLAgentR2D2(
            hid_dim=hid_dim,
            out_dim=out_dim,
            num_lstm_layer=len(tree["lstm"]),
            num_ff_layer=sum(key.startswith("publ_net_dense_") for key in tree),
            # The public stream reads the observation without its leading private part.
            private_obs_size=(
                tree["priv_net_dense_0"]["kernel"].shape[0]
                - tree["publ_net_dense_0"]["kernel"].shape[0]
            ),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise EvaluateError(
            f"{name} is not an OBL R2D2 weight file (JaxMARL's obl-r2d2-flax format): "
            f"{type(error).__name__} {error}"
        ) from None
    obs = jax.ShapeDtypeStruct((1, 658), jnp.float32)
    expected = jax.eval_shape(
        lambda o: agent.init(
            jax.random.key(0),
            agent.initialize_carry(None, (1,)),
            (o, o[:, agent.private_obs_size :]),
        ),
        obs,
    )
    shape_of = lambda tree: jax.tree.map(lambda x: tuple(x.shape), tree)  # noqa: E731
    if shape_of(expected) != shape_of(params):
        raise EvaluateError(
            f"{name}'s parameters do not fit OBL's R2D2 network for 2-player Hanabi (658 "
            f"observation features, {out_dim} moves): expected {shape_of(expected)}"
        )
    return agent


def obl_partner(weights: Sequence[str | Path], env_kwargs: dict | None = None) -> Partner:
    """OBL agents (one per weight file) as the columns of :func:`jaxmarl.evaluate.cross_play`.

    Args:
        weights: weight files, or folders searched for ``*.safetensors``.
        env_kwargs: the Hanabi keywords of the run they will play with (its
            ``config.env.env_kwargs``); OBL's agents play 2 players with the V0 belief.

    Raises:
        EvaluateError: no file, a file that is not OBL's format, files of different networks,
            or a Hanabi other than 2 players with ``card_knowledge="v0_belief"``; before
            anything compiles.
    """
    from jaxmarl.wrappers.baselines import load_params

    env_kwargs = dict(env_kwargs or {})
    env = jaxmarl.make("hanabi", **env_kwargs)
    if env.num_agents != 2 or env.card_knowledge != "v0_belief":
        raise EvaluateError(
            f"OBL's agents play 2-player Hanabi with card_knowledge='v0_belief'; this run's "
            f"Hanabi has {env.num_agents} players and card_knowledge={env.card_knowledge!r}"
        )
    files = weight_files(weights)
    if not files:
        raise EvaluateError("no OBL weight file or folder given")
    loaded = [(name, load_params(path)) for name, path in files]
    agents = {name: obl_network_of(name, params) for name, params in loaded}
    agent = agents[files[0][0]]
    other = next((n for n, a in agents.items() if a != agent), None)
    if other is not None:
        raise EvaluateError(
            f"{files[0][0]} and {other} are different networks ({agent} and {agents[other]}); "
            f"give files of one kind"
        )
    params = jax.tree.map(lambda *xs: jnp.stack(xs), *(p for _, p in loaded))
    num_agents = env.num_agents

    def initial_carry(num_envs: int):
        return agent.initialize_carry(None, (num_envs * num_agents,))

    def greedy_policy(params, carry, inputs: StepInput):
        batch = inputs.first.shape[0]
        # Each agent's own LSTM state, cleared where an episode starts.
        fresh = jnp.repeat(inputs.first, num_agents)[None, :, None]
        carry = jax.tree.map(lambda x: jnp.where(fresh, 0.0, x), carry)
        obs = inputs.obs.reshape(batch * num_agents, -1)
        legal = inputs.avail_actions.reshape(batch * num_agents, -1)
        carry, moves = agent.greedy_act(params, carry, (obs, legal))
        return carry, moves.reshape(batch, num_agents).astype(jnp.int32)

    names = tuple(name for name, _ in files)
    tag = Path(str(weights[0])).stem + (f"_and_{len(names) - 1}_more" if len(names) > 1 else "")
    return Partner(
        name=f"OBL agents ({', '.join(names)})",
        label="OBL",
        env=("hanabi", tuple(sorted(env_kwargs.items()))),
        batch=AgentBatch.from_env(env, agent_id=False),
        greedy_policy=greedy_policy,
        initial_carry=initial_carry,
        params=params,
        members=names,
        file_tag=f"obl_{tag}",
        record={"obl_weights": [str(path) for _, path in files]},
        member_kind="agent",
    )


def obl_partner_of_run(run: TrainedRun, weights: Sequence[str]) -> Partner:
    """``python -m jaxmarl.evaluate RUN_DIR --cross-play --obl-partner WEIGHTS...`` (a
    ``PartnerFlag``): :func:`obl_partner` for the run's Hanabi."""
    return obl_partner(weights, dict(run.config.env.env_kwargs))
