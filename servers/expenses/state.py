"""Expenses server state: employees, expense reports and items, policies, corporate cards, payouts."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, naming
from prove.env.world import days_before, email, money, person

Department = Literal["engineering", "sales", "marketing", "finance", "operations", "people"]
EmployeeRole = Literal["employee", "manager", "executive"]
ExpenseCurrency = Literal["USD", "EUR", "GBP"]
ReportStatus = Literal["draft", "submitted", "approved", "rejected", "reimbursed"]
ExpenseCategory = Literal["travel", "meals", "lodging", "supplies", "software", "mileage", "other"]
PaidWith = Literal["personal", "corporate_card"]
Violation = Literal["over_category_limit", "missing_receipt"]
CorporateCardStatus = Literal["active", "frozen"]
PayoutMethod = Literal["payroll", "bank_transfer"]

EDITABLE: tuple[ReportStatus, ...] = ("draft", "rejected")
"""Statuses in which a report's items can still change."""

EmployeeId = entity_id("employee", "Employee id, e.g. 'EMP-0007'.", example="EMP-0007")
ReportId = entity_id("expense_report", "Expense report id, e.g. 'EXP-0012'.", example="EXP-0012")
ItemId = entity_id("expense_item", "Expense item id, e.g. 'ITM-0040'.", example="ITM-0040")
CardId = entity_id("corporate_card", "Corporate card id, e.g. 'CC-0003'.", example="CC-0003")
CardTransactionId = entity_id("card_transaction", "Corporate card transaction id, e.g. 'CTX-0021'.", example="CTX-0021")
PayoutId = entity_id("payout", "Payout id, e.g. 'PAY-0004'.", example="PAY-0004")


class Employee(Record):
    employee_id: EmployeeId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    department: Department
    role: EmployeeRole
    manager_id: EmployeeId | None = Field(description="Who approves this employee's reports; none for the CEO.")
    home_currency: ExpenseCurrency


class CategoryPolicy(Record):
    category: ExpenseCategory
    per_item_limit: float = Field(json_schema_extra={MONEY: True}, description="Most one item may cost without a justification (USD).")
    receipt_required_above: float | None = Field(
        description="Items above this amount (USD) need a receipt; 0 = always, null = never."
    )
    note: str


class ExpenseItem(Record):
    item_id: ItemId
    report_id: ReportId
    date: str
    merchant: str
    category: ExpenseCategory
    amount: float = Field(json_schema_extra={MONEY: True}, description="In the report's currency.")
    description: str
    receipt_attached: bool
    receipt_file: str | None = None
    paid_with: PaidWith
    card_transaction_id: CardTransactionId | None = None
    policy_violations: list[Violation] = Field(default_factory=list)


class ExpenseReport(Record):
    report_id: ReportId
    employee_id: EmployeeId
    title: str = Field(json_schema_extra=naming("title"))
    currency: ExpenseCurrency
    status: ReportStatus
    total: float = Field(json_schema_extra={MONEY: True}, description="Sum of all items.")
    created_at: str
    submitted_at: str | None = None
    decided_at: str | None = None
    approver_id: EmployeeId | None = None
    rejection_reason: str | None = None
    justification: str = Field("", description="Why over-limit items are needed (given at submit).")
    payout_id: PayoutId | None = None


class CorporateCard(Record):
    card_id: CardId
    employee_id: EmployeeId
    last4: str
    currency: ExpenseCurrency
    status: CorporateCardStatus
    monthly_limit: float = Field(json_schema_extra={MONEY: True})


class CardTransaction(Record):
    transaction_id: CardTransactionId
    card_id: CardId
    employee_id: EmployeeId
    date: str
    merchant: str
    category: ExpenseCategory = Field(description="The card network's merchant category.")
    amount: float = Field(json_schema_extra={MONEY: True})
    currency: ExpenseCurrency
    matched_item_id: ItemId | None = Field(None, description="The expense item it was reconciled to.")


class Payout(Record):
    payout_id: PayoutId
    report_id: ReportId
    employee_id: EmployeeId
    amount: float = Field(json_schema_extra={MONEY: True}, description="Personally paid items only; card spend is not reimbursed.")
    currency: ExpenseCurrency
    method: PayoutMethod
    processed_by: EmployeeId
    paid_at: str


