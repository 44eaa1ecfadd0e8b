"""Helpers shared by the training tests (a unique module name: tests/ has no packages)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, closing the pooled env connections of that loop afterwards."""
    from prove.train.session import close_clients

    async def main() -> T:
        try:
            return await coro
        finally:
            await close_clients()

    return asyncio.run(main())


def need_verl() -> None:
    """Skip unless verl imports (the `train` extra: torch CPU build, then verl 0.9.1)."""
    if importlib.util.find_spec("verl") is None:
        pytest.skip("verl is not installed (the train extra); VERL integration not exercised")
    import verl.experimental.agent_loop.tool_agent_loop  # noqa: F401  (installed, so it must import)


def need_verl_sft() -> None:
    """Skip without VERL; with it, VERL's SFT dataset must import (the pinned transformers has what it needs)."""
    need_verl()
    import verl.utils.dataset.multiturn_sft_dataset  # noqa: F401


# -- picking rows of the synthesis fixture (tests/conftest.py: synth_rows) ---------------------------

def ground_truth(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's ground-truth calls."""
    return json.loads(row["reward_model"]["ground_truth"])["calls"]


def row_of(rows: list[dict[str, Any]], kind: str, turn: int = 0) -> dict[str, Any]:
    """The first row of that kind at that user turn."""
    found = [r for r in rows if r["extra_info"]["kind"] == kind and r["extra_info"]["turn"] == turn]
    assert found, f"the synthesis fixture has no {kind} row at turn {turn}"
    return found[0]


def lookup_call(row: dict[str, Any]) -> dict[str, Any] | None:
    """The row's first ground-truth call when it reads and takes required arguments: it succeeds
    at the start of the turn, again and again, and fails without its arguments."""
    from prove.env.registry import load_registry

    calls = ground_truth(row)
    if not calls:
        return None
    spec = load_registry().tools[calls[0]["name"]]
    return calls[0] if not spec.write and spec.required else None


def lookup_rows(rows: list[dict[str, Any]], turn: int = 1) -> list[dict[str, Any]]:
    """Multi-turn rows at ``turn`` (a replayed prefix) whose turn starts with a lookup."""
    found = [r for r in rows if r["extra_info"]["kind"] == "multi_turn" and r["extra_info"]["turn"] == turn
             and lookup_call(r) is not None]
    assert found, f"the synthesis fixture has no multi-turn row at turn {turn} that starts with a lookup"
    return found


def banking_rows(rows: list[dict[str, Any]], turn: int = 1) -> list[dict[str, Any]]:
    """Rows at ``turn`` of conversations that use the bank (their episodes hold accounts)."""
    found = [r for r in rows if "banking" in r["extra_info"]["servers"] and r["extra_info"]["turn"] == turn]
    assert found, f"the synthesis fixture has no banking row at turn {turn}"
    return found


def transfer_pair(row: dict[str, Any], amount: float = 100.0) -> tuple[str, str]:
    """Two active accounts of the same currency in the row's episode (its seed, its prefix
    replayed) between which ``amount`` can move, the debited one named in the row when one is."""
    from prove.env.hub import Hub
    from prove.rows import episode_spec

    spec = episode_spec(row["extra_info"]["tools_kwargs"]["prove"]["create_kwargs"])
    hub = Hub()
    hub.open("transfer-pair", spec.seed, list(spec.prefix))
    accounts = list(hub.state("transfer-pair", "banking")["accounts"].values())
    hub.close("transfer-pair")
    text = json.dumps([row["prompt"], row["reward_model"]["ground_truth"]])
    usable = [a for a in accounts if a["status"] == "active"]
    funded = [a for a in usable if a["balance"] + a["credit_limit"] >= amount
              and a["daily_transfer_limit"] - a["transferred_today"] >= amount]
    funded.sort(key=lambda a: a["account_id"] not in text)  # stable: the row's own accounts first
    for src in funded:
        for dst in usable:
            if dst["account_id"] != src["account_id"] and dst["currency"] == src["currency"]:
                return src["account_id"], dst["account_id"]
    raise AssertionError(f"no two accounts of one currency can move {amount} in {row['extra_info']['example_id']}")


def unclosed_episodes(url: str) -> int:
    """Episodes opened on the server and never closed: those still open plus those it dropped
    (expired when idle, evicted). Compared before and after a rollout, it moves only when the rollout
    leaves an episode open; the open count alone also falls when another test's leftovers expire
    (the suite's shared server expires episodes idle for 30 minutes)."""
    import urllib.request

    with urllib.request.urlopen(f"{url}/control/health", timeout=10) as resp:
        health = json.loads(resp.read())
    return int(health["episodes"]) + int(health["evicted"]) + int(health["expired"])
