"""End to end on CPU: a real OpenAI-compatible server (SmolLM2-135M) on loopback, BFCL's generation and checker."""

from __future__ import annotations

import json
import math
import os
import time

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed")
llm = pytest.importorskip("prove.llm", reason="prove.llm (the local model server) is not available")

from prove.eval.bfcl import write_results  # noqa: E402
from prove.eval.pipeline import EvalPlan, evaluate_model  # noqa: E402
from prove.eval.served import serve_local  # noqa: E402
from prove.profiles import load_profile  # noqa: E402


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_smoke_profile_bfcl_entries_run_through_the_real_generation_path_and_official_checker(tmp_path):
    """The smoke profile's handful of entries (one per category), exactly as the 06 notebook runs them.

    Each model step prefills ~6k prompt tokens (the function docs), ~1-2 minutes on two CPU cores.
    """
    ok, why = llm.llm_extra_available()
    if not ok:
        pytest.skip(why)
    plan = EvalPlan.from_profile(load_profile("smoke").eval, benchmarks=("bfcl",), results_dir=tmp_path)
    ids = list(plan.bfcl_ids)
    assert len(ids) >= 4 and {i.rsplit("_", 1)[0] for i in ids} == set(plan.bfcl_categories)
    start = time.perf_counter()
    with serve_local(threads=os.cpu_count()) as served:  # the only busy process while BFCL waits on it
        plan.tokenizer_path = str(served.model_dir)
        out = evaluate_model("SmolLM2-135M", "base", served.endpoint, plan)
    score = out["bfcl"]
    assert out["skipped"] == {} and out["tau2"] == [] and out["teval"] is None
    assert [r["category"] for r in score["categories"]] == list(plan.bfcl_categories)
    for row in score["categories"]:
        assert row["total"] == 1 and 0 <= row["correct"] <= row["total"]
        assert not math.isnan(row["accuracy_reachable"])
    assert 0.0 <= score["overall"] <= 1.0 and score["complete"] is False  # a handful, not all 800
    run_dir = tmp_path / "bfcl" / "SmolLM2-135M-base" / "result" / "prove_SmolLM2-135M-base" / "multi_turn"
    seen = []
    for cat in plan.bfcl_categories:
        entries = [json.loads(line) for line in (run_dir / f"BFCL_v4_{cat}_result.json").read_text().splitlines()]
        seen += [e["id"] for e in entries]
        for entry in entries:  # one list of model outputs per user turn, real token counts from the server
            assert isinstance(entry["result"], list) and entry["result"]
            assert all(n > 1000 for turn in entry["input_token_count"] for n in turn)
    assert sorted(seen) == sorted(ids)
    rows = {(r["model"], r["benchmark"]) for r in out["rows"]}
    assert ("SmolLM2-135M", "bfcl_multi_turn") in rows
    paths = write_results([score], tmp_path / "results")
    # one row per category and the overall row
    assert paths["csv"].read_text().count("SmolLM2-135M-base") == len(plan.bfcl_categories) + 1
    print(f"\nBFCL e2e on SmolLM2-135M: {sum(r['correct'] for r in score['categories'])}/{len(ids)} entries "
          f"correct in {time.perf_counter() - start:.0f}s; errors {score['errors']}")
