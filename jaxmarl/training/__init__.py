"""What two or more learners share.

Pure JAX, composed inside jitted updates: ``rollout`` (``TrainingEnv``, the one rollout,
episode metrics), ``targets`` (GAE, n-step and TD(lambda) returns), ``losses``, ``sgd``
(minibatch epochs), ``minibatch``, ``replay`` (the in-jit buffer), ``learner`` (the ``Learner``
record, greedy evaluation), ``types`` and ``config`` (the config sections every learner has).
Host-side code, run between jitted chunks, is in ``jaxmarl.training.host``.
"""
