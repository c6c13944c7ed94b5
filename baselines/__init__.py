"""Learners, imported as ``jaxmarl.baselines``."""
