"""The training-row contract: synthesis writes these rows, training reads them (one VERL parquet row
per example and user turn, and SFT rows); neither stage owns it, so neither imports the other.

    from prove.rows import turn_rows, sft_row, write_rows
    rows = [r for i, ex in enumerate(examples) for r in turn_rows(ex, start_index=...)]
    write_rows(rows, "data/train/rl_train.parquet")            # explicit arrow schema below

``prove.synth.export`` calls ``turn_rows`` on validated examples (DESIGN.md "An example");
``prove.train`` reads the rows back (``decode_messages``, ``episode_spec``). Columns:

* ``data_source`` = "prove" (routes VERL's reward), ``agent_name`` = "prove_tool_agent" (our loop),
  ``ability`` = "tool_use".
* ``prompt``: the conversation up to and including the turn's user message. Messages are stored
  with a fixed shape (role, content, tool_calls[id, type, function{name, arguments: JSON str}],
  tool_call_id, name) so every row shares one parquet schema; ``decode_messages`` undoes it.
* ``reward_model`` = {"style": "rule", "ground_truth": JSON of {"calls", "depends_on"}}.
* ``extra_info``: index, split, example_id, kind, turn, servers, seed, prefix (JSON: earlier turns'
  ground-truth calls, replayed so the episode starts where the conversation left it), tools (JSON:
  the schemas offered, what the reward checks validity against), tool_selection (their names:
  VERL's per-row tool filter), need_tools_kwargs, and tools_kwargs = {"prove": {"create_kwargs":
  {seed, prefix, servers}}} — one key for every row, so the parquet schema stays fixed (keys per
  tool name would union to 343 nullable columns); ``ProveTool`` reads it from there.
  ``expected_effect``: the SHA-256 of what the ground truth's calls, from the seed through this
  turn's, did to the records (``prove.env.effects``; the example's ``replay.turn_effects[turn]``,
  checked by replay validation; "" for an example recorded without it). A rollout that ends with
  this effect reached the turn's outcome, whatever calls it made (the reward's ``outcome``).

JSON strings are used wherever values are heterogeneous (arguments, schemas, calls): parquet would
otherwise union every key of every row into nullable struct fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DATA_SOURCE", "AGENT_NAME", "ABILITY", "PROVE_KWARGS_KEY", "ROW_COLUMNS", "RL_SCHEMA",
    "SFT_SCHEMA", "EpisodeSpec", "encode_message", "decode_messages", "user_turn_positions",
    "turn_row", "turn_rows", "sft_row", "write_rows", "read_rows", "episode_spec", "openai_messages",
]

DATA_SOURCE = "prove"
AGENT_NAME = "prove_tool_agent"
ABILITY = "tool_use"
PROVE_KWARGS_KEY = "prove"
ROW_COLUMNS: tuple[str, ...] = (
    "data_source", "agent_name", "prompt", "ability", "reward_model", "extra_info",
)


def _arrow_schemas() -> tuple[Any, Any]:
    import pyarrow as pa

    function = pa.struct([("name", pa.string()), ("arguments", pa.string())])
    tool_call = pa.struct([("id", pa.string()), ("type", pa.string()), ("function", function)])
    message = pa.struct([
        ("role", pa.string()), ("content", pa.string()), ("tool_calls", pa.list_(tool_call)),
        ("tool_call_id", pa.string()), ("name", pa.string()),
    ])
    create_kwargs = pa.struct([
        ("seed", pa.int64()), ("prefix", pa.string()), ("servers", pa.list_(pa.string())),
    ])
    extra_info = pa.struct([
        ("index", pa.int64()), ("split", pa.string()), ("example_id", pa.string()),
        ("kind", pa.string()), ("turn", pa.int64()), ("servers", pa.list_(pa.string())),
        ("seed", pa.int64()), ("prefix", pa.string()), ("tools", pa.string()),
        ("tool_selection", pa.list_(pa.string())), ("need_tools_kwargs", pa.bool_()),
        ("tools_kwargs", pa.struct([(PROVE_KWARGS_KEY, pa.struct([("create_kwargs", create_kwargs)]))])),
        ("expected_effect", pa.string()),
    ])
    rl = pa.schema([
        ("data_source", pa.string()), ("agent_name", pa.string()), ("prompt", pa.list_(message)),
        ("ability", pa.string()),
        ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", pa.string())])),
        ("extra_info", extra_info),
    ])
    sft = pa.schema([
        ("messages", pa.list_(message)), ("tools", pa.string()), ("example_id", pa.string()),
        ("kind", pa.string()), ("data_source", pa.string()),
    ])
    return rl, sft


RL_SCHEMA, SFT_SCHEMA = _arrow_schemas()


@dataclass(frozen=True)
class EpisodeSpec:
    """What a rollout's episode is opened with: seed, prefix calls to replay, servers offered."""

    seed: int
    prefix: tuple[dict[str, Any], ...]
    servers: tuple[str, ...]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A call as ``{"name", "arguments"}`` (outcome keys of a logged call dropped)."""
    args = call.get("arguments") or {}
    if isinstance(args, str):
        args = json.loads(args)
    return {"name": call["name"], "arguments": dict(args)}


def encode_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """One chat message in the row's fixed shape (arguments as JSON strings, no missing keys)."""
    role = message["role"]
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = _json(content)
    calls = None
    if message.get("tool_calls"):
        calls = []
        for i, tc in enumerate(message["tool_calls"]):
            fn = tc.get("function", tc)
            args = fn.get("arguments", {})
            calls.append({
                "id": str(tc.get("id") or f"call_{i}"),
                "type": "function",
                "function": {"name": fn["name"],
                             "arguments": args if isinstance(args, str) else _json(args)},
            })
    return {
        "role": role,
        "content": content or "",
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id") if role == "tool" else None,
        "name": message.get("name") if role == "tool" else None,
    }


