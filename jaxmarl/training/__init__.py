"""Training building blocks shared by every learner (rollout, targets, losses, loop, IO)."""
