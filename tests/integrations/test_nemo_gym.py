"""The NeMo Gym adapter (``prove.integrations.nemo_gym`` and the resources server
``environments/nemo_gym/resources_servers/prove``) through NeMo Gym's own loop: ``ng_run`` serves the
``prove`` resources server, NeMo Gym's ``simple_agent`` and its ``vllm_model`` model server, and
``ng_collect_rollouts`` (the command its users run) collects rollouts of PROVE rows into live episodes.

    .venv/bin/python -m pytest tests/integrations/test_nemo_gym.py -q -s

Every nemo-gym release needs Python >= 3.12 (0.5 and later >= 3.13.14) and 0.4.0 pins mcp<2 against
PROVE's mcp 2.3.0 on 3.11, so NeMo Gym gets a side venv built from a Python 3.12 (``tests/side_venv.py``
with ``base``; ``PROVE_NEMO_PYTHON``, else pyenv's 3.12, else ``python3.12`` on PATH). That venv cannot
import ``prove``: its resources server forwards to ``python -m prove.integrations.nemo_gym serve`` (this
venv), which the test starts over the session's ``prove serve``. ``ng_run`` would build a uv venv per
server from the package index; ``skip_venv_if_present`` (a NeMo Gym option) with ``uv_venv_dir`` pointing
at links to the side venv makes every server run in it instead. The rewards NeMo Gym reports are checked
against ``prove.reward.score_turn`` on each rollout's call log, computed here. A scripted model
(``scripted_model.py``, the ground-truth calls) gives a known reward, SmolLM2 (vLLM CPU, ``smollm2``) the
live-model path; both are model servers of one ``ng_run``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_model import ScriptedModel  # this folder and tests/ are on sys.path (their conftests)
from side_venv import find_python, side_venv

from prove.env.launch import EnvServer
from prove.integrations.nemo_gym import export, nemo_gym_row
from prove.integrations.turn import TurnRow
from prove.proc import ChildServer, free_port, spawn, stop_group
from prove.reward import outcome_of, score_turn

ROOT = Path(__file__).resolve().parents[2]
GYM_DIR = ROOT / "environments" / "nemo_gym"
NEMO_GYM = "0.4.0"
REQUIREMENTS = [f"nemo-gym=={NEMO_GYM}"]
SERVER_DIRS = ("resources_servers/prove", "responses_api_agents/simple_agent", "responses_api_models/vllm_model")


def nemo_python() -> str:
    """A Python 3.12 to build NeMo Gym's venv from; fails saying what to install when there is none."""
    python = find_python("3.12", "PROVE_NEMO_PYTHON")
    if python is None:
        pytest.fail(f"NeMo Gym {NEMO_GYM} needs Python 3.12 and none was found (PROVE_NEMO_PYTHON, "
                    "/root/.pyenv/versions/3.12*/bin/python, python3.12 on PATH): install one, e.g. "
                    "`pyenv install 3.12` or `apt-get install python3.12 python3.12-venv`, or set PROVE_NEMO_PYTHON")
    return python


@pytest.fixture(scope="module")
def gym_bin() -> Path:
    return side_venv("nemo-gym", REQUIREMENTS, base=nemo_python()) / "bin"


def _last_user(row: TurnRow) -> str:
    return [m["content"] for m in row.chat() if m["role"] == "user"][-1]


