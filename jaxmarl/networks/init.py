"""Weight initialisers, set in one place so every network agrees.

Orthogonal initialisation with gain sqrt(2) for hidden layers (ReLU/tanh bodies), a small gain
(0.01) for policy logits so the initial policy is near uniform, and gain 1 for value and Q
outputs: the choices of the PPO implementation-details literature.
"""

import math

from flax import linen as nn

HIDDEN = nn.initializers.orthogonal(math.sqrt(2.0))
POLICY = nn.initializers.orthogonal(0.01)
VALUE = nn.initializers.orthogonal(1.0)
BIAS = nn.initializers.zeros_init()

ACTIVATIONS = {"relu": nn.relu, "tanh": nn.tanh, "gelu": nn.gelu, "silu": nn.silu}


def activation(name: str):
    """The activation called ``name``; raises ``ValueError`` listing the valid names."""
    try:
        return ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown activation {name!r}; choose one of {sorted(ACTIVATIONS)}"
        ) from None
