"""Exactly-once calls, episode tokens, byte budget, rebuilds, strict arguments and new ids, in the hub.

    .venv/bin/python -m pytest tests/env/test_exactly_once.py -q
"""

from __future__ import annotations

import re

import pytest

from prove.env import DEFAULT_EPISODE, Hub, load_registry
from prove.env.episodes import deep_size
from prove.env.hub import (
    EpisodeConflict,
    EpisodeError,
    EpisodeForbidden,
    EpisodeLost,
    HubFull,
    parse_bytes,
)
from prove.env.registry import Registry, ServerSpec
from prove.env.state import Record, ServerState
from prove.env.tool import tool

REG = load_registry()
SERVERS = sorted(REG.servers)
TOKEN = "t" * 32
OTHER = "o" * 32
READ = ("get_bank_customer", {"customer_id": "CUS-0001"})
WRITE = ("set_card_status", {"card_id": "CRD-0001", "status": "locked"})


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _transfer(hub: Hub, episode_id: str) -> tuple[str, dict]:
    accts = hub.call("list_accounts", {"status": "active", "account_type": "checking"},
                     episode_id=episode_id, token=TOKEN, seq=1)["result"]["accounts"]
    usd = [a["account_id"] for a in accts if a["currency"] == "USD"][:2]
    return "transfer_funds", {"from_account_id": usd[0], "to_account_id": usd[1], "amount": 5.0}


def test_a_repeated_call_is_answered_from_the_record_not_run_twice() -> None:
    hub = Hub()
    hub.open("e", 0, token=TOKEN)
    name, args = _transfer(hub, "e")
    first = hub.call(name, args, episode_id="e", token=TOKEN, seq=2)
    after_one = hub.server_hash("e", "banking", TOKEN)
    again = hub.call(name, args, episode_id="e", token=TOKEN, seq=2)  # the reply was lost: ask again
    assert first == again and first["ok"]
    assert hub.server_hash("e", "banking", TOKEN) == after_one  # applied once
    with pytest.raises(EpisodeConflict, match="call #2 already ran a different call"):
        hub.call(*READ, episode_id="e", token=TOKEN, seq=2)
    with pytest.raises(EpisodeConflict, match="has applied 2 calls .* says it is #5"):
        hub.call(*READ, episode_id="e", token=TOKEN, seq=5)
    assert hub.server_hash("e", "banking", TOKEN) == after_one
    assert hub.call(*READ, episode_id="e", token=TOKEN, seq=3)["ok"]


def test_a_retried_lazy_open_with_the_same_token_and_prefix_is_the_same_episode() -> None:
    hub = Hub()
    prefix = [{"name": WRITE[0], "arguments": WRITE[1]}]
    one = hub.call(*READ, episode_id="lazy", seed=0, prefix=prefix, token=TOKEN, seq=1)
    two = hub.call(*READ, episode_id="lazy", seed=0, prefix=prefix, token=TOKEN, seq=1)
    assert one == two and hub.store.get("lazy").seq == 1


def test_wrong_or_missing_token_is_refused_everywhere() -> None:
    hub = Hub()
    hub.open("mine", 0, token=TOKEN)
    hub.call(*WRITE, episode_id="mine", token=TOKEN, seq=1)
    digest = hub.state_hash("mine", ["banking"], TOKEN)
    for token in (OTHER, None):
        with pytest.raises(EpisodeForbidden, match="'mine' belongs to another owner"):
            hub.call(*READ, episode_id="mine", token=token)
        with pytest.raises(EpisodeForbidden):
            hub.state_hash("mine", ["banking"], token)
        with pytest.raises(EpisodeForbidden):
            hub.close("mine", token)
        with pytest.raises(EpisodeError):
            hub.open("mine", 0, token=token)
        with pytest.raises(EpisodeError):
            hub.open("mine", 0, token=token, replace=True)
    assert hub.state_hash("mine", ["banking"], TOKEN) == digest
    assert hub.close("mine", TOKEN) is True


def test_a_token_call_never_lands_in_an_episode_opened_without_one() -> None:
    hub = Hub()
    hub.call(*WRITE, episode_id="plain")  # a stock-style lazy open, no token
    with pytest.raises(EpisodeForbidden, match="opened without an episode token"):
        hub.call(*READ, episode_id="plain", token=TOKEN, seq=1)


