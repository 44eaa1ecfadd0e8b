"""Effects (prove.env.effects): the canonical diff of what calls did to a server's records. Reads
and failed calls leave none, writes leave exactly what a whole private copy shows, the diff names
created, changed and deleted records, and the hub's copy-on-write episodes agree with it.

    .venv/bin/python -m pytest tests/env/test_effects.py -q
"""

from __future__ import annotations

import pickle
import random

import pytest

from prove.env import Hub, load_registry
from prove.env.effects import EMPTY_EFFECT, effect_hash, state_diff
from prove.env.errors import ToolError
from prove.env.sampling import ValuePool, random_calls

REG = load_registry()
SERVERS = sorted(REG.servers)


@pytest.mark.parametrize("server", SERVERS)
def test_reads_and_failed_calls_leave_no_effect_and_writes_the_whole_copys(server: str) -> None:
    hub = Hub(REG.subset([server]))
    spec = REG.server(server)
    hub.open("pool", 0)
    pool = ValuePool.of(hub, "pool", server)
    reads = random_calls([t for t in spec.tools if not t.write], pool, random.Random(1), 40, 0.0)
    hub.open("r", 0)
    for c in reads:
        hub.call(c["name"], c["arguments"], episode_id="r")
    assert hub.effect("r") == {server: {}} and effect_hash(hub.effect("r")) == EMPTY_EFFECT

    base = hub.store.bases[server].get(0)[0]
    whole = pickle.loads(pickle.dumps(base))  # the reference: every call on a whole private copy
    hub.open("w", 0)
    failed = 0
    for c in random_calls(list(spec.tools), pool, random.Random(2), 60, 0.7):
        before = hub.effect("w", [server])
        logged = hub.call(c["name"], c["arguments"], episode_id="w")
        tool = REG.tool(c["name"])
        try:
            tool.fn(whole, **tool.validate(c["arguments"]))
        except ToolError:
            pass
        if not logged["ok"]:
            failed += 1
            assert hub.effect("w", [server]) == before, c  # a refused call changes nothing
    assert hub.effect("w", [server]) == {server: state_diff(base, whole)}
    assert failed  # refusals were exercised (writes that worked: the last assertion covers them)


def test_the_diff_names_created_changed_and_deleted_records() -> None:
    hub = Hub(REG.subset(["banking"]))
    hub.open("e", 0)
    state = hub.state("e", "banking")
    active = [a for a in state["accounts"].values() if a["status"] == "active"]
    src = active[0]
    dst = next(a for a in active[1:] if a["currency"] == src["currency"])
    assert hub.call("transfer_funds", {"from_account_id": src["account_id"],
                                       "to_account_id": dst["account_id"], "amount": 5},
                    episode_id="e")["ok"]
    diff = hub.effect("e", ["banking"])["banking"]
    assert diff["accounts"]["changed"][src["account_id"]]["balance"] == [
        src["balance"], round(src["balance"] - 5, 2)]
    assert diff["accounts"]["changed"][dst["account_id"]]["balance"][1] == round(dst["balance"] + 5, 2)
    created = diff["transactions"]["created"]
    assert sorted(t["kind"] for t in created.values()) == ["transfer_in", "transfer_out"]
    assert set(diff) == {"accounts", "transactions"}  # untouched tables are left out
    base = hub.store.bases["banking"].get(0)[0]
    fewer = pickle.loads(pickle.dumps(base))
    gone = sorted(fewer.payees)[0]
    del fewer.payees[gone]
    assert state_diff(base, fewer) == {"payees": {"deleted": [gone]}}
    assert state_diff(fewer, base)["payees"]["created"][gone]["payee_id"] == gone
    # the same writes on another episode give the same effect, byte for byte
    hub.open("f", 0)
    hub.call("transfer_funds", {"from_account_id": src["account_id"],
                                "to_account_id": dst["account_id"], "amount": 5}, episode_id="f")
    assert effect_hash(hub.effect("f", ["banking"])) == effect_hash(hub.effect("e", ["banking"]))
    assert effect_hash(hub.effect("e", ["banking"])) != EMPTY_EFFECT