class ExpenseState(ServerState):
    fx_to_usd: dict[str, float] = Field(default_factory=dict, description="Fixed conversion rates.")
    max_item_age_days: int = Field(90, description="Items older than this cannot be claimed.")
    employees: dict[str, Employee] = Field(default_factory=dict)
    policies: dict[str, CategoryPolicy] = Field(default_factory=dict, description="Keyed by category.")
    reports: dict[str, ExpenseReport] = Field(default_factory=dict)
    items: dict[str, ExpenseItem] = Field(default_factory=dict)
    cards: dict[str, CorporateCard] = Field(default_factory=dict)
    card_transactions: dict[str, CardTransaction] = Field(default_factory=dict)
    payouts: dict[str, Payout] = Field(default_factory=dict)


FX_TO_USD = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27}

# category, per-item limit (USD), receipt required above (USD), note
_POLICIES: tuple[tuple[ExpenseCategory, float, float | None, str], ...] = (
    ("travel", 1500.0, 25.0, "Economy class for flights under 6 hours; trains and taxis allowed."),
    ("meals", 75.0, 25.0, "Per person per meal; alcohol is not reimbursed."),
    ("lodging", 350.0, 0.0, "Per night; a receipt is always required."),
    ("supplies", 200.0, 25.0, "Office supplies and small equipment."),
    ("software", 500.0, 0.0, "Licences need a receipt; prefer central procurement."),
    ("mileage", 400.0, None, "Private car use at the standard rate; no receipt needed."),
    ("other", 150.0, 25.0, "Anything else; describe the business purpose."),
)

_MERCHANTS: dict[str, tuple[str, ...]] = {
    "travel": ("SkyWays Air", "RailNow", "CityCab", "Metro Transit", "AirLink Express"),
    "meals": ("Luigi's Trattoria", "Blue Door Cafe", "Sakura Sushi", "Harbor Grill", "Green Bowl"),
    "lodging": ("Grand Plaza Hotel", "Riverside Inn", "Parkview Suites", "Station Hotel"),
    "supplies": ("OfficeHub", "PaperTrail Supplies", "TechHub"),
    "software": ("CloudDesk", "DesignPro Licences", "CodeCraft Tools"),
    "mileage": ("Private car",),
    "other": ("Conference Center", "PrintShop", "Courier Plus"),
}
_AMOUNTS: dict[str, tuple[float, float]] = {
    "travel": (18, 900), "meals": (12, 70), "lodging": (110, 330), "supplies": (8, 180),
    "software": (15, 450), "mileage": (20, 300), "other": (10, 140),
}
_TITLES = ("Client visit", "Sales kickoff", "Conference trip", "Team offsite", "Customer workshop",
           "Office supplies", "Software licences", "Partner meeting", "Trade fair", "Training course")
_CITIES = ("Berlin", "Boston", "London", "Madrid", "Chicago", "Paris", "Toronto", "Dublin")
_CURRENCY_BY_DEPT_CITY = {"Berlin": "EUR", "Madrid": "EUR", "Paris": "EUR", "Dublin": "EUR", "London": "GBP"}


def needs_receipt(policy: CategoryPolicy, amount_usd: float) -> bool:
    """Whether an item of this USD amount needs a receipt under `policy`."""
    return policy.receipt_required_above is not None and amount_usd > policy.receipt_required_above


def violations(policy: CategoryPolicy, amount_usd: float, receipt: bool) -> list[Violation]:
    """The policy rules an item breaks, in a fixed order."""
    out: list[Violation] = []
    if amount_usd > policy.per_item_limit:
        out.append("over_category_limit")
    if needs_receipt(policy, amount_usd) and not receipt:
        out.append("missing_receipt")
    return out


