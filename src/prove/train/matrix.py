"""The training matrix of a profile (its ``train:`` section): every job, its command and outputs; run resumably.

    python -m prove.train.matrix --profile paper --dry-run    # the paper's matrix, job by job
    python -m prove.train.matrix --profile laptop             # run every job not finished yet

Per config of the profile, in order: the SFT baseline (when listed, or when GRPO starts from it);
with ``lr_sweep: true`` the learning-rate points with PROVE's reward (``lr_points``, all three by
default), then the rate with the best final validation reward (:func:`pick_lr`) for every other
variant (the reward ablations);
otherwise each variant at the config's own rate. Every job is one ``prove train`` command (the
``engine`` of the plan for GRPO) and writes ``results/train/<config>-<variant>/`` (``model.json``
when it finished). A finished job is skipped, so an interrupted matrix continues where it stopped;
``--dry-run`` prints each job's state and outputs as a ``#`` comment and its command as a line that
runs when pasted: jobs after the sweep carry ``--lr-key pick`` (the point is picked on validation
when the job starts) until the sweep has finished. Every job gets the profile's ``thinking``
(``--thinking``/``--no-thinking``). The sweep point picked for ``default`` is its run: trained and
evaluated once (:func:`alias_default`, ``prove.train.chain.trained_models``). 05 runs it; 06
evaluates the models it produced.
"""

from __future__ import annotations

import argparse
import functools
import json
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.profiles import ChainPlan, load_profile
from prove.train.chain import run_label
from prove.train.config import LR_KEYS, PICK_LR, TrainConfig, load_train_config
from prove.train.launch import RunPaths, launch

__all__ = ["Job", "plan_jobs", "pick_lr", "sweep_points", "run_matrix", "alias_default", "jobs_table", "main", "VALIDATION_KEYS"]

VALIDATION_KEYS = ("val-core/prove/reward/mean@1", "val-aux/prove/reward/mean@1", "val-core/prove/score/mean@1")
"""VERL's validation reward for PROVE rows (the first one a run logged is used)."""
PICK = PICK_LR
"""``--lr-key pick``: a job after the sweep runs at the point picked on validation when it starts."""


@dataclass(frozen=True)
class Job:
    """One ``prove train`` run of the matrix."""

    config: str
    variant: str
    stage: str
    """``sft``, ``sweep`` (a learning-rate point) or ``grpo``."""
    command: str
    outputs: tuple[str, ...]
    after: tuple[str, ...]
    """Jobs (``config:variant``) it needs first."""
    done: bool
    lr_key: str | None = None
    """The learning-rate point it runs at (``PICK`` until the sweep has finished)."""

    @property
    def key(self) -> str:
        return f"{self.config}:{self.variant}"


def _paths(cfg: TrainConfig, variant: str, results: Path, checkpoints: Path) -> RunPaths:
    return RunPaths.for_run(cfg, cfg.variant(variant), results, checkpoints)


def _job(cfg: TrainConfig, variant: str, stage: str, plan: ChainPlan, results: Path, checkpoints: Path,
         after: tuple[str, ...], lr_key: str | None = None, thinking: bool | None = None) -> Job:
    paths = _paths(cfg, variant, results, checkpoints)
    trainer = cfg.variant(variant).trainer
    steps = plan.sft_steps if trainer == "sft" else plan.grpo_steps
    argv = ["prove", "train", cfg.name, "--variant", variant]
    if trainer == "grpo" and plan.engine != "verl":
        argv += ["--engine", plan.engine]
    if lr_key is not None:
        argv += ["--lr-key", lr_key]
    if steps is not None:
        argv += ["--steps", str(steps)]
    if thinking is not None:
        argv += ["--thinking" if thinking else "--no-thinking"]
    argv += ["--results-dir", str(results), "--checkpoints-dir", str(checkpoints)]
    return Job(cfg.name, variant, stage, shlex.join(argv), (str(paths.run_dir), str(paths.model)), after,
               paths.model.is_file(), lr_key)


def sweep_points(plan: ChainPlan) -> tuple[str, ...]:
    """The learning-rate points a plan sweeps (``lr_points``; None: all three), in LR_KEYS order.
    Raises ValueError naming the valid points for an unknown one, a repeat or fewer than two."""
    points = tuple(plan.lr_points) if plan.lr_points is not None else LR_KEYS
    unknown = [p for p in points if p not in LR_KEYS]
    if unknown or len(set(points)) != len(points) or len(points) < 2:
        raise ValueError(f"train.lr_points {list(points)}: name at least two different points of "
                         f"{', '.join(LR_KEYS)} (or null for all three)")
    return tuple(k for k in LR_KEYS if k in points)


