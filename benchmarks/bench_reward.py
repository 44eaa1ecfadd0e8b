"""Reward speed: trajectories scored per second on one core. Run: python benchmarks/bench_reward.py

Realistic turns from a fixed seed: n_g 1–5 ground-truth calls with dependency chains, n_p 0–12
predicted calls mixing ground-truth calls (some with drifted values or reordered), failed
executions, extra valid calls, hallucinated names, wrong types and unparseable output; tool
lists and ground truths shared by the rollouts of one prompt, as in a GRPO group. The first two
rates score the same objects every pass; "new prompt objects every pass" gives each pass new
copies, as each training step does. The reward's caches are keyed by value (a row's JSON text,
or its plain dicts' contents), never by object identity, so a mutated row is scored afresh.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import time
from typing import Any

from prove.reward import score_batch, score_turn

_PARAM_KINDS: list[dict[str, Any]] = [
    {"type": "string"},
    {"type": "number", "minimum": 0},
    {"type": "integer", "minimum": 1, "maximum": 50},
    {"type": "string", "enum": ["low", "medium", "high", "urgent"]},
    {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    {"type": "boolean"},
]


def _tool(rng: random.Random, index: int) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for k in range(rng.randint(1, 5)):
        props[f"p{k}"] = dict(rng.choice(_PARAM_KINDS), description=f"param {k}")
    required = [k for k in props if rng.random() < 0.6] or [next(iter(props))]
    parameters = {"type": "object", "properties": props, "required": required,
                  "additionalProperties": False}
    return {"type": "function", "function": {"name": f"tool_{index}", "description": "...",
                                             "parameters": parameters}}


def _value(rng: random.Random, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type", "string")
    if kind == "number":
        return round(rng.uniform(1, 5000), 2)
    if kind == "integer":
        return rng.randint(1, 50)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [f"tag{rng.randint(0, 9)}" for _ in range(rng.randint(1, 3))]
    return f"ID-{rng.randint(0, 9999):04d}"


def _call(rng: random.Random, tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool["function"]
    props = fn["parameters"]["properties"]
    keys = set(fn["parameters"]["required"]) | {k for k in props if rng.random() < 0.3}
    return {"name": fn["name"], "arguments": {k: _value(rng, props[k]) for k in sorted(keys)}}


def _prompt(rng: random.Random, pool: list[dict[str, Any]]) -> tuple[list, dict]:
    tools = rng.sample(pool, rng.randint(6, 15))
    n_g = rng.randint(1, 5)
    calls = [_call(rng, rng.choice(tools)) for _ in range(n_g)]
    edges = [[i - 1, i] for i in range(1, n_g) if rng.random() < 0.7]
    edges += [[i, j] for j in range(n_g) for i in range(j - 1) if rng.random() < 0.15]
    return tools, {"calls": calls, "depends_on": edges}


def _rollout(rng: random.Random, tools: list, gt: dict) -> list[dict[str, Any]]:
    pred: list[dict[str, Any]] = []
    for call in gt["calls"]:
        if rng.random() < 0.8:
            args = dict(call["arguments"])
            if args and rng.random() < 0.2:
                args[rng.choice(sorted(args))] = "drifted"
            pred.append({"name": call["name"], "arguments": args, "ok": rng.random() < 0.9})
    if len(pred) > 1 and rng.random() < 0.2:
        i = rng.randrange(len(pred) - 1)
        pred[i], pred[i + 1] = pred[i + 1], pred[i]
    n_extra = rng.choice([0, 0, 0, 1, 1, 2, 3, 5, 8])
    for _ in range(n_extra):
        roll = rng.random()
        if roll < 0.6:
            extra = dict(_call(rng, rng.choice(tools)), ok=rng.random() < 0.8)
        elif roll < 0.75:
            extra = {"name": "made_up_tool", "arguments": {"x": 1}, "ok": False, "error": "unknown"}
        elif roll < 0.9:
            extra = {"name": tools[0]["function"]["name"], "arguments": {"p0": [1, {"a": None}]},
                     "ok": False, "error": "invalid arguments"}
        else:
            extra = {"name": None, "arguments": "not json {", "ok": False}
        pred.insert(rng.randint(0, len(pred)), extra)
    return pred[:12]


def make_workload(n: int, seed: int = 0, group: int = 8) -> list[tuple[list, dict, list]]:
    """``n`` (tools, ground truth, predicted calls) triples; ``group`` rollouts per prompt."""
    rng = random.Random(seed)
    pool = [_tool(rng, i) for i in range(60)]
    work = []
    while len(work) < n:
        tools, gt = _prompt(rng, pool)
        work.extend((tools, gt, _rollout(rng, tools, gt)) for _ in range(group))
    return work[:n]


def _renewed(work: list[tuple[list, dict, list]]) -> list[tuple[list, dict, list]]:
    """``work`` with new copies of each prompt's tools and ground truth, still shared by the
    prompt's rollouts: what the next training step delivers (new rows, same kind of content)."""
    copies: dict[tuple[int, int], tuple[list, dict]] = {}
    renewed = []
    for tools, gt, pred in work:
        key = (id(tools), id(gt))
        if key not in copies:
            copies[key] = (copy.deepcopy(tools), copy.deepcopy(gt))
        renewed.append((*copies[key], pred))
    return renewed


