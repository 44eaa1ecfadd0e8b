"""Banking tools: accounts, balances, transactions, transfers, payees, cards, scheduled payments."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, require
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    MONEY,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    measure,
    parse_day,
    text,
)
from prove_servers.banking.state import (
    Account,
    AccountId,
    AccountStatus,
    AccountType,
    BankState,
    Card,
    CardId,
    CardStatus,
    Category,
    Currency,
    Customer,
    CustomerId,
    DisputeReason,
    Payee,
    PayeeId,
    PaymentId,
    PaymentStatus,
    ScheduledPayment,
    Transaction,
    TransactionId,
    TxnKind,
)

Amount = Annotated[float, Field(json_schema_extra={MONEY: True}, gt=0, le=1_000_000, description="Amount in the account's currency.")]


class AccountList(Page):
    accounts: list[Account]


class BalanceInfo(BaseModel):
    account_id: AccountId
    currency: Currency
    balance: float = Field(json_schema_extra={MONEY: True})
    available: float = Field(description="What can be spent now: balance plus any credit limit.")
    transfer_limit_left_today: float = Field(json_schema_extra={MONEY: True})


class TransactionList(Page):
    transactions: list[Transaction]


class CustomerList(Page):
    customers: list[Customer]


class PayeeList(Page):
    payees: list[Payee]


class CardList(Page):
    cards: list[Card]


class PaymentList(Page):
    payments: list[ScheduledPayment]


class TransferReceipt(BaseModel):
    transaction_id: TransactionId
    from_account_id: AccountId
    to_account_id: AccountId
    amount: float = Field(json_schema_extra={MONEY: True})
    from_balance: float = Field(json_schema_extra={MONEY: True})
    to_balance: float = Field(json_schema_extra={MONEY: True})
    timestamp: str


def _account(state: BankState, account_id: str, param: str = "account_id") -> Account:
    return find(state.accounts, account_id)


def _usable(account: Account, param: str) -> None:
    require(
        account.status == "active",
        f"account '{account.account_id}' ({param}) is {account.status}; only active accounts can move money",
        reason='state', params=(param,), rejected=(account.account_id, account.status),
        wanted=('active',)
    )


def _check_debit(account: Account, amount: float) -> None:
    available = account.balance + account.credit_limit
    require(
        amount <= available + 1e-9,
        f"insufficient funds in '{account.account_id}': available {available:.2f} "
        f"{account.currency}, requested {amount:.2f}",
        reason='limit', rejected=(account.account_id, available, account.currency, amount)
    )
    left = account.daily_transfer_limit - account.transferred_today
    require(
        amount <= left + 1e-9,
        f"daily transfer limit of '{account.account_id}' exceeded: {left:.2f} "
        f"{account.currency} left today, requested {amount:.2f}",
        reason='limit', params=('limit',),
        rejected=(account.account_id, left, account.currency, amount)
    )


def _log(state: BankState, account_id: str, kind: TxnKind, amount: float, category: Category,
         description: str, counterparty: str) -> Transaction:
    txn = Transaction(
        transaction_id=state.new_id("TXN"), account_id=account_id, kind=kind,
        amount=round(amount, 2), category=category, description=description,
        counterparty=counterparty, timestamp=state.now,
    )
    state.transactions[txn.transaction_id] = txn
    return txn


@tool()
def search_bank_customers(
    state: BankState,
    query: text("query", "Case-insensitive substring of the name or email.", listed="name") = "",
    city: text("word", "Only customers living in this city.", listed="city", optional=True) = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CustomerList:
    """Find bank customers by name or email, optionally in one city, a page at a time."""
    q = query.strip().lower()
    found = [
        c for c in state.customers.values()
        if (q in c.name.lower() or q in c.email.lower()) and (city is None or c.city.lower() == city.lower())
    ]
    return CustomerList.of(found, offset, limit)


@tool(sensitive=("customer_id",))
def get_bank_customer(state: BankState, customer_id: CustomerId) -> Customer:
    """Get one customer's contact details."""
    return find(state.customers, customer_id)


