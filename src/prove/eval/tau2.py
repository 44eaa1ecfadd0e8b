"""τ²-bench (airline, retail, telecom): the served policy as agent, any OpenAI-compatible user simulator, pass^k.

    python -m prove.eval.tau2 score path/to/simulations/*.json       # pass^1..pass^4 per domain

τ²-bench is not on PyPI (the PyPI `tau2` is an unrelated physics package) and this adapter does not
vendor it. Install the pinned tag next to this checkout (needs network to GitHub once):

    git clone --branch v0.2.0 --depth 1 https://github.com/sierra-research/tau2-bench
    pip install -e ./tau2-bench        # Python >= 3.10; tags v1.x need Python >= 3.12
    export TAU2_DATA_DIR=$PWD/tau2-bench/data

v0.2.0 is pinned because it is the last tag that runs on this project's Python 3.11 and it is the
version behind the Qwen model cards' τ² numbers (reward basis DB + COMMUNICATE, no LLM judge for
retail). Running uses τ²-bench's own CLI (`tau2 run`) per domain in a child process; scoring reads
its results JSON with the same success rule (reward == 1 ± 1e-6) and pass^k formula
(C(successes, k) / C(trials, k), averaged over tasks) as `tau2.metrics.agent_metrics`, so scoring
needs no τ²-bench install.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint, write_json, write_table

__all__ = [
    "DOMAINS",
    "TAU2_TAG",
    "Tau2Config",
    "Tau2",
    "tau2_available",
    "pass_hat_k",
    "is_successful",
    "parse_results",
    "score_results",
    "tau2_run_command",
]

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")
TAU2_TAG = "v0.2.0"
INSTALL_HINT = (
    f"τ²-bench is not installed (it is not on PyPI): git clone --branch {TAU2_TAG} --depth 1 "
    "https://github.com/sierra-research/tau2-bench && pip install -e ./tau2-bench && "
    "export TAU2_DATA_DIR=$PWD/tau2-bench/data"
)


def tau2_available() -> tuple[bool, str]:
    """(True, "") when τ²-bench (package `tau2` with `tau2.run`) and its data are present; else why not."""
    if importlib.util.find_spec("tau2") is None:
        return False, INSTALL_HINT
    try:
        spec = importlib.util.find_spec("tau2.run")
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return False, "the installed `tau2` is the PyPI physics package, not τ²-bench. " + INSTALL_HINT
    if shutil.which("tau2") is None:
        return False, "τ²-bench is importable but its `tau2` CLI is not on PATH"
    return True, ""


@dataclass
class Tau2Config:
    """One τ²-bench run: agent = the served policy, user = `user_llm` (record which one in results)."""

    label: str
    domains: tuple[str, ...] = DOMAINS
    num_trials: int = 4
    user_llm: str = "gpt-4.1-2025-04-14"
    """litellm model id of the user simulator. The paper does not state its simulator; τ²'s default
    and the older leaderboard runs use gpt-4.1. For a local simulator use e.g.
    "hosted_vllm/Qwen/Qwen3-32B" with `user_llm_args={"api_base": ...}`. It must support tool calls
    (telecom gives the user tools)."""
    user_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    agent_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    task_split: str | None = None
    """v0.2.0 runs every task of the domain (airline 50, retail 114, telecom 114 'base'); set a split
    name only with tags that have split files."""
    num_tasks: int | None = None
    max_steps: int = 200
    max_errors: int = 10
    max_concurrency: int = 8
    seed: int = 300
    results_dir: Path = Path("results/tau2")
    timeout_s: float | None = None

    def __post_init__(self) -> None:
        unknown = set(self.domains) - set(DOMAINS)
        if unknown:
            raise ValueError(f"unknown τ² domains {sorted(unknown)}; choose from {DOMAINS}")
        if not 1 <= self.num_trials:
            raise ValueError("num_trials must be >= 1")
        self.results_dir = Path(self.results_dir)

    def save_name(self, domain: str) -> str:
        return f"prove_{self.label}_{domain}"


def agent_model_id(endpoint: Endpoint) -> str:
    """litellm id for a vLLM (or other OpenAI-compatible) endpoint: `hosted_vllm/<served name>`."""
    return f"hosted_vllm/{endpoint.model}"


def tau2_run_command(cfg: Tau2Config, endpoint: Endpoint, domain: str) -> list[str]:
    """The `tau2 run` argv for one domain (pure; tested without τ²-bench)."""
    agent_args = {**cfg.agent_llm_args, "api_base": endpoint.base_url, "api_key": endpoint.api_key}
    cmd = ["tau2", "run", "--domain", domain, "--agent", "llm_agent", "--agent-llm", agent_model_id(endpoint),
           "--agent-llm-args", json.dumps(agent_args), "--user", "user_simulator",
           "--user-llm", cfg.user_llm, "--user-llm-args", json.dumps(cfg.user_llm_args),
           "--num-trials", str(cfg.num_trials), "--max-steps", str(cfg.max_steps),
           "--max-errors", str(cfg.max_errors), "--max-concurrency", str(cfg.max_concurrency),
           "--seed", str(cfg.seed), "--save-to", cfg.save_name(domain)]
    if cfg.task_split:
        cmd += ["--task-set-name", cfg.task_split]
    if cfg.num_tasks:
        cmd += ["--num-tasks", str(cfg.num_tasks)]
    return cmd


# --------------------------------------------------------------------------- metrics (no τ² needed)


def is_successful(reward: float) -> bool:
    """τ²-bench's rule: a simulation succeeds when its reward is 1 (± 1e-6)."""
    return (1 - 1e-6) <= reward <= (1 + 1e-6)


