"""Multi-task MARL with shared decision layers, and transfer of them to new tasks.

K tasks (env ids or scenarios, each with its own vmapped env batch, observation size, action
count and agent count) train in one jitted update: each task keeps its own perception (and
heads / mixer), all share one set of decision layers, and the per-task losses are summed
(weighted: ``task_weighting``) into one gradient (``jaxmarl.baselines.multitask.tasks``).

* ``make_mtapn`` (``alg=mtapn_vdn|mtapn_qmix``): the value-based form of Wang et al. (2023):
  per-task perception with candidate actions, a decision MLP shared by all tasks giving one Q
  per (agent, candidate action), a VDN or QMIX mixer per task (``CandidateQNetwork``). Learning
  is the repository's PQN core (no replay, TD(lambda) targets from the current network,
  ``td_loss``), one rollout and loss per task.
* ``make_multitask_ppo`` (``alg=mt_mappo|mt_ippo``): the actor-critic form: per-task encoders,
  policy heads and critic towers around one shared actor trunk (``ActorCritic``), PPO core.

Transfer: ``init_decision_from=RUN_DIR`` starts any of them (single task: leave ``tasks``
empty and set ``env``) from saved decision layers, ``freeze_decision=true`` keeps them fixed.
``make_train`` / ``Learner`` work with ``jaxmarl.training.host.loop.run``: its greedy evaluation
covers every task (``eval.jsonl``: ``eval_task<i>/episode_return``, ``eval_task<i>/won``, ...
and their means over tasks, ``eval_episode_return``, ...); the GIF uses the first task, the
learning curve the mean training return (per task in the metrics as
``task<i>/episode_return``); ``jaxmarl.train`` saves the decision layers of seed 0 to
``RUN_DIR/decision_layers`` at the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from jaxmarl.baselines.multitask.tasks import (
    MultiTaskFields,
    MultiTaskState,
    TaskFns,
    TaskSpec,
    evaluate_every_task,
    load_decision_layers,
    make_multitask_update,
    make_task_env,
    partitioned_optimiser,
    split_params,
    task_view,
)
from jaxmarl.baselines.ppo import PPOConfig, build_network, ppo_parts
from jaxmarl.baselines.q_learning import PQNConfig
from jaxmarl.baselines.q_learning.acting import q_policies
from jaxmarl.baselines.q_learning.config import epsilon_schedule
from jaxmarl.baselines.q_learning.network import build_mixer
from jaxmarl.baselines.q_learning.td_loss import (
    collect_sequence,
    sequence_minibatches_of,
    td_loss,
    truncation_slots,
)
from jaxmarl.networks import MLPTrunk, ValueHead, encoder_from_config
from jaxmarl.networks.candidate_q import CandidateLayer, CandidateQNetwork
from jaxmarl.networks.trunks import trunk_from_config
from jaxmarl.training.config import EnvConfig, GRUTrunkConfig, NetworkConfig, RunConfig, require
from jaxmarl.training.learner import Learner, greedy_episodes, make_train_from
from jaxmarl.training.rollout import TrainingEnv, episode_metrics
from jaxmarl.training.sgd import learning_rate
from jaxmarl.wrappers import AgentBatch, LogWrapper


# --------------------------------------------------------------------------- configs
def mtapn_network_defaults() -> NetworkConfig:
    """Perception as in the MTAPN agent: dense 64 -> GRU 64 (+ candidate layer), ids on."""
    return NetworkConfig(
        encoder_sizes=(),
        embed_dim=64,
        trunk=GRUTrunkConfig(size=64),
        activation="relu",
        layer_norm=True,
        agent_id=True,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class MTAPNConfig(MultiTaskFields, PQNConfig):
    """Value-based multi-task learner; see ``PQNConfig`` and ``MultiTaskFields`` for fields.

    ``network`` configures every task's perception (``network.trunk``, GRU or MLP:
    its recurrent or feed-forward layer, whose width the candidate layer keeps); the shared
    decision MLP is ``decision_sizes`` then one scalar output.
    """

    env: EnvConfig = dataclasses.field(default_factory=lambda: EnvConfig(num_envs=16))
    network: NetworkConfig = dataclasses.field(default_factory=mtapn_network_defaults)
    run: RunConfig = dataclasses.field(
        default_factory=lambda: RunConfig(total_timesteps=16 * 25 * 1000)
    )
    num_steps: int = 25
    num_minibatches: int = 4
    num_epochs: int = 2

    def __post_init__(self):
        super().__post_init__()
        self.check_multitask()
        require(
            not self.network.head_sizes,
            f"network.head_sizes={list(self.network.head_sizes)} is not used by MTAPN (its "
            f"output is the shared decision MLP); set decision_sizes instead and leave "
            f"network.head_sizes empty",
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultiTaskPPOConfig(MultiTaskFields, PPOConfig):
    """Actor-critic multi-task learner; the shared decision layers are the actor's trunk
    (``network.trunk``); encoders, policy heads and critics are per task."""

    def __post_init__(self):
        super().__post_init__()
        self.check_multitask()
        require(
            not self.separate_grad_clip,
            "separate_grad_clip=true is not supported by the multi-task learner (one clip over "
            "all tasks' parameters); leave it false",
        )
        require(
            not self.normalize_obs,
            "normalize_obs=true is not supported by the multi-task learner (its tasks' inputs "
            "differ and nothing keeps statistics per task); leave it false",
        )
        require(
            self.share_parameters,
            "share_parameters=false is not supported by the multi-task learner (its decision "
            "layers are shared by every agent of every task); leave it true",
        )


# --------------------------------------------------------------------------- shared plumbing
@dataclasses.dataclass(frozen=True)
class MultiTask:
    """A built multi-task learner: ``init_with(key, decision=None)`` lets callers (transfer
    benchmarks) start each vmapped seed from its own decision layers."""

    learner: Learner
    init_with: Callable[[jax.Array, Any], MultiTaskState]
    task_fns: dict[str, TaskFns]


def _make_step(config) -> Callable[[Any], optax.GradientTransformation]:
    if getattr(config, "optimiser", "adam") == "radam":
        return optax.radam
    return lambda lr: optax.adam(lr, eps=1e-5)


def _assemble(
    config,
    specs: tuple[TaskSpec, ...],
    envs: dict[str, TrainingEnv],
    task_fns: dict[str, TaskFns],
    init_task: Callable[[str, jax.Array], tuple[Any, Any]],
    num_epochs: int,
    optimiser_steps: int,
    greedy: dict[str, tuple[Callable, Callable]],
) -> MultiTask:
    """Optimiser, init, update and the ``Learner`` around per-task functions.

    ``greedy`` per task: ``(greedy_policy(view, carry, inputs), initial_carry(n))``, the
    policy reading the task's ``task_view``.
    """
    lr = learning_rate(config.lr, config.anneal_lr, optimiser_steps)
    optimiser = partitioned_optimiser(
        _make_step(config),
        lr,
        decision_lr_scale=config.decision_lr_scale,
        freeze_decision=config.freeze_decision,
        max_grad_norm=config.max_grad_norm,
    )
    names = [s.name for s in specs]

    def init_with(key: jax.Array, decision: Any = None) -> MultiTaskState:
        keys = jax.random.split(key, len(names) + 1)
        task_params, runners = {}, {}
        for name, task_key in zip(names, keys[1:]):
            task_params[name], runners[name] = init_task(name, task_key)
        params = split_params(task_params)
        if decision is not None:
            params = {**params, "decision": decision}
        return MultiTaskState(
            params=params,
            opt_state=optimiser.init(params),
            runners=runners,
            failure=jnp.ones((len(names),), jnp.float32),
            key=keys[0],
            update=jnp.int32(0),
        )

    loaded = None
    if config.init_decision_from:
        like = jax.eval_shape(lambda k: init_with(k).params["decision"], jax.random.key(0))
        loaded = load_decision_layers(config.init_decision_from, like)
    update = make_multitask_update(
        task_fns,
        optimiser,
        num_epochs=num_epochs,
        weighting=config.task_weighting,
        weight_ema=config.weight_ema,
        freeze_decision=config.freeze_decision,
    )

    def on_params(name: str) -> Callable:
        """Task ``name``'s greedy policy on the whole multi-task params."""
        return lambda params, carry, inputs: greedy[name][0](task_view(params, name), carry, inputs)

    def evaluator(name: str) -> Callable:
        return lambda params, key, num_envs: greedy_episodes(
            envs[name], on_params(name), greedy[name][1], params, key, num_envs
        )

    first = names[0]
    evaluators = {name: evaluator(name) for name in names}
    learner = Learner(
        config=config,
        env=envs[first],
        init=lambda key: init_with(key, loaded),
        update=update,
        num_updates=config.num_updates,
        greedy_policy=on_params(first),
        initial_carry=greedy[first][1],
        env_steps_per_update=config.steps_per_update,
        evaluate_tasks=lambda params, key, num_envs: evaluate_every_task(
            evaluators, params, key, num_envs
        ),
    )
    return MultiTask(learner=learner, init_with=init_with, task_fns=dict(task_fns))


