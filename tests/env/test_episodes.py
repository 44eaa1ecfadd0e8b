"""Episodes: lazy seeding, copy-on-write sharing, isolation, close, idle expiry, LRU cap, prefix, hashes."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prove.env import DEFAULT_EPISODE, EpisodeError, Hub, load_registry
from prove.env.hub import EpisodeLost
from prove.env.sampling import ValuePool, random_calls

REG = load_registry()
SERVERS = sorted(REG.servers)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_episode_is_created_lazily_from_the_calls_seed() -> None:
    hub = Hub()
    out = hub.call("get_bank_account", {"account_id": "ACC-0001"}, episode_id="lazy", seed=5)
    assert out["ok"] and hub.is_open("lazy")
    other = Hub()
    other.open("x", seed=5)
    assert hub.server_hash("lazy", "banking") == other.server_hash("x", "banking")


def test_call_without_episode_uses_the_default_episode() -> None:
    hub = Hub()
    hub.call("get_bank_account", {"account_id": "ACC-0001"})
    assert hub.is_open(DEFAULT_EPISODE)
    assert hub.store.get(DEFAULT_EPISODE).seed == 0


def test_copy_on_write_shares_until_first_write_and_isolates_after() -> None:
    hub = Hub()
    hub.open("a", seed=3)
    hub.open("b", seed=3)
    a, b = hub.store.get("a"), hub.store.get("b")
    assert hub.store.read_state(a, "banking") is hub.store.read_state(b, "banking")  # shared base
    base_hash = hub.server_hash("a", "banking")
    acc = hub.call("list_accounts", {"status": "active", "account_type": "checking"}, episode_id="a")
    ids = [x["account_id"] for x in acc["result"]["accounts"] if x["currency"] == "USD"][:2]
    out = hub.call("transfer_funds", {"from_account_id": ids[0], "to_account_id": ids[1], "amount": 1.0},
                   episode_id="a")
    assert out["ok"], out
    assert hub.server_hash("a", "banking") != base_hash
    assert hub.server_hash("b", "banking") == base_hash  # b still sees the untouched base
    assert hub.store.read_state(b, "banking") is not hub.store.read_state(a, "banking")


def test_close_forgets_and_reopen_starts_fresh() -> None:
    hub = Hub()
    hub.open("c", seed=1)
    hub.call("set_card_status", {"card_id": "CRD-0001", "status": "cancelled"}, episode_id="c")
    changed = hub.server_hash("c", "banking")
    assert hub.close("c") is True and hub.close("c") is False
    with pytest.raises(EpisodeError, match="not open"):
        hub.server_hash("c", "banking")
    hub.open("c", seed=1)
    assert hub.server_hash("c", "banking") != changed


def test_idle_episodes_expire() -> None:
    clock = FakeClock()
    hub = Hub(idle_seconds=10, clock=clock)
    hub.open("old", 0)
    clock.t = 6
    hub.open("young", 0)
    clock.t = 12
    hub.open("new", 0)  # creation sweeps: "old" idle 12 s > 10 s, "young" idle 6 s
    assert not hub.is_open("old") and hub.is_open("young") and hub.is_open("new")
    clock.t = 15
    hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="young")  # touch keeps it alive
    clock.t = 23
    assert hub.store.expire() == 1  # "new" (last used at 12) expires, "young" (15) does not
    assert hub.is_open("young") and not hub.is_open("new")


def test_cap_evicts_least_recently_used_idle_episode_and_its_next_call_says_so() -> None:
    clock = FakeClock()
    hub = Hub(max_episodes=3, busy_seconds=5, clock=clock)
    for e in "abc":
        hub.open(e, 0)
    clock.t = 10
    hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="a")  # a becomes most recent
    hub.open("d", 0)
    assert [e for e in "abcd" if hub.is_open(e)] == ["a", "c", "d"]
    assert hub.store.evicted == 1
    with pytest.raises(EpisodeLost, match=r"'b' was evicted: the server keeps at most 3 open episodes"):
        hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="b")
    assert not hub.is_open("b")  # the refused call ran nothing and opened nothing
    for resume in (False, True, False):  # every time, not once: no silent reseed on a retry
        with pytest.raises(EpisodeLost, match="'b' was evicted"):
            hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="b", resume=resume)
    assert not hub.is_open("b")
    hub.close("b")  # the owner lets the id go: it may start afresh
    assert hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="b")["ok"]


def test_episodes_in_use_are_never_evicted_a_new_one_is_refused_instead() -> None:
    clock = FakeClock()
    hub = Hub(max_episodes=2, busy_seconds=5, clock=clock)
    hub.open("a", 0)
    hub.open("b", 0)
    hashes = {e: hub.server_hash(e, "banking") for e in "ab"}
    clock.t = 4  # both used within the last 5 s
    with pytest.raises(EpisodeError, match="cap of 2 open episodes .* every one is in use"):
        hub.open("c", 0)
    assert [hub.is_open(e) for e in "abc"] == [True, True, False]
    assert {e: hub.server_hash(e, "banking") for e in "ab"} == hashes and hub.store.evicted == 0
    hub.store.get("a").pins = 1  # a request in flight on a, however old its last call
    clock.t = 100
    hub.open("c", 0)
    assert [hub.is_open(e) for e in "abc"] == [True, False, True]


def test_expired_episode_is_reported_not_silently_reseeded() -> None:
    clock = FakeClock()
    hub = Hub(idle_seconds=10, clock=clock)
    hub.open("x", 0)
    clock.t = 20
    assert hub.store.expire() == 1
    with pytest.raises(EpisodeLost, match=r"'x' expired after more than 10 s idle"):
        hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="x")
    assert not hub.is_open("x")


def test_prefix_replays_earlier_calls() -> None:
    prefix = [
        {"name": "set_card_status", "arguments": {"card_id": "CRD-0001", "status": "cancelled"}},
        {"name": "add_payee", "arguments": {"customer_id": "CUS-0001", "name": "Z", "account_number": "1000000001"}},
    ]
    hub = Hub()
    hub.open("manual", seed=2)
    for call in prefix:
        hub.call(call["name"], call["arguments"], episode_id="manual")
    replayed = hub.open("pre", seed=2, prefix=prefix)
    assert [c["ok"] for c in replayed] == [True, True]
    assert hub.server_hash("pre", "banking") == hub.server_hash("manual", "banking")
    lazy = Hub()
    lazy.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="p", seed=2, prefix=prefix)
    assert lazy.server_hash("p", "banking") == hub.server_hash("manual", "banking")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda h: h.open("", 0), "non-empty string"),
        (lambda h: h.open("e", -1), "seed must be an integer"),
        (lambda h: h.open("e", "7"), "seed must be an integer"),
        (lambda h: h.open("e", 0, prefix=[{"name": "nope"}]), r"prefix\[0\]"),
        (lambda h: h.open("e", 0, prefix="x"), "prefix must be a list"),
        (lambda h: h.state_hash("never"), "not open"),
    ],
)
def test_bad_control_input_is_explained(call, message: str) -> None:
    hub = Hub()
    with pytest.raises(EpisodeError, match=message):
        call(hub)
    assert not hub.is_open("e")


def test_seed_mismatch_is_refused() -> None:
    hub = Hub()
    hub.open("e", seed=1)
    with pytest.raises(EpisodeError, match="opened with seed 1; this call carries seed 2"):
        hub.call("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="e", seed=2)


def test_reopening_an_open_episode_is_refused() -> None:
    hub = Hub()
    hub.open("e", 0)
    with pytest.raises(EpisodeError, match="already open"):
        hub.open("e", 0)


def test_state_hash_covers_the_servers_asked_for() -> None:
    hub = Hub()
    hub.open("e", 0)
    assert hub.state_hash("e") == hub.state_hash("e", [])
    both = hub.state_hash("e", SERVERS[:2])
    assert both == hub.state_hash("e", list(reversed(SERVERS[:2])))
    with pytest.raises(KeyError, match="unknown server"):
        hub.state_hash("e", ["atlantis"])


_HASHES_CODE = (
    "import json; from prove.env import Hub; h = Hub(); "
    "out = {}\n"
    "for seed in (11, 12):\n"
    "    h.open(f'e{seed}', seed=seed)\n"
    "    out[seed] = {s: h.server_hash(f'e{seed}', s) for s in sorted(h.registry.servers)}\n"
    "print(json.dumps(out))"
)


@pytest.fixture(scope="module")
def initial_hashes_in_two_processes() -> list[dict]:
    """Every server's initial hash for seeds 11 and 12, computed in two fresh processes."""
    return [
        json.loads(subprocess.run([sys.executable, "-c", _HASHES_CODE], capture_output=True, text=True,
                                  check=True, env={**os.environ, "PYTHONHASHSEED": str(i)}).stdout)
        for i in (1, 2)
    ]


