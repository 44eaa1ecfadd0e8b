"""The training matrix: jobs per profile, resumption, the learning rate picked on validation."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from prove.profiles import ChainPlan
from prove.train.config import load_train_config
from prove.train.launch import RunPaths
from prove.train.matrix import (
    PICK,
    alias_default,
    main,
    pick_lr,
    plan_jobs,
    run_matrix,
    sweep_points,
)


def _finish(cfg, variant: str, results: Path, ckpt: Path, val: float | None = None) -> RunPaths:
    """A run folder as a finished run leaves it: model.json (and metrics with a validation reward)."""
    paths = RunPaths.for_run(cfg, cfg.variant(variant), results, ckpt)
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    paths.model.write_text(json.dumps({"config": cfg.name, "variant": variant, "hf_model": f"/m/{variant}",
                                       "trainer": cfg.variant(variant).trainer, "global_step": 3}))
    if val is not None:
        lines = [{"step": 1, "data": {"val-core/prove/reward/mean@1": 0.0}},
                 {"step": 3, "data": {"val-core/prove/reward/mean@1": val, "critic/score/mean": 0.5}}]
        paths.metrics.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return paths


def test_the_laptop_matrix_is_sft_then_trl_grpo_per_reward(tmp_path: Path) -> None:
    from prove.profiles import load_profile

    plan = load_profile("laptop").train
    jobs = plan_jobs(plan, tmp_path, tmp_path / "ckpt")
    assert plan.variants[:2] == ("default", "recall_only")  # the two runs the experiment needs
    assert [j.variant for j in jobs] == ["sft", *plan.variants]
    assert "--engine" not in jobs[0].command and all("--engine trl" in j.command for j in jobs[1:])
    assert all(j.after == ("smollm2-135m-laptop:sft",) for j in jobs[1:]) and not any(j.done for j in jobs)


def test_the_paper_matrix_sweeps_then_runs_every_ablation_at_the_picked_rate(tmp_path: Path) -> None:
    from prove.profiles import load_profile

    plan = load_profile("paper").train
    jobs = plan_jobs(plan, tmp_path, tmp_path / "ckpt")
    per_model = {c: [j for j in jobs if j.config == c] for c in plan.configs}
    assert len(per_model) == 4
    for model_jobs in per_model.values():
        stages = [j.stage for j in model_jobs]
        assert stages == ["sft"] + ["sweep"] * 3 + ["grpo"] * 8
        ablations = [j for j in model_jobs if j.stage == "grpo"]
        assert {j.variant for j in ablations} == {"no_validity", "no_coverage", "no_efficiency", "no_name",
                                                  "no_args", "beta0", "recall_only", "outcome"}
        assert all(j.lr_key == PICK and len(j.after) == 3 for j in ablations)


def test_the_pick_is_the_best_final_validation_reward(tmp_path: Path) -> None:
    cfg = load_train_config("qwen3-4b").with_results(tmp_path)
    ckpt = tmp_path / "ckpt"
    _finish(cfg, "lr_low", tmp_path, ckpt, 0.30)
    _finish(cfg, "lr_mid", tmp_path, ckpt, 0.41)
    assert pick_lr(cfg, tmp_path, ckpt) == (None, {"lr_low": 0.30, "lr_mid": 0.41, "lr_high": None})
    _finish(cfg, "lr_high", tmp_path, ckpt, 0.52)
    picked, values = pick_lr(cfg, tmp_path, ckpt)
    assert picked == "lr_high" and values["lr_high"] == 0.52
    plan = ChainPlan(configs=("qwen3-4b",), variants=("default", "beta0"), lr_sweep=True)
    beta0 = [j for j in plan_jobs(plan, tmp_path, ckpt) if j.variant == "beta0"][0]
    assert beta0.lr_key == "lr_high" and "--lr-key lr_high" in beta0.command
    record = alias_default(cfg, picked, values, tmp_path, ckpt)
    default = RunPaths.for_run(cfg, cfg.variant("default"), tmp_path, ckpt)
    assert json.loads(default.model.read_text())["hf_model"] == "/m/lr_high" == record["hf_model"]


def test_a_two_point_sweep_plans_picks_and_aliases_over_its_points_only(tmp_path: Path) -> None:
    cfg = load_train_config("qwen3-4b").with_results(tmp_path)
    ckpt = tmp_path / "ckpt"
    plan = ChainPlan(configs=("qwen3-4b",), variants=("default", "beta0"), lr_sweep=True,
                     lr_points=("lr_high", "lr_low"))
    assert [j.variant for j in plan_jobs(plan, tmp_path, ckpt) if j.stage == "sweep"] == ["lr_low", "lr_high"]
    _finish(cfg, "lr_low", tmp_path, ckpt, 0.30)
    _finish(cfg, "lr_high", tmp_path, ckpt, 0.20)
    assert pick_lr(cfg, tmp_path, ckpt)[0] is None  # all three points: lr_mid never ran
    assert pick_lr(cfg, tmp_path, ckpt, sweep_points(plan)) == ("lr_low", {"lr_low": 0.30, "lr_high": 0.20})
    beta0 = [j for j in plan_jobs(plan, tmp_path, ckpt) if j.variant == "beta0"][0]
    assert beta0.lr_key == "lr_low" and "--lr-key lr_low" in beta0.command
    _finish(cfg, "beta0", tmp_path, ckpt)
    records = run_matrix(plan, tmp_path, ckpt, out=io.StringIO())  # nothing left to launch
    assert records["qwen3-4b"]["grpo_default"]["sweep_validation"] == {"lr_low": 0.30, "lr_high": 0.20}


@pytest.mark.parametrize("points", [("lr_low",), ("lr_low", "lr_low"), ("lr_low", "lr_top"), ()])
def test_sweep_points_refuse_fewer_than_two_repeats_and_unknown_names(points: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match=r"name at least two different points of lr_low, lr_mid, lr_high"):
        sweep_points(ChainPlan(configs=("qwen3-4b",), lr_sweep=True, lr_points=points))


def test_finished_jobs_are_skipped_and_the_default_is_aliased(tmp_path: Path) -> None:
    cfg = load_train_config("qwen3-4b").with_results(tmp_path)
    ckpt = tmp_path / "ckpt"
    for key, val in (("lr_low", 0.2), ("lr_mid", 0.1), ("lr_high", 0.15)):
        _finish(cfg, key, tmp_path, ckpt, val)
    _finish(cfg, "beta0", tmp_path, ckpt)
    plan = ChainPlan(configs=("qwen3-4b",), variants=("default", "beta0"), lr_sweep=True)
    assert all(j.done for j in plan_jobs(plan, tmp_path, ckpt))
    records = run_matrix(plan, tmp_path, ckpt, out=io.StringIO())  # nothing left to launch
    assert records["qwen3-4b"]["grpo_default"]["picked_lr"] == "lr_low"
    assert records["qwen3-4b"]["grpo_beta0"]["skipped"] is True


def test_the_dry_run_lists_every_job_and_a_bad_profile_says_what_exists(capsys: pytest.CaptureFixture) -> None:
    from prove.profiles import load_profile

    n = 1 + len(load_profile("laptop").train.variants)  # SFT, then one GRPO run per reward
    assert main(["--profile", "laptop", "--dry-run", "--results-dir", "/nonexistent/results"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("[to run]") == n and f"# {n} jobs, 0 done" in printed and "outputs:" in printed
    assert main(["--profile", "nope", "--dry-run"]) == 2
    assert "unknown profile 'nope'; available:" in capsys.readouterr().err


def test_an_unknown_learning_rate_point_is_refused(tmp_path: Path) -> None:
    from prove.train.launch import launch

    with pytest.raises(ValueError, match="unknown learning-rate point 'lr_max'; valid: lr_high, lr_low, lr_mid"):
        launch(load_train_config("qwen3-4b"), "beta0", dry_run=True, results_dir=tmp_path, lr_key="lr_max")


def test_an_sft_run_gets_enough_epochs_to_reach_its_step_cap_and_save(tmp_path: Path) -> None:
    """VERL's SFT trainer saves only at its last step: 32 steps over 27 rows per epoch at one epoch
    would end after 27 steps and save nothing (the laptop run's first attempt)."""
    from prove.train.launch import launch

    out = io.StringIO()
    assert launch(load_train_config("smollm2-135m-laptop"), "sft", dry_run=True, results_dir=tmp_path, out=out) == 0
    command = out.getvalue()
    assert "trainer.total_training_steps=32" in command and "trainer.total_epochs=32" in command


def test_every_dry_run_line_is_a_comment_or_a_command_prove_train_accepts(
        capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    """The paper's dry run is pasteable: each job prints as a shell line that `prove train` parses
    (the ablations' rate is ``--lr-key pick``: picked on validation when the job starts)."""
    import shlex

    from prove.train.cli import build_parser

    results = tmp_path / "my results"  # a space: the commands must quote it
    assert main(["--profile", "paper", "--dry-run", "--results-dir", str(results)]) == 0
    commands = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("#")]
    assert len(commands) == 4 * 12
    parser = build_parser(exit_on_error=False)
    for line in commands:
        argv = shlex.split(line)
        assert argv[:2] == ["prove", "train"], line
        args = parser.parse_args(argv[2:])  # argparse.ArgumentError (or SystemExit) if refused
        assert args.results_dir == str(results) and args.thinking is False
        if args.variant not in ("sft", "lr_low", "lr_mid", "lr_high"):
            assert args.lr_key == "pick"


def test_lr_key_pick_runs_at_the_sweep_point_with_the_best_validation_reward(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from prove.train.cli import main as train

    cfg = load_train_config("qwen3-4b").with_results(tmp_path)
    ckpt = tmp_path / "ckpt"
    argv = ["qwen3-4b", "--variant", "beta0", "--lr-key", "pick", "--results-dir", str(tmp_path),
            "--checkpoints-dir", str(ckpt)]
    assert train([*argv, "--dry-run"]) == 0  # before the sweep: the config's default_lr, said so
    assert "the sweep has not finished" in capsys.readouterr().out
    assert train(argv) == 2  # a real run refuses to guess
    assert "--lr-key pick: no learning rate to pick" in capsys.readouterr().err
    for key, val in (("lr_low", 0.2), ("lr_mid", 0.1), ("lr_high", 0.35)):
        _finish(cfg, key, tmp_path, ckpt, val)
    assert train([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "learning rate lr_high picked on validation" in out
    assert f"actor_rollout_ref.actor.optim.lr={cfg.lr_sweep['lr_high']!r}" in out


def test_the_picked_rate_is_trained_and_evaluated_once(tmp_path: Path) -> None:
    """After the sweep, ``default`` (PROVE's reward at the picked rate) is the picked sweep run:
    the matrix plans no second run, and evaluation lists that model once, as grpo_default, and
    leaves the other sweep points out unless they are named."""
    from prove.train.chain import trained_models

    cfg = load_train_config("qwen3-4b").with_results(tmp_path)
    ckpt = tmp_path / "ckpt"
    plan = ChainPlan(configs=("qwen3-4b",), variants=("default", "beta0"), lr_sweep=True)
    assert [j.variant for j in plan_jobs(plan, tmp_path, ckpt)] == ["lr_low", "lr_mid", "lr_high", "beta0"]
    for key, val in (("lr_low", 0.2), ("lr_mid", 0.4), ("lr_high", 0.3)):
        paths = _finish(cfg, key, tmp_path, ckpt, val)
        folder = tmp_path / "models" / key
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        record = json.loads(paths.model.read_text())
        paths.model.write_text(json.dumps({**record, "hf_model": str(folder)}))
    run_matrix(ChainPlan(configs=("qwen3-4b",), variants=("default",), lr_sweep=True), tmp_path, ckpt,
               out=io.StringIO())
    models = trained_models(cfg, tmp_path, ckpt)
    assert models["grpo_default"] == str(tmp_path / "models" / "lr_mid")
    # the sweep was decided on validation: its other points are not evaluated unless named
    assert not {"grpo_lr_low", "grpo_lr_mid", "grpo_lr_high"} & set(models)
    named = trained_models(cfg, tmp_path, ckpt, variants=["default", "lr_low", "lr_mid", "lr_high"])
    assert named["grpo_default"] == models["grpo_default"]
    assert "grpo_lr_mid" not in named and {"grpo_lr_low", "grpo_lr_high"} <= set(named)
    assert len(set(named.values())) == len(named)  # no model served twice
    # Without the sweep, a listed sweep point at the config's default_lr is the default run.
    plain = ChainPlan(configs=("qwen3-4b",), variants=("default", cfg.default_lr, "lr_high"))
    assert [j.variant for j in plan_jobs(plain, tmp_path / "b", ckpt)] == ["default", "lr_high"]
