"""Export: JSONL examples, VERL parquet training rows (one per example and user turn), the
train/validation split by chain, and the dataset card.

    rows = training_rows(example)                # what one example contributes to VERL
    write_parquet(rows, "results/synth/train.parquet")

Rows come from `prove.train.rows.turn_rows` (the training side owns the row contract) and are
written with its `RL_SCHEMA`; only when that module is absent does the fallback below build them.
Fallback training row (see shared/notes/verl.md §2): `data_source="prove"`, `agent_name="tool_agent"`,
`ability="tool_use/<kind>"`, `prompt` = the messages up to and including that user turn,
`reward_model={"style": "rule", "ground_truth": <JSON text of {"calls", "depends_on"}>}`,
`extra_info={index, example_id, turn, kind, split, chain_id, servers, seed, prefix (JSON text of the
earlier turns' ground-truth calls, replayed when the episode opens), tools (JSON text of the offered
schemas), tool_selection (offered names; VERL 0.9 restricts a row's tools to them),
need_tools_kwargs, tools_kwargs={"prove": {"create_kwargs": {example_id, turn, seed, servers,
prefix}}}}`. Arguments, ground truth, prefix and schemas are JSON text because their keys differ
from row to row: parquet would merge them into one struct and hand back null-filled keys.
prove.reward accepts the JSON text as it is. Messages keep one fixed shape (role, content,
tool_calls with JSON-text arguments, tool_call_id).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prove.synth.records import dumps

__all__ = [
    "training_rows", "row_schema", "write_parquet", "dataset_card", "card_markdown",
    "write_jsonl", "sha256_file", "normalise_message", "TOOL_KWARGS_KEY",
    "example_summary",
]

TOOL_KWARGS_KEY = "prove"
"""The one key under extra_info.tools_kwargs: PROVE's VERL tool reads the episode from it."""


