"""Typed config sections shared by every learner (env, network, run).

Configs are frozen, keyword-only dataclasses: validated in ``__post_init__`` before anything is
traced, never mutated, hashable so they can be closed over by jitted code. Derived values are
properties. YAML presets in ``configs/<alg>/<env>.yaml`` are merged over these defaults by
``jaxmarl.config.load_config``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, ClassVar

from jaxmarl.training.host.checkpoint import check_retention
from jaxmarl.training.host.devices import check_split
from jaxmarl.training.host.logging import WandbConfig
from jaxmarl.training.sweep import SweepConfig

ACTIVATIONS = ("relu", "tanh", "gelu", "silu")


def require(condition: bool, message: str) -> None:
    """Raise ``ValueError(message)`` unless ``condition`` (config validation helper)."""
    if not condition:
        raise ValueError(message)


def require_positive(section: str, **values: float) -> None:
    for name, value in values.items():
        require(value > 0, f"{section}.{name} must be > 0, got {value}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class RewardShapingConfig:
    """A dense reward from the env's infos added to its reward, annealed linearly to 0.

    The learner trains on ``reward + coefficient * infos[info_key]`` with ``coefficient =
    scale * max(0, 1 - env_steps / horizon)``, ``env_steps`` counted at the start of each
    update (JaxMARL's Overcooked scripts: ``REW_SHAPING_HORIZON``). Logged episode returns
    stay the env's own. Off while ``horizon`` is 0.

    Attributes:
        horizon: env steps (per seed) until the shaping reaches 0; 0 turns it off.
        info_key: the per-agent info that holds the shaping (``infos[info_key][agent]``).
        scale: the coefficient at the start of training.
    """

    horizon: int = 0
    info_key: str = "shaped_reward"
    scale: float = 1.0

    def __post_init__(self):
        require(
            self.horizon >= 0 and int(self.horizon) == self.horizon,
            f"env.reward_shaping.horizon must be a whole number of env steps >= 0, "
            f"got {self.horizon}",
        )
        object.__setattr__(self, "horizon", int(self.horizon))
        require(self.scale >= 0, f"env.reward_shaping.scale must be >= 0, got {self.scale}")

    @property
    def active(self) -> bool:
        return self.horizon > 0

    def coefficient(self, env_steps: Any) -> Any:
        """``[]`` float32 weight of the shaping after ``env_steps`` env steps (a traced int)."""
        import jax.numpy as jnp

        progress = jnp.asarray(env_steps, jnp.float32) / float(max(self.horizon, 1))
        return jnp.float32(self.scale) * jnp.clip(1.0 - progress, 0.0, 1.0)


@dataclasses.dataclass(frozen=True, kw_only=True)
class EnvConfig:
    """Which environment, how many in parallel.

    Attributes:
        env_id: a registered id (``jaxmarl.registered_envs``).
        env_kwargs: constructor keywords for ``jaxmarl.make``.
        num_envs: environments stepped in parallel per update (``B``).
        reward_shaping: an annealed dense reward from the env's infos (off by default;
            ``env.reward_shaping.horizon=2500000`` as JaxMARL's Overcooked configs).
    """

    env_id: str = "MPE_simple_spread_v3"
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    num_envs: int = 16
    reward_shaping: RewardShapingConfig = RewardShapingConfig()

    def __post_init__(self):
        require_positive("env", num_envs=self.num_envs)
        # Unknown ids fail here, with close matches, before anything is built.
        import jaxmarl

        jaxmarl.spec(self.env_id)

    def __hash__(self) -> int:
        return hash((self.env_id, _frozen(self.env_kwargs), self.num_envs, self.reward_shaping))


def _frozen(value: Any) -> Any:
    """A hashable copy of nested dicts and lists (env kwargs such as JaxNav's ``map_params``)."""
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


@dataclasses.dataclass(frozen=True, kw_only=True)
class MLPTrunkConfig:
    """A feed-forward decision trunk (``network.trunk=mlp``).

    Attributes:
        sizes: widths of its dense layers. Empty: no trunk layers, the encoder's output goes
            straight to the heads (JaxMARL's feed-forward Hanabi network has all its layers
            after the shared embedding in the heads, ``network.head_sizes``); the multi-task
            learners, whose shared layers are the trunk, need at least one.
    """

    kind: ClassVar[str] = "mlp"
    recurrent: ClassVar[bool] = False
    sizes: tuple[int, ...] = (64,)

    def __post_init__(self):
        require(all(w > 0 for w in self.sizes), "network.trunk.sizes must be > 0")

    def build(self, activation: str, layer_norm: bool):
        """The linen ``MLPTrunk`` (``layer_norm`` after each dense layer)."""
        from jaxmarl.networks.trunks import MLPTrunk

        return MLPTrunk(self.sizes, activation, layer_norm)


@dataclasses.dataclass(frozen=True, kw_only=True)
class GRUTrunkConfig:
    """A recurrent decision trunk (``network.trunk=gru``).

    Attributes:
        size: hidden size of the GRU.
        post_sizes: dense layers after the GRU, inside the trunk (each followed by the
            network's activation); JaxMARL's MAPPO-RNN has ``[128]`` with relu.
    """

    kind: ClassVar[str] = "gru"
    recurrent: ClassVar[bool] = True
    size: int = 128
    post_sizes: tuple[int, ...] = ()

    def __post_init__(self):
        require_positive("network.trunk", size=self.size)
        require(all(w > 0 for w in self.post_sizes), "network.trunk.post_sizes must be > 0")

    def build(self, activation: str, layer_norm: bool):
        """The linen ``GRUTrunk`` (``layer_norm`` does not apply to it)."""
        from jaxmarl.networks.trunks import GRUTrunk

        return GRUTrunk(self.size, self.post_sizes, activation)


TrunkConfig = MLPTrunkConfig | GRUTrunkConfig


@dataclasses.dataclass(frozen=True, kw_only=True)
class MLPEncoderConfig:
    """A dense encoder over the flattened observation (``network.encoder=mlp``, the default).

    Its hidden widths and initialisation are the network's ``encoder_sizes`` and
    ``encoder_init_gain`` (kept there so that existing presets and run directories load
    unchanged).
    """

    kind: ClassVar[str] = "mlp"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CNNEncoderConfig:
    """Convolutions over grid observations ``(h, w, c)`` (``network.encoder=cnn``), then a
    dense layer to ``network.embed_dim``; JaxMARL's Overcooked CNN by default.

    Attributes:
        features: output channels per convolution.
        kernel_sizes: square kernel size per convolution (one per entry of ``features``).
        layer_norm: LayerNorm after every convolution and the dense layer (JaxMARL's
            PQN-VDN CNN); the network's ``layer_norm`` does not apply to the encoder.
        output_norm: LayerNorm on the encoder's output, after its activation (JaxMARL's
            OvercookedV2 IPPO-RNN, before its GRU).
    """

    kind: ClassVar[str] = "cnn"
    features: tuple[int, ...] = (32, 32, 32)
    kernel_sizes: tuple[int, ...] = (5, 3, 3)
    layer_norm: bool = False
    output_norm: bool = False

    def __post_init__(self):
        require(len(self.features) > 0, "network.encoder.features needs at least one convolution")
        require(
            len(self.features) == len(self.kernel_sizes),
            f"network.encoder needs one kernel size per convolution: features={self.features}, "
            f"kernel_sizes={self.kernel_sizes}",
        )
        require(
            all(v > 0 for v in (*self.features, *self.kernel_sizes)),
            "network.encoder.features and kernel_sizes must be > 0",
        )


EncoderConfig = MLPEncoderConfig | CNNEncoderConfig


@dataclasses.dataclass(frozen=True, kw_only=True)
class NetworkConfig:
    """Encoder -> decision trunk -> heads (the critic tower mirrors the actor's).

    Attributes:
        encoder_sizes: hidden widths of the MLP encoder before its embedding layer.
        embed_dim: encoder output width.
        encoder_init_gain: gain of the encoder's orthogonal initialisation: sqrt(2) (He-style,
            the PPO default) or 1 (JaxMARL's Q-learning agents; the IQL/VDN/QMIX default).
        encoder: ``MLPEncoderConfig`` (``network.encoder=mlp``, dense layers over the flattened
            observation) or ``CNNEncoderConfig`` (``network.encoder=cnn``, for grid
            observations, e.g. ``network.encoder={kind: cnn, features: [32, 32]}``).
        trunk: ``MLPTrunkConfig`` (feed-forward) or ``GRUTrunkConfig`` (recurrent); in YAML and
            on the command line ``network.trunk=gru``, ``network.trunk.size=64`` or
            ``network.trunk={kind: mlp, sizes: [128, 128]}``.
        head_sizes: hidden widths inside each output head (policy, value, Q), each head its
            own layers after the trunk (JaxMARL's Hanabi networks: ``[512]`` or ``[128]``).
            For PPO they matter when the critic shares the actor's trunk
            (``critic.shares_trunk``); with separate towers they act as more trunk layers.
        head_init_gain: orthogonal gain of those head layers: sqrt(2) as every hidden layer,
            or 2 (JaxMARL's Hanabi and OvercookedV2 IPPO networks).
        activation: ``"relu"``, ``"tanh"``, ``"gelu"`` or ``"silu"``.
        layer_norm: LayerNorm after dense layers.
        agent_id: append a one-hot agent id to every agent's observation.
    """

    encoder_sizes: tuple[int, ...] = ()
    embed_dim: int = 64
    encoder_init_gain: float = math.sqrt(2.0)
    encoder: EncoderConfig = MLPEncoderConfig()
    trunk: TrunkConfig = MLPTrunkConfig()
    head_sizes: tuple[int, ...] = ()
    head_init_gain: float = math.sqrt(2.0)
    activation: str = "tanh"
    layer_norm: bool = False
    agent_id: bool = False

    def __post_init__(self):
        require(
            isinstance(self.encoder, MLPEncoderConfig | CNNEncoderConfig),
            f"network.encoder must be an MLPEncoderConfig or a CNNEncoderConfig, got "
            f"{self.encoder!r}",
        )
        require(
            isinstance(self.trunk, MLPTrunkConfig | GRUTrunkConfig),
            f"network.trunk must be an MLPTrunkConfig or a GRUTrunkConfig, got {self.trunk!r}",
        )
        require(
            self.activation in ACTIVATIONS,
            f"network.activation must be one of {ACTIVATIONS}, got {self.activation!r}",
        )
        require_positive(
            "network",
            embed_dim=self.embed_dim,
            encoder_init_gain=self.encoder_init_gain,
            head_init_gain=self.head_init_gain,
        )
        require(all(w > 0 for w in self.encoder_sizes), "network layer widths must be > 0")
        require(all(w > 0 for w in self.head_sizes), "network.head_sizes must be > 0")

    @property
    def recurrent(self) -> bool:
        return self.trunk.recurrent


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunConfig:
    """Seeds, length, and what happens between jitted chunks.

    Attributes:
        seed: base PRNG seed.
        num_seeds: seeds trained in parallel by ``vmap`` in one program.
        devices: split the seeds evenly over this many devices (on a CPU: host devices, one
            thread each, so several cores work at once); must divide ``num_seeds``.
        data_devices: split each seed's envs evenly over this many devices (data-parallel
            training of one run: each rolls out its share, gradients are averaged; see
            ``jaxmarl.training.data_parallel``). The run uses ``devices x data_devices``
            devices and gives the results of one device.
        total_timesteps: env steps per seed (must be a whole number of updates).
        updates_per_chunk: updates per jitted chunk (host work happens between chunks);
            0 = everything in one chunk. If it does not divide the run, the last chunk is
            shorter (one extra compile).
        checkpoint_every: checkpoint every this many chunks (0 = only at the end).
        max_to_keep: checkpoints kept: the newest ones, or with ``keep_best`` the best ones
            (0 = every checkpoint). Older ones are deleted after each save.
        keep_period: also keep every checkpoint whose step (chunks done) is a multiple of this,
            e.g. for a sparse history of a long run (0 = none).
        keep_best: keep the ``max_to_keep`` checkpoints that are best by this metric instead
            of the newest: a training metric (``episode_return``, ``loss``, ..., the mean over
            seeds of the chunk's last update) or an evaluation metric (``eval_episode_return``,
            ...; only checkpoints taken at an evaluation are ranked by those, so set
            ``eval_every`` to ``checkpoint_every``). The newest checkpoint is always kept too,
            to resume from. Empty = keep the newest.
        keep_best_mode: ``"max"`` (larger is better) or ``"min"``.
        eval_episodes: greedy evaluation episodes per evaluation (0 = none).
        eval_every: evaluate every this many chunks (0 = only at the end).
        out_dir: parent folder of run directories.
        name: run directory name (default: ``<alg>_<env_id>_<timestamp>``).
        loggers: any of ``"jsonl"``, ``"csv"``, ``"tensorboard"``, ``"wandb"``.
        gif: write a GIF of one greedy evaluation episode at the end.
        sweep: hyperparameters vmapped in the same program (``run.sweep.lr=[1e-3,3e-4]``):
            every point trains ``num_seeds`` seeds (``jaxmarl.training.sweep``).
        wandb: W&B project, entity, group, name, tags and mode (``WandbConfig``).
    """

    seed: int = 0
    num_seeds: int = 1
    devices: int = 1
    data_devices: int = 1
    total_timesteps: int = 1_048_576  # 2**20: whole updates for power-of-two batch sizes
    updates_per_chunk: int = 10
    checkpoint_every: int = 10
    max_to_keep: int = 3
    keep_period: int = 0
    keep_best: str = ""
    keep_best_mode: str = "max"
    eval_episodes: int = 64
    eval_every: int = 0
    out_dir: str = "runs"
    name: str = ""
    loggers: tuple[str, ...] = ("jsonl", "csv")
    gif: bool = True
    sweep: SweepConfig = dataclasses.field(default_factory=SweepConfig)
    wandb: WandbConfig = dataclasses.field(default_factory=WandbConfig)

    def __post_init__(self):
        require_positive(
            "run",
            num_seeds=self.num_seeds,
            devices=self.devices,
            data_devices=self.data_devices,
            total_timesteps=self.total_timesteps,
        )
        check_split(self.num_seeds, self.devices)
        for name in ("updates_per_chunk", "checkpoint_every", "eval_episodes", "eval_every"):
            require(getattr(self, name) >= 0, f"run.{name} must be >= 0")
        check_retention(self.max_to_keep, self.keep_period, self.keep_best_mode, section="run.")
        unknown = set(self.loggers) - {"jsonl", "csv", "tensorboard", "wandb"}
        require(not unknown, f"run.loggers has unknown entries {sorted(unknown)}")


def check_num_updates(total_timesteps: int, steps_per_update: int, what: str) -> int:
    """``total_timesteps / steps_per_update`` as a whole number, or a ValueError with a fix."""
    updates, rest = divmod(total_timesteps, steps_per_update)
    if updates == 0 or rest:
        options = sorted({max(updates, 1) * steps_per_update, (updates + 1) * steps_per_update})
        raise ValueError(
            f"run.total_timesteps={total_timesteps} is not a whole number of updates of "
            f"{steps_per_update} env steps ({what}); use run.total_timesteps="
            + " or ".join(str(o) for o in options)
        )
    return updates


class RolloutUpdates:
    """Mixin for learner configs with ``env.num_envs``, ``num_steps`` and ``run``: one update
    consumes ``num_envs x num_steps`` env steps, and the run is a whole number of updates."""

    @property
    def steps_per_update(self) -> int:
        return self.env.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        """``run.total_timesteps / steps_per_update``; a ValueError with the fix otherwise."""
        return check_num_updates(
            self.run.total_timesteps, self.steps_per_update, "env.num_envs x num_steps"
        )


def chunk_sizes(num_updates: int, updates_per_chunk: int) -> tuple[int, int]:
    """``(updates per chunk, updates in the last chunk)`` for ``num_updates`` updates.

    ``updates_per_chunk == 0`` means one chunk. When the chunk length does not divide
    ``num_updates`` the last chunk is shorter (it is compiled separately), so run lengths copied
    from other libraries (e.g. 1e7 env steps = 4882 PPO updates, 2 x 2441) need no rounding.
    """
    per_chunk = num_updates if updates_per_chunk == 0 else min(updates_per_chunk, num_updates)
    return per_chunk, num_updates - (-(-num_updates // per_chunk) - 1) * per_chunk
