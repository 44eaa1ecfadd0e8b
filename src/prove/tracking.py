"""Run tracking: one wandb naming scheme for every training run, evaluation summaries, local run lists.

    from prove.tracking import run_identity, wandb_env, write_identity, log_eval_summary, list_runs
    ident = run_identity(cfg, cfg.variant("default"))      # project, group, name, id, tags, config
    env = wandb_env(ident)                                 # WANDB_PROJECT, _RUN_GROUP, _TAGS, _NAME, _RUN_ID
    log_eval_summary("results/train/smollm2-135m-default", {"heldout": summary})
    prove runs                                             # the local runs, no wandb account needed

Naming: the project is the config's ``project`` (``prove``); the group is the experiment
(``paper``, ``laptop`` or ``smoke``: the ``experiment`` argument, else ``$PROVE_EXPERIMENT``, else
``smoke`` for a ``device: cpu`` config and ``paper`` otherwise); the run name is model × variant
(``smollm2-135m-default``, the same ``trainer.experiment_name`` VERL passes to ``wandb.init``); the
run id is a hash of project, group, name and engine, so a rerun, a resumed run and its evaluation
all land in the same wandb run. ``run.json`` in the run folder holds the identity and its config
(everything that differs between runs). wandb 0.31 cannot take extra config from the environment
(``WANDB_CONFIG_PATHS`` fails its settings validation as a string), so the config reaches the wandb
run when :func:`log_eval_summary` (or :func:`push_identity`) resumes it, under the key ``prove``
(``prove.lr``, ``prove.variant``, ...: VERL's own config already has top-level ``trainer``, ``data``...). Offline unless
``WANDB_API_KEY`` is set (or ``WANDB_MODE`` is given); ``wandb sync results/train/*/wandb/offline-run-*``
uploads the training segment and every evaluation segment, in order, into one run.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "EXPERIMENTS", "IDENTITY_FILE", "SUMMARY_FILE", "experiment_group", "run_identity", "wandb_env",
    "write_identity", "read_identity", "summary_metrics", "log_eval_summary", "log_run_eval", "push_identity",
    "offline_segments", "read_offline_run", "read_run", "list_runs", "load_metrics", "runs_table",
    "runs_comparison_figure", "main",
]

EXPERIMENTS = ("paper", "laptop", "smoke")
"""The experiment groups the project uses (any lower-case slug is accepted)."""
IDENTITY_FILE = "run.json"
SUMMARY_FILE = "summary.json"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


def experiment_group(device: str = "cuda", experiment: str | None = None,
                     environ: Mapping[str, str] | None = None) -> str:
    """``experiment``, else ``$PROVE_EXPERIMENT``, else ``smoke`` on CPU and ``paper`` on GPU."""
    environ = os.environ if environ is None else environ
    group = experiment or environ.get("PROVE_EXPERIMENT") or ("smoke" if device == "cpu" else "paper")
    if not _SLUG.match(group):
        raise ValueError(f"experiment group {group!r} must be a lower-case slug such as "
                         f"{', '.join(EXPERIMENTS)} (set PROVE_EXPERIMENT or pass experiment=)")
    return group


def _sha256_files(paths: Iterable[Path]) -> str | None:
    digest, seen = hashlib.sha256(), False
    for path in paths:
        if path.is_file():
            seen = True
            digest.update(path.name.encode() + b"\0")
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()[:16] if seen else None


def run_identity(cfg: Any, variant: Any, engine: str = "verl", experiment: str | None = None,
                 environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The run's wandb identity: project, group, name, id, job type, tags and config.

    ``cfg`` is a ``prove.train.config.TrainConfig``, ``variant`` one of its variants. The config
    holds everything that differs between runs: model, variant, trainer, learning rate, the reward's
    weights and β, the hash of the data files the trainer reads (None before they are prepared),
    seed, steps, engine, device.
    """
    from prove.reward.config import ABLATIONS, COMPONENTS

    group = experiment_group(cfg.device, experiment, environ)
    name = cfg.experiment(variant.name)
    rc = ABLATIONS[variant.reward]
    splits = ("sft_train", "sft_val") if variant.trainer == "sft" else ("rl_train", "rl_val")
    config = {
        "config": cfg.name, "model": cfg.model, "family": cfg.family, "variant": variant.name,
        "trainer": variant.trainer, "lr": variant.lr, "lr_key": variant.lr_key,
        "reward": variant.reward,
        "reward_weights": dict(zip(COMPONENTS, rc.weights, strict=True)), "beta": rc.beta,
        "data_sha256": _sha256_files(cfg.data.resolve(s) for s in splits),
        "seed": cfg.verl.get("data.seed"), "steps": cfg.steps, "engine": engine,
        "device": cfg.device, "gpus": cfg.gpus, "nnodes": cfg.nnodes, "experiment": group,
    }
    run_id = hashlib.sha256(f"{cfg.project}/{group}/{name}/{engine}".encode()).hexdigest()[:16]
    tags = [group, engine, variant.trainer, cfg.name, variant.name, cfg.device]
    return {"project": cfg.project, "group": group, "name": name, "id": run_id,
            "job_type": variant.trainer, "tags": list(dict.fromkeys(tags)), "config": config}


