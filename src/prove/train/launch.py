"""Build and run the paper's VERL commands: GRPO (``verl.trainer.main_ppo``) and the SFT baseline.

    prove train configs/train/qwen3-4b.yaml --variant lr_high --dry-run     # print the command
    prove train configs/train/qwen3-4b.yaml                                  # serve, check, train

A run writes under ``results/train/<model>-<variant>/``: ``tools.yaml`` (the generated tool config,
pointing at the environment URLs), ``command.sh`` (the exact command and environment),
``trainer.log``, ``metrics.jsonl`` (VERL's file logger: every step's metrics) and wandb's files
(offline unless ``WANDB_API_KEY`` is set). GRPO runs start ``prove serve --workers N`` on loopback,
check that every worker answers and serves exactly the tools of ``tools.yaml``, then run VERL and
stop the servers when it exits.

Every run renders its chat templates in the config's thinking mode (``data.apply_chat_template_
kwargs``, :func:`template_kwargs`), bounds the rollout engine's context to prompt + response
(:func:`max_model_len`), and, once it finished and ``model.json`` names its HF model folder,
deletes every saved step's optimizer and model shards (:func:`prune_checkpoints`; ``--keep-shards``
keeps them).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from prove.proc import spawn, stop_group
from prove.profiles import Engine
from prove.tracking import push_identity, run_identity, wandb_env, write_identity
from prove.train.config import CONFIG_DIR, LR_KEYS, REPO_ROOT, TrainConfig, Variant
from prove.train.tool_config import read_tool_names, write_tool_config

METRICS_MODULE = "prove.train.verl_metrics"
"""Imported by VERL in every run's processes: PROVE's reward-hacking signals in its training metrics."""
CPU_ENV: dict[str, str] = {
    "VERL_PLATFORM": "cpu",
    "VERL_USE_EXTERNAL_MODULES": "prove.train.cpu",
    # VERL's FSDP engine registers for cuda/npu only; the engine itself runs on any torch device.
    "VERL_ENGINE_DEVICE": "cuda",
    "HF_HUB_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
}
"""Environment of a CPU run (``device: cpu``): the driver and every Ray worker get it; VERL then
imports ``prove.train.cpu``, the CPU stand-in, in each of its processes."""

__all__ = [
    "RunPaths", "hydra_value", "grpo_overrides", "sft_overrides", "run_env", "build_command",
    "check_servers", "launch", "hf_checkpoint", "init_model", "check_device", "merge_metrics",
    "SAVE_CONTENTS", "ENGINES", "check_engine", "template_kwargs", "max_model_len", "prune_checkpoints", "SHARD_PATTERNS",
]

SAVE_CONTENTS = ["model", "optimizer", "extra", "hf_model"]
"""Every saved step also holds an HF model folder (``.../huggingface``): what evaluation serves."""

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

    @property
    def model(self) -> Path:
        """``model.json``: the run's final HF model folder (written when the run succeeds)."""
        return self.run_dir / "model.json"


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


