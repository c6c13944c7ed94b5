"""PPO's learning-rate warmup and decay (``lr_warmup``, ``lr_decay``), against values worked by
hand from JaxMARL's ``ippo_rnn_overcooked_v2`` schedule: a linear rise from 0 over
``int(LR_WARMUP * NUM_UPDATES)`` whole updates, then a cosine decay to 0 over the rest."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxmarl.baselines.ppo import PPOConfig, ppo_optimiser
from jaxmarl.training.config import EnvConfig, RunConfig
from jaxmarl.training.sgd import learning_rate

LR = 2.5e-4


def test_warmup_then_cosine_matches_the_hand_computed_values():
    # JaxMARL's v2 config: 3e7 // (256 * 256) = 457 updates of 4 epochs x 64 minibatches;
    # warmup int(0.05 * 457) = 22 updates = 5,632 steps; the cosine spans 435 x 256 = 111,360.
    per_update, updates = 4 * 64, 457
    warmup, decay = 22 * per_update, 435 * per_update
    schedule = learning_rate(LR, True, updates * per_update, warmup, "cosine")
    cases = {
        0: 0.0,
        warmup // 4: LR / 4,
        warmup // 2: LR / 2,
        warmup: LR,
        warmup + decay // 2: LR / 2,
        warmup + decay // 3: LR * 0.5 * (1 + math.cos(math.pi / 3)),
        warmup + decay: 0.0,
    }
    for step, want in cases.items():
        assert float(schedule(step)) == pytest.approx(want, rel=1e-5, abs=1e-12), step


def test_no_warmup_keeps_the_linear_anneal_and_the_constant_rate():
    linear = learning_rate(LR, True, 100)
    assert [float(linear(s)) for s in (0, 50, 100)] == pytest.approx([LR, LR / 2, 0.0])
    assert learning_rate(LR, False, 100) == LR
    held = learning_rate(LR, False, 100, warmup=10)  # warmup without anneal: then constant
    assert [float(held(s)) for s in (0, 5, 10, 99)] == pytest.approx([0.0, LR / 2, LR, LR])
    linear_after = learning_rate(LR, True, 100, warmup=20)
    assert [float(linear_after(s)) for s in (20, 60, 100)] == pytest.approx([LR, LR / 2, 0.0])


def test_ppo_optimiser_steps_follow_the_schedule():
    """Adam's step for a constant gradient is the learning rate (the moments equal g and g^2),
    so the parameter's change per step reads the schedule the PPO optimiser built."""
    config = PPOConfig(
        env=EnvConfig(env_id="MPE_simple_spread_v3", num_envs=4),
        run=RunConfig(total_timesteps=4 * 8 * 10),
        num_steps=8,
        update_epochs=1,
        num_minibatches=2,
        lr=LR,
        lr_warmup=0.3,  # int(0.3 * 10) = 3 updates = 6 steps, then a cosine over 14
        lr_decay="cosine",
    )
    optimiser = ppo_optimiser(config, config.num_updates)
    params = {"w": jnp.zeros(())}
    grads = {"w": jnp.ones(())}

    @jax.jit
    def steps(state):
        def body(state, _):
            updates, state = optimiser.update(grads, state, params)
            return state, -updates["w"]

        return jax.lax.scan(body, state, None, 20)[1]

    got = np.asarray(steps(optimiser.init(params)))
    want = [LR * s / 6 for s in range(6)]
    want += [LR * 0.5 * (1 + math.cos(math.pi * s / 14)) for s in range(14)]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-10)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("lr_warmup", 1.0, "lr_warmup is a fraction of the updates in \\[0, 1\\)"),
        ("lr_warmup", -0.1, "lr_warmup"),
        ("lr_decay", "exp", "lr_decay must be one of"),
    ],
)
def test_bad_schedule_settings_are_rejected(field, value, match):
    with pytest.raises(ValueError, match=match):
        PPOConfig(**{field: value})