def wandb_env(identity: Mapping[str, Any]) -> dict[str, str]:
    """The environment wandb reads at ``wandb.init`` (VERL's logger passes project and name itself,
    the same values). ``WANDB_RESUME=allow``: a rerun continues the run with this id."""
    return {"WANDB_PROJECT": identity["project"], "WANDB_RUN_GROUP": identity["group"],
            "WANDB_NAME": identity["name"], "WANDB_RUN_ID": identity["id"],
            "WANDB_JOB_TYPE": identity["job_type"], "WANDB_TAGS": ",".join(identity["tags"]),
            "WANDB_RESUME": "allow"}


def write_identity(run_dir: str | Path, identity: Mapping[str, Any]) -> Path:
    """``run.json`` in the run folder (sorted keys: the same identity writes the same bytes)."""
    path = Path(run_dir) / IDENTITY_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(identity, indent=2, sort_keys=True) + "\n")
    return path


def read_identity(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / IDENTITY_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: {Path(run_dir).name} was not launched with a run identity; rerun "
            f"`prove train <config> --variant <variant>` or write one with "
            f"prove.tracking.write_identity(run_dir, run_identity(cfg, variant))")
    return json.loads(path.read_text())


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return None if isinstance(value, float) and math.isnan(value) else value
    return None


def summary_metrics(heldout: Mapping[str, Any] | None = None, bfcl: Mapping[str, Any] | None = None,
                    tau2: Iterable[Mapping[str, Any]] = (),
                    teval: Mapping[str, Any] | None = None) -> dict[str, float | int]:
    """Flat wandb summary keys from the evaluators' results: ``heldout/<key>`` (the held-out
    summary), ``bfcl/<category>`` and ``bfcl/overall`` (accuracy 0..1), ``tau2/<domain>/pass^k``
    and ``tau2/pass^k`` (mean over domains), ``teval/<ability>``. NaN and non-numbers are left out."""
    out: dict[str, float | int] = {}
    for key, value in (heldout or {}).items():
        if (v := _number(value)) is not None:
            out[f"heldout/{key}"] = v
    if bfcl:
        for row in bfcl.get("categories", []):
            if (v := _number(row.get("accuracy"))) is not None:
                out[f"bfcl/{row['category']}"] = v
        for key in ("overall", "overall_reachable"):
            if (v := _number(bfcl.get(key))) is not None:
                out[f"bfcl/{key}"] = v
    per_k: dict[str, list[float]] = {}
    for row in tau2:
        for key, value in row.items():
            if key.startswith("pass^") and (v := _number(value)) is not None:
                out[f"tau2/{row.get('domain', 'all')}/{key}"] = v
                per_k.setdefault(key, []).append(v)
    for key, values in per_k.items():
        out[f"tau2/{key}"] = sum(values) / len(values)
    for ability, value in ((teval or {}).get("abilities") or {}).items():
        if (v := _number(value)) is not None:
            out[f"teval/{ability}"] = v
    return out


def _mode(environ: Mapping[str, str]) -> str:
    return environ.get("WANDB_MODE") or ("online" if environ.get("WANDB_API_KEY") else "offline")


def _resume(run_dir: Path, identity: Mapping[str, Any], summary: Mapping[str, Any]) -> None:
    import wandb

    run = wandb.init(dir=str(run_dir), id=identity["id"], project=identity["project"],
                     group=identity["group"], name=identity["name"], job_type=identity["job_type"],
                     tags=list(identity["tags"]), config={"prove": dict(identity["config"])}, resume="allow",
                     mode=_mode(os.environ), settings=wandb.Settings(silent=True, console="off"))
    try:
        for key, value in summary.items():
            run.summary[key] = value
    finally:
        run.finish()


