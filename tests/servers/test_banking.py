"""Banking server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.banking import SERVER
from prove_servers.banking.state import (
    Account,
    BankState,
    Card,
    Customer,
    Payee,
    ScheduledPayment,
    Transaction,
)


def tiny() -> BankState:
    s = BankState(now="2026-03-16T09:00")
    for cid, name, city in (("CUS-0001", "Ada Chen", "Berlin"), ("CUS-0002", "Bo Silva", "Lisbon")):
        s.customers[cid] = Customer(customer_id=cid, name=name, email=f"{name.split()[0].lower()}@x.com",
                                    phone="+1-555-100-1000", city=city)
    acc = dict(account_type="checking", currency="USD", daily_transfer_limit=1000.0, opened_on="2020-01-01")
    s.accounts["ACC-0001"] = Account(account_id="ACC-0001", customer_id="CUS-0001", balance=500.0, status="active", **acc)
    s.accounts["ACC-0002"] = Account(account_id="ACC-0002", customer_id="CUS-0002", balance=50.0, status="active", **acc)
    s.accounts["ACC-0003"] = Account(account_id="ACC-0003", customer_id="CUS-0002", balance=9.0, status="frozen", **acc)
    s.accounts["ACC-0004"] = Account(account_id="ACC-0004", customer_id="CUS-0001", balance=70.0, status="active",
                                     **{**acc, "currency": "EUR"})
    s.transactions["TXN-0001"] = Transaction(transaction_id="TXN-0001", account_id="ACC-0001", kind="card_payment",
                                             amount=12.5, category="dining", description="lunch",
                                             counterparty="Blue Door Cafe", timestamp="2026-03-10T12:00")
    s.transactions["TXN-0002"] = Transaction(transaction_id="TXN-0002", account_id="ACC-0001", kind="deposit",
                                             amount=2000.0, category="salary", description="salary",
                                             counterparty="Acme", timestamp="2026-03-01T08:00")
    s.payees["PAY-0001"] = Payee(payee_id="PAY-0001", customer_id="CUS-0001", name="Lee Landlord",
                                 account_number="1234567890", nickname="landlord")
    s.payees["PAY-0002"] = Payee(payee_id="PAY-0002", customer_id="CUS-0002", name="Gym Co",
                                 account_number="9876543210", nickname="gym")
    s.cards["CRD-0001"] = Card(card_id="CRD-0001", account_id="ACC-0001", last4="4242", status="active")
    s.cards["CRD-0002"] = Card(card_id="CRD-0002", account_id="ACC-0001", last4="1111", status="cancelled")
    s.scheduled["SCH-0001"] = ScheduledPayment(payment_id="SCH-0001", account_id="ACC-0001", payee_id="PAY-0001",
                                               amount=800.0, date="2026-03-30", status="scheduled")
    return s


hub = hub_fixture(SERVER, tiny)


def test_customers(hub: Hub) -> None:
    assert ok(hub, "search_bank_customers", query="ada")["total"] == 1
    assert ok(hub, "search_bank_customers", city="lisbon")["customers"][0]["customer_id"] == "CUS-0002"
    assert ok(hub, "get_bank_customer", customer_id="CUS-0002")["name"] == "Bo Silva"
    fails(hub, "get_bank_customer", "customer 'CUS-9' not found", "CUS-0001", customer_id="CUS-9")


def test_accounts_and_balance(hub: Hub) -> None:
    res = ok(hub, "list_accounts", customer_id="CUS-0002")
    assert [a["account_id"] for a in res["accounts"]] == ["ACC-0002", "ACC-0003"]
    assert ok(hub, "list_accounts", status="frozen")["total"] == 1
    page = ok(hub, "list_accounts", limit=3)
    assert page["next_offset"] == 3 and len(page["accounts"]) == 3
    assert ok(hub, "list_accounts", offset=3)["next_offset"] is None
    fails(hub, "list_accounts", "customer 'CUS-7' not found", customer_id="CUS-7")
    fails(hub, "list_accounts", "account_type", "checking", account_type="brokerage")
    assert ok(hub, "get_bank_account", account_id="ACC-0003")["status"] == "frozen"
    bal = ok(hub, "get_balance", account_id="ACC-0001")
    assert bal["balance"] == 500.0 and bal["transfer_limit_left_today"] == 1000.0
    fails(hub, "get_balance", "account 'ACC-0099' not found", "ACC-0001", account_id="ACC-0099")


def test_transactions(hub: Hub) -> None:
    res = ok(hub, "list_bank_transactions", account_id="ACC-0001")
    assert [t["transaction_id"] for t in res["transactions"]] == ["TXN-0002", "TXN-0001"]
    assert ok(hub, "list_bank_transactions", account_id="ACC-0001", category="dining")["total"] == 1
    assert ok(hub, "list_bank_transactions", account_id="ACC-0001", since="2026-03-05")["total"] == 1
    assert ok(hub, "list_bank_transactions", account_id="ACC-0001", min_amount=100)["total"] == 1
    fails(hub, "list_bank_transactions", "since must be a date", account_id="ACC-0001", since="yesterday")
    assert ok(hub, "get_transaction", transaction_id="TXN-0001")["amount"] == 12.5
    fails(hub, "get_transaction", "transaction 'TXN-5' not found", transaction_id="TXN-5")


def test_transfer_changes_both_balances(hub: Hub) -> None:
    receipt = ok(hub, "transfer_funds", from_account_id="ACC-0001", to_account_id="ACC-0002", amount=120.0)
    assert receipt["from_balance"] == 380.0 and receipt["to_balance"] == 170.0
    assert ok(hub, "get_balance", account_id="ACC-0002")["balance"] == 170.0
    assert ok(hub, "get_balance", account_id="ACC-0001")["transfer_limit_left_today"] == 880.0
    kinds = [t["kind"] for t in ok(hub, "list_bank_transactions", account_id="ACC-0002")["transactions"]]
    assert kinds == ["transfer_in"]


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"from_account_id": "ACC-0002", "to_account_id": "ACC-0001", "amount": 51.0}, ("insufficient funds", "50.00")),
        ({"from_account_id": "ACC-0001", "to_account_id": "ACC-0003", "amount": 5.0}, ("is frozen", "to_account_id")),
        ({"from_account_id": "ACC-0001", "to_account_id": "ACC-0004", "amount": 5.0}, ("currency mismatch",)),
        ({"from_account_id": "ACC-0001", "to_account_id": "ACC-0001", "amount": 5.0}, ("must differ",)),
        ({"from_account_id": "ACC-0001", "to_account_id": "ACC-0002", "amount": -5.0}, ("amount", "greater than 0")),
        ({"from_account_id": "ACC-0001", "to_account_id": "ACC-0077", "amount": 5.0}, ("ACC-0077", "to_account_id")),
    ],
)
def test_transfer_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "transfer_funds", *fragments, **args)


def test_daily_limit(hub: Hub) -> None:
    for _ in range(2):  # 800 of ACC-0001's 1000 daily limit used; its balance is back at 500
        ok(hub, "transfer_funds", from_account_id="ACC-0001", to_account_id="ACC-0002", amount=400.0)
        ok(hub, "transfer_funds", from_account_id="ACC-0002", to_account_id="ACC-0001", amount=400.0)
    fails(hub, "transfer_funds", "daily transfer limit", "200.00 USD left",
          from_account_id="ACC-0001", to_account_id="ACC-0002", amount=300.0)


def test_payees(hub: Hub) -> None:
    assert [p["payee_id"] for p in ok(hub, "list_payees", customer_id="CUS-0001")["payees"]] == ["PAY-0001"]
    new = ok(hub, "add_payee", customer_id="CUS-0001", name="Tutor T", account_number="5555555555")
    assert new["payee_id"] == "PAY-0003"
    assert len(ok(hub, "list_payees", customer_id="CUS-0001")["payees"]) == 2
    fails(hub, "add_payee", "already has payee 'PAY-0003'", customer_id="CUS-0001", name="X", account_number="5555555555")
    fails(hub, "add_payee", "exactly 10 digits", customer_id="CUS-0001", name="X", account_number="12ab")
    txn = ok(hub, "pay_payee", account_id="ACC-0001", payee_id="PAY-0001", amount=100.0)
    assert txn["kind"] == "payee_payment" and txn["transaction_id"] == "TXN-0003"
    assert ok(hub, "get_balance", account_id="ACC-0001")["balance"] == 400.0
    fails(hub, "pay_payee", "belongs to another customer", "PAY-0001", account_id="ACC-0001", payee_id="PAY-0002", amount=1.0)
    fails(hub, "pay_payee", "is frozen", account_id="ACC-0003", payee_id="PAY-0002", amount=1.0)


def test_scheduled_payments(hub: Hub) -> None:
    assert len(ok(hub, "list_scheduled_payments", account_id="ACC-0001", status="scheduled")["payments"]) == 1
    new = ok(hub, "schedule_payment", account_id="ACC-0001", payee_id="PAY-0001", amount=10.0, date="2026-04-01")
    assert new["payment_id"] == "SCH-0002"
    fails(hub, "schedule_payment", "is not after today", account_id="ACC-0001", payee_id="PAY-0001", amount=10.0, date="2026-03-16")
    fails(hub, "schedule_payment", "date must be a date YYYY-MM-DD", account_id="ACC-0001", payee_id="PAY-0001", amount=10.0, date="April 1")
    assert ok(hub, "cancel_scheduled_payment", payment_id="SCH-0001")["status"] == "cancelled"
    fails(hub, "cancel_scheduled_payment", "already cancelled", payment_id="SCH-0001")
    assert ok(hub, "list_scheduled_payments", account_id="ACC-0001", status="cancelled")["payments"][0]["payment_id"] == "SCH-0001"


def test_cards(hub: Hub) -> None:
    assert len(ok(hub, "list_bank_cards", account_id="ACC-0001")["cards"]) == 2
    assert ok(hub, "set_card_status", card_id="CRD-0001", status="locked")["status"] == "locked"
    fails(hub, "set_card_status", "already locked", card_id="CRD-0001", status="locked")
    fails(hub, "set_card_status", "cancelled and cannot change", card_id="CRD-0002", status="active")
    fails(hub, "set_card_status", "status", "'active', 'locked' or 'cancelled'", card_id="CRD-0001", status="frozen")


def test_disputes(hub: Hub) -> None:
    txn = ok(hub, "dispute_transaction", transaction_id="TXN-0001", reason="duplicate")
    assert txn["disputed"] and txn["dispute_reason"] == "duplicate"
    fails(hub, "dispute_transaction", "already disputed", transaction_id="TXN-0001", reason="duplicate")
    fails(hub, "dispute_transaction", "only card payments", transaction_id="TXN-0002", reason="unauthorized")
