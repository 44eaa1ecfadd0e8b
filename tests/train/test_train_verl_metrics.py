"""PROVE's reward-hacking signals in VERL's training metrics: computed from each rollout's reward keys
as VERL's TransferQueue holds them (``extra_fields["reward_extra_info"]``), and patched into the
v1 trainer's metrics step only when VERL imports it. Real GRPO steps logging them (the rehearsal's) are
checked in test_train_chain.

    .venv/bin/python -m pytest tests/train/test_train_verl_metrics.py -q
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from prove.reward import score_turn
from prove.reward.signals import hacking_signals
from prove.train.verl_metrics import step_metrics

TOOLS = [{"type": "function", "function": {"name": "get_balance", "parameters": {
    "type": "object", "properties": {"account_id": {"type": "string"}}, "required": ["account_id"]}}}]
CALL = {"name": "get_balance", "arguments": {"account_id": "ACC-1"}}
GT = {"calls": [CALL], "depends_on": []}


class Wrapped:
    """What TransferQueue hands back for a non-tensor field: the dict under ``.data``."""

    def __init__(self, data: dict) -> None:
        self.data = data


def test_step_metrics_are_the_signals_of_the_rollouts_reward_keys() -> None:
    good = score_turn([{**CALL, "ok": True}], GT, TOOLS, None, True)
    hacked = score_turn([{**CALL, "ok": True}], GT, TOOLS, None, False)
    silent = score_turn([], GT, TOOLS, None, True)
    fields = [{"reward_extra_info": good, "tool_calls": []}, Wrapped({"reward_extra_info": hacked}),
              {"reward_extra_info": silent}, {"turn_scores": []}]  # the last was never scored
    out = step_metrics(fields)
    assert out == pytest.approx({f"prove/{k}": v for k, v in hacking_signals([good, hacked, silent]).items()})
    assert out["prove/high_reward_state_fail"] == pytest.approx(1 / 3)
    assert step_metrics([{"turn_scores": []}]) == {}


def test_the_trainer_is_patched_when_verl_imports_it_and_not_before() -> None:
    from train_helpers import need_verl

    need_verl()
    code = (
        "import sys, prove.train.verl_metrics as m\n"
        "assert m.TRAINER_MODULE not in sys.modules\n"
        "from verl.trainer.ppo.v1 import trainer_base\n"
        "assert trainer_base.PPOTrainer._compute_metrics._prove\n"
        "m.install(); print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_a_tracker_left_alive_until_shutdown_does_not_finish_its_loggers_again() -> None:
    """A crashed VERL trainer keeps its ``Tracking`` alive in the traceback until the interpreter
    shuts down; its ``__del__`` then called ``wandb.finish`` on a connection W&B's exit hook had
    closed, and the SFT trainer never exited (CI, stop 44). Through VERL's external-module hook the
    late ``__del__`` does nothing; a tracker dropped while the program runs still finishes."""
    from train_helpers import need_verl

    need_verl()
    code = (
        "from verl.utils.tracking import Tracking\n"
        "class Probe(Tracking):\n"
        "    def __init__(self, name): self.name = name\n"
        "    def finish(self, exit_code=0): print(f'finished {self.name}', flush=True)\n"
        "dropped = Probe('while running'); del dropped\n"
        "held = Probe('at shutdown')\n"
    )
    env = {**os.environ, "VERL_USE_EXTERNAL_MODULES": "prove.train.verl_metrics"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == ["finished while running"]
    env.pop("VERL_USE_EXTERNAL_MODULES")  # VERL's own: the late finish runs
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert out.stdout.splitlines() == ["finished while running", "finished at shutdown"], out.stderr[-2000:]
