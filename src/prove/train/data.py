"""Training files from a synthesis export: RL rows and SFT rows for a config's model and budget.

    python -m prove.train.data smollm2-135m            # writes the config's data.* files, prints counts

``prove train`` calls :func:`prepare` when a config's data files are missing. It reads the export
(``examples.jsonl`` and the chain-disjoint ``train``/``val`` split of ``prove synth``), optionally
narrows each example's offered tools to ``data.max_tools`` (the tools its ground truth calls
first, then the other offered tools in their offered order, or with ``data.tool_order: similar``
the ones named most like a called tool: a laptop-sized prompt keeps the decision between a few
plausible tools), builds the rows with ``prove.rows`` (RL: one per
user turn; SFT: one per conversation), shows every tool result as the rollouts will (cut to the
config's ``multi_turn.max_tool_response_length`` characters on its ``tool_response_truncate_side``,
VERL's agent loop's own cut: :func:`cut_tool_text`), measures each prompt with the model's tokenizer and the
row's own offered tools (rendered in the config's thinking mode), and drops an RL row whose prompt
exceeds the budget (a prompt is never cut); a conversation too long for SFT is cut after its latest
closing assistant reply that fits (:func:`fitting_prefix`), or dropped when none does. Examples are taken in a
fixed pseudo-random order (:func:`sample_order`), so ``max_train_rows`` keeps every kind, and the rows
written are interleaved by kind (:func:`interleave_kinds`), so a short run's first batches hold every kind. The
counts (turns seen, rows kept by kind, dropped as too long, SFT rows cut, left unmeasured once ``max_*_rows``
was reached) are returned and written to ``data_report.json`` beside the files. Deterministic: the
same export and settings give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prove.rows import sft_row, turn_rows, write_rows
from prove.train.config import TOOL_ORDERS, DataPaths, TrainConfig

__all__ = ["narrow_tools", "read_split", "sample_order", "interleave_kinds", "prepare", "ensure_prepared", "cut_tool_text",
           "ToolTextCut"]

TRUNCATE_SIDES = ("left", "right", "middle")
MAX_TOOL_RESPONSE_KEY = "actor_rollout_ref.rollout.multi_turn.max_tool_response_length"
TRUNCATE_SIDE_KEY = "actor_rollout_ref.rollout.multi_turn.tool_response_truncate_side"


@dataclass(frozen=True)
class ToolTextCut:
    """How a rollout shows a tool's result to the policy: at most ``limit`` characters, cut on ``side``."""

    limit: int
    side: str = "middle"

    def __post_init__(self) -> None:
        if self.limit < 1:
            raise ValueError(f"max_tool_response_length={self.limit}: must be a positive number of characters")
        if self.side not in TRUNCATE_SIDES:
            raise ValueError(f"tool_response_truncate_side={self.side!r}: valid sides are {', '.join(TRUNCATE_SIDES)}")

    @classmethod
    def of(cls, verl: Mapping[str, Any]) -> ToolTextCut:
        """The cut a config's rollouts make (VERL's defaults, 256 and middle, where it sets none)."""
        return cls(int(verl.get(MAX_TOOL_RESPONSE_KEY, 256)), str(verl.get(TRUNCATE_SIDE_KEY, "middle")))


def cut_tool_text(text: str, cut: ToolTextCut) -> str:
    """``text`` as VERL's tool agent loop hands a tool's result to the policy (verl 0.9.1,
    ``ToolAgentLoop._call_tool``): unchanged up to ``cut.limit`` characters, else its start, end or
    both halves with VERL's marker. SFT rows and RL prompts carry earlier results cut the same way,
    so the model learns from and is rewarded on the view it gets in a rollout."""
    if not text or len(text) <= cut.limit:
        return text
    if cut.side == "left":
        return "(truncated)..." + text[-cut.limit:]
    if cut.side == "right":
        return text[:cut.limit] + "...(truncated)"
    half = cut.limit // 2
    return text[:half] + "...(truncated)..." + text[-half:]


