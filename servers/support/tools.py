"""Support desk tools: customers and orders, tickets, replies, assignment, escalation, returns, refunds."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    MONEY,
    Limit,
    Offset,
    Page,
    entity_id,
    measure,
    text,
)
from prove.env.world import shift
from prove_servers.support.state import (
    ACTIVE,
    PRIORITIES,
    REOPEN_WINDOW_DAYS,
    RETURN_WINDOW_DAYS,
    Agent,
    AgentId,
    AgentTeam,
    CannedReply,
    CannedReplyId,
    CustomerId,
    MacroCategory,
    OrderId,
    OrderItem,
    RetailOrder,
    ReturnAuthorization,
    ReturnReason,
    RmaId,
    SupportCustomer,
    SupportState,
    Ticket,
    TicketCategory,
    TicketId,
    TicketMessage,
    TicketPriority,
    TicketSort,
    TicketStatus,
    sla_due,
)


class SupportCustomerList(Page):
    customers: list[SupportCustomer]


class OrderForSupport(RetailOrder):
    return_window_ends: str | None = Field(description="Last day a return can be requested; None before delivery.")
    returnable_now: bool


class OrderForSupportList(Page):
    customer_id: CustomerId
    orders: list[OrderForSupport]


class TicketSummary(Ticket):
    sla_breached: bool = Field(description="Still active and past its SLA due time.")


class TicketList(Page):
    tickets: list[TicketSummary]


class TicketDetail(TicketSummary):
    customer_name: str
    assignee_name: str | None
    messages: list[TicketMessage]


class AgentView(Agent):
    open_tickets: int = Field(description="Active tickets (open, pending customer, escalated) assigned now.")
    capacity_left: int


class AgentList(Page):
    agents: list[AgentView]


class CannedReplyList(Page):
    replies: list[CannedReply]


class ReturnStatusView(ReturnAuthorization):
    item_name: str
    unit_price: float = Field(json_schema_extra={MONEY: True})
    max_refund: float = Field(json_schema_extra={MONEY: True}, description="Most that can still be refunded for this return.")


def _customer(state: SupportState, customer_id: str) -> SupportCustomer:
    return find(state.customers, customer_id, hint="use search_support_customers to find a customer id")


def _ticket(state: SupportState, ticket_id: str) -> Ticket:
    return find(state.tickets, ticket_id, hint="use search_support_tickets to find a ticket id")


def _agent(state: SupportState, agent_id: str, param: str = "agent_id") -> Agent:
    return find(state.agents, agent_id)


def _rma(state: SupportState, rma_id: str) -> ReturnAuthorization:
    return find(state.returns, rma_id, hint="use list_support_customer_orders or get_support_ticket")


def _load(state: SupportState, agent_id: str) -> int:
    return sum(1 for t in state.tickets.values() if t.assignee_id == agent_id and t.status in ACTIVE)


def _summary(state: SupportState, t: Ticket) -> TicketSummary:
    return TicketSummary(**t.model_dump(), sla_breached=t.status in ACTIVE and t.sla_due_at < state.now)


def _order_view(state: SupportState, o: RetailOrder) -> OrderForSupport:
    ends = shift(o.delivered_on, days=RETURN_WINDOW_DAYS) if o.delivered_on else None
    return OrderForSupport(**o.model_dump(), return_window_ends=ends,
                           returnable_now=ends is not None and state.now[:10] <= ends)


def _line(order: RetailOrder, sku: str) -> OrderItem:
    line = next((ln for ln in order.items if ln.sku == sku), None)
    require(line is not None, f"order '{order.order_id}' has no item '{sku}' (parameter 'sku'); its items: "
            + ", ".join(f"{ln.sku} ({ln.name})" for ln in order.items),
            params=('sku',), rejected=(order.order_id, sku),
            choices=tuple(ln.sku for ln in order.items))
    assert line is not None
    return line


def _refundable(state: SupportState, rma: ReturnAuthorization) -> float:
    line = _line(state.orders[rma.order_id], rma.sku)
    return round(line.unit_price * rma.quantity - rma.refund_amount, 2)


def _check_assignable(state: SupportState, t: Ticket, agent: Agent, param: str, escalated: bool) -> None:
    require(agent.on_shift, f"agent '{agent.agent_id}' ({agent.name}, parameter '{param}') is off shift; "
            "use list_support_agents with on_shift_only=true",
            params=('on_shift_only', param), rejected=(agent.agent_id,))
    require(t.category in agent.skills, f"agent '{agent.agent_id}' ({agent.name}) lacks the '{t.category}' skill "
            f"(skills: {', '.join(agent.skills)}); pick an agent with that skill",
            params=('skill',), rejected=(agent.agent_id, t.category), choices=tuple(agent.skills))
    require(not escalated or agent.team == "tier2",
            f"ticket '{t.ticket_id}' is escalated and needs a tier2 agent; '{agent.agent_id}' is on team {agent.team}",
            reason='missing', params=('team',), rejected=(t.ticket_id, agent.agent_id, agent.team))
    load = _load(state, agent.agent_id)
    require(load < agent.max_open_tickets, f"agent '{agent.agent_id}' ({agent.name}) is at capacity: "
            f"{load} of {agent.max_open_tickets} active tickets",
            rejected=(agent.agent_id, load, agent.max_open_tickets))


def _touch(state: SupportState, t: Ticket) -> None:
    t.updated_at = state.now


def _post(state: SupportState, t: Ticket, kind: str, author: str, body: str) -> TicketMessage:
    msg = TicketMessage(message_id=state.new_id("MSG"), ticket_id=t.ticket_id, author_kind=kind,
                        author_id=author, body=body, created_at=state.now)
    state.messages[msg.message_id] = msg
    _touch(state, t)
    return msg


@tool()
def search_support_customers(
    state: SupportState,
    query: text("query", "Case-insensitive substring of the name, email or phone.", max_length=80, listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> SupportCustomerList:
    """Find retail customers by name, email or phone to open or look up their support cases."""
    q = query.strip().lower()
    found = [c for c in state.customers.values() if q in c.name.lower() or q in c.email.lower() or q in c.phone]
    return SupportCustomerList.of(found, offset, limit)


@tool(sensitive=("customer_id",))
def list_support_customer_orders(
    state: SupportState,
    customer_id: CustomerId,
    returnable_only: Annotated[bool, Field(description="Only delivered orders still inside the 30-day return window.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> OrderForSupportList:
    """List a customer's orders, newest first, with items, delivery dates, returned units and return window."""
    _customer(state, customer_id)
    views = [_order_view(state, o) for o in reversed(state.orders.values()) if o.customer_id == customer_id]
    found = [v for v in views if v.returnable_now or not returnable_only]
    return OrderForSupportList.of(found, offset, limit, customer_id=customer_id)


