"""The laptop experiment's record: the summary's rows and columns, the step table, the files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from prove.train.config import load_train_config
from prove.train.laptop import RUN_NAMES, SUMMARY_COLUMNS, step_table, summary_table, write_record
from prove.train.launch import RunPaths


def _run(cfg, variant: str, results: Path, steps: int = 0, **record) -> None:
    paths = RunPaths.for_run(cfg, cfg.variant(variant), results, results / "checkpoints")
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    v = cfg.variant(variant)
    paths.model.write_text(json.dumps({"variant": variant, "trainer": v.trainer, "reward": v.reward, "lr": v.lr,
                                       "global_step": steps, "hf_model": "/m", **record}))
    (paths.run_dir / "command.sh").write_text(f"#!/usr/bin/env bash\nprove train x --variant {variant}\n")
    if v.trainer == "grpo":
        lines = [{"step": s, "data": {"reward": 0.1 * s, "rewards/calls/mean": 1.0, "completions/mean_length": 40.0,
                                      "reward_std": 0.2, "loss": 0.0}} for s in range(1, steps + 1)]
        paths.metrics.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _heldout(*runs: str) -> pd.DataFrame:
    return pd.DataFrame([{"model": "SmolLM2-135M", "config": "smollm2-135m-laptop", "run": r,
                          "heldout_reward": 0.1 * i, "heldout_coverage": 0.0, "exact_turn": 0.0,
                          "calls_per_turn": float(i), "gt_calls_per_turn": 2.0, "abstention_accuracy": 1.0,
                          "clarification_accuracy": float("nan"), "turns": 24.0} for i, r in enumerate(runs)])


def test_summary_has_a_row_per_named_run_with_what_each_did(tmp_path: Path) -> None:
    cfg = load_train_config("smollm2-135m-laptop").with_results(tmp_path)
    _run(cfg, "sft", tmp_path, 32, wall_s=600.0)
    _run(cfg, "default", tmp_path, 3, wall_s=120.0, engine="trl")
    _run(cfg, "recall_only", tmp_path, 3, wall_s=130.0, engine="trl")
    table = summary_table(cfg, _heldout("base", "sft", "grpo_default"), tmp_path)
    assert tuple(table["run"]) == RUN_NAMES and tuple(table.columns) == SUMMARY_COLUMNS
    row = table.set_index("run")
    assert row.loc["grpo_prove", "status"] == "evaluated" and row.loc["grpo_prove", "heldout_reward"] == 0.2
    assert row.loc["grpo_prove", "engine"] == "trl" and row.loc["grpo_prove", "steps"] == 3
    assert row.loc["grpo_recall_only", "status"] == "trained, not evaluated"
    assert row.loc["grpo_beta0", "status"] == "not run" and pd.isna(row.loc["grpo_beta0", "heldout_reward"])
    assert row.loc["base", "steps"] == 0 and row.loc["sft", "trained_on"] == "sft data"
    assert row.loc["sft", "calls_per_turn"] == 1.0 and row.loc["sft", "wall_s"] == 600.0


def test_steps_and_the_record_come_from_the_run_folders(tmp_path: Path) -> None:
    cfg = load_train_config("smollm2-135m-laptop").with_results(tmp_path)
    _run(cfg, "sft", tmp_path, 32)
    _run(cfg, "default", tmp_path, 4, engine="trl")
    steps = step_table(cfg, tmp_path)
    assert set(steps["run"]) == {"grpo_prove"} and list(steps["step"]) == [1, 2, 3, 4]
    assert steps["mean reward (trained reward)"].iloc[-1] == 0.4
    out = tmp_path / "report"
    record = write_record(out, cfg, _heldout("base", "sft", "grpo_default"), results_dir=tmp_path,
                          executed_dir=tmp_path / "none")
    assert {p.name for p in out.iterdir()} == {"summary.csv", "steps.csv", "curves.png", "record.json"}
    saved = json.loads((out / "record.json").read_text())
    assert saved["runs"]["grpo_prove"]["engine"] == "trl" and saved["packages"]["torch"]
    assert saved["run_commands"]["sft"] == "prove train x --variant sft" and record["machine"]["cpus"]
    assert saved["command"] == "./run_all.sh --profile laptop" and "commit" in saved["source"]


def test_the_data_report_accounts_for_every_turn_and_conversation(synth_examples: list, tokenizer) -> None:
    """What a laptop budget keeps is reported: each turn is kept, too long, or past the row cap."""
    from prove.train.config import DataPaths
    from prove.train.data import _rows

    data = DataPaths(max_tools=2, max_prompt_tokens=1200, max_sft_tokens=10_000)
    rl, sft, counts = _rows(synth_examples, "train", data, tokenizer, limit=3)
    assert counts["examples"] == len(synth_examples)
    assert counts["turns"] == sum(len(e["turns"]) for e in synth_examples)
    assert counts["turns"] == counts["rl_rows"] + counts["rl_too_long"] + counts["rl_over_row_cap"]
    assert counts["rl_rows"] == len(rl) <= 3 and counts["rl_too_long"] > 0
    assert counts["examples"] == counts["sft_rows"] + counts["sft_too_long"] + counts["sft_over_row_cap"]
    assert [r["extra_info"]["index"] for r in rl] == list(range(len(rl))) and len(sft) == counts["sft_rows"]
    assert sum(counts["rl_kinds"].values()) == len(rl) and sum(counts["sft_kinds"].values()) == len(sft)


def test_rows_are_interleaved_so_every_prefix_holds_each_kind_in_its_share() -> None:
    """A one-step rehearsal GRPO run trained on its first prompt alone; in sha order that was an
    abstention (no call to make: both rollouts scored 1.0, no advantage, CI stop 44)."""
    from prove.train.data import interleave_kinds

    rows = ([{"kind": "abstention", "i": i} for i in range(2)] + [{"kind": "clarification", "i": i} for i in range(2)]
            + [{"kind": "multi_turn", "i": i} for i in range(6)] + [{"kind": "other", "i": 0}])
    out = interleave_kinds(rows, lambda r: r["kind"])
    assert sorted(map(str, out)) == sorted(map(str, rows))  # a reordering
    assert out[0]["kind"] == "multi_turn"  # the largest share first
    for kind in ("abstention", "clarification", "multi_turn"):
        assert [r["i"] for r in out if r["kind"] == kind] == sorted(r["i"] for r in rows if r["kind"] == kind)
    share = {k: sum(r["kind"] == k for r in rows) / len(rows) for k in {r["kind"] for r in rows}}
    for n in range(1, len(out) + 1):
        for kind, p in share.items():
            assert abs(sum(r["kind"] == kind for r in out[:n]) - p * n) < 1 + 1e-9, (n, kind)
    even = [{"kind": k} for k in ("abstention", "clarification", "multi_turn") for _ in range(2)]
    assert [r["kind"] for r in interleave_kinds(even, lambda r: r["kind"])] == [
        "multi_turn", "clarification", "abstention"] * 2  # ties: the export's order of kinds


def test_written_rows_start_with_a_turn_that_makes_calls(synth_examples: list, tokenizer) -> None:
    from prove.train.config import DataPaths
    from prove.train.data import _rows

    rl, sft, _ = _rows(synth_examples, "train", DataPaths(max_tools=2), tokenizer, limit=8)
    assert [r["extra_info"]["index"] for r in rl] == list(range(len(rl)))
    assert rl[0]["extra_info"]["kind"] == "multi_turn" and sft[0]["kind"] == "multi_turn"
    assert json.loads(rl[0]["reward_model"]["ground_truth"])["calls"]


def test_a_row_cap_keeps_every_kind_in_a_fixed_order() -> None:
    """The export lists multi-turn examples first: a cap in file order kept only those (the first
    laptop record trained GRPO on multi-turn turns alone)."""
    from prove.train.data import sample_order

    examples = [{"id": f"prove-{kind}-{i:06d}", "kind": kind}
                for kind, n in (("multi_turn", 200), ("clarification", 30), ("abstention", 30)) for i in range(n)]
    first = sample_order(examples)[:64]
    assert {e["kind"] for e in first} == {"multi_turn", "clarification", "abstention"}
    assert sample_order(list(reversed(examples))) == sample_order(examples)  # the order is the ids', not the file's


def test_the_record_names_the_commit_and_whether_the_tree_differed(tmp_path: Path) -> None:
    import subprocess

    from prove.train.laptop import source

    assert source(tmp_path) == {"commit": None, "dirty": None}  # not a checkout
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    assert source(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "a.txt").write_text("two\n")
    assert source(tmp_path) == {"commit": head, "dirty": True}


def test_comparisons_pair_each_question_on_the_same_turns(tmp_path: Path) -> None:
    """comparisons.csv: SFT vs base, PROVE's GRPO vs SFT, every other GRPO run vs PROVE's, from the
    turn table 06 wrote (the first record's, as committed), with 06's run labels read as report names."""
    from prove.train.laptop import comparison_pairs

    cfg = load_train_config("smollm2-135m-laptop").with_results(tmp_path)
    turns = pd.read_csv(Path(__file__).parents[2] / "reports" / "laptop" / "second-run-24-turns" / "heldout_turns.csv")
    assert comparison_pairs(["base", "sft", "grpo_prove", "grpo_beta0"]) == [
        ("sft", "base"), ("grpo_prove", "sft"), ("grpo_beta0", "grpo_prove")]
    write_record(tmp_path / "report", cfg, _heldout("base", "sft", "grpo_default"), results_dir=tmp_path,
                 executed_dir=tmp_path / "none", turns=turns)
    table = pd.read_csv(tmp_path / "report" / "comparisons.csv")
    assert set(zip(table["run"], table["reference"], strict=True)) == {
        ("sft", "base"), ("grpo_prove", "sft"), ("grpo_recall_only", "grpo_prove"),
        ("grpo_no_efficiency", "grpo_prove")}
    row = table[(table.run == "grpo_prove") & (table.metric == "score") & (table.subset == "all")].iloc[0]
    sft = turns[turns.label == "sft"]["score"].mean()
    grpo = turns[turns.label == "grpo_default"]["score"].mean()
    assert row["diff"] == pytest.approx(grpo - sft) and row["ci_low"] <= row["diff"] <= row["ci_high"]
    assert row["turns"] == 24 and set(table["subset"]) == {"all", "calls", "no_call"}


def test_each_run_has_intervals_its_no_call_turns_apart_and_its_over_budget_share(tmp_path: Path) -> None:
    """The record's own-model intervals (summary columns and intervals.csv, the no-call turns as rows
    of their own), the share of training rollouts over the budget, and the phases' wall times."""
    from prove.train.laptop import phase_table

    cfg = load_train_config("smollm2-135m-laptop").with_results(tmp_path)
    turns = pd.read_csv(Path(__file__).parents[2] / "reports" / "laptop" / "second-run-24-turns" / "heldout_turns.csv")
    _run(cfg, "sft", tmp_path, 32, wall_s=600.0)
    _run(cfg, "default", tmp_path, 2, wall_s=90.0, engine="trl")
    paths = RunPaths.for_run(cfg, cfg.variant("default"), tmp_path, tmp_path / "checkpoints")
    paths.metrics.write_text("".join(json.dumps({"step": s, "data": {"reward": 0.5, "prove/over_budget_share": v}})
                                     + "\n" for s, v in ((1, 0.0), (2, 0.25))))
    held = pd.read_csv(Path(__file__).parents[2] / "reports" / "laptop" / "second-run-24-turns" / "summary.csv")
    held = held[held.status == "evaluated"].replace({"run": {"grpo_prove": "grpo_default"}})
    held = held[held.run.isin(["base", "sft", "grpo_default"])]
    record = write_record(tmp_path / "report", cfg, held, results_dir=tmp_path, executed_dir=tmp_path / "none",
                          turns=turns[turns.label.isin(["base", "sft", "grpo_default"])])
    summary = pd.read_csv(tmp_path / "report" / "summary.csv").set_index("run")
    for run in ("base", "sft", "grpo_prove"):
        low, high = summary.loc[run, ["heldout_reward_ci_low", "heldout_reward_ci_high"]]
        assert low < summary.loc[run, "heldout_reward"] < high  # 24 turns: a real width
        low, high = summary.loc[run, ["calls_per_turn_ci_low", "calls_per_turn_ci_high"]]
        assert low <= summary.loc[run, "calls_per_turn"] <= high
    assert summary.loc["grpo_prove", "train_over_budget_share"] == pytest.approx(0.125)
    assert pd.isna(summary.loc["sft", "train_over_budget_share"])
    assert record["over_budget_share"] == {"grpo_prove": 0.125}
    intervals = pd.read_csv(tmp_path / "report" / "intervals.csv")
    no_call = intervals[(intervals.subset == "no_call") & (intervals.metric == "without_call")].set_index("run")
    assert list(no_call.index) == ["base", "sft", "grpo_prove"] and (no_call["turns"] == 5).all()
    # the second record: base answered every no-call turn without a call, SFT and GRPO none
    assert no_call.loc["base", "mean"] == 1.0 and no_call.loc["sft", "mean"] == 0.0
    phases = phase_table({**record, "notebook_seconds": {"05_train_grpo": 700.0}}).set_index("phase")
    assert phases.loc["05_train_grpo", "seconds"] == 700.0 and phases.loc["grpo_prove", "seconds"] == 90.0
    assert phases.loc["sft", "kind"] == "train"


