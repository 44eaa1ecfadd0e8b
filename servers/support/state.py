"""Support desk server state: customers, orders, tickets, messages, agents, returns, canned replies."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, naming
from prove.env.world import days_before, email, person, phone, shift

TicketCategory = Literal["billing", "shipping", "product_defect", "account", "other"]
TicketPriority = Literal["low", "normal", "high", "urgent"]
TicketStatus = Literal["open", "pending_customer", "escalated", "resolved", "closed"]
AgentTeam = Literal["frontline", "billing", "logistics", "technical", "tier2"]
AuthorKind = Literal["customer", "agent", "system"]
CustomerTier = Literal["standard", "plus", "vip"]
RetailOrderStatus = Literal["processing", "shipped", "delivered"]
ReturnReason = Literal["damaged", "defective", "wrong_item", "not_as_described", "no_longer_needed"]
ReturnStatus = Literal["requested", "approved", "received", "refunded", "rejected"]
MacroCategory = Literal["billing", "shipping", "product_defect", "account", "other", "general"]
TicketSort = Literal["sla_due", "newest", "priority"]

SLA_HOURS: dict[str, int] = {"urgent": 4, "high": 8, "normal": 24, "low": 72}
PRIORITIES: tuple[str, ...] = ("low", "normal", "high", "urgent")
ACTIVE: tuple[str, ...] = ("open", "pending_customer", "escalated")
"""Ticket statuses that count toward an agent's load."""
RETURN_WINDOW_DAYS = 30
REOPEN_WINDOW_DAYS = 14

CustomerId = entity_id("customer", "Support customer id, e.g. 'SCU-0004'.", example="SCU-0004")
OrderId = entity_id("order", "Retail order id, e.g. 'RTO-0012'.", example="RTO-0012")
Sku = entity_id("product", "Product SKU, e.g. 'SKU-1003'.", example="SKU-1003")
AgentId = entity_id("agent", "Support agent id, e.g. 'AGT-0003'.", example="AGT-0003")
TicketId = entity_id("ticket", "Support ticket id, e.g. 'TKT-0012'.", example="TKT-0012")
MessageId = entity_id("ticket_message", "Ticket message id, e.g. 'MSG-0040'.", example="MSG-0040")
RmaId = entity_id("product_return", "Return authorization id, e.g. 'RMA-0005'.", example="RMA-0005")
CannedReplyId = entity_id("canned_reply", "Canned reply (macro) id, e.g. 'MAC-0002'.", example="MAC-0002")


class SupportCustomer(Record):
    customer_id: CustomerId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    tier: CustomerTier


class OrderItem(Record):
    sku: Sku
    name: str = Field(json_schema_extra=naming("name"))
    quantity: int
    unit_price: float = Field(json_schema_extra={MONEY: True}, description="What the customer paid per unit.")
    returned_quantity: int = Field(0, description="Units in a return that was not rejected.")


class RetailOrder(Record):
    order_id: OrderId
    customer_id: CustomerId
    items: list[OrderItem]
    total_paid: float = Field(json_schema_extra={MONEY: True})
    refunded: float = 0.0
    status: RetailOrderStatus
    placed_on: str
    delivered_on: str | None = None


class Agent(Record):
    agent_id: AgentId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    team: AgentTeam
    skills: list[TicketCategory] = Field(description="Ticket categories the agent may handle (sorted).")
    on_shift: bool
    max_open_tickets: int = Field(description="Capacity: most active tickets the agent may hold.")


class Ticket(Record):
    ticket_id: TicketId
    customer_id: CustomerId
    order_id: OrderId | None = None
    subject: str = Field(json_schema_extra=naming("title"))
    category: TicketCategory
    priority: TicketPriority
    status: TicketStatus
    assignee_id: AgentId | None = None
    created_at: str
    updated_at: str
    sla_due_at: str = Field(description="When a response or resolution is due.")
    escalation_level: int = 0
    resolved_at: str | None = None
    resolution: str | None = None
    closed_at: str | None = None
    reopened_count: int = 0
    satisfaction: int | None = Field(None, description="Customer rating 1-5 after resolution.")
    satisfaction_comment: str | None = None


