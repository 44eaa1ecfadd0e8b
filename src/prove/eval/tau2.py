"""τ²-bench v0.2.0 (mock, airline, retail, telecom): the served policy as agent, a served user simulator, pass^k.

    python -m prove.eval.tau2 self-check                       # gold actions replayed: DB check passes
    python -m prove.eval.tau2 score path/to/simulations/*.json # pass^1..pass^4 per domain

τ²-bench is not on PyPI (the PyPI `tau2` is an unrelated physics package) and nothing of it is in
this repository. `./run_all.sh` installs it when PROVE_TAU2_SOURCE names a source folder or tarball
(`prove.eval.tau2_install`; CI uses ../shared/vendor/tau2-bench-0.2.0.tar.gz). With network:

    git clone --branch v0.2.0 --depth 1 https://github.com/sierra-research/tau2-bench
    PROVE_TAU2_SOURCE=$PWD/tau2-bench ./run_all.sh test

v0.2.0 is pinned because it is the last tag that runs on this project's Python 3.11 and it is the
version behind the Qwen model cards' τ² numbers (reward basis DB + COMMUNICATE, no LLM judge for
retail). Running uses τ²-bench's own CLI (`tau2 run`) per domain in a child process, with its own
data folder per run (τ² writes results under TAU2_DATA_DIR/simulations): the policy is litellm model
`openai/<served name>` at the endpoint's base URL, the user simulator another served model (smoke:
a second SmolLM2 server, the same for every checkpoint; paper: vLLM). Scoring reads τ²'s results JSON
with its success rule (reward == 1 ± 1e-6) and pass^k (C(successes, k) / C(trials, k), averaged over
tasks), as `tau2.metrics.agent_metrics`; a conversation that τ² aborts with an exception (e.g. an
empty model message, which τ² v0.2.0 rejects) counts as a failure and is reported in `crashed`.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prove.eval.base import Endpoint, write_json, write_table
from prove.eval.tau2_install import (
    DOMAIN_FILES,
    GIT_HINT,
    TAU2_DIST_VERSIONS,
    TAU2_TAG,
    installed_data_dir,
)

__all__ = [
    "DOMAINS",
    "ALL_DOMAINS",
    "TAU2_TAG",
    "Tau2Config",
    "Tau2",
    "tau2_available",
    "tau2_data_dir",
    "check_domain_data",
    "self_check",
    "pass_hat_k",
    "is_successful",
    "parse_results",
    "score_results",
    "tau2_run_command",
    "write_results",
]

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom")
"""The paper's domains (τ²-bench's published ones)."""
ALL_DOMAINS: tuple[str, ...] = ("mock", *DOMAINS)
"""What v0.2.0 can run: `mock` (9 tiny tasks) is τ²'s own test domain, used by the CPU profile."""
INSTALL_HINT = (f"τ²-bench {TAU2_TAG} is not installed (it is not on PyPI): set PROVE_TAU2_SOURCE to a "
                f"source folder or tarball and run ./run_all.sh (CI: ../shared/vendor/tau2-bench-0.2.0.tar.gz), "
                f"or {GIT_HINT}")
LOCAL_USER = "local"
"""`user_llm` value: serve SmolLM2-135M-Instruct (`prove.eval.served.serve_local`) as the user simulator."""
VLLM_USER = "vllm:"
"""`user_llm` prefix: serve `vllm:<model>` with vLLM (`serve_vllm`) as the user simulator."""
_CHILD_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
"""litellm fetches its model price map from GitHub at import unless told to use its bundled copy."""


def tau2_data_dir() -> Path | None:
    """TAU2_DATA_DIR if set, else the data folder `prove.eval.tau2_install` recorded for this venv."""
    if os.environ.get("TAU2_DATA_DIR"):
        return Path(os.environ["TAU2_DATA_DIR"])
    return installed_data_dir()