def pass_hat_k(num_trials: int, successes: int, k: int) -> float:
    """pass^k for one task: the chance that k trials drawn without replacement all succeed."""
    if num_trials < k:
        raise ValueError(f"number of trials {num_trials} is less than k {k}")
    return math.comb(successes, k) / math.comb(num_trials, k)


def parse_results(path: str | Path) -> dict[str, Any]:
    """Read a τ²-bench results JSON (`Results.save`) into plain data.

    Returns {"domain", "user_llm", "agent_llm", "num_trials", "trials": {task_id: [reward, ...]},
    "termination": {reason: count}}. Simulations without reward_info count as reward 0.
    """
    data = json.loads(Path(path).read_text())
    info = data.get("info", {})
    trials: dict[str, list[float]] = defaultdict(list)
    termination: dict[str, int] = defaultdict(int)
    for sim in data.get("simulations", []):
        reward_info = sim.get("reward_info") or {}
        trials[str(sim["task_id"])].append(float(reward_info.get("reward", 0.0) or 0.0))
        termination[str(sim.get("termination_reason", "unknown"))] += 1
    return {
        "domain": (info.get("environment_info") or {}).get("domain_name"),
        "user_llm": (info.get("user_info") or {}).get("llm"),
        "user_llm_args": (info.get("user_info") or {}).get("llm_args"),
        "agent_llm": (info.get("agent_info") or {}).get("llm"),
        "num_trials": info.get("num_trials"),
        "num_tasks": len(data.get("tasks", [])) or len(trials),
        "trials": dict(trials),
        "termination": dict(termination),
    }