def run_env(paths: RunPaths, base: Mapping[str, str] | None = None,
            device: str = "cuda", identity: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Environment variables a run sets: file logger path, wandb dir, offline wandb unless a
    key (or an explicit WANDB_MODE) is present, ``VERL_USE_EXTERNAL_MODULES`` with PROVE's
    training metrics (``prove.train.verl_metrics``), on ``device="cpu"`` the CPU stand-in's
    (``prove.train.cpu.CPU_ENV``, its module first), and with ``identity``
    (``prove.tracking.run_identity``) the run's wandb project, group, name, id and tags (``prove.tracking.wandb_env``)."""
    base = os.environ if base is None else base
    env = {"VERL_FILE_LOGGER_PATH": str(paths.metrics), "WANDB_DIR": str(paths.run_dir)}
    if identity is not None:
        env.update(wandb_env(identity))
    if "WANDB_MODE" not in base and not base.get("WANDB_API_KEY"):
        env["WANDB_MODE"] = "offline"
    if device == "cpu":
        env.update(CPU_ENV)
        # torchrun and Ray would set 1 thread per process: on CPU the trainer is the device.
        env.setdefault("OMP_NUM_THREADS", str(base.get("OMP_NUM_THREADS") or os.cpu_count() or 1))
    modules = [env["VERL_USE_EXTERNAL_MODULES"]] if "VERL_USE_EXTERNAL_MODULES" in env else []
    env["VERL_USE_EXTERNAL_MODULES"] = ",".join([*modules, METRICS_MODULE])
    return env


def hf_checkpoint(checkpoints: Path) -> Path:
    """The newest saved step's HF model folder under a run's checkpoint directory.

    GRPO saves ``global_step_N/actor/huggingface``, SFT ``global_step_N/huggingface``; either must
    hold weights (``*.safetensors`` or ``*.bin``), else the folder is no model and this raises.
    """
    steps = sorted(checkpoints.glob("global_step_*"), key=lambda p: int(p.name.rsplit("_", 1)[-1])
                   if p.name.rsplit("_", 1)[-1].isdigit() else -1)
    if not steps:
        raise FileNotFoundError(f"no saved step under {checkpoints} (global_step_N/): the run saved "
                                "nothing; check trainer.save_freq and the run's trainer.log")
    step = steps[-1]
    for folder in (step / "actor" / "huggingface", step / "huggingface"):
        if folder.is_dir():
            if any(folder.glob("*.safetensors")) or any(folder.glob("*.bin")):
                return folder
            raise FileNotFoundError(
                f"{folder} holds no weights (config and tokenizer only): the run did not save "
                f"hf_model; rerun with checkpoint save_contents {SAVE_CONTENTS}, or merge it with "
                f"python -m verl.model_merger merge --backend fsdp --local_dir {folder.parent} "
                f"--target_dir {folder}")
    raise FileNotFoundError(f"{step} has no huggingface/ folder (not a VERL checkpoint of a model)")


SHARD_PATTERNS: tuple[str, ...] = ("model_world_size_*", "optim_world_size_*", "extra_state_world_size_*")
"""VERL's FSDP checkpoint shards (``FSDPCheckpointManager``): sharded model, optimizer and RNG/lr
state per rank; ~100+ GB per saved step for an 8B model. Only a resume reads them."""


def prune_checkpoints(checkpoints: Path, model_json: Path) -> int:
    """Delete every saved step's optimizer and model shards once a run has finished; returns the
    bytes freed.

    Runs only when ``model_json`` names an HF model folder under ``checkpoints`` that holds a
    ``config.json`` and weights (the folder evaluation serves); that folder and every other
    ``huggingface/`` folder, the tokenizer and config files, ``data.pt`` and ``fsdp_config.json``
    stay. The shards are what a resume would read, so ``latest_checkpointed_iteration.txt`` goes
    too (VERL would otherwise try to resume from shards that are gone) and ``PRUNED.txt`` says what
    happened. Raises FileNotFoundError (and deletes nothing) when the kept folder is not a model."""
    import json

    record = json.loads(model_json.read_text())
    kept = Path(record["hf_model"]).resolve()
    root = checkpoints.resolve()
    if root not in kept.parents:
        raise FileNotFoundError(f"{model_json} names {kept}, which is not under {root}: nothing pruned")
    weights = [*kept.glob("*.safetensors"), *kept.glob("*.bin")]
    if not (kept / "config.json").is_file() or not weights:
        raise FileNotFoundError(f"{kept} (named by {model_json}) has no config.json or no weights: "
                                "nothing pruned, the shards are the only copy of the model")
    freed = 0
    for step in root.glob("global_step_*"):
        for pattern in SHARD_PATTERNS:
            for shard in step.rglob(pattern):
                if shard.is_file() and kept not in shard.parents:
                    freed += shard.stat().st_size
                    shard.unlink()
    (root / "latest_checkpointed_iteration.txt").unlink(missing_ok=True)
    (root / "PRUNED.txt").write_text(
        f"Optimizer and model shards ({', '.join(SHARD_PATTERNS)}) of every step were deleted after "
        f"the run finished ({freed} bytes); the model is {kept}. Rerun with --keep-shards to keep "
        "them (a finished run cannot be resumed from here).\n")
    return freed


def init_model(cfg: TrainConfig, variant: Variant, results_dir: str | Path = "results",
               checkpoints_dir: str | Path = "checkpoints", init: str | None = None) -> str:
    """What a run starts from: the model, or (GRPO with ``grpo_init: sft``) the SFT run's model.
    ``init`` overrides the config: ``base``, ``sft`` or an HF model folder."""
    init = init or ("base" if variant.trainer == "sft" else cfg.grpo_init)
    if init not in ("base", "sft"):
        folder = Path(init)
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"--init {init}: not an HF model folder (no config.json); "
                                    "give base, sft or a folder such as .../global_step_N/actor/huggingface")
        return str(folder)
    if init == "base":
        return cfg.model_path()
    sft = RunPaths.for_run(cfg, cfg.variant("sft"), results_dir, checkpoints_dir)
    try:
        return str(hf_checkpoint(sft.checkpoints))
    except FileNotFoundError as exc:
        raise FileNotFoundError(
            f"{cfg.name} starts GRPO from its SFT checkpoint, which is missing ({exc}); run "
            f"`prove train {cfg.name} --variant sft` first") from None