def log_eval_summary(run_dir: str | Path, summary: Mapping[str, Any]) -> dict[str, Any]:
    """Write evaluation results into the run's wandb run (same id, resumed) as summary metrics.

    ``summary`` is flat (``{"heldout/heldout_reward": 0.4}``) or by evaluator
    (``{"heldout": ..., "bfcl": ..., "tau2": [...], "teval": ...}``, see :func:`summary_metrics`).
    The keys are also merged into the run folder's ``summary.json`` so ``prove runs`` reads them
    without wandb. Returns the flat summary written.
    """
    run_dir = Path(run_dir)
    identity = read_identity(run_dir)
    by_kind = {k: summary[k] for k in ("heldout", "bfcl", "tau2", "teval") if k in summary}
    flat = {k: v for k, v in summary.items() if k not in by_kind}
    flat.update(summary_metrics(**by_kind))
    path = run_dir / SUMMARY_FILE
    merged = {**(json.loads(path.read_text()) if path.is_file() else {}), **flat}
    path.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n")
    _resume(run_dir, identity, flat)
    return flat


def push_identity(run_dir: str | Path) -> None:
    """Put ``run.json``'s config, group and tags into the run's wandb run (resumed, no summary)."""
    _resume(Path(run_dir), read_identity(run_dir), {})


def log_run_eval(run_dir: str | Path, cfg: Any, variant: Any, heldout: Mapping[str, Any] | None = None,
                 benchmark: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One trained model's held-out summary and benchmark results (``evaluate_model``'s result:
    ``bfcl``, ``tau2``, ``teval``) into its training run at ``run_dir`` (``prove.eval.chain`` finds
    it). A run without ``run.json`` gets the identity its training would have had (``cfg``,
    ``variant``), so the summary still lands in the run with the deterministic id."""
    run_dir = Path(run_dir)
    if not (run_dir / IDENTITY_FILE).is_file():
        write_identity(run_dir, run_identity(cfg, variant))
    result = dict(benchmark or {})
    return log_eval_summary(run_dir, {"heldout": heldout or {}, "bfcl": result.get("bfcl"),
                                      "tau2": result.get("tau2") or [], "teval": result.get("teval")})


def offline_segments(run_dir: str | Path) -> list[Path]:
    """The run's wandb offline folders (training, then each resume), oldest first."""
    wandb_dir = Path(run_dir) / "wandb"
    found = [p for p in wandb_dir.glob("offline-run-*") if any(p.glob("run-*.wandb"))]
    return sorted(found, key=lambda p: p.name)


def read_offline_run(segment: str | Path, timeout: float = 120.0) -> dict[str, Any]:
    """One offline run folder as wandb itself reads it: ``wandb leet inspect --summary --json``
    (wandb-core's reader of the ``.wandb`` transaction log): config, summary, name, tags, state."""
    exe = Path(sys.executable).with_name("wandb")
    cmd = [str(exe) if exe.is_file() else "wandb", "leet", "inspect", "--summary", "--json", str(segment)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout)


def read_run(run_dir: str | Path) -> dict[str, Any]:
    """Every offline segment of the run read by wandb, merged in order as ``wandb sync`` uploads
    them: later config and summary keys win; ``segments`` counts them."""
    segments = offline_segments(run_dir)
    if not segments:
        raise FileNotFoundError(f"no wandb offline run under {Path(run_dir) / 'wandb'}; the run was "
                                "not logged offline (WANDB_MODE) or has not started")
    merged: dict[str, Any] = {"config": {}, "summary": {}, "tags": [], "segments": len(segments)}
    for segment in segments:
        record = read_offline_run(segment)
        merged["config"].update(record.get("config") or {})
        merged["summary"].update(record.get("summary") or {})
        for key in ("run_id", "project", "name"):
            if record.get(key):
                merged[key] = record[key]
        merged["tags"] = list(dict.fromkeys([*merged["tags"], *(record.get("tags") or [])]))
    return merged


def load_metrics(path: str | Path) -> Any:
    """A run's ``metrics.jsonl`` (VERL's file logger: ``{"step", "data": {...}}`` per line) as a
    pandas DataFrame, one row per step (the last value logged for it)."""
    import pandas as pd

    rows = []
    with Path(path).open() as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                rows.append({"step": record["step"], **record["data"]})
    return pd.DataFrame(rows).groupby("step").last().reset_index() if rows else pd.DataFrame()


def _last_metrics(path: Path) -> dict[str, Any]:
    last: dict[str, Any] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                last.update(record.get("data", {}))
                last["step"] = record.get("step")
    return last


def list_runs(results_dir: str | Path = "results") -> list[dict[str, Any]]:
    """Every local run under ``<results>/train/*/`` (a folder with metrics, model.json or run.json):
    its identity (``run.json``; for a run launched before identities, group and config from its
    ``model.json``), its final training metrics and its evaluation summary (``summary.json``)."""
    runs = []
    for run_dir in sorted(Path(results_dir).glob("train/*/")):
        files = [run_dir / n for n in (IDENTITY_FILE, "model.json", "metrics.jsonl")]
        if not any(f.is_file() for f in files):
            continue
        identity = json.loads(files[0].read_text()) if files[0].is_file() else {}
        model = json.loads(files[1].read_text()) if files[1].is_file() else {}
        summary = run_dir / SUMMARY_FILE
        runs.append({
            "run": run_dir.name, "dir": str(run_dir), "group": identity.get("group"),
            "id": identity.get("id"), "config": {**model, **identity.get("config", {})},
            "final": _last_metrics(files[2]),
            "summary": json.loads(summary.read_text()) if summary.is_file() else {},
        })
    return runs


