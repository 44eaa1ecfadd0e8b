"""The SkyRL-Gym adapter (``prove.integrations.skyrl``) driven by skyrl_gym's own ``make`` and step loop
against the live `prove serve`, with a scripted model (the row's ground-truth calls in hermes format).

    .venv/bin/python -m pytest tests/integrations/test_skyrl.py -q
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("skyrl_gym")

import skyrl_gym  # noqa: E402

from prove.env.launch import EnvServer  # noqa: E402
from prove.integrations.skyrl import check_dataset, main, register_prove, skyrl_dataset  # noqa: E402
from prove.integrations.turn import TurnRow  # noqa: E402
from prove.reward import outcome_of, score_turn  # noqa: E402
from prove.rows import read_rows  # noqa: E402


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from prove.train.chat_template import load_tokenizer

    return load_tokenizer()


def _call_text(call: dict[str, Any]) -> str:
    args = call["arguments"]
    body = {"name": call["name"], "arguments": json.loads(args) if isinstance(args, str) else args}
    return f"I'll do that.\n<tool_call>\n{json.dumps(body)}\n</tool_call>"


def _extras(dataset: Path) -> dict[str, Any]:
    """What SkyRL's PromptDataset hands the environment: the row's columns but prompt and env_class."""
    row = read_rows(dataset)[0]
    return {k: v for k, v in row.items() if k not in ("prompt", "env_class")}


def test_the_dataset_carries_the_tools_as_the_template_renders_them_and_bad_rows_are_named(
        synth_rows: list[dict], env_server: EnvServer, tokenizer: Any, tmp_path: Path) -> None:
    register_prove(env_server.url)
    raw = synth_rows[0]
    path = skyrl_dataset([raw], tmp_path / "skyrl.parquet", tokenizer)
    assert check_dataset(path) == 1
    back = read_rows(path)[0]
    assert back["env_class"] == "prove" and back["extra_info"] == raw["extra_info"]
    row = TurnRow.from_row(raw)
    skyrl_text = tokenizer.apply_chat_template([{k: v for k, v in m.items() if v is not None} for m in back["prompt"]],
                                               tokenize=False)  # how SkyRL renders it: no tools=
    assert skyrl_text == tokenizer.apply_chat_template(row.chat(), tools=list(row.tools), tokenize=False)

    with pytest.raises(ValueError, match="does not offer"):
        check_dataset([{**back, "prompt": [dict(back["prompt"][0], content="hi"), *back["prompt"][1:]]}])
    with pytest.raises(ValueError, match="env_class is 'gsm8k'"):
        check_dataset([{**back, "env_class": "gsm8k"}])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['extra_info'\]"):
        check_dataset([{k: v for k, v in back.items() if k != "extra_info"}])
    with pytest.raises(ValueError, match="not registered with skyrl_gym"):
        check_dataset(path, env_id="prove-unregistered")
    with pytest.raises(ValueError, match="unknown reward config 'nope'"):
        register_prove(env_server.url, reward="nope")


def test_the_command_writes_a_checked_dataset_of_every_row(rows_parquet: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = main(["--rows", str(rows_parquet), "--out", str(tmp_path / "skyrl" / "train.parquet")])
    n = len(read_rows(rows_parquet))
    assert check_dataset(path) == n and f"{n} rows -> {path}" in capsys.readouterr().out


def test_skyrl_gym_loop_ground_truth_scores_one_as_prove_reward_and_episodes_never_share_state(
        writing_row: dict[str, Any], env_server: EnvServer, tokenizer: Any, tmp_path: Path) -> None:
    raw = writing_row
    register_prove(env_server.url, reward="outcome")  # an ablation that weighs the state verdict
    extras = {**_extras(skyrl_dataset([raw], tmp_path / "skyrl.parquet", tokenizer)), "max_turns": 8}
    row = TurnRow.from_row(raw)
    right = skyrl_gym.make("prove", env_config={}, extras=extras)
    idle = skyrl_gym.make("prove", env_config={}, extras=extras)
    assert right.turn.episode_id != idle.turn.episode_id

    prompt, _ = right.init([])
    rewards = []
    for call in row.ground_truth["calls"]:
        out = right.step(_call_text(call))
        assert not out["done"] and out["observations"][0]["role"] == "tool"
        assert not out["observations"][0]["content"].startswith("Error")
        rewards.append(out["reward"])
    last = right.step("Done: all set.")
    assert last["done"] and last["observations"] == [] and rewards == [0.0] * len(rewards)

    idle_out = idle.step("I can't help with that.")  # no call: the episode ends at once
    metrics, idle_metrics = right.get_metrics(), idle.get_metrics()
    right.close()
    idle.close()

    log = metrics["prove/log"]
    expected = score_turn(log, row.ground_truth, list(row.tools), "outcome",
                          outcome_of(metrics["prove/effect"], row.expected_effect))
    assert last["reward"] == pytest.approx(1.0) == expected["score"] == metrics["prove/score"]
    assert [e["name"] for e in log] == [c["name"] for c in row.ground_truth["calls"]] and all(e["ok"] for e in log)
    assert metrics["prove/effect"] == row.expected_effect != idle_metrics["prove/effect"]  # b never saw a's calls
    assert idle_out["done"] and idle_out["reward"] == idle_metrics["prove/score"] < last["reward"]
    assert idle_metrics["prove/log"] == [] and idle_metrics["prove/outcome"] == 0.0


def test_malformed_calls_and_the_max_turns_turn_are_logged_failed_as_prove_rollouts_log_them(
        synth_rows: list[dict], env_server: EnvServer, tokenizer: Any, tmp_path: Path) -> None:
    raw = next(r for r in synth_rows if TurnRow.from_row(r).ground_truth["calls"])
    register_prove(env_server.url)
    extras = {**_extras(skyrl_dataset([raw], tmp_path / "skyrl.parquet", tokenizer)), "max_turns": 2}
    row = TurnRow.from_row(raw)
    env = skyrl_gym.make("prove", env_config={}, extras=extras)
    first = env.step('<tool_call>\n{"name": "' + row.tool_names[0] + '", "arguments": "[1]"}\n</tool_call>'
                     "<tool_call>\nnot json\n</tool_call>")
    assert [o["content"].startswith("Error:") for o in first["observations"]] == [True, True]
    second = env.step(_call_text(row.ground_truth["calls"][0]))  # the max_turns turn: not run
    metrics = env.get_metrics()
    env.close()
    log = metrics["prove/log"]
    assert second["done"] and [e["ok"] for e in log] == [False] * 3
    assert "max_turns=2" in log[2]["error"] and log[2]["name"] == row.ground_truth["calls"][0]["name"]
    assert second["reward"] == score_turn(log, row.ground_truth, list(row.tools), "prove",
                                          outcome_of(metrics["prove/effect"], row.expected_effect))["score"]
    with pytest.raises(RuntimeError, match="has ended"):
        env.step("again")
