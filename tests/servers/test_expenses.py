"""Expenses server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.expenses import SERVER
from prove_servers.expenses.state import (
    CardTransaction,
    CorporateCard,
    Employee,
    ExpenseItem,
    ExpenseReport,
    ExpenseState,
    initial_state,
)


def _item(iid: str, rid: str, cat: str, amount: float, receipt: bool = True, txn: str | None = None,
          violations: tuple[str, ...] = ()) -> ExpenseItem:
    return ExpenseItem(item_id=iid, report_id=rid, date="2026-03-05", merchant=f"{cat} place", category=cat,
                       amount=amount, description=cat, receipt_attached=receipt,
                       receipt_file=f"{iid}.pdf" if receipt else None,
                       paid_with="corporate_card" if txn else "personal", card_transaction_id=txn,
                       policy_violations=list(violations))


def tiny() -> ExpenseState:
    s = ExpenseState(now="2026-03-16T09:00", fx_to_usd={"USD": 1.0, "EUR": 1.08, "GBP": 1.27},
                     policies=initial_state(0).policies)
    for eid, name, dept, role, manager, cur in (
        ("EMP-0001", "Cara Chief", "operations", "executive", None, "USD"),
        ("EMP-0002", "Mia Manager", "sales", "manager", "EMP-0001", "USD"),
        ("EMP-0003", "Eli Seller", "sales", "employee", "EMP-0002", "USD"),
        ("EMP-0004", "Fay Ledger", "finance", "employee", "EMP-0001", "USD"),
        ("EMP-0005", "Gus Brand", "marketing", "employee", "EMP-0002", "EUR"),
    ):
        s.employees[eid] = Employee(employee_id=eid, name=name, email=f"{name.split()[0].lower()}@corp.com",
                                    department=dept, role=role, manager_id=manager, home_currency=cur)
    for rid, emp, title, status, created, cur in (
        ("EXP-0001", "EMP-0003", "Client visit Boston", "draft", "2026-03-10T09:00", "USD"),
        ("EXP-0002", "EMP-0003", "Sales kickoff", "submitted", "2026-03-08T09:00", "USD"),
        ("EXP-0003", "EMP-0003", "Trade fair", "approved", "2026-03-01T09:00", "USD"),
        ("EXP-0004", "EMP-0003", "Empty", "draft", "2026-03-11T09:00", "USD"),
        ("EXP-0005", "EMP-0005", "Paris offsite", "draft", "2026-03-12T09:00", "EUR"),
        ("EXP-0006", "EMP-0004", "Finance summit", "approved", "2026-03-02T09:00", "USD"),
    ):
        s.reports[rid] = ExpenseReport(report_id=rid, employee_id=emp, title=title, currency=cur, status=status,
                                       total=0.0, created_at=created)
    for item in (_item("ITM-0001", "EXP-0001", "meals", 40.0),
                 _item("ITM-0002", "EXP-0001", "lodging", 200.0, receipt=False, violations=("missing_receipt",)),
                 _item("ITM-0003", "EXP-0002", "travel", 300.0),
                 _item("ITM-0004", "EXP-0002", "meals", 30.0, txn="CTX-0001"),
                 _item("ITM-0005", "EXP-0003", "supplies", 50.0),
                 _item("ITM-0006", "EXP-0003", "travel", 100.0, txn="CTX-0002"),
                 _item("ITM-0007", "EXP-0006", "meals", 20.0)):
        s.items[item.item_id] = item
        s.reports[item.report_id].total += item.amount
    s.reports["EXP-0002"].submitted_at = "2026-03-09T10:00"
    s.cards["CC-0001"] = CorporateCard(card_id="CC-0001", employee_id="EMP-0003", last4="4242", currency="USD",
                                       status="active", monthly_limit=5000.0)
    s.cards["CC-0002"] = CorporateCard(card_id="CC-0002", employee_id="EMP-0005", last4="1111", currency="EUR",
                                       status="active", monthly_limit=2000.0)
    for tid, card, emp, day, merchant, cat, amount, cur, matched in (
        ("CTX-0001", "CC-0001", "EMP-0003", "2026-03-05", "meals place", "meals", 30.0, "USD", "ITM-0004"),
        ("CTX-0002", "CC-0001", "EMP-0003", "2026-03-05", "travel place", "travel", 100.0, "USD", "ITM-0006"),
        ("CTX-0003", "CC-0001", "EMP-0003", "2026-03-10", "Harbor Grill", "meals", 62.5, "USD", None),
        ("CTX-0004", "CC-0002", "EMP-0005", "2026-03-12", "Riverside Inn", "lodging", 180.0, "EUR", None),
    ):
        s.card_transactions[tid] = CardTransaction(transaction_id=tid, card_id=card, employee_id=emp, date=day,
                                                   merchant=merchant, category=cat, amount=amount, currency=cur,
                                                   matched_item_id=matched)
    return s


hub = hub_fixture(SERVER, tiny)


def test_initial_state_is_rich_and_consistent() -> None:
    s = initial_state(5)
    assert len(s.employees) >= 20 and len(s.reports) >= 30 and len(s.policies) == 7
    assert {r.status for r in s.reports.values()} == {"draft", "submitted", "approved", "rejected", "reimbursed"}
    for r in s.reports.values():
        assert r.total == pytest.approx(sum(i.amount for i in s.items.values() if i.report_id == r.report_id), abs=0.01)
        if r.status != "draft":  # everything past draft passed the submit checks
            assert all("missing_receipt" not in i.policy_violations for i in s.items.values() if i.report_id == r.report_id)
    for t in s.card_transactions.values():
        assert t.matched_item_id is None or s.items[t.matched_item_id].card_transaction_id == t.transaction_id
    assert s.new_id("ITM") == f"ITM-{len(s.items) + 1:04d}"


def test_employees(hub: Hub) -> None:
    assert ok(hub, "find_company_employees", query="eli")["employees"][0]["manager_id"] == "EMP-0002"
    assert ok(hub, "find_company_employees", department="sales")["total"] == 2
    page = ok(hub, "find_company_employees", limit=2, offset=2)
    assert page["next_offset"] == 4 and page["employees"][0]["employee_id"] == "EMP-0003"
    fails(hub, "find_company_employees", "department", "'engineering'", department="legal")


def test_reports_read(hub: Hub) -> None:
    res = ok(hub, "list_expense_reports", employee_id="EMP-0003")
    assert [r["report_id"] for r in res["reports"]] == ["EXP-0004", "EXP-0001", "EXP-0002", "EXP-0003"]
    assert ok(hub, "list_expense_reports", status="approved")["total"] == 2
    fails(hub, "list_expense_reports", "employee 'EMP-99' not found", "find_company_employees", employee_id="EMP-99")
    d = ok(hub, "get_expense_report", report_id="EXP-0003")
    assert d["reimbursable"] == 50.0 and len(d["items"]) == 2 and d["payout"] is None and d["employee_name"] == "Eli Seller"
    fails(hub, "get_expense_report", "expense report 'EXP-42' not found", report_id="EXP-42")
    assert [r["report_id"] for r in ok(hub, "list_pending_expense_approvals", manager_id="EMP-0002")["reports"]] == ["EXP-0002"]
    assert ok(hub, "list_pending_expense_approvals", manager_id="EMP-0001")["total"] == 0
    fails(hub, "list_pending_expense_approvals", "manager_id", manager_id="EMP-77")


def test_policy_cards_and_summary(hub: Hub) -> None:
    assert len(ok(hub, "get_expense_policy")["policies"]) == 7
    meals = ok(hub, "get_expense_policy", category="meals")
    assert meals["policies"][0]["per_item_limit"] == 75.0 and meals["max_item_age_days"] == 90
    fails(hub, "get_expense_policy", "category", category="alcohol")
    assert len(ok(hub, "list_corporate_cards")["cards"]) == 2
    assert ok(hub, "list_corporate_cards", employee_id="EMP-0005")["cards"][0]["currency"] == "EUR"
    open_txns = ok(hub, "list_card_transactions", matched=False)
    assert [t["transaction_id"] for t in open_txns["transactions"]] == ["CTX-0004", "CTX-0003"]
    assert ok(hub, "list_card_transactions", employee_id="EMP-0003")["total"] == 3
    assert ok(hub, "list_card_transactions", card_id="CC-0002", matched=True)["total"] == 0
    fails(hub, "list_card_transactions", "corporate card 'CC-9' not found", "CC-0001", card_id="CC-9")
    s = ok(hub, "get_employee_spend_summary", employee_id="EMP-0003")
    assert s["reports_by_status"] == {"approved": 1, "draft": 2, "submitted": 1}
    assert s["approved_spend_usd_by_category"] == {"supplies": 50.0, "travel": 100.0}
    assert (s["awaiting_reimbursement_usd"], s["reimbursed_usd"]) == (50.0, 0.0)
    assert (s["unmatched_card_transactions"], s["unmatched_card_spend_usd"]) == (1, 62.5)
    fails(hub, "get_employee_spend_summary", "employee 'X' not found", employee_id="X")


def test_create_report(hub: Hub) -> None:
    r = ok(hub, "create_expense_report", employee_id="EMP-0005", title="Berlin fair")
    assert (r["report_id"], r["currency"], r["status"]) == ("EXP-0007", "EUR", "draft")
    assert ok(hub, "create_expense_report", employee_id="EMP-0005", title="UK trip", currency="GBP")["currency"] == "GBP"
    assert ok(hub, "list_expense_reports", employee_id="EMP-0005", status="draft")["total"] == 3
    fails(hub, "create_expense_report", "already has draft report 'EXP-0001'", employee_id="EMP-0003",
          title="client visit boston")
    fails(hub, "create_expense_report", "title must not be blank", employee_id="EMP-0003", title="   ")
    fails(hub, "create_expense_report", "employee 'EMP-0' not found", employee_id="EMP-0", title="x")


def test_add_items_and_policy_flags(hub: Hub) -> None:
    res = ok(hub, "add_expense_item", report_id="EXP-0001", date="2026-03-11", merchant="Blue Door Cafe",
             category="meals", amount=30, receipt_file="lunch.pdf")
    assert res["item"]["item_id"] == "ITM-0008" and res["item"]["policy_violations"] == [] and res["report_total"] == 270.0
    over = ok(hub, "add_expense_item", report_id="EXP-0001", date="2026-03-11", merchant="Harbor Grill",
              category="meals", amount=90)
    assert over["item"]["policy_violations"] == ["over_category_limit", "missing_receipt"]
    assert "over the meals limit of 75.00 USD" in over["notice"] and "attach_expense_receipt" in over["notice"]
    eur = ok(hub, "add_expense_item", report_id="EXP-0005", date="2026-03-12", merchant="Cafe", category="meals",
             amount=70, currency="EUR", receipt_file="x.jpg")  # 70 EUR = 75.60 USD
    assert eur["item"]["policy_violations"] == ["over_category_limit"]
    mileage = ok(hub, "add_expense_item", report_id="EXP-0004", date="2026-03-01", merchant="Private car",
                 category="mileage", amount=120)
    assert mileage["item"]["policy_violations"] == [] and mileage["notice"] == ""
    assert ok(hub, "get_expense_report", report_id="EXP-0001")["report"]["total"] == 360.0


def test_cards_and_pending_approvals_page(hub: Hub) -> None:
    first = ok(hub, "list_corporate_cards", limit=1)
    assert first["total"] == 2 and first["next_offset"] == 1
    second = ok(hub, "list_corporate_cards", offset=first["next_offset"], limit=1)
    assert second["total"] == 2 and second["next_offset"] is None
    assert [c["card_id"] for c in first["cards"] + second["cards"]] == ["CC-0001", "CC-0002"]
    pending = ok(hub, "list_pending_expense_approvals", manager_id="EMP-0002", limit=1)
    assert pending["total"] == 1 and pending["next_offset"] is None
    assert ok(hub, "list_pending_expense_approvals", manager_id="EMP-0002", offset=1)["reports"] == []


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"date": "2026-03-20"}, ("is in the future", "2026-03-16")),
        ({"date": "2025-11-01"}, ("older than the 90-day claim window", "2025-12-16")),
        ({"date": "March 3"}, ("date must be a date YYYY-MM-DD", "got 'March 3'")),
        ({"date": "2026-02-30"}, ("date must be a date YYYY-MM-DD", "got '2026-02-30'")),
        ({"currency": "EUR"}, ("currency mismatch", "is in USD", "separate EUR report")),
        ({"report_id": "EXP-0002"}, ("is submitted", "only draft or rejected")),
        ({"receipt_file": "receipt.exe"}, ("receipt_file must be a .pdf",)),
        ({"category": "alcohol"}, ("category", "'travel'")),
        ({"amount": 0}, ("amount", "greater than 0")),
    ],
)
def test_add_item_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    base = {"report_id": "EXP-0001", "date": "2026-03-11", "merchant": "M", "category": "meals", "amount": 10.0}
    fails(hub, "add_expense_item", *fragments, **{**base, **args})


def test_remove_and_receipts(hub: Hub) -> None:
    assert ok(hub, "remove_expense_item", item_id="ITM-0001")["total"] == 200.0
    fails(hub, "remove_expense_item", "expense item 'ITM-0001' not found", item_id="ITM-0001")
    fails(hub, "remove_expense_item", "'EXP-0002' is submitted", item_id="ITM-0003")
    item = ok(hub, "attach_expense_receipt", item_id="ITM-0002", file_name="hotel-0305.pdf")
    assert item["receipt_attached"] and item["policy_violations"] == []
    fails(hub, "attach_expense_receipt", "already has receipt 'hotel-0305.pdf'", item_id="ITM-0002", file_name="b.pdf")
    fails(hub, "attach_expense_receipt", "is approved", item_id="ITM-0005", file_name="late.pdf")
    ok(hub, "add_expense_item", report_id="EXP-0001", date="2026-03-11", merchant="M", category="other", amount=40)
    fails(hub, "attach_expense_receipt", "file_name must be a .pdf", item_id="ITM-0008", file_name="scan.docx")
    assert ok(hub, "get_expense_report", report_id="EXP-0001")["items"][0]["receipt_file"] == "hotel-0305.pdf"


def test_submit(hub: Hub) -> None:
    fails(hub, "submit_expense_report", "has no items", "add_expense_item", report_id="EXP-0004")
    fails(hub, "submit_expense_report", "receipts are missing for ITM-0002", report_id="EXP-0001")
    ok(hub, "attach_expense_receipt", item_id="ITM-0002", file_name="hotel.pdf")
    ok(hub, "add_expense_item", report_id="EXP-0001", date="2026-03-11", merchant="Harbor Grill", category="meals",
       amount=90, receipt_file="dinner.pdf")
    fails(hub, "submit_expense_report", "need a justification", "ITM-0008 (meals limit 75.00 USD)", report_id="EXP-0001")
    fails(hub, "submit_expense_report", "need a justification", report_id="EXP-0001", justification="ok")
    r = ok(hub, "submit_expense_report", report_id="EXP-0001", justification="dinner with two client executives")
    assert r["status"] == "submitted" and r["submitted_at"] == "2026-03-16T09:01"
    assert "EXP-0001" in [x["report_id"] for x in ok(hub, "list_pending_expense_approvals", manager_id="EMP-0002")["reports"]]
    fails(hub, "submit_expense_report", "is submitted", report_id="EXP-0001")
    ok(hub, "create_expense_report", employee_id="EMP-0001", title="Board dinner")
    ok(hub, "add_expense_item", report_id="EXP-0007", date="2026-03-15", merchant="M", category="meals", amount=20)
    fails(hub, "submit_expense_report", "has no manager", report_id="EXP-0007")


def test_approve_and_reject(hub: Hub) -> None:
    fails(hub, "approve_expense_report", "only the employee's manager", "Mia Manager (EMP-0002)",
          report_id="EXP-0002", approver_id="EMP-0004")
    fails(hub, "approve_expense_report", "their own reports", report_id="EXP-0002", approver_id="EMP-0003")
    fails(hub, "approve_expense_report", "approver_id", "not found", report_id="EXP-0002", approver_id="EMP-9")
    fails(hub, "approve_expense_report", "is draft", "only submitted", report_id="EXP-0001", approver_id="EMP-0002")
    r = ok(hub, "reject_expense_report", report_id="EXP-0002", approver_id="EMP-0002", reason="split the taxi rides")
    assert r["status"] == "rejected" and r["rejection_reason"] == "split the taxi rides"
    fails(hub, "reject_expense_report", "is rejected", report_id="EXP-0002", approver_id="EMP-0002", reason="again")
    ok(hub, "remove_expense_item", item_id="ITM-0003")  # a rejected report is editable again
    again = ok(hub, "submit_expense_report", report_id="EXP-0002")
    assert again["rejection_reason"] is None and again["total"] == 30.0
    done = ok(hub, "approve_expense_report", report_id="EXP-0002", approver_id="EMP-0002")
    assert done["status"] == "approved" and done["approver_id"] == "EMP-0002"
    fails(hub, "approve_expense_report", "is approved", report_id="EXP-0002", approver_id="EMP-0002")
    assert ok(hub, "list_expense_reports", employee_id="EMP-0003", status="approved")["total"] == 2


def test_reimburse(hub: Hub) -> None:
    fails(hub, "reimburse_expense_report", "only finance staff", "EMP-0004", report_id="EXP-0003", processed_by="EMP-0002")
    fails(hub, "reimburse_expense_report", "is submitted", "only approved", report_id="EXP-0002", processed_by="EMP-0004")
    fails(hub, "reimburse_expense_report", "their own reports", report_id="EXP-0006", processed_by="EMP-0004")
    fails(hub, "reimburse_expense_report", "method", report_id="EXP-0003", processed_by="EMP-0004", method="cash")
    p = ok(hub, "reimburse_expense_report", report_id="EXP-0003", processed_by="EMP-0004", method="payroll")
    assert (p["payout_id"], p["amount"], p["currency"], p["method"]) == ("PAY-0001", 50.0, "USD", "payroll")
    d = ok(hub, "get_expense_report", report_id="EXP-0003")
    assert d["report"]["status"] == "reimbursed" and d["payout"]["payout_id"] == "PAY-0001"
    s = ok(hub, "get_employee_spend_summary", employee_id="EMP-0003")
    assert (s["awaiting_reimbursement_usd"], s["reimbursed_usd"]) == (0.0, 50.0)
    fails(hub, "reimburse_expense_report", "is reimbursed", report_id="EXP-0003", processed_by="EMP-0004")


def test_match_card_transactions(hub: Hub) -> None:
    ok(hub, "create_expense_report", employee_id="EMP-0003", title="Madrid trip", currency="EUR")
    fails(hub, "match_card_transaction", "currency mismatch", "in USD", "report 'EXP-0007' is in EUR",
          transaction_id="CTX-0003", report_id="EXP-0007")
    fails(hub, "match_card_transaction", "belongs to 'EMP-0005'", transaction_id="CTX-0004", report_id="EXP-0001")
    fails(hub, "match_card_transaction", "is submitted", transaction_id="CTX-0003", report_id="EXP-0002")
    fails(hub, "match_card_transaction", "already matched to item 'ITM-0004'", transaction_id="CTX-0001",
          report_id="EXP-0001")
    fails(hub, "match_card_transaction", "card transaction 'CTX-9' not found", "matched=false",
          transaction_id="CTX-9", report_id="EXP-0001")
    res = ok(hub, "match_card_transaction", transaction_id="CTX-0003", report_id="EXP-0001", description="client lunch")
    item = res["item"]
    assert (item["paid_with"], item["amount"], item["category"], item["card_transaction_id"]) == (
        "corporate_card", 62.5, "meals", "CTX-0003")
    assert item["policy_violations"] == ["missing_receipt"] and res["report_total"] == 302.5
    assert ok(hub, "get_expense_report", report_id="EXP-0001")["reimbursable"] == 240.0  # card spend is not owed
    assert ok(hub, "list_card_transactions", employee_id="EMP-0003", matched=False)["total"] == 0
    ok(hub, "remove_expense_item", item_id=item["item_id"])
    assert ok(hub, "list_card_transactions", matched=False)["total"] == 2
    gus = ok(hub, "match_card_transaction", transaction_id="CTX-0004", report_id="EXP-0005", category="travel")
    assert gus["item"]["category"] == "travel" and gus["item"]["date"] == "2026-03-12"
