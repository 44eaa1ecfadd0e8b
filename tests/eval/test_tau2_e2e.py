"""End to end on CPU: `tau2 run` on the rehearsal's mock task, policy and user simulator both served SmolLM2 by vLLM.

The 06 notebook runs exactly this slice on the rehearsal profile (``EvalPlan.from_profile`` of
``eval:``, ``evaluate_model`` -> ``Tau2`` -> ``tau2 run``, the user simulator served by vLLM for the
run, the paper's ``vllm:<model>`` path) for every model of the chain, base included. The test asserts
on those runs' files in the pipeline run (the session fixture ``pipeline_run``, shared with
tests/test_notebooks.py) instead of serving the base model and running the same conversation again.

    .venv/bin/python -m pytest tests/eval/test_tau2_e2e.py -q   # runs the rehearsal pipeline first
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from notebook_run import PIPELINE_PROFILE, PIPELINE_TIMEOUT_S, pipeline_results

from prove.eval.tau2 import parse_results, score_results, tau2_available

TAU2_OK, TAU2_WHY = tau2_available()


@pytest.mark.slow
@pytest.mark.skipif(not TAU2_OK, reason=TAU2_WHY)
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)  # the first test to ask for the pipeline runs all of it
def test_the_tau2_slice_runs_through_tau2_run_against_served_models(pipeline_run: dict[str, Any]) -> None:
    """For base, SFT and each GRPO run: τ²'s own results file holds the tasks asked for, one conversation each
    between the model's server (the one BFCL's generation used too: one server per model) and a
    second server simulating the user (the same model for every checkpoint), with the profile's
    arguments and caps, token counts from the server, and pass^1 in the comparison table (x100)."""
    import pandas as pd

    from prove.eval.bfcl_child import read_config
    from prove.eval.chain import eval_model_name, table_variant
    from prove.eval.pipeline import EvalPlan, run_label
    from prove.profiles import load_profile
    from prove.train.config import load_train_config

    results = pipeline_results(pipeline_run, "06")
    prof = load_profile(PIPELINE_PROFILE)
    plan = EvalPlan.from_profile(prof.eval)
    assert plan.tau2_domains == ("mock",) and plan.tau2_user_llm.startswith("vllm:")  # the paper's path
    assert prof.train.chain_benchmarks is None or "tau2" in prof.train.chain_benchmarks
    [name] = [eval_model_name(load_train_config(c)) for c in prof.train.configs]
    runs = list(pd.read_csv(results / "heldout_summary.csv")["run"])
    assert runs[0] == "base" and len(runs) > 1
    comparison = pd.read_csv(results / "eval_comparison.csv")
    [scores] = comparison[(comparison["model"] == name) & (comparison["benchmark"] == "tau2_bench")].to_dict("records")

    users = set()
    for run in runs:
        label = run_label(name, table_variant(run))
        raw = results / "tau2" / label / "raw" / f"prove_{label}_mock.json"
        data = json.loads(raw.read_text())
        info = data["info"]
        assert sorted(s["task_id"] for s in data["simulations"]) == sorted(plan.tau2_task_ids)
        assert info["num_trials"] == plan.tau2_trials == 1 and info["max_steps"] == plan.tau2_max_steps
        agent, user = info["agent_info"], info["user_info"]
        generate = read_config(results / "bfcl" / label / "logs" / f"{label}.generate.json")
        assert agent["llm"] == f"openai/{generate.models[0].model_name}"
        assert agent["llm_args"]["api_base"] == generate.base_url != user["llm_args"]["api_base"]
        assert {k: agent["llm_args"][k] for k in plan.tau2_agent_llm_args} == plan.tau2_agent_llm_args
        assert {k: user["llm_args"][k] for k in plan.tau2_user_llm_args} == plan.tau2_user_llm_args
        users.add((user["llm"], user["llm_args"]["api_base"]))  # one simulator process for the chain
        for sim in data["simulations"]:
            roles = [m["role"] for m in sim["messages"]]
            assert "user" in roles and "assistant" in roles
            assert sim["reward_info"] is not None and sim["termination_reason"] in {
                "user_stop", "agent_stop", "max_steps", "too_many_errors"}
            # every generated message carries the token counts the server reported
            assert all(m["usage"]["prompt_tokens"] > 0 for m in sim["messages"][1:] if m["role"] != "tool")
        parsed = parse_results(raw)
        assert parsed["domain"] == "mock" and set(parsed["trials"]) == set(plan.tau2_task_ids)
        row = score_results(parsed)  # what Tau2.score reports for the domain
        assert row["tasks"] == len(plan.tau2_task_ids) and row["trials_per_task"] == 1
        assert 0.0 <= row["pass^1"] <= 1.0 and row["agent_llm"] == agent["llm"]
        if table_variant(run) in ("base", "sft", "trained"):  # the comparison table's columns
            assert scores[table_variant(run)] == pytest.approx(100 * row["pass^1"])
        print(f"\nτ² mock on {label}: pass^1 {row['pass^1']:.2f} over {row['tasks']} tasks "
              f"(termination {row['termination']})")
    assert len(users) == 1, f"the user simulator differs between checkpoints: {users}"
