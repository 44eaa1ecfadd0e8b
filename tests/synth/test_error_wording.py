"""Rewording every tool error changes no plan: the smoke synthesis run twice, once with every error
message the servers, the tool validation and the hub give reworded, yields the same data once the
error text itself is masked (synthesis reads errors only through their structured detail)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prove.env.errors import ToolError
from prove.env.hub import Hub
from prove.synth.pipeline import SynthConfig, synthesize

MASK = "<error text>"


def reword(message: str) -> str:
    """Same facts, other words: the words in reverse order (no pattern of the original survives)."""
    return "reworded: " + " ".join(reversed(message.split()))


def _masked(obj: Any, key: str | None = None) -> Any:
    """`obj` with every error text replaced: tool messages that report an error, and the `error`
    and `detail` strings of transitions and rejections (they quote the error)."""
    if isinstance(obj, dict):
        if obj.get("role") == "tool" and str(obj.get("content", "")).startswith("Error: "):
            return {**obj, "content": MASK}
        return {k: _masked(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_masked(v) for v in obj]
    if isinstance(obj, str) and key in ("error", "detail"):
        return MASK
    return obj


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    cfg = SynthConfig.from_profile("smoke", workers=1)
    plain = tmp_path_factory.mktemp("plain")
    synthesize(cfg, plain)
    reworded = tmp_path_factory.mktemp("reworded")
    original_init, original_unknown = ToolError.__init__, Hub._unknown_tool

    def init(self: ToolError, message: str, **facts: Any) -> None:
        original_init(self, reword(message), **facts)

    def unknown(self: Hub, name: Any, server: str | None) -> tuple[str, list[str]]:
        text, close = original_unknown(self, name, server)
        return reword(text), close

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ToolError, "__init__", init)
        mp.setattr(Hub, "_unknown_tool", unknown)
        synthesize(cfg, reworded)
    return plain, reworded


def test_the_rewording_reaches_the_data(two_runs: tuple[Path, Path]) -> None:
    plain, reworded = two_runs
    errors = [m["content"] for ex in _lines(reworded / "examples.jsonl") for m in ex["messages"]
              if m["role"] == "tool" and m["content"].startswith("Error: ")]
    assert len(errors) > 20  # recovery turns show errors...
    assert all(e.startswith("Error: reworded: ") for e in errors)  # ...all of them reworded
    assert (plain / "examples.jsonl").read_bytes() != (reworded / "examples.jsonl").read_bytes()


def test_rewording_every_error_leaves_the_data_unchanged_but_for_the_error_text(
        two_runs: tuple[Path, Path]) -> None:
    plain, reworded = two_runs
    for name in ("examples.jsonl", "rejected.jsonl"):
        a, b = _lines(plain / name), _lines(reworded / name)
        assert len(a) == len(b), name
        for x, y in zip(a, b, strict=True):
            assert _masked(x) == _masked(y), (name, x.get("id"))
    assert (plain / "funnel.csv").read_text() == (reworded / "funnel.csv").read_text()