def tau2_available() -> tuple[bool, str]:
    """(True, "") when τ²-bench v0.2.0, its `tau2` CLI and a data folder are present; else why not."""
    if importlib.util.find_spec("tau2") is None:
        return False, INSTALL_HINT
    try:
        spec = importlib.util.find_spec("tau2.run")
    except ModuleNotFoundError:
        spec = None
    if spec is None:
        return False, "the installed `tau2` is the PyPI physics package, not τ²-bench. " + INSTALL_HINT
    version = importlib.metadata.version("tau2")
    if version not in TAU2_DIST_VERSIONS:
        return False, (f"the installed τ²-bench is version {version}, not {TAU2_TAG} "
                       f"(distribution {' or '.join(TAU2_DIST_VERSIONS)}); reinstall it: {INSTALL_HINT}")
    if shutil.which("tau2", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}") is None:
        return False, "τ²-bench is importable but its `tau2` CLI is not on PATH"
    data = tau2_data_dir()
    if data is None or not (data / "tau2" / "domains").is_dir():
        return False, (f"τ²-bench's data folder is unknown or has no tau2/domains/ (TAU2_DATA_DIR={data}); "
                       f"set TAU2_DATA_DIR=<tau2-bench>/data or install with PROVE_TAU2_SOURCE")
    return True, ""


def check_domain_data(domain: str, data_dir: Path | None = None) -> None:
    """Raise naming the missing file and the fix when `domain` cannot run from `data_dir`."""
    if domain not in ALL_DOMAINS:
        raise ValueError(f"unknown τ² domain {domain!r}; choose from {ALL_DOMAINS}")
    data_dir = data_dir or tau2_data_dir()
    if data_dir is None:
        raise RuntimeError(INSTALL_HINT)
    folder = Path(data_dir) / "tau2" / "domains" / domain
    missing = [name for name in DOMAIN_FILES[domain] if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"τ² domain {domain!r} cannot run: {', '.join(missing)} missing from {folder} "
            f"(the vendored v0.2.0 tarball has no airline/db.json, see ../shared/vendor/README.md); fix: "
            f"choose another domain or {GIT_HINT}")


def _import_tau2() -> Any:
    """Import τ²-bench in this process with its data folder set (τ² reads TAU2_DATA_DIR at import)."""
    ok, why = tau2_available()
    if not ok:
        raise RuntimeError(why)
    os.environ.setdefault("TAU2_DATA_DIR", str(tau2_data_dir()))
    for key, value in _CHILD_ENV.items():
        os.environ.setdefault(key, value)
    from loguru import logger

    logger.remove()  # τ² logs every registry entry at INFO; keep warnings and errors
    logger.add(sys.stderr, level="ERROR")
    import tau2.run

    return tau2.run


@dataclass
class Tau2Config:
    """One τ²-bench run: agent = the served policy, user simulator = `user_llm` (recorded in results)."""

    label: str
    domains: tuple[str, ...] = DOMAINS
    num_trials: int = 4
    user_llm: str = LOCAL_USER
    """`local`: SmolLM2-135M-Instruct served on loopback for the run (CPU); `vllm:<model>`: that model
    served with vLLM for the run; else a litellm model id (e.g. "gpt-4.1-2025-04-14", τ²'s default and
    the older leaderboard runs', or "openai/<name>" with `user_llm_args={"api_base": ...}`). The user
    model changes scores: keep it fixed across the checkpoints compared, and report it."""
    user_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    user_serve: Any = None
    """A ``prove.llm.vllm.VLLMConfig`` for a ``vllm:<model>`` simulator (its GPUs, tensor parallel
    size, context and thinking mode from 06's placement plan); None: defaults for that model."""
    agent_llm_args: dict[str, Any] = field(default_factory=lambda: {"temperature": 0.0})
    task_split: str | None = None
    """A τ² task set name (v0.2.0: the domain names, `telecom_small`, `telecom_full`); None: the domain's."""
    task_ids: tuple[str, ...] | None = None
    """Only these tasks (τ²'s `--task-ids`; applied to every domain). None: all (or `num_tasks`)."""
    num_tasks: int | None = None
    max_steps: int = 200
    max_errors: int = 10
    max_concurrency: int = 8
    seed: int = 300
    results_dir: Path = Path("results/tau2")
    timeout_s: float | None = None

    def __post_init__(self) -> None:
        unknown = set(self.domains) - set(ALL_DOMAINS)
        if unknown:
            raise ValueError(f"unknown τ² domains {sorted(unknown)}; choose from {ALL_DOMAINS}")
        if not self.domains:
            raise ValueError(f"no τ² domains given; choose from {ALL_DOMAINS}")
        if self.num_trials < 1 or self.max_steps < 1 or self.max_errors < 1:
            raise ValueError("num_trials, max_steps and max_errors must be >= 1")
        self.domains = tuple(self.domains)
        self.task_ids = tuple(self.task_ids) if self.task_ids else None
        self.results_dir = Path(self.results_dir)

    def save_name(self, domain: str) -> str:
        return f"prove_{self.label}_{domain}"