def _rate(
    work: list[tuple[list, dict, list]], seconds: float, batched: bool = False,
    renew: bool = False,
) -> float:
    """Trajectories per CPU second of this process (so a busy machine does not understate it).
    With ``renew`` every pass scores new prompt objects (``_renewed``, built untimed), as each
    training step does; without it the same objects come back every pass."""
    scored, spent = 0, 0.0
    while spent < seconds:
        rows = _renewed(work) if renew else work
        columns = [list(c) for c in zip(*rows, strict=True)] if batched else []
        t0 = time.process_time()
        if batched:
            tools, gts, preds = columns
            score_batch([""] * len(preds), gts, tools, preds)
        else:
            for tools, gt, pred in rows:
                score_turn(pred, gt, tools)
        spent += time.process_time() - t0
        scored += len(rows)
    return scored / spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per measurement")
    parser.add_argument("--seed", type=int, default=0, help="workload seed")
    args = parser.parse_args()
    work = make_workload(4096, seed=args.seed)
    sizes = [(len(gt["calls"]), len(pred)) for _, gt, pred in work]
    print(f"workload: {len(work):,} trajectories, n_g 1-{max(g for g, _ in sizes)}, "
          f"n_p {min(p for _, p in sizes)}-{max(p for _, p in sizes)} "
          f"(mean {sum(p for _, p in sizes) / len(sizes):.1f}), 8 rollouts per prompt")
    t0 = time.process_time()
    loop = 0
    for i in range(2_000_000):
        loop += i
    print(f"machine: a 2M-step Python loop takes {time.process_time() - t0:.3f} CPU s")
    t0 = time.process_time()
    for tools, gt, pred in work:
        score_turn(pred, gt, tools)
    print(f"first pass, cold schema caches: {time.process_time() - t0:.3f} CPU s for 4,096")
    fresh = [(copy.deepcopy(t), copy.deepcopy(g), p) for t, g, p in work]
    # a parquet row whose ground truth and schemas are JSON text, decoded anew for every rollout
    as_text = [(json.dumps(t), json.dumps(g), p) for t, g, p in work]
    for label, rows, batched, renew in (
        ("score_turn, one call per rollout (VERL)", work, False, False),
        ("score_batch over the step (TRL)", work, True, False),
        ("score_turn, new prompt objects every pass", work, False, True),
        ("score_turn, fresh dicts per rollout", fresh, False, False),
        ("score_turn, JSON-string gt/tools per rollout", as_text, False, False),
    ):
        rate = _rate(rows, args.seconds, batched, renew)
        print(f"{label:45s} {rate:8,.0f} trajectories/s on one core; "
              f"4,096 rollouts: {4096 / rate * 1000:4.0f} ms")
    print("target: >= 20,000 trajectories/s")


if __name__ == "__main__":
    main()
