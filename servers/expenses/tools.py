"""Expenses tools: employees, expense reports and items, receipts, approvals, cards, reimbursements."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    naming,
    parse_day,
    text,
)
from prove_servers.expenses.state import (
    EDITABLE,
    CardId,
    CardTransaction,
    CardTransactionId,
    CategoryPolicy,
    CorporateCard,
    Department,
    Employee,
    EmployeeId,
    ExpenseCategory,
    ExpenseCurrency,
    ExpenseItem,
    ExpenseReport,
    ExpenseState,
    ItemId,
    Payout,
    PayoutMethod,
    ReportId,
    ReportStatus,
    violations,
)


class EmployeeList(Page):
    employees: list[Employee]


class ReportList(Page):
    reports: list[ExpenseReport]


class ReportDetail(BaseModel):
    report: ExpenseReport
    employee_name: str
    items: list[ExpenseItem]
    reimbursable: float = Field(description="Sum of personally paid items: what the employee is owed.")
    payout: Payout | None


class PolicyView(BaseModel):
    base_currency: str = Field(description="Currency the limits are expressed in.")
    fx_to_usd: dict[str, float]
    max_item_age_days: int
    policies: list[CategoryPolicy]


class CorporateCardList(Page):
    cards: list[CorporateCard]


class CardTransactionList(Page):
    transactions: list[CardTransaction]


class SpendSummary(BaseModel):
    employee_id: EmployeeId
    name: str = Field(json_schema_extra=naming("name"))
    reports_by_status: dict[str, int]
    approved_spend_usd_by_category: dict[str, float] = Field(description="Approved and reimbursed items, in USD.")
    awaiting_reimbursement_usd: float = Field(description="Personally paid items on approved reports, in USD.")
    reimbursed_usd: float
    unmatched_card_transactions: int
    unmatched_card_spend_usd: float


class ItemResult(BaseModel):
    item: ExpenseItem
    report_total: float = Field(json_schema_extra={MONEY: True})
    notice: str = Field("", description="Policy problems to fix before submitting, if any.")


def _employee(state: ExpenseState, employee_id: str, param: str = "employee_id") -> Employee:
    return find(state.employees, employee_id, hint="use find_company_employees to find one")


def _report(state: ExpenseState, report_id: str) -> ExpenseReport:
    return find(state.reports, report_id, hint="use list_expense_reports to find one")


def _item(state: ExpenseState, item_id: str) -> ExpenseItem:
    return find(state.items, item_id, hint="use get_expense_report to see its items")


def _editable(report: ExpenseReport) -> None:
    require(report.status in EDITABLE, f"report '{report.report_id}' is {report.status}; only draft or rejected "
            "reports can be edited",
            reason='state', rejected=(report.report_id, report.status), wanted=('draft', 'rejected'))


def _items_of(state: ExpenseState, report_id: str) -> list[ExpenseItem]:
    return [i for i in state.items.values() if i.report_id == report_id]


def _usd(state: ExpenseState, amount: float, currency: str) -> float:
    return amount * state.fx_to_usd[currency]


def _retotal(state: ExpenseState, report: ExpenseReport) -> None:
    report.total = round(sum(i.amount for i in _items_of(state, report.report_id)), 2)


def _owed(state: ExpenseState, report_id: str) -> float:
    return round(sum(i.amount for i in _items_of(state, report_id) if i.paid_with == "personal"), 2)


def _claimable(state: ExpenseState, value: str, param: str) -> str:
    """`value` (a date, parsed by parse_day) if it lies in the claim window: not in the future, not too old."""
    when = parse_day(value, param)
    today = state.now_dt().date()
    require(when <= today, f"{param} {value} is in the future (today is {today.isoformat()})",
            reason='future', params=(param,), rejected=(value,))
    oldest = today - timedelta(days=state.max_item_age_days)
    require(when >= oldest, f"{param} {value} is older than the {state.max_item_age_days}-day claim window "
            f"(earliest {oldest.isoformat()})",
            params=(param,), rejected=(value, state.max_item_age_days))
    return when.isoformat()


def _notice(item: ExpenseItem, policy: CategoryPolicy) -> str:
    parts = []
    if "over_category_limit" in item.policy_violations:
        parts.append(f"over the {item.category} limit of {policy.per_item_limit:.2f} USD: submitting needs a "
                     "justification")
    if "missing_receipt" in item.policy_violations:
        parts.append(f"{item.category} items above {policy.receipt_required_above:.2f} USD need a receipt: "
                     "use attach_expense_receipt")
    return "; ".join(parts)


def _new_item(state: ExpenseState, report: ExpenseReport, day: str, merchant: str, category: ExpenseCategory,
              amount: float, description: str, receipt_file: str | None, txn: CardTransaction | None) -> ItemResult:
    policy = state.policies[category]
    amount = round(amount, 2)
    item = ExpenseItem(
        item_id=state.new_id("ITM"), report_id=report.report_id, date=day, merchant=merchant.strip(),
        category=category, amount=amount, description=description.strip(),
        receipt_attached=receipt_file is not None, receipt_file=receipt_file,
        paid_with="corporate_card" if txn else "personal", card_transaction_id=txn.transaction_id if txn else None,
        policy_violations=violations(policy, _usd(state, amount, report.currency), receipt_file is not None),
    )
    state.items[item.item_id] = item
    if txn is not None:
        txn.matched_item_id = item.item_id
    _retotal(state, report)
    return ItemResult(item=item, report_total=report.total, notice=_notice(item, policy))


def _check_receipt_name(file_name: str | None, param: str) -> None:
    require(file_name is None or file_name.lower().endswith((".pdf", ".jpg", ".jpeg", ".png")),
            f"{param} must be a .pdf, .jpg or .png file name, got '{file_name}'",
            params=(param,), rejected=(file_name,))


@tool()
def find_company_employees(
    state: ExpenseState,
    query: text("query", "Case-insensitive substring of the name or email.", max_length=80, listed="name") = "",
    department: Annotated[Department | None, Field(description="Only employees of this department.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EmployeeList:
    """Find employees by name, email or department, with their manager and role."""
    q = query.strip().lower()
    found = [e for e in state.employees.values()
             if (q in e.name.lower() or q in e.email.lower()) and (department is None or e.department == department)]
    return EmployeeList.of(found, offset, limit)


@tool(sensitive=("employee_id",))
def list_expense_reports(
    state: ExpenseState,
    employee_id: Annotated[EmployeeId | None, Field(description="Only this employee's reports.")] = None,
    status: Annotated[ReportStatus | None, Field(description="Only reports in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ReportList:
    """List expense reports, newest first, filtered by employee and status."""
    if employee_id is not None:
        _employee(state, employee_id)
    found = sorted((r for r in state.reports.values()
                    if (employee_id is None or r.employee_id == employee_id) and (status is None or r.status == status)),
                   key=lambda r: (r.created_at, r.report_id), reverse=True)
    return ReportList.of(found, offset, limit)


@tool(sensitive=("report_id",))
def get_expense_report(state: ExpenseState, report_id: ReportId) -> ReportDetail:
    """Get an expense report with its items, policy violations, amount owed and payout."""
    report = _report(state, report_id)
    return ReportDetail(
        report=report, employee_name=state.employees[report.employee_id].name, items=_items_of(state, report_id),
        reimbursable=_owed(state, report_id), payout=state.payouts.get(report.payout_id or ""),
    )


@tool(sensitive=("manager_id",))
def list_pending_expense_approvals(
    state: ExpenseState,
    manager_id: entity_id("employee", "The approving manager's employee id, e.g. 'EMP-0002'.", example="EMP-0002"),
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ReportList:
    """List submitted reports waiting for a manager's approval (from that manager's direct reports), a page at a time."""
    _employee(state, manager_id, "manager_id")
    found = [r for r in state.reports.values()
             if r.status == "submitted" and state.employees[r.employee_id].manager_id == manager_id]
    return ReportList.of(found, offset, limit)


@tool()
def get_expense_policy(
    state: ExpenseState,
    category: Annotated[ExpenseCategory | None, Field(description="Only this category's rules.")] = None,
) -> PolicyView:
    """Get the company expense policy: per-category limits, receipt thresholds and the claim window."""
    policies = [p for p in state.policies.values() if category is None or p.category == category]
    return PolicyView(base_currency="USD", fx_to_usd=dict(state.fx_to_usd),
                      max_item_age_days=state.max_item_age_days, policies=policies)


@tool(sensitive=("employee_id",))
def list_corporate_cards(
    state: ExpenseState,
    employee_id: Annotated[EmployeeId | None, Field(description="Only this employee's cards.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CorporateCardList:
    """List corporate cards, optionally of one employee, a page at a time."""
    if employee_id is not None:
        _employee(state, employee_id)
    found = [c for c in state.cards.values() if employee_id is None or c.employee_id == employee_id]
    return CorporateCardList.of(found, offset, limit)


@tool(sensitive=("employee_id", "card_id"))
def list_card_transactions(
    state: ExpenseState,
    employee_id: Annotated[EmployeeId | None, Field(description="Only this employee's card spend.")] = None,
    card_id: Annotated[CardId | None, Field(description="Only this corporate card, e.g. 'CC-0003'.", json_schema_extra={EXAMPLE: "CC-0003"})] = None,
    matched: Annotated[bool | None, Field(description="True: only reconciled; False: only still to match.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CardTransactionList:
    """List corporate card transactions, newest first; unmatched ones still need an expense item."""
    if employee_id is not None:
        _employee(state, employee_id)
    if card_id is not None:
        find(state.cards, card_id)
    found = [t for t in reversed(state.card_transactions.values())
             if (employee_id is None or t.employee_id == employee_id) and (card_id is None or t.card_id == card_id)
             and (matched is None or (t.matched_item_id is not None) == matched)]
    return CardTransactionList.of(found, offset, limit)


@tool(sensitive=("employee_id",))
def get_employee_spend_summary(state: ExpenseState, employee_id: EmployeeId) -> SpendSummary:
    """Summarize an employee's expenses: reports per status, approved spend per category, money owed."""
    emp = _employee(state, employee_id)
    reports = [r for r in state.reports.values() if r.employee_id == employee_id]
    by_status: dict[str, int] = {}
    by_cat: dict[str, float] = {}
    awaiting = reimbursed = 0.0
    for r in reports:
        by_status[r.status] = by_status.get(r.status, 0) + 1
        if r.status not in ("approved", "reimbursed"):
            continue
        for i in _items_of(state, r.report_id):
            by_cat[i.category] = by_cat.get(i.category, 0.0) + _usd(state, i.amount, r.currency)
        if r.status == "approved":
            awaiting += _usd(state, _owed(state, r.report_id), r.currency)
        elif r.payout_id in state.payouts:
            p = state.payouts[r.payout_id]
            reimbursed += _usd(state, p.amount, p.currency)
    open_txns = [t for t in state.card_transactions.values() if t.employee_id == employee_id and not t.matched_item_id]
    return SpendSummary(
        employee_id=employee_id, name=emp.name, reports_by_status=dict(sorted(by_status.items())),
        approved_spend_usd_by_category={k: round(v, 2) for k, v in sorted(by_cat.items())},
        awaiting_reimbursement_usd=round(awaiting, 2), reimbursed_usd=round(reimbursed, 2),
        unmatched_card_transactions=len(open_txns),
        unmatched_card_spend_usd=round(sum(_usd(state, t.amount, t.currency) for t in open_txns), 2),
    )


