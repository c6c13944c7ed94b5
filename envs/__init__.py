"""Environment families, imported as ``jaxmarl.envs.<family>``; build them with jaxmarl.make.

A family is a subpackage whose ``__init__`` registers its ids with
``jaxmarl.registry.register_family`` and imports none of its env modules. The registry imports
every subpackage found here the first time it is consulted, so a new family needs no edit
outside its own folder.
"""
