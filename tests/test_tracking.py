"""A tiny training run logged to wandb offline, evaluated into the same run, read back with wandb's reader.

    .venv/bin/python -m pytest tests/test_tracking.py -q

A real VERL GRPO step costs minutes on this CPU, so the "training run" is VERL's own logger,
``verl.utils.tracking.Tracking(project, experiment, default_backend=["wandb"], config=...)``, logging
a few steps exactly as its trainers do, in a process whose environment is ``run_env``'s (with the
run's identity). Then ``log_eval_summary`` resumes the run with the evaluation's summary, and the
run is read back by wandb itself (``wandb leet inspect --summary --json``, wandb-core's reader of the
offline ``.wandb`` log), never by parsing its files here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prove.tracking import (
    list_runs,
    log_eval_summary,
    read_run,
    run_identity,
    summary_metrics,
    wandb_env,
    write_identity,
)
from prove.train.config import load_train_config
from prove.train.launch import RunPaths, run_env

TRAIN = """
import json, sys
from verl.utils.tracking import Tracking
t = Tracking(sys.argv[1], sys.argv[2], default_backend=["wandb", "file"],
             config={"trainer": {"project_name": sys.argv[1], "experiment_name": sys.argv[2]}})
for step in (1, 2, 3):
    t.log({"critic/score/mean": 0.1 * step, "actor/entropy": 3.0 - step}, step=step)