@pytest.mark.parametrize("server", SERVERS)
def test_same_seed_same_initial_hash_in_two_processes(server: str, initial_hashes_in_two_processes) -> None:
    first, second = initial_hashes_in_two_processes
    assert first["11"][server] == second["11"][server] and len(first["11"][server]) == 64
    assert first["12"][server] == second["12"][server]
    assert first["12"][server] != first["11"][server], "different seeds should build different worlds"


@pytest.mark.parametrize("server", SERVERS)
def test_reads_never_change_state_and_failed_writes_leave_it_unchanged(server: str) -> None:
    hub = Hub()
    hub.open("e", seed=4)
    pool = ValuePool.of(hub, "e", server)
    rng = random.Random(4)
    tools = list(REG.server(server).tools)
    n_fail = 0
    for call in random_calls(tools, pool, rng, 300):
        before = hub.server_hash("e", server)
        out = hub.call(call["name"], call["arguments"], episode_id="e")
        if not out["ok"] or not REG.tool(call["name"]).write:
            assert hub.server_hash("e", server) == before, out
            n_fail += not out["ok"]
        if out["ok"]:
            json.dumps(out["result"])  # results are plain JSON
    assert 0 < n_fail < 300


class StoreModel:
    """Reference model for the property test: a plain dict of opened episodes."""

    def __init__(self) -> None:
        self.open: dict[str, int] = {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["open", "close", "write", "hash"]),
                          st.sampled_from(["e1", "e2", "e3"]), st.integers(0, 2)), max_size=30))
