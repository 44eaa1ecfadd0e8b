"""ProveTool through VERL: tool registry from the generated YAML, the agent loop's own call path,
concurrent isolated episodes against live servers on loopback, logging, and closing."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from train_helpers import (
    banking_rows,
    ground_truth,
    lookup_call,
    lookup_rows,
    need_verl,
    run,
    transfer_pair,
    unclosed_episodes,
)

from prove.env.launch import EnvServer
from prove.env.registry import Registry
from prove.train.tool_config import read_tool_names


def test_generated_yaml_loads_every_tool_through_verls_registry(
    tool_yaml: Path, verl_tools: list, registry: Registry
) -> None:
    from prove.train.tool import ProveTool

    assert read_tool_names(tool_yaml) == list(registry.tools)
    assert len(verl_tools) == len(registry.tools) and all(isinstance(t, ProveTool) for t in verl_tools)
    by_name = {t.name: t for t in verl_tools}
    shown = by_name["find_meeting_times"].tool_schema.model_dump(exclude_unset=True, exclude_none=True)
    assert shown["function"]["parameters"]["properties"]["attendee_emails"]["items"] == {"type": "string"}


def _agent_data(row: dict[str, Any]) -> Any:
    from verl.experimental.agent_loop.tool_agent_loop import AgentData

    return AgentData(messages=[], image_data=None, video_data=None, audio_data=None,
                     mm_processor_kwargs=None, metrics={}, request_id=uuid.uuid4().hex,
                     tools_kwargs=row["extra_info"]["tools_kwargs"])


def _call(name: str, **arguments: Any) -> Any:
    from verl.experimental.agent_loop.tool_parser import FunctionCall

    return FunctionCall(name=name, arguments=json.dumps(arguments))


def test_concurrent_trajectories_call_live_servers_through_verls_call_path(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict], live_env: EnvServer
) -> None:
    """Six trajectories at once, two per row (a GRPO group shares a row, never an episode): banking
    rows at turn 1, each moving money between two accounts of its own episode."""
    from prove.train.rollout import make_agent_loop

    rows = (banking_rows(synth_rows) * 3)[:3] * 2
    pairs = {r["extra_info"]["example_id"]: transfer_pair(r) for r in rows}
    before = unclosed_episodes(live_env.url)

    async def trajectory(i: int, row: dict[str, Any]) -> tuple[list, list, Any]:
        loop = make_agent_loop(verl_cfg, tokenizer, verl_tools, llm=None)
        data = _agent_data(row)
        src, dst = pairs[row["extra_info"]["example_id"]]
        kwargs = data.tools_kwargs
        texts = []
        for call in (_call("get_balance", account_id=src),
                     _call("transfer_funds", from_account_id=src, to_account_id=dst, amount=10.0 + i),
                     _call("get_balance", account_id=src),
                     _call("no_such_tool", x=1),
                     _call("get_balance", account_id="ACC-9999")):
            response, _, _ = await loop._call_tool(call, kwargs, data)
            texts.append(response.text)
        # What VERL's hermes parser makes of {"name": "get_balance", "arguments": "ACC-0001"}.
        not_object = _call("get_balance")
        not_object.arguments = json.dumps(src)
        texts.append((await loop._call_tool(not_object, kwargs, data))[0].text)
        during = unclosed_episodes(live_env.url)
        await loop._close_episode()
        return texts, data.extra_fields["tool_calls"], during

    async def all_trajectories() -> list:
        return await asyncio.gather(*(trajectory(i, r) for i, r in enumerate(rows)))

    results = run(all_trajectories())
    for i, (texts, log, during) in enumerate(results):
        start = json.loads(texts[0])["balance"]
        after = json.loads(texts[2])["balance"]
        assert after == pytest.approx(start - (10.0 + i))  # only this trajectory's transfer
        assert [e["name"] for e in log] == ["get_balance", "transfer_funds", "get_balance",
                                             "no_such_tool", "get_balance", "get_balance"]
        assert [e["ok"] for e in log] == [True, True, True, False, False, False]
        assert "Unknown function" in texts[3] and texts[4].startswith("Error: ")
        assert "ACC-9999" in log[4]["error"] and "must be a JSON object" in texts[5]
        assert isinstance(log[5]["arguments"], str)  # the reward sees arguments that are no object
        assert during >= before + 1
    assert unclosed_episodes(live_env.url) == before  # every episode closed


def test_prefix_replay_and_seed_make_each_episode_start_where_its_row_says(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import make_agent_loop

    async def lookups() -> list[str]:
        """Each turn-1 row's first call (a lookup), made at the start of its own episode."""
        out = []
        for row in lookup_rows(synth_rows):
            loop = make_agent_loop(verl_cfg, tokenizer, verl_tools, llm=None)
            data = _agent_data(row)
            lookup = lookup_call(row)
            response, _, metrics = await loop._call_tool(_call(lookup["name"], **lookup["arguments"]),
                                                         data.tools_kwargs, data)
            assert metrics.get("ok"), response.text
            out.append(response.text)
            await loop._close_episode()
        return out

    first, second = run(lookups()), run(lookups())
    assert first == second  # a pure function of seed + prefix


