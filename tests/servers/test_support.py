"""Support desk server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub, state_hash
from prove_servers.support import SERVER
from prove_servers.support.state import (
    ACTIVE,
    Agent,
    CannedReply,
    OrderItem,
    RetailOrder,
    ReturnAuthorization,
    SupportCustomer,
    SupportState,
    Ticket,
    TicketMessage,
    initial_state,
    sla_due,
)


def tiny() -> SupportState:
    s = SupportState(now="2026-04-20T10:00")
    for cid, name, ph in (("SCU-0001", "Ada Chen", "+1-555-100-1001"), ("SCU-0002", "Bo Silva", "+1-555-200-2002")):
        s.customers[cid] = SupportCustomer(customer_id=cid, name=name, email=f"{name.split()[0].lower()}@x.com",
                                           phone=ph, tier="standard")
    for oid, cid, status, placed, delivered, items in (
        ("RTO-0001", "SCU-0001", "delivered", "2026-04-01", "2026-04-05",
         [("SKU-1001", "Wireless Earbuds", 2, 80.0, 1), ("SKU-1004", "USB-C Charger 65W", 1, 30.0, 1)]),
        ("RTO-0002", "SCU-0001", "delivered", "2026-02-25", "2026-03-01", [("SKU-1008", "Yoga Mat", 1, 25.0, 0)]),
        ("RTO-0003", "SCU-0002", "shipped", "2026-04-18", None, [("SKU-1003", "Smartwatch", 1, 199.0, 0)]),
        ("RTO-0004", "SCU-0002", "delivered", "2026-04-08", "2026-04-10", [("SKU-1005", "Electric Kettle", 1, 45.0, 1)]),
    ):
        lines = [OrderItem(sku=k, name=n, quantity=q, unit_price=p, returned_quantity=r) for k, n, q, p, r in items]
        s.orders[oid] = RetailOrder(order_id=oid, customer_id=cid, items=lines, status=status, placed_on=placed,
                                    delivered_on=delivered, total_paid=sum(ln.unit_price * ln.quantity for ln in lines),
                                    refunded=30.0 if oid == "RTO-0001" else 0.0)
    for aid, name, team, skills, on_shift, cap in (
        ("AGT-0001", "Finn Front", "frontline", ["account", "other", "shipping"], True, 2),
        ("AGT-0002", "Bea Bills", "billing", ["account", "billing"], False, 5),
        ("AGT-0003", "Lou Logistics", "logistics", ["product_defect", "shipping"], True, 1),
        ("AGT-0004", "Tia Two", "tier2", ["account", "billing", "other", "product_defect", "shipping"], True, 2),
    ):
        s.agents[aid] = Agent(agent_id=aid, name=name, email=f"{aid.lower()}@support.com", team=team, skills=skills,
                              on_shift=on_shift, max_open_tickets=cap)
    for tid, cid, oid, subject, cat, prio, status, who, created, extra in (
        ("TKT-0001", "SCU-0001", "RTO-0001", "Package late", "shipping", "normal", "open", None, "2026-04-20T08:00", {}),
        ("TKT-0002", "SCU-0002", "RTO-0004", "Kettle leaks", "product_defect", "high", "pending_customer", "AGT-0003",
         "2026-04-18T09:00", {}),
        ("TKT-0003", "SCU-0001", None, "Cannot log in", "account", "low", "open", "AGT-0001", "2026-04-19T10:00", {}),
        ("TKT-0004", "SCU-0002", None, "Warranty question", "other", "normal", "resolved", "AGT-0001",
         "2026-04-14T10:00", {"resolved_at": "2026-04-15T10:00", "resolution": "Explained the warranty"}),
        ("TKT-0005", "SCU-0001", None, "Change my email", "account", "normal", "resolved", "AGT-0001",
         "2026-03-29T10:00", {"resolved_at": "2026-03-30T10:00", "resolution": "Changed", "satisfaction": 4}),
        ("TKT-0006", "SCU-0002", "RTO-0003", "Where is my watch", "shipping", "normal", "closed", "AGT-0001",
         "2026-04-01T10:00", {"resolved_at": "2026-04-02T10:00", "closed_at": "2026-04-05T10:00"}),
    ):
        s.tickets[tid] = Ticket(ticket_id=tid, customer_id=cid, order_id=oid, subject=subject, category=cat,
                                priority=prio, status=status, assignee_id=who, created_at=created, updated_at=created,
                                sla_due_at=sla_due(created, prio), **extra)
    for mid, tid, kind, author, body, at in (
        ("MSG-0001", "TKT-0001", "customer", "SCU-0001", "My package is late.", "2026-04-20T08:00"),
        ("MSG-0002", "TKT-0002", "customer", "SCU-0002", "The kettle leaks.", "2026-04-18T09:00"),
        ("MSG-0003", "TKT-0002", "agent", "AGT-0003", "Could you send a photo?", "2026-04-18T11:00"),
        ("MSG-0004", "TKT-0003", "customer", "SCU-0001", "I cannot log in.", "2026-04-19T10:00"),
        ("MSG-0005", "TKT-0004", "agent", "AGT-0001", "One year warranty.", "2026-04-15T09:00"),
        ("MSG-0006", "TKT-0005", "agent", "AGT-0001", "Done.", "2026-03-30T09:00"),
    ):
        s.messages[mid] = TicketMessage(message_id=mid, ticket_id=tid, author_kind=kind, author_id=author, body=body,
                                        created_at=at)
    for mid, title, cat in (("MAC-0001", "Refund timeline", "billing"), ("MAC-0002", "Carrier check", "shipping"),
                            ("MAC-0003", "Need details", "general")):
        s.macros[mid] = CannedReply(macro_id=mid, title=title, category=cat,
                                    body="Hi {customer_name}, about {ticket_id}: we are on it. - {agent_name}")
    for rid, oid, cid, sku, status, extra in (
        ("RMA-0001", "RTO-0001", "SCU-0001", "SKU-1004", "refunded",
         {"approved_at": "2026-04-07T10:00", "refund_amount": 30.0, "refunded_at": "2026-04-09T10:00"}),
        ("RMA-0002", "RTO-0004", "SCU-0002", "SKU-1005", "requested", {}),
        ("RMA-0003", "RTO-0001", "SCU-0001", "SKU-1001", "approved", {"approved_at": "2026-04-16T10:00",
                                                                      "return_label": "LBL-0003"}),
    ):
        s.returns[rid] = ReturnAuthorization(rma_id=rid, order_id=oid, customer_id=cid, sku=sku, quantity=1,
                                             reason="defective", status=status, requested_at="2026-04-15T10:00", **extra)
    return s


hub = hub_fixture(SERVER, tiny)


def test_seeded_world_is_deterministic_and_consistent() -> None:
    a = initial_state(5)
    assert state_hash(a) == state_hash(initial_state(5)) and state_hash(a) != state_hash(initial_state(6))
    assert len(a.tickets) >= 40 and len(a.orders) >= 50 and len(a.returns) >= 10
    for t in a.tickets.values():
        assert t.customer_id in a.customers and (t.order_id is None or a.orders[t.order_id].customer_id == t.customer_id)
        if t.status in ("resolved", "closed"):
            assert t.resolved_at and any(m.ticket_id == t.ticket_id and m.author_kind == "agent"
                                         for m in a.messages.values())
    for agent in a.agents.values():
        load = sum(1 for t in a.tickets.values() if t.assignee_id == agent.agent_id and t.status in ACTIVE)
        assert load <= agent.max_open_tickets
    for r in a.returns.values():
        line = next(ln for ln in a.orders[r.order_id].items if ln.sku == r.sku)
        assert line.returned_quantity <= line.quantity
    assert a.new_id("TKT") == f"TKT-{len(a.tickets) + 1:04d}"


def test_customers_and_orders(hub: Hub) -> None:
    assert ok(hub, "search_support_customers", query="bo")["customers"][0]["customer_id"] == "SCU-0002"
    assert ok(hub, "search_support_customers", query="100-1001")["total"] == 1
    assert ok(hub, "search_support_customers", limit=1)["next_offset"] == 1
    res = ok(hub, "list_support_customer_orders", customer_id="SCU-0001")
    assert [o["order_id"] for o in res["orders"]] == ["RTO-0002", "RTO-0001"]
    assert [o["returnable_now"] for o in res["orders"]] == [False, True]
    assert res["orders"][1]["return_window_ends"] == "2026-05-05"
    assert ok(hub, "list_support_customer_orders", customer_id="SCU-0001", returnable_only=True)["total"] == 1
    assert ok(hub, "list_support_customer_orders", customer_id="SCU-0002")["orders"][1]["return_window_ends"] is None
    fails(hub, "list_support_customer_orders", "customer 'SCU-9' not found", "search_support_customers",
          customer_id="SCU-9")


def test_ticket_search_and_details(hub: Hub) -> None:
    assert [t["ticket_id"] for t in ok(hub, "search_support_tickets")["tickets"][:2]] == ["TKT-0001", "TKT-0003"]
    assert ok(hub, "search_support_tickets", status="resolved")["total"] == 2
    assert ok(hub, "search_support_tickets", category="shipping", customer_id="SCU-0002")["total"] == 1
    assert [t["ticket_id"] for t in ok(hub, "search_support_tickets", unassigned_only=True)["tickets"]] == ["TKT-0001"]
    overdue = ok(hub, "search_support_tickets", overdue_only=True)["tickets"]
    assert [t["ticket_id"] for t in overdue] == ["TKT-0002"] and overdue[0]["sla_breached"]
    assert ok(hub, "search_support_tickets", sort="priority")["tickets"][0]["priority"] == "high"
    assert ok(hub, "search_support_tickets", sort="sla_due")["tickets"][0]["ticket_id"] == "TKT-0005"
    assert ok(hub, "search_support_tickets", assignee_id="AGT-0003")["total"] == 1
    assert ok(hub, "search_support_tickets", query="kettle", priority="high")["total"] == 1
    page = ok(hub, "search_support_tickets", limit=4)
    assert page["next_offset"] == 4 and page["total"] == 6
    fails(hub, "search_support_tickets", "agent 'AGT-9' not found", "parameter 'assignee_id'", assignee_id="AGT-9")
    fails(hub, "search_support_tickets", "status", "'escalated'", status="waiting")
    t = ok(hub, "get_support_ticket", ticket_id="TKT-0002")
    assert t["customer_name"] == "Bo Silva" and t["assignee_name"] == "Lou Logistics" and len(t["messages"]) == 2
    assert t["sla_due_at"] == "2026-04-18T17:00" and t["sla_breached"]
    fails(hub, "get_support_ticket", "ticket 'TKT-99' not found", "search_support_tickets", ticket_id="TKT-99")


def test_create_ticket(hub: Hub) -> None:
    t = ok(hub, "create_support_ticket", customer_id="SCU-0001", subject="Charger broke", category="product_defect",
           message="It stopped charging.", priority="urgent", order_id="RTO-0001")
    assert t["ticket_id"] == "TKT-0007" and t["status"] == "open" and t["sla_due_at"] == "2026-04-20T14:00"
    assert t["messages"][0]["body"] == "It stopped charging." and t["messages"][0]["message_id"] == "MSG-0007"
    assert ok(hub, "search_support_tickets", customer_id="SCU-0001", status="open")["total"] == 3
    fails(hub, "create_support_ticket", "'TKT-0001' is already active for order 'RTO-0001'", customer_id="SCU-0001",
          subject="Still late", category="shipping", message="?", order_id="RTO-0001")
    fails(hub, "create_support_ticket", "belongs to another customer", "RTO-0001, RTO-0002", customer_id="SCU-0001",
          subject="Watch", category="shipping", message="?", order_id="RTO-0003")
    fails(hub, "create_support_ticket", "category", "'product_defect'", customer_id="SCU-0001", subject="Hmm",
          category="returns", message="?")


def test_assign_and_agents(hub: Hub) -> None:
    agents = {a["agent_id"]: a for a in ok(hub, "list_support_agents")["agents"]}
    assert agents["AGT-0001"]["open_tickets"] == 1 and agents["AGT-0003"]["capacity_left"] == 0
    assert [a["agent_id"] for a in ok(hub, "list_support_agents", skill="shipping", on_shift_only=True,
                                      with_capacity_only=True)["agents"]] == ["AGT-0001", "AGT-0004"]
    assert ok(hub, "list_support_agents", team="billing")["agents"][0]["on_shift"] is False
    fails(hub, "assign_support_ticket", "is off shift", "on_shift_only", ticket_id="TKT-0003", agent_id="AGT-0002")
    fails(hub, "assign_support_ticket", "lacks the 'product_defect' skill", ticket_id="TKT-0002", agent_id="AGT-0001")
    fails(hub, "assign_support_ticket", "at capacity: 1 of 1", ticket_id="TKT-0001", agent_id="AGT-0003")
    fails(hub, "assign_support_ticket", "is resolved; only active", ticket_id="TKT-0004", agent_id="AGT-0001")
    fails(hub, "assign_support_ticket", "agent 'AGT-7' not found", "AGT-0001", ticket_id="TKT-0001", agent_id="AGT-7")
    t = ok(hub, "assign_support_ticket", ticket_id="TKT-0001", agent_id="AGT-0001")
    assert t["assignee_name"] == "Finn Front" and t["messages"][-1]["author_kind"] == "system"
    fails(hub, "assign_support_ticket", "already assigned to 'AGT-0001'", ticket_id="TKT-0001", agent_id="AGT-0001")
    assert ok(hub, "list_support_agents", with_capacity_only=True, team="frontline")["total"] == 0
    new = ok(hub, "create_support_ticket", customer_id="SCU-0002", subject="Login", category="account", message="?")
    fails(hub, "assign_support_ticket", "at capacity: 2 of 2", ticket_id=new["ticket_id"], agent_id="AGT-0001")


def test_agents_and_canned_replies_page(hub: Hub) -> None:
    first = ok(hub, "list_support_agents", limit=3)
    assert first["total"] == 4 and first["next_offset"] == 3
    second = ok(hub, "list_support_agents", offset=first["next_offset"], limit=3)
    assert second["total"] == 4 and second["next_offset"] is None
    assert [a["agent_id"] for a in first["agents"] + second["agents"]] == ["AGT-0001", "AGT-0002", "AGT-0003", "AGT-0004"]
    replies = ok(hub, "list_canned_replies", limit=2)
    assert replies["total"] == 3 and replies["next_offset"] == 2
    assert [m["macro_id"] for m in ok(hub, "list_canned_replies", offset=2)["replies"]] == ["MAC-0003"]


def test_reply_and_canned_replies(hub: Hub) -> None:
    assert [m["macro_id"] for m in ok(hub, "list_canned_replies", category="shipping")["replies"]] == [
        "MAC-0002", "MAC-0003"]
    assert ok(hub, "list_canned_replies")["total"] == 3
    fails(hub, "reply_to_support_ticket", "unassigned", ticket_id="TKT-0001", agent_id="AGT-0001", body="Hi")
    fails(hub, "reply_to_support_ticket", "assigned to 'AGT-0001', not 'AGT-0004'", ticket_id="TKT-0003",
          agent_id="AGT-0004", body="Hi")
    fails(hub, "reply_to_support_ticket", "exactly one of body or canned_reply_id", ticket_id="TKT-0003",
          agent_id="AGT-0001", body="Hi", canned_reply_id="MAC-0003")
    fails(hub, "reply_to_support_ticket", "exactly one of body", ticket_id="TKT-0003", agent_id="AGT-0001")
    fails(hub, "reply_to_support_ticket", "is resolved", "reopen_support_ticket", ticket_id="TKT-0004",
          agent_id="AGT-0001", body="Hi")
    fails(hub, "reply_to_support_ticket", "is closed", "new ticket", ticket_id="TKT-0006", agent_id="AGT-0001", body="Hi")
    fails(hub, "reply_to_support_ticket", "is for billing tickets", "MAC-0003", ticket_id="TKT-0003",
          agent_id="AGT-0001", canned_reply_id="MAC-0001")
    fails(hub, "reply_to_support_ticket", "canned reply 'MAC-9' not found", ticket_id="TKT-0003",
          agent_id="AGT-0001", canned_reply_id="MAC-9")
    t = ok(hub, "reply_to_support_ticket", ticket_id="TKT-0003", agent_id="AGT-0001", canned_reply_id="MAC-0003")
    assert t["messages"][-1]["body"] == "Hi Ada, about TKT-0003: we are on it. - Finn Front"
    assert t["status"] == "pending_customer" and t["updated_at"] == "2026-04-20T10:01"
    t = ok(hub, "reply_to_support_ticket", ticket_id="TKT-0002", agent_id="AGT-0003", body="Photo received.",
           awaiting_customer=False)
    assert t["status"] == "pending_customer" and t["messages"][-1]["author_id"] == "AGT-0003"


def test_resolve_reopen_and_rate(hub: Hub) -> None:
    fails(hub, "resolve_support_ticket", "no agent reply yet", ticket_id="TKT-0003", resolution="Reset password")
    fails(hub, "resolve_support_ticket", "already resolved", ticket_id="TKT-0004", resolution="Again")
    fails(hub, "rate_support_ticket", "is open; it can be rated only after it is resolved", ticket_id="TKT-0003",
          score=5)
    ok(hub, "reply_to_support_ticket", ticket_id="TKT-0003", agent_id="AGT-0001", body="Reset sent.")
    t = ok(hub, "resolve_support_ticket", ticket_id="TKT-0003", resolution="Reset password")
    assert t["status"] == "resolved" and t["resolved_at"] == "2026-04-20T10:02"
    assert ok(hub, "list_support_agents", team="frontline")["agents"][0]["open_tickets"] == 0
    got = ok(hub, "rate_support_ticket", ticket_id="TKT-0003", score=5, comment="Fast")
    assert got["satisfaction"] == 5
    assert ok(hub, "get_support_ticket", ticket_id="TKT-0003")["satisfaction_comment"] == "Fast"
    fails(hub, "rate_support_ticket", "already rated 4/5", ticket_id="TKT-0005", score=1)
    fails(hub, "rate_support_ticket", "score", "less than or equal to 5", ticket_id="TKT-0004", score=9)
    assert ok(hub, "rate_support_ticket", ticket_id="TKT-0006", score=3)["satisfaction"] == 3  # closed is rateable
    fails(hub, "reopen_support_ticket", "closed and cannot be reopened", "create_support_ticket",
          ticket_id="TKT-0006", reason="Still missing")
    fails(hub, "reopen_support_ticket", "only until 2026-04-13T10:00", ticket_id="TKT-0005", reason="Broken again")
    fails(hub, "reopen_support_ticket", "is open, not resolved", ticket_id="TKT-0001", reason="Hmm")
    t = ok(hub, "reopen_support_ticket", ticket_id="TKT-0004", reason="The warranty claim was refused")
    assert t["status"] == "open" and t["reopened_count"] == 1 and t["resolution"] is None
    assert t["messages"][-1]["author_kind"] == "customer" and t["sla_due_at"] == "2026-04-21T10:02"
    assert ok(hub, "search_support_tickets", status="resolved")["total"] == 2  # TKT-0003 in, TKT-0004 out


def test_escalation(hub: Hub) -> None:
    fails(hub, "escalate_support_ticket", "needs a tier2 agent", "frontline", ticket_id="TKT-0001",
          reason="Angry customer", to_agent_id="AGT-0001")
    fails(hub, "escalate_support_ticket", "is resolved", ticket_id="TKT-0004", reason="Angry customer")
    t = ok(hub, "escalate_support_ticket", ticket_id="TKT-0002", reason="Second defect report")
    assert t["status"] == "escalated" and t["priority"] == "urgent" and t["assignee_id"] == "AGT-0004"
    assert t["escalation_level"] == 1 and t["sla_due_at"] == "2026-04-20T14:01" and not t["sla_breached"]
    fails(hub, "escalate_support_ticket", "is escalated", "assign_support_ticket", ticket_id="TKT-0002", reason="again")
    fails(hub, "assign_support_ticket", "needs a tier2 agent", ticket_id="TKT-0002", agent_id="AGT-0003")
    ok(hub, "escalate_support_ticket", ticket_id="TKT-0001", reason="VIP", to_agent_id="AGT-0004")
    fails(hub, "escalate_support_ticket", "no tier2 agent is on shift with spare capacity", ticket_id="TKT-0003",
          reason="Locked out for days")
    assert ok(hub, "search_support_tickets", status="escalated", assignee_id="AGT-0004")["total"] == 2


def test_returns_and_refunds(hub: Hub) -> None:
    fails(hub, "request_product_return", "not delivered yet", order_id="RTO-0003", sku="SKU-1003", reason="damaged")
    fails(hub, "request_product_return", "window of order 'RTO-0002' closed on 2026-03-31", order_id="RTO-0002",
          sku="SKU-1008", reason="defective")
    fails(hub, "request_product_return", "all 1 unit(s) of 'Electric Kettle'", "already returned", order_id="RTO-0004",
          sku="SKU-1005", reason="defective")
    fails(hub, "request_product_return", "only 1 of 2 unit(s)", order_id="RTO-0001", sku="SKU-1001",
          reason="defective", quantity=2)
    fails(hub, "request_product_return", "no item 'SKU-1005'", "SKU-1001 (Wireless Earbuds)", order_id="RTO-0001",
          sku="SKU-1005", reason="defective")
    fails(hub, "request_product_return", "belongs to another customer", order_id="RTO-0001", sku="SKU-1001",
          reason="defective", ticket_id="TKT-0002")
    fails(hub, "request_product_return", "reason", "'wrong_item'", order_id="RTO-0001", sku="SKU-1001", reason="meh")
    rma = ok(hub, "request_product_return", order_id="RTO-0001", sku="SKU-1001", reason="damaged", ticket_id="TKT-0001")
    assert rma["rma_id"] == "RMA-0004" and rma["status"] == "requested" and rma["max_refund"] == 0.0
    assert "return RMA-0004 requested" in ok(hub, "get_support_ticket", ticket_id="TKT-0001")["messages"][-1]["body"]
    order = ok(hub, "list_support_customer_orders", customer_id="SCU-0001")["orders"][1]
    assert order["items"][0]["returned_quantity"] == 2
    fails(hub, "refund_product_return", "is requested", "approve_product_return", rma_id="RMA-0004")
    got = ok(hub, "approve_product_return", rma_id="RMA-0004")
    assert got["status"] == "approved" and got["return_label"] == "LBL-0004" and got["max_refund"] == 80.0
    fails(hub, "approve_product_return", "is approved; only requested", rma_id="RMA-0004")
    fails(hub, "approve_product_return", "is refunded", rma_id="RMA-0001")
    fails(hub, "approve_product_return", "return 'RMA-77' not found", rma_id="RMA-77")
    fails(hub, "refund_product_return", "greater than what was paid: at most 80.00", rma_id="RMA-0003", amount=100.0)
    got = ok(hub, "refund_product_return", rma_id="RMA-0003", amount=50.0)
    assert got["status"] == "refunded" and got["refund_amount"] == 50.0
    assert ok(hub, "get_product_return_status", rma_id="RMA-0003")["refunded_at"] == "2026-04-20T10:03"
    fails(hub, "refund_product_return", "is refunded", rma_id="RMA-0003")
    got = ok(hub, "refund_product_return", rma_id="RMA-0004")
    assert got["refund_amount"] == 80.0
    assert "refund of 80.00" in ok(hub, "get_support_ticket", ticket_id="TKT-0001")["messages"][-1]["body"]
    assert ok(hub, "list_support_customer_orders", customer_id="SCU-0001")["orders"][1]["refunded"] == 160.0
    got = ok(hub, "get_product_return_status", rma_id="RMA-0002")
    assert got["item_name"] == "Electric Kettle" and got["unit_price"] == 45.0
