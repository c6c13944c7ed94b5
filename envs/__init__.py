"""Environment families, imported as ``jaxmarl.envs.<family>``; build them with jaxmarl.make."""