RUN_COLUMNS = ("variant", "trainer", "lr", "reward", "beta", "engine", "seed", "global_step")
FINAL_COLUMNS = ("critic/score/mean", "train/loss", "val/loss", "prove/state_success",
                 "prove/high_reward_state_fail", "prove/calls_over_gt")


def runs_table(runs: Iterable[Mapping[str, Any]]) -> Any:
    """One row per run: group, the config columns that tell runs apart, final training metrics,
    every evaluation summary key."""
    import pandas as pd

    rows = []
    for run in runs:
        row = {"run": run["run"], "group": run.get("group")}
        row.update({k: run["config"].get(k) for k in RUN_COLUMNS})
        row.update({f"final/{k}": run["final"].get(k) for k in FINAL_COLUMNS})
        row["final/step"] = run["final"].get("step")
        row.update(run["summary"])
        rows.append(row)
    return pd.DataFrame(rows)


COMPARE_CURVES = (("critic/score/mean", "mean reward per step"), ("train/loss", "SFT loss (nats/token)"),
                  ("prove/high_reward_state_fail", "reward >= 0.8, state wrong"))
COMPARE_SUMMARY = ("heldout/heldout_reward", "heldout/heldout_coverage", "heldout/exact_turn",
                   "heldout/state_success", "heldout/high_reward_state_fail")


def runs_comparison_figure(runs: Iterable[Mapping[str, Any]]) -> Any:
    """The local runs side by side: each training curve (GRPO reward, SFT loss, the share of
    rollouts rewarded high with the state wrong) against step, and the held-out evaluation of each
    run (share of turns / mean reward, 0..1) where it ran."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    runs = list(runs)
    if not runs:
        raise ValueError("no runs to compare; train one with `prove train smollm2-135m --variant sft`")
    fig, axes = plt.subplots(1, len(COMPARE_CURVES) + 1, figsize=(10.5, 2.4))
    for ax, (metric, label) in zip(axes, COMPARE_CURVES, strict=False):
        for run in runs:
            path = Path(run["dir"]) / "metrics.jsonl"
            frame = load_metrics(path) if path.is_file() else None
            if frame is not None and metric in frame:
                rows = frame.dropna(subset=[metric])
                ax.plot(rows["step"], rows[metric], marker="o", ms=3, label=run["run"])
        ax.set(xlabel="training step", ylabel=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    bars = axes[-1]
    evaluated = [r for r in runs if any(k in r["summary"] for k in COMPARE_SUMMARY)]
    width = 0.8 / max(len(evaluated), 1)
    for i, run in enumerate(evaluated):
        values = [run["summary"].get(k, float("nan")) for k in COMPARE_SUMMARY]
        bars.bar([j + (i - (len(evaluated) - 1) / 2) * width for j in range(len(COMPARE_SUMMARY))],
                 values, width, label=run["run"])
    bars.set_xticks(range(len(COMPARE_SUMMARY)), [k.split("/")[-1].replace("heldout_", "")
                                                  for k in COMPARE_SUMMARY])
    bars.set(ylabel="held-out share / mean reward (0-1)", ylim=(0, 1.05))
    if evaluated:
        bars.legend()
    else:
        bars.text(0.5, 0.5, "not evaluated yet:\nrun notebook 06", ha="center", va="center",
                  transform=bars.transAxes)
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    """``prove runs``: the local runs with their config and summary."""
    import argparse

    parser = argparse.ArgumentParser(prog="prove runs", description=main.__doc__)
    parser.add_argument("--results", default="results", help="results folder (default: results)")
    parser.add_argument("--json", action="store_true", help="every run's full record as JSON")
    parser.add_argument("--group", default=None, help="only runs of this experiment group")
    args = parser.parse_args(argv)
    runs = [r for r in list_runs(args.results) if args.group in (None, r["group"])]
    if args.json:
        print(json.dumps(runs, indent=1, sort_keys=True, default=str))
        return 0
    if not runs:
        print(f"no runs under {Path(args.results) / 'train'}; train one with "
              "`prove train smollm2-135m --variant sft`", file=sys.stderr)
        return 1
    import pandas as pd

    table = runs_table(runs).dropna(axis=1, how="all")
    with pd.option_context("display.max_columns", None, "display.width", 200):
        print(table.to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
