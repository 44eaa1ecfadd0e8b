"""CRM server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.crm import SERVER
from prove_servers.crm.state import (
    Account,
    Activity,
    Contact,
    CRMState,
    Lead,
    Opportunity,
    Product,
    Quote,
    QuoteLine,
    SalesRep,
)


def tiny() -> CRMState:
    s = CRMState(now="2026-05-12T10:00")
    for rid, name, role, manager, cap in (("REP-0001", "Mara Lind", "manager", None, 2),
                                          ("REP-0002", "Ravi Rao", "rep", "REP-0001", 2),
                                          ("REP-0003", "Sol Park", "rep", "REP-0001", 2),
                                          ("REP-0004", "Mo Adel", "manager", None, 2)):
        s.reps[rid] = SalesRep(rep_id=rid, name=name, email=f"{name.split()[0].lower()}@sales.x.com", role=role,
                               manager_id=manager, territory="Berlin", quarterly_quota=100000.0, max_accounts=cap)
    for aid, name, industry, city, owner in (("ACCT-0001", "Aurora Health", "healthcare", "Berlin", "REP-0002"),
                                             ("ACCT-0002", "Beacon Logistics", "logistics", "Lisbon", "REP-0002"),
                                             ("ACCT-0003", "Cascade Software", "software", "Berlin", "REP-0003")):
        s.accounts[aid] = Account(account_id=aid, name=name, industry=industry, segment="mid_market", employees=300,
                                  city=city, website=f"www.{name.split()[0].lower()}.com", owner_rep_id=owner,
                                  created_on="2025-01-10", last_activity_on="2026-05-01")
    for cid, aid, name, mail in (("CON-0001", "ACCT-0001", "Ana Ortiz", "ana@aurora.com"),
                                 ("CON-0002", "ACCT-0001", "Ben Berg", "ben@aurora.com"),
                                 ("CON-0003", "ACCT-0002", "Cy Chu", "cy@beacon.com")):
        s.contacts[cid] = Contact(contact_id=cid, account_id=aid, name=name, email=mail, phone="+1-555-100-2000",
                                  title="CTO", created_on="2025-01-10")
    lead = dict(phone="+1-555-300-4000", title="COO", source="web", owner_rep_id="REP-0003", created_on="2026-05-01")
    for lid, name, company, industry, mail, status, score in (
            ("LEAD-0001", "Dina Dahl", "Delta Energy", "energy", "dina@delta.com", "qualified", 80),
            ("LEAD-0002", "Eli Engel", "Ember Media", "media", "eli@ember.com", "new", 20),
            ("LEAD-0003", "Ana Ortiz", "Aurora Health", "healthcare", "ana@aurora.com", "qualified", 70),
            ("LEAD-0004", "Fay Fox", "Falcon Bank", "finance", "fay@falcon.com", "disqualified", 50),
            ("LEAD-0005", "Eve Eck", "Aurora Health", "healthcare", "eve@aurora.com", "qualified", 65)):
        s.leads[lid] = Lead(lead_id=lid, name=name, company=company, industry=industry, email=mail, status=status,
                            score=score, **lead)
    for oid, aid, stage, amount, owner, closed in (
            ("OPP-0001", "ACCT-0001", "prospecting", None, "REP-0002", None),
            ("OPP-0002", "ACCT-0001", "negotiation", 50000.0, "REP-0002", None),
            ("OPP-0003", "ACCT-0002", "closed_won", 20000.0, "REP-0002", "2026-04-20"),
            ("OPP-0004", "ACCT-0003", "closed_lost", 9000.0, "REP-0003", "2026-03-01"),
            ("OPP-0005", "ACCT-0003", "negotiation", None, "REP-0003", None)):
        prob = {"prospecting": 10, "negotiation": 75, "closed_won": 100, "closed_lost": 0}[stage]
        s.opportunities[oid] = Opportunity(
            opportunity_id=oid, account_id=aid, name=f"Deal {oid[-1]}", stage=stage, amount=amount,
            close_date=closed or "2026-07-01", probability=prob, owner_rep_id=owner, created_on="2026-02-01",
            closed_on=closed, loss_reason="price" if stage == "closed_lost" else None)
    s.activities["ACV-0001"] = Activity(activity_id="ACV-0001", kind="call", subject="Discovery call", notes="keen",
                                        date="2026-05-01", account_id="ACCT-0001", contact_id="CON-0001",
                                        opportunity_id="OPP-0002", rep_id="REP-0002")
    s.activities["ACV-0002"] = Activity(activity_id="ACV-0002", kind="email", subject="Case study", notes="",
                                        date="2026-04-02", account_id="ACCT-0002", rep_id="REP-0002")
    s.products["PRD-0001"] = Product(product_id="PRD-0001", name="Core Platform", family="platform",
                                     list_price=25000.0, active=True)
    s.quotes["QUO-0001"] = Quote(quote_id="QUO-0001", opportunity_id="OPP-0002", status="sent", total=50000.0,
                                 lines=[QuoteLine(product_id="PRD-0001", quantity=2, unit_price=25000.0,
                                                  discount_pct=0.0)], created_on="2026-04-10")
    return s


hub = hub_fixture(SERVER, tiny)


def test_accounts(hub: Hub) -> None:
    assert ok(hub, "search_crm_accounts", query="aurora")["accounts"][0]["account_id"] == "ACCT-0001"
    assert ok(hub, "search_crm_accounts", city="berlin", industry="software")["total"] == 1
    assert ok(hub, "search_crm_accounts", owner_rep_id="REP-0002")["total"] == 2
    page = ok(hub, "search_crm_accounts", limit=2)
    assert page["next_offset"] == 2 and ok(hub, "search_crm_accounts", offset=2)["next_offset"] is None
    fails(hub, "search_crm_accounts", "industry", "'healthcare'", industry="gaming")
    info = ok(hub, "get_crm_account", account_id="ACCT-0001")
    assert info["owner_name"] == "Ravi Rao" and len(info["contacts"]) == 2
    assert [o["opportunity_id"] for o in info["open_opportunities"]] == ["OPP-0001", "OPP-0002"]
    assert info["recent_activities"][0]["activity_id"] == "ACV-0001"
    fails(hub, "get_crm_account", "account 'ACCT-9' not found", "search_crm_accounts", account_id="ACCT-9")


def test_contacts(hub: Hub) -> None:
    assert ok(hub, "list_crm_contacts", account_id="ACCT-0001")["total"] == 2
    assert ok(hub, "list_crm_contacts", query="beacon.com")["contacts"][0]["contact_id"] == "CON-0003"
    fails(hub, "list_crm_contacts", "account 'ACCT-7' not found", account_id="ACCT-7")
    new = ok(hub, "create_crm_contact", account_id="ACCT-0001", name="Gus Grant", email="Gus@Aurora.com",
             phone="+44 (20) 7946-0958", title="CFO")
    assert new["contact_id"] == "CON-0004" and new["email"] == "gus@aurora.com"
    assert len(ok(hub, "get_crm_account", account_id="ACCT-0001")["contacts"]) == 3
    fails(hub, "create_crm_contact", "already has contact 'CON-0001'", "ana@aurora.com", account_id="ACCT-0001",
          name="Ana Two", email="ANA@aurora.com", phone="+1-555-100-2000")
    # The same email is fine in another account.
    ok(hub, "create_crm_contact", account_id="ACCT-0002", name="Ana Ortiz", email="ana@aurora.com",
       phone="+1-555-100-2000")
    for bad in ("ana@", "ana.aurora.com", "a b@x.com", "ana@x"):
        fails(hub, "create_crm_contact", f"email '{bad}' is not a valid", account_id="ACCT-0003", name="X Y",
              email=bad, phone="+1-555-100-2000")
    for bad in ("12ab5678", "12345", "+1-555-100-2000-1234567"):
        fails(hub, "create_crm_contact", f"phone '{bad}' is not valid", account_id="ACCT-0003", name="X Y",
              email="x@y.com", phone=bad)


def test_update_contact(hub: Hub) -> None:
    upd = ok(hub, "update_crm_contact", contact_id="CON-0002", email="ben.berg@aurora.com", title="VP Sales")
    assert upd["email"] == "ben.berg@aurora.com" and upd["title"] == "VP Sales" and upd["phone"] == "+1-555-100-2000"
    assert ok(hub, "list_crm_contacts", query="ben.berg")["total"] == 1
    fails(hub, "update_crm_contact", "already has contact 'CON-0001'", contact_id="CON-0002", email="ana@aurora.com")
    ok(hub, "update_crm_contact", contact_id="CON-0003", email="ana@aurora.com")
    fails(hub, "update_crm_contact", "account 'ACCT-0001' already has contact 'CON-0001'", contact_id="CON-0003",
          account_id="ACCT-0001")
    assert ok(hub, "update_crm_contact", contact_id="CON-0002", account_id="ACCT-0003")["account_id"] == "ACCT-0003"
    fails(hub, "update_crm_contact", "nothing to update", contact_id="CON-0002")
    fails(hub, "update_crm_contact", "phone '555' is not valid", contact_id="CON-0002", phone="555")
    fails(hub, "update_crm_contact", "contact 'CON-99' not found", "list_crm_contacts", contact_id="CON-99",
          title="x")


def test_leads_and_qualification(hub: Hub) -> None:
    leads = ok(hub, "list_leads", status="qualified")
    assert [ld["lead_id"] for ld in leads["leads"]] == ["LEAD-0001", "LEAD-0003", "LEAD-0005"]
    assert ok(hub, "list_leads", min_score=75)["total"] == 1
    assert ok(hub, "list_leads", query="aurora", limit=1)["next_offset"] == 1
    fails(hub, "list_leads", "source", "'referral'", source="tv")
    fails(hub, "qualify_lead", "scores 20, below the qualification threshold of 40", lead_id="LEAD-0002",
          outcome="qualified")
    fails(hub, "qualify_lead", "reason is required", lead_id="LEAD-0002", outcome="disqualified")
    out = ok(hub, "qualify_lead", lead_id="LEAD-0002", outcome="disqualified", reason="student project")
    assert out["status"] == "disqualified" and out["status_reason"] == "student project"
    fails(hub, "qualify_lead", "already disqualified", lead_id="LEAD-0002", outcome="disqualified", reason="x")
    assert ok(hub, "qualify_lead", lead_id="LEAD-0004", outcome="qualified")["status"] == "qualified"
    assert ok(hub, "list_leads", status="disqualified")["leads"][0]["lead_id"] == "LEAD-0002"
    fails(hub, "qualify_lead", "outcome", "'qualified'", lead_id="LEAD-0001", outcome="maybe")


def test_convert_lead(hub: Hub) -> None:
    fails(hub, "convert_lead", "LEAD-0002' is new", "qualify_lead first", lead_id="LEAD-0002",
          opportunity_name="Media deal", close_date="2026-08-01")
    ok(hub, "qualify_lead", lead_id="LEAD-0002", outcome="disqualified", reason="no fit")
    fails(hub, "convert_lead", "is disqualified; only qualified leads", lead_id="LEAD-0002",
          opportunity_name="Media deal", close_date="2026-08-01")
    fails(hub, "convert_lead", "close_date 2026-05-01 must be after today", lead_id="LEAD-0001",
          opportunity_name="Energy deal", close_date="2026-05-01")
    out = ok(hub, "convert_lead", lead_id="LEAD-0001", opportunity_name="Energy deal", close_date="2026-08-01",
             amount=40000.0)
    assert out["account"]["account_id"] == "ACCT-0004" and out["account"]["name"] == "Delta Energy"
    assert out["contact"]["contact_id"] == "CON-0004" and out["opportunity"]["stage"] == "qualification"
    assert out["lead"]["status"] == "converted" and out["lead"]["converted_opportunity_id"] == "OPP-0006"
    assert ok(hub, "get_crm_account", account_id="ACCT-0004")["open_opportunities"][0]["amount"] == 40000.0
    fails(hub, "convert_lead", "is converted", lead_id="LEAD-0001", opportunity_name="Again", close_date="2026-08-01")
    fails(hub, "qualify_lead", "already converted (account ACCT-0004)", lead_id="LEAD-0001",
          outcome="disqualified", reason="x")
    fails(hub, "convert_lead", "account named 'Aurora Health' already exists (ACCT-0001)", "pass account_id",
          lead_id="LEAD-0003", opportunity_name="Upsell", close_date="2026-08-01")
    fails(hub, "convert_lead", "already has contact 'CON-0001'", lead_id="LEAD-0003", opportunity_name="Upsell",
          close_date="2026-08-01", account_id="ACCT-0001")
    into = ok(hub, "convert_lead", lead_id="LEAD-0005", opportunity_name="Upsell", close_date="2026-08-01",
              account_id="ACCT-0001")
    assert into["account"]["account_id"] == "ACCT-0001" and into["opportunity"]["owner_rep_id"] == "REP-0002"


def test_opportunities_read_and_create(hub: Hub) -> None:
    assert ok(hub, "list_opportunities", account_id="ACCT-0001")["total"] == 2
    assert ok(hub, "list_opportunities", stage="closed_won")["opportunities"][0]["opportunity_id"] == "OPP-0003"
    assert ok(hub, "list_opportunities", closing_before="2026-05-01")["total"] == 2
    assert ok(hub, "list_opportunities", owner_rep_id="REP-0003", limit=1)["next_offset"] == 1
    fails(hub, "list_opportunities", "closing_before must be a date YYYY-MM-DD", "got 'soon'", closing_before="soon")
    info = ok(hub, "get_opportunity", opportunity_id="OPP-0002")
    assert info["account_name"] == "Aurora Health" and info["allowed_next_stages"] == ["proposal"]
    assert info["quotes"][0]["total"] == 50000.0
    assert ok(hub, "get_opportunity", opportunity_id="OPP-0003")["allowed_next_stages"] == []
    fails(hub, "get_opportunity", "opportunity 'OPP-9' not found", "list_opportunities", opportunity_id="OPP-9")
    opp = ok(hub, "create_opportunity", account_id="ACCT-0003", name="Cascade - Pilot", close_date="2026-09-30",
             primary_contact_id=None)
    assert opp["opportunity_id"] == "OPP-0006" and opp["stage"] == "prospecting" and opp["owner_rep_id"] == "REP-0003"
    assert ok(hub, "list_opportunities", account_id="ACCT-0003", stage="prospecting")["total"] == 1
    fails(hub, "create_opportunity", "already has an open opportunity named 'Cascade - Pilot'",
          account_id="ACCT-0003", name="cascade - pilot", close_date="2026-09-30")
    fails(hub, "create_opportunity", "contact 'CON-0001' belongs to account 'ACCT-0001'", account_id="ACCT-0003",
          name="Other", close_date="2026-09-30", primary_contact_id="CON-0001")
    fails(hub, "create_opportunity", "must be after today (2026-05-12)", account_id="ACCT-0003", name="Other",
          close_date="2026-05-12")
    fails(hub, "create_opportunity", "close_date must be a date YYYY-MM-DD between 2000 and 2100", account_id="ACCT-0003", name="Other",
          close_date="2200-01-01")


def test_stage_transitions(hub: Hub) -> None:
    fails(hub, "advance_opportunity_stage", "cannot move 'OPP-0001' from prospecting to proposal",
          "allowed: qualification", opportunity_id="OPP-0001", stage="proposal")
    assert ok(hub, "advance_opportunity_stage", opportunity_id="OPP-0001", stage="qualification")["probability"] == 25
    fails(hub, "advance_opportunity_stage", "has no amount; pass amount", opportunity_id="OPP-0001", stage="proposal")
    opp = ok(hub, "advance_opportunity_stage", opportunity_id="OPP-0001", stage="proposal", amount=30000)
    assert opp["stage"] == "proposal" and opp["amount"] == 30000.0
    assert ok(hub, "get_opportunity", opportunity_id="OPP-0001")["allowed_next_stages"] == ["negotiation",
                                                                                          "qualification"]
    fails(hub, "advance_opportunity_stage", "from proposal to prospecting", opportunity_id="OPP-0001",
          stage="prospecting")
    fails(hub, "advance_opportunity_stage", "already in proposal", opportunity_id="OPP-0001", stage="proposal")
    fails(hub, "advance_opportunity_stage", "is closed_won", opportunity_id="OPP-0003", stage="negotiation")
    fails(hub, "advance_opportunity_stage", "stage", "'negotiation'", opportunity_id="OPP-0001", stage="closed_won")
    assert ok(hub, "advance_opportunity_stage", opportunity_id="OPP-0002", stage="proposal")["probability"] == 50


def test_close_opportunity(hub: Hub) -> None:
    fails(hub, "close_opportunity", "is in prospecting; only deals in negotiation", opportunity_id="OPP-0001",
          outcome="won", amount=100.0)
    fails(hub, "close_opportunity", "has no amount", opportunity_id="OPP-0005", outcome="won")
    fails(hub, "close_opportunity", "close_date 2026-06-01 is in the future", opportunity_id="OPP-0002",
          outcome="won", close_date="2026-06-01")
    fails(hub, "close_opportunity", "before the opportunity was created", opportunity_id="OPP-0002",
          outcome="won", close_date="2026-01-01")
    fails(hub, "close_opportunity", "loss_reason is required", "competitor", opportunity_id="OPP-0001", outcome="lost")
    won = ok(hub, "close_opportunity", opportunity_id="OPP-0002", outcome="won", close_date="2026-05-10")
    assert won["stage"] == "closed_won" and won["closed_on"] == "2026-05-10" and won["probability"] == 100
    fails(hub, "close_opportunity", "is closed_won (closed on 2026-05-10)", opportunity_id="OPP-0002", outcome="lost",
          loss_reason="price")
    lost = ok(hub, "close_opportunity", opportunity_id="OPP-0001", outcome="lost", loss_reason="no_budget")
    assert lost["closed_on"] == "2026-05-12" and lost["loss_reason"] == "no_budget"
    assert ok(hub, "close_opportunity", opportunity_id="OPP-0005", outcome="won", amount=12000)["amount"] == 12000.0
    assert ok(hub, "get_crm_account", account_id="ACCT-0001")["open_opportunities"] == []
    rep = ok(hub, "get_sales_pipeline_summary", rep_id="REP-0002")["reps"][0]
    assert rep["won_this_quarter"] == 70000.0 and rep["attainment_pct"] == 70.0 and rep["open_pipeline"] == 0


def test_activities(hub: Hub) -> None:
    act = ok(hub, "log_crm_activity", account_id="ACCT-0001", kind="meeting", subject="Demo", date="2026-05-11",
             rep_id="REP-0002", contact_id="CON-0002", opportunity_id="OPP-0002", notes="went well")
    assert act["activity_id"] == "ACV-0003"
    assert ok(hub, "get_crm_account", account_id="ACCT-0001")["account"]["last_activity_on"] == "2026-05-11"
    assert [a["activity_id"] for a in ok(hub, "list_crm_activities", opportunity_id="OPP-0002")["activities"]] == [
        "ACV-0003", "ACV-0001"]
    assert ok(hub, "list_crm_activities", kind="email")["total"] == 1
    assert ok(hub, "list_crm_activities", since="2026-05-01", contact_id="CON-0001")["total"] == 1
    assert ok(hub, "list_crm_activities", limit=1)["next_offset"] == 1
    fails(hub, "list_crm_activities", "since must be a date YYYY-MM-DD", since="last week")
    args = dict(account_id="ACCT-0001", kind="call", subject="Call", rep_id="REP-0002")
    fails(hub, "log_crm_activity", "date 2026-05-13 is in the future", date="2026-05-13", **args)
    for bad in ("13/05/2026", "20260501"):
        fails(hub, "log_crm_activity", "date must be a date YYYY-MM-DD", date=bad, **args)
    fails(hub, "log_crm_activity", "contact 'CON-0003' belongs to account 'ACCT-0002'", date="2026-05-01",
          contact_id="CON-0003", **args)
    fails(hub, "log_crm_activity", "opportunity 'OPP-0004' belongs to account 'ACCT-0003'", date="2026-05-01",
          opportunity_id="OPP-0004", **args)
    fails(hub, "log_crm_activity", "sales rep 'REP-9' not found", "REP-0001", date="2026-05-01",
          **{**args, "rep_id": "REP-9"})
    fails(hub, "log_crm_activity", "kind", "'meeting'", date="2026-05-01", **{**args, "kind": "lunch"})


def test_pipeline_summary(hub: Hub) -> None:
    out = ok(hub, "get_sales_pipeline_summary")
    assert out["quarter"] == "2026-Q2" and len(out["reps"]) == 4
    ravi = next(r for r in out["reps"] if r["rep_id"] == "REP-0002")
    assert ravi["accounts_owned"] == 2 and ravi["won_this_quarter"] == 20000.0 and ravi["open_pipeline"] == 50000.0
    assert ravi["weighted_pipeline"] == 37500.0
    stages = {s["stage"]: s for s in out["by_stage"]}
    assert stages["negotiation"]["count"] == 2 and stages["closed_lost"]["amount"] == 9000.0
    team = ok(hub, "get_sales_pipeline_summary", rep_id="REP-0001")
    assert [r["rep_id"] for r in team["reps"]] == ["REP-0001", "REP-0002", "REP-0003"]
    fails(hub, "get_sales_pipeline_summary", "sales rep 'REP-0' not found", rep_id="REP-0")


def test_reassign_account(hub: Hub) -> None:
    fails(hub, "reassign_crm_account", "only the owner (REP-0002) or their manager (REP-0001)", "'REP-0004' may not",
          account_id="ACCT-0001", new_owner_rep_id="REP-0003", requested_by_rep_id="REP-0004")
    fails(hub, "reassign_crm_account", "'REP-0002' already owns", account_id="ACCT-0001",
          new_owner_rep_id="REP-0002", requested_by_rep_id="REP-0002")
    fails(hub, "reassign_crm_account", "rep 'REP-0002' (Ravi Rao) is at capacity: owns 2 of 2",
          account_id="ACCT-0003", new_owner_rep_id="REP-0002", requested_by_rep_id="REP-0003")
    fails(hub, "reassign_crm_account", "sales rep 'REP-77' not found", "get_sales_pipeline_summary",
          account_id="ACCT-0001", new_owner_rep_id="REP-77", requested_by_rep_id="REP-0001")
    acc = ok(hub, "reassign_crm_account", account_id="ACCT-0001", new_owner_rep_id="REP-0003",
             requested_by_rep_id="REP-0001")
    assert acc["owner_rep_id"] == "REP-0003"
    assert ok(hub, "search_crm_accounts", owner_rep_id="REP-0003")["total"] == 2
    assert {o["owner_rep_id"] for o in ok(hub, "list_opportunities", account_id="ACCT-0001")["opportunities"]} == {
        "REP-0003"}
    assert ok(hub, "get_opportunity", opportunity_id="OPP-0003")["opportunity"]["owner_rep_id"] == "REP-0002"
    # Now REP-0002 has room again and REP-0003 (2 of 2) is full.
    fails(hub, "reassign_crm_account", "'REP-0003' (Sol Park) is at capacity: owns 2 of 2", account_id="ACCT-0002",
          new_owner_rep_id="REP-0003", requested_by_rep_id="REP-0002")
    ok(hub, "reassign_crm_account", account_id="ACCT-0002", new_owner_rep_id="REP-0001", requested_by_rep_id="REP-0002")


def test_week_dates_are_refused(hub: Hub) -> None:
    args = dict(account_id="ACCT-0001", kind="call", subject="Call", rep_id="REP-0002")
    fails(hub, "log_crm_activity", "date must be a date YYYY-MM-DD", date="2026-W19-1", **args)


def test_activity_pages_continue(hub: Hub) -> None:
    first = ok(hub, "list_crm_activities", limit=1)
    assert first["total"] == 2 and first["next_offset"] == 1
    second = ok(hub, "list_crm_activities", offset=first["next_offset"], limit=1)
    assert second["total"] == 2 and second["next_offset"] is None
    everything = ok(hub, "list_crm_activities")["activities"]
    assert first["activities"] + second["activities"] == everything
