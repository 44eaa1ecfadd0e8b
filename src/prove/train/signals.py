"""Per-step reward-hacking signals of a VERL GRPO run, from the rollouts it dumped, into its metrics.

    from prove.train.signals import step_signals, add_step_signals
    step_signals("results/train/qwen3-8b-default/rollouts")        # step x prove.reward.signals.SIGNAL_KEYS
    add_step_signals("results/train/qwen3-8b-default")              # -> metrics.jsonl, as prove/<signal>

VERL logs the reward's mean per step but none of its other keys in training (only in validation),
and has no hook for a metric of one's own. Every GRPO run PROVE launches dumps each step's rollouts
(``trainer.rollout_data_dir``: ``<run>/rollouts/<step>.jsonl``, one line per rollout with the
reward's keys: score, outcome, the counts), so the signals are computed from those files after the
run and appended to ``metrics.jsonl`` in VERL's file-logger shape (``{"step", "data"}``), where
``prove runs``, 05's and 07's figures read them; the TRL engine logs the same keys live
(``prove.train.trl_engine.signals_column``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from prove.reward.signals import SIGNAL_KEYS, hacking_signals

__all__ = ["PREFIX", "step_signals", "add_step_signals"]

PREFIX = "prove/"
"""Metric names: ``prove/<signal>`` (both engines)."""


def step_signals(rollouts: str | Path) -> pd.DataFrame:
    """One row per dumped step (``<step>.jsonl``, in step order): ``step`` and every signal."""
    rows = []
    for path in sorted(Path(rollouts).glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1):
        if not path.stem.isdigit():
            continue
        with path.open() as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        if records:
            rows.append({"step": int(path.stem), **hacking_signals(records)})
    return pd.DataFrame(rows, columns=["step", *SIGNAL_KEYS])


def add_step_signals(run_dir: str | Path) -> int:
    """Append each dumped step's signals to ``<run_dir>/metrics.jsonl`` (steps that already carry
    them are skipped, so a rerun adds nothing twice); returns the number of steps added."""
    run_dir = Path(run_dir)
    metrics = run_dir / "metrics.jsonl"
    done: set[Any] = set()
    if metrics.is_file():
        for line in metrics.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                if any(k.startswith(PREFIX) for k in entry.get("data", {})):
                    done.add(entry.get("step"))
    table = step_signals(run_dir / "rollouts")
    lines = []
    for row in table.to_dict("records"):
        step = int(row.pop("step"))
        if step in done:
            continue
        data = {PREFIX + k: float(v) for k, v in row.items() if v == v}  # NaN (nothing measured) left out
        lines.append(json.dumps({"step": step, "data": data}) + "\n")
    if lines:
        with metrics.open("a") as fh:
            fh.writelines(lines)
    return len(lines)
