"""Base-vs-trained table: gains, the paper's reported maxima and the published baselines line up per model."""

from __future__ import annotations

import math

import pytest

from prove.eval.paper import PUBLISHED_BASELINES, REPORTED_MAX_GAINS, comparison_table, long_rows


def test_comparison_table_computes_gain_and_attaches_references():
    rows = (long_rows("Qwen3-4B", "base", bfcl={"overall": 0.20, "overall_reachable": 0.21})
            + long_rows("Qwen3-4B", "trained", bfcl={"overall": 0.302, "overall_reachable": 0.31})
            + long_rows("Qwen2.5-7B", "base", teval={"abilities": {"overall": 60.0}})
            + long_rows("Qwen2.5-7B", "trained", teval={"abilities": {"overall": 66.5}},
                        tau2=[{"pass^1": 0.5}, {"pass^1": 0.3}]))
    t = comparison_table(rows).set_index(["model", "benchmark"])
    assert t.loc[("Qwen3-4B", "bfcl_multi_turn"), "gain"] == pytest.approx(10.2)
    assert t.loc[("Qwen3-4B", "bfcl_multi_turn"), "paper_max_gain"] == REPORTED_MAX_GAINS["bfcl_multi_turn"]["gain"]
    assert "22.1" in t.loc[("Qwen3-4B", "bfcl_multi_turn"), "published_baseline"]
    assert t.loc[("Qwen2.5-7B", "teval"), "gain"] == pytest.approx(6.5)
    assert math.isnan(t.loc[("Qwen2.5-7B", "tau2_bench"), "base"])
    assert t.loc[("Qwen2.5-7B", "tau2_bench"), "trained"] == pytest.approx(40.0)


def test_published_baselines_are_within_range():
    for p in PUBLISHED_BASELINES:
        assert 0 <= p["score"] <= 100 and p["source"]