def initial_state(seed: int) -> ExpenseState:
    """A company of ~30 employees in six departments with ~60 expense reports and card spend."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    state = ExpenseState(now=now, fx_to_usd=dict(FX_TO_USD))
    for cat, limit, receipt, note in _POLICIES:
        state.policies[cat] = CategoryPolicy(category=cat, per_item_limit=limit,
                                             receipt_required_above=receipt, note=note)
    emp_id, rep_id, itm_id = Counter("EMP"), Counter("EXP"), Counter("ITM")
    card_id, ctx_id, pay_id = Counter("CC"), Counter("CTX"), Counter("PAY")

    def hire(dept: Department, role: EmployeeRole, manager: str | None, currency: str) -> Employee:
        name = person(rng)
        eid = emp_id()
        emp = Employee(employee_id=eid, name=name, email=email(name, "northwind-corp.example.com"),
                       department=dept, role=role, manager_id=manager, home_currency=currency)
        state.employees[eid] = emp
        return emp

    ceo = hire("operations", "executive", None, "USD")
    depts: list[Department] = ["engineering", "sales", "marketing", "finance", "operations", "people"]
    for dept in depts:
        cur = _CURRENCY_BY_DEPT_CITY.get(rng.choice(_CITIES), "USD")
        head = hire(dept, "manager", ceo.employee_id, cur)
        for _ in range(rng.randrange(3, 6)):
            hire(dept, "employee", head.employee_id, cur)
    finance = [e.employee_id for e in state.employees.values() if e.department == "finance"]
    for emp in list(state.employees.values())[1:]:
        card = None
        if emp.department in ("sales", "marketing") or emp.role == "manager" or rng.random() < 0.2:
            card = CorporateCard(card_id=card_id(), employee_id=emp.employee_id, last4=f"{rng.randrange(10000):04d}",
                                 currency=emp.home_currency, status=rng.choices(["active", "frozen"], [9, 1])[0],
                                 monthly_limit=float(rng.choice([2000, 5000, 10000])))
            state.cards[card.card_id] = card
            for _ in range(rng.randrange(2, 6)):  # unreconciled card spend
                cat = rng.choice(["travel", "meals", "lodging", "software", "other"])
                tid = ctx_id()
                state.card_transactions[tid] = CardTransaction(
                    transaction_id=tid, card_id=card.card_id, employee_id=emp.employee_id,
                    date=days_before(now, rng, 40, 1)[:10], merchant=rng.choice(_MERCHANTS[cat]), category=cat,
                    amount=money(rng, *_AMOUNTS[cat]), currency=card.currency,
                )
        for _ in range(rng.randrange(1, 4)):
            status = rng.choices(["draft", "submitted", "approved", "rejected", "reimbursed"], [3, 3, 2, 1, 4])[0]
            created = days_before(now, rng, 80, 10)
            rid = rep_id()
            report = ExpenseReport(report_id=rid, employee_id=emp.employee_id,
                                   title=f"{rng.choice(_TITLES)} {rng.choice(_CITIES)}", currency=emp.home_currency,
                                   status=status, total=0.0, created_at=created)
            state.reports[rid] = report
            for _ in range(rng.randrange(1, 6)):
                cat = rng.choice(list(_MERCHANTS))
                policy = state.policies[cat]
                rate = FX_TO_USD[report.currency]
                lo, hi = _AMOUNTS[cat]
                amount = money(rng, lo / rate, hi / rate * (1.3 if rng.random() < 0.1 else 1.0))
                receipt = status != "draft" or rng.random() < 0.6
                iid = itm_id()
                item = ExpenseItem(
                    item_id=iid, report_id=rid, date=days_before(created, rng, 20)[:10],
                    merchant=rng.choice(_MERCHANTS[cat]), category=cat, amount=amount,
                    description=f"{cat} for {report.title.lower()}", receipt_attached=receipt,
                    receipt_file=f"receipt-{iid.lower()}.pdf" if receipt else None, paid_with="personal",
                    policy_violations=violations(policy, amount * rate, receipt),
                )
                if card is not None and cat != "mileage" and rng.random() < 0.35:
                    tid = ctx_id()
                    state.card_transactions[tid] = CardTransaction(
                        transaction_id=tid, card_id=card.card_id, employee_id=emp.employee_id, date=item.date,
                        merchant=item.merchant, category=cat, amount=amount, currency=card.currency,
                        matched_item_id=iid,
                    )
                    item.paid_with, item.card_transaction_id = "corporate_card", tid
                state.items[iid] = item
                report.total = round(report.total + amount, 2)
            if status != "draft":
                report.submitted_at = days_before(now, rng, 9, 3)
                if any(i.policy_violations for i in state.items.values() if i.report_id == rid):
                    report.justification = "client-facing trip; pre-approved by manager"
            if status in ("approved", "rejected", "reimbursed"):
                report.approver_id, report.decided_at = emp.manager_id, days_before(now, rng, 2, 1)
            if status == "rejected":
                report.rejection_reason = rng.choice(["missing business purpose", "duplicate of an earlier claim",
                                                      "split the trip into separate reports"])
            if status == "reimbursed":
                pid = pay_id()
                owed = sum(i.amount for i in state.items.values() if i.report_id == rid and i.paid_with == "personal")
                state.payouts[pid] = Payout(payout_id=pid, report_id=rid, employee_id=emp.employee_id,
                                            amount=round(owed, 2), currency=report.currency,
                                            method=rng.choice(["payroll", "bank_transfer"]),
                                            processed_by=rng.choice(finance), paid_at=days_before(now, rng, 1))
                report.payout_id = pid
    state.card_transactions = dict(sorted(state.card_transactions.items(), key=lambda kv: (kv[1].date, kv[0])))
    return state