def _as_rollouts_show(example: dict[str, Any], cut: ToolTextCut | None) -> tuple[dict[str, Any], int]:
    """``example`` with each tool result as a rollout shows it, and how many were cut."""
    if cut is None:
        return example, 0
    messages, n = [], 0
    for m in example.get("messages") or []:
        content = m.get("content")
        if m.get("role") == "tool" and isinstance(content, str) and len(content) > cut.limit:
            m = {**m, "content": cut_tool_text(content, cut)}
            n += 1
        messages.append(m)
    return {**example, "messages": messages}, n


def _name(schema: Mapping[str, Any]) -> str:
    return str(schema.get("function", schema).get("name", ""))


def narrow_tools(example: Mapping[str, Any], max_tools: int | None, order: str = "offered") -> dict[str, Any]:
    """``example`` offering at most ``max_tools`` schemas: the ones its turns call, in offered
    order, then the rest — in offered order (``order="offered"``), or those whose names read most
    like a called tool's first (``order="similar"``, :func:`prove.synth.perturb.name_score`; ties
    in offered order), so the few tools a short prompt keeps include near-duplicates of the right
    one. Tools it calls but synthesis did not offer stay unoffered (a missing-tool perturbation
    stays missing); an example that calls nothing (an abstention) ranks by its offered order."""
    if order not in TOOL_ORDERS:
        raise ValueError(f"tool order {order!r}: valid orders are {', '.join(TOOL_ORDERS)}")
    out = dict(example)
    tools = list(example.get("tools") or [])
    if max_tools is None or len(tools) <= max_tools:
        return out
    called = {c["name"] for t in example.get("turns", []) for c in t.get("calls", [])}
    first = [t for t in tools if _name(t) in called]
    rest = [t for t in tools if _name(t) not in called]
    if order == "similar" and first:
        from prove.synth.perturb import name_score

        names = [_name(t) for t in first]
        rest = sorted(rest, key=lambda t: -max(name_score(_name(t), c) for c in names))  # ties keep offered order
    out["tools"] = (first + rest)[:max(max_tools, len(first))]
    return out


