"""``jaxmarl.stats``: IQM, stratified-bootstrap intervals, probability of improvement."""

import numpy as np
import pytest

from jaxmarl import stats

RNG = np.random.default_rng(0)
GOOD = RNG.normal(10.0, 1.0, size=(12, 2))
BAD = RNG.normal(5.0, 1.0, size=(12, 2))


def test_iqm_is_the_mean_of_the_middle_half():
    scores = np.arange(1.0, 9.0)  # 8 runs: the middle half is 3, 4, 5, 6
    assert stats.iqm(scores) == pytest.approx(4.5)
    with_outliers = np.array([-1000.0, 3, 4, 5, 6, 1000.0, 4.5, 4.5])
    assert abs(stats.iqm(with_outliers) - 4.5) < 0.6  # outliers do not move it


def test_aggregate_table_contains_the_point_and_is_reproducible():
    np.random.seed(5)  # noqa: NPY002 - the caller's global generator must be left alone
    expected_next = np.random.rand()  # noqa: NPY002
    np.random.seed(5)  # noqa: NPY002
    table = stats.aggregate_table({"good": GOOD, "bad": BAD}, reps=300, seed=1)
    assert np.random.rand() == expected_next  # noqa: NPY002
    again = stats.aggregate_table({"good": GOOD, "bad": BAD}, reps=300, seed=1)
    assert table == again
    for alg, scores in (("good", GOOD), ("bad", BAD)):
        iqm = table[alg]["IQM"]
        assert iqm.point == pytest.approx(stats.iqm(scores))
        assert iqm.low <= iqm.point <= iqm.high
        assert table[alg]["mean"].point == pytest.approx(scores.mean())
    assert table["good"]["IQM"].low > table["bad"]["IQM"].high  # clearly separated
    text = stats.markdown_table(table)
    assert text.splitlines()[0] == "| algorithm | IQM [95% CI] | mean [95% CI] |"
    assert text.count("\n") == 3


def test_probability_of_improvement():
    clear = stats.probability_of_improvement(GOOD, BAD, reps=300)
    assert clear.point == pytest.approx(1.0) and clear.low > 0.9
    same = stats.probability_of_improvement(GOOD, GOOD, reps=300)
    assert same.point == pytest.approx(0.5)
    with pytest.raises(ValueError, match="tasks"):
        stats.probability_of_improvement(GOOD, BAD[:, :1])


def test_verdict_reads_the_interval_against_one_half():
    assert stats.verdict(stats.Estimate(0.9, 0.6, 1.0), "a", "b") == "a ahead"
    assert stats.verdict(stats.Estimate(0.1, 0.0, 0.4), "a", "b") == "b ahead"
    assert stats.verdict(stats.Estimate(0.7, 0.5, 0.9), "a", "b") == "not separated"
    assert stats.verdict(stats.probability_of_improvement(GOOD, BAD, reps=300)) == "X ahead"


def test_performance_profiles_and_plot(tmp_path):
    taus = np.linspace(0.0, 15.0, 16)
    profiles, intervals = stats.performance_profiles({"good": GOOD, "bad": BAD}, taus, reps=200)
    assert profiles["good"][0] == 1.0 and profiles["good"][-1] == 0.0
    assert np.all(np.diff(profiles["good"]) <= 0)  # a survival curve
    assert np.all(profiles["good"] >= profiles["bad"])
    assert intervals["good"].shape == (2, len(taus))
    path = stats.plot_performance_profiles({"good": GOOD}, taus, tmp_path / "p.png", reps=50)
    assert path.stat().st_size > 0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="at least 2 runs"):
        stats.iqm([1.0])
    with pytest.raises(ValueError, match="finite"):
        stats.iqm([1.0, float("nan")])
    with pytest.raises(ValueError, match="unknown aggregates"):
        stats.aggregate_table({"a": GOOD}, ["best"])
