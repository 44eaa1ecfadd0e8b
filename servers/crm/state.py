"""CRM server state: sales reps, accounts, contacts, leads, opportunities, activities, products, quotes."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import MONEY, entity_id, naming
from prove.env.world import CITIES, FIRST_NAMES, LAST_NAMES, days_before, phone, shift, slug

Industry = Literal["software", "healthcare", "finance", "retail", "manufacturing", "education",
                   "logistics", "energy", "media"]
Segment = Literal["smb", "mid_market", "enterprise"]
LeadSource = Literal["web", "referral", "event", "cold_call", "partner", "ads"]
LeadStatus = Literal["new", "contacted", "qualified", "disqualified", "converted"]
Stage = Literal["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"]
OpenStage = Literal["prospecting", "qualification", "proposal", "negotiation"]
ActivityKind = Literal["call", "email", "meeting", "note"]
RepRole = Literal["rep", "manager"]
LossReason = Literal["price", "competitor", "no_budget", "no_decision", "timing", "product_fit"]
ProductFamily = Literal["platform", "add_on", "services", "support"]
QuoteStatus = Literal["draft", "sent", "accepted", "rejected"]

OPEN_STAGES: tuple[OpenStage, ...] = ("prospecting", "qualification", "proposal", "negotiation")
STAGE_PROBABILITY: dict[str, int] = {"prospecting": 10, "qualification": 25, "proposal": 50,
                                     "negotiation": 75, "closed_won": 100, "closed_lost": 0}
NEXT_STAGES: dict[str, tuple[OpenStage, ...]] = {
    "prospecting": ("qualification",),
    "qualification": ("proposal", "prospecting"),
    "proposal": ("negotiation", "qualification"),
    "negotiation": ("proposal",),
}
"""Allowed moves between open stages: one step forward or one step back; closing is separate."""
QUALIFY_MIN_SCORE = 40

RepId = entity_id("sales_rep", "Sales rep id, e.g. 'REP-0003'.", example="REP-0003")
AccountId = entity_id("account", "CRM account id, e.g. 'ACCT-0004'.", example="ACCT-0004")
ContactId = entity_id("contact", "Contact id, e.g. 'CON-0012'.", example="CON-0012")
LeadId = entity_id("lead", "Lead id, e.g. 'LEAD-0007'.", example="LEAD-0007")
OpportunityId = entity_id("opportunity", "Opportunity id, e.g. 'OPP-0021'.", example="OPP-0021")
ActivityId = entity_id("activity", "Activity id, e.g. 'ACV-0040'.", example="ACV-0040")
ProductId = entity_id("product", "Product id, e.g. 'PRD-0002'.", example="PRD-0002")
QuoteId = entity_id("quote", "Quote id, e.g. 'QUO-0005'.", example="QUO-0005")


class SalesRep(Record):
    rep_id: RepId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    role: RepRole
    manager_id: RepId | None = Field(description="The rep's manager (None for managers).")
    territory: str
    quarterly_quota: float
    max_accounts: int = Field(description="Capacity: most accounts this rep may own.")


class Account(Record):
    account_id: AccountId
    name: str = Field(json_schema_extra=naming("name"))
    industry: Industry
    segment: Segment
    employees: int
    city: str
    website: str
    owner_rep_id: RepId
    created_on: str
    last_activity_on: str | None = None


class Contact(Record):
    contact_id: ContactId
    account_id: AccountId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    phone: str
    title: str
    created_on: str


class Lead(Record):
    lead_id: LeadId
    name: str = Field(json_schema_extra=naming("alone"))
    company: str
    industry: Industry
    email: str
    phone: str
    title: str
    source: LeadSource
    status: LeadStatus
    score: int = Field(description="0-100; qualifying needs at least 40.")
    owner_rep_id: RepId
    created_on: str
    status_reason: str | None = None
    converted_account_id: AccountId | None = None
    converted_contact_id: ContactId | None = None
    converted_opportunity_id: OpportunityId | None = None


class Opportunity(Record):
    opportunity_id: OpportunityId
    account_id: AccountId
    name: str = Field(json_schema_extra=naming("name"))
    stage: Stage
    amount: float | None = Field(json_schema_extra={MONEY: True}, description="Expected deal value in USD; None until estimated.")
    close_date: str = Field(description="Expected (open) or actual (closed) close date.")
    probability: int
    owner_rep_id: RepId
    primary_contact_id: ContactId | None = None
    created_on: str
    closed_on: str | None = None
    loss_reason: LossReason | None = None


class Activity(Record):
    activity_id: ActivityId
    kind: ActivityKind
    subject: str = Field(json_schema_extra=naming("title"))
    notes: str
    date: str
    account_id: AccountId
    contact_id: ContactId | None = None
    opportunity_id: OpportunityId | None = None
    rep_id: RepId


class Product(Record):
    product_id: ProductId
    name: str = Field(json_schema_extra=naming("name"))
    family: ProductFamily
    list_price: float = Field(json_schema_extra={MONEY: True}, description="USD per unit per year.")
    active: bool


class QuoteLine(Record):
    product_id: ProductId
    quantity: int
    unit_price: float = Field(json_schema_extra={MONEY: True})
    discount_pct: float


class Quote(Record):
    quote_id: QuoteId
    opportunity_id: OpportunityId
    status: QuoteStatus
    lines: list[QuoteLine]
    total: float = Field(json_schema_extra={MONEY: True})
    created_on: str


class CRMState(ServerState):
    reps: dict[str, SalesRep] = Field(default_factory=dict)
    accounts: dict[str, Account] = Field(default_factory=dict)
    contacts: dict[str, Contact] = Field(default_factory=dict)
    leads: dict[str, Lead] = Field(default_factory=dict)
    opportunities: dict[str, Opportunity] = Field(default_factory=dict)
    activities: dict[str, Activity] = Field(default_factory=dict)
    products: dict[str, Product] = Field(default_factory=dict)
    quotes: dict[str, Quote] = Field(default_factory=dict)


_PREFIXES = ("Aurora", "Beacon", "Cascade", "Delta", "Ember", "Falcon", "Glacier", "Horizon", "Indigo",
             "Jade", "Keystone", "Lighthouse", "Monarch", "Nimbus", "Onyx", "Polaris", "Quantum", "Radiant",
             "Sierra", "Titan", "Vertex", "Willow", "Zenith", "Harbor", "Copper", "Maple")
_SUFFIX: dict[str, tuple[str, ...]] = {
    "software": ("Software", "Labs", "Cloud"), "healthcare": ("Health", "Clinics", "Medical"),
    "finance": ("Capital", "Bank", "Insurance"), "retail": ("Retail", "Stores", "Goods"),
    "manufacturing": ("Manufacturing", "Industries", "Works"), "education": ("Academy", "University"),
    "logistics": ("Logistics", "Freight"), "energy": ("Energy", "Power", "Solar"), "media": ("Media", "Studios"),
}
_TITLES = ("CTO", "VP Engineering", "Head of IT", "Procurement Manager", "CFO", "Operations Director",
           "IT Manager", "COO", "Product Manager", "Head of Data")
_PRODUCTS = (("Core Platform", "platform", 24000.0), ("Core Platform Enterprise", "platform", 60000.0),
             ("Analytics Add-on", "add_on", 8000.0), ("SSO & Audit Add-on", "add_on", 5000.0),
             ("Extra Storage 1TB", "add_on", 1200.0), ("Onboarding Package", "services", 9500.0),
             ("Custom Integration", "services", 15000.0), ("Premium Support", "support", 6000.0),
             ("Standard Support", "support", 2500.0), ("Legacy Connector", "add_on", 3000.0))
_SUBJECTS = {"call": ("Discovery call", "Pricing follow-up", "Check-in call"),
             "email": ("Sent proposal", "Shared case study", "Follow-up on demo"),
             "meeting": ("On-site demo", "Executive briefing", "Contract review"),
             "note": ("Budget confirmed", "Champion changed roles", "Competitor in the deal")}
_OPP_NAMES = ("Platform rollout", "Analytics expansion", "Renewal", "Support upgrade", "New division",
              "Pilot", "Integration project", "Seat expansion")


def _person(rng: random.Random) -> tuple[str, str]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return f"{first} {last}", f"{first.lower()}.{last.lower()}"


def initial_state(seed: int) -> CRMState:
    """~10 reps, ~40 accounts, ~90 contacts, ~35 leads, ~60 opportunities; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-05-12T10:00"
    today = now[:10]
    state = CRMState(now=now)
    ids = {k: Counter(k) for k in ("REP", "ACCT", "CON", "LEAD", "OPP", "ACV", "PRD", "QUO")}
    territories = rng.sample(CITIES, 4)
    managers: list[str] = []
    for i in range(rng.randrange(9, 12)):
        name, handle = _person(rng)
        rid = ids["REP"]()
        manager = i < 2
        state.reps[rid] = SalesRep(
            rep_id=rid, name=name, email=f"{handle}@sales.example.com", role="manager" if manager else "rep",
            manager_id=None if manager else managers[i % 2], territory=territories[i % 4],
            quarterly_quota=float(rng.choice([150, 200, 250, 300, 400]) * 1000) * (2 if manager else 1),
            max_accounts=rng.randrange(2, 4) if manager else rng.randrange(4, 8),
        )
        if manager:
            managers.append(rid)
    for pname, family, price in _PRODUCTS:
        pid = ids["PRD"]()
        state.products[pid] = Product(product_id=pid, name=pname, family=family, list_price=price,
                                      active=pname != "Legacy Connector")
    load = {r: 0 for r in state.reps}
    industry_of = {s: ind for ind, words in _SUFFIX.items() for s in words}
    names = rng.sample([f"{p} {s}" for p in _PREFIXES for s in industry_of], 90)
    for company in names[:rng.randrange(36, 44)]:
        industry = industry_of[company.split()[-1]]
        free = [r for r, n in load.items() if n < state.reps[r].max_accounts]
        if not free:
            break
        owner = rng.choice(free)
        load[owner] += 1
        aid = ids["ACCT"]()
        domain = slug(company).replace(".", "") + ".com"
        segment = rng.choices(["smb", "mid_market", "enterprise"], weights=[3, 4, 2])[0]
        account = Account(
            account_id=aid, name=company, industry=industry, segment=segment,
            employees={"smb": rng.randrange(10, 200), "mid_market": rng.randrange(200, 2000),
                       "enterprise": rng.randrange(2000, 40000)}[segment],
            city=rng.choice(CITIES), website=f"www.{domain}", owner_rep_id=owner,
            created_on=days_before(now, rng, 1200, 60)[:10],
        )
        state.accounts[aid] = account
        contacts = []
        for _ in range(rng.randrange(1, 5)):
            name, handle = _person(rng)
            if any(c.email.startswith(handle + "@") for c in contacts):
                continue
            cid = ids["CON"]()
            contacts.append(Contact(contact_id=cid, account_id=aid, name=name, email=f"{handle}@{domain}",
                                    phone=phone(rng), title=rng.choice(_TITLES), created_on=account.created_on))
            state.contacts[cid] = contacts[-1]
        for _ in range(rng.randrange(0, 4)):
            oid = ids["OPP"]()
            stage: Stage = rng.choices(
                ["prospecting", "qualification", "proposal", "negotiation", "closed_won", "closed_lost"],
                weights=[3, 3, 3, 2, 3, 2])[0]
            closed = stage in ("closed_won", "closed_lost")
            created = max(days_before(now, rng, 300, 20)[:10], account.created_on)
            close = shift(today, days=-rng.randrange(1, 120)) if closed else shift(today, days=rng.randrange(-10, 150))
            close = max(close, shift(created, days=7))
            opp = Opportunity(
                opportunity_id=oid, account_id=aid, name=f"{company} - {rng.choice(_OPP_NAMES)}", stage=stage,
                amount=None if stage == "prospecting" and rng.random() < 0.6 else float(rng.randrange(5, 250) * 1000),
                close_date=close, probability=STAGE_PROBABILITY[stage], owner_rep_id=owner,
                primary_contact_id=rng.choice(contacts).contact_id, created_on=created,
                closed_on=close if closed else None,
                loss_reason=rng.choice(["price", "competitor", "no_budget", "no_decision", "timing",
                                        "product_fit"]) if stage == "closed_lost" else None,
            )
            state.opportunities[oid] = opp
            if stage in ("proposal", "negotiation", "closed_won"):
                lines = [QuoteLine(product_id=p.product_id, quantity=rng.randrange(1, 6), unit_price=p.list_price,
                                   discount_pct=float(rng.choice([0, 0, 5, 10, 15])))
                         for p in rng.sample([p for p in state.products.values() if p.active], rng.randrange(1, 4))]
                total = round(sum(ln.quantity * ln.unit_price * (1 - ln.discount_pct / 100) for ln in lines), 2)
                qid = ids["QUO"]()
                state.quotes[qid] = Quote(quote_id=qid, opportunity_id=oid, lines=lines, total=total,
                                          status="accepted" if stage == "closed_won" else rng.choice(["draft", "sent"]),
                                          created_on=max(created, shift(today, days=-30)))
                opp.amount = total
        for _ in range(rng.randrange(1, 5)):
            kind = rng.choice(list(_SUBJECTS))
            contact = rng.choice(contacts)
            opps = [o for o in state.opportunities.values() if o.account_id == aid]
            vid = ids["ACV"]()
            state.activities[vid] = Activity(
                activity_id=vid, kind=kind, subject=rng.choice(_SUBJECTS[kind]),
                notes=f"{contact.name} ({contact.title}): {rng.choice(['positive', 'needs pricing', 'wants a demo', 'evaluating competitors'])}",
                date=days_before(now, rng, 50, 0)[:10], account_id=aid, contact_id=contact.contact_id,
                opportunity_id=rng.choice(opps).opportunity_id if opps and rng.random() < 0.6 else None,
                rep_id=owner,
            )
            last = account.last_activity_on or ""
            account.last_activity_on = max(last, state.activities[vid].date)
    state.activities = dict(sorted(state.activities.items(), key=lambda kv: (kv[1].date, kv[0])))
    reps = sorted(r for r, x in state.reps.items() if x.role == "rep")
    for company in names[44:44 + rng.randrange(28, 36)] + rng.sample(names[:20], 3):
        name, handle = _person(rng)
        status: LeadStatus = rng.choices(["new", "contacted", "qualified", "disqualified"], weights=[4, 4, 3, 2])[0]
        lid = ids["LEAD"]()
        state.leads[lid] = Lead(
            lead_id=lid, name=name, company=company,
            industry=industry_of[company.split()[-1]],
            email=f"{handle}@{slug(company).replace('.', '')}.com", phone=phone(rng), title=rng.choice(_TITLES),
            source=rng.choice(["web", "referral", "event", "cold_call", "partner", "ads"]), status=status,
            score=rng.randrange(45, 100) if status == "qualified" else rng.randrange(5, 95),
            owner_rep_id=rng.choice(reps), created_on=days_before(now, rng, 60, 1)[:10],
            status_reason="no budget this year" if status == "disqualified" else None,
        )
    return state
