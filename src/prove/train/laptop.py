"""The laptop experiment's record: one summary row per run, the step curves, and how it was made.

    from prove.train.laptop import write_record
    write_record("reports/laptop", "smollm2-135m-laptop", heldout, results_dir="results")   # 07 does this

Runs are named by what they test: ``base`` (no training), ``sft``, and ``grpo_<reward>`` for each
GRPO run from the SFT model (``grpo_prove`` is PROVE's reward, the config's ``default`` variant).
``summary.csv`` has one row for each of :data:`RUN_NAMES` — a run that was not part of the
experiment stays in the table with ``status = not run`` — with the held-out numbers 06 measured
(``prove.eval.heldout``: PROVE's default reward whatever the run trained on), its steps and
training wall time. ``steps.csv`` holds every GRPO step's mean reward, calls per rollout,
response length and reward standard deviation within groups (TRL's logged metrics), drawn in
``curves.png``; ``intervals.csv`` each model's held-out means with bootstrap 95% intervals
(:func:`interval_table`; their ``all`` rows are also ``summary.csv``'s ``*_ci_low``/``*_ci_high``
columns), and ``comparisons.csv`` the paired differences on the same held-out turns
(:func:`comparison_table`), both in ``prove.paired``'s subsets: every turn, the turns with calls,
and the no-call turns apart; ``record.json`` the commands, seeds, package versions, commit, machine,
wall times (:func:`phase_table`) and the share of each GRPO run's rollouts over the call budget.
Nothing in it is typed in: every number comes from the run directories and 06's table.
"""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["RUN_NAMES", "SUMMARY_COLUMNS", "INTERVALS", "STEP_METRICS", "run_name", "summary_table", "step_table",
           "curves_figure", "comparison_pairs", "comparison_table", "report_names", "interval_table",
           "phase_table", "environment", "write_record"]

RUN_NAMES: tuple[str, ...] = ("base", "sft", "grpo_prove", "grpo_recall_only", "grpo_no_efficiency",
                              "grpo_beta0", "grpo_no_name")
MEASURED: tuple[str, ...] = (
    "heldout_reward", "heldout_coverage", "exact_turn", "state_success", "state_success_conversation",
    "calls_per_turn", "gt_calls_per_turn", "abstention_accuracy", "clarification_accuracy",
    "high_reward_state_fail", "reward_state_corr", "turns",
)
"""06's held-out summary columns the record keeps (``prove.eval.heldout.SUMMARY_KEYS``)."""
INTERVALS: dict[str, str] = {"score": "heldout_reward", "coverage": "heldout_coverage", "exact": "exact_turn",
                             "n_pred": "calls_per_turn"}
"""Per-turn column of 06's turn table -> the summary column whose 95% interval is added beside it
(``<column>_ci_low``, ``<column>_ci_high``: :func:`prove.paired.mean_intervals`, over every turn)."""
SUMMARY_COLUMNS: tuple[str, ...] = (
    "run", "status", *MEASURED, *(f"{c}_ci_{end}" for c in INTERVALS.values() for end in ("low", "high")),
    "train_over_budget_share", "steps", "wall_s", "trained_on", "lr", "engine")
STEP_METRICS: dict[str, str] = {
    "reward": "mean reward (trained reward)",
    "rewards/outcome/mean": "state success (outcome, weight 0 unless trained on it)",
    "prove/high_reward_state_fail": "high reward, wrong state",
    "prove/calls_over_gt": "calls / ground-truth calls",
    "prove/over_budget_share": "rollouts over the call budget B",
    "rewards/calls/mean": "calls per rollout",
    "completions/mean_length": "response length (model tokens)",
    "reward_std": "reward std within groups",
    "frac_reward_zero_std": "groups with no reward spread",
}
"""TRL's per-step metric -> its label in steps.csv / curves.png."""
PACKAGES = ("torch", "transformers", "trl", "verl", "accelerate", "datasets", "ray", "numpy")


def run_name(variant: str, reward: str, trainer: str) -> str:
    """``sft``, or ``grpo_<reward>`` (the config's ``default`` variant trains on ``prove``)."""
    return "sft" if trainer == "sft" or variant == "sft" else f"grpo_{reward}"


