"""Paired held-out comparisons with bootstrap intervals (prove.paired)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from prove.paired import paired_differences


def _turns(shift: float = 0.0, noise: float = 0.0, conversations: int = 40, seed: int = 0) -> pd.DataFrame:
    """Two models on the same turns: three per conversation, the last one a no-call turn; `b` scores
    `a` + shift (+ noise) on the turns with calls and the same on the no-call turns."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(conversations):
        for t in range(3):
            base = float(rng.uniform(0.2, 0.8))
            n_gt = 0 if t == 2 else 1
            delta = 0.0 if n_gt == 0 else shift + float(rng.normal(0, noise))
            for label, score in (("a", base), ("b", base + delta)):
                rows.append({"label": label, "example_id": f"ex-{c:03d}", "turn": t, "n_gt": n_gt,
                             "score": score, "n_pred": n_gt + (label == "b"), "exact": score > 0.5})
    return pd.DataFrame(rows)


def test_an_exact_shift_is_measured_with_a_zero_width_interval() -> None:
    table = paired_differences(_turns(shift=0.1), [("b", "a")], metrics=["score", "n_pred"])
    score = table[table.metric == "score"].set_index("subset")
    assert score.loc["calls", "diff"] == pytest.approx(0.1)
    assert score.loc["calls", ["ci_low", "ci_high"]].tolist() == pytest.approx([0.1, 0.1])
    assert score.loc["no_call", "diff"] == pytest.approx(0.0)  # the no-call turns are their own row
    assert score.loc["all", "diff"] == pytest.approx(0.1 * 2 / 3)
    assert score.loc["all", "turns"] == 120 and score.loc["all", "conversations"] == 40
    calls = table[(table.metric == "n_pred") & (table.subset == "all")].iloc[0]
    assert calls["diff"] == pytest.approx(1.0) and calls["run_mean"] == pytest.approx(calls["reference_mean"] + 1)


def test_the_interval_covers_the_true_shift_and_excludes_zero_when_it_should() -> None:
    noisy = paired_differences(_turns(shift=0.05, noise=0.05, conversations=200), [("b", "a")],
                               metrics=["score"])
    row = noisy[noisy.subset == "calls"].iloc[0]
    assert row["ci_low"] < 0.05 < row["ci_high"] and row["ci_low"] > 0.0
    null = paired_differences(_turns(shift=0.0, noise=0.05, conversations=200), [("b", "a")],
                              metrics=["score"])
    row = null[null.subset == "calls"].iloc[0]
    assert row["ci_low"] < 0.0 < row["ci_high"]


def test_same_seed_same_table_and_rows_do_not_depend_on_what_else_was_asked() -> None:
    turns = _turns(shift=0.02, noise=0.1)
    one = paired_differences(turns, [("b", "a")], metrics=["score"], seed=3)
    assert one.equals(paired_differences(turns, [("b", "a")], metrics=["score"], seed=3))
    both = paired_differences(turns, [("b", "a")], metrics=["n_pred", "score"], seed=3)
    assert both[both.metric == "score"].reset_index(drop=True).equals(one)
    other = paired_differences(turns, [("b", "a")], metrics=["score"], seed=4)
    assert not one[["ci_low", "ci_high"]].equals(other[["ci_low", "ci_high"]])


def test_turns_of_one_conversation_move_together_widen_the_interval() -> None:
    """A shift shared by a conversation's turns: resampling conversations, not turns, keeps the
    interval as wide as the number of conversations warrants."""
    rng = np.random.default_rng(1)
    rows = []
    for c in range(30):
        shared = float(rng.normal(0, 0.2))
        for t in range(10):
            for label, score in (("a", 0.5), ("b", 0.5 + shared)):
                rows.append({"label": label, "example_id": f"ex-{c}", "turn": t, "n_gt": 1, "score": score})
    table = paired_differences(pd.DataFrame(rows), [("b", "a")], metrics=["score"])
    row = table[table.subset == "all"].iloc[0]
    turn_level_se = 0.2 / np.sqrt(300)
    assert row["ci_high"] - row["ci_low"] > 6 * turn_level_se  # ~ 4 x 0.2 / sqrt(30), not / sqrt(300)


def test_bad_input_says_what_is_wrong() -> None:
    turns = _turns()
    with pytest.raises(ValueError, match="did not answer the same turns"):
        paired_differences(turns[~((turns.label == "b") & (turns.turn == 0))], [("b", "a")])
    with pytest.raises(ValueError, match=r"no held-out turns of 'c'; the table has \['a', 'b'\]"):
        paired_differences(turns, [("c", "a")])
    with pytest.raises(ValueError, match="no column"):
        paired_differences(turns, [("b", "a")], metrics=["recall"])
    with pytest.raises(ValueError, match="lacks"):
        paired_differences(turns.drop(columns="n_gt"), [("b", "a")])
    with pytest.raises(ValueError, match="level"):
        paired_differences(turns, [("b", "a")], level=95)


def test_each_models_mean_has_an_interval_and_the_no_call_turns_a_row_of_their_own() -> None:
    from prove.paired import mean_intervals

    turns = _turns(shift=0.1, noise=0.05, conversations=60)
    table = mean_intervals(turns, metrics=["score", "without_call"])
    assert list(dict.fromkeys(table["run"])) == ["a", "b"]
    for (run, metric, subset), row in table.set_index(["run", "metric", "subset"]).iterrows():
        part = turns[turns.label == run]
        part = part if subset == "all" else part[(part.n_gt > 0) == (subset == "calls")]
        value = part[metric] if metric in part else (part.n_pred == 0).astype(float)
        assert row["mean"] == pytest.approx(value.mean()) and row["turns"] == len(part)
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    rows = table.set_index(["run", "metric", "subset"])
    # `a` answers every no-call turn without a call, `b` calls once on each: both exact, zero width
    assert rows.loc[("a", "without_call", "no_call"), ["mean", "ci_low", "ci_high"]].tolist() == [1.0, 1.0, 1.0]
    assert rows.loc[("b", "without_call", "no_call"), ["mean", "ci_low", "ci_high"]].tolist() == [0.0, 0.0, 0.0]
    # a noisy mean gets an interval of real width, and the same seed gives the same bytes
    assert rows.loc[("a", "score", "all"), "ci_high"] - rows.loc[("a", "score", "all"), "ci_low"] > 0.01
    assert table.equals(mean_intervals(turns, metrics=["score", "without_call"]))
    with pytest.raises(ValueError, match=r"no held-out turns of \['c'\]; the table has \['a', 'b'\]"):
        mean_intervals(turns, ["c"])