def agent_model_id(endpoint: Endpoint) -> str:
    """litellm id for an OpenAI-compatible endpoint (vLLM, transformers serve): `openai/<served name>`."""
    return f"openai/{endpoint.model}"


def tau2_run_command(cfg: Tau2Config, endpoint: Endpoint, domain: str, user_llm: str | None = None,
                     user_llm_args: dict[str, Any] | None = None) -> list[str]:
    """The `tau2 run` argv for one domain (pure). `user_llm`/`_args` override the config's (a served user)."""
    agent_args = {**cfg.agent_llm_args, "api_base": endpoint.base_url, "api_key": endpoint.api_key}
    user_args = cfg.user_llm_args if user_llm_args is None else user_llm_args
    cmd = ["tau2", "run", "--domain", domain, "--agent", "llm_agent", "--agent-llm", agent_model_id(endpoint),
           "--agent-llm-args", json.dumps(agent_args), "--user", "user_simulator",
           "--user-llm", user_llm or cfg.user_llm, "--user-llm-args", json.dumps(user_args),
           "--num-trials", str(cfg.num_trials), "--max-steps", str(cfg.max_steps),
           "--max-errors", str(cfg.max_errors), "--max-concurrency", str(cfg.max_concurrency),
           "--seed", str(cfg.seed), "--save-to", cfg.save_name(domain)]
    if cfg.task_split:
        cmd += ["--task-set-name", cfg.task_split]
    if cfg.task_ids:
        cmd += ["--task-ids", *cfg.task_ids]
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


def _crash_path(results: Path) -> Path:
    return results.with_suffix(".crashed.json")


def parse_results(path: str | Path) -> dict[str, Any]:
    """Read a τ²-bench results JSON (`Results.save`) into plain data.

    Returns {"domain", "user_llm", "agent_llm", "num_trials", "num_tasks", "trials": {task_id:
    [reward, ...]}, "termination": {reason: count}, "crashed"}. Simulations without reward_info count
    as reward 0; conversations τ² aborted (recorded by `Tau2.run` next to the file as
    `<name>.crashed.json`) count as reward 0 with termination "crashed".
    """
    path = Path(path)
    data = json.loads(path.read_text())
    info = data.get("info", {})
    trials: dict[str, list[float]] = defaultdict(list)
    termination: dict[str, int] = defaultdict(int)
    for sim in data.get("simulations", []):
        reward_info = sim.get("reward_info") or {}
        trials[str(sim["task_id"])].append(float(reward_info.get("reward", 0.0) or 0.0))
        termination[str(sim.get("termination_reason", "unknown"))] += 1
    crashed = json.loads(_crash_path(path).read_text()) if _crash_path(path).is_file() else []
    for crash in crashed:
        trials[str(crash["task_id"])].append(0.0)
        termination["crashed"] += 1
    return {
        "domain": (info.get("environment_info") or {}).get("domain_name"),
        "user_llm": (info.get("user_info") or {}).get("llm"),
        "user_llm_args": (info.get("user_info") or {}).get("llm_args"),
        "agent_llm": (info.get("agent_info") or {}).get("llm"),
        "num_trials": info.get("num_trials"),
        "num_tasks": len(data.get("tasks", [])) or len(trials),
        "trials": dict(trials),
        "termination": dict(termination),
        "crashed": crashed,
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
                           "user_llm": parsed.get("user_llm"), "agent_llm": parsed.get("agent_llm"),
                           "termination": json.dumps(parsed.get("termination", {}), sort_keys=True),
                           "crashed": len(parsed.get("crashed", []))}
    for k in range(1, max_k + 1):
        out[f"pass^{k}"] = (
            sum(pass_hat_k(len(r), sum(map(is_successful, r)), k) for r in trials.values()) / len(trials)
            if k <= k_max else float("nan"))
    return out


# --------------------------------------------------------------------------- self-check (no model)


class _FreshEnv:
    """Fresh environments of one domain, built by τ²'s registered constructor from one parsed DB.

    Equivalent to calling the constructor with no DB (which re-reads db.json each time), ~4x faster.
    """

    def __init__(self, tau2_run: Any, domain: str) -> None:
        self.make = tau2_run.registry.get_env_constructor(domain)
        db = self.make().tools.db
        self.db_cls, self.db_data = type(db), db.model_dump()

    def __call__(self, task: Any) -> Any:
        env = self.make(db=self.db_cls.model_validate(self.db_data))
        init = task.initial_state
        env.set_state(initialization_data=init.initialization_data if init else None,
                      initialization_actions=init.initialization_actions if init else None,
                      message_history=list(init.message_history or []) if init else [])
        return env


