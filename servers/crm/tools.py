"""CRM tools: accounts, contacts, leads, opportunities and stages, activities, reps and pipeline."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require
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
    naming,
    parse_day,
    text,
)
from prove_servers.crm.state import (
    NEXT_STAGES,
    OPEN_STAGES,
    QUALIFY_MIN_SCORE,
    STAGE_PROBABILITY,
    Account,
    AccountId,
    Activity,
    ActivityKind,
    Contact,
    ContactId,
    CRMState,
    Industry,
    Lead,
    LeadId,
    LeadSource,
    LeadStatus,
    LossReason,
    OpenStage,
    Opportunity,
    OpportunityId,
    Quote,
    RepId,
    RepRole,
    SalesRep,
    Stage,
)

Email = text("word", "Email address, e.g. 'ana.silva@acme.com'.", listed="email",
             example="ana.silva@acme.com", max_length=120)
Phone = text("word", "Phone number with 7-15 digits, e.g. '+1-555-201-3344'.", listed="phone",
             example="+1-555-201-3344", max_length=30)
Amount = Annotated[float, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000_000, description="Deal value in USD.")]

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"\+?[0-9][0-9 ().-]*[0-9]")


class AccountList(Page):
    accounts: list[Account]


class AccountInfo(BaseModel):
    account: Account
    owner_name: str
    contacts: list[Contact]
    open_opportunities: list[Opportunity]
    recent_activities: list[Activity] = Field(description="The five most recent activities.")


class ContactList(Page):
    contacts: list[Contact]


class LeadList(Page):
    leads: list[Lead]


class OpportunityList(Page):
    opportunities: list[Opportunity]


class OpportunityInfo(BaseModel):
    opportunity: Opportunity
    account_name: str
    allowed_next_stages: list[OpenStage] = Field(description="Stages advance_opportunity_stage accepts now.")
    quotes: list[Quote]


class ActivityList(Page):
    activities: list[Activity]


class RepSummary(BaseModel):
    rep_id: RepId
    name: str = Field(json_schema_extra=naming("name"))
    role: RepRole
    manager_id: RepId | None
    territory: str
    quarterly_quota: float
    accounts_owned: int
    max_accounts: int
    open_pipeline: float = Field(description="Sum of amounts of open opportunities.")
    weighted_pipeline: float = Field(description="Open amounts times stage probability.")
    won_this_quarter: float
    attainment_pct: float = Field(description="won_this_quarter as a percentage of quota.")


class StageTotal(BaseModel):
    stage: Stage
    count: int
    amount: float = Field(json_schema_extra={MONEY: True})


class PipelineSummary(BaseModel):
    quarter: str
    reps: list[RepSummary]
    by_stage: list[StageTotal]


class LeadConversion(BaseModel):
    lead: Lead
    account: Account
    contact: Contact
    opportunity: Opportunity


def _today(state: CRMState) -> str:
    return state.now[:10]


def _account(state: CRMState, account_id: str, param: str = "account_id") -> Account:
    return find(state.accounts, account_id, hint="use search_crm_accounts to find one")


def _rep(state: CRMState, rep_id: str, param: str) -> SalesRep:
    return find(state.reps, rep_id, hint=f"reps (see get_sales_pipeline_summary): {known(state.reps, 20)}")


def _email(value: str, param: str = "email") -> str:
    value = value.strip().lower()
    require(bool(_EMAIL.fullmatch(value)), f"{param} '{value}' is not a valid email address",
            params=('email', param), rejected=(value,))
    return value


def _phone(value: str) -> str:
    digits = sum(ch.isdigit() for ch in value)
    require(bool(_PHONE.fullmatch(value.strip())) and 7 <= digits <= 15,
            f"phone '{value}' is not valid: use digits with optional +, spaces, dashes, dots or "
            "parentheses, 7-15 digits", params=('phone',), rejected=(value,))
    return value.strip()


def _unique_email(state: CRMState, account_id: str, email: str, skip: str | None = None) -> None:
    dup = next((c for c in state.contacts.values() if c.account_id == account_id
                and c.email == email and c.contact_id != skip), None)
    require(dup is None, f"account '{account_id}' already has contact "
            f"'{dup.contact_id if dup else ''}' ({dup.name if dup else ''}) with email {email}",
            reason='conflict', params=('email',),
            rejected=(account_id, dup.contact_id if dup else '', email))


def _opportunity(state: CRMState, opportunity_id: str) -> Opportunity:
    return find(state.opportunities, opportunity_id, hint="use list_opportunities to find one")


def _open(opp: Opportunity) -> None:
    require(opp.stage in OPEN_STAGES,
            f"opportunity '{opp.opportunity_id}' is {opp.stage} (closed on {opp.closed_on}); it cannot change",
            rejected=(opp.opportunity_id, opp.stage, opp.closed_on))


@tool(sensitive=("owner_rep_id",))
def search_crm_accounts(
    state: CRMState,
    query: text("query", "Case-insensitive substring of the name or website.", listed="name") = "",
    industry: Annotated[Industry | None, Field(description="Only accounts in this industry.")] = None,
    city: text("word", "Only accounts in this city.", listed="city", optional=True) = None,
    owner_rep_id: Annotated[RepId | None, Field(description="Only accounts owned by this rep.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> AccountList:
    """Find CRM accounts (customer companies) by name, industry, city or owning sales rep."""
    q = query.strip().lower()
    found = [a for a in state.accounts.values()
             if (q in a.name.lower() or q in a.website) and (industry is None or a.industry == industry)
             and (city is None or a.city.lower() == city.lower())
             and (owner_rep_id is None or a.owner_rep_id == owner_rep_id)]
    return AccountList.of(found, offset, limit)


@tool(sensitive=("account_id",))
def get_crm_account(state: CRMState, account_id: AccountId) -> AccountInfo:
    """Get an account with its owner, contacts, open opportunities and five latest activities."""
    acc = _account(state, account_id)
    acts = [a for a in state.activities.values() if a.account_id == account_id]
    return AccountInfo(
        account=acc, owner_name=state.reps[acc.owner_rep_id].name,
        contacts=[c for c in state.contacts.values() if c.account_id == account_id],
        open_opportunities=[o for o in state.opportunities.values()
                            if o.account_id == account_id and o.stage in OPEN_STAGES],
        recent_activities=sorted(acts, key=lambda a: (a.date, a.activity_id), reverse=True)[:5],
    )


@tool(sensitive=("account_id",))
def list_crm_contacts(
    state: CRMState,
    account_id: Annotated[AccountId | None, Field(description="Only contacts of this account.")] = None,
    query: text("query", "Case-insensitive substring of name, email or title.", listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ContactList:
    """List CRM contacts, optionally of one account or matching a name, email or title."""
    if account_id is not None:
        _account(state, account_id)
    q = query.strip().lower()
    found = [c for c in state.contacts.values()
             if (account_id is None or c.account_id == account_id)
             and (q in c.name.lower() or q in c.email or q in c.title.lower())]
    return ContactList.of(found, offset, limit)


@tool(write=True, sensitive=("account_id", "email", "phone"))
def create_crm_contact(
    state: CRMState,
    account_id: AccountId,
    name: text("person_name", "Full name.", listed="name", min_length=2, max_length=80),
    email: Email,
    phone: Phone,
    title: text("title", "Job title, e.g. 'CFO'.", listed="title", example="CFO", max_length=80) = "",
) -> Contact:
    """Add a contact person to an account; emails must be unique within the account."""
    _account(state, account_id)
    email = _email(email)
    phone = _phone(phone)
    _unique_email(state, account_id, email)
    contact = Contact(contact_id=state.new_id("CON"), account_id=account_id, name=name.strip(), email=email,
                      phone=phone, title=title.strip(), created_on=_today(state))
    state.contacts[contact.contact_id] = contact
    return contact


@tool(write=True, sensitive=("contact_id", "email", "phone", "account_id"))
def update_crm_contact(
    state: CRMState,
    contact_id: ContactId,
    email: text("word", "New email address.", listed="email", optional=True, max_length=120) = None,
    phone: text("word", "New phone number (7-15 digits).", listed="phone", optional=True, max_length=30) = None,
    title: text("title", "New job title.", listed="title", optional=True, max_length=80) = None,
    account_id: Annotated[AccountId | None, Field(description="Move the contact to this account.")] = None,
) -> Contact:
    """Change a contact's email, phone, title or account; only the fields given change."""
    contact = find(state.contacts, contact_id, hint="use list_crm_contacts to find one")
    require(any(v is not None for v in (email, phone, title, account_id)),
            "nothing to update: give at least one of email, phone, title, account_id",
            reason='limit', params=('account_id', 'email', 'phone', 'title'))
    target = _account(state, account_id).account_id if account_id is not None else contact.account_id
    new_email = _email(email) if email is not None else contact.email
    new_phone = _phone(phone) if phone is not None else contact.phone
    _unique_email(state, target, new_email, skip=contact_id)
    contact.email, contact.phone, contact.account_id = new_email, new_phone, target
    if title is not None:
        contact.title = title.strip()
    return contact


