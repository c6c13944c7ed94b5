"""Record JaxMARL 0.2.0's ``OBLAgentR2D2`` on recorded Hanabi games, for ``test_hanabi_obl.py``.

JaxMARL has the same import name as this package, so this runs in its own virtual environment
(with ``safetensors``) and is never imported by the tests::

    cd /tmp && /tmp/peer/bin/python -I /path/to/tests/envs/hanabi/make_obl_reference.py

The published OBL weights (512 wide, about 20 MB per agent) are not needed: a narrow network
(``hid_dim=16``) initialised from ``PRNGKey(0)`` stands in for them, saved with JaxMARL's own
``save_params``. It plays JaxMARL's 2-player games of ``data/jaxmarl_games.npz``
(``make_jaxmarl_reference.py``): both agents' observations and legal moves after every move,
the three games in a row, one recurrent state per agent carried through. It writes:

* ``data/obl_small.safetensors``: the narrow network's parameters, in JaxMARL's file format;
* ``data/obl_reference.npz``:

  * ``advantages`` [T, 2, 21] float32: the network's output for every step and agent;
  * ``moves`` [T, 2] int32: ``greedy_act``'s legal move of highest advantage;
  * ``carry_c``, ``carry_h`` [2, 2, 16] float32: the LSTM state after the last step;
  * ``published_tree`` [P] str: ``path:shape`` of every parameter of the published network
    (default fields), so that its files are known to load into this project's module.
"""

from __future__ import annotations

import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import jaxmarl

if not hasattr(jaxmarl, "environments"):
    sys.exit("run this with JaxMARL 0.2.0's interpreter (/tmp/peer/bin/python -I), not ours")

from jaxmarl.environments.hanabi.pretrained import OBLAgentR2D2  # noqa: E402
from jaxmarl.wrappers.baselines import save_params  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parent / "data"
HID_DIM = 16


def tree_lines(params):
    flat = jax.tree_util.tree_flatten_with_path(params)[0]
    return sorted(
        "/".join(str(k.key) for k in path) + ":" + "x".join(map(str, leaf.shape))
        for path, leaf in flat
    )


def main():
    games = np.load(DATA / "jaxmarl_games.npz")
    obs = games["p2_obs"].astype(np.float32)
    legal = np.unpackbits(games["p2_legal"], axis=-1)[..., :21].astype(np.float32)

    agent = OBLAgentR2D2(hid_dim=HID_DIM)
    carry = agent.initialize_carry(jax.random.PRNGKey(0), batch_dims=(2,))
    params = agent.init(jax.random.PRNGKey(0), carry, (obs[0], obs[0][..., 125:]))
    save_params(params, DATA / "obl_small.safetensors")

    advantages, moves = [], []
    for t in range(len(obs)):
        _, adv = agent.apply(params, carry, (obs[t], obs[t][..., 125:]))
        carry, move = agent.greedy_act(params, carry, (jnp.asarray(obs[t]), legal[t]))
        advantages.append(np.asarray(adv))
        moves.append(np.asarray(move))

    published = OBLAgentR2D2()
    zeros = published.initialize_carry(jax.random.PRNGKey(0), batch_dims=(2,))
    shapes = jax.eval_shape(
        lambda: published.init(jax.random.PRNGKey(0), zeros, (obs[0], obs[0][..., 125:]))
    )
    np.savez_compressed(
        DATA / "obl_reference.npz",
        advantages=np.stack(advantages).astype(np.float32),
        moves=np.stack(moves).astype(np.int32),
        carry_c=np.asarray(carry[0], np.float32),
        carry_h=np.asarray(carry[1], np.float32),
        published_tree=np.array(tree_lines(shapes)),
    )
    on_turn = np.stack(moves).min(axis=1)
    print(f"{len(obs)} steps; distinct moves on turn: {np.unique(on_turn).tolist()}")
    for name in ("obl_small.safetensors", "obl_reference.npz"):
        print(f"wrote {DATA / name} ({(DATA / name).stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main()
