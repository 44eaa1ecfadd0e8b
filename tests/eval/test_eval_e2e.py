"""End to end on CPU: BFCL multi-turn entries on a served SmolLM2-135M through bfcl's own generation path
and official checker.

Two tests, so that no entry is generated twice in one suite:
- the chain's entries (the rehearsal profile's ``train.chain_bfcl_*``: ``multi_turn_base_50`` for
  every model of the chain) are what the 06 notebook runs through ``evaluate_chain``; the test
  asserts on the pipeline's files (the session fixture ``pipeline_run``, shared with
  tests/test_notebooks.py);
- the smoke profile's other ``eval:`` categories, which no notebook of the suite runs, go through the standalone
  ``evaluate_model`` API here, on one served base model, except those whose code path the others
  already take (``COVERED_ELSEWHERE``: multi_turn_miss_param).

    .venv/bin/python -m pytest tests/eval/test_eval_e2e.py -q -s   # runs the rehearsal pipeline first
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

import pytest
from notebook_run import PIPELINE_PROFILE, PIPELINE_TIMEOUT_S, pipeline_results

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed")
llm = pytest.importorskip("prove.llm", reason="prove.llm (the local model server) is not available")

from prove.eval.bfcl import registry_name, write_results  # noqa: E402
from prove.eval.bfcl_child import read_config  # noqa: E402
from prove.eval.chain import eval_model_name, table_variant  # noqa: E402
from prove.eval.pipeline import EvalPlan, evaluate_model, run_label  # noqa: E402
from prove.eval.served import serve_local  # noqa: E402
from prove.profiles import load_profile  # noqa: E402

# Categories whose code path other runs already take. bfcl-eval (2026.3.23, the version
# prove.eval.bfcl_shim supports) generates multi_turn_miss_param exactly as multi_turn_base
# (base_handler: only `missed_function` and `long_context` change what is run), and on the
# profile's entries (…_50: a turn whose ground truth is empty, then the base entry's calls) its
# checker takes the same branches as multi_turn_miss_func_50's; only the user's words differ. The
# chain's base entries (smoke run) and miss_func (below) cover it, so the standalone test leaves it
# out: two of the six model steps the four categories took.
COVERED_ELSEWHERE = frozenset({"multi_turn_miss_param"})


def _result_entries(project: Path, label: str, category: str) -> list[dict[str, Any]]:
    """bfcl's result file of one category of one run (JSON lines, one per entry)."""
    path = project / "result" / registry_name(label).replace("/", "_") / "multi_turn" / f"BFCL_v4_{category}_result.json"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _check_entries(entries: list[dict[str, Any]]) -> None:
    """One list of model outputs per user turn, with the real prompt token counts the server reported
    (the function docs alone are ~6k tokens)."""
    for entry in entries:
        assert isinstance(entry["result"], list) and entry["result"]
        assert all(n > 1000 for turn in entry["input_token_count"] for n in turn)