def check_device(cfg: TrainConfig, has_gpu: bool | None = None) -> None:
    """A GPU config on a machine without a GPU stops here, saying what runs instead."""
    if has_gpu is None:
        try:
            import torch

            has_gpu = torch.cuda.is_available()
        except ImportError:
            has_gpu = False
    if cfg.device == "cuda" and not has_gpu:
        raise ValueError(
            f"{cfg.name} trains on GPUs ({cfg.gpus}x, vLLM rollout) but this machine has none; "
            f"run it on a GPU machine, or run the same chain on CPU with "
            f"`prove train smollm2-135m --variant sft` then `prove train smollm2-135m`")


def merge_metrics(metrics: Path) -> int:
    """Fold ``metrics.jsonl`` into earlier segments of the same run and write the whole curve back.

    VERL's file logger opens the file with "wb", so a resumed run would lose every step before
    the restart: ``launch`` moves the old file aside as ``metrics.partN.jsonl`` before it starts,
    and this joins the parts in order. A segment replaces what earlier ones logged from its first
    step on (a resumed run redoes the steps after its checkpoint); within a segment every line is
    kept (VERL logs training and validation metrics of one step on separate lines). Returns the
    number of lines written.
    """
    import json

    parts = sorted(metrics.parent.glob("metrics.part*.jsonl"),
                   key=lambda p: int(p.name[len("metrics.part"):-len(".jsonl")]))
    kept: list[tuple[Any, bytes]] = []
    for path in [*parts, metrics]:
        if not path.is_file():
            continue
        lines = [(json.loads(x).get("step"), x) for x in path.read_bytes().splitlines() if x.strip()]
        steps = [s for s, _ in lines if isinstance(s, (int, float))]
        if steps:
            first = min(steps)
            kept = [(s, x) for s, x in kept if isinstance(s, (int, float)) and s < first]
        kept += lines
    if not kept and not metrics.is_file():
        return 0
    metrics.write_bytes(b"".join(x + b"\n" for _, x in kept))
    for path in parts:
        path.unlink()
    return len(kept)


def _set_metrics_aside(metrics: Path) -> None:
    if metrics.is_file() and metrics.stat().st_size:
        n = len(list(metrics.parent.glob("metrics.part*.jsonl")))
        metrics.rename(metrics.parent / f"metrics.part{n}.jsonl")


TEMPLATE_KWARGS_KEY = "data.apply_chat_template_kwargs"
MAX_MODEL_LEN_KEY = "actor_rollout_ref.rollout.max_model_len"
TEST_FREQ_KEY = "trainer.test_freq"


