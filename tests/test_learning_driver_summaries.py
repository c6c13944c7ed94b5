"""The Hanabi, JaxNav and Overcooked learning drivers report runs of any seed count, one seed
included.

Their tables give an IQM over seeds through ``ppo_vs_jaxmarl.seed_iqm`` (``jaxmarl.stats``
needs at least two runs); a one-seed run used to train both sides and then fail while writing
the table.
"""

import json

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


def _peer_record(curve_per_seed, root):
    return {
        "side": "jaxmarl",
        "seeds": len(curve_per_seed),
        "env_steps_per_seed": 2 * 1024 * 128,
        "logged_curve": curve_per_seed,
        "final_raw": [c[-1] for c in curve_per_seed],
        "root_seed": root,
        "steps_per_s": 100.0,
        "compile_s": 1.0,
        "wall_s": 10.0,
    }


def test_hanabi_pools_runs_of_other_root_seeds():
    driver = load_benchmark_script("hanabi_ippo_vs_jaxmarl")
    first = {"jaxmarl": _peer_record([[0.0, 1.0], [0.0, 2.0]], root=50)}
    second = {"jaxmarl": _peer_record([[0.5, 3.0]], root=51)}
    pooled = driver.pool_results(first, [second])["jaxmarl"]
    assert pooled["seeds"] == 3 and pooled["wall_s"] == 20.0
    steps, scores = driver.curves(pooled)
    assert steps == [131072, 262144]
    assert scores == [[0.0, 1.0], [0.0, 2.0], [0.5, 3.0]]  # the parts' seeds, in order
    assert driver.finals(pooled, last=1) == [1.0, 2.0, 3.0]
    assert "| 3 | 1.00, 2.00, 3.00 |" in driver.table(driver.pool_results(first, [second]), 1, 2)
    with pytest.raises(ValueError, match="same root seed"):
        driver.pool_results(first, [first])


def test_pooling_names_every_machine_once():
    driver = load_benchmark_script("hanabi_ippo_vs_jaxmarl")
    first = {"jaxmarl": {**_peer_record([[0.0, 1.0]], root=50), "machine": "box A"}}
    second = {"jaxmarl": {**_peer_record([[0.5, 3.0]], root=51), "machine": "box A"}}
    pooled = driver.pool_results(first, [second])
    assert pooled["jaxmarl"]["machine"] == "box A"
    assert driver.machines_line(pooled) == "jaxmarl: box A"
    elsewhere = {"jaxmarl": {**second["jaxmarl"], "machine": "box B"}}
    assert driver.pool_results(first, [elsewhere])["jaxmarl"]["machine"] == "box A + box B"


def test_machines_line_names_records_without_a_machine():
    ppo = load_benchmark_script("ppo_vs_jaxmarl")
    line = ppo.machines_line({"ours": {"machine": "gpu box"}, "jaxmarl": {}})
    assert line == "ours: gpu box; jaxmarl: machine not recorded"
    assert ppo.machine().count(" CPUs") == 1


def test_pooling_refuses_one_run_without_a_root_seed_twice():
    driver = load_benchmark_script("hanabi_ippo_vs_jaxmarl")
    old = {"jaxmarl": {**_peer_record([[0.0, 1.0]], root=None), "finished_utc": "t0"}}
    other = {"jaxmarl": {**_peer_record([[0.0, 2.0]], root=None), "finished_utc": "t1"}}
    assert driver.pool_results(old, [other])["jaxmarl"]["seeds"] == 2
    with pytest.raises(ValueError, match="the same run twice"):
        driver.pool_results(old, [old])


def test_results_made_elsewhere_report_from_where_they_were_unpacked(tmp_path):
    ppo = load_benchmark_script("ppo_vs_jaxmarl")
    (tmp_path / "ours_run").mkdir()
    records = {
        "ours": {"run_dir": "/gone/machine/ours_run"},
        "pooled": {"parts": [{"run_dir": "/gone/other_run"}]},
    }
    (tmp_path / "results.json").write_text(json.dumps(records))
    loaded = ppo.load_results(tmp_path)
    assert loaded["ours"]["run_dir"] == str(tmp_path / "ours_run")
    assert loaded["pooled"]["parts"][0]["run_dir"] == "/gone/other_run"  # nothing here to use
    assert ppo.load_results(tmp_path / "empty") == {}
