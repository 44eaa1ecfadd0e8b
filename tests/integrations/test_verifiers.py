"""The verifiers adapter (``prove.integrations.verifiers``, hub package ``environments/prove_env``) through
verifiers' own evaluation loop: the ``vf-eval`` command its users run, with verifiers' ``null`` chat harness
calling the row's tools over verifiers' MCP boundary into live PROVE episodes.

    .venv/bin/python -m pytest tests/integrations/test_verifiers.py -q -s

verifiers 0.4.0 pins mcp==2.0.0 and PROVE pins mcp==2.3.0, so pip cannot install it beside the project
(ResolutionImpossible): it gets a side venv (``tests/side_venv.py``) holding verifiers, uv (which its chat
harness runs its program with) and ``prove-env`` (editable), with the project's packages visible after
its own. Each test runs ``vf-eval prove-env`` once in that venv and reads the traces it writes; the
rewards verifiers reports are checked against ``prove.reward.score_turn`` on each rollout's call log,
computed here in the project venv. A scripted model (``scripted_model.py``, the ground-truth calls) gives
a known reward, SmolLM2 (vLLM CPU, ``smollm2``) the live-model path.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel  # this folder and tests/ are on sys.path (their conftests)
from side_venv import side_venv

from prove.env.launch import EnvServer
from prove.integrations.turn import TurnRow
from prove.reward import outcome_of, score_turn
from prove.rows import write_rows

ROOT = Path(__file__).resolve().parents[2]

VERIFIERS = "0.4.0"
REQUIREMENTS = [f"verifiers=={VERIFIERS}", "uv==0.13.9", f"--editable={ROOT / 'environments' / 'prove_env'}"]


@pytest.fixture(scope="module")
def vf_bin() -> Path:
    return side_venv("verifiers", REQUIREMENTS) / "bin"


def _last_user(row: TurnRow) -> str:
    return [m["content"] for m in row.chat() if m["role"] == "user"][-1]


def vf_eval(vf_bin: Path, rows: list[dict[str, Any]], out: Path, base_url: str, model: str,
            *args: str) -> list[dict[str, Any]]:
    """Run ``vf-eval prove-env`` on ``rows`` against ``base_url``; the traces of the episodes it wrote."""
    write_rows(rows, out / "rows.parquet")
    cmd = [str(vf_bin / "vf-eval"), "prove-env", "--env.taskset.rows", str(out / "rows.parquet"), "-m", model,
           "--client.base-url", base_url, "--client.api-key-var", "PROVE_TEST_KEY", "-n", str(len(rows)),
           "--no-push", "--no-rich", "-o", str(out / "runs"), "--run.name", "run", *args]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{vf_bin}{os.pathsep}{env.get('PATH', '')}"  # the harness finds uv beside vf-eval
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"vf-eval failed ({done.returncode}):\n{done.stderr[-4000:]}"
    episodes = [json.loads(line) for line in (out / "runs" / "run" / "traces.jsonl").read_text().splitlines()]
    for episode in episodes:
        assert episode["ok"] and not episode["errors"], episode["errors"]
    return [trace for episode in episodes for trace in episode["traces"]]


def side_by_side(trace: dict[str, Any]) -> tuple[float, float]:
    """verifiers' reward for a rollout and ``prove.reward`` on its call log (printed side by side)."""
    row = TurnRow.from_row(trace["task"]["data"]["row"])
    info = trace["info"]["prove"]
    outcome = outcome_of(info["effect"], row.expected_effect) if row.expected_effect else None
    prove = score_turn(info["log"], row.ground_truth, list(row.tools), info["reward"], outcome)
    framework = sum(r["score"] * r["weight"] for r in trace["rewards"].values())
    assert {f"prove_{k}": v for k, v in prove.items() if k != "score"}.items() <= trace["metrics"].items()
    print(f"verifiers {VERIFIERS} | {row.id} | reward {info['reward']} | verifiers/prove.reward "
          f"{framework:.4f}/{prove['score']:.4f} | calls {[e['name'] for e in info['log']]}")
    return framework, prove["score"]