class TicketMessage(Record):
    message_id: MessageId
    ticket_id: TicketId
    author_kind: AuthorKind
    author_id: str = Field(description="Customer or agent id; 'system' for automatic notes.")
    body: str
    created_at: str


class ReturnAuthorization(Record):
    rma_id: RmaId
    order_id: OrderId
    customer_id: CustomerId
    sku: Sku
    quantity: int
    reason: ReturnReason
    status: ReturnStatus
    requested_at: str
    ticket_id: TicketId | None = None
    approved_at: str | None = None
    return_label: str | None = None
    refund_amount: float = Field(0.0, json_schema_extra={MONEY: True})
    refunded_at: str | None = None


class CannedReply(Record):
    macro_id: CannedReplyId
    title: str = Field(json_schema_extra=naming("title"))
    category: MacroCategory
    body: str = Field(description="Text with placeholders {customer_name}, {ticket_id}, {agent_name}.")


class SupportState(ServerState):
    customers: dict[str, SupportCustomer] = Field(default_factory=dict)
    orders: dict[str, RetailOrder] = Field(default_factory=dict)
    agents: dict[str, Agent] = Field(default_factory=dict)
    tickets: dict[str, Ticket] = Field(default_factory=dict)
    messages: dict[str, TicketMessage] = Field(default_factory=dict)
    returns: dict[str, ReturnAuthorization] = Field(default_factory=dict)
    macros: dict[str, CannedReply] = Field(default_factory=dict)


def sla_due(start: str, priority: str) -> str:
    return shift(start, hours=SLA_HOURS[priority])


_PRODUCTS = (
    ("SKU-1001", "Wireless Earbuds", 79.0), ("SKU-1002", "Bluetooth Speaker", 59.0),
    ("SKU-1003", "Smartwatch", 199.0), ("SKU-1004", "USB-C Charger 65W", 29.0),
    ("SKU-1005", "Electric Kettle", 45.0), ("SKU-1006", "Cast Iron Skillet", 39.0),
    ("SKU-1007", "Memory Foam Pillow", 49.0), ("SKU-1008", "Yoga Mat", 25.0),
    ("SKU-1009", "Trail Running Shoes", 129.0), ("SKU-1010", "Packable Rain Jacket", 89.0),
    ("SKU-1011", "Mechanical Keyboard", 109.0), ("SKU-1012", "Portable SSD 1TB", 99.0),
    ("SKU-1013", "LED Desk Lamp", 35.0), ("SKU-1014", "Coffee Grinder", 65.0),
)

_TEAMS: dict[str, tuple[str, ...]] = {
    "frontline": ("account", "other", "shipping"), "billing": ("account", "billing"),
    "logistics": ("product_defect", "shipping"), "technical": ("account", "product_defect"),
    "tier2": ("account", "billing", "other", "product_defect", "shipping"),
}

_SUBJECTS: dict[str, tuple[str, ...]] = {
    "billing": ("Charged twice for my order", "Refund not received yet", "Wrong amount on invoice"),
    "shipping": ("Package has not arrived", "Tracking not updating", "Delivered to the wrong address"),
    "product_defect": ("Item stopped working", "Arrived damaged", "Missing parts in the box"),
    "account": ("Cannot log in", "Change my email address", "Delete my account"),
    "other": ("Question about warranty", "Gift wrapping request", "Feedback on the website"),
}

_CUSTOMER_LINES = ("Can you help me with this please?", "This is the second time I am asking.",
                   "Any update?", "Thanks, that worked.", "I attached a photo.")
_AGENT_LINES = ("Thanks for reaching out, I am looking into it.", "Could you send us a photo of the item?",
                "I have escalated this internally.", "This should be fixed now; please confirm.")