def decode_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows' messages back to plain chat messages: null keys dropped, arguments as dicts."""
    out = []
    for message in messages:
        m = {k: v for k, v in dict(message).items() if v is not None}
        if m.get("tool_calls") is not None and len(m["tool_calls"]) > 0:
            calls = []
            for tc in m["tool_calls"]:
                tc = {k: v for k, v in dict(tc).items() if v is not None}
                fn = dict(tc.get("function") or {})
                args = fn.get("arguments")
                if isinstance(args, str):
                    try:
                        fn["arguments"] = json.loads(args)
                    except json.JSONDecodeError:
                        pass  # keep what the model wrote; the template prints strings verbatim
                tc["function"] = fn
                calls.append(tc)
            m["tool_calls"] = calls
        else:
            m.pop("tool_calls", None)
        out.append(m)
    return out


def openai_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows' messages as an OpenAI-compatible chat API takes them: null keys dropped and every tool
    call's arguments a JSON string (``decode_messages`` gives dicts, which chat templates want but
    an OpenAI server refuses with 400)."""
    out = []
    for m in decode_messages(messages):
        if "tool_calls" in m:
            m["tool_calls"] = [
                {**tc, "function": {**tc["function"], "arguments": tc["function"]["arguments"]
                                    if isinstance(tc["function"].get("arguments"), str)
                                    else _json(tc["function"].get("arguments") or {})}}
                for tc in m["tool_calls"]]
        out.append(m)
    return out


def user_turn_positions(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indices of the user messages; turn k of an example is the k-th of them."""
    return [i for i, m in enumerate(messages) if m.get("role") == "user"]


