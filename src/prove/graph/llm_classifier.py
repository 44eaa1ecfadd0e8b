"""The LLM pair classifier: asks any OpenAI-compatible endpoint (vLLM, `transformers serve`) per pair.

    clf = LLMClassifier(base_url="http://127.0.0.1:8000/v1", model="Qwen/Qwen3-8B")
    judgements = await clf.classify(pairs)          # batched, concurrent, cached

The prompt holds both tools' names, read/write marks, descriptions and schemas (parameters with
types, result fields) and asks for one JSON object
`{"relation": "explicit|implicit|none", "argument": <parameter of B or null>, "reason": "..."}`.
The answer is parsed robustly (first JSON object with a "relation" key, anywhere in the text; the
fields of an object cut off by the token limit) and validated: the relation must be one of the three, an explicit answer must name a real parameter of B,
and an implicit one needs A to be a write. An invalid answer is re-asked with the problem stated;
after `max_tries` the pair is "none" with the problem as its reason, never an exception. Valid and
exhausted answers are cached by (pair, model, prompt version); transport errors are not cached.
An explicit judgement carries the declared join of the parameter it names (`features.join_for`:
the result field of A and the entity kind), as the schema classifier's do, when there is one.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.env.tool import ToolSpec
from prove.graph.cache import JudgementCache, pair_key
from prove.graph.features import OutField, join_for, output_fields, parameters
from prove.graph.relations import RELATIONS, Judgement

__all__ = ["PROMPT_VERSION", "LLMClassifier", "MalformedAnswer", "parse_answer", "build_messages",
           "LLMStats"]

PROMPT_VERSION = "pairs-v3"
"""Names the prompt *and* the parser: bump it when either changes, so cached answers are re-asked."""

SYSTEM_PROMPT = """\
You label how two tools of one API depend on each other when tool A is called before tool B.
- "explicit": a value in A's result is passed as an argument of B (say which parameter of B).
- "implicit": A is a write tool and changes state that B reads or checks afterwards.
- "none": neither.
Answer with one JSON object and nothing else."""

# One worked exchange before the real question: small models copy its format.
EXAMPLE_USER = """Tool A: search_items (read-only)
Description: Find items by name.
Parameters: query: string (required)
Returns: items[].item_id: string, items[].name: string

Tool B: delete_item (write: changes state)
Description: Delete one item.
Parameters: item_id: string (required)
Returns: item_id: string, deleted: boolean

How does B (delete_item) depend on A (search_items)? Answer with the JSON object only."""
EXAMPLE_ANSWER = (
    '{"relation": "explicit", "argument": "item_id", '
    '"reason": "search_items returns item ids that delete_item takes"}'
)

MAX_FIELDS = 30


class MalformedAnswer(ValueError):
    """A model answer that cannot be used; its message says why (and is shown to the model)."""


@dataclass
class LLMStats:
    """What one classifier instance did: requests sent, cache hits, answers given up on."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    malformed: int = 0
    errors: int = 0


def _render_tool(label: str, spec: ToolSpec) -> str:
    params = parameters(spec)
    lines = [f"Tool {label}: {spec.name} ({'write: changes state' if spec.write else 'read-only'})",
             f"Description: {spec.description}"]
    plist = [f"{p.name}: {p.type}{' (required)' if p.required else ''}"
             + (f" - {p.description.rstrip('.')}" if p.description else "") for p in params.values()]
    lines.append("Parameters: " + ("; ".join(plist) if plist else "(none)"))
    fields: list[OutField] = output_fields(spec)
    shown = ", ".join(f"{f.path}: {f.type}" for f in fields[:MAX_FIELDS])
    more = f", ... ({len(fields) - MAX_FIELDS} more)" if len(fields) > MAX_FIELDS else ""
    lines.append("Returns: " + (shown + more if fields else "(nothing)"))
    return "\n".join(lines)


def build_messages(a: ToolSpec, b: ToolSpec) -> list[dict[str, str]]:
    """The chat messages for the ordered pair (a, b)."""
    user = (f"{_render_tool('A', a)}\n\n{_render_tool('B', b)}\n\n"
            f"How does B ({b.name}) depend on A ({a.name})? Answer with the JSON object only.")
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": EXAMPLE_USER},
            {"role": "assistant", "content": EXAMPLE_ANSWER},
            {"role": "user", "content": user}]


def _json_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found = []
    for i, ch in enumerate(text):
        if ch == "{":
            try:
                obj, _ = decoder.raw_decode(text, i)
            except json.JSONDecodeError:
                continue
            found.append(obj)
    return found


_FIELD = r'"{key}"\s*:\s*(?:"([^"]*)"|(null))'


def _salvage(text: str) -> dict[str, Any] | None:
    """The fields of an object cut off by the token limit: `{"relation": "explicit", "argument": "x", "rea`."""
    start = text.find("{")
    if start < 0:
        return None
    found: dict[str, Any] = {}
    for key in ("relation", "argument", "reason"):
        m = re.search(_FIELD.format(key=key), text[start:])
        if m:
            found[key] = m.group(1) if m.group(2) is None else None
    if "relation" not in found:
        return None
    found.setdefault("reason", "(answer cut off)")
    return found