@pytest.fixture(scope="module")
def rows(synth_rows: list[dict[str, Any]], writing_row: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The writing row and another with a different last user message (so the scripted model tells them apart)."""
    row = TurnRow.from_row(writing_row)
    other = next(r for r in synth_rows if TurnRow.from_row(r).ground_truth["calls"]
                 and _last_user(TurnRow.from_row(r)) != _last_user(row))
    return {"writing": writing_row, "other": other}


def sloppy_calls(other: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls no training rollout should make, then the ground truth: a tool the row does not offer (the
    agent posts it; PROVE refuses it), arguments that are JSON but no object (PROVE refuses them), and
    arguments that are no JSON (NeMo Gym's simple agent answers those itself)."""
    gt = TurnRow.from_row(other).ground_truth["calls"]
    name = gt[0]["name"]
    return [{"name": "not_a_tool", "arguments": {}}, {"name": name, "arguments": "[1, 2]"},
            {"name": name, "arguments": "{oops"}, *gt]


GYM_CONFIG = """
policy_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.py
      base_url: {smollm2_url}
      api_key: EMPTY
      model: {smollm2_model}
      return_token_id_information: false
      uses_reasoning_parser: false
scripted_model:
  responses_api_models:
    vllm_model:
      entrypoint: app.py
      base_url: {scripted_url}
      api_key: EMPTY
      model: {scripted_model}
      return_token_id_information: false
      uses_reasoning_parser: false
prove_scripted_agent:
  responses_api_agents:
    simple_agent:
      entrypoint: app.py
      resources_server:
        type: resources_servers
        name: prove_resources_server
      model_server:
        type: responses_api_models
        name: scripted_model
      max_steps: 8
"""


@pytest.fixture(scope="module")
def gym(gym_bin: Path, smollm2: Any, env_server: EnvServer, rows: dict[str, dict[str, Any]],
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """What a NeMo Gym user starts: PROVE's side (``python -m prove.integrations.nemo_gym serve``) and
    ``ng_run`` with ``configs/prove.yaml``, SmolLM2 as ``policy_model`` and the scripted model beside it."""
    tmp = tmp_path_factory.mktemp("nemo-gym")
    writing, other = (TurnRow.from_row(rows[k]) for k in ("writing", "other"))
    scripts = {_last_user(writing): writing.ground_truth["calls"], _last_user(other): sloppy_calls(rows["other"])}
    port = free_port()
    serve = [sys.executable, "-m", "prove.integrations.nemo_gym", "serve", "--env-url", env_server.url,
             "--port", str(port)]
    with ScriptedModel(scripts) as model, ChildServer(serve, [f"http://127.0.0.1:{port}/health"],
                                                      name="NeMo Gym's PROVE service"):
        (tmp / "models.yaml").write_text(GYM_CONFIG.format(
            smollm2_url=smollm2.base_url, smollm2_model=smollm2.model, scripted_url=model.base_url,
            scripted_model=model.model))
        for d in SERVER_DIRS:  # every server runs in the side venv (skip_venv_if_present)
            (tmp / "venvs" / d).mkdir(parents=True)
            (tmp / "venvs" / d / ".venv").symlink_to(gym_bin.parent)
        head = ["+head_server.host=127.0.0.1", f"+head_server.port={free_port()}"]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(PATH=f"{gym_bin}{os.pathsep}{env.get('PATH', '')}", WANDB_MODE="disabled")
        cmd = [str(gym_bin / "ng_run"), f"+config_paths=[resources_servers/prove/configs/prove.yaml,{tmp / 'models.yaml'}]",
               f"+prove_url=http://127.0.0.1:{port}", f"+uv_venv_dir={tmp / 'venvs'}", "+skip_venv_if_present=true",
               *head]
        log = tmp / "ng_run.log"
        with log.open("wb") as out:
            proc = spawn(cmd, env=env, cwd=GYM_DIR, stdout=out, stderr=subprocess.STDOUT)
        try:
            start = time.monotonic()
            while "servers ready!" not in log.read_text(errors="replace"):
                assert proc.poll() is None, f"ng_run exited ({proc.returncode}):\n{log.read_text()[-4000:]}"
                assert time.monotonic() < start + 300, f"ng_run not ready in 300 s:\n{log.read_text()[-4000:]}"
                time.sleep(1)
            print(f"\n# ng_run (Ray, head server, 5 NeMo Gym servers) ready in {time.monotonic() - start:.0f} s")
            yield {"bin": gym_bin, "env": env, "head": head, "tmp": tmp, "prove_url": f"http://127.0.0.1:{port}"}
        finally:
            stop_group(proc)


def collect(gym: dict[str, Any], raws: list[dict[str, Any]], name: str, agent: str, *args: str,
            reward: str | None = None) -> list[dict[str, Any]]:
    """``ng_collect_rollouts`` over ``raws`` exported as NeMo Gym JSONL; the rollouts it wrote."""
    out = gym["tmp"] / name
    export(raws, out / "rows.jsonl", agent=agent, reward=reward)
    cmd = [str(gym["bin"] / "ng_collect_rollouts"), f"+agent_name={agent}", f"+input_jsonl_fpath={out / 'rows.jsonl'}",
           f"+output_jsonl_fpath={out / 'rollouts.jsonl'}", "+upload_rollouts_to_wandb=false", *gym["head"], *args]
    done = subprocess.run(cmd, env=gym["env"], cwd=GYM_DIR, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"ng_collect_rollouts failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    failures = out / "rollouts_failures.jsonl"
    assert not failures.exists() or not failures.read_text().strip(), failures.read_text()[-3000:]
    return [json.loads(line) for line in (out / "rollouts.jsonl").read_text().splitlines()]


def _open_episodes(gym: dict[str, Any]) -> int:
    with urllib.request.urlopen(f"{gym['prove_url']}/health", timeout=10) as resp:
        return int(json.loads(resp.read())["episodes"])


def side_by_side(rollout: dict[str, Any]) -> tuple[float, float]:
    """NeMo Gym's reward for a rollout and ``prove.reward`` on its call log (printed side by side)."""
    row = TurnRow.from_row(rollout["prove_row"])
    info = rollout["prove"]
    outcome = outcome_of(info["effect"], row.expected_effect) if row.expected_effect else None
    prove = score_turn(info["log"], row.ground_truth, list(row.tools), info["reward_config"], outcome)
    assert info["scores"] == prove
    print(f"NeMo Gym {NEMO_GYM} | {row.id} | reward {info['reward_config']} | NeMo Gym/prove.reward "
          f"{rollout['reward']:.4f}/{prove['score']:.4f} | calls {[e['name'] for e in info['log']]}")
    return rollout["reward"], prove["score"]


def test_ng_collect_rollouts_reports_prove_reward_and_rollouts_of_a_row_never_share_state(
        gym: dict[str, Any], rows: dict[str, dict[str, Any]]) -> None:
    row = TurnRow.from_row(rows["writing"])
    rollouts = collect(gym, [rows["writing"], rows["other"]], "scripted", "prove_scripted_agent", "+num_repeats=2",
                       reward="outcome")
    assert len(rollouts) == 4
    exact = [r for r in rollouts if r["prove_row_id"] == row.id]
    assert [side_by_side(r) for r in exact] == [(1.0, 1.0)] * 2
    # Each rollout ran in its own episode from the row's seed: had the second seen the first's writes,
    # its writes would land on top of them and its effect would not be the ground truth's.
    infos = [r["prove"] for r in exact]
    assert len({i["episode_id"] for i in infos}) == 2 and all(i["reward_config"] == "outcome" for i in infos)
    assert all(i["effect"] == row.expected_effect and i["outcome"] for i in infos)
    sloppy = sloppy_calls(rows["other"])
    for rollout in (r for r in rollouts if r["prove_row_id"] != row.id):
        framework, prove = side_by_side(rollout)
        log = rollout["prove"]["log"]
        assert framework == pytest.approx(prove) and prove < 1.0
        # PROVE refused the first two, NeMo Gym's agent the third; the reward charges all three, as training does
        assert [e["ok"] for e in log[:3]] == [False] * 3 and len(log) == len(sloppy)
    assert _open_episodes(gym) == 0  # /verify closed every rollout's episode


def test_ng_collect_rollouts_with_smollm2_reports_prove_reward_per_rollout(
        gym: dict[str, Any], rows: dict[str, dict[str, Any]]) -> None:
    rollouts = collect(gym, [rows["writing"]], "smollm2", "prove_simple_agent", "+num_repeats=2",
                       "+responses_create_params.max_output_tokens=48", "+responses_create_params.temperature=1.0")
    assert len(rollouts) == 2
    pairs = [side_by_side(r) for r in rollouts]
    assert all(f == pytest.approx(p) for f, p in pairs)
    assert len({r["prove"]["episode_id"] for r in rollouts}) == 2


CHECK_ROWS = """
import json, sys
from nemo_gym.openai_utils import NeMoGymResponseCreateParamsNonStreaming
for line in open(sys.argv[1]):
    params = NeMoGymResponseCreateParamsNonStreaming.model_validate(json.loads(line)["responses_create_params"])
    dumped = params.model_dump(mode="json")
    print(json.dumps([[i.get("type") for i in dumped["input"]], [t["name"] for t in dumped["tools"]]]))
"""


def test_export_writes_rows_nemo_gyms_own_request_model_accepts(gym_bin: Path, synth_rows: list[dict[str, Any]],
                                                                tmp_path: Path) -> None:
    multi = [r for r in synth_rows if any(m["role"] == "tool" for m in TurnRow.from_row(r).chat())][:2]
    raws = [synth_rows[0], *multi]
    export(raws, tmp_path / "rows.jsonl", reward="beta0")
    done = subprocess.run([str(gym_bin / "python"), "-c", CHECK_ROWS, str(tmp_path / "rows.jsonl")],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert done.returncode == 0, done.stderr[-3000:]
    got = [json.loads(line) for line in done.stdout.strip().splitlines()]
    for raw, (types, tools) in zip(raws, got, strict=True):
        row = TurnRow.from_row(raw)
        assert tools == row.tool_names
        chat = row.chat()
        n_calls = sum(len(m.get("tool_calls") or []) for m in chat)
        assert types.count("function_call") == n_calls and types.count("function_call_output") == n_calls
        assert types.count("message") == sum(1 for m in chat if m["role"] != "tool" and (m.get("content") or not m.get("tool_calls")))
    line = nemo_gym_row(raws[0], reward="beta0")
    assert line["prove_reward"] == "beta0" and line["prove_row_id"] == TurnRow.from_row(raws[0]).id
    with pytest.raises(ValueError, match="unknown reward config 'nope'; known: prove,"):
        nemo_gym_row(raws[0], reward="nope")


def test_prove_service_scores_the_response_calls_and_says_what_was_wrong(env_server: EnvServer,
                                                                         writing_row: dict[str, Any]) -> None:
    """PROVE's side alone (what the resources server forwards to), in this venv, no NeMo Gym."""
    from starlette.testclient import TestClient

    from prove.integrations.nemo_gym import create_app

    row = TurnRow.from_row(writing_row)
    gt = [{"name": c["name"], "arguments": json.dumps(c["arguments"]) if not isinstance(c["arguments"], str)
           else c["arguments"]} for c in row.ground_truth["calls"]]
    with TestClient(create_app([env_server.url])) as client:
        seeded = client.post("/seed_session", json={"episode_id": "nemo-gym-test-a", "row": writing_row}).json()
        assert seeded["row_id"] == row.id and seeded["tools"] == row.tool_names
        for call in gt:
            assert client.post("/call", json={"episode_id": "nemo-gym-test-a", **call}).json()["ok"]
        # the agent answered a call with no JSON arguments itself: it is in the response, not in the episode
        calls = [*gt, {"name": gt[0]["name"], "arguments": "{oops"}]
        got = client.post("/verify", json={"episode_id": "nemo-gym-test-a", "calls": calls, "reward": "beta0"}).json()
        log = got["log"]
        assert [e["name"] for e in log] == [c["name"] for c in calls] and not log[-1]["ok"]
        assert got["effect"] == row.expected_effect and got["outcome"] is True
        assert got["scores"] == score_turn(log, row.ground_truth, list(row.tools), "beta0", True)
        assert got["reward"] == got["scores"]["score"]
        assert client.get("/health").json()["episodes"] == 0  # verify closed the episode
        bad = [client.post("/seed_session", json={"episode_id": "x"}),
               client.post("/seed_session", json={"episode_id": "x", "row": {"prompt": []}}),
               client.post("/call", json={"episode_id": "never-seeded", "name": "a", "arguments": "{}"}),
               client.post("/verify", json={"episode_id": "x", "calls": [], "reward": "nope"})]
        assert [r.status_code for r in bad] == [400, 400, 404, 400]
        assert "missing ['row']" in bad[0].json()["error"]
        assert "not a PROVE training row" in bad[1].json()["error"]
        assert "no episode 'never-seeded'" in bad[2].json()["error"]
        assert "unknown reward config 'nope'; known: prove," in bad[3].json()["error"]
        # the log and the response disagree (a call the episode never ran): said, not scored
        client.post("/seed_session", json={"episode_id": "nemo-gym-test-b", "row": writing_row})
        mismatch = client.post("/verify", json={"episode_id": "nemo-gym-test-b", "calls": gt[:1]})
        assert mismatch.status_code == 409 and "does not match the response" in mismatch.json()["error"]