def test_stock_client_calls_use_the_default_episode() -> None:
    hub = Hub()
    assert hub.call(*WRITE)["ok"] and hub.call(*READ)["ok"]
    assert hub.store.get(DEFAULT_EPISODE).seq == 2


def test_a_prefix_on_an_open_id_must_match_what_it_was_opened_from() -> None:
    hub = Hub()
    hub.open("p", 0, [{"name": WRITE[0], "arguments": WRITE[1]}])
    with pytest.raises(EpisodeConflict, match="different prefix"):
        hub.call(*READ, episode_id="p", prefix=[])
    with pytest.raises(EpisodeConflict, match="different prefix"):
        hub.call(*READ, episode_id="p", prefix=[{"name": READ[0], "arguments": READ[1]}])
    assert hub.call(*READ, episode_id="p", prefix=[{"name": WRITE[0], "arguments": WRITE[1]}])["ok"]
    with pytest.raises(EpisodeConflict, match="seed 0; this call carries seed 3"):
        hub.call(*READ, episode_id="p", seed=3)


def test_a_call_past_the_first_to_an_episode_that_is_not_open_fails_every_time() -> None:
    hub = Hub(max_episodes=1, busy_seconds=0, max_gone=2)
    hub.open("a", 0, token=TOKEN)
    hub.open("b", 0, token=TOKEN)  # evicts a
    for _ in range(3):
        with pytest.raises(EpisodeLost, match="'a' was evicted"):
            hub.call(*READ, episode_id="a", token=TOKEN, seq=1)
    for i in range(3):  # more losses than max_gone: 'a' is forgotten
        hub.open(f"x{i}", 0)
    assert hub.store.gone("a") is None
    with pytest.raises(EpisodeLost, match=r"not open on this server .*\(_meta.seq 2\)"):
        hub.call(*READ, episode_id="a", token=TOKEN, seq=2)  # still never a silent reseed


def test_memory_budget_evicts_least_recently_used_and_reports_it() -> None:
    clock = FakeClock()
    hub = Hub(max_memory=1 << 20, busy_seconds=5, clock=clock)
    assert hub.call(*WRITE, episode_id="w0", token=TOKEN, seq=1)["ok"]
    cost = hub.store.get("w0").bytes  # a write view's tables + the one card it copied
    whole = deep_size(hub.store.bases["banking"].get(0)[0])
    assert 2048 < cost < whole // 4  # far less than a whole private copy
    n = (1 << 20) // cost + 3
    for i in range(1, n):
        clock.t += 10
        assert hub.call(*WRITE, episode_id=f"w{i}", token=TOKEN, seq=1)["ok"]
        assert hub.store.bytes <= 8 << 20
    assert hub.store.evicted >= 3
    with pytest.raises(EpisodeLost, match="'w0' was evicted: the server keeps its episodes within "
                                          "1048576 bytes"):
        hub.call(*READ, episode_id="w0", token=TOKEN, seq=2)
    clock.t += 1  # from now on every episode was called within the last 5 s: in use
    for i in range(n):
        if hub.is_open(f"w{i}"):
            hub.call(*READ, episode_id=f"w{i}", token=TOKEN, seq=2)
    with pytest.raises(HubFull, match="memory budget"):  # nothing idle to evict: refuse
        for i in range(n):
            hub.call(*WRITE, episode_id=f"late{i}", token=TOKEN, seq=1)
    refused = hub.store.get(f"late{i}")  # refused at the open, or opened with nothing copied
    assert refused is None or refused.states == {}
    assert hub.store.bytes <= (1 << 20) + cost


def test_byte_counts_stay_exact_through_close_expiry_and_replace() -> None:
    clock = FakeClock()
    hub = Hub(idle_seconds=100, clock=clock)
    for i in range(4):
        hub.call(*WRITE, episode_id=f"e{i}", token=TOKEN, seq=1)
    hub.close("e0", TOKEN)
    hub.open("e1", 0, [{"name": WRITE[0], "arguments": WRITE[1]}], token=TOKEN, replace=True)
    clock.t = 1000
    hub.store.expire()
    assert len(hub.store) == 0 and hub.store.bytes == 0