def _schema(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {"type": "object"}}}


def test_similar_order_offers_the_near_duplicates_of_the_called_tools() -> None:
    """``data.tool_order: similar``: the few tools a laptop prompt keeps beside the called one are
    the ones named like it (a policy unsure which is right can call both), not the offer's next."""
    from prove.train.data import narrow_tools

    offered = ["archive_note", "create_user", "list_food_orders", "rate_courier", "get_food_order",
               "view_food_basket", "cancel_food_order"]
    example = {"tools": [_schema(n) for n in offered],
               "turns": [{"calls": [{"name": "list_food_orders", "arguments": {}}]}]}
    names = lambda e: [t["function"]["name"] for t in e["tools"]]  # noqa: E731
    assert names(narrow_tools(example, 3)) == ["list_food_orders", "archive_note", "create_user"]
    similar = names(narrow_tools(example, 3, "similar"))
    assert similar[0] == "list_food_orders" and set(similar[1:]) <= {"get_food_order", "cancel_food_order"}
    assert len(similar) == 3 and "archive_note" not in similar
    # an abstention calls nothing: nothing to be similar to, the offered order stands
    assert names(narrow_tools({**example, "turns": [{"calls": []}]}, 2, "similar")) == ["archive_note", "create_user"]
    with pytest.raises(ValueError, match="valid orders are offered, similar"):
        narrow_tools(example, 3, "alphabetical")


def test_a_data_key_the_config_does_not_know_is_named_with_the_known_ones(tmp_path: Path) -> None:
    from prove.train.config import CONFIG_DIR

    path = tmp_path / "bad.yaml"
    path.write_text(f"base: {CONFIG_DIR / 'smollm2-135m-laptop.yaml'}\nname: bad\ndata: {{tool_ordr: similar}}\n")
    with pytest.raises(ValueError, match=r"unknown data keys \['tool_ordr'\].*tool_order"):
        load_train_config(path)
    path.write_text(f"base: {CONFIG_DIR / 'smollm2-135m-laptop.yaml'}\nname: bad\ndata: {{tool_order: nearest}}\n")
    with pytest.raises(ValueError, match="data.tool_order='nearest': valid orders are offered, similar"):
        load_train_config(path)