@tool(write=True, sensitive=("employee_id",))
def create_expense_report(
    state: ExpenseState,
    employee_id: EmployeeId,
    title: text("title", "Short title, e.g. 'Client visit Boston'.", listed="title", example="Client visit Boston", min_length=1, max_length=100),
    currency: Annotated[ExpenseCurrency | None, Field(description="Currency of every item; default the employee's home currency.")] = None,
) -> ExpenseReport:
    """Start a new draft expense report for an employee."""
    emp = _employee(state, employee_id)
    clean = title.strip()
    require(clean != "", "title must not be blank", params=('title',))
    dup = next((r for r in state.reports.values() if r.employee_id == employee_id and r.status == "draft"
                and r.title.lower() == clean.lower()), None)
    require(dup is None, f"employee '{employee_id}' already has draft report '{dup.report_id if dup else ''}' "
            f"titled '{clean}'; add items to it instead",
            reason='conflict', rejected=(employee_id, dup.report_id if dup else '', clean))
    report = ExpenseReport(report_id=state.new_id("EXP"), employee_id=employee_id, title=clean,
                           currency=currency or emp.home_currency, status="draft", total=0.0, created_at=state.now)
    state.reports[report.report_id] = report
    return report


@tool(write=True, sensitive=("report_id", "amount"))
def add_expense_item(
    state: ExpenseState,
    report_id: ReportId,
    date: day("Day the expense was incurred; not in the future.", listed="date"),
    merchant: text("word", "Where the money was spent.", listed="merchant", min_length=1, max_length=80),
    category: Annotated[ExpenseCategory, Field(description="Expense category; decides the limit and receipt rule.")],
    amount: Annotated[float, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000, description="Amount in the report's currency.")],
    currency: Annotated[ExpenseCurrency | None, Field(description="Currency of the amount; must equal the report's.")] = None,
    description: text("body", "Business purpose.", listed="description", max_length=200) = "",
    receipt_file: text("word", "Receipt file name (.pdf/.jpg/.png), if one is at hand.", listed="receipt_file", optional=True, max_length=120) = None,
) -> ItemResult:
    """Add a personally paid expense to a draft report; policy problems are flagged on the item."""
    report = _report(state, report_id)
    _editable(report)
    require(currency is None or currency == report.currency,
            f"currency mismatch: report '{report_id}' is in {report.currency}, the item is in {currency}; "
            f"convert the amount or create a separate {currency} report",
            params=('amount', 'currency'), rejected=(report_id, report.currency, currency))
    incurred = _claimable(state, date, "date")
    _check_receipt_name(receipt_file, "receipt_file")
    return _new_item(state, report, incurred, merchant, category, amount, description, receipt_file, None)


