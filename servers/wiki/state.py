"""Wiki server state: users, spaces, pages (a tree per space), revisions, comments, attachments."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, naming
from prove.env.world import days_before, email, person, slug

Visibility = Literal["public", "restricted", "private"]
PageStatus = Literal["draft", "published", "archived"]
MimeType = Literal["application/pdf", "image/png", "image/jpeg", "text/csv", "text/markdown", "application/zip"]
Team = Literal["engineering", "product", "design", "people", "operations", "security", "data", "marketing", "sales"]
PageSort = Literal["updated", "views", "title"]

MAX_TAGS = 8
"""Most tags one page may carry."""

UserId = entity_id("user", "Wiki user id, e.g. 'USR-0004'.", example="USR-0004")
SpaceKey = entity_id("space", "Space key, e.g. 'ENG'.", example="ENG")
PageId = entity_id("page", "Page id, e.g. 'PG-0012'.", example="PG-0012")
RevisionId = entity_id("revision", "Revision id, e.g. 'REV-0031'.", example="REV-0031")
RevisionNumber = entity_id("revision_number", "Revision number within its page: 1 for the first version, then 2, 3, ...",
                           type_=int)
CommentId = entity_id("comment", "Page comment id, e.g. 'CMT-0008'.", example="CMT-0008")
AttachmentId = entity_id("attachment", "Attachment id, e.g. 'ATT-0005'.", example="ATT-0005")


class WikiUser(Record):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    team: Team


class WikiSpace(Record):
    space_key: SpaceKey
    name: str = Field(json_schema_extra=naming("name"))
    description: str
    visibility: Visibility = Field(
        description="public: anyone may edit; restricted and private: only members may edit.")
    owner_ids: list[UserId] = Field(description="Users who administer the space (sorted); owners are members.")
    member_ids: list[UserId] = Field(description="Users who belong to the space (sorted).")
    created_at: str


class WikiPage(Record):
    page_id: PageId
    space_key: SpaceKey
    title: str = Field(json_schema_extra=naming("title"), description="Unique within its space (case-insensitive).")
    body: str
    author_id: UserId
    parent_id: PageId | None = Field(None, description="Parent page in the same space; None for a top-level page.")
    tags: list[str] = Field(default_factory=list, description="Sorted, lower-case tags.")
    status: PageStatus
    locked_by: UserId | None = Field(None, description="User holding the edit lock, if any.")
    view_count: int = 0
    version: int = Field(1, description="Number of the current revision.")
    created_at: str
    updated_at: str
    watcher_ids: list[UserId] = Field(default_factory=list, description="Users notified of changes (sorted).")


class Revision(Record):
    revision_id: RevisionId
    page_id: PageId
    number: RevisionNumber
    author_id: UserId
    timestamp: str
    summary: str
    title: str = Field(json_schema_extra=naming("title"))
    body: str


class Comment(Record):
    comment_id: CommentId
    page_id: PageId
    author_id: UserId
    text: str
    created_at: str


class Attachment(Record):
    attachment_id: AttachmentId
    page_id: PageId
    file_name: str
    size_kb: int
    mime_type: MimeType
    uploaded_by: UserId
    uploaded_at: str


class WikiState(ServerState):
    users: dict[str, WikiUser] = Field(default_factory=dict)
    spaces: dict[str, WikiSpace] = Field(default_factory=dict, description="Keyed by space key.")
    pages: dict[str, WikiPage] = Field(default_factory=dict)
    revisions: dict[str, Revision] = Field(default_factory=dict)
    comments: dict[str, Comment] = Field(default_factory=dict)
    attachments: dict[str, Attachment] = Field(default_factory=dict)


# key, name, description, team, page titles
_SPACES: tuple[tuple[str, str, str, Team, tuple[str, ...]], ...] = (
    ("ENG", "Engineering", "Architecture notes, coding standards and service runbooks.", "engineering", (
        "Architecture Overview", "Coding Standards", "Service Catalog", "Payments Service Runbook",
        "Release Process", "Code Review Guidelines", "Local Development Setup", "API Versioning Policy",
        "Database Migration Checklist", "Feature Flags", "Postmortem: Checkout Latency", "Tech Debt Register",
    )),
    ("PROD", "Product", "Roadmaps, product specs and release notes.", "product", (
        "2026 Product Roadmap", "Mobile App Redesign Spec", "Release Notes 4.2", "Release Notes 4.3",
        "Customer Interview Notes", "Pricing Page Experiment", "Onboarding Funnel Analysis",
        "Feature Request Triage", "Search Relevance Spec", "Accessibility Requirements",
    )),
    ("PEOPLE", "People & HR", "Policies, benefits and onboarding for every employee.", "people", (
        "Employee Handbook", "Parental Leave Policy", "Travel and Expenses Policy", "New Hire Onboarding",
        "Performance Review Cycle", "Remote Work Guidelines", "Benefits Overview", "Holiday Calendar 2026",
        "Code of Conduct", "Learning Budget",
    )),
    ("OPS", "Operations", "On-call rotations, incident response and vendor contacts.", "operations", (
        "On-call Handbook", "Incident Response Process", "Escalation Matrix", "Vendor Contacts",
        "Office Network Setup", "Disaster Recovery Plan", "Status Page Guidelines", "Capacity Planning",
        "Severity Definitions", "Maintenance Windows",
    )),
    ("SEC", "Security", "Security policies, audits and access reviews.", "security", (
        "Access Review Procedure", "Password and MFA Policy", "Vulnerability Disclosure",
        "SOC 2 Audit Evidence", "Laptop Hardening Guide", "Secrets Management", "Phishing Response",
        "Third-party Risk Assessment", "Data Classification",
    )),
    ("DATA", "Data Platform", "Pipelines, dashboards and metric definitions.", "data", (
        "Metric Definitions", "Warehouse Naming Conventions", "Nightly ETL Runbook", "Dashboard Catalog",
        "Data Retention Policy", "Experimentation Guide", "Event Tracking Plan", "Churn Model Notes",
        "Data Quality Checks",
    )),
    ("MKT", "Marketing", "Campaigns, brand guidelines and launch plans.", "marketing", (
        "Brand Guidelines", "Q2 Campaign Plan", "Launch Checklist", "Social Media Calendar",
        "Webinar Playbook", "Press Kit", "SEO Keyword Research", "Newsletter Templates",
    )),
    ("SALES", "Sales", "Playbooks, pricing and customer references.", "sales", (
        "Sales Playbook", "Pricing and Discounts", "Objection Handling", "Customer References",
        "Territory Assignments", "Demo Script", "Renewal Process", "Competitor Battlecards",
    )),
)
_TAGS = (
    "onboarding", "runbook", "how-to", "policy", "architecture", "postmortem", "roadmap", "faq",
    "template", "meeting-notes", "security", "api", "deprecated", "q2-planning", "checklist", "draft-review",
)
_SENTENCES = (
    "This page is the single source of truth for the topic.",
    "Owners review it at the start of every quarter.",
    "Ask in the team channel if anything here is unclear.",
    "Steps marked optional can be skipped for internal tools.",
    "The previous version of this process is kept in the archive.",
    "Links to the relevant dashboards are listed at the bottom.",
    "Contact the space owners before changing the approval flow.",
    "Every change must be announced in the weekly update.",
    "The checklist below must be completed before sign-off.",
    "Examples are taken from last year's projects.",
    "Exceptions require written approval from a director.",
    "Numbers are refreshed every Monday from the warehouse.",
)
_SUMMARIES = (
    "Fixed typos", "Added examples", "Updated owners", "Clarified steps", "Added dashboard links",
    "Removed outdated section", "Restructured headings", "Updated for new quarter",
)
_COMMENTS = (
    "Thanks, this is really helpful!", "Can we add a section on rollbacks?", "Is this still up to date?",
    "I think step 3 is out of date.", "Linked this from the onboarding guide.",
    "Who approves exceptions now?", "Great write-up, sharing with my team.", "Found a broken link at the bottom.",
)
_FILES: tuple[tuple[str, MimeType], ...] = (
    ("pdf", "application/pdf"), ("png", "image/png"), ("jpg", "image/jpeg"), ("csv", "text/csv"),
    ("md", "text/markdown"), ("zip", "application/zip"),
)
_STATUS_UNDER_PUBLISHED: tuple[PageStatus, ...] = ("published", "draft", "archived")


def initial_state(seed: int) -> WikiState:
    """A wiki with ~30 users, 6-8 spaces, ~70 pages in trees, ~150 revisions; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-04-07T10:30"
    state = WikiState(now=now)
    usr_id, pg_id, rev_id = Counter("USR"), Counter("PG"), Counter("REV")
    cmt_id, att_id = Counter("CMT"), Counter("ATT")
    now_dt = datetime.fromisoformat(now)
    comments: list[tuple[str, str, str, str]] = []
    teams = [s[3] for s in _SPACES] + ["design"]
    names: list[str] = []
    n_users = rng.randrange(26, 34)
    while len(names) < n_users:
        name = person(rng)
        if name not in names:
            names.append(name)
    for name in names:
        uid = usr_id()
        state.users[uid] = WikiUser(user_id=uid, name=name, email=email(name, "acme-corp.example"),
                                    team=rng.choice(teams))
    user_ids = list(state.users)
    chosen = sorted(rng.sample(range(len(_SPACES)), rng.randrange(6, len(_SPACES) + 1)))
    for key, sname, description, team, titles in (_SPACES[i] for i in chosen):
        own_team = [u for u in user_ids if state.users[u].team == team] or user_ids
        owners = sorted(rng.sample(own_team, min(len(own_team), rng.randrange(1, 3))))
        members = sorted(set(owners) | set(rng.sample(user_ids, rng.randrange(4, 10))))
        visibility: Visibility = ("private" if key == "SEC" else "restricted" if key == "PEOPLE"
                                  else rng.choices(["public", "restricted"], weights=[3, 1])[0])
        state.spaces[key] = WikiSpace(
            space_key=key, name=sname, description=description, visibility=visibility,
            owner_ids=owners, member_ids=members, created_at=days_before(now, rng, 900, 500),
        )
        space_pages: list[WikiPage] = []
        for i, title in enumerate(rng.sample(titles, rng.randrange(7, len(titles) + 1))):
            parent = None if i < 2 or rng.random() < 0.2 else rng.choice(space_pages)
            if parent is None:
                status = rng.choices(["published", "draft", "archived"], weights=[8, 1, 1])[0]
            elif parent.status == "published":
                status = rng.choices(_STATUS_UNDER_PUBLISHED, weights=[7, 2, 1])[0]
            else:  # drafts hold only drafts; archived subtrees stay archived
                status = parent.status
            pid = pg_id()
            n_rev = rng.randrange(1, 5)
            stamps = sorted(days_before(now, rng, 400, 2) for _ in range(n_rev))
            editors = [rng.choice(members) for _ in range(n_rev)]
            sentences = rng.sample(_SENTENCES, n_rev + 1)
            for n in range(1, n_rev + 1):
                rid = rev_id()
                state.revisions[rid] = Revision(
                    revision_id=rid, page_id=pid, number=n, author_id=editors[n - 1], timestamp=stamps[n - 1],
                    summary="Initial draft" if n == 1 else rng.choice(_SUMMARIES), title=title,
                    body=f"{title}. " + " ".join(sentences[: n + 1]),
                )
            watchers = sorted(set(editors) | set(rng.sample(members, rng.randrange(0, 3))))
            page = WikiPage(
                page_id=pid, space_key=key, title=title, body=f"{title}. " + " ".join(sentences),
                author_id=editors[0], parent_id=parent.page_id if parent else None,
                tags=sorted(rng.sample(_TAGS, rng.randrange(0, 5))), status=status,
                locked_by=rng.choice(owners) if status != "archived" and rng.random() < 0.1 else None,
                view_count={"published": rng.randrange(5, 2000), "draft": rng.randrange(0, 20),
                            "archived": rng.randrange(50, 800)}[status],
                version=n_rev, created_at=stamps[0], updated_at=stamps[-1], watcher_ids=watchers,
            )
            state.pages[pid] = page
            space_pages.append(page)
            age = (now_dt - datetime.fromisoformat(stamps[0])).days
            for _ in range(rng.randrange(0, 4) if status != "draft" else 0):
                comments.append((days_before(now, rng, max(age, 1)), pid, rng.choice(user_ids), rng.choice(_COMMENTS)))
            for k in range(rng.choices([0, 1, 2], weights=[5, 3, 1])[0]):
                ext, mime = rng.choice(_FILES)
                aid = att_id()
                state.attachments[aid] = Attachment(
                    attachment_id=aid, page_id=pid, file_name=f"{slug(title).replace('.', '-')}-{k + 1}.{ext}",
                    size_kb=rng.randrange(4, 20000), mime_type=mime, uploaded_by=rng.choice(members),
                    uploaded_at=stamps[-1],
                )
    for created_at, pid, author, text in sorted(comments):  # ids follow time order
        cid = cmt_id()
        state.comments[cid] = Comment(comment_id=cid, page_id=pid, author_id=author, text=text, created_at=created_at)
    return state