def _call(i: int, action: Any) -> Any:
    from tau2.data_model.message import ToolCall

    return ToolCall(id=f"prove-gold-{i}", name=action.name, arguments=dict(action.arguments),
                    requestor=action.requestor)


def _trajectory(fresh: _FreshEnv, task: Any, actions: Sequence[Any]) -> tuple[list[Any], list[bool]]:
    """The task's initial history + `actions` as tool calls with the responses τ²'s environment gives.

    Returns (messages, for each action whether its call answered with an error).
    """
    from tau2.data_model.message import AssistantMessage, UserMessage

    env = fresh(task)
    messages = list(task.initial_state.message_history or []) if task.initial_state else []
    errors: list[bool] = []
    for i, action in enumerate(actions):
        call = _call(i, action)
        if action.requestor == "user":
            messages.append(UserMessage(role="user", content=None, tool_calls=[call]))
        else:
            messages.append(AssistantMessage(role="assistant", content=None, tool_calls=[call]))
        response = env.get_response(call)
        errors.append(bool(response.error))
        messages.append(response)
    return messages, errors


def _db_match(domain: str, task: Any, messages: list[Any]) -> bool | None:
    """τ²'s own evaluator (EvaluationType.ENV) on a finished simulation holding `messages`: its DB check.

    None when τ²'s evaluator itself raises: v0.2.0 runs a task's env assertions after the DB check and
    an assertion on an entity that the trajectory never created raises instead of failing.
    """
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    sim = SimulationRun(id=f"prove-selfcheck-{task.id}", task_id=task.id, start_time="", end_time="",
                        duration=0.0, termination_reason=TerminationReason.AGENT_STOP, messages=messages)
    try:
        info = evaluate_simulation(sim, task, EvaluationType.ENV, solo_mode=False, domain=domain)
    except Exception:  # noqa: BLE001 - τ²'s own evaluator failing on this trajectory is the result
        return None
    return bool(info.db_check and info.db_check.db_match)


def _is_write(env: Any, action: Any) -> bool:
    from tau2.environment.toolkit import ToolType

    tools = env.user_tools if action.requestor == "user" else env.tools
    return tools is not None and action.name in tools.tools and tools.tool_type(action.name) == ToolType.WRITE


def _alternatives(action: Any, pool: dict[tuple[str, str], list[Any]]) -> Iterator[dict[str, Any]]:
    """Argument sets that differ from `action`'s in one argument: values the same tool takes in other gold
    actions of the domain first (real ids and enum values), then a changed string or a shortened list."""
    for arg, value in action.arguments.items():
        for other in pool.get((action.name, arg), []):
            if other != value:
                yield {**action.arguments, arg: other}
    for arg, value in action.arguments.items():
        if isinstance(value, str):
            yield {**action.arguments, arg: value + " (altered)"}
        elif isinstance(value, list) and value:
            yield {**action.arguments, arg: value[:-1]}


def _alter_last_write(fresh: _FreshEnv, task: Any, actions: list[Any], last: int,
                      pool: dict[tuple[str, str], list[Any]]) -> list[Any] | None:
    """`actions` with one argument of actions[last] changed so that τ²'s environment accepts the call."""
    trial = fresh(task)
    for i, action in enumerate(actions[:last]):
        trial.get_response(_call(i, action))
    for args in _alternatives(actions[last], pool):
        changed = actions[last].model_copy(update={"arguments": args})
        if not trial.get_response(_call(last, changed)).error:
            return actions[:last] + [changed] + actions[last + 1:]
    return None