@tool(sensitive=("customer_id",))
def list_accounts(
    state: BankState,
    customer_id: entity_id("customer", "Only this customer's accounts.") | None = None,
    account_type: Annotated[AccountType | None, Field(description="Only accounts of this type.")] = None,
    status: Annotated[AccountStatus | None, Field(description="Only accounts in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AccountList:
    """List accounts, filtered by owner, type and status, a page at a time."""
    if customer_id is not None:
        find(state.customers, customer_id)
    found = [
        a for a in state.accounts.values()
        if (customer_id is None or a.customer_id == customer_id)
        and (account_type is None or a.account_type == account_type)
        and (status is None or a.status == status)
    ]
    return AccountList.of(found, offset, limit)


@tool(sensitive=("account_id",))
def get_bank_account(state: BankState, account_id: AccountId) -> Account:
    """Get an account's details: owner, type, currency, balance, limits and status."""
    return _account(state, account_id)


@tool(sensitive=("account_id",))
def get_balance(state: BankState, account_id: AccountId) -> BalanceInfo:
    """Get the current and available balance of an account and its transfer limit left today."""
    acc = _account(state, account_id)
    return BalanceInfo(
        account_id=acc.account_id, currency=acc.currency, balance=acc.balance,
        available=round(acc.balance + acc.credit_limit, 2),
        transfer_limit_left_today=round(acc.daily_transfer_limit - acc.transferred_today, 2),
    )


@tool(sensitive=("account_id",))
def list_bank_transactions(
    state: BankState,
    account_id: AccountId,
    category: Annotated[Category | None, Field(description="Only transactions in this category.")] = None,
    since: day("Only on or after this date.") | None = None,
    min_amount: Annotated[float | None, Field(json_schema_extra=measure("money"), ge=0, description="Only amounts at least this large.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> TransactionList:
    """List an account's transactions, newest first, filtered by category, date and amount."""
    _account(state, account_id)
    if since is not None:
        parse_day(since, "since")
    found = [
        t for t in reversed(state.transactions.values())
        if t.account_id == account_id
        and (category is None or t.category == category)
        and (since is None or t.timestamp[:10] >= since[:10])
        and (min_amount is None or t.amount >= min_amount)
    ]
    return TransactionList.of(found, offset, limit)


@tool(sensitive=("transaction_id",))
def get_transaction(
    state: BankState,
    transaction_id: TransactionId,
) -> Transaction:
    """Get one transaction by id."""
    return find(state.transactions, transaction_id)


@tool(write=True, sensitive=("from_account_id", "to_account_id", "amount"))
def transfer_funds(
    state: BankState,
    from_account_id: entity_id("account", "Account to debit."),
    to_account_id: entity_id("account", "Account to credit (same currency)."),
    amount: Amount,
    memo: text("body", "Note shown on both statements.", max_length=140) = "",
) -> TransferReceipt:
    """Move money between two accounts of the bank in the same currency; both balances change."""
    src = _account(state, from_account_id, "from_account_id")
    dst = _account(state, to_account_id, "to_account_id")
    require(src.account_id != dst.account_id, "from_account_id and to_account_id must differ",
            params=('from_account_id', 'to_account_id'))
    _usable(src, "from_account_id")
    _usable(dst, "to_account_id")
    require(
        src.currency == dst.currency,
        f"currency mismatch: '{src.account_id}' holds {src.currency}, '{dst.account_id}' holds {dst.currency}",
        rejected=(src.account_id, src.currency, dst.account_id, dst.currency)
    )
    _check_debit(src, amount)
    state.advance()
    src.balance = round(src.balance - amount, 2)
    src.transferred_today = round(src.transferred_today + amount, 2)
    dst.balance = round(dst.balance + amount, 2)
    out = _log(state, src.account_id, "transfer_out", amount, "transfer", memo or "transfer", dst.account_id)
    _log(state, dst.account_id, "transfer_in", amount, "transfer", memo or "transfer", src.account_id)
    return TransferReceipt(
        transaction_id=out.transaction_id, from_account_id=src.account_id,
        to_account_id=dst.account_id, amount=round(amount, 2), from_balance=src.balance,
        to_balance=dst.balance, timestamp=state.now,
    )


@tool(sensitive=("customer_id",))
def list_payees(state: BankState, customer_id: CustomerId, offset: Offset = 0,
                limit: Limit = DEFAULT_LIMIT) -> PayeeList:
    """List the saved payees (external recipients) of a customer."""
    find(state.customers, customer_id)
    found = [p for p in state.payees.values() if p.customer_id == customer_id]
    return PayeeList.of(found, offset, limit)


@tool(write=True, sensitive=("customer_id", "account_number"))
def add_payee(
    state: BankState,
    customer_id: CustomerId,
    name: text("person_name", "Recipient's full name.", listed="name", min_length=1, max_length=80),
    account_number: text("word", "Recipient's 10-digit account number.", listed="account_number"),
    nickname: text("title", "Short label, e.g. 'landlord'.", listed="nickname", example="landlord", max_length=40) = "",
) -> Payee:
    """Save a new external payee for a customer."""
    find(state.customers, customer_id)
    require(account_number.isdigit() and len(account_number) == 10,
            f"account_number must be exactly 10 digits, got '{account_number}'",
            params=('account_number',), rejected=(account_number,))
    dup = next((p for p in state.payees.values()
                if p.customer_id == customer_id and p.account_number == account_number), None)
    require(dup is None, f"customer '{customer_id}' already has payee "
            f"'{dup.payee_id if dup else ''}' with account number {account_number}",
            reason='conflict', rejected=(customer_id, dup.payee_id if dup else '', account_number))
    payee = Payee(payee_id=state.new_id("PAY"), customer_id=customer_id, name=name.strip(),
                  account_number=account_number, nickname=nickname.strip())
    state.payees[payee.payee_id] = payee
    return payee


def _own_payee(state: BankState, account: Account, payee_id: str) -> Payee:
    payee = find(state.payees, payee_id)
    require(payee.customer_id == account.customer_id,
            f"payee '{payee_id}' belongs to another customer; payees of '{account.customer_id}': "
            + ", ".join(p.payee_id for p in state.payees.values() if p.customer_id == account.customer_id),
            rejected=(payee_id, account.customer_id),
            choices=tuple(p.payee_id for p in state.payees.values() if p.customer_id == account.customer_id))
    return payee


@tool(write=True, sensitive=("account_id", "payee_id", "amount"))
def pay_payee(
    state: BankState,
    account_id: AccountId,
    payee_id: PayeeId,
    amount: Amount,
    memo: text("body", "Note for the recipient.", max_length=140) = "",
) -> Transaction:
    """Pay a saved payee now from one of the payee owner's accounts."""
    acc = _account(state, account_id)
    payee = _own_payee(state, acc, payee_id)
    _usable(acc, "account_id")
    _check_debit(acc, amount)
    state.advance()
    acc.balance = round(acc.balance - amount, 2)
    acc.transferred_today = round(acc.transferred_today + amount, 2)
    return _log(state, acc.account_id, "payee_payment", amount, "transfer", memo or f"payment to {payee.name}", payee.name)


@tool(sensitive=("account_id",))
def list_scheduled_payments(
    state: BankState,
    account_id: AccountId,
    status: Annotated[PaymentStatus | None, Field(description="Only payments in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PaymentList:
    """List an account's scheduled payments."""
    _account(state, account_id)
    found = [p for p in state.scheduled.values()
             if p.account_id == account_id and (status is None or p.status == status)]
    return PaymentList.of(found, offset, limit)


@tool(write=True, sensitive=("account_id", "payee_id", "amount"))
def schedule_payment(
    state: BankState,
    account_id: AccountId,
    payee_id: PayeeId,
    amount: Amount,
    date: day("Execution date, after today.", listed="date"),
) -> ScheduledPayment:
    """Schedule a future payment to a saved payee."""
    acc = _account(state, account_id)
    _own_payee(state, acc, payee_id)
    _usable(acc, "account_id")
    parse_day(date, "date")
    require(date > state.now[:10], f"date {date} is not after today ({state.now[:10]})",
            params=('date',), rejected=(date,))
    payment = ScheduledPayment(payment_id=state.new_id("SCH"), account_id=acc.account_id,
                               payee_id=payee_id, amount=round(amount, 2), date=date, status="scheduled")
    state.scheduled[payment.payment_id] = payment
    return payment


@tool(write=True, sensitive=("payment_id",))
def cancel_scheduled_payment(
    state: BankState,
    payment_id: PaymentId,
) -> ScheduledPayment:
    """Cancel a scheduled payment that has not run yet."""
    payment = find(state.scheduled, payment_id)
    require(payment.status == "scheduled", f"payment '{payment_id}' is already {payment.status}",
            reason='conflict', rejected=(payment_id, payment.status))
    payment.status = "cancelled"
    return payment


@tool(sensitive=("account_id",))
def list_bank_cards(state: BankState, account_id: AccountId, offset: Offset = 0,
               limit: Limit = DEFAULT_LIMIT) -> CardList:
    """List the cards attached to an account."""
    _account(state, account_id)
    found = [c for c in state.cards.values() if c.account_id == account_id]
    return CardList.of(found, offset, limit)


@tool(write=True, sensitive=("card_id",))
def set_card_status(
    state: BankState,
    card_id: CardId,
    status: Annotated[CardStatus, Field(description="New status: lock, unlock (active) or cancel.")],
) -> Card:
    """Lock, unlock or cancel a card. A cancelled card cannot be reactivated."""
    card = find(state.cards, card_id)
    require(card.status != "cancelled", f"card '{card_id}' is cancelled and cannot change status",
            reason='state', params=('status',), rejected=(card_id,))
    require(card.status != status, f"card '{card_id}' is already {status}",
            reason='conflict', rejected=(card_id, status))
    card.status = status
    return card


@tool(write=True, sensitive=("transaction_id",))
def dispute_transaction(
    state: BankState,
    transaction_id: entity_id("transaction", "Card payment to dispute, e.g. 'TXN-0120'.", example="TXN-0120"),
    reason: Annotated[DisputeReason, Field(description="Why the charge is wrong.")],
) -> Transaction:
    """Dispute a card payment; only card payments not already disputed can be disputed."""
    txn = find(state.transactions, transaction_id)
    require(txn.kind == "card_payment", f"only card payments can be disputed; '{transaction_id}' is a {txn.kind}",
            reason='state', rejected=(transaction_id, txn.kind))
    require(not txn.disputed, f"transaction '{transaction_id}' is already disputed ({txn.dispute_reason})",
            reason='conflict', rejected=(transaction_id,))
    txn.disputed, txn.dispute_reason = True, reason
    return txn
