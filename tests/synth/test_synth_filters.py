"""Filters reject what they should: too many failed calls, a sensitive value with no provenance."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from prove.env.hub import Hub
from prove.synth.evidence import call_stats, provenance, text_has_value
from prove.synth.pipeline import SynthResult
from prove.synth.validate import check_example


def _examples(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]


def test_kept_examples_pass_every_filter(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    hub = Hub()
    for ex in _examples(out):
        assert check_example(ex, hub) == (None, ""), ex["id"]
        n, e = call_stats(ex)
        assert ex["replay"]["error_rate"] == (round(e / n, 4) if n else 0.0) < 0.3
        records, missing = provenance(ex, hub.registry)
        assert not missing and records == ex["provenance"]


def test_error_rate_filter_rejects_a_noisy_conversation(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    ex = copy.deepcopy(next(e for e in _examples(out) if e["kind"] == "multi_turn"))
    at = max(i for i, m in enumerate(ex["messages"]) if m["role"] == "user") + 1
    noise = []
    for j in range(8):
        cid = f"call_9{j:02d}"
        noise += [{"role": "assistant", "content": "", "tool_calls": [
                      {"id": cid, "type": "function",
                       "function": {"name": "nope", "arguments": "{}"}}]},
                  {"role": "tool", "tool_call_id": cid, "name": "nope",
                   "content": "Error: unknown tool 'nope'"}]
    ex["messages"][at:at] = noise
    reason, detail = check_example(ex, Hub())
    assert reason == "error_rate", detail


def test_provenance_filter_rejects_an_invented_value(small_run: tuple[SynthResult, Path]) -> None:
    _, out = small_run
    hub = Hub()
    ex = next(e for e in _examples(out) if any(p["source"] == "user" for p in e["provenance"]))
    rec = next(p for p in ex["provenance"] if p["source"] == "user")
    forged = copy.deepcopy(ex)
    for m in forged["messages"]:
        if m["role"] == "user":
            m["content"] = m["content"].replace(str(rec["value"]), "the usual one")
    assert not any(text_has_value(m["content"], rec["value"])
                   for m in forged["messages"] if m["role"] == "user")
    if any(p["value"] == rec["value"] and p["source"] == "result" for p in
           provenance(forged, hub.registry)[0]):
        return  # the value is also in an earlier tool result: legitimately grounded
    reason, detail = check_example(forged, hub)
    assert reason == "provenance", detail
    assert str(rec["param"]) in detail


def test_value_matching_respects_token_boundaries() -> None:
    assert text_has_value("use ACC-0001.", "ACC-0001")
    assert not text_has_value("use ACC-00012", "ACC-0001")
    assert text_has_value("pay 1,200.50 now", 1200.5)
    assert not text_has_value("pay 1200.51", 1200.5)
    assert text_has_value("mail Ana.Ito@x.example", "ana.ito@x.example")