def pick_lr(cfg: TrainConfig, results_dir: str | Path = "results",
            checkpoints_dir: str | Path = "checkpoints",
            points: tuple[str, ...] = LR_KEYS) -> tuple[str | None, dict[str, float | None]]:
    """The sweep point (of ``points``) with the best final validation reward, and each point's
    value (None for a point that has not finished or logged no validation). None until all of
    them have finished."""
    from prove.train.report import load_metrics

    values: dict[str, float | None] = {}
    for key in points:
        paths = _paths(cfg, key, Path(results_dir), Path(checkpoints_dir))
        values[key] = None
        if not (paths.model.is_file() and paths.metrics.is_file()):
            continue
        metrics = load_metrics(paths.metrics)
        column = next((k for k in VALIDATION_KEYS if k in metrics), None)
        if column is not None and metrics[column].notna().any():
            values[key] = float(metrics[column].dropna().iloc[-1])
    if any(v is None for v in values.values()):
        return None, values
    return max(points, key=lambda k: (values[k], k == cfg.default_lr)), values


def plan_jobs(plan: ChainPlan, results_dir: str | Path = "results",
              checkpoints_dir: str | Path = "checkpoints", thinking: bool | None = None) -> list[Job]:
    """Every job of the plan, in the order they run. ``thinking`` (the profile's) is passed to
    every job (``--thinking``/``--no-thinking``); None leaves each config's own. A model family
    without a thinking mode and ``thinking=True`` raises ThinkingError before any job is listed.

    A variant that would repeat another run is not planned: with the sweep, ``default`` (PROVE's
    reward at the picked rate) is the picked sweep run (:func:`alias_default`); without it, the
    sweep point at the config's ``default_lr`` is ``default``'s run when both are listed."""
    results, checkpoints = Path(results_dir), Path(checkpoints_dir)
    jobs: list[Job] = []
    for name in plan.configs:
        cfg = load_train_config(name).with_results(results).with_thinking(thinking)
        job = functools.partial(_job, thinking=thinking)
        variants = list(plan.variants)
        want_sft = "sft" in variants or cfg.grpo_init == "sft"
        grpo_after: tuple[str, ...] = ()
        if want_sft:
            jobs.append(job(cfg, "sft", "sft", plan, results, checkpoints, ()))
            grpo_after = (jobs[-1].key,) if cfg.grpo_init == "sft" else ()
        rest = [v for v in variants if v != "sft"]
        if plan.lr_sweep:
            points = sweep_points(plan)
            sweep = [job(cfg, key, "sweep", plan, results, checkpoints, grpo_after) for key in points]
            jobs += sweep
            picked, _ = pick_lr(cfg, results, checkpoints, points)
            for v in rest:
                if v == "default" or v in LR_KEYS:
                    continue  # PROVE's reward at the picked rate is the sweep's own run
                jobs.append(job(cfg, v, "grpo", plan, results, checkpoints,
                                grpo_after + tuple(j.key for j in sweep), picked or PICK))
        else:
            if "default" in rest:  # the default's own rate is the default run: train it once
                rest = [v for v in rest if v != cfg.default_lr]
            jobs += [job(cfg, v, "grpo", plan, results, checkpoints, grpo_after) for v in rest]
    return jobs