@tool(write=True, sensitive=("item_id",))
def remove_expense_item(state: ExpenseState, item_id: ItemId) -> ExpenseReport:
    """Remove an item from a draft or rejected report; a matched card transaction becomes unmatched."""
    item = _item(state, item_id)
    report = state.reports[item.report_id]
    _editable(report)
    if item.card_transaction_id is not None:
        state.card_transactions[item.card_transaction_id].matched_item_id = None
    del state.items[item_id]
    _retotal(state, report)
    return report


@tool(write=True, sensitive=("item_id",))
def attach_expense_receipt(
    state: ExpenseState,
    item_id: ItemId,
    file_name: text("title", "Receipt file name, e.g. 'hotel-0314.pdf'.", example="hotel-0314.pdf", min_length=5, max_length=120),
) -> ExpenseItem:
    """Attach a receipt to an expense item of a draft or rejected report."""
    item = _item(state, item_id)
    _editable(state.reports[item.report_id])
    require(not item.receipt_attached, f"item '{item_id}' already has receipt '{item.receipt_file}'",
            reason='conflict', rejected=(item_id, item.receipt_file))
    _check_receipt_name(file_name, "file_name")
    item.receipt_attached, item.receipt_file = True, file_name.strip()
    item.policy_violations = [v for v in item.policy_violations if v != "missing_receipt"]
    return item