def turn_row(example: Mapping[str, Any], turn: int, *, index: int, split: str = "train") -> dict[str, Any]:
    """The training row for user turn ``turn`` of a validated example (see the module doc)."""
    messages = example["messages"]
    turns = example["turns"]
    users = user_turn_positions(messages)
    if len(users) != len(turns):
        raise ValueError(
            f"example {example.get('id')!r}: {len(users)} user messages but {len(turns)} turns"
        )
    if not 0 <= turn < len(turns):
        raise IndexError(f"example {example.get('id')!r} has no turn {turn}")
    prefix = [_call(c) for t in turns[:turn] for c in t.get("calls", [])]
    gt = {"calls": [_call(c) for c in turns[turn].get("calls", [])],
          "depends_on": [list(e) for e in turns[turn].get("depends_on", [])]}
    tools = list(example.get("tools") or [])
    names = [t.get("function", t).get("name") for t in tools]
    servers = [str(s) for s in example.get("servers", [])]
    seed = int(example["seed"])
    prefix_json = _json(prefix)
    effects = (example.get("replay") or {}).get("turn_effects") or []
    if effects and len(effects) != len(turns):
        raise ValueError(f"example {example.get('id')!r}: {len(effects)} recorded turn effects "
                         f"but {len(turns)} turns")
    return {
        "data_source": DATA_SOURCE,
        "agent_name": AGENT_NAME,
        "prompt": [encode_message(m) for m in messages[: users[turn] + 1]],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": _json(gt)},
        "extra_info": {
            "index": int(index),
            "split": split,
            "example_id": str(example.get("id", "")),
            "kind": str(example.get("kind", "multi_turn")),
            "turn": int(turn),
            "servers": servers,
            "seed": seed,
            "prefix": prefix_json,
            "tools": _json(tools),
            "tool_selection": [n for n in names if isinstance(n, str)],
            "need_tools_kwargs": True,
            "tools_kwargs": {PROVE_KWARGS_KEY: {"create_kwargs": {
                "seed": seed, "prefix": prefix_json, "servers": servers}}},
            "expected_effect": str(effects[turn]) if effects else "",
        },
    }


def turn_rows(example: Mapping[str, Any], *, start_index: int = 0, split: str = "train") -> list[dict[str, Any]]:
    """One row per user turn of ``example``, indexed from ``start_index``."""
    return [turn_row(example, k, index=start_index + k, split=split)
            for k in range(len(example["turns"]))]


def sft_row(example: Mapping[str, Any]) -> dict[str, Any]:
    """The SFT row of an example: the whole conversation and the offered tools (JSON)."""
    return {
        "messages": [encode_message(m) for m in example["messages"]],
        "tools": _json(list(example.get("tools") or [])),
        "example_id": str(example.get("id", "")),
        "kind": str(example.get("kind", "multi_turn")),
        "data_source": DATA_SOURCE,
    }


def write_rows(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write RL rows (or SFT rows) to parquet with the contract's explicit arrow schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not rows:
        raise ValueError("no rows to write")
    schema = SFT_SCHEMA if "messages" in rows[0] else RL_SCHEMA
    table = pa.Table.from_pylist([dict(r) for r in rows], schema=schema)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """The rows of a parquet file written by ``write_rows`` (RL or SFT), as plain dicts."""
    import pyarrow.parquet as pq

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no rows file at {path} (synthesis writes <out>/train.parquet and val.parquet)")
    return pq.read_table(path).to_pylist()


def episode_spec(create_kwargs: Mapping[str, Any] | None) -> EpisodeSpec:
    """Parse a row's create_kwargs ({seed, prefix (JSON or list), servers}) into an EpisodeSpec."""
    kw = dict(create_kwargs or {})
    prefix = kw.get("prefix") or []
    if isinstance(prefix, str):
        prefix = json.loads(prefix) if prefix else []
    seed = kw.get("seed")
    if seed is None:
        raise ValueError("create_kwargs carries no seed: the row was not built by prove.rows")
    return EpisodeSpec(int(seed), tuple(_call(c) for c in prefix),
                       tuple(str(s) for s in (kw.get("servers") or [])))