def run_matrix(plan: ChainPlan, results_dir: str | Path = "results", checkpoints_dir: str | Path = "checkpoints",
               out: Any = None, thinking: bool | None = None,
               keep_shards: bool = False) -> dict[str, dict[str, dict[str, Any]]]:
    """Run every unfinished job in order; returns {config: {run label: model.json record}}.
    ``thinking`` is the profile's thinking mode, given to every run (None: each config's own);
    ``keep_shards`` keeps each run's optimizer and model shards (``prove train --keep-shards``)."""
    import time

    out = out or sys.stdout
    results, checkpoints = Path(results_dir), Path(checkpoints_dir)
    records: dict[str, dict[str, dict[str, Any]]] = {}
    points = sweep_points(plan) if plan.lr_sweep else LR_KEYS
    for job in plan_jobs(plan, results, checkpoints, thinking):
        cfg = load_train_config(job.config).with_results(results).with_thinking(thinking)
        lr_key = job.lr_key
        if lr_key == PICK:  # the sweep finished earlier in this loop: pick now
            lr_key, values = pick_lr(cfg, results, checkpoints, points)
            if lr_key is None:
                raise RuntimeError(f"{cfg.name}: no learning rate to pick, the sweep's validation rewards "
                                   f"are {values}; rerun the sweep with trainer.test_freq > 0")
            print(f"# {cfg.name}: learning rate {lr_key} picked on validation ({values})", file=out)
        paths = _paths(cfg, job.variant, results, checkpoints)
        label = run_label(job.variant)
        if job.done:
            print(f"# {cfg.experiment(job.variant)}: finished earlier; skipped", file=out)
        else:
            variant = cfg.variant(job.variant)
            steps = plan.sft_steps if variant.trainer == "sft" else plan.grpo_steps
            start = time.perf_counter()
            code = launch(cfg, job.variant, results_dir=results, checkpoints_dir=checkpoints, out=out,
                          steps=steps, engine=plan.engine, lr_key=lr_key, thinking=thinking,
                          keep_shards=keep_shards)
            if code != 0:
                raise RuntimeError(f"{cfg.experiment(job.variant)} exited with {code}; see {paths.log}")
            record = json.loads(paths.model.read_text())
            record["wall_s"] = round(time.perf_counter() - start, 1)
            paths.model.write_text(json.dumps(record, indent=2) + "\n")
        records.setdefault(cfg.name, {})[label] = {**json.loads(paths.model.read_text()), "skipped": job.done}
        if job.stage == "sweep":
            picked, values = pick_lr(cfg, results, checkpoints, points)
            if picked is not None:
                records[cfg.name]["grpo_default"] = alias_default(cfg, picked, values, results, checkpoints)
    return records


def alias_default(cfg: TrainConfig, picked: str, values: Mapping[str, float | None],
                  results_dir: str | Path, checkpoints_dir: str | Path) -> dict[str, Any]:
    """Make the picked sweep run the config's ``default`` (PROVE's reward at the picked rate): its
    ``model.json`` is copied into the default run's folder with the pick and the sweep's values, so
    evaluation (``trained_models``) finds it as ``grpo_default``, the paper's trained model."""
    source = _paths(cfg, picked, Path(results_dir), Path(checkpoints_dir))
    target = _paths(cfg, "default", Path(results_dir), Path(checkpoints_dir))
    record = {**json.loads(source.model.read_text()), "variant": "default", "picked_lr": picked,
              "sweep_validation": dict(values), "run_dir": str(source.run_dir)}
    target.run_dir.mkdir(parents=True, exist_ok=True)
    target.model.write_text(json.dumps(record, indent=2) + "\n")
    return {**record, "skipped": False}


def jobs_table(jobs: list[Job]) -> Any:
    import pandas as pd

    return pd.DataFrame([{"job": j.key, "stage": j.stage, "state": "done" if j.done else "to run",
                          "after": ", ".join(j.after), "command": j.command, "outputs": ", ".join(j.outputs)}
                         for j in jobs])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prove.train.matrix", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True, help="configs/profiles/<name>.yaml (its train: section)")
    parser.add_argument("--dry-run", action="store_true", help="list every job; start nothing")
    parser.add_argument("--results-dir", default="results")
    parser.add_argument("--checkpoints-dir", default="results/checkpoints")
    parser.add_argument("--keep-shards", action="store_true",
                        help="keep every run's optimizer and model shards (default: deleted once the "
                             "run's HF model folder is recorded)")
    args = parser.parse_args(argv)
    try:
        profile = load_profile(args.profile)
        plan = profile.train
        jobs = plan_jobs(plan, args.results_dir, args.checkpoints_dir, profile.thinking)
    except (ValueError, FileNotFoundError) as exc:
        print(f"prove.train.matrix: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:  # comments, then each job's command as it runs when pasted
        for j in jobs:
            state = "done  " if j.done else "to run"
            print(f"# [{state}] {j.key} ({j.stage}); outputs: {', '.join(j.outputs)}"
                  + (f"; after {', '.join(j.after)}" if j.after else ""))
            print(j.command + (" --keep-shards" if args.keep_shards else ""))
        print(f"# {len(jobs)} jobs, {sum(j.done for j in jobs)} done; --lr-key {PICK}: the sweep point "
              f"with the best final validation reward, picked when the job starts; evaluation: "
              f"notebook 06 (prove.eval.chain.evaluate_chain) on every finished model")
        return 0
    run_matrix(plan, args.results_dir, args.checkpoints_dir, thinking=profile.thinking,
               keep_shards=args.keep_shards)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