def self_check(domains: Sequence[str] = ("mock", "retail"), max_tasks: int | None = None) -> list[dict[str, Any]]:
    """Replay every task's gold actions through τ²-bench's environment evaluator, with no model.

    For each task with gold actions (the first `max_tasks` per domain, or all): the gold sequence must
    pass the DB check; the same sequence with its last write dropped, or with one argument of that
    write altered (the first alteration the environment accepts without error, so the state really
    differs), must not. One row per domain.
    """
    tau2_run = _import_tau2()
    rows = []
    for domain in domains:
        check_domain_data(domain)
        start = time.perf_counter()
        tasks = tau2_run.load_tasks(domain)[:max_tasks]
        fresh = _FreshEnv(tau2_run, domain)
        env = fresh.make()
        pool: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for task in tau2_run.load_tasks(domain):
            for a in (task.evaluation_criteria.actions or []) if task.evaluation_criteria else []:
                for arg, value in a.arguments.items():
                    if value not in pool[(a.name, arg)]:
                        pool[(a.name, arg)].append(value)
        c: Counter[str] = Counter()
        failures: list[str] = []
        for task in tasks:
            actions = list((task.evaluation_criteria.actions or []) if task.evaluation_criteria else [])
            if not actions:
                continue
            c["with_actions"] += 1
            gold, errors = _trajectory(fresh, task, actions)
            c["gold_call_errors"] += sum(errors)
            if _db_match(domain, task, gold):
                c["gold_pass"] += 1
            else:
                failures.append(f"{task.id}: gold")
            # the controls break the last write that changed the state: τ²'s gold sequences include
            # writes that the environment refuses (e.g. retail 12's refund to PayPal), which change nothing
            writes = [i for i, a in enumerate(actions) if _is_write(env, a) and not errors[i]]
            c["refused_only"] += not writes and any(_is_write(env, a) for a in actions)
            if not writes:
                continue
            c["with_write"] += 1
            last = writes[-1]
            verdict = _db_match(domain, task, _trajectory(fresh, task, actions[:last] + actions[last + 1:])[0])
            c["dropped_raised"] += verdict is None
            if verdict:
                c["dropped_pass"] += 1
                failures.append(f"{task.id}: dropped")
            altered = _alter_last_write(fresh, task, actions, last, pool)
            if altered is None:
                c["altered_none"] += 1
                continue
            c["altered"] += 1
            verdict = _db_match(domain, task, _trajectory(fresh, task, altered)[0])
            c["altered_raised"] += verdict is None
            if verdict:
                c["altered_pass"] += 1
                failures.append(f"{task.id}: altered")
        rows.append({"domain": domain, "tasks": len(tasks), "with_actions": c["with_actions"],
                     "gold_pass": c["gold_pass"], "gold_call_errors": c["gold_call_errors"],
                     "with_write": c["with_write"], "dropped_pass": c["dropped_pass"],
                     "altered": c["altered"], "altered_pass": c["altered_pass"],
                     "altered_none": c["altered_none"], "dropped_raised": c["dropped_raised"],
                     "altered_raised": c["altered_raised"],
                     "refused_only": c["refused_only"], "failures": failures,
                     "seconds": round(time.perf_counter() - start, 2)})
    return rows


# --------------------------------------------------------------------------- adapter


@contextlib.contextmanager
def served_user(cfg: Tau2Config) -> Iterator[tuple[str, dict[str, Any]]]:
    """(litellm id, args) of the user simulator, serving it for the duration when the config asks to."""
    if cfg.user_llm == LOCAL_USER or cfg.user_llm.startswith(VLLM_USER):
        from prove.llm.vllm import VLLMConfig, serve_local, serve_vllm

        model = cfg.user_llm.removeprefix(VLLM_USER)
        if cfg.user_llm == LOCAL_USER:
            server = serve_local()
        elif cfg.user_serve is not None:
            if cfg.user_serve.model != model:
                raise ValueError(f"user_serve serves {cfg.user_serve.model!r} but user_llm is {cfg.user_llm!r}")
            server = serve_vllm(cfg.user_serve)
        else:
            server = serve_vllm(VLLMConfig(model=model))
        with server as served:
            ep = served.endpoint
            yield agent_model_id(ep), {**cfg.user_llm_args, "api_base": ep.base_url, "api_key": ep.api_key}
    else:
        yield cfg.user_llm, dict(cfg.user_llm_args)


CRASH_LINE = re.compile(r"Error running task (?P<task>.+?), trial (?P<trial>\d+): (?P<error>.*)")