@tool(write=True, sensitive=("report_id",))
def submit_expense_report(
    state: ExpenseState,
    report_id: ReportId,
    justification: text("body", "Required when an item is over its category limit: why it was necessary.", listed="justification", max_length=500) = "",
) -> ExpenseReport:
    """Submit a draft (or rejected) report to the employee's manager for approval."""
    report = _report(state, report_id)
    _editable(report)
    items = _items_of(state, report_id)
    require(bool(items), f"report '{report_id}' has no items; add some with add_expense_item first",
            rejected=(report_id,))
    emp = state.employees[report.employee_id]
    require(emp.manager_id is not None, f"employee '{emp.employee_id}' has no manager to approve the report",
            rejected=(emp.employee_id,))
    missing = [i.item_id for i in items if "missing_receipt" in i.policy_violations]
    require(not missing, f"receipts are missing for {', '.join(missing)}; attach them with attach_expense_receipt",
            reason='missing', choices=tuple(missing))
    over = [i for i in items if "over_category_limit" in i.policy_violations]
    require(not over or len(justification.strip()) >= 10, "items over their category limit need a justification "
            "(10+ characters): " + ", ".join(
                f"{i.item_id} ({i.category} limit {state.policies[i.category].per_item_limit:.2f} USD)" for i in over),
            reason='limit', params=('category', 'justification', 'limit'),
            choices=tuple(i.item_id for i in over))
    state.advance()
    report.status, report.submitted_at = "submitted", state.now
    report.decided_at = report.approver_id = report.rejection_reason = None
    report.justification = justification.strip()
    return report


def _decide(state: ExpenseState, report_id: str, approver_id: str) -> ExpenseReport:
    report = _report(state, report_id)
    approver = _employee(state, approver_id, "approver_id")
    require(report.status == "submitted", f"report '{report_id}' is {report.status}; only submitted reports can be "
            "approved or rejected",
            reason='state', rejected=(report_id, report.status),
            wanted=('submitted', 'approved', 'rejected'))
    owner = state.employees[report.employee_id]
    require(approver_id != owner.employee_id, "employees cannot approve or reject their own reports")
    manager = state.employees.get(owner.manager_id or "")
    require(manager is not None and approver.employee_id == manager.employee_id,
            f"only the employee's manager can decide: '{report_id}' belongs to {owner.name} ({owner.employee_id}), "
            f"whose manager is {manager.name + ' (' + manager.employee_id + ')' if manager else 'nobody'}",
            reason='state', rejected=(report_id, owner.name), wanted=('employee',))
    return report


