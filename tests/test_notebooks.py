"""Every numbered notebook runs with papermill on the rehearsal profile (the paper's code paths at CPU
sizes), the smoke profile's data notebooks run too, and every notebook is stored without outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from notebook_run import NOTEBOOKS, PIPELINE_TIMEOUT_S, SMOKE_DATA_NOTEBOOKS

# The runs themselves are the session fixtures `pipeline_run` and `smoke_data_run` (tests/conftest.py,
# notebook_run.py): the end-to-end tests of what 06 executes (tests/eval: BFCL's chain entries, the τ²
# slice) read the pipeline's outputs too, so whichever of them runs first runs the pipeline, once.


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_clean_with_a_parameters_cell(path: Path) -> None:
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "strip outputs"
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", [])
    src = "".join(first["source"])
    for name in ("profile", "results_dir", "figures_dir"):
        assert f"{name} = " in src


def _ran(run: dict[str, Any], path: Path) -> None:
    if path.stem in run["errors"]:
        raise run["errors"][path.stem]
    assert path.stem in run["ran"], f"not run: an earlier notebook failed ({list(run['errors'])})"
    results, figures = run["results"], run["figures"]
    assert any(results.iterdir()), "the notebook wrote no results"
    assert any(figures.glob("*.png")), "the notebook wrote no figure"


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)  # the first test to ask runs the whole pipeline
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_on_the_rehearsal_profile(path: Path, pipeline_run: dict[str, Any]) -> None:
    _ran(pipeline_run, path)


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("path", SMOKE_DATA_NOTEBOOKS, ids=[p.stem for p in SMOKE_DATA_NOTEBOOKS])
def test_notebook_runs_on_the_smoke_profile(path: Path, smoke_data_run: dict[str, Any]) -> None:
    _ran(smoke_data_run, path)


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
def test_the_rehearsal_runs_the_papers_stages_end_to_end(pipeline_run: dict[str, Any]) -> None:
    """02's graph is the LLM's (a served teacher judged at most ``graph.max_pairs`` pairs); 03 compared
    two served teachers; 05 trained SFT, the learning-rate sweep from it, picked a rate on validation
    (``grpo_default`` is that sweep run) and the reward ablation, every GRPO run with VERL's vLLM
    rollout; 06 evaluated base, SFT and the GRPO runs the paper reports (not the sweep points the pick
    decided against) on the same held-out turns, each with BFCL and τ² rows. (The VERL + vLLM launch
    path on CPU is asserted here; tests/train/test_train_chain.py checks the update itself.)"""
    import ast

    import pandas as pd
    from notebook_run import PIPELINE_PROFILE, pipeline_results

    from prove.graph import load_graph
    from prove.profiles import load_profile
    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths
    from prove.train.matrix import sweep_points

    prof = load_profile(PIPELINE_PROFILE)
    results = pipeline_results(pipeline_run, "06")
    graph = load_graph(results / "graph" / "tool_graph.json")
    classifiers = {key for _, _, key in graph.edges(keys=True)}
    assert classifiers and all(k.startswith("llm:") for k in classifiers), classifiers
    assert graph.number_of_edges() <= prof.graph.max_pairs
    teachers = pd.read_csv(results / "synth_teachers" / "teacher_comparison.csv", index_col=0)
    assert len(teachers.columns) == 2 and "kept" in teachers.index
    cap = prof.teacher.compare_max_attempts
    for column in teachers.columns:  # each teacher had the profile's attempts per kind, no more
        stalled = teachers.loc["stalled", column] if "stalled" in teachers.index else None
        assert (f"after {cap} attempts" in stalled if isinstance(stalled, str)
                else int(teachers.loc["attempted", column]) <= 3 * cap), teachers[column]

    runs = pd.read_csv(results / "train_runs.csv").set_index("run")
    points = sweep_points(prof.train)  # the rehearsal sweeps two of the three points
    sweep = [f"grpo_{k}" for k in points]
    ablations = [v for v in prof.train.variants if v not in ("sft", "default")]
    grpo = [*sweep, "grpo_default", *(f"grpo_{v}" for v in ablations)]
    assert set(runs.index) == {"sft", *grpo}
    assert (runs.loc[grpo, "init"] == runs.loc["sft", "hf_model"]).all(), "GRPO starts from the SFT model"
    picked = runs.loc["grpo_default", "picked_lr"]
    assert picked in points and runs.loc["grpo_default", "hf_model"] == runs.loc[f"grpo_{picked}", "hf_model"]
    values = ast.literal_eval(runs.loc["grpo_default", "sweep_validation"])
    assert set(values) == set(points) and all(v is not None for v in values.values()), values
    [config] = prof.train.configs
    cfg = load_train_config(config)
    assert cfg.verl["actor_rollout_ref.rollout.name"] == "vllm"
    for variant in [*points, *ablations]:
        # VERL's vLLM rollout on vLLM's CPU build served the rollouts, and its log-probs agree with
        # the actor's on the same weights: vLLM starts on dummy weights, so only a working sync does
        paths = RunPaths.for_run(cfg, cfg.variant(variant), results, results / "checkpoints")
        assert "CPUvLLMHttpServer" in (paths.run_dir / "trainer.log").read_text(), variant
        lines = [json.loads(x) for x in paths.metrics.read_text().splitlines()]
        step = next(x["data"] for x in lines if x["step"] == 1 and "timing_s/step" in x["data"])
        assert step["training/rollout_probs_diff_mean"] < 0.05, (variant, step["training/rollout_probs_diff_mean"])

    held = pd.read_csv(results / "heldout_summary.csv")
    assert set(held["run"]) == {"base", "sft", "grpo_default", *(f"grpo_{v}" for v in ablations)}
    assert held["turns"].nunique() == 1 and held["turns"].iloc[0] > 0
    table = pd.read_csv(results / "eval_comparison.csv")
    table = table[table["model"] == "SmolLM2-135M"].set_index("benchmark")
    for benchmark in ("prove_heldout", "bfcl_multi_turn", "tau2_bench"):
        assert table.loc[benchmark, ["base", "sft", "trained"]].notna().all(), benchmark