def test_vf_eval_reports_prove_reward_and_rollouts_of_a_row_never_share_state(
        vf_bin: Path, synth_rows: list[dict[str, Any]], writing_row: dict[str, Any], tmp_path: Path) -> None:
    raw = writing_row
    row = TurnRow.from_row(raw)
    other = next(r for r in synth_rows if TurnRow.from_row(r).ground_truth["calls"]
                 and _last_user(TurnRow.from_row(r)) != _last_user(row))
    gt = row.ground_truth["calls"]
    offered = TurnRow.from_row(other).ground_truth["calls"][0]
    sloppy = [{"name": "not_a_tool", "arguments": {}}, {"name": offered["name"], "arguments": "[1, 2]"},
              *TurnRow.from_row(other).ground_truth["calls"]]
    with ScriptedModel({_last_user(row): gt, _last_user(TurnRow.from_row(other)): sloppy}) as model:
        traces = vf_eval(vf_bin, [raw, other], tmp_path, model.base_url, model.model, "-r", "2",
                         "--env.taskset.task.reward", "outcome")
    assert len(traces) == 4
    exact = [t for t in traces if t["task"]["data"]["id"] == row.id]
    assert [side_by_side(t) for t in exact] == [(1.0, 1.0)] * 2
    # Each rollout ran in its own episode from the row's seed: had the second seen the first's writes,
    # its writes would land on top of them and its effect would not be the ground truth's.
    infos = [t["info"]["prove"] for t in exact]
    assert len({i["episode_id"] for i in infos}) == 2
    assert all(i["effect"] == row.expected_effect and i["outcome"] for i in infos)
    for trace in (t for t in traces if t["task"]["data"]["id"] != row.id):
        framework, prove = side_by_side(trace)
        log = trace["info"]["prove"]["log"]
        assert framework == pytest.approx(prove) and prove < 1.0
        # the harness answered the first two calls itself; the reward still charges them, as training does
        assert [e["ok"] for e in log[:2]] == [False, False] and len(log) == len(sloppy)


def test_vf_eval_with_smollm2_reports_prove_reward_per_rollout(vf_bin: Path, smollm2: Any, env_server: EnvServer,
                                                               writing_row: dict[str, Any],
                                                               tmp_path: Path) -> None:
    raw = writing_row
    # the session's `prove serve` this time (the test above had ProveEnv start its own)
    traces = vf_eval(vf_bin, [raw], tmp_path, smollm2.base_url, smollm2.model, "-r", "2",
                     "--env.taskset.task.env-url", env_server.url,
                     "--env.agent.max-turns", "2", "--sampling.max-tokens", "48", "--sampling.temperature", "1.0")
    assert len(traces) == 2
    pairs = [side_by_side(t) for t in traces]
    assert all(f == pytest.approx(p) for f, p in pairs)
    assert len({t["info"]["prove"]["episode_id"] for t in traces}) == 2


CHECK_LOAD = """
import json, sys
import verifiers.v1 as vf
from prove.integrations.verifiers import ProveEnv, ProveTaskConfig, load_environment
env = load_environment(sys.argv[1], env_url="http://127.0.0.1:9", reward="beta0", max_turns=3)
tasks = list(env.taskset)
errors = []
for bad in (lambda: ProveTaskConfig(reward="nope"), lambda: list(load_environment(None).taskset)):
    try:
        bad()
    except Exception as exc:
        errors.append(str(exc))
print(json.dumps({"env": type(env).__name__, "agent": [env.config.agent.harness.id, env.config.agent.max_turns,
                  env.config.agent.runtime.type], "reward": tasks[0].config.reward,
                  "keys": [t.key for t in tasks], "prompts": [[m.role for m in t.data.prompt] for t in tasks],
                  "errors": errors}))
"""


def test_load_environment_builds_the_env_vf_eval_runs(vf_bin: Path, synth_rows: list[dict[str, Any]],
                                                      tmp_path: Path) -> None:
    rows = synth_rows[:3]
    write_rows(rows, tmp_path / "rows.parquet")
    done = subprocess.run([str(vf_bin / "python"), "-c", CHECK_LOAD, str(tmp_path / "rows.parquet")],
                          capture_output=True, text=True, timeout=120, env={k: v for k, v in os.environ.items()
                                                                             if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    turns = [TurnRow.from_row(r) for r in rows]
    assert got["env"] == "ProveEnv" and got["agent"] == ["null", 3, "subprocess"] and got["reward"] == "beta0"
    assert got["keys"] == [t.id for t in turns]  # one task per row, keyed by the row's id
    assert got["prompts"] == [[m["role"] for m in t.chat()] for t in turns]
    assert "unknown reward config 'nope'; known: prove," in got["errors"][0]
    assert "no rows: pass --env.taskset.rows" in got["errors"][1]