@tool(write=True, sensitive=("report_id", "approver_id"))
def approve_expense_report(
    state: ExpenseState,
    report_id: ReportId,
    approver_id: entity_id("employee", "Employee id of the approving manager."),
) -> ExpenseReport:
    """Approve a submitted report; only the submitter's manager may approve it."""
    report = _decide(state, report_id, approver_id)
    state.advance()
    report.status, report.approver_id, report.decided_at = "approved", approver_id, state.now
    return report


@tool(write=True, sensitive=("report_id", "approver_id"))
def reject_expense_report(
    state: ExpenseState,
    report_id: ReportId,
    approver_id: entity_id("employee", "Employee id of the deciding manager."),
    reason: text("reason", "What the employee must fix.", min_length=3, max_length=300),
) -> ExpenseReport:
    """Reject a submitted report with a reason; the employee can then edit and resubmit it."""
    report = _decide(state, report_id, approver_id)
    state.advance()
    report.status, report.approver_id, report.decided_at = "rejected", approver_id, state.now
    report.rejection_reason = reason.strip()
    return report


@tool(write=True, sensitive=("report_id", "processed_by"))
def reimburse_expense_report(
    state: ExpenseState,
    report_id: ReportId,
    processed_by: entity_id("employee", "Employee id of the finance team member paying it out."),
    method: Annotated[PayoutMethod, Field(description="Pay with the next payroll run or by bank transfer.")] = "bank_transfer",
) -> Payout:
    """Pay an approved report out to the employee (personally paid items only); finance staff only."""
    report = _report(state, report_id)
    clerk = _employee(state, processed_by, "processed_by")
    require(report.status == "approved", f"report '{report_id}' is {report.status}; only approved reports can be "
            "reimbursed",
            reason='state', rejected=(report_id, report.status), wanted=('approved', 'reimbursed'))
    finance = [e.employee_id for e in state.employees.values() if e.department == "finance"]
    require(clerk.department == "finance", f"only finance staff can reimburse; '{processed_by}' is in "
            f"{clerk.department}. Finance: {known(finance)}",
            reason='state', rejected=(processed_by, clerk.department), choices=shown(finance),
            wanted=('finance',))
    require(processed_by != report.employee_id, "finance staff cannot reimburse their own reports")
    state.advance()
    payout = Payout(payout_id=state.new_id("PAY"), report_id=report_id, employee_id=report.employee_id,
                    amount=_owed(state, report_id), currency=report.currency, method=method,
                    processed_by=processed_by, paid_at=state.now)
    state.payouts[payout.payout_id] = payout
    report.status, report.payout_id = "reimbursed", payout.payout_id
    return payout


@tool(write=True, sensitive=("transaction_id", "report_id"))
def match_card_transaction(
    state: ExpenseState,
    transaction_id: CardTransactionId,
    report_id: ReportId,
    category: Annotated[ExpenseCategory | None, Field(description="Expense category; default the card's merchant category.")] = None,
    description: text("body", "Business purpose.", listed="description", max_length=200) = "",
) -> ItemResult:
    """Reconcile a corporate card transaction by adding it as a card-paid item to the cardholder's report."""
    txn = find(state.card_transactions, transaction_id, hint="use list_card_transactions with matched=false to find one")
    report = _report(state, report_id)
    require(txn.matched_item_id is None, f"card transaction '{transaction_id}' is already matched to item "
            f"'{txn.matched_item_id}'",
            reason='conflict', params=('matched',), rejected=(transaction_id, txn.matched_item_id))
    require(txn.employee_id == report.employee_id, f"card transaction '{transaction_id}' belongs to "
            f"'{txn.employee_id}', but report '{report_id}' belongs to '{report.employee_id}'",
            rejected=(transaction_id, txn.employee_id, report_id, report.employee_id))
    _editable(report)
    require(txn.currency == report.currency, f"currency mismatch: transaction '{transaction_id}' is in "
            f"{txn.currency}, report '{report_id}' is in {report.currency}; use a {txn.currency} report",
            params=('currency',),
            rejected=(transaction_id, txn.currency, report_id, report.currency))
    return _new_item(state, report, txn.date, txn.merchant, category or txn.category, txn.amount, description,
                     None, txn)