def parse_answer(text: str, a: ToolSpec, b: ToolSpec) -> tuple[str, str | None, str]:
    """(relation, argument, reason) from a model answer, or MalformedAnswer saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise MalformedAnswer("empty answer")
    objects = [o for o in _json_objects(text) if isinstance(o, dict) and "relation" in o]
    obj = objects[0] if objects else _salvage(text)
    if obj is None:
        raise MalformedAnswer("no JSON object with a \"relation\" key")
    rel = obj.get("relation")
    rel = rel.strip().lower() if isinstance(rel, str) else rel
    if rel not in RELATIONS:
        raise MalformedAnswer(f"relation {obj.get('relation')!r} is not one of {', '.join(RELATIONS)}")
    reason = obj.get("reason")
    reason = " ".join(reason.split())[:200] if isinstance(reason, str) else ""
    argument = obj.get("argument")
    if rel == "explicit":
        if not isinstance(argument, str) or argument.strip() not in b.params:
            raise MalformedAnswer(
                f"argument {argument!r} is not a parameter of {b.name} "
                f"(its parameters: {', '.join(b.params) or 'none'})"
            )
        return rel, argument.strip(), reason
    if rel == "implicit" and not a.write:
        raise MalformedAnswer(f"implicit needs A to change state, but {a.name} is read-only")
    return rel, None, reason


class LLMClassifier:
    """Pair classifier over an OpenAI-compatible chat endpoint, with a persistent cache."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        cache: str | Path | JudgementCache | None = None,
        cache_model: str | None = None,
        max_tokens: int = 96,
        temperature: float = 0.0,
        seed: int = 0,
        concurrency: int = 4,
        batch_size: int = 64,
        max_tries: int = 2,
        request_timeout: float = 300.0,
        chat_template_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.base_url, self.model = base_url, model
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.api_key = api_key
        self.cache = cache if isinstance(cache, JudgementCache) else JudgementCache(cache)
        self.cache_model = cache_model or model
        if self.chat_template_kwargs:  # a thinking answer is another answer: its own cache entries
            self.cache_model += "|" + json.dumps(self.chat_template_kwargs, sort_keys=True)
        self.name = f"llm:{self.cache_model}"
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        self.concurrency, self.batch_size = max(1, concurrency), max(1, batch_size)
        self.max_tries = max(1, max_tries)
        self.request_timeout = request_timeout
        self.stats = LLMStats()

    def all_cached(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> bool:
        """True when every same-server pair already has a cached answer (no request needed)."""
        return all(pair_key(a, b, self.cache_model, PROMPT_VERSION) in self.cache
                   for a, b in pairs if a.server == b.server)

    async def classify(self, pairs: Sequence[tuple[ToolSpec, ToolSpec]]) -> list[Judgement]:
        """One judgement per pair, in order. Never raises for a bad answer or a failed request."""
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=self.base_url, max_retries=0, timeout=self.request_timeout,
                             api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY")
        gate = asyncio.Semaphore(self.concurrency)
        out: list[Judgement] = []
        try:
            for start in range(0, len(pairs), self.batch_size):
                batch = pairs[start:start + self.batch_size]
                out += await asyncio.gather(*(self._one(client, gate, a, b) for a, b in batch))
        finally:
            await client.close()
        return out

    def _judgement(self, a: ToolSpec, b: ToolSpec, value: dict[str, Any]) -> Judgement:
        """The answer as a Judgement; an explicit one carries the declared join of its argument
        (the field of A and the kind), when the argument declares a kind that A returns."""
        arg = value.get("argument")
        join = join_for(a, b, arg) if value["relation"] == "explicit" and arg else None
        return Judgement(a.name, b.name, value["relation"], arg, value["reason"], self.name,
                         a.server, join.field if join else None, join.kind if join else None)

    async def _one(self, client: Any, gate: asyncio.Semaphore, a: ToolSpec, b: ToolSpec) -> Judgement:
        if a.server != b.server:
            return Judgement(a.name, b.name, "none", None, "different servers", self.name, a.server)
        key = pair_key(a, b, self.cache_model, PROMPT_VERSION)
        hit = self.cache.get(key)
        if hit is not None:
            self.stats.cache_hits += 1
            return self._judgement(a, b, hit)
        messages: list[dict[str, str]] = build_messages(a, b)
        problem, text = "", ""
        for attempt in range(1, self.max_tries + 1):
            if attempt > 1:
                self.stats.retries += 1
            try:
                async with gate:
                    self.stats.requests += 1
                    resp = await client.chat.completions.create(
                        model=self.model, messages=messages, max_tokens=self.max_tokens,
                        temperature=self.temperature, seed=self.seed + attempt - 1,
                        **({"extra_body": {"chat_template_kwargs": self.chat_template_kwargs}}
                           if self.chat_template_kwargs else {}),
                    )
                text = (resp.choices[0].message.content or "") if resp.choices else ""
            except Exception as exc:  # transport/server failure: retried, then "none", not cached
                problem = f"{type(exc).__name__}: {str(exc)[:160]}"
                if attempt == self.max_tries:
                    self.stats.errors += 1
                    return Judgement(a.name, b.name, "none", None,
                                     f"request failed after {attempt} tries: {problem}",
                                     self.name, a.server)
                await asyncio.sleep(min(2.0 ** attempt, 10.0))
                continue
            try:
                rel, arg, reason = parse_answer(text, a, b)
            except MalformedAnswer as exc:
                problem = str(exc)
                messages = [*build_messages(a, b), {"role": "assistant", "content": text[:500]},
                            {"role": "user", "content": f"That answer is invalid: {problem}. "
                             "Reply with only the JSON object."}]
                continue
            value = {"relation": rel, "argument": arg, "reason": reason or "(no reason given)",
                     "status": "ok", "tries": attempt, "raw": text[:500]}
            self.cache.put(key, value)
            return self._judgement(a, b, value)
        self.stats.malformed += 1
        value = {"relation": "none", "argument": None,
                 "reason": f"malformed answer after {self.max_tries} tries: {problem}; "
                           f"last answer: {text[:80]!r}",
                 "status": "malformed", "tries": self.max_tries, "raw": text[:500]}
        self.cache.put(key, value)
        return self._judgement(a, b, value)
