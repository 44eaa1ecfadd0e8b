"""Reward ablations on real turns (a small synthesis run): behaviours run live on the hub, scored
under every config."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from prove.env.hub import Hub
from prove.env.tool import ToolError
from prove.reward.behaviours import (
    BEHAVIOURS,
    discrimination,
    mean_table,
    rollouts,
    score_behaviours,
    turn_cases,
)
from prove.reward.config import ABLATIONS


@pytest.fixture(scope="module")
def rows(synth_rows: list[dict]) -> list[dict]:
    """Every turn of the session's small synthesis run (tests/conftest.py)."""
    return synth_rows


@pytest.fixture(scope="module")
def scores(rows: list[dict]) -> pd.DataFrame:
    return score_behaviours(rows)


def _fits(hub: Hub, name: str, arguments: dict) -> bool:
    """Whether ``arguments`` validate for the tool ``name`` (its schema, not the state)."""
    try:
        hub.registry.tool(name).validate(arguments)
    except ToolError:
        return False
    return True


def test_behaviours_run_live_from_the_rows_prefix_and_close_their_episodes(rows: list[dict]) -> None:
    hub = Hub()
    before = len(hub.store)
    out = rollouts(rows, hub)
    assert len(hub.store) == before  # every episode closed
    by = {(r["example_id"], r["turn"], r["behaviour"]): r for r in out}
    misfits = 0
    for (ex, turn, behaviour), r in by.items():
        assert len(r["calls"]) == len(turn_cases(next(
            x for x in rows if x["extra_info"]["example_id"] == ex and x["extra_info"]["turn"] == turn),
            {n for n, s in hub.registry.tools.items() if s.write})[behaviour])
        if behaviour == "exact":  # ground truth replays cleanly after the prefix
            assert all(c["ok"] for c in r["calls"]), r["calls"]
        if behaviour == "wrong_tool":  # another offered tool with the wrong arguments fails validation
            last = r["calls"][-1]
            if not _fits(hub, last["name"], last["arguments"]):
                assert not last["ok"] and "argument" in last["error"], last
                misfits += 1
    # On real turns the next offered tool sometimes takes the same arguments (a mailbox id read by
    # another mailbox tool): that call may succeed. Most do not fit, and those fail.
    assert misfits > 0
    abstentions = [x for x in rows if not json.loads(x["reward_model"]["ground_truth"])["calls"]]
    assert abstentions and all(turn_cases(x, set()) == {} for x in abstentions)


def test_every_config_gives_the_exact_answer_full_marks_and_ranks_it_first(scores: pd.DataFrame) -> None:
    means = mean_table(scores)
    assert list(means.columns) == list(ABLATIONS)
    assert set(means.index) <= set(BEHAVIOURS) and "exact" in means.index
    assert (scores[scores.behaviour == "exact"].score == 1.0).all()
    assert (means.drop(index="exact") <= 1.0).all().all()


def test_ablations_remove_exactly_the_signal_they_name(scores: pd.DataFrame) -> None:
    wins = discrimination(scores)
    # recall-only cannot tell padding from the answer; PROVE always can (efficiency + name signal)
    assert wins.loc["padded", "recall_only"] == 0.0 and wins.loc["padded", "prove"] == 1.0
    # without the name signal, padding inside the budget is (partly) free
    assert wins.loc["padded", "no_name"] < wins.loc["padded", "prove"]
    # without the argument-value bonus a changed value that still executes goes unpunished
    assert wins.loc["wrong_args", "no_args"] < wins.loc["wrong_args", "prove"]
    # PROVE prefers the answer to every degraded behaviour on every turn here
    assert (wins["prove"] == 1.0).all(), wins["prove"]


def test_the_outcome_follows_the_records_not_the_calls(scores: pd.DataFrame) -> None:
    """Every rollout's effect is compared with its row's expected one: the exact answer always
    reaches it, padding with reads reaches it too (reads leave no effect), and no call reaches it
    only where the turn writes nothing; the paper's score ignores it (weight 0)."""
    prove = scores[scores.config == "prove"].set_index(["example_id", "turn", "behaviour"])
    assert (prove.outcome_known == 1).all()
    assert (prove.xs("exact", level="behaviour").outcome == 1.0).all()
    assert (prove.xs("padded", level="behaviour").outcome == 1.0).all()
    no_call = prove.xs("no_call", level="behaviour")
    exact = prove.xs("exact", level="behaviour")
    assert (no_call.outcome == 0.0).any() and (no_call.outcome == 1.0).any()
    # where no call reaches the outcome, the turn only read: a wrong value there changes nothing
    reads_only = no_call.index[no_call.outcome == 1.0]
    assert (exact.loc[reads_only].outcome == 1.0).all()
    wins = discrimination(scores)
    # the state alone cannot tell padding (more reads) from the answer, but the outcome ablation
    # keeps PROVE's call-based components, so it still prefers the answer everywhere
    assert (wins["outcome"] == 1.0).all(), wins["outcome"]


def test_same_rows_same_table(rows: list[dict], scores: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(score_behaviours(rows), scores)
