"""Overcooked: cooperative cooking. ``overcooked_v2`` (JaxMARL 0.2.0's OvercookedV2) lives in
the ``v2`` subpackage.

Importing this package registers the family's ids and loads no env module.
"""

from jaxmarl.registry import register_family

# JaxMARL's id, kept verbatim so code written for JaxMARL runs unchanged.
register_family(__name__, {"overcooked_v2": "v2.overcooked_v2:OvercookedV2"})
