"""Multi-agent MuJoCo on brax (JaxMARL's MABrax): one robot, its joints split between agents.

``jaxmarl.make("ant_4x2", ...)``; see ``README.md`` in this folder for the factorisations,
observations, options and the deviations from JaxMARL 0.2.0. Needs the optional extra
``pip install 'jaxmarl[mujoco]'`` (brax and mujoco-mjx).

Importing this package registers the family's ids and loads no env module (nor brax): each
public name below is imported from its submodule on first use (``jaxmarl._lazy``).
"""

from jaxmarl._lazy import lazy_exports
from jaxmarl.registry import register_family

# JaxMARL's ids, kept verbatim so code written for JaxMARL runs unchanged.
register_family(
    __name__,
    {
        "ant_4x2": "mabrax:Ant",
        "halfcheetah_6x1": "mabrax:HalfCheetah",
        "hopper_3x1": "mabrax:Hopper",
        "humanoid_9|8": "mabrax:Humanoid",
        "walker2d_2x3": "mabrax:Walker2d",
    },
    # jaxmarl.make("ant_3x3") lists MaMuJoCo's factorisations (a pure-Python module: no brax).
    unknown_id_hint="factorisation:unknown_id_hint",
)

_EXPORTS = {
    "MABraxEnv": "mabrax",
    "MABraxState": "mabrax",
    "Ant": "mabrax",
    "HalfCheetah": "mabrax",
    "Hopper": "mabrax",
    "Humanoid": "mabrax",
    "Walker2d": "mabrax",
    "ROBOTS": "factorisation",
    "render_frame": "render",
    "save_gif": "render",
    "KNOWN": "factorisation",
    "known_factorisations": "factorisation",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
__all__ = sorted(_EXPORTS)