@tool(sensitive=("customer_id", "assignee_id"))
def search_support_tickets(
    state: SupportState,
    query: text("query", "Case-insensitive substring of the subject.", max_length=80, listed="subject") = "",
    customer_id: Annotated[CustomerId | None, Field(description="Only this customer's tickets, e.g. 'SCU-0004'.", json_schema_extra={EXAMPLE: "SCU-0004"})] = None,
    status: Annotated[TicketStatus | None, Field(description="Only tickets in this status.")] = None,
    category: Annotated[TicketCategory | None, Field(description="Only tickets of this category.")] = None,
    priority: Annotated[TicketPriority | None, Field(description="Only tickets of this priority.")] = None,
    assignee_id: Annotated[AgentId | None, Field(description="Only tickets assigned to this agent, e.g. 'AGT-0003'.", json_schema_extra={EXAMPLE: "AGT-0003"})] = None,
    unassigned_only: Annotated[bool, Field(description="Only tickets nobody is assigned to.")] = False,
    overdue_only: Annotated[bool, Field(description="Only active tickets past their SLA due time.")] = False,
    sort: Annotated[TicketSort, Field(description="sla_due (soonest first), newest, or priority (urgent first).")] = "newest",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> TicketList:
    """Search support tickets by subject, customer, status, category, priority, assignee and SLA breach."""
    if customer_id is not None:
        _customer(state, customer_id)
    if assignee_id is not None:
        _agent(state, assignee_id, "assignee_id")
    q = query.strip().lower()
    found = [_summary(state, t) for t in state.tickets.values()
             if q in t.subject.lower() and (customer_id is None or t.customer_id == customer_id)
             and (status is None or t.status == status) and (category is None or t.category == category)
             and (priority is None or t.priority == priority)
             and (assignee_id is None or t.assignee_id == assignee_id)
             and (not unassigned_only or t.assignee_id is None)]
    found = [t for t in found if t.sla_breached or not overdue_only]
    keys = {"sla_due": lambda t: (t.sla_due_at, t.ticket_id),
            "newest": lambda t: (t.created_at, t.ticket_id),
            "priority": lambda t: (-PRIORITIES.index(t.priority), t.sla_due_at)}
    found.sort(key=keys[sort], reverse=sort == "newest")
    return TicketList.of(found, offset, limit)


@tool(sensitive=("ticket_id",))
def get_support_ticket(state: SupportState, ticket_id: TicketId) -> TicketDetail:
    """Get a support ticket with its full message thread, assignee, SLA due time and rating."""
    t = _ticket(state, ticket_id)
    assignee = state.agents.get(t.assignee_id) if t.assignee_id else None
    return TicketDetail(**_summary(state, t).model_dump(), customer_name=state.customers[t.customer_id].name,
                        assignee_name=assignee.name if assignee else None,
                        messages=[m for m in state.messages.values() if m.ticket_id == ticket_id])


@tool(write=True, sensitive=("customer_id", "order_id"))
def create_support_ticket(
    state: SupportState,
    customer_id: CustomerId,
    subject: text("title", "Short summary of the problem.", listed="subject", min_length=3, max_length=120),
    category: Annotated[TicketCategory, Field(description="What the problem is about.")],
    message: text("body", "The customer's description of the problem.", min_length=1, max_length=2000),
    priority: Annotated[TicketPriority, Field(description="Urgency; sets the SLA (urgent 4h, high 8h, normal 24h, low 72h).")] = "normal",
    order_id: Annotated[OrderId | None, Field(description="The customer's order this is about, e.g. 'RTO-0012'.", json_schema_extra={EXAMPLE: "RTO-0012"})] = None,
) -> TicketDetail:
    """Open a support ticket for a customer with their first message; the SLA clock starts now."""
    _customer(state, customer_id)
    if order_id is not None:
        order = find(state.orders, order_id, hint="use list_support_customer_orders")
        require(order.customer_id == customer_id, f"order '{order_id}' belongs to another customer; orders of "
                f"'{customer_id}': {known(o.order_id for o in state.orders.values() if o.customer_id == customer_id)}",
                rejected=(order_id, customer_id),
                choices=shown(o.order_id for o in state.orders.values() if o.customer_id == customer_id))
        dup = next((t for t in state.tickets.values() if t.order_id == order_id and t.category == category
                    and t.status in ACTIVE), None)
        require(dup is None, f"ticket '{dup.ticket_id if dup else ''}' is already active for order '{order_id}' "
                f"({category}); reply there instead of opening a duplicate",
                reason='conflict', rejected=(dup.ticket_id if dup else '', order_id))
    t = Ticket(ticket_id=state.new_id("TKT"), customer_id=customer_id, order_id=order_id, subject=subject.strip(),
               category=category, priority=priority, status="open", created_at=state.now, updated_at=state.now,
               sla_due_at=sla_due(state.now, priority))
    state.tickets[t.ticket_id] = t
    _post(state, t, "customer", customer_id, message.strip())
    return get_support_ticket(state, t.ticket_id)


@tool(write=True, sensitive=("ticket_id", "agent_id", "canned_reply_id"))
def reply_to_support_ticket(
    state: SupportState,
    ticket_id: TicketId,
    agent_id: entity_id("agent", "The replying agent: the ticket's assignee, e.g. 'AGT-0003'.", example="AGT-0003"),
    body: text("body", "Reply text; omit when using a canned reply.", listed="body", optional=True, min_length=1, max_length=2000) = None,
    canned_reply_id: Annotated[CannedReplyId | None, Field(description="Send this canned reply instead of body, e.g. 'MAC-0002'.", json_schema_extra={EXAMPLE: "MAC-0002"})] = None,
    awaiting_customer: Annotated[bool, Field(description="Set the ticket to pending_customer (waiting for the customer's answer).")] = True,
) -> TicketDetail:
    """Reply to the customer on a ticket as its assigned agent, with free text or a canned reply (placeholders filled in)."""
    t = _ticket(state, ticket_id)
    agent = _agent(state, agent_id)
    require((body is None) != (canned_reply_id is None), "give exactly one of body or canned_reply_id",
            reason='missing', params=('body', 'canned_reply_id'))
    require(t.status not in ("resolved", "closed"), f"ticket '{ticket_id}' is {t.status}; "
            + ("reopen it first with reopen_support_ticket" if t.status == "resolved" else "open a new ticket"),
            rejected=(ticket_id, t.status))
    require(t.assignee_id is not None, f"ticket '{ticket_id}' is unassigned; assign it with assign_support_ticket first",
            rejected=(ticket_id,))
    require(t.assignee_id == agent_id, f"ticket '{ticket_id}' is assigned to '{t.assignee_id}', not '{agent_id}' "
            "(parameter 'agent_id'); only the assignee replies",
            reason='state', params=('agent_id',), rejected=(ticket_id, t.assignee_id, agent_id))
    if canned_reply_id is not None:
        macro = find(state.macros, canned_reply_id)
        require(macro.category in (t.category, "general"), f"canned reply '{canned_reply_id}' is for "
                f"{macro.category} tickets; ticket '{ticket_id}' is {t.category}. Suitable: "
                + known(m.macro_id for m in state.macros.values() if m.category in (t.category, "general")),
                rejected=(canned_reply_id, macro.category, ticket_id, t.category),
                choices=shown(m.macro_id for m in state.macros.values() if m.category in (t.category, 'general')))
        body = macro.body.format(customer_name=state.customers[t.customer_id].name.split()[0],
                                 ticket_id=ticket_id, agent_name=agent.name)
    assert body is not None
    state.advance()
    _post(state, t, "agent", agent_id, body.strip())
    if awaiting_customer:
        t.status = "pending_customer"
    return get_support_ticket(state, ticket_id)


@tool(write=True, sensitive=("ticket_id", "agent_id"))
def assign_support_ticket(state: SupportState, ticket_id: TicketId, agent_id: AgentId) -> TicketDetail:
    """Assign (or reassign) an active ticket to an on-shift agent who has the skill and spare capacity."""
    t = _ticket(state, ticket_id)
    agent = _agent(state, agent_id)
    require(t.status in ACTIVE, f"ticket '{ticket_id}' is {t.status}; only active tickets can be assigned",
            reason='state', rejected=(ticket_id, t.status))
    require(t.assignee_id != agent_id, f"ticket '{ticket_id}' is already assigned to '{agent_id}'",
            reason='conflict', rejected=(ticket_id, agent_id))
    _check_assignable(state, t, agent, "agent_id", t.status == "escalated")
    t.assignee_id = agent_id
    _post(state, t, "system", "system", f"assigned to {agent.name} ({agent_id})")
    return get_support_ticket(state, ticket_id)


@tool(write=True, sensitive=("ticket_id", "to_agent_id"))
def escalate_support_ticket(
    state: SupportState,
    ticket_id: TicketId,
    reason: text("reason", "Why the ticket needs escalation.", listed="reason", min_length=3, max_length=300),
    to_agent_id: Annotated[AgentId | None, Field(description="Tier2 agent to hand it to; omit to pick one with skill and capacity.")] = None,
) -> TicketDetail:
    """Escalate an active ticket: priority goes up one level, the SLA restarts and a tier2 agent takes it over."""
    t = _ticket(state, ticket_id)
    require(t.status in ("open", "pending_customer"), f"ticket '{ticket_id}' is {t.status}; only open or "
            "pending_customer tickets can be escalated" + (" (use assign_support_ticket to move it between tier2 "
                                                           "agents)" if t.status == "escalated" else ""),
            reason='state', rejected=(ticket_id, t.status),
            wanted=('open', 'pending_customer', 'escalated'))
    if to_agent_id is not None:
        agent = _agent(state, to_agent_id, "to_agent_id")
        _check_assignable(state, t, agent, "to_agent_id", escalated=True)
    else:
        pool = [a for a in state.agents.values() if a.team == "tier2" and a.on_shift
                and t.category in a.skills and _load(state, a.agent_id) < a.max_open_tickets]
        require(bool(pool), "no tier2 agent is on shift with spare capacity; try again later")
        agent = min(pool, key=lambda a: (_load(state, a.agent_id), a.agent_id))
    state.advance()
    t.status = "escalated"
    t.priority = PRIORITIES[min(PRIORITIES.index(t.priority) + 1, len(PRIORITIES) - 1)]
    t.escalation_level += 1
    t.assignee_id = agent.agent_id
    t.sla_due_at = sla_due(state.now, t.priority)
    _post(state, t, "system", "system", f"escalated to {agent.name} ({agent.agent_id}): {reason.strip()}")
    return get_support_ticket(state, ticket_id)


@tool(write=True, sensitive=("ticket_id",))
def resolve_support_ticket(
    state: SupportState,
    ticket_id: TicketId,
    resolution: text("body", "What was done to fix the problem.", listed="resolution", min_length=3, max_length=500),
) -> TicketDetail:
    """Mark a ticket resolved with a resolution note; an agent must have replied to the customer first."""
    t = _ticket(state, ticket_id)
    require(t.status in ACTIVE, f"ticket '{ticket_id}' is already {t.status}",
            reason='conflict', rejected=(ticket_id, t.status))
    require(any(m.ticket_id == ticket_id and m.author_kind == "agent" for m in state.messages.values()),
            f"ticket '{ticket_id}' has no agent reply yet; reply to the customer with reply_to_support_ticket before resolving",
            rejected=(ticket_id,))
    state.advance()
    t.status, t.resolved_at, t.resolution = "resolved", state.now, resolution.strip()
    _post(state, t, "system", "system", f"resolved: {t.resolution}")
    return get_support_ticket(state, ticket_id)


@tool(write=True, sensitive=("ticket_id",))
def reopen_support_ticket(
    state: SupportState,
    ticket_id: TicketId,
    reason: text("reason", "Why the problem is not solved.", listed="reason", min_length=3, max_length=500),
) -> TicketDetail:
    """Reopen a resolved ticket within 14 days of its resolution; closed tickets stay closed."""
    t = _ticket(state, ticket_id)
    require(t.status != "closed", f"ticket '{ticket_id}' is closed and cannot be reopened; open a new ticket "
            "with create_support_ticket", reason='state', rejected=(ticket_id,))
    require(t.status == "resolved", f"ticket '{ticket_id}' is {t.status}, not resolved; nothing to reopen",
            rejected=(ticket_id, t.status))
    assert t.resolved_at is not None
    limit = shift(t.resolved_at, days=REOPEN_WINDOW_DAYS)
    require(state.now <= limit, f"ticket '{ticket_id}' was resolved at {t.resolved_at}; it could be reopened only "
            f"until {limit} ({REOPEN_WINDOW_DAYS} days); open a new ticket",
            reason='state', rejected=(ticket_id, t.resolved_at, limit))
    t.status, t.resolved_at, t.resolution = "open", None, None
    t.reopened_count += 1
    t.sla_due_at = sla_due(state.now, t.priority)
    _post(state, t, "customer", t.customer_id, reason.strip())
    return get_support_ticket(state, ticket_id)


@tool(write=True, sensitive=("ticket_id", "score"))
def rate_support_ticket(
    state: SupportState,
    ticket_id: TicketId,
    score: Annotated[int, Field(json_schema_extra=measure("rating"), ge=1, le=5, description="Customer satisfaction, 1 (bad) to 5 (great).")],
    comment: text("body", "Optional feedback text.", max_length=500) = "",
) -> TicketSummary:
    """Record the customer's satisfaction rating for a resolved or closed ticket (once per ticket)."""
    t = _ticket(state, ticket_id)
    require(t.status in ("resolved", "closed"), f"ticket '{ticket_id}' is {t.status}; it can be rated only "
            "after it is resolved",
            reason='state', rejected=(ticket_id, t.status), wanted=('resolved',))
    require(t.satisfaction is None, f"ticket '{ticket_id}' was already rated {t.satisfaction}/5",
            reason='conflict', rejected=(ticket_id, t.satisfaction))
    t.satisfaction, t.satisfaction_comment = score, comment.strip()
    return _summary(state, t)


@tool()
def list_support_agents(
    state: SupportState,
    team: Annotated[AgentTeam | None, Field(description="Only agents of this team.")] = None,
    skill: Annotated[TicketCategory | None, Field(description="Only agents who can handle this ticket category.")] = None,
    on_shift_only: Annotated[bool, Field(description="Only agents on shift now.")] = False,
    with_capacity_only: Annotated[bool, Field(description="Only agents below their ticket capacity.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AgentList:
    """List support agents with team, skills, shift and current ticket load, to choose an assignee, a page at a time."""
    views = [AgentView(**a.model_dump(), open_tickets=(n := _load(state, a.agent_id)),
                       capacity_left=max(a.max_open_tickets - n, 0)) for a in state.agents.values()]
    found = [v for v in views if (team is None or v.team == team) and (skill is None or skill in v.skills)
             and (v.on_shift or not on_shift_only) and (v.capacity_left > 0 or not with_capacity_only)]
    return AgentList.of(found, offset, limit)


@tool()
def list_canned_replies(
    state: SupportState,
    category: Annotated[MacroCategory | None, Field(description="Only replies for this ticket category ('general' fits any).")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CannedReplyList:
    """List the knowledge-base canned replies (macros) agents can send with reply_to_support_ticket, a page at a time."""
    found = [m for m in state.macros.values() if category is None or m.category in (category, "general")]
    return CannedReplyList.of(found, offset, limit)


@tool(write=True, sensitive=("order_id", "sku", "quantity", "ticket_id"))
def request_product_return(
    state: SupportState,
    order_id: entity_id("order", "Delivered order the item came from, e.g. 'RTO-0012'.", example="RTO-0012"),
    sku: entity_id("product", "SKU of the item to return, e.g. 'SKU-1003'.", example="SKU-1003"),
    reason: Annotated[ReturnReason, Field(description="Why the customer returns it.")],
    quantity: Annotated[int, Field(ge=1, le=20, description="Units to return.")] = 1,
    ticket_id: Annotated[TicketId | None, Field(description="Support ticket this return belongs to.")] = None,
) -> ReturnStatusView:
    """Request a return authorization (RMA) for units of an order item, within 30 days of delivery."""
    order = find(state.orders, order_id, hint="use list_support_customer_orders")
    line = _line(order, sku)
    require(order.delivered_on is not None, f"order '{order_id}' is {order.status} and not delivered yet; "
            "returns open after delivery", rejected=(order_id, order.status))
    assert order.delivered_on is not None
    ends = shift(order.delivered_on, days=RETURN_WINDOW_DAYS)
    require(state.now[:10] <= ends, f"the return window of order '{order_id}' closed on {ends} "
            f"({RETURN_WINDOW_DAYS} days after delivery on {order.delivered_on})",
            rejected=(order_id, ends, order.delivered_on))
    left = line.quantity - line.returned_quantity
    require(left > 0, f"all {line.quantity} unit(s) of '{line.name}' ({sku}) in order '{order_id}' are already returned",
            reason='conflict', rejected=(line.quantity, line.name, order_id))
    require(quantity <= left, f"only {left} of {line.quantity} unit(s) of '{line.name}' ({sku}) can still be "
            f"returned; requested {quantity}",
            reason='limit', rejected=(left, line.quantity, line.name, quantity))
    if ticket_id is not None:
        t = _ticket(state, ticket_id)
        require(t.customer_id == order.customer_id, f"ticket '{ticket_id}' belongs to another customer than order '{order_id}'",
                rejected=(ticket_id, order_id))
    state.advance()
    rma = ReturnAuthorization(rma_id=state.new_id("RMA"), order_id=order_id, customer_id=order.customer_id, sku=sku,
                              quantity=quantity, reason=reason, status="requested", requested_at=state.now,
                              ticket_id=ticket_id)
    state.returns[rma.rma_id] = rma
    line.returned_quantity += quantity
    if ticket_id is not None:
        _post(state, state.tickets[ticket_id], "system", "system", f"return {rma.rma_id} requested: {quantity} x {sku}")
    return get_product_return_status(state, rma.rma_id)


@tool(sensitive=("rma_id",))
def get_product_return_status(state: SupportState, rma_id: RmaId) -> ReturnStatusView:
    """Get a return authorization: item, quantity, status, shipping label and refund."""
    rma = _rma(state, rma_id)
    line = _line(state.orders[rma.order_id], rma.sku)
    max_refund = _refundable(state, rma) if rma.status in ("approved", "received") else 0.0
    return ReturnStatusView(**rma.model_dump(), item_name=line.name, unit_price=line.unit_price, max_refund=max_refund)


@tool(write=True, sensitive=("rma_id",))
def approve_product_return(state: SupportState, rma_id: RmaId) -> ReturnStatusView:
    """Approve a requested return and issue its prepaid shipping label."""
    rma = _rma(state, rma_id)
    require(rma.status == "requested", f"return '{rma_id}' is {rma.status}; only requested returns can be approved",
            reason='state', rejected=(rma_id, rma.status), wanted=('requested', 'approved'))
    state.advance()
    rma.status, rma.approved_at, rma.return_label = "approved", state.now, f"LBL-{rma_id[4:]}"
    return get_product_return_status(state, rma_id)


@tool(write=True, sensitive=("rma_id", "amount"))
def refund_product_return(
    state: SupportState,
    rma_id: RmaId,
    amount: Annotated[float | None, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000, description="Refund amount; omit to refund what was paid for the returned units.")] = None,
) -> ReturnStatusView:
    """Refund an approved or received return to the customer; never more than was paid for the returned units."""
    rma = _rma(state, rma_id)
    require(rma.status in ("approved", "received"), f"return '{rma_id}' is {rma.status}; only approved or "
            "received returns can be refunded" + (" (approve it first with approve_product_return)"
                                                  if rma.status == "requested" else ""),
            reason='state', rejected=(rma_id, rma.status),
            wanted=('approved', 'received', 'refunded'))
    most = _refundable(state, rma)
    amount = most if amount is None else round(amount, 2)
    require(amount <= most + 1e-9, f"refund {amount:.2f} is greater than what was paid: at most {most:.2f} for "
            f"{rma.quantity} unit(s) of {rma.sku}",
            reason='limit', rejected=(amount, most, rma.quantity, rma.sku))
    state.advance()
    rma.status, rma.refund_amount, rma.refunded_at = "refunded", round(rma.refund_amount + amount, 2), state.now
    order = state.orders[rma.order_id]
    order.refunded = round(order.refunded + amount, 2)
    if rma.ticket_id in state.tickets:
        _post(state, state.tickets[rma.ticket_id], "system", "system", f"refund of {amount:.2f} issued for {rma_id}")
    return get_product_return_status(state, rma_id)
