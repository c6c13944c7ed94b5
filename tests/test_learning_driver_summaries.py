"""The Hanabi, JaxNav and Overcooked learning drivers report runs of any seed count, one seed
included.

Their tables give an IQM over seeds through ``ppo_vs_jaxmarl.seed_iqm`` (``jaxmarl.stats``
needs at least two runs); a one-seed run used to train both sides and then fail while writing
the table.
"""

import pytest

from tests.benchmark_scripts import load_benchmark_script


def test_seed_iqm_is_none_for_one_seed():
    shared = load_benchmark_script("ppo_vs_jaxmarl")
    assert shared.seed_iqm([3.0]) is None
    pytest.importorskip("rliable")
    assert shared.seed_iqm([1.0, 2.0, 3.0, 10.0]) == 2.5


def test_hanabi_table_cells_for_one_seed_and_several():
    driver = load_benchmark_script("hanabi_ippo_vs_jaxmarl")
    assert driver.stats_cells([3.0]) == ("3.00 ± 0.00", "—")
    pytest.importorskip("rliable")  # jaxmarl.stats' extra
    mean, iqm = driver.stats_cells([1.0, 2.0, 3.0, 10.0])
    assert mean.startswith("4.00 ± ") and iqm == "2.50"  # the middle half: 2 and 3


def test_jaxnav_summary_for_one_seed_and_several():
    driver = load_benchmark_script("jaxnav_ippo_vs_jaxmarl")
    assert driver._summary([0.25]) == "0.250"
    pytest.importorskip("rliable")
    assert driver._summary([0.0, 0.2, 0.4, 1.0]) == "0.400 (IQM 0.300)"


def test_overcooked_iqm_cell_for_one_seed_and_several():
    driver = load_benchmark_script("overcooked_ippo_vs_jaxmarl")
    assert driver._iqm([180.0]) == "—"
    pytest.importorskip("rliable")
    assert driver._iqm([100.0, 160.0, 200.0, 240.0]) == "180.0"