def read_split(synth_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The export's examples by split ("train", "val"), in file order."""
    import pandas as pd

    missing = [n for n in ("examples.jsonl", "train.parquet", "val.parquet") if not (synth_dir / n).is_file()]
    if missing:
        raise FileNotFoundError(f"{synth_dir} is not a synthesis export (missing {missing}); "
                                f"run: prove synth --out {synth_dir}")
    ids: dict[str, set[str]] = {}
    for split in ("train", "val"):
        table = pd.read_parquet(synth_dir / f"{split}.parquet", columns=["extra_info"])
        ids[split] = {e["example_id"] for e in table["extra_info"]}
    out: dict[str, list[dict[str, Any]]] = {"train": [], "val": []}
    with (synth_dir / "examples.jsonl").open() as fh:
        for line in fh:
            example = json.loads(line)
            for split, members in ids.items():
                if example["id"] in members:
                    out[split].append(example)
    return out


def _tokens(tokenizer: Any, messages: Sequence[Mapping[str, Any]], tools: list[dict[str, Any]],
            generation_prompt: bool, template_kwargs: Mapping[str, Any] | None = None) -> int:
    from prove.rows import decode_messages
    from prove.train.schema import row_schemas

    ids = tokenizer.apply_chat_template(decode_messages(list(messages)), tools=row_schemas(tools) or None,
                                        add_generation_prompt=generation_prompt, tokenize=True,
                                        **dict(template_kwargs or {}))
    if isinstance(ids, Mapping):
        ids = ids["input_ids"]
    return len(ids)


def fitting_prefix(messages: Sequence[Mapping[str, Any]], fits: Callable[[Sequence[Mapping[str, Any]]], bool],
                   ) -> int | None:
    """Where to cut a conversation too long for SFT: after the latest turn's closing assistant reply
    (one without tool calls: a clarifying question, an answer, a refusal) whose prefix ``fits``; None
    when no turn closes within the budget. The SFT row then teaches the conversation's first turns."""
    from prove.rows import decode_messages

    decoded = decode_messages(list(messages))
    ends = [i + 1 for i, m in enumerate(decoded)
            if m.get("role") == "assistant" and not m.get("tool_calls") and i + 1 < len(decoded)]
    return next((end for end in reversed(ends) if fits(messages[:end])), None)


def _rows(examples: Iterable[dict[str, Any]], split: str, data: DataPaths, tokenizer: Any,
          limit: int | None, template_kwargs: Mapping[str, Any] | None = None,
          cut: ToolTextCut | None = None) -> tuple[list[dict], list[dict], dict[str, int]]:
    rl: list[dict[str, Any]] = []
    sft: list[dict[str, Any]] = []
    counts: dict[str, Any] = {"examples": 0, "turns": 0, "rl_rows": 0, "rl_too_long": 0, "rl_over_row_cap": 0,
                              "sft_rows": 0, "sft_too_long": 0, "sft_over_row_cap": 0, "sft_cut": 0,
                              "tool_results": 0, "tool_results_cut": 0}
    for example in sample_order(examples):
        counts["examples"] += 1
        narrowed, n_cut = _as_rollouts_show(narrow_tools(example, data.max_tools, data.tool_order), cut)
        counts["tool_results"] += sum(m.get("role") == "tool" for m in narrowed.get("messages") or [])
        counts["tool_results_cut"] += n_cut
        tools = list(narrowed.get("tools") or [])
        for row in turn_rows(narrowed, start_index=0, split=split):
            counts["turns"] += 1
            if limit is not None and len(rl) >= limit:
                counts["rl_over_row_cap"] += 1  # not measured: the cap was reached before it
                continue
            if data.max_prompt_tokens is not None and _tokens(
                    tokenizer, row["prompt"], tools, True, template_kwargs) > data.max_prompt_tokens:
                counts["rl_too_long"] += 1
                continue
            row["extra_info"]["index"] = len(rl)
            rl.append(row)
        srow = sft_row(narrowed)
        if limit is not None and len(sft) >= limit:
            counts["sft_over_row_cap"] += 1
            continue
        if data.max_sft_tokens is not None and _tokens(
                tokenizer, srow["messages"], tools, False, template_kwargs) > data.max_sft_tokens:
            end = fitting_prefix(srow["messages"], lambda ms, tools=tools: _tokens(
                tokenizer, ms, tools, False, template_kwargs) <= data.max_sft_tokens)
            if end is None:
                counts["sft_too_long"] += 1
                continue
            srow = {**srow, "messages": srow["messages"][:end]}
            counts["sft_cut"] += 1
        sft.append(srow)
    rl = interleave_kinds(rl, lambda r: r["extra_info"]["kind"])
    for i, row in enumerate(rl):
        row["extra_info"]["index"] = i
    sft = interleave_kinds(sft, lambda r: r["kind"])
    counts["rl_rows"], counts["sft_rows"] = len(rl), len(sft)
    counts["rl_kinds"] = dict(sorted(Counter(r["extra_info"]["kind"] for r in rl).items()))
    counts["sft_kinds"] = dict(sorted(Counter(r["kind"] for r in sft).items()))
    return rl, sft, counts


KIND_ORDER = ("multi_turn", "clarification", "abstention")
"""The export's order of kinds; it breaks ties in :func:`interleave_kinds`."""


def interleave_kinds(rows: Sequence[dict[str, Any]], kind: Callable[[dict[str, Any]], str]) -> list[dict[str, Any]]:
    """``rows`` reordered so that every prefix holds each kind in about its share of all rows (the
    kind furthest below its share comes next; ties: more rows, then ``KIND_ORDER``); within a kind
    the order is kept. A short run reads a prefix: its first batch is then the data in miniature,
    never, by the luck of an order, abstentions alone (a one-step GRPO run whose only prompt has no
    call to make has nothing to learn: every rollout scores the same)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(kind(row), []).append(row)
    rank = {k: (KIND_ORDER.index(k) if k in KIND_ORDER else len(KIND_ORDER), k) for k in groups}
    taken = dict.fromkeys(groups, 0)
    out = []
    for i in range(len(rows)):
        k = min((k for k in groups if taken[k] < len(groups[k])), key=lambda k: (
            taken[k] - len(groups[k]) * (i + 1) / len(rows), -len(groups[k]), rank[k]))
        out.append(groups[k][taken[k]])
        taken[k] += 1
    return out


def sample_order(examples: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Examples in a fixed pseudo-random order (the sha256 of their id): a row cap then keeps a
    sample of every kind in the export's proportions, not the export's first kind (the export
    lists multi-turn examples before clarifications and abstentions)."""
    return sorted(examples, key=lambda e: hashlib.sha256(str(e.get("id", "")).encode()).hexdigest())


def prepare(cfg: TrainConfig, synth_dir: str | Path | None = None, tokenizer: Any = None) -> dict[str, Any]:
    """Write ``cfg.data``'s four files from the export; returns the report (also written)."""
    data = cfg.data
    synth = Path(synth_dir) if synth_dir is not None else data.resolve("synth")
    splits = read_split(synth)
    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(cfg.model_path())
    cut = ToolTextCut.of(cfg.verl)
    report: dict[str, Any] = {"synth": str(synth), "max_tools": data.max_tools, "tool_order": data.tool_order,
                              "max_prompt_tokens": data.max_prompt_tokens,
                              "max_sft_tokens": data.max_sft_tokens,
                              "max_tool_response_length": cut.limit, "tool_response_truncate_side": cut.side,
                              "chat_template_kwargs": cfg.chat_template_kwargs()}
    for split, limit in (("train", data.max_train_rows), ("val", data.max_val_rows)):
        rl, sft, counts = _rows(splits[split], split, data, tokenizer, limit, cfg.chat_template_kwargs(), cut)
        if not rl or not sft:
            raise ValueError(f"no {split} rows fit the budget (max_prompt_tokens="
                             f"{data.max_prompt_tokens}, max_sft_tokens={data.max_sft_tokens}): {counts}")
        write_rows(rl, data.resolve(f"rl_{split}"))
        write_rows(sft, data.resolve(f"sft_{split}"))
        report[split] = counts
    out = data.resolve("rl_train").parent / "data_report.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    return report


def ensure_prepared(cfg: TrainConfig, names: Sequence[str] = ("rl_train", "rl_val", "sft_train", "sft_val"),
                    out: Any = None) -> dict[str, Any] | None:
    """Prepare the data files when any of ``names`` is missing (None when all exist)."""
    if all(cfg.data.resolve(n).is_file() for n in names):
        return None
    synth = cfg.data.resolve("synth")
    if not (synth / "examples.jsonl").is_file():
        missing = [str(cfg.data.resolve(n)) for n in names if not cfg.data.resolve(n).is_file()]
        raise FileNotFoundError(f"training data missing ({missing}) and no synthesis export at "
                                f"{synth} to prepare it from; run: prove synth --out {synth}")
    report = prepare(cfg)
    if out is not None:
        print(f"# data prepared from {report['synth']}: train {report['train']}, val {report['val']}",
              file=out)
    return report


def main(argv: list[str] | None = None) -> int:
    import argparse

    from prove.train.config import load_train_config

    parser = argparse.ArgumentParser(prog="python -m prove.train.data", description=__doc__.splitlines()[0])
    parser.add_argument("config", help="a training config (name in configs/train/ or path)")
    parser.add_argument("--synth", default=None, help="synthesis export (default: the config's data.synth)")
    args = parser.parse_args(argv)
    print(json.dumps(prepare(load_train_config(args.config), args.synth), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
