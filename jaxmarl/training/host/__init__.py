"""Host-side training machinery: runs between jitted chunks, never inside one.

``loop`` (chunks, evaluation, resume), ``checkpoint`` (orbax), ``logging`` (JSONL, CSV,
TensorBoard, W&B), ``plotting``, ``progress`` and ``devices`` (placing seeds on devices). The
pure JAX pieces that learners compose live one level up, in ``jaxmarl.training``.
"""