@tool(sensitive=("owner_rep_id",))
def list_leads(
    state: CRMState,
    status: Annotated[LeadStatus | None, Field(description="Only leads in this status.")] = None,
    source: Annotated[LeadSource | None, Field(description="Only leads from this source.")] = None,
    owner_rep_id: Annotated[RepId | None, Field(description="Only leads owned by this rep.")] = None,
    min_score: Annotated[int | None, Field(json_schema_extra=measure("score"), ge=0, le=100, description="Only leads scoring at least this.")] = None,
    query: text("query", "Case-insensitive substring of name, company or email.", listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> LeadList:
    """List sales leads, best score first, filtered by status, source, owner, score or text."""
    q = query.strip().lower()
    found = sorted((ld for ld in state.leads.values()
                    if (status is None or ld.status == status) and (source is None or ld.source == source)
                    and (owner_rep_id is None or ld.owner_rep_id == owner_rep_id)
                    and (min_score is None or ld.score >= min_score)
                    and (q in ld.name.lower() or q in ld.company.lower() or q in ld.email)),
                   key=lambda ld: (-ld.score, ld.lead_id))
    return LeadList.of(found, offset, limit)


@tool(write=True, sensitive=("lead_id",))
def qualify_lead(
    state: CRMState,
    lead_id: LeadId,
    outcome: Annotated[Literal["qualified", "disqualified"], Field(description="Qualify or disqualify.")],
    reason: text("reason", "Why; required to disqualify.", max_length=200) = "",
) -> Lead:
    """Mark a lead qualified (score must be at least 40) or disqualified (with a reason)."""
    lead = find(state.leads, lead_id, hint="use list_leads to find one")
    require(lead.status != "converted",
            f"lead '{lead_id}' was already converted (account {lead.converted_account_id}); it cannot change",
            reason='conflict', rejected=(lead_id, lead.converted_account_id))
    require(lead.status != outcome, f"lead '{lead_id}' is already {outcome}",
            reason='conflict', rejected=(lead_id, outcome))
    if outcome == "qualified":
        require(lead.score >= QUALIFY_MIN_SCORE,
                f"lead '{lead_id}' scores {lead.score}, below the qualification threshold of {QUALIFY_MIN_SCORE}",
                rejected=(lead_id, lead.score, QUALIFY_MIN_SCORE))
    else:
        require(bool(reason.strip()), "reason is required to disqualify a lead",
                reason='missing', params=('reason',))
    lead.status, lead.status_reason = outcome, reason.strip() or None
    return lead


@tool(write=True, sensitive=("lead_id", "account_id", "amount"))
def convert_lead(
    state: CRMState,
    lead_id: LeadId,
    opportunity_name: text("title", "Name of the new deal.", min_length=3, max_length=120),
    close_date: day("Expected close date, after today.", listed="close_date"),
    amount: Annotated[float | None, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000_000, description="Expected deal value in USD.")] = None,
    account_id: Annotated[AccountId | None, Field(description="Existing account to convert into; "
                                                        "default: a new account named after the lead's company.")] = None,
) -> LeadConversion:
    """Convert a qualified lead into an account (new or existing), a contact and an opportunity."""
    lead = find(state.leads, lead_id, hint="use list_leads to find one")
    require(lead.status == "qualified", f"lead '{lead_id}' is {lead.status}; only qualified leads can be "
            "converted" + (" (use qualify_lead first)" if lead.status in ("new", "contacted") else ""),
            reason='state', rejected=(lead_id, lead.status), wanted=('qualified', 'converted'))
    close_date = parse_day(close_date, "close_date").isoformat()
    require(close_date > _today(state), f"close_date {close_date} must be after today ({_today(state)})",
            reason='past', params=('close_date',), rejected=(close_date,))
    if account_id is not None:
        _account(state, account_id)
        _unique_email(state, account_id, lead.email)
    else:
        same = next((a for a in state.accounts.values() if a.name.lower() == lead.company.lower()), None)
        require(same is None, f"an account named '{lead.company}' already exists ({same.account_id if same else ''});"
                " pass account_id to convert into it",
                reason='conflict', params=('account_id',), rejected=(lead.company,))
    today = _today(state)
    if account_id is None:
        acc = Account(account_id=state.new_id("ACCT"), name=lead.company, industry=lead.industry, segment="smb",
                      employees=50, city=state.reps[lead.owner_rep_id].territory,
                      website="www." + lead.email.split("@")[1], owner_rep_id=lead.owner_rep_id, created_on=today)
        state.accounts[acc.account_id] = acc
    else:
        acc = state.accounts[account_id]
    contact = Contact(contact_id=state.new_id("CON"), account_id=acc.account_id, name=lead.name, email=lead.email,
                      phone=lead.phone, title=lead.title, created_on=today)
    state.contacts[contact.contact_id] = contact
    opp = Opportunity(opportunity_id=state.new_id("OPP"), account_id=acc.account_id, name=opportunity_name.strip(),
                      stage="qualification", amount=amount, close_date=close_date,
                      probability=STAGE_PROBABILITY["qualification"], owner_rep_id=acc.owner_rep_id,
                      primary_contact_id=contact.contact_id, created_on=today)
    state.opportunities[opp.opportunity_id] = opp
    lead.status = "converted"
    lead.converted_account_id, lead.converted_contact_id = acc.account_id, contact.contact_id
    lead.converted_opportunity_id = opp.opportunity_id
    return LeadConversion(lead=lead, account=acc, contact=contact, opportunity=opp)


@tool(sensitive=("account_id", "owner_rep_id"))
def list_opportunities(
    state: CRMState,
    account_id: Annotated[AccountId | None, Field(description="Only this account's opportunities.")] = None,
    stage: Annotated[Stage | None, Field(description="Only opportunities in this stage.")] = None,
    owner_rep_id: Annotated[RepId | None, Field(description="Only opportunities owned by this rep.")] = None,
    closing_before: Annotated[day("A calendar date.") | None, Field(description="Only close dates before this.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> OpportunityList:
    """List sales opportunities by close date, filtered by account, stage, owner or close date."""
    if account_id is not None:
        _account(state, account_id)
    if closing_before is not None:
        parse_day(closing_before, "closing_before")
    found = sorted((o for o in state.opportunities.values()
                    if (account_id is None or o.account_id == account_id) and (stage is None or o.stage == stage)
                    and (owner_rep_id is None or o.owner_rep_id == owner_rep_id)
                    and (closing_before is None or o.close_date < closing_before)),
                   key=lambda o: (o.close_date, o.opportunity_id))
    return OpportunityList.of(found, offset, limit)


@tool(sensitive=("opportunity_id",))
def get_opportunity(state: CRMState, opportunity_id: OpportunityId) -> OpportunityInfo:
    """Get an opportunity with its account name, the stages it may move to next, and its quotes."""
    opp = _opportunity(state, opportunity_id)
    return OpportunityInfo(opportunity=opp, account_name=state.accounts[opp.account_id].name,
                           allowed_next_stages=list(NEXT_STAGES.get(opp.stage, ())),
                           quotes=[q for q in state.quotes.values() if q.opportunity_id == opportunity_id])


@tool(write=True, sensitive=("account_id", "amount", "primary_contact_id"))
def create_opportunity(
    state: CRMState,
    account_id: AccountId,
    name: text("title", "Deal name, e.g. 'Acme - Renewal'.", listed="name", example="Acme - Renewal", min_length=3, max_length=120),
    close_date: day("Expected close date, after today.", listed="close_date"),
    amount: Annotated[float | None, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000_000, description="Expected value in USD.")] = None,
    primary_contact_id: Annotated[ContactId | None, Field(description="Main contact; must belong to the account.")] = None,
) -> Opportunity:
    """Open a new opportunity (in prospecting) on an account, owned by the account's owner."""
    acc = _account(state, account_id)
    close_date = parse_day(close_date, "close_date").isoformat()
    require(close_date > _today(state), f"close_date {close_date} must be after today ({_today(state)})",
            reason='past', params=('close_date',), rejected=(close_date,))
    if primary_contact_id is not None:
        contact = find(state.contacts, primary_contact_id)
        require(contact.account_id == account_id, f"contact '{primary_contact_id}' belongs to account "
                f"'{contact.account_id}', not '{account_id}'; its contacts: "
                + known(c.contact_id for c in state.contacts.values() if c.account_id == account_id),
                params=('account_id',), rejected=(account_id,), choices=(contact.account_id,))
    dup = next((o for o in state.opportunities.values() if o.account_id == account_id
                and o.stage in OPEN_STAGES and o.name.lower() == name.strip().lower()), None)
    require(dup is None, f"account '{account_id}' already has an open opportunity named "
            f"'{dup.name if dup else ''}' ({dup.opportunity_id if dup else ''})",
            reason='conflict', rejected=(account_id, dup.name if dup else ''))
    opp = Opportunity(opportunity_id=state.new_id("OPP"), account_id=account_id, name=name.strip(),
                      stage="prospecting", amount=amount, close_date=close_date,
                      probability=STAGE_PROBABILITY["prospecting"], owner_rep_id=acc.owner_rep_id,
                      primary_contact_id=primary_contact_id, created_on=_today(state))
    state.opportunities[opp.opportunity_id] = opp
    return opp


@tool(write=True, sensitive=("opportunity_id", "amount"))
def advance_opportunity_stage(
    state: CRMState,
    opportunity_id: OpportunityId,
    stage: Annotated[OpenStage, Field(description="New open stage: one step forward or back.")],
    amount: Annotated[float | None, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000_000, description="Set the deal value "
                                                                            "(required to enter proposal without one).")] = None,
) -> Opportunity:
    """Move an open opportunity one stage forward or back (prospecting, qualification, proposal, negotiation)."""
    opp = _opportunity(state, opportunity_id)
    _open(opp)
    require(opp.stage != stage, f"opportunity '{opportunity_id}' is already in {stage}",
            reason='conflict', rejected=(opportunity_id, stage))
    allowed = NEXT_STAGES[opp.stage]
    require(stage in allowed, f"cannot move '{opportunity_id}' from {opp.stage} to {stage}; allowed: "
            f"{', '.join(allowed)} (one step at a time; close deals with close_opportunity)",
            rejected=(opportunity_id, opp.stage, stage), choices=tuple(allowed))
    new_amount = amount if amount is not None else opp.amount
    require(new_amount is not None or OPEN_STAGES.index(stage) < 2,
            f"opportunity '{opportunity_id}' has no amount; pass amount to move it to {stage}",
            params=('amount',), rejected=(opportunity_id, stage))
    opp.stage, opp.probability, opp.amount = stage, STAGE_PROBABILITY[stage], new_amount
    return opp


@tool(write=True, sensitive=("opportunity_id", "amount"))
def close_opportunity(
    state: CRMState,
    opportunity_id: OpportunityId,
    outcome: Annotated[Literal["won", "lost"], Field(description="Won (from negotiation) or lost.")],
    close_date: Annotated[day("A calendar date.", listed="close_date") | None, Field(description="Actual close date, not after "
                                                                        "today; default today.")] = None,
    amount: Annotated[float | None, Field(json_schema_extra={MONEY: True}, gt=0, le=100_000_000, description="Final deal value in USD.")] = None,
    loss_reason: Annotated[LossReason | None, Field(description="Why it was lost (required when lost).")] = None,
) -> Opportunity:
    """Close an opportunity as won (needs negotiation stage and an amount) or lost (needs a reason)."""
    opp = _opportunity(state, opportunity_id)
    _open(opp)
    on = parse_day(close_date, "close_date").isoformat() if close_date is not None else _today(state)
    require(on <= _today(state), f"close_date {on} is in the future; a deal can only be closed on or "
            f"before today ({_today(state)})",
            reason='future', params=('close_date',), rejected=(on,))
    require(on >= opp.created_on, f"close_date {on} is before the opportunity was created ({opp.created_on})",
            params=('close_date',), rejected=(on,))
    final = amount if amount is not None else opp.amount
    if outcome == "won":
        require(opp.stage == "negotiation", f"opportunity '{opportunity_id}' is in {opp.stage}; only deals in "
                "negotiation can be closed as won (advance it first)",
                reason='state', rejected=(opportunity_id, opp.stage), wanted=('negotiation',))
        require(final is not None, f"opportunity '{opportunity_id}' has no amount; pass amount to close it as won",
                params=('amount',), rejected=(opportunity_id,))
    else:
        require(loss_reason is not None, "loss_reason is required to close an opportunity as lost; one of "
                "price, competitor, no_budget, no_decision, timing, product_fit",
                reason='missing', params=('loss_reason',))
    opp.stage = "closed_won" if outcome == "won" else "closed_lost"
    opp.probability, opp.amount = STAGE_PROBABILITY[opp.stage], final
    opp.close_date = opp.closed_on = on
    opp.loss_reason = loss_reason if outcome == "lost" else None
    return opp


@tool(write=True, sensitive=("account_id", "rep_id", "contact_id", "opportunity_id"))
def log_crm_activity(
    state: CRMState,
    account_id: AccountId,
    kind: Annotated[ActivityKind, Field(description="call, email, meeting or note.")],
    subject: text("title", "Short subject line.", listed="subject", min_length=2, max_length=120),
    date: day("When it happened, not after today.", listed="date"),
    rep_id: entity_id("sales_rep", "Sales rep who did it, e.g. 'REP-0003'.", example="REP-0003"),
    notes: text("body", "Free-text notes.", listed="notes", max_length=2000) = "",
    contact_id: Annotated[ContactId | None, Field(description="Contact involved; must belong to the account.")] = None,
    opportunity_id: Annotated[OpportunityId | None, Field(description="Related opportunity of the account.")] = None,
) -> Activity:
    """Record a call, email, meeting or note against an account (and optionally a contact or deal)."""
    acc = _account(state, account_id)
    on = parse_day(date, "date").isoformat()
    require(on <= _today(state), f"date {on} is in the future (today is {_today(state)}); log activities "
            "after they happen", reason='future', params=('date',), rejected=(on,))
    _rep(state, rep_id, "rep_id")
    if contact_id is not None:
        contact = find(state.contacts, contact_id)
        require(contact.account_id == account_id,
                f"contact '{contact_id}' belongs to account '{contact.account_id}', not '{account_id}'",
                params=('account_id',), rejected=(account_id,), choices=(contact.account_id,))
    if opportunity_id is not None:
        opp = _opportunity(state, opportunity_id)
        require(opp.account_id == account_id,
                f"opportunity '{opportunity_id}' belongs to account '{opp.account_id}', not '{account_id}'",
                params=('account_id',), rejected=(account_id,), choices=(opp.account_id,))
    act = Activity(activity_id=state.new_id("ACV"), kind=kind, subject=subject.strip(), notes=notes.strip(),
                   date=on, account_id=account_id, contact_id=contact_id, opportunity_id=opportunity_id,
                   rep_id=rep_id)
    state.activities[act.activity_id] = act
    acc.last_activity_on = max(acc.last_activity_on or "", on)
    return act


@tool(sensitive=("account_id", "opportunity_id", "contact_id"))
def list_crm_activities(
    state: CRMState,
    account_id: Annotated[AccountId | None, Field(description="Only activities on this account.")] = None,
    opportunity_id: Annotated[OpportunityId | None, Field(description="Only activities about this opportunity.")] = None,
    contact_id: Annotated[ContactId | None, Field(description="Only activities with this contact.")] = None,
    kind: Annotated[ActivityKind | None, Field(description="Only this kind of activity.")] = None,
    since: Annotated[day("A calendar date.") | None, Field(description="Only on or after this date.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ActivityList:
    """List logged calls, emails, meetings and notes, newest first, by account, deal, contact or kind."""
    if account_id is not None:
        _account(state, account_id)
    if since is not None:
        parse_day(since, "since")
    found = sorted((a for a in state.activities.values()
                    if (account_id is None or a.account_id == account_id)
                    and (opportunity_id is None or a.opportunity_id == opportunity_id)
                    and (contact_id is None or a.contact_id == contact_id)
                    and (kind is None or a.kind == kind) and (since is None or a.date >= since)),
                   key=lambda a: (a.date, a.activity_id), reverse=True)
    return ActivityList.of(found, offset, limit)


@tool(sensitive=("rep_id",))
def get_sales_pipeline_summary(
    state: CRMState,
    rep_id: Annotated[RepId | None, Field(description="Only this rep (a manager also gets their team).")] = None,
) -> PipelineSummary:
    """Sales reps with quota, capacity, open and weighted pipeline and quarter attainment, plus stage totals."""
    if rep_id is not None:
        _rep(state, rep_id, "rep_id")
    today = date.fromisoformat(_today(state))
    q = (today.month - 1) // 3
    start = date(today.year, 3 * q + 1, 1).isoformat()
    team = [r for r in state.reps.values() if rep_id is None or r.rep_id == rep_id or r.manager_id == rep_id]
    mine = {r.rep_id for r in team}
    opps = [o for o in state.opportunities.values() if o.owner_rep_id in mine]
    rows = []
    for rep in team:
        own = [o for o in opps if o.owner_rep_id == rep.rep_id]
        live = [o for o in own if o.stage in OPEN_STAGES]
        won = sum(o.amount or 0 for o in own if o.stage == "closed_won" and (o.closed_on or "") >= start)
        rows.append(RepSummary(
            rep_id=rep.rep_id, name=rep.name, role=rep.role, manager_id=rep.manager_id, territory=rep.territory,
            quarterly_quota=rep.quarterly_quota, max_accounts=rep.max_accounts,
            accounts_owned=sum(a.owner_rep_id == rep.rep_id for a in state.accounts.values()),
            open_pipeline=round(sum(o.amount or 0 for o in live), 2),
            weighted_pipeline=round(sum((o.amount or 0) * o.probability / 100 for o in live), 2),
            won_this_quarter=round(won, 2), attainment_pct=round(100 * won / rep.quarterly_quota, 1),
        ))
    stages: list[Stage] = [*OPEN_STAGES, "closed_won", "closed_lost"]
    totals = [StageTotal(stage=s, count=sum(o.stage == s for o in opps),
                         amount=round(sum(o.amount or 0 for o in opps if o.stage == s), 2)) for s in stages]
    return PipelineSummary(quarter=f"{today.year}-Q{q + 1}", reps=rows, by_stage=totals)


@tool(write=True, sensitive=("account_id", "new_owner_rep_id", "requested_by_rep_id"))
def reassign_crm_account(
    state: CRMState,
    account_id: AccountId,
    new_owner_rep_id: entity_id("sales_rep", "Rep who will own the account."),
    requested_by_rep_id: entity_id("sales_rep", "Rep making the change: the current owner or their manager."),
) -> Account:
    """Give an account (and its open opportunities) to another sales rep with spare capacity."""
    acc = _account(state, account_id)
    new = _rep(state, new_owner_rep_id, "new_owner_rep_id")
    who = _rep(state, requested_by_rep_id, "requested_by_rep_id")
    owner = state.reps[acc.owner_rep_id]
    require(who.rep_id in (owner.rep_id, owner.manager_id),
            f"only the owner ({owner.rep_id}) or their manager ({owner.manager_id or 'none'}) may reassign "
            f"account '{account_id}'; '{who.rep_id}' may not",
            reason='state', rejected=(account_id, who.rep_id))
    require(new.rep_id != owner.rep_id, f"'{new.rep_id}' already owns account '{account_id}'",
            reason='conflict', rejected=(new.rep_id, account_id))
    count = sum(a.owner_rep_id == new.rep_id for a in state.accounts.values())
    require(count < new.max_accounts, f"rep '{new.rep_id}' ({new.name}) is at capacity: owns {count} of "
            f"{new.max_accounts} accounts; see get_sales_pipeline_summary for reps with room",
            rejected=(new.rep_id, count, new.max_accounts))
    acc.owner_rep_id = new.rep_id
    for opp in state.opportunities.values():
        if opp.account_id == account_id and opp.stage in OPEN_STAGES:
            opp.owner_rep_id = new.rep_id
    return acc
