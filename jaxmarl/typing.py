"""Type aliases shared across the package (one place, so annotations agree)."""

from __future__ import annotations

from typing import Any

import jax

AgentName = str
Observations = dict[AgentName, jax.Array]
Actions = dict[AgentName, jax.Array]
Rewards = dict[AgentName, jax.Array]
Dones = dict[AgentName, jax.Array]  # plus the "__all__" entry
AvailActions = dict[AgentName, jax.Array]
Infos = dict[str, Any]
PRNGKey = jax.Array
