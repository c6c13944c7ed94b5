"""Device counts and splits (``run.devices``). Runs on meshes of several devices, and their
equality with one device, are in ``test_scale_out.py``."""

import jax
import pytest

from jaxmarl.training.config import RunConfig
from jaxmarl.training.host.devices import Placement, check_split, use_devices


def test_seeds_must_split_evenly():
    with pytest.raises(ValueError, match=r"run.devices in \[1, 3\]"):
        check_split(3, 2)
    check_split(4, 2)
    with pytest.raises(ValueError, match="does not split evenly over run.devices=2"):
        RunConfig(num_seeds=3, devices=2)
    with pytest.raises(ValueError, match="run.devices must be > 0"):
        RunConfig(devices=0)


def test_too_many_devices_is_a_clear_error():
    # Once the backend runs, the device count is fixed: asking for more names the fix.
    more = jax.device_count() + 1
    with pytest.raises(ValueError, match=f"xla_force_host_platform_device_count={more}"):
        use_devices(more)
    with pytest.raises(ValueError, match="use_devices"):
        Placement(more, 1).mesh()
