"""Banking server state: customers, accounts, transactions, payees, cards, scheduled payments."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, day, entity_id, naming
from prove.env.world import CITIES, COMPANIES, days_before, email, money, person, phone

AccountType = Literal["checking", "savings", "credit"]
Currency = Literal["USD", "EUR", "GBP"]
AccountStatus = Literal["active", "frozen", "closed"]
TxnKind = Literal["deposit", "withdrawal", "card_payment", "transfer_in", "transfer_out", "payee_payment", "fee"]
Category = Literal["groceries", "dining", "travel", "utilities", "salary", "rent", "shopping", "health", "transfer", "other"]
CardStatus = Literal["active", "locked", "cancelled"]
PaymentStatus = Literal["scheduled", "executed", "cancelled"]
DisputeReason = Literal["unauthorized", "duplicate", "wrong_amount", "not_received"]

CustomerId = entity_id("customer", "Customer id, e.g. 'CUS-0001'.", example="CUS-0001")
AccountId = entity_id("account", "Account id, e.g. 'ACC-0003'.", example="ACC-0003")
TransactionId = entity_id("transaction", "Transaction id, e.g. 'TXN-0120'.", example="TXN-0120")
PayeeId = entity_id("payee", "Saved payee id, e.g. 'PAY-0002'.", example="PAY-0002")
CardId = entity_id("card", "Card id, e.g. 'CRD-0007'.", example="CRD-0007")
PaymentId = entity_id("scheduled_payment", "Scheduled payment id, e.g. 'SCH-0004'.", example="SCH-0004")
PaymentDate = day("Execution date of a scheduled payment.")


class Customer(Record):
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    city: str


class Account(Record):
    account_id: AccountId
    customer_id: CustomerId
    account_type: AccountType
    currency: Currency
    balance: float = Field(json_schema_extra={MONEY: True}, description="Current balance; negative only for credit accounts.")
    credit_limit: float = Field(json_schema_extra={MONEY: True}, default=0.0, description="For credit accounts: how far below zero it may go.")
    daily_transfer_limit: float = Field(json_schema_extra={MONEY: True})
    transferred_today: float = 0.0
    status: AccountStatus
    opened_on: str


class Transaction(Record):
    transaction_id: TransactionId
    account_id: AccountId
    kind: TxnKind
    amount: float = Field(json_schema_extra={MONEY: True}, description="Positive amount moved; `kind` says in which direction.")
    category: Category
    description: str
    counterparty: str
    timestamp: str
    disputed: bool = False
    dispute_reason: DisputeReason | None = None


class Payee(Record):
    payee_id: PayeeId
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("name"))
    account_number: str
    nickname: str


class Card(Record):
    card_id: CardId
    account_id: AccountId
    last4: str
    status: CardStatus


class ScheduledPayment(Record):
    payment_id: PaymentId
    account_id: AccountId
    payee_id: PayeeId
    amount: float = Field(json_schema_extra={MONEY: True})
    date: PaymentDate
    status: PaymentStatus


class BankState(ServerState):
    customers: dict[str, Customer] = Field(default_factory=dict)
    accounts: dict[str, Account] = Field(default_factory=dict)
    transactions: dict[str, Transaction] = Field(default_factory=dict)
    payees: dict[str, Payee] = Field(default_factory=dict)
    cards: dict[str, Card] = Field(default_factory=dict)
    scheduled: dict[str, ScheduledPayment] = Field(default_factory=dict)


_MERCHANTS: dict[str, tuple[str, ...]] = {
    "groceries": ("FreshMart", "Green Basket", "Corner Grocer"),
    "dining": ("Luigi's Trattoria", "Blue Door Cafe", "Sakura Sushi"),
    "travel": ("SkyWays Air", "RailNow", "CityCab"),
    "utilities": ("PowerGrid Co", "AquaWorks", "FiberNet"),
    "shopping": ("Urban Outfit", "TechHub", "BookNook"),
    "health": ("CarePlus Pharmacy", "Smile Dental"),
    "other": ("Misc Services",),
}


def initial_state(seed: int) -> BankState:
    """A bank with ~24 customers, ~50 accounts, ~400 transactions; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    state = BankState(now=now)
    cust_id, acc_id, txn_id = Counter("CUS"), Counter("ACC"), Counter("TXN")
    pay_id, card_id, sch_id = Counter("PAY"), Counter("CRD"), Counter("SCH")
    for _ in range(rng.randrange(20, 28)):
        name = person(rng)
        cid = cust_id()
        state.customers[cid] = Customer(
            customer_id=cid, name=name, email=email(name, "mail.example.com"),
            phone=phone(rng), city=rng.choice(CITIES),
        )
        kinds: list[AccountType] = ["checking"] + rng.sample(["savings", "credit"], rng.randrange(0, 3))
        for kind in kinds:
            aid = acc_id()
            credit = kind == "credit"
            state.accounts[aid] = Account(
                account_id=aid, customer_id=cid, account_type=kind,
                currency=rng.choices(["USD", "EUR", "GBP"], weights=[6, 3, 1])[0],
                balance=-money(rng, 0, 900) if credit else money(rng, 20, 15000),
                credit_limit=float(rng.choice([1000, 2500, 5000])) if credit else 0.0,
                daily_transfer_limit=float(rng.choice([1000, 2500, 5000, 10000])),
                status=rng.choices(["active", "frozen"], weights=[12, 1])[0],
                opened_on=days_before(now, rng, 3000, 60)[:10],
            )
            if kind != "savings":
                card = card_id()
                state.cards[card] = Card(
                    card_id=card, account_id=aid, last4=f"{rng.randrange(10000):04d}",
                    status=rng.choices(["active", "locked"], weights=[9, 1])[0],
                )
            for _ in range(rng.randrange(4, 12)):
                category = rng.choice(list(_MERCHANTS))
                tid = txn_id()
                state.transactions[tid] = Transaction(
                    transaction_id=tid, account_id=aid, kind="card_payment", category=category,
                    amount=money(rng, 3, 400), description=f"{category} purchase",
                    counterparty=rng.choice(_MERCHANTS[category]),
                    timestamp=days_before(now, rng, 90),
                )
            if kind == "checking":
                tid = txn_id()
                state.transactions[tid] = Transaction(
                    transaction_id=tid, account_id=aid, kind="deposit", category="salary",
                    amount=money(rng, 1800, 7000), description="monthly salary",
                    counterparty=rng.choice(COMPANIES), timestamp=days_before(now, rng, 30),
                )
        for _ in range(rng.randrange(1, 4)):
            pname = person(rng)
            pid = pay_id()
            state.payees[pid] = Payee(
                payee_id=pid, customer_id=cid, name=pname,
                account_number=f"{rng.randrange(10**9, 10**10)}",
                nickname=rng.choice(["landlord", "mom", "gym", "babysitter", "roommate", "tutor"]),
            )
    # Every third payee (in creation order) gets a scheduled payment from its customer's checking account.
    for payee in list(state.payees.values())[::3]:
        checking = next(a for a in state.accounts.values()
                        if a.customer_id == payee.customer_id and a.account_type == "checking")
        sid = sch_id()
        state.scheduled[sid] = ScheduledPayment(
            payment_id=sid, account_id=checking.account_id, payee_id=payee.payee_id,
            amount=money(rng, 25, 1200), date=f"2026-03-{rng.randrange(17, 31)}", status="scheduled",
        )
    state.transactions = dict(sorted(state.transactions.items(), key=lambda kv: kv[1].timestamp))
    return state