def template_kwargs(cfg: TrainConfig, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """VERL's ``data.apply_chat_template_kwargs`` for this run: the config's own, with the thinking
    switch of its family set from ``cfg.thinking`` (``prove.llm.families.chat_template_kwargs``).
    VERL 0.9.1 reads this one key for every template it renders: the RL dataset's prompts, the
    agent loop's continuous-token builder (each turn's increments), the SFT dataset's messages."""
    own = (cfg.verl if overrides is None else overrides).get(TEMPLATE_KWARGS_KEY) or {}
    return {**dict(own), **cfg.chat_template_kwargs()}


def _template_overrides(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """One ``+data.apply_chat_template_kwargs.<name>=value`` per variable: VERL's default is an
    empty dict in struct mode, so Hydra adds keys to it but does not merge a dict into it."""
    return {f"+{TEMPLATE_KWARGS_KEY}.{name}": value for name, value in kwargs.items()}


def max_model_len(cfg: TrainConfig) -> int:
    """The rollout engine's context (``rollout.max_model_len``): the config's, else prompt +
    response length. VERL leaves it null, and vLLM then sizes the KV cache for the model's whole
    context window (Granite 4.1's is very long). A set value below prompt + response is refused."""
    verl = cfg.verl
    prompt = int(verl.get("actor_rollout_ref.rollout.prompt_length")
                 or verl.get("data.max_prompt_length") or 512)  # VERL's defaults
    response = int(verl.get("actor_rollout_ref.rollout.response_length")
                   or verl.get("data.max_response_length") or 512)
    given = verl.get(MAX_MODEL_LEN_KEY)
    if given is None:
        return prompt + response
    if int(given) < prompt + response:
        raise ValueError(f"{cfg.name}: {MAX_MODEL_LEN_KEY}={given} is below prompt_length {prompt} + "
                         f"response_length {response}; raise it or leave it unset (then {prompt + response})")
    return int(given)


def grpo_overrides(cfg: TrainConfig, variant: Variant, paths: RunPaths,
                   env: Mapping[str, str] | None = None, model: str | None = None) -> list[str]:
    """Every ``key=value`` VERL's ``main_ppo`` gets for this run (shared, model, run-specific).
    ``model`` is what the run starts from (default: the config's model id, unresolved)."""
    if variant.trainer != "grpo":
        raise ValueError(f"variant {variant.name!r} trains with {variant.trainer}, not GRPO")
    values: dict[str, Any] = {k: v for k, v in cfg.verl.items() if k != TEMPLATE_KWARGS_KEY}
    values.update(_template_overrides(template_kwargs(cfg)))
    values[MAX_MODEL_LEN_KEY] = max_model_len(cfg)
    values.update({
        "actor_rollout_ref.model.path": model or cfg.model,
        "actor_rollout_ref.actor.checkpoint.save_contents": SAVE_CONTENTS,
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
    if variant.name in LR_KEYS and int(values.get(TEST_FREQ_KEY) or -1) <= 0:
        # a sweep point is picked on its final validation reward (prove.train.matrix.pick_lr), so it
        # validates after its last step even where the config skips validation to save time
        values[TEST_FREQ_KEY] = cfg.steps
    for key, value in (env or {}).items():  # Ray workers get the run's environment too
        values[f"+ray_kwargs.ray_init.runtime_env.env_vars.{key}"] = value
    return _overrides(values)


def sft_val_rows_short(cfg: TrainConfig) -> tuple[int, int] | None:
    """``(rows, batch)`` when the prepared SFT validation file holds fewer rows than one SFT batch
    (``data.train_batch_size``), else None (enough rows, or no file yet). VERL's SFT trainer drops a
    partial validation batch (``drop_last``): it would validate on nothing and log ``val/loss`` NaN."""
    import pyarrow.parquet as pq

    val = Path(cfg.data.resolve("sft_val"))
    if not val.is_file():
        return None
    rows, batch = pq.ParquetFile(val).metadata.num_rows, int(cfg.sft.get("data.train_batch_size") or 1)
    return (rows, batch) if rows < batch else None


def sft_overrides(cfg: TrainConfig, variant: Variant, paths: RunPaths,
                  model: str | None = None) -> list[str]:
    """Every ``key=value`` VERL's ``sft_trainer`` gets for the SFT baseline; with fewer validation
    rows than one batch (``sft_val_rows_short``), ``data.val_files=null`` and ``trainer.test_freq=-1``:
    no validation rather than a NaN ``val/loss``."""
    values: dict[str, Any] = {k: v for k, v in cfg.sft.items() if k != TEMPLATE_KWARGS_KEY}
    values.update(_template_overrides(template_kwargs(cfg, cfg.sft)))
    values.update({
        "model.path": model or cfg.model,
        "checkpoint.save_contents": SAVE_CONTENTS,
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
    if sft_val_rows_short(cfg):
        values.update({"data.val_files": None, "trainer.test_freq": -1})
    return _overrides(values)


ENGINES: tuple[str, ...] = get_args(Engine)
"""``verl``: every run with VERL (the paper's path). ``trl``: GRPO with TRL's GRPOTrainer over the
same environments and reward (``prove.train.trl_engine``; one process, one device); SFT stays VERL's."""


def check_engine(engine: str) -> None:
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; valid: {', '.join(ENGINES)}")


def build_command(cfg: TrainConfig, variant: Variant, paths: RunPaths,
                  env: Mapping[str, str] | None = None, model: str | None = None,
                  engine: str = "verl") -> list[str]:
    """The exact argv of the run: ``python -m verl.trainer.main_ppo ...``, torchrun SFT, or
    (``engine="trl"``, GRPO) ``python -m prove.train.trl_engine ...``."""
    check_engine(engine)
    if engine == "trl" and variant.trainer == "grpo":
        return [sys.executable, "-m", "prove.train.trl_engine", str(cfg.path), "--variant", variant.name,
                "--model", str(model or cfg.model), "--run-dir", str(paths.run_dir),
                "--checkpoints", str(paths.checkpoints), "--steps", str(cfg.steps),
                *[a for url in cfg.env.urls for a in ("--env-url", url)],
                *(["--thinking"] if cfg.thinking else [])]
    if variant.trainer == "sft":
        return [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nnodes={cfg.nnodes}", f"--nproc_per_node={cfg.gpus}",
                "-m", "verl.trainer.sft_trainer", *sft_overrides(cfg, variant, paths, model)]
    return [sys.executable, "-m", "verl.trainer.main_ppo",
            *grpo_overrides(cfg, variant, paths, env, model)]


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
           out: Any = None, init: str | None = None, steps: int | None = None,
           engine: str = "verl", lr_key: str | None = None, thinking: bool | None = None,
           keep_shards: bool = False) -> int:
    """Write the run's tool config and command; print it (dry run) or serve, check and train.
    ``lr_key`` runs the variant at that point of the config's sweep (its ``default_lr``);
    ``thinking`` sets the policy's thinking mode (None: the config's ``thinking``). After a run
    that finished, every step's optimizer and model shards are deleted (``prune_checkpoints``)
    unless ``keep_shards``."""
    out = out or sys.stdout
    check_engine(engine)
    cfg = cfg.with_thinking(thinking)
    if lr_key is not None:
        import dataclasses

        if lr_key not in cfg.lr_sweep:
            raise ValueError(f"unknown learning-rate point {lr_key!r}; valid: {', '.join(sorted(cfg.lr_sweep))}")
        cfg = dataclasses.replace(cfg, default_lr=lr_key)
    variant = cfg.variant(variant_name)
    paths = RunPaths.for_run(cfg, variant, results_dir, checkpoints_dir)
    if steps is None and variant.trainer == "sft" and cfg.sft.get("trainer.total_training_steps"):
        steps = int(cfg.sft["trainer.total_training_steps"])  # epochs enough to reach it (and save)
    if steps is not None:
        cfg = cfg.with_steps(steps, sft=variant.trainer == "sft")
    model = cfg.model
    if not dry_run:  # everything that can stop the run does so before any trainer starts
        from prove.train.data import ensure_prepared
        from prove.train.preflight import preflight

        check_device(cfg)
        model = init_model(cfg, variant, results_dir, checkpoints_dir, init)
        if variant.trainer == "grpo" and engine == "verl":
            # attention this machine runs, a template that shows tools, turn boundaries that hold
            preflight(grpo_overrides(cfg, variant, paths, model=model), model, family=cfg.family)
        ensure_prepared(cfg, ("sft_train", "sft_val") if variant.trainer == "sft"
                        else ("rl_train", "rl_val"), out)
    identity = run_identity(cfg, variant, engine=engine if variant.trainer == "grpo" else "verl")
    env = run_env(paths, device=cfg.device, identity=identity)
    paths.run_dir.mkdir(parents=True, exist_ok=True)
    write_identity(paths.run_dir, identity)
    if variant.trainer == "grpo":
        write_tool_config(paths.tool_config, cfg.env.urls, timeout=cfg.env.timeout,
                          servers=cfg.env.servers)
    cmd = build_command(cfg, variant, paths, env, model, engine)
    short = sft_val_rows_short(cfg) if variant.trainer == "sft" else None
    if short:
        print(f"# no SFT validation: {cfg.data.resolve('sft_val')} holds {short[0]} row(s), fewer than "
              f"one batch (data.train_batch_size={short[1]}), and VERL drops a partial batch; "
              f"more examples or a larger synthesis val_fraction give it some", file=out)
    _write_command(paths, cmd, env)
    print(f"# {cfg.experiment(variant.name)}: {variant.description} (lr {variant.lr:g}, "
          f"reward {variant.reward}, from {model}, engine {engine if variant.trainer == 'grpo' else 'verl'})",
          file=out)
    print("".join(f"{k}={shlex.quote(v)} " for k, v in env.items()) + shlex.join(cmd), file=out)
    if dry_run:
        return 0
    _set_metrics_aside(paths.metrics)
    if variant.trainer == "sft":
        code = _run(cmd, env, paths, out)
    else:
        from prove.env.launch import EnvServer

        extra = ["--servers", ",".join(cfg.env.servers)] if cfg.env.servers else []
        with EnvServer(port=cfg.env.port, host=cfg.env.host, workers=cfg.env.workers,
                       extra_args=extra) as server:
            check_servers(server.urls, read_tool_names(paths.tool_config))
            print(f"# environment up: {', '.join(server.urls)}", file=out)
            code = _run(cmd, env, paths, out)
    merge_metrics(paths.metrics)
    if code == 0:
        _record_model(cfg, variant, paths, model, out, engine if variant.trainer == "grpo" else "verl")
        _push_identity(paths, out)
        if not keep_shards:
            freed = prune_checkpoints(paths.checkpoints, paths.model)
            print(f"# checkpoints pruned: {freed / 2**30:.1f} GiB of optimizer and model shards "
                  f"deleted (--keep-shards keeps them)", file=out)
    return code


def _push_identity(paths: RunPaths, out: Any) -> None:
    """Put the run's config (run.json) into its wandb run; a tracking failure never fails a run."""
    try:
        push_identity(paths.run_dir)
    except Exception as exc:  # noqa: BLE001 - wandb is a view on the run, not the run itself
        print(f"# wandb: could not write the run's config ({exc}); run.json holds it", file=out)


def _record_model(cfg: TrainConfig, variant: Variant, paths: RunPaths, start: str, out: Any,
                  engine: str = "verl") -> None:
    """Write ``model.json``: the run's HF model folder, what it started from, its steps, the
    thinking mode it was trained in."""
    import json

    folder = hf_checkpoint(paths.checkpoints)
    step = int(folder.parts[-3 if folder.parent.name == "actor" else -2].rsplit("_", 1)[-1])
    paths.model.write_text(json.dumps({
        "config": cfg.name, "variant": variant.name, "trainer": variant.trainer,
        "reward": variant.reward, "lr": variant.lr, "engine": engine, "init": start, "hf_model": str(folder),
        "global_step": step, "thinking": cfg.thinking}, indent=2) + "\n")
    print(f"# model: {folder}", file=out)


OUTPUT_GRACE_S = 10.0
"""How long `_run` still reads a trainer's output after the trainer has exited."""


def _run(cmd: Sequence[str], env: Mapping[str, str], paths: RunPaths, out: Any = None) -> int:
    """Run the trainer from the repository root, teeing its output into trainer.log.

    On a terminal every line is echoed as it comes; where stdout is no byte stream (a notebook
    kernel) only the trainer's per-step metric lines and errors are, decoded, to ``out``. The
    trainer runs in its own process group: an interrupt (Ctrl-C, a notebook cell's timeout) stops
    it and every worker it started (Ray's, torchrun's) instead of leaving them running. The run
    ends when the trainer exits, not when its output closes: a process it left behind that still
    holds the pipe (W&B's service after a crash) is stopped with the group, and the exit code
    returned, instead of the launch waiting on it forever."""
    import queue
    import threading

    raw = getattr(sys.stdout, "buffer", None)
    lines: queue.Queue[bytes | None] = queue.Queue()

    def pump(stream: Any) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def show(line: bytes) -> None:
        log.write(line)
        if raw is not None:
            raw.write(line)
            sys.stdout.flush()
        elif b"step:" in line or b"Error" in line or b"Traceback" in line:
            print(line.decode("utf-8", "replace").rstrip()[-2000:], file=out or sys.stdout)

    with paths.log.open("ab") as log:
        proc = spawn(cmd, cwd=REPO_ROOT, env={**os.environ, **env}, stdout=subprocess.PIPE,
                     stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        threading.Thread(target=pump, args=(proc.stdout,), daemon=True).start()
        try:
            deadline = None
            while True:
                try:
                    line = lines.get(timeout=0.5)
                except queue.Empty:
                    line = b""
                if line is None:  # the output closed: every writer is gone
                    break
                if line:
                    show(line)
                if deadline is None and proc.poll() is not None:
                    deadline = time.monotonic() + OUTPUT_GRACE_S
                if deadline is not None and time.monotonic() > deadline:
                    print(f"# the trainer exited with {proc.returncode} but a process it started still "
                          "held its output; stopping its process group", file=out or sys.stdout)
                    break
            code = proc.wait()
            stop_group(proc, timeout=15)  # whatever it left behind
            return code
        except BaseException:
            stop_group(proc, timeout=15)
            raise
