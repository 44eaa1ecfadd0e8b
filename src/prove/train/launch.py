"""Build and run the paper's VERL commands: GRPO (``verl.trainer.main_ppo``) and the SFT baseline.

    prove train configs/train/qwen3-4b.yaml --variant lr_high --dry-run     # print the command
    prove train configs/train/qwen3-4b.yaml                                  # serve, check, train

A run writes under ``results/train/<model>-<variant>/``: ``tools.yaml`` (the generated tool config,
pointing at the environment URLs), ``command.sh`` (the exact command and environment),
``trainer.log``, ``metrics.jsonl`` (VERL's file logger: every step's metrics) and wandb's files
(offline unless ``WANDB_API_KEY`` is set). GRPO runs start ``prove serve --workers N`` on loopback,
check that every worker answers and serves exactly the tools of ``tools.yaml``, then run VERL and
stop the servers when it exits.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.train.config import CONFIG_DIR, REPO_ROOT, TrainConfig, Variant
from prove.train.tool_config import read_tool_names, write_tool_config

__all__ = [
    "RunPaths", "hydra_value", "grpo_overrides", "sft_overrides", "run_env", "build_command",
    "check_servers", "launch",
]

AGENT_LOOPS = CONFIG_DIR / "agent_loops.yaml"
REWARD_MODULE = "pkg://prove.reward.verl"
DATASET_MODULE = "pkg://prove.train.dataset"
SFT_DATASET_MODULE = "pkg://prove.train.sft_dataset"
_SAFE = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+@~:")


@dataclass(frozen=True)
class RunPaths:
    """Where one run's files go."""

    run_dir: Path
    checkpoints: Path

    @classmethod
    def for_run(cls, cfg: TrainConfig, variant: Variant, results_dir: str | Path = "results",
                checkpoints_dir: str | Path = "checkpoints") -> RunPaths:
        results = Path(results_dir)
        results = results if results.is_absolute() else REPO_ROOT / results
        ckpt = Path(checkpoints_dir)
        ckpt = ckpt if ckpt.is_absolute() else REPO_ROOT / ckpt
        name = cfg.experiment(variant.name)
        return cls(results / "train" / name, ckpt / cfg.project / name)

    @property
    def tool_config(self) -> Path:
        return self.run_dir / "tools.yaml"

    @property
    def metrics(self) -> Path:
        return self.run_dir / "metrics.jsonl"

    @property
    def log(self) -> Path:
        return self.run_dir / "trainer.log"

    @property
    def command(self) -> Path:
        return self.run_dir / "command.sh"


def hydra_value(value: Any) -> str:
    """A Python value as Hydra's override grammar reads it back."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if text and set(text) <= _SAFE and text.lower() not in ("true", "false", "null"):
        try:
            float(text)
        except ValueError:
            return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _overrides(values: Mapping[str, Any]) -> list[str]:
    return [f"{key}={hydra_value(value)}" for key, value in values.items()]


def run_env(paths: RunPaths, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """Environment variables a run sets: file logger path, wandb dir, and offline wandb unless a
    key (or an explicit WANDB_MODE) is present."""
    base = os.environ if base is None else base
    env = {"VERL_FILE_LOGGER_PATH": str(paths.metrics), "WANDB_DIR": str(paths.run_dir)}
    if "WANDB_MODE" not in base and not base.get("WANDB_API_KEY"):
        env["WANDB_MODE"] = "offline"
    return env


def grpo_overrides(cfg: TrainConfig, variant: Variant, paths: RunPaths,
                   env: Mapping[str, str] | None = None) -> list[str]:
    """Every ``key=value`` VERL's ``main_ppo`` gets for this run (shared, model, run-specific)."""
    if variant.trainer != "grpo":
        raise ValueError(f"variant {variant.name!r} trains with {variant.trainer}, not GRPO")
    values: dict[str, Any] = dict(cfg.verl)
    values.update({
        "actor_rollout_ref.model.path": cfg.model,
        "actor_rollout_ref.actor.optim.lr": variant.lr,
        "data.train_files": str(cfg.data.resolve("rl_train")),
        "data.val_files": str(cfg.data.resolve("rl_val")),
        "data.custom_cls.path": DATASET_MODULE,
        "data.custom_cls.name": "ProveRLDataset",
        "actor_rollout_ref.rollout.multi_turn.tool_config_path": str(paths.tool_config),
        "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(AGENT_LOOPS),
        "reward.custom_reward_function.path": REWARD_MODULE,
        "reward.custom_reward_function.name": "compute_score",
        "+reward.custom_reward_function.reward_kwargs.config": variant.reward,
        "trainer.project_name": cfg.project,
        "trainer.experiment_name": cfg.experiment(variant.name),
        "trainer.total_training_steps": cfg.steps,
        "trainer.n_gpus_per_node": cfg.gpus,
        "trainer.nnodes": cfg.nnodes,
        "trainer.default_local_dir": str(paths.checkpoints),
        "trainer.rollout_data_dir": str(paths.run_dir / "rollouts"),
        "trainer.validation_data_dir": str(paths.run_dir / "validation"),
    })
    for key, value in (env or {}).items():  # Ray workers get the run's environment too
        values[f"+ray_kwargs.ray_init.runtime_env.env_vars.{key}"] = value
    return _overrides(values)