def _task_envs(specs, agent_id: bool, world_state: bool) -> dict[str, TrainingEnv]:
    def training_env(spec: TaskSpec) -> TrainingEnv:
        env = LogWrapper(make_task_env(spec))
        return TrainingEnv(env, AgentBatch.from_env(env, agent_id=agent_id), world_state)

    return {spec.name: training_env(spec) for spec in specs}


# --------------------------------------------------------------------------- value-based
def build_candidate_network(
    config: MTAPNConfig, batch: AgentBatch, task: str = ""
) -> CandidateQNetwork:
    """Per-task perception from ``config.network``, shared decision MLP, per-task mixer."""
    if not batch.discrete:
        raise ValueError(
            f"the candidate-action Q-network needs discrete actions, but task {task!r} has "
            f"continuous ones; use alg=mt_ippo or alg=mt_mappo"
        )
    net = config.network
    trunk = trunk_from_config(net)
    width = trunk.output_size
    return CandidateQNetwork(
        encoder=encoder_from_config(net, batch.input_shape, batch.input_leaves),
        trunk=trunk,
        candidate=CandidateLayer(batch.num_actions, width),
        decision_trunk=MLPTrunk(config.decision_sizes, "relu", net.layer_norm),
        decision_head=ValueHead(),
        mixer=build_mixer(config),
        num_agents=batch.num_agents,
    )


