"""One person per conversation is enforced (issue 28 follow-up): a conversation whose calls act as
two users, or whose user states an id other than the one they act as, is rejected as "two_people".

    .venv/bin/python -m pytest tests/synth/test_two_people.py -q
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from prove.env.hub import Hub
from prove.env.registry import load_registry
from prove.synth.quality import acting_ids, two_people
from prove.synth.validate import check_example


def _acting(small_run: tuple[Any, Path]) -> tuple[dict[str, Any], str, str]:
    """A kept conversation whose calls act as someone: (it, the acting key, the id)."""
    _, out = small_run
    registry = load_registry()
    for line in (out / "examples.jsonl").read_text().splitlines():
        example = json.loads(line)
        for key, values in sorted(acting_ids(example, registry).items()):
            value = json.loads(next(iter(values)))
            if isinstance(value, str) and "-" in value:
                return example, key, value
    raise AssertionError("no kept conversation acts as anyone")


def test_a_user_who_states_another_id_than_the_one_they_act_as_is_rejected(small_run: tuple[Any, Path]) -> None:
    example, key, value = _acting(small_run)
    hub = Hub(load_registry().subset(example["servers"]))
    assert two_people(example, hub.registry) is None
    assert check_example(example, hub)[0] is None  # kept as it is
    other = value.split("-")[0] + "-9999"
    forged = copy.deepcopy(example)
    last = max(i for i, m in enumerate(forged["messages"]) if m["role"] == "user")
    forged["messages"][last]["content"] += f" My user ID is {other}."
    reason, detail = check_example(forged, hub)
    assert reason == "two_people" and other in detail and value in detail and key in detail


def test_calls_that_act_as_two_users_are_rejected(small_run: tuple[Any, Path]) -> None:
    example, key, value = _acting(small_run)
    registry = load_registry()
    param = key.split(":", 1)[1]
    forged = copy.deepcopy(example)
    call = next(c for t in forged["turns"] for c in t["calls"] if param in registry.tool(c["name"]).sensitive
                and (c.get("arguments") or {}).get(param) == value)
    again = copy.deepcopy(call)
    again["arguments"][param] = value.split("-")[0] + "-9998"
    forged["turns"][-1]["calls"].append(again)  # the same call, later, as someone else
    found = two_people(forged, registry)
    assert found is not None and "-9998" in found


def test_a_smoke_run_counts_two_people_among_its_rejections(small_run: tuple[Any, Path]) -> None:
    """Validation and the card agree: every kept conversation is one person."""
    _, out = small_run
    registry = load_registry()
    kept = [json.loads(line) for line in (out / "examples.jsonl").read_text().splitlines()]
    assert [e["id"] for e in kept if two_people(e, registry)] == []


def test_a_value_only_the_system_message_shows_is_not_grounded(small_run: tuple[Any, Path]) -> None:
    """What `machine._system` says: shown context grounds nothing; a value the user said moved into
    the system message fails provenance."""
    from prove.synth.evidence import provenance

    _, out = small_run
    registry = load_registry()
    for line in (out / "examples.jsonl").read_text().splitlines():
        example = json.loads(line)
        records, missing = provenance(example, registry)
        results = " ".join(m["content"] for m in example["messages"] if m["role"] == "tool")
        said = [r for r in records if r["source"] == "user" and isinstance(r["value"], str)
                and len(r["value"]) > 4 and r["value"] not in results]
        if missing or not said:
            continue
        value = said[0]["value"]
        forged = copy.deepcopy(example)
        for m in forged["messages"]:
            if m["role"] == "user":
                m["content"] = m["content"].replace(value, "it")
            elif m["role"] == "system":
                m["content"] += f"\nKnown: {value}"
        assert any(r["value"] == value for r in provenance(forged, registry)[1]), value
        return
    raise AssertionError("no kept example grounds a value in the user's words")
