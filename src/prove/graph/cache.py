"""A persistent, append-only JSONL cache of LLM pair judgements keyed by (pair, model, prompt version).

    cache = JudgementCache(".cache/graph/llm_pairs.jsonl"); cache.get(key); cache.put(key, record)

The key is the SHA-256 of the canonical JSON of both tools' name, description, read/write mark and
schemas, the model and the prompt version, so editing a tool or the prompt re-asks only the pairs it
touches, and a rebuilt graph is identical. Lines that fail to parse (a crash mid-write) are skipped.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from prove.env.tool import ToolSpec

__all__ = ["JudgementCache", "pair_key", "tool_fingerprint"]


def tool_fingerprint(spec: ToolSpec) -> dict[str, Any]:
    """What the classifier sees of a tool: changing any of it changes the cache key."""
    return {
        "name": spec.name,
        "server": spec.server,
        "description": spec.description,
        "write": spec.write,
        "input_schema": spec.input_schema,
        "output_schema": spec.output_schema,
    }


def pair_key(a: ToolSpec, b: ToolSpec, model: str, prompt_version: str) -> str:
    blob = json.dumps(
        {"a": tool_fingerprint(a), "b": tool_fingerprint(b), "model": model, "prompt": prompt_version},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class JudgementCache:
    """Key -> record, loaded from and appended to one JSONL file (None = in memory only)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self._data: dict[str, dict[str, Any]] = {}
        if self.path is not None and self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    row = json.loads(line)
                    self._data[row["key"]] = row["value"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: str) -> bool:
        return key in self._data

    def get(self, key: str) -> dict[str, Any] | None:
        return self._data.get(key)

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._data[key] = value
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"key": key, "value": value}, sort_keys=True, ensure_ascii=False)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
