"""`python -m prove.figures` (what `./run_all.sh figures` runs) on a results folder written by the real
writers: a missing input is named with its producer, every other figure is drawn as PNG and PDF.

    .venv/bin/python -m pytest tests/test_figures.py -q
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from prove.figures import REGISTRY, missing_inputs, redraw

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Notebook 04's tables exactly as 04 writes them, 06's held-out summary in its columns, and one
    GRPO and one SFT run in VERL's file-logger format."""
    from prove.eval.heldout import SUMMARY_KEYS
    from prove.reward import CALL_ABLATIONS, analysis

    out = tmp_path_factory.mktemp("results")
    analysis.cases_table(CALL_ABLATIONS).to_csv(out / "reward_cases.csv", index=False)
    analysis.verbosity_curve(12, CALL_ABLATIONS).to_csv(out / "reward_verbosity.csv", index=False)
    analysis.coverage_grid(max_calls=12).to_csv(out / "reward_coverage_grid.csv", index=False)
    analysis.budget_table().to_csv(out / "reward_budget.csv")
    analysis.efficiency_curves().to_csv(out / "reward_efficiency.csv", index=False)
    pd.DataFrame([{"model": "SmolLM2-135M", "run": run, **{k: v for k in SUMMARY_KEYS}}
                  for run, v in (("base", 0.1), ("sft", 0.3), ("grpo_default", 0.4))]
                 ).to_csv(out / "heldout_summary.csv", index=False)
    for run, metric in (("smollm2-135m-default", "critic/score/mean"), ("smollm2-135m-sft", "train/loss")):
        folder = out / "train" / run
        folder.mkdir(parents=True)
        folder.joinpath("metrics.jsonl").write_text("".join(
            json.dumps({"step": s, "data": {metric: 1.0 / s}}) + "\n" for s in (1, 2, 3)))
    return out


def test_one_input_removed_is_named_and_the_rest_are_drawn(results: Path, tmp_path: Path) -> None:
    (results / "reward_budget.csv").rename(tmp_path / "reward_budget.csv")  # the one input removed
    try:
        figures = tmp_path / "figures"
        proc = subprocess.run([sys.executable, "-m", "prove.figures", "--results", str(results),
                               "--figures", str(figures)], capture_output=True, text=True, cwd=REPO,
                              timeout=300, check=False)
    finally:
        (tmp_path / "reward_budget.csv").rename(results / "reward_budget.csv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("missing  reward_beta:"))
    assert "reward_budget.csv" in line and "reward_efficiency.csv" not in line
    assert "notebooks/04_reward.ipynb" in line
    expected = {"reward_cases", "reward_verbosity", "reward_coverage_heatmap", "heldout_base_sft_grpo",
                "train_curves", "runs_comparison"}
    for name in expected:
        for suffix in (".png", ".pdf"):
            path = figures / f"{name}{suffix}"
            assert path.is_file() and path.stat().st_size > 1000, path
    assert not (figures / "reward_beta.png").exists()
    assert "FAILED" not in proc.stdout
    assert f"{len(expected)} drawn" in proc.stdout


def test_all_inputs_present_draws_reward_beta_too(results: Path, tmp_path: Path) -> None:
    report = redraw(results, tmp_path, names=["reward_beta", "train_curves"])
    assert report["missing"] == {} and report["failed"] == {}
    assert sorted(p.name for p in report["drawn"]) == sorted(
        ["reward_beta.png", "reward_beta.pdf", "train_curves.png", "train_curves.pdf"])
    assert (tmp_path / "reward_beta.pdf").read_bytes().startswith(b"%PDF")


def test_nothing_drawable_exits_nonzero(tmp_path: Path) -> None:
    from prove.figures import main

    assert main(["--results", str(tmp_path / "empty"), "--figures", str(tmp_path / "f")]) == 1


def test_every_figure_names_its_inputs_and_producer(tmp_path: Path) -> None:
    assert len({f.name for f in REGISTRY}) == len(REGISTRY)
    for fig in REGISTRY:
        assert fig.inputs and fig.producer.startswith(("./run_all.sh", "prove train"))
        assert missing_inputs(fig, tmp_path) == [str(tmp_path / p) for p in fig.inputs]