def build_mtapn(config: MTAPNConfig) -> MultiTask:
    specs = config.task_specs
    envs = _task_envs(specs, config.network.agent_id, world_state=config.mixer.needs_world_state)
    num_envs = config.env.num_envs
    epsilon = epsilon_schedule(config, config.num_updates)
    networks = {
        spec.name: build_candidate_network(config, envs[spec.name].batch, spec.env_id)
        for spec in specs
    }

    def task_fns(name: str) -> TaskFns:
        env, network = envs[name], networks[name]
        exploring_policy, _ = q_policies(network)
        slots = truncation_slots(env.env, config.num_steps)

        def collect(view, runner, update):
            runner_out, trajectory, sequence = collect_sequence(
                env, exploring_policy(view, epsilon(update)), runner, config.num_steps,
                record_terminal=config.bootstrap_truncation, slots=slots,
            )  # fmt: skip
            return runner_out, sequence, episode_metrics(trajectory)

        def minibatches(key, sequence):
            return sequence_minibatches_of(key, sequence, config.num_minibatches)

        return TaskFns(
            collect=collect,
            loss=lambda view, mb: td_loss(network, config, view, None, mb),
            minibatches=minibatches,
        )

    def init_task(name, key):
        params_key, env_key = jax.random.split(key)
        env, network = envs[name], networks[name]
        runner = env.reset(env_key, num_envs, network.initial_carry(num_envs))
        inputs = env.runner_inputs(runner)
        return network.init(params_key, inputs.obs, inputs.world_state), runner

    greedy = {n: (q_policies(network)[1], network.initial_carry) for n, network in networks.items()}
    return _assemble(
        config, specs, envs, {s.name: task_fns(s.name) for s in specs}, init_task,
        config.num_epochs,
        config.num_updates * config.num_epochs * config.num_minibatches,
        greedy,
    )  # fmt: skip


def make_mtapn(config: MTAPNConfig) -> Learner:
    """The value-based multi-task ``Learner`` (``init``, ``update``, ...)."""
    return build_mtapn(config).learner


# --------------------------------------------------------------------------- actor-critic
def _as_actor_critic(view: dict) -> dict:
    """A task view with the decision layers where ``ActorCritic`` reads its trunk."""
    params = {k: v for k, v in view.items() if k != "decision"}
    return {**params, "trunk": view["decision"]}


def build_multitask_ppo(config: MultiTaskPPOConfig) -> MultiTask:
    specs = config.task_specs
    envs = _task_envs(specs, config.network.agent_id, world_state=config.critic.centralised)
    parts = {
        name: ppo_parts(config, env, build_network(config, env.batch, env.world_state_leaves()))
        for name, env in envs.items()
    }

    def task_fns(name: str) -> TaskFns:
        part = parts[name]
        return TaskFns(
            collect=lambda view, runner, _: part.collect(_as_actor_critic(view), runner),
            loss=lambda view, minibatch: part.loss_fn(_as_actor_critic(view), minibatch),
            minibatches=part.minibatches,
        )

    def init_task(name, key):
        params, runner = parts[name].init_params(*jax.random.split(key))
        params = dict(params)
        decision = params.pop("trunk")
        return {**params, "decision": decision}, runner

    def greedy_on_view(part):
        return lambda view, carry, inputs: part.greedy_policy(_as_actor_critic(view), carry, inputs)

    greedy = {n: (greedy_on_view(part), part.initial_carry) for n, part in parts.items()}
    return _assemble(
        config, specs, envs, {s.name: task_fns(s.name) for s in specs}, init_task,
        config.update_epochs,
        config.num_updates * config.update_epochs * config.num_minibatches,
        greedy,
    )  # fmt: skip


def make_multitask_ppo(config: MultiTaskPPOConfig) -> Learner:
    """The actor-critic multi-task ``Learner``."""
    return build_multitask_ppo(config).learner


def make_train(config: MTAPNConfig | MultiTaskPPOConfig):
    """``train(key) -> (final MultiTaskState, metrics [num_updates])``: pure, ``vmap``-able."""
    if isinstance(config, MultiTaskPPOConfig):
        return make_train_from(make_multitask_ppo(config))
    return make_train_from(make_mtapn(config))
