"""Export: JSONL examples, VERL parquet training rows (one per example and user turn), the
train/validation split by chain, and the dataset card.

    rows = training_rows(example)                # what one example contributes to VERL
    write_parquet(rows, "results/synth/train.parquet")

Rows follow the training-row contract in `prove.rows` (`turn_rows`, written with its `RL_SCHEMA`),
which training reads back; synthesis imports nothing from training.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prove.rows import RL_SCHEMA, turn_rows
from prove.synth.quality import quality_markdown

__all__ = [
    "training_rows", "write_parquet", "dataset_card", "card_markdown", "write_jsonl", "sha256_file",
    "example_summary",
]


def training_rows(example: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One VERL row per user turn of `example` (index is filled in when a split is written)."""
    return turn_rows(example, start_index=0, split=str(example.get("split", "train")))


def write_parquet(rows: Sequence[Mapping[str, Any]], path: str | Path) -> int:
    """Write rows (their `extra_info.index` renumbered 0..n-1) as one zstd parquet file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = []
    for i, row in enumerate(rows):
        extra = dict(row["extra_info"])
        extra["index"] = i
        out.append({**row, "extra_info": extra})
    table = pa.Table.from_pylist(out, schema=RL_SCHEMA) if out else RL_SCHEMA.empty_table()
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


def example_summary(example: Mapping[str, Any], registry: Any = None) -> dict[str, Any]:
    """What the dataset card counts of one example (small, so workers send it cheaply); with a
    registry, the servers its offered tools belong to (distractors' servers included)."""
    offered = [str(t.get("function", t).get("name")) for t in example.get("tools", ())]
    out = {
        "kind": example["kind"],
        "split": example.get("split", "train"),
        "servers": list(example["servers"]),
        "chain_length": len(example["chain"]["tools"]),
        "turns": len(example["turns"]),
        "calls_per_turn": [len(t["calls"]) for t in example["turns"]],
        "perturbations": sorted({p["type"] for p in example["perturbations"]}),
        "offered_tools": len(offered),
        "distractor_tools": sum(len(p.get("tools", ())) for p in example["perturbations"]
                                if p.get("type") == "distractor_tools"),
        "teacher": example["teacher"]["name"],
        "n_errors": example["replay"]["n_errors"],
    }
    if registry is not None:
        out["offered_servers"] = len({registry.tools[n].server for n in offered if n in registry.tools})
    return out


def dataset_card(summaries: Sequence[Mapping[str, Any]], funnel: Mapping[str, Any],
                 config: Mapping[str, Any], n_rows: Mapping[str, int]) -> dict[str, Any]:
    """Counts by kind, split, server, chain length, turns, calls per turn, perturbation,
    teacher, plus the funnel and rejection reasons (no timings: the card is reproducible).
    `summaries` are `example_summary` dicts (full examples are summarised on the fly)."""
    by = {name: Counter() for name in ("kind", "split", "server", "chain_length", "turns",
                                       "calls_per_turn", "perturbation", "teacher", "servers_per_example",
                                       "offered_servers_per_example", "distractor_tools", "offered_tools")}
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
        by["offered_tools"][str(s.get("offered_tools", 0))] += 1  # tools offered to the model
        by["distractor_tools"][str(s.get("distractor_tools", 0))] += 1
        if "offered_servers" in s:  # servers the offered tools belong to, distractors' included
            by["offered_servers_per_example"][str(s["offered_servers"])] += 1
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
    if card.get("quality"):
        lines += [""] + quality_markdown(card["quality"], card.get("quality_reference"))
    lines += ["", "## Configuration", "", "```json", json.dumps(card["config"], indent=1,
                                                               sort_keys=True), "```", ""]
    return "\n".join(lines)
