"""The claims notebooks/04_reward.ipynb makes from prove.reward.analysis hold."""

from __future__ import annotations

from prove.reward import analysis


def test_verbosity_curve_shows_padding_never_pays_but_recall_only_is_flat() -> None:
    curve = analysis.verbosity_curve(max_extra=8)
    score = {c: rows["score"].tolist() for c, rows in curve.groupby("config")}
    assert score["prove"][0] == 1.0
    assert all(b < a for a, b in zip(score["prove"], score["prove"][1:], strict=False))
    assert set(score["recall_only"]) == {1.0}
    assert score["no_name"][:3] == [1.0, 1.0, 1.0]  # padding inside B = 5 is free without it
    # spraying to full coverage ends below stopping one step short without padding
    assert score["prove"][-1] < analysis.precise_partial_score() < score["prove"][0]


def test_coverage_grid_rewards_coverage_and_charges_verbosity() -> None:
    grid = analysis.coverage_grid(max_calls=8)
    prove = grid[grid["config"] == "prove"].set_index(["coverage", "n_pred"])["score"]
    recall = grid[grid["config"] == "recall_only"]
    assert (recall["score"] == recall["coverage"]).all()
    assert prove[(1.0, 4)] == 1.0 and prove[(1.0, 8)] < prove[(1.0, 5)] < prove[(1.0, 4)]
    assert prove[(0.75, 4)] < prove[(1.0, 4)]


def test_budget_table_follows_the_formula() -> None:
    table = analysis.budget_table(betas=(0.0, 0.5), n_gts=(1, 3, 5))
    assert table.loc[0.0].tolist() == [1, 3, 5]
    assert table.loc[0.5].tolist() == [2, 5, 8]  # 1 + 1, 3 + 2, 5 + 3


def test_every_hand_built_case_is_scored_under_every_config() -> None:
    cases = analysis.cases_table()
    assert len(cases) == len(analysis.hand_built_cases())
    row = cases.set_index("case")
    assert row.loc["exact", "score[prove]"] == 1.0
    assert row.loc["spray", "score[recall_only]"] == 1.0 > row.loc["spray", "score[prove]"]
    assert row.loc["abstains", "score[prove]"] == 1.0
    assert row.loc["acts anyway", "score[prove]"] == 0.0