def _dirs(results_dir: str | Path, checkpoints_dir: str | Path | None) -> tuple[Path, Path]:
    """The results folder and the checkpoints folder (default: ``<results>/checkpoints``, 05's)."""
    results = Path(results_dir)
    return results, Path(checkpoints_dir) if checkpoints_dir is not None else results / "checkpoints"


def _runs(cfg: Any, results_dir: Path, checkpoints_dir: Path) -> dict[str, dict[str, Any]]:
    """Every finished run of the config, by report name: its model.json and run directory."""
    from prove.train.launch import RunPaths

    found: dict[str, dict[str, Any]] = {}
    for name, variant in cfg.variants().items():
        paths = RunPaths.for_run(cfg, variant, results_dir, checkpoints_dir)
        if paths.model.is_file():
            record = json.loads(paths.model.read_text())
            found[run_name(name, variant.reward, variant.trainer)] = {
                **record, "run_dir": str(paths.run_dir), "metrics": str(paths.metrics)}
    return found


def summary_table(cfg: Any, heldout: pd.DataFrame, results_dir: str | Path = "results",
                  checkpoints_dir: str | Path | None = None, intervals: pd.DataFrame | None = None,
                  steps: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per :data:`RUN_NAMES` entry: 06's held-out summary joined with each run's record.

    ``heldout`` is 06's ``heldout_summary.csv`` (column ``run``: ``base``, ``sft``,
    ``grpo_<variant>``); only rows of ``cfg``'s model are read. ``intervals``
    (:func:`interval_table`) adds the 95% interval of each :data:`INTERVALS` column;
    ``train_over_budget_share`` is the share of a GRPO run's rollouts (of turns with ground-truth
    calls) that made more calls than the budget B, over all its steps (``steps``: :func:`step_table`,
    read when not given): where it is 0, the efficiency term never acted and an ablation of it
    cannot differ."""
    results_dir, checkpoints_dir = _dirs(results_dir, checkpoints_dir)
    runs = _runs(cfg, results_dir, checkpoints_dir)
    steps = step_table(cfg, results_dir, checkpoints_dir) if steps is None else steps
    over = STEP_METRICS["prove/over_budget_share"]
    over_budget = steps.groupby("run")[over].mean() if over in steps and len(steps) else pd.Series(dtype=float)
    bounds: dict[tuple[str, str], tuple[float, float]] = {}
    if intervals is not None and len(intervals):
        every = intervals[intervals["subset"] == "all"]
        for row in every.to_dict("records"):
            if row["metric"] in INTERVALS:
                bounds[(str(row["run"]), INTERVALS[row["metric"]])] = (row["ci_low"], row["ci_high"])
    by_label: dict[str, Mapping[str, Any]] = {_report_name(cfg, str(row["run"])): row
                                               for row in heldout.to_dict("records")}
    rows = []
    for name in RUN_NAMES:
        record, measured = runs.get(name), by_label.get(name)
        row: dict[str, Any] = {"run": name}
        if measured is None:
            row["status"] = "trained, not evaluated" if record else "not run"
        else:
            row["status"] = "evaluated"
            for key in MEASURED:
                row[key] = measured.get(key)
            for column in INTERVALS.values():
                if (name, column) in bounds:
                    row[f"{column}_ci_low"], row[f"{column}_ci_high"] = bounds[(name, column)]
        if name in over_budget.index:
            row["train_over_budget_share"] = float(over_budget[name])
        if name == "base":
            row.update(steps=0, wall_s=0.0, trained_on="-")
        elif record:
            row.update(steps=record.get("global_step"), wall_s=record.get("wall_s"),
                       trained_on=record.get("reward") if record.get("trainer") == "grpo" else "sft data",
                       lr=record.get("lr"), engine=record.get("engine", "verl"))
        rows.append(row)
    return pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))


def step_table(cfg: Any, results_dir: str | Path = "results",
               checkpoints_dir: str | Path | None = None) -> pd.DataFrame:
    """Every GRPO step of every finished run: run, step and :data:`STEP_METRICS` (long format)."""
    from prove.train.report import load_metrics

    results_dir, checkpoints_dir = _dirs(results_dir, checkpoints_dir)
    frames = []
    for name, record in _runs(cfg, results_dir, checkpoints_dir).items():
        if record.get("trainer") != "grpo" or not Path(record["metrics"]).is_file():
            continue
        metrics = load_metrics(record["metrics"])
        present = [m for m in STEP_METRICS if m in metrics]
        frame = metrics[["step", *present]].rename(columns=STEP_METRICS)
        frame.insert(0, "run", name)
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["run", "step", *STEP_METRICS.values()])
    return pd.concat(frames, ignore_index=True)


def curves_figure(steps: pd.DataFrame, window: int = 4) -> Any:
    """One panel per step metric, one line per run (a ``window``-step running mean over the
    faint per-step values: one prompt per step makes single steps noisy)."""
    import matplotlib.pyplot as plt

    labels = [m for m in STEP_METRICS.values() if m in steps and steps[m].notna().any()]
    cols = min(4, len(labels))
    rows = -(-len(labels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in list(axes.flat)[len(labels):]:
        ax.set_visible(False)
    for ax, label in zip(axes.flat, labels, strict=False):
        for k, (run, frame) in enumerate(steps.groupby("run", sort=True)):
            color = f"C{k}"
            ax.plot(frame["step"], frame[label], color=color, alpha=0.25, lw=1)
            ax.plot(frame["step"], frame[label].rolling(window, min_periods=1).mean(), color=color, lw=2,
                    label=run)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("GRPO step")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    return fig


def environment() -> dict[str, Any]:
    """Package versions and the machine (what the wall times were measured on)."""
    import importlib.metadata as md

    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = None
    memory = None
    try:
        memory = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"python": sys.version.split()[0], "packages": versions, "source": source(),
            "machine": {"platform": platform.platform(), "processor": platform.machine(),
                        "cpus": os.cpu_count(), "memory_gib": memory}}


def source(repo: str | Path | None = None) -> dict[str, Any]:
    """The commit the code ran at and whether tracked files differed from it (``dirty``); both
    None outside a git checkout."""
    import subprocess

    root = Path(repo) if repo is not None else Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                check=True, timeout=30).stdout.strip()
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                                capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": bool(status.strip())}


def _notebook_times(executed: Path) -> dict[str, float]:
    """Seconds per executed notebook (papermill's own record), for the pipeline's wall time."""
    times = {}
    for path in sorted(executed.glob("[0-9][0-9]_*.ipynb")):
        try:
            meta = json.loads(path.read_text()).get("metadata", {}).get("papermill", {})
        except (OSError, ValueError):
            continue
        if meta.get("duration") is not None:
            times[path.stem] = round(float(meta["duration"]), 1)
    return times


def comparison_pairs(labels: Sequence[str]) -> list[tuple[str, str]]:
    """The laptop experiment's paired comparisons among the report names present: SFT against the
    base model, PROVE's GRPO against SFT (question 1), and every other GRPO run against PROVE's
    (question 2: recall-only against PROVE, each ablation against PROVE)."""
    have = set(labels)
    pairs = [(a, b) for a, b in (("sft", "base"), ("grpo_prove", "sft")) if {a, b} <= have]
    pairs += [(name, "grpo_prove") for name in RUN_NAMES
              if name.startswith("grpo_") and name != "grpo_prove" and {name, "grpo_prove"} <= have]
    return pairs


def _report_name(cfg: Any, label: str) -> str:
    """06's label of a model as its report name (``grpo_default`` is ``grpo_prove``)."""
    if not label.startswith("grpo_"):
        return label
    variant = cfg.variant(label[len("grpo_"):])
    return run_name(variant.name, variant.reward, variant.trainer)


def report_names(cfg: Any, turns: pd.DataFrame) -> pd.DataFrame:
    """06's per-turn table with its ``label`` read as report names (``grpo_default`` is
    ``grpo_prove``)."""
    return turns.assign(label=[_report_name(cfg, str(x)) for x in turns["label"]])


def comparison_table(cfg: Any, turns: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """:func:`prove.paired.paired_differences` over 06's per-turn table (:func:`report_names`), for
    :func:`comparison_pairs`."""
    from prove.paired import paired_differences

    named = report_names(cfg, turns)
    return paired_differences(named, comparison_pairs(named["label"].unique()), seed=seed, n_boot=n_boot)


def interval_table(cfg: Any, turns: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """Every model's own held-out means with bootstrap 95% intervals (:func:`prove.paired
    .mean_intervals`), in :data:`RUN_NAMES` order: every turn, the turns with calls, and the no-call
    turns (abstention and clarification) as rows of their own."""
    from prove.paired import mean_intervals

    named = report_names(cfg, turns)
    present = set(named["label"])
    order = [n for n in RUN_NAMES if n in present] + sorted(present - set(RUN_NAMES))
    return mean_intervals(named, order, seed=seed, n_boot=n_boot)


def phase_table(record: Mapping[str, Any]) -> pd.DataFrame:
    """The experiment's wall time by phase, from a record (:func:`write_record`): each notebook
    papermill ran (``notebook``) and, inside 05, each training run (``train``)."""
    rows = [{"phase": name, "kind": "notebook", "seconds": seconds}
            for name, seconds in (record.get("notebook_seconds") or {}).items()]
    rows += [{"phase": name, "kind": "train", "seconds": run.get("wall_s")}
             for name, run in (record.get("runs") or {}).items()]
    return pd.DataFrame(rows, columns=["phase", "kind", "seconds"])


def write_record(report_dir: str | Path, config: str | Any, heldout: pd.DataFrame, *,
                 results_dir: str | Path = "results", checkpoints_dir: str | Path | None = None,
                 profile: str = "laptop", turns: pd.DataFrame | None = None,
                 executed_dir: str | Path = "executed", command: Sequence[str] | None = None) -> dict[str, Any]:
    """Write summary.csv, steps.csv, curves.png, heldout_turns.csv and comparisons.csv (when
    ``turns`` is given: :func:`comparison_table`) and record.json into ``report_dir``; returns the
    record."""
    from prove.train.config import load_train_config

    cfg = config if not isinstance(config, str) else load_train_config(config)
    cfg = cfg.with_results(results_dir)
    out = Path(report_dir)
    out.mkdir(parents=True, exist_ok=True)
    seed = int(cfg.verl.get("data.seed", 1))
    intervals = interval_table(cfg, turns, seed=seed) if turns is not None and len(turns) else None
    steps = step_table(cfg, results_dir, checkpoints_dir)
    summary = summary_table(cfg, heldout, results_dir, checkpoints_dir, intervals=intervals, steps=steps)
    summary.to_csv(out / "summary.csv", index=False)
    if intervals is not None:
        intervals.to_csv(out / "intervals.csv", index=False)
    steps.to_csv(out / "steps.csv", index=False)
    if len(steps):
        import matplotlib.pyplot as plt

        fig = curves_figure(steps)
        fig.savefig(out / "curves.png", dpi=130, bbox_inches="tight")
        plt.close(fig)
    if turns is not None and len(turns):
        turns.to_csv(out / "heldout_turns.csv", index=False)
        comparison_table(cfg, turns, seed=seed).to_csv(out / "comparisons.csv", index=False)
    runs = _runs(cfg, *_dirs(results_dir, checkpoints_dir))
    commands = {}
    for name, record in runs.items():
        script = Path(record["run_dir"]) / "command.sh"
        if script.is_file():
            commands[name] = script.read_text().splitlines()[-1]
    data_report = cfg.data.resolve("rl_train").parent / "data_report.json"
    times = _notebook_times(Path(executed_dir))
    record = {
        "command": " ".join(command) if command else f"./run_all.sh --profile {profile}",
        "config": cfg.name, "model": cfg.model, "steps": cfg.steps,
        "seed": cfg.verl.get("data.seed", 1),
        "grpo": {"prompts_per_step": cfg.verl.get("data.train_batch_size"),
                 "rollouts_per_prompt": cfg.verl.get("actor_rollout_ref.rollout.n"),
                 "max_response_tokens": cfg.verl.get("data.max_response_length"),
                 "lr": cfg.variant("default").lr},
        "data": json.loads(data_report.read_text()) if data_report.is_file() else None,
        "runs": {name: {k: r.get(k) for k in ("variant", "reward", "lr", "engine", "init", "global_step",
                                              "wall_s", "hf_model")} for name, r in runs.items()},
        "run_commands": commands, "notebook_seconds": times,
        "pipeline_wall_s": round(sum(times.values()), 1) if times else None,
        "over_budget_share": {name: None if pd.isna(share) else float(share) for name, share in
                              summary.set_index("run")["train_over_budget_share"].items()
                              if name in runs and name.startswith("grpo_")},
        **environment(),
    }
    (out / "record.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
    return record
