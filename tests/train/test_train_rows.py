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
    turn_rows,
)


def _verl_data_config(**extra: Any) -> Any:
    from omegaconf import OmegaConf

    return OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 4096,
                             "filter_overlong_prompts": True, "filter_overlong_prompts_workers": 1,
                             "truncation": "error", "return_raw_chat": True, **extra})


def _examples_by_id(synth_examples: list[dict]) -> dict[str, dict]:
    return {e["id"]: e for e in synth_examples}


def test_rows_follow_the_contract(synth_examples: list[dict], synth_rows: list[dict]) -> None:
    """Every row the export wrote is one user turn of one of its examples, as the contract says."""
    examples = _examples_by_id(synth_examples)
    assert len(synth_rows) == sum(len(e["turns"]) for e in synth_examples)
    for example in synth_examples:
        rows = [r for r in synth_rows if r["extra_info"]["example_id"] == example["id"]]
        assert [r["extra_info"]["turn"] for r in rows] == list(range(len(example["turns"])))
    for row in synth_rows:
        example, k = examples[row["extra_info"]["example_id"]], row["extra_info"]["turn"]
        assert tuple(row) == ROW_COLUMNS
        assert row["data_source"] == DATA_SOURCE and row["agent_name"] == AGENT_NAME
        assert row["extra_info"]["kind"] == example["kind"] and row["extra_info"]["split"] == example["split"]
        assert row["prompt"][-1]["role"] == "user"
        assert sum(m["role"] == "user" for m in row["prompt"]) == k + 1
        gt = json.loads(row["reward_model"]["ground_truth"])
        assert gt == {"calls": example["turns"][k]["calls"],
                      "depends_on": example["turns"][k]["depends_on"]}
        spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
        assert spec.seed == example["seed"] and spec.servers == tuple(example["servers"])
        assert list(spec.prefix) == [c for t in example["turns"][:k] for c in t["calls"]]
        names = [t["function"]["name"] for t in json.loads(row["extra_info"]["tools"])]
        assert row["extra_info"]["tool_selection"] == names
        assert json.loads(row["extra_info"]["tools"]) == example["tools"]


def test_the_export_writes_the_rows_turn_rows_makes_each_split_indexed_from_zero(
        synth_export: Path, synth_examples: list[dict]) -> None:
    """Synthesis writes what ``prove.rows.turn_rows`` makes of its examples (the contract both
    stages import), one file per split, each file's rows indexed 0..n-1."""
    for split in ("train", "val"):
        written = pq.read_table(synth_export / f"{split}.parquet").to_pylist()
        made = [r for e in synth_examples if e["split"] == split for r in turn_rows(e, split=split)]
        assert written and [r["extra_info"]["index"] for r in written] == list(range(len(written)))
        for row in made:
            row["extra_info"]["index"] = None
        for row in written:
            row["extra_info"]["index"] = None
        assert written == made


def test_prefix_replay_reaches_the_state_the_conversation_left(synth_examples: list[dict],
                                                              synth_rows: list[dict]) -> None:
    """A later turn's episode, opened from its row, answers like the conversation's own turn: each
    turn's first call, made after the replayed prefix, returns what the conversation's tool message
    holds."""
    examples = _examples_by_id(synth_examples)
    later = [r for r in synth_rows if r["extra_info"]["turn"] >= 1 and json.loads(r["extra_info"]["prefix"])
             and json.loads(r["reward_model"]["ground_truth"])["calls"]]
    assert later
    hub = Hub()
    for row in later:
        example, k = examples[row["extra_info"]["example_id"]], row["extra_info"]["turn"]
        spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
        hub.open("replay", spec.seed, list(spec.prefix))
        call = example["turns"][k]["calls"][0]
        logged = hub.call(call["name"], call["arguments"], episode_id="replay")
        hub.close("replay")
        users = [i for i, m in enumerate(example["messages"]) if m["role"] == "user"]
        tool_messages = [m for m in example["messages"][users[k]:] if m["role"] == "tool"
                         and m["name"] == call["name"] and not m["content"].startswith("Error:")]
        assert logged["ok"] and logged["result"] == json.loads(tool_messages[0]["content"])


def test_parquet_round_trip_keeps_messages(synth_examples: list[dict], rl_parquet: Path) -> None:
    table = pq.read_table(rl_parquet)
    assert table.schema.equals(RL_SCHEMA)
    examples = _examples_by_id(synth_examples)
    rows = table.to_pylist()
    assert any(any(m["tool_calls"] for m in r["prompt"]) for r in rows)  # later turns hold earlier calls
    for row in rows:
        plain = decode_messages(row["prompt"])
        original = examples[row["extra_info"]["example_id"]]["messages"][: len(plain)]
        for got, want in zip(plain, original, strict=True):
            assert got["role"] == want["role"] and got.get("content", "") == (want.get("content") or "")
            if want.get("tool_calls"):
                assert [c["function"]["arguments"] for c in got["tool_calls"]] == \
                       [_arguments(c["function"]["arguments"]) for c in want["tool_calls"]]


