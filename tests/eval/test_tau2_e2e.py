"""End to end on CPU: `tau2 run` on the smoke profile's mock tasks, policy and user simulator both served SmolLM2.

    .venv/bin/python -m pytest tests/eval/test_tau2_e2e.py -q -s     # ~1-2 min on two cores
"""

from __future__ import annotations

import json
import time

import pytest

from prove.eval.tau2 import parse_results, tau2_available

llm = pytest.importorskip("prove.llm", reason="prove.llm (the local model server) is not available")

from prove.eval.pipeline import EvalPlan, evaluate_model, run_label  # noqa: E402
from prove.eval.served import serve_local  # noqa: E402
from prove.profiles import load_profile  # noqa: E402

TAU2_OK, TAU2_WHY = tau2_available()


@pytest.mark.slow
@pytest.mark.skipif(not TAU2_OK, reason=TAU2_WHY)
@pytest.mark.timeout(1200)
def test_smoke_profile_tau2_slice_runs_through_tau2_run_against_served_models(tmp_path):
    ok, why = llm.llm_extra_available()
    if not ok:
        pytest.skip(why)
    plan = EvalPlan.from_profile(load_profile("smoke").eval, benchmarks=("tau2",), results_dir=tmp_path)
    assert plan.tau2_domains == ("mock",) and plan.tau2_user_llm == "local"
    start = time.perf_counter()
    with serve_local() as served:  # the policy; the adapter serves the user simulator itself
        out = evaluate_model("SmolLM2-135M", "base", served.endpoint, plan)
    seconds = time.perf_counter() - start
    assert out["skipped"] == {} and out["bfcl"] is None
    [row] = out["tau2"]
    assert row["domain"] == "mock" and row["tasks"] == len(plan.tau2_task_ids)
    assert row["trials_per_task"] == plan.tau2_trials == 1
    assert 0.0 <= row["pass^1"] <= 1.0 and row["agent_llm"] == f"openai/{served.endpoint.model}"
    [long] = [r for r in out["rows"] if r["benchmark"] == "tau2_bench"]
    assert long["score"] == pytest.approx(100 * row["pass^1"])

    # τ²'s own results file: the tasks asked for, one conversation each, two different servers
    label = run_label("SmolLM2-135M", "base")
    results = tmp_path / "tau2" / label / "raw" / f"prove_{label}_mock.json"
    data = json.loads(results.read_text())
    assert sorted(s["task_id"] for s in data["simulations"]) == sorted(plan.tau2_task_ids)
    agent_base = data["info"]["agent_info"]["llm_args"]["api_base"]
    user_base = data["info"]["user_info"]["llm_args"]["api_base"]
    assert agent_base == served.endpoint.base_url and user_base != agent_base
    for sim in data["simulations"]:
        roles = [m["role"] for m in sim["messages"]]
        assert "user" in roles and "assistant" in roles
        assert sim["reward_info"] is not None and sim["termination_reason"] in {
            "user_stop", "agent_stop", "max_steps", "too_many_errors"}
        # every generated message carries the token counts the server reported
        assert all(m["usage"]["prompt_tokens"] > 0 for m in sim["messages"][1:] if m["role"] != "tool")
    parsed = parse_results(results)
    assert parsed["domain"] == "mock" and set(parsed["trials"]) == set(plan.tau2_task_ids)
    print(f"\nτ² mock on SmolLM2-135M: pass^1 {row['pass^1']:.2f} over {row['tasks']} tasks "
          f"(termination {row['termination']}) in {seconds:.0f}s")
