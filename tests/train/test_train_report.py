"""Notebook helpers: paper tables, the sweep/weights figure, and curves of finished runs."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

from prove.reward.config import ABLATIONS
from prove.train import report

matplotlib.use("Agg")


def test_tables_cover_the_four_models_and_every_reward_variant() -> None:
    table = report.config_table()
    assert len(table) == 4 and set(table["steps"]) == {350} and set(table["tool_format"]) == {"hermes"}
    weights = report.reward_weights_table()
    assert len(weights) == len(ABLATIONS) and weights.loc["recall_only", "coverage"] == 1.0
    fig = report.sweep_and_weights_figure(table, weights)
    assert len(fig.axes) == 3


def test_finished_runs_are_found_and_plotted(tmp_path: Path) -> None:
    run = tmp_path / "train" / "qwen3-4b-default"
    run.mkdir(parents=True)
    with (run / "metrics.jsonl").open("w") as fh:
        for step in range(1, 6):
            fh.write(json.dumps({"step": step, "data": {"critic/score/mean": 0.1 * step,
                                                        "response_length/mean": 300 + step}}) + "\n")
    (tmp_path / "train" / "empty-run").mkdir()
    runs = report.find_runs(tmp_path)
    assert list(runs) == ["qwen3-4b-default"]
    frame = report.load_metrics(runs["qwen3-4b-default"])
    assert list(frame["step"]) == [1, 2, 3, 4, 5] and frame["critic/score/mean"].iloc[-1] == 0.5
    fig = report.curves_figure(runs)
    assert [ax.get_title() for ax in fig.axes] == ["critic/score/mean", "response_length/mean"]