def test_store_matches_a_reference_model(ops) -> None:
    hub = Hub(max_episodes=10)
    model = StoreModel()
    writes: dict[str, list[dict]] = {}
    for op, eid, seed in ops:
        if op == "open":
            if eid in model.open:
                with pytest.raises(EpisodeError):
                    hub.open(eid, seed)
            else:
                hub.open(eid, seed)
                model.open[eid], writes[eid] = seed, []
        elif op == "close":
            assert hub.close(eid) is (model.open.pop(eid, None) is not None)
        elif op == "write" and eid in model.open:
            call = {"name": "set_card_status", "arguments": {"card_id": f"CRD-000{seed + 1}", "status": "cancelled"}}
            out = hub.call(call["name"], call["arguments"], episode_id=eid)
            writes[eid].append({**call, "ok": out["ok"]})  # a second cancel fails: replay says so
        elif op == "hash" and eid in model.open:
            fresh = Hub()
            fresh.open("r", model.open[eid], prefix=writes[eid])
            assert hub.server_hash(eid, "banking") == fresh.server_hash("r", "banking")
    assert sorted(e for e in ("e1", "e2", "e3") if hub.is_open(e)) == sorted(model.open)


def test_async_open_yields_to_other_calls_while_its_prefix_replays() -> None:
    import asyncio

    hub = Hub()
    prefix = [{"name": "get_bank_customer", "arguments": {"customer_id": "CUS-0001"}}] * 320
    seen_opening: list[bool] = []

    async def bystander() -> None:
        for _ in range(5):
            await asyncio.sleep(0)
            out = await hub.acall("get_bank_customer", {"customer_id": "CUS-0001"}, episode_id="other")
            assert out["ok"]
            seen_opening.append("long" in hub._opening)

    async def run() -> int:
        opened, _ = await asyncio.gather(hub.open_async("long", 0, prefix), bystander())
        return opened

    assert asyncio.run(run()) == 320
    assert any(seen_opening), "no other call ran while the prefix replayed"
    with pytest.raises(EpisodeError, match="already open"):
        hub.open("long", 0)
