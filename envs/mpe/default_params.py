"""JaxMARL's ``default_params`` module path: the MPE action types and world constants.

``make("MPE_simple_v3", action_type=CONTINUOUS_ACT)`` as in JaxMARL. The values are the
family's own (``_world.py``, mpe2's world); JaxMARL's colour constants are not kept (each
scenario here sets mpe2's colours).
"""

from ._world import (
    CONTACT_FORCE,
    CONTACT_MARGIN,
    CONTINUOUS_ACT,
    DAMPING,
    DISCRETE_ACT,
    DT,
    MAX_STEPS,
)

__all__ = [
    "CONTACT_FORCE",
    "CONTACT_MARGIN",
    "CONTINUOUS_ACT",
    "DAMPING",
    "DISCRETE_ACT",
    "DT",
    "MAX_STEPS",
]
