"""The training-row contract, its parquet form, and loading it through VERL's dataset classes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from train_helpers import need_verl, need_verl_sft

from prove.env.hub import Hub
from prove.rows import (
    AGENT_NAME,
    DATA_SOURCE,
    RL_SCHEMA,
    ROW_COLUMNS,
    decode_messages,
    episode_spec,
    turn_row,
)


def _verl_data_config(**extra: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 4096,
                             "filter_overlong_prompts": True, "filter_overlong_prompts_workers": 1,
                             "truncation": "error", "return_raw_chat": True, **extra})


def test_rows_follow_the_contract(demo_examples: list[dict], demo_rows: list[dict]) -> None:
    example = demo_examples[0]
    rows = [r for r in demo_rows if r["extra_info"]["example_id"] == example["id"]]
    assert [r["extra_info"]["turn"] for r in rows] == [0, 1]
    for k, row in enumerate(rows):
        assert tuple(row) == ROW_COLUMNS
        assert row["data_source"] == DATA_SOURCE and row["agent_name"] == AGENT_NAME
        assert row["prompt"][-1]["role"] == "user"
        assert sum(m["role"] == "user" for m in row["prompt"]) == k + 1
        gt = json.loads(row["reward_model"]["ground_truth"])
        assert gt == {"calls": example["turns"][k]["calls"],
                      "depends_on": example["turns"][k]["depends_on"]}
        spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
        assert spec.seed == example["seed"] and spec.servers == ("banking",)
        assert list(spec.prefix) == [c for t in example["turns"][:k] for c in t["calls"]]
        names = [t["function"]["name"] for t in json.loads(row["extra_info"]["tools"])]
        assert row["extra_info"]["tool_selection"] == names
    assert [r["extra_info"]["index"] for r in demo_rows] == list(range(len(demo_rows)))


def test_prefix_replay_reaches_the_state_the_conversation_left(demo_examples: list[dict], demo_rows: list[dict]) -> None:
    """Turn 1's episode, opened from its row, answers like the conversation's own turn 1."""
    row = next(r for r in demo_rows if r["extra_info"]["turn"] == 1)
    example = next(e for e in demo_examples if e["id"] == row["extra_info"]["example_id"])
    spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
    hub = Hub()
    hub.open("replay", spec.seed, list(spec.prefix))
    call = example["turns"][1]["calls"][0]
    logged = hub.call(call["name"], call["arguments"], episode_id="replay")
    tool_messages = [m for m in example["messages"] if m["role"] == "tool" and m["name"] == call["name"]]
    assert logged["result"] == json.loads(tool_messages[0]["content"])


def test_parquet_round_trip_keeps_messages(demo_examples: list[dict], rl_parquet: Path) -> None:
    table = pq.read_table(rl_parquet)
    assert table.schema.equals(RL_SCHEMA)
    first = table.to_pylist()[1]  # turn 1 of the first example: has earlier tool calls
    plain = decode_messages(first["prompt"])
    original = demo_examples[0]["messages"][: len(plain)]
    for got, want in zip(plain, original, strict=True):
        assert got["role"] == want["role"] and got.get("content", "") == (want.get("content") or "")
        if want.get("tool_calls"):
            assert [c["function"]["arguments"] for c in got["tool_calls"]] == \
                   [c["function"]["arguments"] for c in want["tool_calls"]]


def test_turn_row_rejects_misaligned_examples(demo_examples: list[dict]) -> None:
    bad = {**demo_examples[0], "turns": demo_examples[0]["turns"][:1]}
    with pytest.raises(ValueError, match="user messages"):
        turn_row(bad, 0, index=0)


def test_verls_rl_dataset_loads_the_export_with_a_real_tokenizer(rl_parquet: Path, tokenizer: Any) -> None:
    need_verl()
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from prove.train.dataset import ProveRLDataset, prompt_length

    stock = RLHFDataset(str(rl_parquet), tokenizer, _verl_data_config(filter_overlong_prompts=False))
    ours = ProveRLDataset(str(rl_parquet), tokenizer, _verl_data_config())
    assert len(stock) == len(ours) == pq.read_metadata(rl_parquet).num_rows
    item = ours[1]
    assert item["tools_kwargs"]["prove"]["create_kwargs"]["seed"] == 7
    assert item["extra_info"]["turn"] == 1 and item["index"] == 1
    calls = [m for m in item["raw_prompt"] if m.get("tool_calls")]
    assert calls and isinstance(calls[0]["tool_calls"][0]["function"]["arguments"], dict)
    tools = json.loads(item["extra_info"]["tools"])
    text = tokenizer.apply_chat_template(item["raw_prompt"], tools=tools, add_generation_prompt=True,
                                         tokenize=False)
    assert "<tools>" in text and '"name": "transfer_funds"' in text
    assert "<tool_call>" in text and "<tool_response>" in text and text.endswith("<|im_start|>assistant\n")
    # The GGUF's own template would drop all of that; ours keeps the prompt append-only.
    n = prompt_length(tokenizer, pq.read_table(rl_parquet).to_pylist()[1])
    assert 500 < n < 4096
    tight = ProveRLDataset(str(rl_parquet), tokenizer, _verl_data_config(max_prompt_length=n - 1))
    assert len(tight) < len(ours)  # the filter counts the row's own offered tools


def test_verls_sft_dataset_loads_the_sft_export(sft_parquet: Path, tokenizer: Any) -> None:
    need_verl_sft()
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config
    from prove.train.sft_dataset import ProveSFTDataset

    config = check_variant(load_train_config("qwen3-4b"), "sft").data  # the paper's SFT data config
    ds = ProveSFTDataset(str(sft_parquet), tokenizer, config)
    item = ds[0]
    ids, mask = item["input_ids"], item["loss_mask"]
    assert ids.shape == mask.shape and 0 < int(mask.sum()) < len(ids)
    trained = tokenizer.decode(ids[mask.bool()])
    assert "<tool_call>" in trained and "transfer_funds" in trained  # assistant calls are learned
    assert "<tools>" not in trained and "<tool_response>" not in trained  # prompts are not