def test_rebuild_never_touches_the_live_episode_until_the_replay_succeeded() -> None:
    hub = Hub(max_prefix=2)
    hub.open("r", 0, token=TOKEN)
    hub.call(*WRITE, episode_id="r", token=TOKEN, seq=1)
    live = hub.state_hash("r", ["banking"], TOKEN)
    bad = [{"name": "set_card_status", "arguments": {"card_id": "CRD-9999", "status": "locked"}}]
    with pytest.raises(EpisodeError, match="prefix\\[0\\]"):
        hub.open("r", 0, bad, token=TOKEN, replace=True)
    assert hub.state_hash("r", ["banking"], TOKEN) == live and hub.store.get("r").seq == 1
    # a replay longer than max_prefix goes in chunks, swapped in by the last
    log = [{"name": WRITE[0], "arguments": WRITE[1]}] + [{"name": READ[0], "arguments": READ[1]}] * 4
    for i in range(0, len(log), 2):
        hub.open("r", 0, log[i:i + 2], token=TOKEN, replace=True, seq=5, append=i > 0,
                 final=i + 2 >= len(log))
        if i + 2 < len(log):
            assert hub.state_hash("r", ["banking"], TOKEN) == live  # staged, not live yet
    assert hub.state_hash("r", ["banking"], TOKEN) == live  # the same calls: the same state
    assert hub.store.get("r").seq == 5
    assert hub.call(*READ, episode_id="r", token=TOKEN, seq=6)["ok"]
    with pytest.raises(EpisodeConflict, match="no staged build"):
        hub.open("r", 0, [], token=TOKEN, append=True)


def test_parse_bytes() -> None:
    assert parse_bytes("2G") == 2 << 30 and parse_bytes("512MiB") == 512 << 20
    assert parse_bytes("1048576") == 1 << 20
    with pytest.raises(ValueError, match="like 2G"):
        parse_bytes("lots")


# -- strict arguments, every server ------------------------------------------------------------
def _typed_params(kind: str) -> list[tuple[str, str]]:
    out = []
    for spec in REG.tools.values():
        for name, prop in spec.input_schema.get("properties", {}).items():
            types = {prop.get("type")} | {o.get("type") for o in prop.get("anyOf", ())}
            if kind in types:
                out.append((spec.name, name))
    return out


NUMBERS = _typed_params("number") + _typed_params("integer")
BOOLS = _typed_params("boolean")


@pytest.mark.parametrize(("name", "param"), NUMBERS, ids=[f"{n}.{p}" for n, p in NUMBERS])
def test_numbers_refuse_booleans_and_strings(name: str, param: str) -> None:
    hub = Hub(registry=REG)
    for bad in (True, "10"):
        out = hub.call(name, {param: bad}, episode_id="s")
        assert not out["ok"]
        assert re.search(rf"argument '{param}' must be (a number|an integer)", out["error"]), out


@pytest.mark.parametrize(("name", "param"), BOOLS, ids=[f"{n}.{p}" for n, p in BOOLS])
def test_booleans_refuse_strings_and_numbers(name: str, param: str) -> None:
    hub = Hub(registry=REG)
    for bad in ("true", 1):
        out = hub.call(name, {param: bad}, episode_id="s")
        assert not out["ok"] and f"argument '{param}' must be true or false" in out["error"], out


def test_every_server_has_numeric_parameters_checked() -> None:
    assert {REG.tool(n).server for n, _ in NUMBERS} >= {"banking", "crm", "shop"} & set(REG.servers)


def test_money_is_rounded_to_cents_before_the_positive_check() -> None:
    hub = Hub()
    name, args = _transfer(hub, "m")
    before = hub.server_hash("m", "banking", TOKEN)
    out = hub.call(name, {**args, "amount": 0.004}, episode_id="m", token=TOKEN, seq=2)
    assert not out["ok"] and "amount" in out["error"] and "greater than 0" in out["error"]
    assert hub.server_hash("m", "banking", TOKEN) == before
    out = hub.call(name, {**args, "amount": 1.005}, episode_id="m", token=TOKEN, seq=3)
    assert out["ok"] and out["result"]["amount"] == round(1.005, 2)


# -- new ids never reuse seeded ones ----------------------------------------------------------
@pytest.mark.parametrize("server", SERVERS)
def test_new_ids_never_reuse_an_id_of_the_initial_state(server: str) -> None:
    """For every id kind in the state, the next new id is not an existing one."""
    pattern = re.compile(r"([A-Z][A-Z0-9]*)-(\d+)")
    for seed in (0, 1):
        state = REG.server(server).initial_state(seed)
        text = state.model_dump_json()
        existing = set(pattern.findall(text))
        for prefix in {p for p, _ in existing}:
            new = state.new_id(prefix)
            assert tuple(new.split("-")) not in existing, (server, seed, new)