t.finish()
"""
EVAL = """
import json, sys
from prove.tracking import log_eval_summary
print(json.dumps(log_eval_summary(sys.argv[1], json.loads(sys.argv[2]))))
"""


@pytest.fixture()
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("WANDB_API_KEY", "WANDB_RUN_ID", "WANDB_PROJECT", "WANDB_NAME", "PROVE_EXPERIMENT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")


def test_identity_is_deterministic_and_names_the_run() -> None:
    cfg = load_train_config("smollm2-135m")
    a = run_identity(cfg, cfg.variant("default"), environ={})
    assert a == run_identity(cfg, cfg.variant("default"), environ={})
    assert a["group"] == "smoke" and a["name"] == "smollm2-135m-default" and a["project"] == cfg.project
    assert run_identity(cfg, cfg.variant("default"), experiment="laptop")["id"] != a["id"]
    assert run_identity(cfg, cfg.variant("default"), engine="trl", environ={})["id"] != a["id"]
    assert run_identity(cfg, cfg.variant("sft"), environ={})["job_type"] == "sft"
    assert run_identity(cfg, cfg.variant("default"), environ={"PROVE_EXPERIMENT": "paper"})["group"] == "paper"
    for key in ("model", "variant", "lr", "reward_weights", "beta", "data_sha256", "seed", "engine"):
        assert key in a["config"]
    with pytest.raises(ValueError, match="PROVE_EXPERIMENT"):
        run_identity(cfg, cfg.variant("default"), experiment="Not A Slug")
    paths = RunPaths.for_run(cfg, cfg.variant("default"), "/tmp/r")
    env = run_env(paths, base={}, identity=a)
    assert {k: env[k] for k in wandb_env(a)} == wandb_env(a) and env["WANDB_MODE"] == "offline"
    assert "WANDB_RUN_ID" not in run_env(paths, base={})  # without an identity: as before


def test_summary_metrics_flattens_each_evaluator() -> None:
    flat = summary_metrics(heldout={"heldout_reward": 0.5, "abstention_accuracy": float("nan")},
                           bfcl={"categories": [{"category": "multi_turn_base", "accuracy": 0.25}],
                                 "overall": 0.0625},
                           tau2=[{"domain": "retail", "pass^1": 0.5, "pass^2": 0.25},
                                 {"domain": "mock", "pass^1": 1.0, "pass^2": 0.75}],
                           teval={"abilities": {"plan": 40.0}})
    assert flat == {"heldout/heldout_reward": 0.5, "bfcl/multi_turn_base": 0.25, "bfcl/overall": 0.0625,
                    "tau2/retail/pass^1": 0.5, "tau2/retail/pass^2": 0.25, "tau2/mock/pass^1": 1.0,
                    "tau2/mock/pass^2": 0.75, "tau2/pass^1": 0.75, "tau2/pass^2": 0.5, "teval/plan": 40.0}


def test_training_run_and_its_evaluation_read_back_by_wandb(tmp_path: Path, offline: None) -> None:
    cfg = load_train_config("smollm2-135m")
    variant = cfg.variant("default")
    identity = run_identity(cfg, variant)
    paths = RunPaths.for_run(cfg, variant, tmp_path / "results", tmp_path / "checkpoints")
    write_identity(paths.run_dir, identity)
    env = {**os.environ, **run_env(paths, identity=identity)}
    subprocess.run([sys.executable, "-c", TRAIN, cfg.project, cfg.experiment(variant.name)], env=env,
                   check=True, timeout=300, cwd=tmp_path)
    evaluation = {"heldout": {"heldout_reward": 0.42, "exact_turn": 0.25, "turns": 4},
                  "bfcl": {"categories": [{"category": "multi_turn_base", "accuracy": 0.5}], "overall": 0.125},
                  "tau2": [{"domain": "mock", "pass^1": 1.0, "pass^2": 0.5}]}
    subprocess.run([sys.executable, "-c", EVAL, str(paths.run_dir), json.dumps(evaluation)],
                   env={**os.environ}, check=True, timeout=300, cwd=tmp_path)

    run = read_run(paths.run_dir)
    assert run["segments"] == 2 and run["run_id"] == identity["id"]
    assert run["project"] == cfg.project and run["name"] == "smollm2-135m-default"
    assert {"smoke", "verl", "grpo", "default"} <= set(run["tags"])
    ours = run["config"]["prove"]  # the identity's config, beside VERL's own
    assert ours["variant"] == "default" and ours["lr"] == variant.lr and ours["trainer"] == "grpo"
    assert ours["reward_weights"]["coverage"] == pytest.approx(0.3) and ours["beta"] == pytest.approx(0.5)
    assert ours["engine"] == "verl" and ours["experiment"] == "smoke" and ours["seed"] == 7
    assert run["config"]["trainer"]["experiment_name"] == "smollm2-135m-default"  # VERL's own config
    assert run["summary"]["critic/score/mean"] == pytest.approx(0.3)  # the training curve's last step
    assert run["summary"]["heldout/heldout_reward"] == pytest.approx(0.42)
    assert run["summary"]["bfcl/multi_turn_base"] == pytest.approx(0.5)
    assert run["summary"]["tau2/pass^1"] == pytest.approx(1.0)

    (listed,) = list_runs(tmp_path / "results")  # `prove runs` reads the same from the files
    assert listed["id"] == identity["id"] and listed["group"] == "smoke"
    assert listed["final"]["critic/score/mean"] == pytest.approx(0.3)
    assert listed["summary"]["heldout/heldout_reward"] == pytest.approx(0.42)


def test_a_run_without_identity_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="prove train"):
        log_eval_summary(tmp_path, {"heldout/heldout_reward": 0.1})


def test_a_chain_model_is_logged_into_its_own_training_run(tmp_path: Path, offline: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``evaluate_chain``'s hook finds the run by label (``prove.eval.chain``) and hands it to
    tracking, which gives an unlaunched run its identity first (wandb itself: the test above)."""
    import prove.tracking as tracking
    from prove.eval.chain import log_chain_eval

    resumed: list[tuple[Path, str, dict]] = []
    monkeypatch.setattr(tracking, "_resume", lambda d, ident, s: resumed.append((d, ident["name"], dict(s))))
    cfg = load_train_config("smollm2-135m")
    assert log_chain_eval(cfg, "base", {"heldout_reward": 0.9}, None, tmp_path, tmp_path / "ck") is None
    flat = log_chain_eval(cfg, "grpo_no_validity", {"heldout_reward": 0.25},
                          {"bfcl": {"overall": 0.5}}, tmp_path, tmp_path / "ck")
    run_dir = RunPaths.for_run(cfg, cfg.variant("no_validity"), tmp_path, tmp_path / "ck").run_dir
    assert flat is not None and flat["heldout/heldout_reward"] == 0.25 and flat["bfcl/overall"] == 0.5
    assert json.loads((run_dir / "run.json").read_text())["name"] == "smollm2-135m-no_validity"
    assert json.loads((run_dir / "summary.json").read_text())["heldout/heldout_reward"] == 0.25
    assert resumed == [(run_dir, "smollm2-135m-no_validity", flat)]
