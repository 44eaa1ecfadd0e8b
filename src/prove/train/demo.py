"""Small real examples for CPU checks, built from live calls (until the synthesis export lands).

    from prove.train.demo import demo_examples, demo_rows
    examples = demo_examples(n=3)           # banking conversations, executed through prove.env.Hub
    rows = demo_rows(examples)              # VERL training rows (prove.rows)

Each multi-turn example is a two-turn banking conversation whose calls were executed on a fresh
episode of its seed, so the ids, balances and tool messages are real; an abstention example asks
for something no tool does. Same shape as a synthesis example (DESIGN.md "An example").
"""

from __future__ import annotations

import json
from typing import Any

from prove.env.hub import Hub
from prove.env.registry import Registry, load_registry
from prove.rows import turn_rows

__all__ = ["banking_example", "abstention_example", "demo_examples", "demo_rows", "SYSTEM"]

SYSTEM = "You are a banking assistant. Use the tools to act on the user's behalf."


def _assistant_calls(calls: list[dict[str, Any]], prefix: str) -> tuple[dict, list[dict]]:
    ids = [f"{prefix}_{i}" for i in range(len(calls))]
    message = {"role": "assistant", "content": "", "tool_calls": [
        {"id": i, "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
        for i, c in zip(ids, calls, strict=True)]}
    return message, ids


def _run(hub: Hub, episode: str, calls: list[dict[str, Any]], ids: list[str]) -> list[dict]:
    out = []
    for call, call_id in zip(calls, ids, strict=True):
        logged = hub.call(call["name"], call["arguments"], episode_id=episode)
        if not logged["ok"]:
            raise RuntimeError(f"demo call failed: {logged}")
        out.append({"role": "tool", "tool_call_id": call_id, "name": call["name"],
                    "content": json.dumps(logged["result"], ensure_ascii=False)})
    return out


def banking_example(hub: Hub, seed: int, *, amount: float = 25.0) -> dict[str, Any]:
    """A two-turn conversation: find a customer's accounts; check a balance and transfer."""
    episode = f"demo-build-{seed}"
    hub.open(episode, seed)
    try:
        customers = hub.call("search_bank_customers", {"query": ""}, episode_id=episode)["result"]["customers"]
        for customer in customers:
            accounts = hub.call("list_accounts", {"customer_id": customer["customer_id"]},
                                episode_id=episode)["result"]["accounts"]
            usable = [a for a in accounts if a["status"] == "active" and a["account_type"] != "credit"
                      and a["balance"] > amount * 4]
            if len(usable) >= 2 and usable[0]["currency"] == usable[1]["currency"]:
                break
        else:
            raise RuntimeError(f"seed {seed}: no customer with two usable accounts")
        hub.close(episode)
        hub.open(episode, seed)  # the conversation starts from the seed's initial state
        src, dst = usable[0]["account_id"], usable[1]["account_id"]
        turn0 = [{"name": "search_bank_customers", "arguments": {"query": customer["name"]}},
                 {"name": "list_accounts", "arguments": {"customer_id": customer["customer_id"]}}]
        turn1 = [{"name": "get_balance", "arguments": {"account_id": src}},
                 {"name": "transfer_funds", "arguments": {"from_account_id": src, "to_account_id": dst,
                                                          "amount": amount}}]
        a0, ids0 = _assistant_calls(turn0[:1], "c0")
        a1, ids1 = _assistant_calls(turn0[1:], "c1")
        a2, ids2 = _assistant_calls(turn1, "c2")
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"I'm {customer['name']}. Which accounts do I have?"},
            a0, *_run(hub, episode, turn0[:1], ids0),
            a1, *_run(hub, episode, turn0[1:], ids1),
            {"role": "assistant", "content": f"You have accounts {src} and {dst}."},
            {"role": "user", "content": f"Check the balance of {src}, then move {amount:g} to {dst}."},
            a2, *_run(hub, episode, turn1, ids2),
            {"role": "assistant", "content": f"Done: {amount:g} moved from {src} to {dst}."},
        ]
    finally:
        hub.close(episode)
    return {
        "id": f"demo-banking-{seed}", "kind": "multi_turn", "servers": ["banking"], "seed": seed,
        "tools": [t.openai_schema() for t in hub.registry.server("banking").tools],
        "messages": messages,
        "turns": [{"calls": turn0, "depends_on": [[0, 1]]}, {"calls": turn1, "depends_on": []}],
    }


def abstention_example(registry: Registry, seed: int) -> dict[str, Any]:
    """One turn no tool can serve: the right answer makes no call."""
    return {
        "id": f"demo-abstain-{seed}", "kind": "abstention", "servers": ["banking"], "seed": seed,
        "tools": [t.openai_schema() for t in registry.server("banking").tools],
        "messages": [{"role": "system", "content": SYSTEM},
                     {"role": "user", "content": "Can you recommend a good film for tonight?"},
                     {"role": "assistant", "content": "I can only help with your bank accounts."}],
        "turns": [{"calls": [], "depends_on": []}],
    }


def demo_examples(n: int = 3, registry: Registry | None = None, first_seed: int = 7) -> list[dict[str, Any]]:
    """``n`` banking conversations (seeds first_seed..) and one abstention example."""
    reg = registry if registry is not None else load_registry()
    hub = Hub(reg.subset(["banking"]))
    return ([banking_example(hub, first_seed + i) for i in range(n)]
            + [abstention_example(reg, first_seed + n)])


def demo_rows(examples: list[dict[str, Any]], split: str = "train") -> list[dict[str, Any]]:
    """Every turn of every example as a training row, indexed in order."""
    rows: list[dict[str, Any]] = []
    for example in examples:
        rows += turn_rows(example, start_index=len(rows), split=split)
    return rows