class Tau2:
    """τ²-bench adapter: load_tasks / run / score for one `Tau2Config`."""

    name = "tau2_bench"

    def __init__(self, cfg: Tau2Config) -> None:
        self.cfg = cfg

    def _require(self) -> Path:
        ok, why = tau2_available()
        if not ok:
            raise RuntimeError(why)
        for domain in self.cfg.domains:
            check_domain_data(domain)
        return Path(tau2_data_dir() or "")

    def load_tasks(self) -> list[dict[str, Any]]:
        """τ²-bench's own task objects (as dicts) for each configured domain."""
        self._require()
        tau2_run = _import_tau2()
        out = []
        for domain in self.cfg.domains:
            for task in tau2_run.load_tasks(self.cfg.task_split or domain):
                out.append({"domain": domain, **task.model_dump()})
        return out

    def data_dir(self) -> Path:
        """This run's TAU2_DATA_DIR: the source's tau2/ (read-only, linked) and its own simulations/."""
        return self.cfg.results_dir / "tau2_data"

    def _prepare_data_dir(self, source: Path) -> Path:
        data = self.data_dir()
        (data / "simulations").mkdir(parents=True, exist_ok=True)
        link = data / "tau2"
        if link.is_symlink() and link.resolve() != (source / "tau2").resolve():
            link.unlink()
        if not link.exists():
            link.symlink_to((source / "tau2").resolve(), target_is_directory=True)
        return data

    def run(self, endpoint: Endpoint) -> Path:
        """`tau2 run` per domain; copies each results JSON into `results_dir/raw/`; returns that folder."""
        data = self._prepare_data_dir(self._require())
        raw = self.cfg.results_dir / "raw"
        raw.mkdir(parents=True, exist_ok=True)
        bin_dir = str(Path(sys.executable).parent)
        env = {**os.environ, **_CHILD_ENV, "TAU2_DATA_DIR": str(data.resolve()),
               "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        with served_user(self.cfg) as (user_llm, user_args):
            for domain in self.cfg.domains:
                self._run_domain(endpoint, domain, user_llm, user_args, env, data, raw)
        return raw

    def _run_domain(self, endpoint: Endpoint, domain: str, user_llm: str, user_args: dict[str, Any],
                    env: dict[str, str], data: Path, raw: Path) -> None:
        cmd = tau2_run_command(self.cfg, endpoint, domain, user_llm, user_args)
        name = self.cfg.save_name(domain)
        target = data / "simulations" / f"{name}.json"
        log = self.cfg.results_dir / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        # every evaluation starts fresh: a file left by an earlier run (another server port, so
        # another config) would make τ² stop on "the run config has changed"
        target.unlink(missing_ok=True)
        with log.open("w") as fh:
            # τ² asks before resuming an existing file (yes) and again if its config changed (no: stop)
            proc = subprocess.run(cmd, input="y\nn\n", text=True, stdout=fh, stderr=subprocess.STDOUT,
                                  timeout=self.cfg.timeout_s, env=env, cwd=self.cfg.results_dir)
        crashed = [m.groupdict() for m in map(CRASH_LINE.search, log.read_text().splitlines()) if m]
        if (proc.returncode != 0 and not crashed) or not target.is_file():
            tail = "\n".join(log.read_text().splitlines()[-15:])
            raise RuntimeError(f"tau2 run failed for {domain} (exit {proc.returncode}); see {log}:\n{tail}")
        shutil.copy2(target, raw / target.name)
        crash_file = _crash_path(raw / target.name)
        if crashed:
            write_json([{"task_id": c["task"], "trial": int(c["trial"]), "error": c["error"][:500]}
                        for c in crashed], crash_file)
        elif crash_file.exists():
            crash_file.unlink()

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
    if argv[:1] == ["self-check"]:
        start = time.perf_counter()
        try:
            rows = self_check(tuple(argv[1:]) or ("mock", "retail"))
        except (RuntimeError, ValueError, FileNotFoundError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
        for r in rows:
            print(f"{r['domain']}: {r['with_actions']}/{r['tasks']} tasks have gold actions; gold replay DB check "
                  f"{r['gold_pass']}/{r['with_actions']}; of {r['with_write']} with a write that succeeds, last one dropped "
                  f"{r['dropped_pass']}/{r['with_write']}, altered {r['altered_pass']}/{r['altered']} "
                  f"(no accepted alteration: {r['altered_none']}; τ²'s evaluator raised: dropped "
                  f"{r['dropped_raised']}, altered {r['altered_raised']}; only refused writes: {r['refused_only']}; gold "
                  f"calls answered with an error: {r['gold_call_errors']}) ({r['seconds']}s)")
        print(f"total: gold {sum(r['gold_pass'] for r in rows)}/{sum(r['with_actions'] for r in rows)}, "
              f"dropped {sum(r['dropped_pass'] for r in rows)}, altered {sum(r['altered_pass'] for r in rows)} "
              f"in {time.perf_counter() - start:.1f}s")
        failures = [f for r in rows for f in r["failures"]]
        if failures:
            print("unexpected: " + "; ".join(failures))
        return 1 if failures else 0
    if argv[:1] == ["score"] and argv[1:]:
        for path in argv[1:]:
            print(json.dumps(score_results(parse_results(path)), default=str))
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