class Loan(Record):
    loan_id: str


class LoanState(ServerState):
    loans: dict[str, Loan]


@tool(write=True)
def open_loan(state: LoanState) -> Loan:
    """Open a loan."""
    loan = Loan(loan_id=state.new_id("LN"))
    state.loans[loan.loan_id] = loan
    return loan


def test_a_server_that_forgot_its_counter_still_gets_fresh_ids() -> None:
    def seeded(seed: int) -> LoanState:
        return LoanState(now="2026-01-01T00:00", loans={"LN-0001": Loan(loan_id="LN-0001")})

    spec = ServerSpec.build("loans", "finance", "Loans.", LoanState, seeded, [open_loan])
    hub = Hub(Registry([spec]))
    out = hub.call("open_loan", {}, episode_id="l")
    assert out["result"]["loan_id"] == "LN-0002"
    assert len(hub.state("l", "loans")["loans"]) == 2


@tool(write=True)
def close_loan(state: LoanState, loan_id: str) -> Loan:
    """Close (delete) a loan."""
    return state.loans.pop(loan_id)


def test_ids_continue_from_the_seeded_state_and_a_deleted_id_is_never_reissued() -> None:
    """No counter is kept by hand; the one `new_id` keeps is state: open-then-close leaves the tables
    as seeded, yet the next id differs, and so does the hash (a write is never hidden)."""
    def seeded(seed: int) -> LoanState:
        return LoanState(now="2026-01-01T00:00", loans={f"LN-000{i}": Loan(loan_id=f"LN-000{i}") for i in (1, 4)})

    spec = ServerSpec.build("loans", "finance", "Loans.", LoanState, seeded, [open_loan, close_loan])
    hub = Hub(Registry([spec]))
    hub.open("l")
    hub.open("fresh")
    seeded_hash = hub.state_hash("l", ["loans"])
    assert hub.state("l", "loans")["counters"] == {}
    opened = hub.call("open_loan", {}, episode_id="l")["result"]["loan_id"]
    assert opened == "LN-0005"
    hub.call("close_loan", {"loan_id": opened}, episode_id="l")
    assert hub.state("l", "loans")["loans"] == hub.state("fresh", "loans")["loans"]
    assert hub.state_hash("l", ["loans"]) != seeded_hash
    assert hub.call("open_loan", {}, episode_id="l")["result"]["loan_id"] == "LN-0006"


# -- copy-on-write views are exactly whole private copies, and never touch the base ------------
@pytest.mark.parametrize("server", SERVERS)
def test_copy_on_write_views_equal_whole_copies_and_leave_the_base_frozen(server: str) -> None:
    import pickle
    import random

    from mcp.server.mcpserver.exceptions import ToolError

    from prove.env.sampling import ValuePool, random_calls
    from prove.env.state import state_hash

    hub = Hub(REG.subset([server]))
    spec = REG.server(server)
    for seed in (0, 1):
        base, blob, digest, _ = hub.store.bases[server].get(seed)
        hub.open("pool", seed)
        pool = ValuePool.of(hub, "pool", server)
        hub.close("pool")
        for k in range(3):
            calls = random_calls(list(spec.tools), pool, random.Random(100 * seed + k), 60, 0.7)
            whole = pickle.loads(blob)  # the reference: every call on a whole private copy
            eid = f"e{seed}-{k}"
            hub.open(eid, seed)
            for c in calls:
                logged = hub.call(c["name"], c["arguments"], episode_id=eid)
                tool_spec = REG.tool(c["name"])
                try:
                    result = tool_spec.fn(whole, **tool_spec.validate(c["arguments"]))
                    expected = {"ok": True, "result": result.model_dump(mode="json")}
                except ToolError as exc:
                    expected = {"ok": False, "error": str(exc)}
                assert {k2: logged[k2] for k2 in expected} == expected, c
            assert hub.server_hash(eid, server) == state_hash(whole), (server, seed, k)
        assert state_hash(base) == digest, f"{server}: a write changed the shared base of seed {seed}"