def normalise_message(m: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI chat message in the fixed parquet shape."""
    calls = []
    for tc in m.get("tool_calls") or ():
        fn = tc.get("function", {})
        args = fn.get("arguments", "")
        calls.append({"id": str(tc.get("id", "")), "type": str(tc.get("type", "function")),
                      "function": {"name": str(fn.get("name", "")),
                                   "arguments": args if isinstance(args, str) else dumps(args)}})
    return {"role": str(m.get("role", "")), "content": str(m.get("content") or ""),
            "tool_calls": calls, "tool_call_id": str(m.get("tool_call_id") or "")}


def training_rows(example: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One VERL row per user turn of `example` (index is filled in when a split is written)."""
    try:
        from prove.train.rows import turn_rows
    except ImportError:
        return _fallback_rows(example)
    return turn_rows(example, start_index=0, split=str(example.get("split", "train")))


def _fallback_rows(example: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = list(example["messages"])
    user_at = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    servers = list(example["servers"])
    tools_json = dumps(example["tools"])
    names = [t["function"]["name"] for t in example["tools"]]
    rows = []
    prefix: list[dict[str, Any]] = []
    for k, pos in enumerate(user_at):
        turn = example["turns"][k]
        prefix_json = dumps(prefix)
        rows.append({
            "data_source": "prove",
            "agent_name": "tool_agent",
            "ability": f"tool_use/{example['kind']}",
            "prompt": [normalise_message(m) for m in messages[:pos + 1]],
            "reward_model": {"style": "rule", "ground_truth": dumps(
                {"calls": turn["calls"], "depends_on": turn["depends_on"]})},
            "extra_info": {
                "index": 0,
                "example_id": example["id"],
                "turn": k,
                "kind": example["kind"],
                "split": example.get("split", "train"),
                "chain_id": example["chain"]["id"],
                "servers": servers,
                "seed": int(example["seed"]),
                "prefix": prefix_json,
                "tools": tools_json,
                "tool_selection": names,
                "need_tools_kwargs": True,
                "tools_kwargs": {TOOL_KWARGS_KEY: {"create_kwargs": {
                    "example_id": example["id"], "turn": k, "seed": int(example["seed"]),
                    "servers": servers, "prefix": prefix_json}}},
            },
        })
        prefix = prefix + [{"name": c["name"], "arguments": c["arguments"]} for c in turn["calls"]]
    return rows


def row_schema() -> Any:
    """The parquet schema: prove.train.rows.RL_SCHEMA, or the fallback's."""
    try:
        from prove.train.rows import RL_SCHEMA
    except ImportError:
        return _fallback_schema()
    return RL_SCHEMA


def _fallback_schema() -> Any:
    import pyarrow as pa

    s = pa.string()
    message = pa.struct([
        ("role", s), ("content", s),
        ("tool_calls", pa.list_(pa.struct([
            ("id", s), ("type", s),
            ("function", pa.struct([("name", s), ("arguments", s)]))]))),
        ("tool_call_id", s)])
    create = pa.struct([("example_id", s), ("turn", pa.int64()), ("seed", pa.int64()),
                        ("servers", pa.list_(s)), ("prefix", s)])
    extra = pa.struct([
        ("index", pa.int64()), ("example_id", s), ("turn", pa.int64()), ("kind", s), ("split", s),
        ("chain_id", s), ("servers", pa.list_(s)), ("seed", pa.int64()), ("prefix", s), ("tools", s),
        ("tool_selection", pa.list_(s)), ("need_tools_kwargs", pa.bool_()),
        ("tools_kwargs", pa.struct([(TOOL_KWARGS_KEY, pa.struct([("create_kwargs", create)]))]))])
    return pa.schema([("data_source", s), ("agent_name", s), ("ability", s),
                      ("prompt", pa.list_(message)),
                      ("reward_model", pa.struct([("style", s), ("ground_truth", s)])),
                      ("extra_info", extra)])


def write_parquet(rows: Sequence[Mapping[str, Any]], path: str | Path) -> int:
    """Write rows (their `extra_info.index` renumbered 0..n-1) as one zstd parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = []
    for i, row in enumerate(rows):
        extra = dict(row["extra_info"])
        extra["index"] = i
        out.append({**row, "extra_info": extra})
    schema = row_schema()
    table = pa.Table.from_pylist(out, schema=schema) if out else schema.empty_table()
    pq.write_table(table, str(path), compression="zstd", row_group_size=4096)
    return len(out)


def write_jsonl(lines: Iterable[str], path: str | Path) -> int:
    n = 0
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for line in lines:
            fh.write(line)
            fh.write("\n")
            n += 1
    return n


def sha256_file(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def example_summary(example: Mapping[str, Any]) -> dict[str, Any]:
    """What the dataset card counts of one example (small, so workers send it cheaply)."""
    return {
        "kind": example["kind"],
        "split": example.get("split", "train"),
        "servers": list(example["servers"]),
        "chain_length": len(example["chain"]["tools"]),
        "turns": len(example["turns"]),
        "calls_per_turn": [len(t["calls"]) for t in example["turns"]],
        "perturbations": sorted({p["type"] for p in example["perturbations"]}),
        "teacher": example["teacher"]["name"],
        "n_errors": example["replay"]["n_errors"],
    }


def dataset_card(summaries: Sequence[Mapping[str, Any]], funnel: Mapping[str, Any],
                 config: Mapping[str, Any], n_rows: Mapping[str, int]) -> dict[str, Any]:
    """Counts by kind, split, server, chain length, turns, calls per turn, perturbation,
    teacher, plus the funnel and rejection reasons (no timings: the card is reproducible).
    `summaries` are `example_summary` dicts (full examples are summarised on the fly)."""
    by = {name: Counter() for name in ("kind", "split", "server", "chain_length", "turns",
                                       "calls_per_turn", "perturbation", "teacher", "servers_per_example")}
    recovered = 0
    for s in summaries:
        if "messages" in s:
            s = example_summary(s)
        by["kind"][s["kind"]] += 1
        by["split"][s["split"]] += 1
        for server in s["servers"]:
            by["server"][server] += 1
        by["chain_length"][str(s["chain_length"])] += 1
        by["turns"][str(s["turns"])] += 1
        for n in s["calls_per_turn"]:
            by["calls_per_turn"][str(n)] += 1
        for p in s["perturbations"] or ["none"]:
            by["perturbation"][p] += 1
        by["teacher"][s["teacher"]] += 1
        by["servers_per_example"][str(len(s["servers"]))] += 1
        recovered += s["n_errors"] > 0
    return {
        "n_examples": len(summaries),
        "n_rows": dict(n_rows),
        "with_recovery": recovered,
        "counts": {k: dict(sorted(v.items())) for k, v in by.items()},
        "funnel": funnel,
        "config": dict(config),
    }


def card_markdown(card: Mapping[str, Any]) -> str:
    lines = ["# PROVE synthetic data — dataset card", "",
             f"{card['n_examples']} examples, {sum(card['n_rows'].values())} training rows "
             f"({', '.join(f'{k}: {v}' for k, v in card['n_rows'].items())}); "
             f"{card['with_recovery']} conversations show a recovered error.", ""]
    lines += ["## Funnel", "", "| kind | attempted | generated | replay-valid | kept | rejected by reason |",
              "|---|---|---|---|---|---|"]
    for kind, f in card["funnel"].items():
        reasons = ", ".join(f"{r}: {n}" for r, n in f["rejected"].items()) or "—"
        lines.append(f"| {kind} | {f['attempted']} | {f['generated']} | {f['replay_valid']} | "
                     f"{f['kept']} | {reasons} |")
    for name, counts in card["counts"].items():
        lines += ["", f"## By {name.replace('_', ' ')}", "", "| value | examples |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in counts.items()]
    lines += ["", "## Configuration", "", "```json", json.dumps(card["config"], indent=1,
                                                               sort_keys=True), "```", ""]
    return "\n".join(lines)