def test_full_agent_loop_runs_close_episodes_even_when_a_trajectory_fails(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict], live_env: EnvServer
) -> None:
    from prove.train.rollout import oracle_script, run_rollouts

    rows = list(synth_rows)
    scripts = [oracle_script(r, parallel=i % 2 == 0) for i, r in enumerate(rows)]
    fail_at = [None] * len(rows)
    fail_at[0] = 1  # generation dies after the first tool round
    before = unclosed_episodes(live_env.url)
    outputs = run(run_rollouts(verl_cfg, tokenizer, verl_tools, rows, scripts, fail_at))
    assert isinstance(outputs[0], RuntimeError)
    assert unclosed_episodes(live_env.url) == before  # closed whatever happened
    for row, out in zip(rows[1:], outputs[1:], strict=True):
        gt = ground_truth(row)
        log = out.extra_fields["tool_calls"]
        assert [(e["name"], e["arguments"]) for e in log] == [(c["name"], c["arguments"]) for c in gt]
        assert all(e["ok"] for e in log)
        text = tokenizer.decode(out.response_ids)
        assert text.count("<tool_response>") == len(gt)


def test_parallel_calls_in_one_turn_run_in_the_order_written(
    verl_cfg: Any, verl_tools: list, tokenizer: Any, synth_rows: list[dict]
) -> None:
    from prove.train.rollout import _call_text, run_rollouts

    row = banking_rows(synth_rows)[0]
    src, dst = transfer_pair(row)
    calls = [{"name": "transfer_funds", "arguments": {"from_account_id": src, "to_account_id": dst,
                                                      "amount": float(a)}} for a in (1, 2, 3, 4)]
    calls.append({"name": "get_balance", "arguments": {"account_id": src}})
    script = ["\n".join(_call_text(c) for c in calls), "Done."]
    [out] = run(run_rollouts(verl_cfg, tokenizer, verl_tools, [row], [script]))
    log = out.extra_fields["tool_calls"]
    assert [e["arguments"].get("amount") for e in log] == [1.0, 2.0, 3.0, 4.0, None]
    text = tokenizer.decode(out.response_ids)
    responses = [json.loads(part.split("</tool_response>")[0])
                 for part in text.split("<tool_response>\n")[1:]]
    assert [r["amount"] for r in responses[:4]] == [1.0, 2.0, 3.0, 4.0]
    assert responses[4]["balance"] == pytest.approx(responses[3]["from_balance"])


def test_tool_reports_missing_episode_rows_clearly() -> None:
    need_verl()
    from prove.train.tool import spec_for

    with pytest.raises(ValueError, match="no PROVE episode"):
        spec_for({"get_balance": {"create_kwargs": {"seed": 3}}})  # rows never key by tool name
    assert spec_for({"prove": {"create_kwargs": {"seed": 3, "prefix": "[]"}}}).seed == 3


def test_tool_takes_its_schema_only_from_the_generated_yaml_key(tool_yaml: Path) -> None:
    """VERL's `tool_schema` key would reach the tool already stripped of items/nested properties:
    the tool refuses it rather than offering a poorer schema."""
    import yaml
    from verl.tools.schemas import OpenAIFunctionToolSchema

    from prove.train.tool import ProveTool

    entry = yaml.safe_load(tool_yaml.read_text())["tools"][0]["config"]
    schema = json.loads(entry["schema"])
    assert ProveTool(entry).name == schema["function"]["name"]
    with pytest.raises(ValueError, match="config.schema"):
        ProveTool({**entry, "schema": None}, OpenAIFunctionToolSchema.model_validate(schema))
    with pytest.raises(ValueError, match="config.schema"):
        ProveTool(entry, OpenAIFunctionToolSchema.model_validate(schema))


def test_launch_serves_checks_tools_then_runs_the_trainer(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, rl_parquet: Path
) -> None:
    """`prove train` without --dry-run: real servers on loopback, checked, then the command runs.
    The trainer process is replaced by a recorder: this test is about serving, checking and the
    command line; VERL's GRPO step itself runs on CPU elsewhere (prove.train.cpu's tests)."""
    import dataclasses
    import io

    from prove.env.launch import free_port
    from prove.train import launch as launch_mod
    from prove.train.config import DataPaths, load_train_config

    cfg = load_train_config("qwen3-4b")
    cfg = dataclasses.replace(cfg, env=dataclasses.replace(cfg.env, port=free_port(), workers=2),
                              data=DataPaths(rl_train=str(rl_parquet), rl_val=str(rl_parquet)))
    seen: dict[str, Any] = {}

    def fake_run(cmd: list[str], env: dict[str, str], paths: Any, out: Any = None) -> int:
        seen["cmd"], seen["health"] = cmd, [json.loads(urllib.request.urlopen(
            f"{u}/control/health", timeout=5).read()) for u in cfg.env.urls]
        with pytest.raises(RuntimeError, match="different tool set"):
            launch_mod.check_servers(cfg.env.urls, ["get_balance"])
        return 0

    from prove.train import preflight as preflight_mod

    monkeypatch.setattr(launch_mod, "_run", fake_run)
    # What this test skips: the GPU check (this machine has none), the tokenizer check (Qwen's
    # tokenizer is not on disk here) and recording the model (the recorder trains nothing).
    monkeypatch.setattr(launch_mod, "check_device", lambda cfg: None)
    monkeypatch.setattr(preflight_mod, "preflight", lambda *a, **k: None)
    monkeypatch.setattr(launch_mod, "_record_model", lambda *a, **k: None)
    monkeypatch.setattr(launch_mod, "_push_identity", lambda *a, **k: None)
    out = io.StringIO()
    # keep_shards: the recorder writes no model.json, so there is no final folder to prune around
    assert launch_mod.launch(cfg, "lr_high", results_dir=tmp_path, out=out, keep_shards=True) == 0
    assert "environment up" in out.getvalue() and "-m" in seen["cmd"]
    assert all(h["ok"] and h["tools"] > 300 for h in seen["health"])
    assert f"actor_rollout_ref.actor.optim.lr={cfg.lr_sweep['lr_high']!r}" in seen["cmd"]