def _check_score(score: dict[str, Any], categories: tuple[str, ...], per_category: int) -> None:
    """Per-category rows in the order run, each scored by the checker; a handful, not all 800."""
    assert [r["category"] for r in score["categories"]] == list(categories)
    for row in score["categories"]:
        assert row["total"] == per_category and 0 <= row["correct"] <= row["total"]
        assert not math.isnan(row["accuracy_reachable"])
    assert 0.0 <= score["overall"] <= 1.0 and score["complete"] is False


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)  # the first test to ask for the pipeline runs all of it
def test_the_chains_bfcl_entries_ran_for_every_model_through_generation_and_the_official_checker(
        pipeline_run: dict[str, Any]) -> None:
    """06 on the rehearsal: for base, SFT and each GRPO run, the chain's entries through bfcl's generation
    (served by the model's own vLLM server, its folder as tokenizer) and checker, scored per category,
    written to bfcl_multi_turn.csv/.json and into the comparison table (the score x 100)."""
    import pandas as pd

    from prove.train.config import load_train_config

    results = pipeline_results(pipeline_run, "06")
    prof = load_profile(PIPELINE_PROFILE)
    chain = prof.train
    categories = tuple(chain.chain_bfcl_categories or prof.eval.bfcl_categories)
    ids = tuple(chain.chain_bfcl_ids or prof.eval.bfcl_ids)
    [name] = [eval_model_name(load_train_config(c)) for c in chain.configs]
    runs = list(pd.read_csv(results / "heldout_summary.csv")["run"])
    assert runs[0] == "base" and len(runs) > 1
    labels = [run_label(name, table_variant(r)) for r in runs]

    for label in labels:
        project = results / "bfcl" / label
        seen = []
        for cat in categories:
            entries = _result_entries(project, label, cat)
            seen += [e["id"] for e in entries]
            _check_entries(entries)
        assert sorted(seen) == sorted(ids)
        generate = read_config(project / "logs" / f"{label}.generate.json")  # what the child was given
        assert generate.base_url and generate.tokenizer_path and Path(generate.tokenizer_path).is_dir()
        assert generate.max_steps_per_turn == prof.eval.bfcl_max_steps_per_turn
        assert generate.models[0].max_new_tokens == prof.eval.bfcl_max_new_tokens

    scores = {s["label"]: s for s in json.loads((results / "bfcl_multi_turn.json").read_text())["scores"]}
    assert list(scores) == labels
    per_category = len(ids) // len(categories)
    for score in scores.values():
        _check_score(score, categories, per_category)
    table = pd.read_csv(results / "bfcl_multi_turn.csv")
    assert table.groupby("label").size().to_dict() == {label: len(categories) + 1 for label in labels}
    comparison = pd.read_csv(results / "eval_comparison.csv")
    [row] = comparison[(comparison["model"] == name) & (comparison["benchmark"] == "bfcl_multi_turn")].to_dict("records")
    for run, label in zip(runs, labels, strict=True):
        if table_variant(run) in ("base", "sft", "trained"):  # the comparison table's columns
            assert row[table_variant(run)] == pytest.approx(100 * scores[label]["overall"])


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_categories_no_notebook_runs_go_through_evaluate_model_and_the_official_checker(tmp_path):
    """The smoke profile's ``eval:`` entries (one per category) that neither 06's chain runs (the test
    above reads those from the pipeline run) nor share its code path (``COVERED_ELSEWHERE``): on smoke,
    ``multi_turn_miss_func`` (functions held out, then offered at a later turn) and
    ``multi_turn_long_context`` (the environments' long-context state). Standalone ``evaluate_model``
    with a BFCL-only plan on ``serve_local``, as a user scripting an evaluation calls it, and
    ``write_results``.

    Each model step prefills ~6k prompt tokens (the function docs): three steps here, where all four
    categories took six (315-358 s with the server's start, on two CPU cores).
    """
    ok, why = llm.llm_extra_available()
    if not ok:
        pytest.skip(why)
    prof = load_profile("smoke")
    full = EvalPlan.from_profile(prof.eval, benchmarks=("bfcl",), results_dir=tmp_path)
    all_ids = list(full.bfcl_ids)
    assert len(all_ids) >= 4 and {i.rsplit("_", 1)[0] for i in all_ids} == set(full.bfcl_categories)
    covered = set(prof.train.chain_bfcl_categories or full.bfcl_categories) | COVERED_ELSEWHERE
    categories = tuple(c for c in full.bfcl_categories if c not in covered)
    if not categories:
        pytest.skip("06's chain runs every category of the smoke profile: the pipeline test covers them")
    ids = tuple(i for i in all_ids if i.rsplit("_", 1)[0] in categories)
    plan = EvalPlan.from_profile(prof.eval, benchmarks=("bfcl",), results_dir=tmp_path,
                                 bfcl_categories=categories, bfcl_ids=ids)
    start = time.perf_counter()
    with serve_local(threads=os.cpu_count()) as served:  # the only busy process while BFCL waits on it
        plan.tokenizer_path = str(served.model_dir)
        out = evaluate_model("SmolLM2-135M", "base", served.endpoint, plan)
    score = out["bfcl"]
    assert out["skipped"] == {} and out["tau2"] == [] and out["teval"] is None
    _check_score(score, categories, 1)
    project, label = tmp_path / "bfcl" / "SmolLM2-135M-base", "SmolLM2-135M-base"
    seen = []
    for cat in categories:
        entries = _result_entries(project, label, cat)
        seen += [e["id"] for e in entries]
        _check_entries(entries)
    assert sorted(seen) == sorted(ids)
    rows = {(r["model"], r["benchmark"]) for r in out["rows"]}
    assert ("SmolLM2-135M", "bfcl_multi_turn") in rows
    paths = write_results([score], tmp_path / "results")
    # one row per category and the overall row
    assert paths["csv"].read_text().count("SmolLM2-135M-base") == len(categories) + 1
    print(f"\nBFCL e2e on SmolLM2-135M: {sum(r['correct'] for r in score['categories'])}/{len(ids)} entries "
          f"correct in {time.perf_counter() - start:.0f}s; errors {score['errors']}")
