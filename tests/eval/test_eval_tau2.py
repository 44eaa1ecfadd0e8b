"""τ²-bench adapter: pass^k, result parsing and the run command (always); runs that need τ²-bench skip."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from prove.eval.base import Endpoint
from prove.eval.tau2 import (
    DOMAINS,
    Tau2,
    Tau2Config,
    is_successful,
    parse_results,
    pass_hat_k,
    score_results,
    tau2_available,
    tau2_run_command,
    write_results,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "eval" / "tau2" / "prove_sample_airline.json"


def test_pass_hat_k_is_the_hypergeometric_all_success_probability():
    assert pass_hat_k(4, 2, 1) == 0.5
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_hat_k(4, 2, 3) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError):
        pass_hat_k(2, 1, 3)


def test_success_needs_reward_one_within_tolerance():
    assert is_successful(1.0) and is_successful(1 - 1e-7)
    assert not is_successful(0.999) and not is_successful(0.0)


def test_sample_results_give_hand_computed_pass_k():
    parsed = parse_results(SAMPLE)
    assert parsed["domain"] == "airline" and parsed["user_llm"] == "gpt-4.1-2025-04-14"
    assert sorted(parsed["trials"]) == ["0", "1", "2"]
    row = score_results(parsed)
    # tasks: 4/4, 2/4, 0/4 successes
    assert row["pass^1"] == pytest.approx(0.5)
    assert row["pass^2"] == pytest.approx((1 + 1 / 6) / 3)
    assert row["pass^3"] == pytest.approx(1 / 3)
    assert row["pass^4"] == pytest.approx(1 / 3)
    assert row["avg_reward"] == pytest.approx(0.5)
    assert row["trials_per_task"] == 4


def test_k_beyond_the_trial_count_is_nan(tmp_path):
    data = json.loads(SAMPLE.read_text())
    data["simulations"] = [s for s in data["simulations"] if s["trial"] < 2]
    path = tmp_path / "two_trials.json"
    path.write_text(json.dumps(data))
    row = score_results(parse_results(path))
    assert row["pass^2"] == pytest.approx((1 + 0) / 3 + 0)  # task0 2/2, task1 1/2 -> 0, task2 0
    assert math.isnan(row["pass^3"]) and math.isnan(row["pass^4"])


def test_adapter_scores_saved_runs_and_writes_results(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    cfg = Tau2Config(label="qwen3-8b-base", domains=("airline",), results_dir=tmp_path)
    (raw / f"{cfg.save_name('airline')}.json").write_text(SAMPLE.read_text())
    rows = Tau2(cfg).score(raw)
    assert rows[0]["label"] == "qwen3-8b-base" and rows[0]["pass^1"] == pytest.approx(0.5)
    paths = write_results(rows, tmp_path / "out", [cfg])
    assert "pass^4" in paths["csv"].read_text().splitlines()[0]
    assert json.loads(paths["json"].read_text())["configs"][0]["user_llm"] == cfg.user_llm
    with pytest.raises(FileNotFoundError):
        Tau2(Tau2Config(label="x", domains=("retail",), results_dir=tmp_path)).score(raw)


def test_run_command_points_the_agent_at_the_endpoint_and_records_the_user_model():
    cfg = Tau2Config(label="ckpt", user_llm="hosted_vllm/Qwen/Qwen3-32B",
                     user_llm_args={"api_base": "http://127.0.0.1:9000/v1", "temperature": 0.0})
    cmd = tau2_run_command(cfg, Endpoint("http://127.0.0.1:8000/v1", "Qwen/Qwen3-8B"), "telecom")
    assert cmd[:2] == ["tau2", "run"]
    assert cmd[cmd.index("--agent-llm") + 1] == "hosted_vllm/Qwen/Qwen3-8B"
    assert json.loads(cmd[cmd.index("--agent-llm-args") + 1])["api_base"] == "http://127.0.0.1:8000/v1"
    assert cmd[cmd.index("--user-llm") + 1] == "hosted_vllm/Qwen/Qwen3-32B"
    assert cmd[cmd.index("--num-trials") + 1] == "4" and cmd[cmd.index("--domain") + 1] == "telecom"


def test_config_rejects_unknown_domains():
    with pytest.raises(ValueError):
        Tau2Config(label="x", domains=("banking",))
    assert DOMAINS == ("airline", "retail", "telecom")


def test_missing_tau2_is_reported_with_install_steps():
    ok, why = tau2_available()
    if ok:
        pytest.skip("τ²-bench is installed here")
    assert "tau2-bench" in why and "v0.2.0" in why
    with pytest.raises(RuntimeError, match="tau2-bench"):
        Tau2(Tau2Config(label="x")).run(Endpoint("http://127.0.0.1:1/v1", "m"))


def test_tau2_loads_its_own_tasks():
    ok, why = tau2_available()
    if not ok:
        pytest.skip(why)
    tasks = Tau2(Tau2Config(label="x", domains=("airline",))).load_tasks()
    assert len(tasks) == 50 and all(t["domain"] == "airline" for t in tasks)
