"""Replay: every kept example, from its JSONL line alone on a fresh hub, reproduces its results and
state hash; training rows carry the prefix that restores each turn's state; ground truth earns a
full reward."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyarrow.parquet as pq

from prove.env.effects import EMPTY_EFFECT, effect_hash
from prove.env.hub import Hub
from prove.reward import score_turn
from prove.synth.evidence import ground_truth_calls
from prove.synth.pipeline import SynthResult
from prove.synth.validate import check_example, offered_problems, replay_example


def _examples(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]


def test_every_kept_example_replays_from_its_line_alone(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    hub = Hub()  # a fresh server: nothing shared with the generating process
    for line in (out / "examples.jsonl").read_text().splitlines():
        example = json.loads(line)
        report = replay_example(example, hub)
        assert report.ok, (example["id"], report.reason, report.mismatches)
        assert report.state_hash == example["replay"]["state_hash"]


def test_a_tampered_call_fails_replay(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    hub = Hub()
    example = next(e for e in _examples(out) if any(
        hub.registry.tool(c["name"]).write for _, _, c in ground_truth_calls(e)))
    forged = copy.deepcopy(example)
    call = next(c for _, _, c in ground_truth_calls(forged) if hub.registry.tool(c["name"]).write)
    key = sorted(call["arguments"])[0]
    call["arguments"][key] = "FORGED-0000" if isinstance(call["arguments"][key], str) else 987654
    assert not replay_example(forged, hub).ok
    forged = copy.deepcopy(example)
    forged["replay"]["state_hash"] = "0" * 64
    assert replay_example(forged, hub).reason == "hash_mismatch"


def test_every_example_offers_its_servers_tools_and_its_recorded_distractors(
        small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    hub = Hub()
    examples = _examples(out)
    assert all(offered_problems(e, hub.registry) == [] for e in examples)
    forged = copy.deepcopy(examples[0])
    forged["tools"].append(next(t.openai_schema() for t in hub.registry.tools.values()
                                if t.server not in forged["servers"]))
    assert check_example(forged, hub)[0] == "offered_tools"


def test_replay_records_each_turns_effect_and_reads_leave_none(
        small_run: tuple[SynthResult, Path]) -> None:
    """Each example records the effect on the records after each turn (cumulative, hashed) and the
    final diff; a turn of reads leaves the effect as it was; replay recomputes them."""
    _, out = small_run
    hub = Hub()
    examples = _examples(out)
    for example in examples:
        replay = example["replay"]
        assert len(replay["turn_effects"]) == len(example["turns"])
        assert replay["effect_hash"] == effect_hash(replay["effect"])
        assert replay["turn_effects"][-1] == replay["effect_hash"]
        before = EMPTY_EFFECT
        for turn, after in zip(example["turns"], replay["turn_effects"], strict=True):
            if not any(hub.registry.tool(c["name"]).write for c in turn["calls"]):
                assert after == before, example["id"]  # reads never change the effect
            before = after
    wrote = next(e for e in examples if e["replay"]["effect"])
    assert wrote["replay"]["effect_hash"] != EMPTY_EFFECT
    assert set(wrote["replay"]["effect"]) <= set(wrote["servers"])
    forged = copy.deepcopy(wrote)
    forged["replay"]["turn_effects"][-1] = EMPTY_EFFECT
    assert replay_example(forged, hub).reason == "effect_mismatch"


def test_rows_one_per_user_turn_with_the_earlier_calls_as_prefix(
        small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    examples = {e["id"]: e for e in _examples(out)}
    rows = pq.read_table(out / "train.parquet").to_pylist() + pq.read_table(out / "val.parquet").to_pylist()
    assert len(rows) == sum(len(e["turns"]) for e in examples.values())
    hub = Hub()
    for row in rows:
        info = row["extra_info"]
        example = examples[info["example_id"]]
        k = info["turn"]
        earlier = [{"name": c["name"], "arguments": c["arguments"]}
                   for t in example["turns"][:k] for c in t["calls"]]
        assert json.loads(info["prefix"]) == earlier
        assert row["prompt"][-1]["role"] == "user"
        assert sum(m["role"] == "user" for m in row["prompt"]) == k + 1
        episode = f"row/{info['example_id']}/{k}"
        logged = hub.open(episode, info["seed"], earlier)
        assert all(c["ok"] for c in logged)
        # the row's expected effect is where its episode ends after the turn's ground truth: the
        # prefix and the turn's calls, read over every server the episode touched
        for call in json.loads(row["reward_model"]["ground_truth"])["calls"]:
            assert hub.call(call["name"], call["arguments"], episode_id=episode)["ok"]
        assert info["expected_effect"] == example["replay"]["turn_effects"][k] \
            == effect_hash(hub.effect(episode))
        hub.close(episode)


def test_ground_truth_earns_the_full_reward(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    for row in pq.read_table(out / "train.parquet").to_pylist():
        gt = json.loads(row["reward_model"]["ground_truth"])
        pred = [{**c, "ok": True} for c in gt["calls"]]
        scored = score_turn(pred, gt, row["extra_info"]["tools"])
        assert scored["score"] == 1.0, (row["extra_info"]["example_id"], scored)