def _arguments(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def test_turn_row_rejects_misaligned_examples(synth_examples: list[dict]) -> None:
    example = next(e for e in synth_examples if len(e["turns"]) >= 2)
    bad = {**example, "turns": example["turns"][:1]}
    with pytest.raises(ValueError, match="user messages"):
        turn_row(bad, 0, index=0)
    effects = example["replay"]["turn_effects"]
    assert turn_row(example, 1, index=0)["extra_info"]["expected_effect"] == effects[1]
    short = {**example, "replay": {**example["replay"], "turn_effects": effects[:1]}}
    with pytest.raises(ValueError, match="turn effects"):
        turn_row(short, 0, index=0)


def test_verls_rl_dataset_loads_the_export_with_a_real_tokenizer(rl_parquet: Path, synth_rows: list[dict],
                                                                 tokenizer: Any) -> None:
    need_verl()
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from prove.train.dataset import ProveRLDataset, prompt_length

    lengths = [prompt_length(tokenizer, r) for r in synth_rows]
    limit = max(4096, max(lengths))  # above every row: nothing is filtered
    stock = RLHFDataset(str(rl_parquet), tokenizer, _verl_data_config(filter_overlong_prompts=False))
    ours = ProveRLDataset(str(rl_parquet), tokenizer, _verl_data_config(max_prompt_length=limit))
    assert len(stock) == len(ours) == pq.read_metadata(rl_parquet).num_rows == len(synth_rows)
    # a multi-turn row at turn 1: its prompt holds turn 0's calls and their tool responses
    i = next(i for i, r in enumerate(synth_rows) if r["extra_info"]["kind"] == "multi_turn"
             and r["extra_info"]["turn"] == 1)
    row, item = synth_rows[i], ours[i]
    assert item["tools_kwargs"]["prove"]["create_kwargs"]["seed"] == row["extra_info"]["seed"]
    assert item["extra_info"]["turn"] == 1 and item["index"] == i
    calls = [m for m in item["raw_prompt"] if m.get("tool_calls")]
    assert calls and isinstance(calls[0]["tool_calls"][0]["function"]["arguments"], dict)
    tools = json.loads(item["extra_info"]["tools"])
    text = tokenizer.apply_chat_template(item["raw_prompt"], tools=tools, add_generation_prompt=True,
                                         tokenize=False)
    offered = row["extra_info"]["tool_selection"]
    assert "<tools>" in text and all(f'"name": "{name}"' in text for name in offered)
    assert "<tool_call>" in text and "<tool_response>" in text and text.endswith("<|im_start|>assistant\n")
    # The GGUF's own template would drop all of that; ours keeps the prompt append-only.
    n = lengths[i]
    assert 500 < n <= limit
    tight = ProveRLDataset(str(rl_parquet), tokenizer, _verl_data_config(max_prompt_length=n - 1))
    assert len(tight) < len(ours)  # the filter counts the row's own offered tools


def test_verls_sft_dataset_loads_the_sft_export(sft_parquet: Path, tokenizer: Any) -> None:
    need_verl_sft()
    from prove.train.compose import check_variant
    from prove.train.config import load_train_config
    from prove.train.sft_dataset import ProveSFTDataset

    config = check_variant(load_train_config("qwen3-4b"), "sft").data  # the paper's SFT data config
    ds = ProveSFTDataset(str(sft_parquet), tokenizer, config)
    first = pq.read_table(sft_parquet).to_pylist()[0]  # the first example: a multi-turn conversation
    called = [c["function"]["name"] for m in first["messages"] for c in m["tool_calls"] or []]
    assert first["kind"] == "multi_turn" and called
    item = ds[0]
    ids, mask = item["input_ids"], item["loss_mask"]
    assert ids.shape == mask.shape and 0 < int(mask.sum()) < len(ids)
    trained = tokenizer.decode(ids[mask.bool()])
    assert "<tool_call>" in trained and all(name in trained for name in called)  # assistant calls are learned
    assert "<tools>" not in trained and "<tool_response>" not in trained  # prompts are not


def test_a_conversation_too_long_for_sft_is_cut_after_its_latest_closing_reply_that_fits() -> None:
    from prove.rows import encode_message
    from prove.train.data import fitting_prefix

    call = {"id": "c1", "type": "function", "function": {"name": "list_accounts", "arguments": "{}"}}
    convo = [encode_message(m) for m in (
        {"role": "system", "content": "s"}, {"role": "user", "content": "which account?"},
        {"role": "assistant", "content": "Which one do you mean?"},            # closes turn 1: end 3
        {"role": "user", "content": "savings"},
        {"role": "assistant", "content": "", "tool_calls": [call]},            # mid-turn: never an end
        {"role": "tool", "tool_call_id": "c1", "content": "{}"},
        {"role": "assistant", "content": "Your savings account holds $10."},   # closes turn 2: end 7
        {"role": "user", "content": "thanks"}, {"role": "assistant", "content": "You're welcome."})]
    assert fitting_prefix(convo, lambda ms: True) == 7           # the whole conversation is not a cut
    assert fitting_prefix(convo, lambda ms: len(ms) <= 6) == 3   # never inside a turn's calls
    assert fitting_prefix(convo, lambda ms: len(ms) <= 2) is None