_MACROS = (
    ("Refund timeline", "billing", "Hi {customer_name}, refunds reach your account within 5-7 business days. "
     "Reference: {ticket_id}. - {agent_name}"),
    ("Duplicate charge", "billing", "Hi {customer_name}, we found the duplicate charge and reversed it. - {agent_name}"),
    ("Carrier investigation", "shipping", "Hi {customer_name}, we opened an investigation with the carrier for "
     "{ticket_id} and will update you within 48 hours. - {agent_name}"),
    ("Request photo", "product_defect", "Hi {customer_name}, could you send a photo of the defect so we can "
     "start a return? - {agent_name}"),
    ("Password reset", "account", "Hi {customer_name}, use 'Forgot password' on the login page; the link is "
     "valid for one hour. - {agent_name}"),
    ("Warranty info", "other", "Hi {customer_name}, all products carry a one-year warranty. - {agent_name}"),
    ("Thanks and closing", "general", "Hi {customer_name}, glad we could help. Ticket {ticket_id} is now "
     "resolved. - {agent_name}"),
    ("Need more details", "general", "Hi {customer_name}, could you share your order number and a short "
     "description? - {agent_name}"),
)


def initial_state(seed: int) -> SupportState:
    """A support desk with ~30 customers, ~60 orders, ~12 agents, ~45 tickets and ~12 returns; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-04-20T10:00"
    state = SupportState(now=now)
    cus_id, ord_id, agt_id, tkt_id = Counter("SCU"), Counter("RTO"), Counter("AGT"), Counter("TKT")
    msg_id, rma_id, mac_id = Counter("MSG"), Counter("RMA"), Counter("MAC")
    for title, category, body in _MACROS:
        mid = mac_id()
        state.macros[mid] = CannedReply(macro_id=mid, title=title, category=category, body=body)
    for team in ("frontline", "frontline", "frontline", "billing", "billing", "logistics", "logistics",
                 "technical", "technical", "tier2", "tier2", "tier2"):
        name = person(rng)
        aid = agt_id()
        state.agents[aid] = Agent(
            agent_id=aid, name=name, email=email(name, "support.example.com"), team=team,
            skills=sorted(_TEAMS[team]), on_shift=rng.random() < 0.75,
            max_open_tickets=rng.choice([4, 5, 6, 8]),
        )
    for _ in range(rng.randrange(26, 34)):
        name = person(rng)
        cid = cus_id()
        state.customers[cid] = SupportCustomer(customer_id=cid, name=name, email=email(name, "mail.example.com"),
                                               phone=phone(rng), tier=rng.choices(["standard", "plus", "vip"], [6, 3, 1])[0])
    customers = list(state.customers)
    for _ in range(rng.randrange(55, 70)):
        cid = rng.choice(customers)
        placed = days_before(now, rng, 75, 1)[:10]
        lines = [OrderItem(sku=sku, name=name, quantity=rng.choice([1, 1, 1, 2, 3]),
                           unit_price=round(price * rng.choice([1.0, 1.0, 0.9, 0.85]), 2))
                 for sku, name, price in rng.sample(_PRODUCTS, rng.randrange(1, 4))]
        age = (datetime.fromisoformat(now) - datetime.fromisoformat(placed)).days
        status = "delivered" if age > 6 else rng.choice(["processing", "shipped", "delivered"])
        delivered = shift(placed, days=rng.randrange(2, 6)) if status == "delivered" else None
        if delivered and delivered > now[:10]:
            delivered = now[:10]
        oid = ord_id()
        state.orders[oid] = RetailOrder(
            order_id=oid, customer_id=cid, items=lines, status=status, placed_on=placed,
            delivered_on=delivered, total_paid=round(sum(ln.unit_price * ln.quantity for ln in lines), 2),
        )
    orders = list(state.orders.values())
    agents = list(state.agents.values())
    load = {a.agent_id: 0 for a in agents}
    tickets: list[tuple[Ticket, list[TicketMessage]]] = []
    for _ in range(rng.randrange(40, 50)):
        category = rng.choice(list(_SUBJECTS))
        order = rng.choice(orders) if category in ("shipping", "product_defect", "billing") else None
        cid = order.customer_id if order else rng.choice(customers)
        priority = rng.choices(PRIORITIES, weights=[2, 5, 3, 1])[0]
        status = rng.choices(["open", "pending_customer", "escalated", "resolved", "closed"], [4, 3, 1, 4, 2])[0]
        active = status in ACTIVE
        created = days_before(now, rng, 2) if active else days_before(now, rng, 40, 2)
        skilled = [a.agent_id for a in agents if category in a.skills
                   and (status != "escalated" or a.team == "tier2")
                   and (not active or load[a.agent_id] < a.max_open_tickets)]
        assignee = None if not skilled or (status == "open" and rng.random() < 0.4) else rng.choice(skilled)
        if assignee is None and status != "open":
            status, active = "open", True
        if assignee and active:
            load[assignee] += 1
        t = Ticket(ticket_id="", customer_id=cid, order_id=order.order_id if order else None,
                   subject=rng.choice(_SUBJECTS[category]), category=category, priority=priority,
                   status=status, assignee_id=assignee, created_at=created, updated_at=created,
                   sla_due_at=sla_due(created, priority), escalation_level=int(status == "escalated"))
        convo = [TicketMessage(message_id="", ticket_id="", author_kind="customer", author_id=cid, created_at=created,
                               body=f"{t.subject}. {rng.choice(_CUSTOMER_LINES)}")]
        at = created
        for k in range(rng.randrange(0, 3) + (1 if status in ("resolved", "closed", "pending_customer") else 0)):
            at = shift(at, hours=rng.randrange(1, 12))
            if at >= now:
                break
            agent_turn = assignee is not None and (k % 2 == 0 or status == "pending_customer")
            convo.append(TicketMessage(
                message_id="", ticket_id="", author_kind="agent" if agent_turn else "customer",
                author_id=assignee if agent_turn and assignee else cid, created_at=at,
                body=rng.choice(_AGENT_LINES if agent_turn else _CUSTOMER_LINES)))
        t.updated_at = convo[-1].created_at
        if status in ("resolved", "closed"):
            if not any(m.author_kind == "agent" for m in convo):
                at = min(shift(t.updated_at, hours=1), now)
                convo.append(TicketMessage(message_id="", ticket_id="", author_kind="agent", author_id=assignee or "",
                                           created_at=at, body=rng.choice(_AGENT_LINES)))
            t.resolved_at = t.updated_at = convo[-1].created_at
            t.resolution = rng.choice(["Replacement sent", "Refund issued", "Explained the policy", "Fixed the account"])
            if status == "closed":
                t.closed_at = t.updated_at = min(shift(t.resolved_at, days=3), now)
            if rng.random() < 0.5:
                t.satisfaction = rng.choices([1, 2, 3, 4, 5], [1, 1, 2, 3, 4])[0]
                t.satisfaction_comment = rng.choice(["", "Quick and helpful", "Took too long"])
        tickets.append((t, convo))
    tickets.sort(key=lambda pair: pair[0].created_at)
    for t, convo in tickets:
        t.ticket_id = tkt_id()
        state.tickets[t.ticket_id] = t
        for m in convo:
            m.message_id, m.ticket_id = msg_id(), t.ticket_id
            state.messages[m.message_id] = m
    delivered = [o for o in orders if o.status == "delivered"]
    for order in rng.sample(delivered, min(12, len(delivered))):
        line = rng.choice(order.items)
        status = rng.choice(["requested", "approved", "received", "refunded", "rejected"])
        qty = rng.randrange(1, line.quantity + 1)
        assert order.delivered_on is not None
        at = shift(f"{order.delivered_on}T09:00", days=rng.randrange(1, 10))
        at = min(at, shift(now, hours=-2))
        rid = rma_id()
        rma = ReturnAuthorization(rma_id=rid, order_id=order.order_id, customer_id=order.customer_id, sku=line.sku,
                                  quantity=qty, reason=rng.choice(["damaged", "defective", "wrong_item",
                                                                   "not_as_described", "no_longer_needed"]),
                                  status=status, requested_at=at)
        if status in ("approved", "received", "refunded"):
            rma.approved_at, rma.return_label = shift(at, hours=1), f"LBL-{rid[4:]}"
        if status == "refunded":
            rma.refund_amount = round(line.unit_price * qty, 2)
            rma.refunded_at = min(shift(at, days=1), now)
            order.refunded = round(order.refunded + rma.refund_amount, 2)
        if status != "rejected":
            line.returned_quantity += qty
        state.returns[rid] = rma
    return state