def score_results(parsed: dict[str, Any], max_k: int = 4) -> dict[str, Any]:
    """pass^1..pass^k (k up to the smallest per-task trial count, as τ² does) and mean reward."""
    trials = parsed["trials"]
    if not trials:
        raise ValueError("no simulations in the results")
    k_max = min(max_k, min(len(r) for r in trials.values()))
    out: dict[str, Any] = {"domain": parsed["domain"], "tasks": len(trials),
                           "trials_per_task": min(len(r) for r in trials.values()),
                           "avg_reward": sum(sum(r) for r in trials.values()) / sum(len(r) for r in trials.values()),
                           "user_llm": parsed.get("user_llm"), "agent_llm": parsed.get("agent_llm")}
    for k in range(1, max_k + 1):
        out[f"pass^{k}"] = (
            sum(pass_hat_k(len(r), sum(map(is_successful, r)), k) for r in trials.values()) / len(trials)
            if k <= k_max else float("nan"))
    return out


# --------------------------------------------------------------------------- adapter


class Tau2:
    """τ²-bench adapter: load_tasks / run / score for one `Tau2Config`."""

    name = "tau2_bench"

    def __init__(self, cfg: Tau2Config) -> None:
        self.cfg = cfg

    def _require(self) -> None:
        ok, why = tau2_available()
        if not ok:
            raise RuntimeError(why)

    def load_tasks(self) -> list[dict[str, Any]]:
        """τ²-bench's own task objects (as dicts) for each configured domain."""
        self._require()
        from tau2.run import load_tasks as tau2_load_tasks  # lazy: optional dependency

        out = []
        for domain in self.cfg.domains:
            for task in tau2_load_tasks(self.cfg.task_split or domain):
                out.append({"domain": domain, **task.model_dump()})
        return out

    def simulations_dir(self) -> Path:
        from tau2.utils.utils import DATA_DIR  # lazy

        return Path(DATA_DIR) / "simulations"

    def run(self, endpoint: Endpoint) -> Path:
        """`tau2 run` per domain; copies each results JSON into `results_dir/raw/`; returns that folder."""
        self._require()
        raw = self.cfg.results_dir / "raw"
        raw.mkdir(parents=True, exist_ok=True)
        for domain in self.cfg.domains:
            cmd = tau2_run_command(self.cfg, endpoint, domain)
            target = self.simulations_dir() / f"{self.cfg.save_name(domain)}.json"
            log = self.cfg.results_dir / "logs" / f"{self.cfg.save_name(domain)}.log"
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("w") as fh:
                # `tau2 run` asks before resuming an existing file; answer yes so a rerun resumes
                proc = subprocess.run(cmd, input="y\n" * 4, text=True, stdout=fh, stderr=subprocess.STDOUT,
                                      timeout=self.cfg.timeout_s, env={**os.environ})
            if proc.returncode != 0 or not target.is_file():
                raise RuntimeError(f"tau2 run failed for {domain} (exit {proc.returncode}); see {log}")
            shutil.copy2(target, raw / target.name)
        return raw

    def score(self, run: Path | None = None) -> list[dict[str, Any]]:
        """One row per domain with pass^1..pass^4, from the results JSONs in `run`."""
        run = Path(run or self.cfg.results_dir / "raw")
        rows = []
        for domain in self.cfg.domains:
            path = run / f"{self.cfg.save_name(domain)}.json"
            if not path.is_file():
                raise FileNotFoundError(f"no τ² results for {domain}: {path}")
            rows.append({"label": self.cfg.label, **score_results(parse_results(path))})
        return rows


def write_results(rows: Sequence[dict[str, Any]], results_dir: str | Path, configs: Iterable[Tau2Config] = ()) -> dict[str, Path]:
    """tau2_bench.csv (label x domain: pass^1..4, avg reward, user simulator) and tau2_bench.json."""
    results_dir = Path(results_dir)
    cfgs = [{**asdict(c), "results_dir": str(c.results_dir)} for c in configs]
    return {"csv": write_table(rows, results_dir / "tau2_bench.csv"),
            "json": write_json({"tau2_tag": TAU2_TAG, "rows": list(rows), "configs": cfgs},
                               results_dir / "tau2_bench.json")}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "score":
        print(__doc__)
        return 2
    for path in argv[1:]:
        row = score_results(parse_results(path))
        print(json.dumps(row, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
