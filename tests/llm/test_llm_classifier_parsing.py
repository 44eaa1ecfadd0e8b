"""LLM classifier without a model: answer parsing, cache keys, failed requests (pytest tests/llm)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from llm_tiny_tools import ARCHIVE, SEARCH

from prove.env.launch import free_port
from prove.graph.cache import JudgementCache, pair_key
from prove.graph.llm_classifier import (
    PROMPT_VERSION,
    LLMClassifier,
    MalformedAnswer,
    build_messages,
    parse_answer,
)


@pytest.mark.parametrize("text, expected", [
    ('{"relation": "explicit", "argument": "note_id", "reason": "ids"}', ("explicit", "note_id", "ids")),
    ('Sure!\n```json\n{"relation": "EXPLICIT", "argument": " note_id ", "reason": "x"}\n```',
     ("explicit", "note_id", "x")),
    ('{"note": 1} then {"relation": "none", "argument": "query"}', ("none", None, "")),
    ('{"relation": "none", "reason": ["not", "a", "string"]}', ("none", None, "")),
    ('{"relation": "explicit", "argument": "note_id", "reason": "search_notes returns',
     ("explicit", "note_id", "(answer cut off)")),
    ('{"relation": "implicit", "argument": null', None),
])
def test_parse_valid_answers(text: str, expected: tuple | None) -> None:
    if expected is None:  # implicit from a write: archive_note -> search_notes
        assert parse_answer(text, ARCHIVE, SEARCH) == ("implicit", None, "(answer cut off)")
    else:
        assert parse_answer(text, SEARCH, ARCHIVE) == expected


@pytest.mark.parametrize("text, a, b, problem", [
    ("", SEARCH, ARCHIVE, "empty"),
    ("B depends on A in the following way", SEARCH, ARCHIVE, "no JSON object"),
    ('{"relation": "explicit", "argument": "query"', SEARCH, ARCHIVE, "not a parameter"),
    ('{"relation": "expl', SEARCH, ARCHIVE, "no JSON object"),
    ('"relation": "none"', SEARCH, ARCHIVE, "no JSON object"),
    ('{"relation": "maybe"}', SEARCH, ARCHIVE, "not one of"),
    ('{"relation": "explicit", "argument": "id"}', SEARCH, ARCHIVE, "not a parameter of archive_note"),
    ('{"relation": "explicit"}', SEARCH, ARCHIVE, "not a parameter"),
    ('{"relation": "implicit"}', SEARCH, ARCHIVE, "read-only"),
])
def test_parse_rejects_malformed_answers(text: str, a, b, problem: str) -> None:
    with pytest.raises(MalformedAnswer, match=problem):
        parse_answer(text, a, b)


def test_prompt_holds_both_tools() -> None:
    msgs = build_messages(SEARCH, ARCHIVE)
    assert msgs[0]["role"] == "system" and msgs[-1]["role"] == "user"
    last = msgs[-1]["content"]
    for needle in ("search_notes", "archive_note", "read-only", "write", "note_id: string (required)",
                   "notes[].note_id", "Find notes containing some words."):
        assert needle in last


def test_cache_key_and_persistence(tmp_path: Path) -> None:
    key = pair_key(SEARCH, ARCHIVE, "m", PROMPT_VERSION)
    assert key == pair_key(SEARCH, ARCHIVE, "m", PROMPT_VERSION)
    assert key != pair_key(ARCHIVE, SEARCH, "m", PROMPT_VERSION)
    assert key != pair_key(SEARCH, ARCHIVE, "other-model", PROMPT_VERSION)
    assert key != pair_key(SEARCH, ARCHIVE, "m", PROMPT_VERSION + "x")
    edited = dataclasses.replace(ARCHIVE, description="Archive a note forever.")
    assert key != pair_key(SEARCH, edited, "m", PROMPT_VERSION)
    path = tmp_path / "c.jsonl"
    cache = JudgementCache(path)
    cache.put(key, {"relation": "none"})
    with path.open("a") as fh:
        fh.write('{"key": "half-written\n')
    again = JudgementCache(path)
    assert len(again) == 1 and again.get(key) == {"relation": "none"}


def test_unreachable_endpoint_gives_none_and_is_not_cached(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    clf = LLMClassifier(url, "m", cache=tmp_path / "c.jsonl", max_tries=1, request_timeout=5)
    [j] = asyncio.run(clf.classify([(SEARCH, ARCHIVE)]))
    assert j.relation == "none" and j.reason.startswith("request failed after 1 tries")
    assert clf.stats.errors == 1 and len(JudgementCache(tmp_path / "c.jsonl")) == 0
