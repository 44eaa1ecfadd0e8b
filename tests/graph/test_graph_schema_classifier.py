"""The schema classifier on the real servers: known edges, invariants, agreement floor (pytest tests/graph)."""

from __future__ import annotations

import pytest

from prove.env.registry import Registry
from prove.graph import SchemaClassifier, agreement_table, load_labels, tool_pairs

NEEDED = ("banking", "flights", "shop")


@pytest.fixture(scope="module")
def reg(registry: Registry) -> Registry:
    missing = [s for s in NEEDED if s not in registry.servers]
    if missing:
        pytest.skip(f"servers {missing} are not loaded (PROVE_SERVERS)")
    return registry


@pytest.mark.parametrize("a, b, relation, argument", [
    ("search_flights", "book_flight", "explicit", "flight_id"),
    ("search_flights", "change_booking_flight", "explicit", "new_flight_id"),
    ("get_seat_map", "select_seat", "explicit", "seat"),
    ("list_airports", "search_flights", "explicit", "origin"),
    ("book_flight", "check_in_for_flight", "explicit", "booking_id"),
    ("list_accounts", "transfer_funds", "explicit", "from_account_id"),
    ("transfer_funds", "get_balance", "implicit", None),
    ("add_to_shopping_cart", "checkout_shopping_cart", "implicit", None),
    ("get_balance", "transfer_funds", "none", None),
    ("get_account", "get_balance", "none", None),  # the id is A's own input: no new information
])
def test_known_pairs(reg: Registry, a: str, b: str, relation: str, argument: str | None) -> None:
    j = SchemaClassifier().judge(reg.tool(a), reg.tool(b))
    assert (j.relation, j.argument) == (relation, argument), j.reason
    assert j.reason and j.classifier == "schema"


def test_cross_server_pairs_are_none(reg: Registry) -> None:
    j = SchemaClassifier().judge(reg.tool("search_flights"), reg.tool("transfer_funds"))
    assert j.relation == "none" and j.reason == "different servers"


def test_invariants_over_every_pair(reg: Registry) -> None:
    pairs = tool_pairs(reg, NEEDED)
    first = SchemaClassifier().classify_sync(pairs)
    again = SchemaClassifier().classify_sync(pairs)
    assert first == again, "the schema classifier must be deterministic"
    for (a, b), j in zip(pairs, first, strict=True):
        assert (j.source, j.target, j.server) == (a.name, b.name, a.server)
        if j.relation == "explicit":
            assert j.argument in b.params
        else:
            assert j.argument is None
        if j.relation == "implicit":
            assert a.write, f"{a.name} is a read and cannot change state"


def test_agreement_with_hand_labels_does_not_regress(reg: Registry) -> None:
    labels = load_labels()
    judgements = SchemaClassifier().classify_sync(labels.pairs(reg))
    table = agreement_table({"schema": judgements}, labels).set_index("relation")
    assert table.loc["explicit", "f1"] >= 0.80, table
    assert table.loc["implicit", "f1"] >= 0.55, table
    assert table.loc["explicit", "argument_ok"] >= 0.95, table