def sft_overrides(cfg: TrainConfig, variant: Variant, paths: RunPaths) -> list[str]:
    """Every ``key=value`` VERL's ``sft_trainer`` gets for the SFT baseline."""
    values: dict[str, Any] = dict(cfg.sft)
    values.update({
        "model.path": cfg.model,
        "optim.lr": variant.lr,
        "data.train_files": str(cfg.data.resolve("sft_train")),
        "data.val_files": str(cfg.data.resolve("sft_val")),
        "data.custom_cls.path": SFT_DATASET_MODULE,
        "data.custom_cls.name": "ProveSFTDataset",
        "trainer.project_name": cfg.project,
        "trainer.experiment_name": cfg.experiment(variant.name),
        "trainer.n_gpus_per_node": cfg.gpus,
        "trainer.nnodes": cfg.nnodes,
        "trainer.default_local_dir": str(paths.checkpoints),
    })
    return _overrides(values)


def build_command(cfg: TrainConfig, variant: Variant, paths: RunPaths,
                  env: Mapping[str, str] | None = None) -> list[str]:
    """The exact argv of the run: ``python -m verl.trainer.main_ppo ...`` or torchrun SFT."""
    if variant.trainer == "sft":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nnodes={cfg.nnodes}", f"--nproc_per_node={cfg.gpus}",
                "-m", "verl.trainer.sft_trainer", *sft_overrides(cfg, variant, paths)]
    return [sys.executable, "-m", "verl.trainer.main_ppo", *grpo_overrides(cfg, variant, paths, env)]


def check_servers(urls: Sequence[str], expected_tools: Sequence[str], timeout: float = 10.0) -> dict[str, Any]:
    """Every worker answers /control/health and routes exactly ``expected_tools``; else raise."""
    import json
    import urllib.request

    health = {}
    for url in urls:
        with urllib.request.urlopen(f"{url}/control/health", timeout=timeout) as resp:
            health[url] = json.loads(resp.read())
        with urllib.request.urlopen(f"{url}/control/tools", timeout=timeout) as resp:
            served = set(json.loads(resp.read()))
        missing, extra = set(expected_tools) - served, served - set(expected_tools)
        if missing or extra:
            raise RuntimeError(f"{url} serves a different tool set than the tool config: "
                               f"missing {sorted(missing)[:5]}, extra {sorted(extra)[:5]}")
    return health


def _write_command(paths: RunPaths, cmd: Sequence[str], env: Mapping[str, str]) -> None:
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    paths.command.write_text("#!/usr/bin/env bash\n# Written by `prove train`.\n"
                             f"cd {shlex.quote(str(REPO_ROOT))}\n{exports}{shlex.join(cmd)}\n")


def launch(cfg: TrainConfig, variant_name: str = "default", *, dry_run: bool = False,
           results_dir: str | Path = "results", checkpoints_dir: str | Path = "checkpoints",
           out: Any = None) -> int:
    """Write the run's tool config and command; print it (dry run) or serve, check and train."""
    out = out or sys.stdout
    variant = cfg.variant(variant_name)
    paths = RunPaths.for_run(cfg, variant, results_dir, checkpoints_dir)
    env = run_env(paths)
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    if variant.trainer == "grpo":
        write_tool_config(paths.tool_config, cfg.env.urls, timeout=cfg.env.timeout,
                          servers=cfg.env.servers)
    cmd = build_command(cfg, variant, paths, env)
    _write_command(paths, cmd, env)
    print(f"# {cfg.experiment(variant.name)}: {variant.description} (lr {variant.lr:g}, "
          f"reward {variant.reward})", file=out)
    print("".join(f"{k}={shlex.quote(v)} " for k, v in env.items()) + shlex.join(cmd), file=out)
    if dry_run:
        return 0
    data = ("sft_train", "sft_val") if variant.trainer == "sft" else ("rl_train", "rl_val")
    missing = [str(cfg.data.resolve(d)) for d in data if not cfg.data.resolve(d).is_file()]
    if missing:
        raise FileNotFoundError(f"training data missing (run the synthesis export first): {missing}")
    if variant.trainer == "sft":
        return _run(cmd, env, paths)
    from prove.env.launch import EnvServer

    extra = ["--servers", ",".join(cfg.env.servers)] if cfg.env.servers else []
    with EnvServer(port=cfg.env.port, host=cfg.env.host, workers=cfg.env.workers,
                   extra_args=extra) as server:
        check_servers(server.urls, read_tool_names(paths.tool_config))
        print(f"# environment up: {', '.join(server.urls)}", file=out)
        return _run(cmd, env, paths)


def _run(cmd: Sequence[str], env: Mapping[str, str], paths: RunPaths) -> int:
    """Run the trainer from the repository root, teeing its output into trainer.log."""
    with paths.log.open("ab") as log:
        proc = subprocess.Popen(list(cmd), cwd=REPO_ROOT, env={**os.environ, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.buffer.write(line)
            sys.stdout.flush()
            log.write(line)
        return proc.wait()
