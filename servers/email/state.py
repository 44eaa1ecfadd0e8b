"""Email server state: mailboxes, folders, messages with attachments, contacts, filters, auto-replies."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import day, entity_id, naming
from prove.env.world import (
    CITIES,
    COMPANIES,
    FIRST_NAMES,
    LAST_NAMES,
    days_before,
    iso,
    phone,
    slug,
)

MailboxKind = Literal["personal", "shared"]
FolderKind = Literal["inbox", "sent", "drafts", "archive", "trash", "custom"]
Mime = Literal[
    "application/pdf", "image/png", "image/jpeg", "text/plain", "text/csv", "text/calendar",
    "application/zip", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
]
Access = Literal["owner", "delegate", "none"]

MAX_ATTACHMENT_KB = 20 * 1024
"""Largest single attachment (20 MB)."""
MAX_TOTAL_ATTACHMENT_KB = 25 * 1024
"""Largest total attachment size of one message (25 MB)."""
MAX_RECIPIENTS = 50
"""Most addresses in `to` plus `cc`."""
SYSTEM_FOLDERS: tuple[tuple[str, FolderKind], ...] = (
    ("Inbox", "inbox"), ("Sent", "sent"), ("Drafts", "drafts"), ("Archive", "archive"), ("Trash", "trash"),
)

MailboxId = entity_id("mailbox", "Mailbox id, e.g. 'MBX-0001' (see list_mailboxes).", example="MBX-0001")
FolderId = entity_id("folder", "Folder id, e.g. 'FLD-0003'.", example="FLD-0003")
MessageId = entity_id("message", "Message id, e.g. 'MSG-0042'.", example="MSG-0042")
ThreadId = entity_id("thread", "Thread id, e.g. 'THR-0007'.", example="THR-0007")
ContactId = entity_id("contact", "Address-book contact id, e.g. 'CON-0005'.", example="CON-0005")
FilterId = entity_id("filter", "Incoming-mail filter id, e.g. 'FLT-0002'.", example="FLT-0002")


class Attachment(Record):
    name: str = Field(json_schema_extra=naming("name"), min_length=1, max_length=120, description="File name, e.g. 'Q2_budget.xlsx'.")
    size_kb: int = Field(ge=1, le=10_000_000, description="Size in kilobytes (1 MB = 1024 KB).")
    mime: Mime = Field(description="MIME type of the file.")


class AutoReply(Record):
    enabled: bool = False
    start_date: day("First day the auto-reply is sent.") | None = None
    end_date: day("Last day the auto-reply is sent.") | None = None
    subject: str = Field("", json_schema_extra=naming("title"))
    message: str = ""
    replied_to: list[str] = Field(default_factory=list, description="Sorted senders already answered.")


class Mailbox(Record):
    mailbox_id: MailboxId
    address: str
    display_name: str = Field(json_schema_extra=naming("name"))
    kind: MailboxKind
    owner: str = Field(description="Name of the person who owns the mailbox.")
    delegates: list[str] = Field(default_factory=list, description="Sorted names of people who may use it.")
    signature: str
    auto_reply: AutoReply = Field(default_factory=AutoReply)


class Folder(Record):
    folder_id: FolderId
    mailbox_id: MailboxId
    name: str = Field(json_schema_extra=naming("name"))
    kind: FolderKind


class Email(Record):
    message_id: MessageId
    mailbox_id: MailboxId
    folder_id: FolderId
    thread_id: ThreadId
    from_address: str
    from_name: str
    to: list[str]
    cc: list[str] = Field(default_factory=list)
    subject: str = Field(json_schema_extra=naming("title"))
    body: str
    timestamp: str
    read: bool = True
    starred: bool = False
    labels: list[str] = Field(default_factory=list, description="Sorted labels.")
    attachments: list[Attachment] = Field(default_factory=list)
    is_draft: bool = False
    in_reply_to: MessageId | None = Field(None, description="Id of the message this one answers.")


class Contact(Record):
    contact_id: ContactId
    mailbox_id: MailboxId
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    company: str
    phone: str
    favorite: bool = False


class MailFilter(Record):
    filter_id: FilterId
    mailbox_id: MailboxId
    from_contains: str | None = Field(None, description="Match senders whose address contains this.")
    subject_contains: str | None = Field(None, description="Match subjects containing this.")
    move_to_folder_id: FolderId | None = None
    add_label: str | None = None
    mark_read: bool = False


class EmailState(ServerState):
    signed_in_user: str = Field(description="Name of the person using the service.")
    mailboxes: dict[str, Mailbox] = Field(default_factory=dict)
    folders: dict[str, Folder] = Field(default_factory=dict)
    messages: dict[str, Email] = Field(default_factory=dict)
    contacts: dict[str, Contact] = Field(default_factory=dict)
    filters: dict[str, MailFilter] = Field(default_factory=dict)


_TOPICS: dict[str, tuple[str, ...]] = {
    "work": (
        "Q{q} budget review", "Design review: {project}", "Offsite in {city}", "Contract renewal with {company}",
        "Weekly sync notes", "Hiring: {role} candidates", "Invoice {n} from {company}", "Launch plan for {project}",
        "Travel approval: {city}", "Roadmap feedback for {project}",
    ),
    "personal": (
        "Flight itinerary to {city}", "Dinner on {day}?", "Your order #{n} has shipped", "Apartment viewing in {city}",
        "Photos from {city}", "Gym membership renewal", "Birthday plans for {first}", "Book club: next pick",
    ),
    "shared": (
        "Refund request for order #{n}", "Cannot log in to my account", "Question about invoice {n}",
        "Bug report: export fails", "Shipping delay for order #{n}", "Cancel my subscription",
    ),
}
_BODIES = (
    "Hi {first},\n\nCould you take a look at this before {day}? Happy to discuss.",
    "Hi {first},\n\nThanks for the update. I have a few questions, can we talk on {day}?",
    "Hello {first},\n\nPlease find the details attached. Let me know if anything is missing.",
    "Hi {first},\n\nQuick reminder about this one; we need an answer by {day}.",
    "Dear {first},\n\nFollowing up on our call, here is the summary we agreed on.",
    "Hey {first},\n\nSounds good to me. I'll confirm with the others and get back to you.",
)
_LABELS = {
    "work": ("finance", "project", "travel", "hr", "urgent", "clients"),
    "personal": ("family", "travel", "receipts", "friends"),
    "shared": ("refund", "bug", "billing", "escalated"),
}
_CUSTOM = {"work": ("Finance", "Projects", "Clients"), "personal": ("Newsletters", "Receipts"), "shared": ("Escalations",)}
_FILES: tuple[tuple[str, Mime], ...] = (
    ("budget.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ("contract.pdf", "application/pdf"), ("notes.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("screenshot.png", "image/png"), ("photo.jpg", "image/jpeg"), ("export.csv", "text/csv"),
    ("invite.ics", "text/calendar"), ("logs.zip", "application/zip"), ("readme.txt", "text/plain"),
)
_FILL = {
    "project": ("Atlas", "Falcon", "Nimbus", "Orion", "Harbor"),
    "role": ("Data Engineer", "Product Designer", "Account Manager", "SRE"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
}


def _fill(text: str, rng: random.Random, first: str) -> str:
    return text.format(
        q=rng.randrange(1, 5), project=rng.choice(_FILL["project"]), city=rng.choice(CITIES),
        company=rng.choice(COMPANIES), role=rng.choice(_FILL["role"]), n=rng.randrange(1000, 9999),
        day=rng.choice(_FILL["day"]), first=first,
    )


def _domain(company: str) -> str:
    return company.split()[0].lower() + ".example"


def initial_state(seed: int) -> EmailState:
    """An organisation's mail: ~10 mailboxes (4 usable by the signed-in user), ~150 messages."""
    rng = random.Random(seed)
    now = "2026-04-14T10:30"
    names = [f"{f} {s}" for f, s in zip(rng.sample(FIRST_NAMES, 12), rng.sample(LAST_NAMES, 12), strict=True)]
    user, colleagues = names[0], names[1:rng.randrange(7, 10)]
    company = rng.choice(COMPANIES)
    domain = _domain(company)
    state = EmailState(now=now, signed_in_user=user)
    mbx_id, fld_id, msg_id, thr_id = Counter("MBX"), Counter("FLD"), Counter("MSG"), Counter("THR")
    con_id, flt_id = Counter("CON"), Counter("FLT")

    def mailbox(address: str, display: str, kind: MailboxKind, owner: str, delegates: list[str],
                signature: str, style: str) -> tuple[Mailbox, dict[str, str]]:
        box = Mailbox(mailbox_id=mbx_id(), address=address, display_name=display, kind=kind, owner=owner,
                      delegates=sorted(delegates), signature=signature)
        state.mailboxes[box.mailbox_id] = box
        folders = {}
        for name, fkind in SYSTEM_FOLDERS + tuple((n, "custom") for n in _CUSTOM.get(style, ())):
            fid = fld_id()
            state.folders[fid] = Folder(folder_id=fid, mailbox_id=box.mailbox_id, name=name, kind=fkind)
            folders[name] = fid
        return box, folders

    def external(domain_pool: tuple[str, ...]) -> tuple[str, str, str]:
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        comp = rng.choice(COMPANIES)
        dom = rng.choice(domain_pool) if domain_pool else _domain(comp)
        return name, f"{slug(name)}@{dom}", comp

    first = user.split()[0]
    work, work_f = mailbox(f"{slug(user)}@{domain}", user, "personal", user, [],
                           f"Best regards,\n{user}\n{company}", "work")
    home, home_f = mailbox(f"{slug(user)}@mail.example.com", user, "personal", user, [], f"-- {first}", "personal")
    support, support_f = mailbox(f"support@{domain}", f"{company} Support", "shared", colleagues[0],
                                 [user, colleagues[1]], f"The {company} Support Team", "shared")
    usable = [(work, work_f, "work"), (home, home_f, "personal"), (support, support_f, "shared")]
    mailbox(f"billing@{domain}", f"{company} Billing", "shared", colleagues[2], [colleagues[3]],
            f"{company} Billing", "")
    boxes = {}
    for i, person in enumerate(colleagues):
        box, fl = mailbox(f"{slug(person)}@{domain}", person, "personal", person,
                          [user] if i == 0 else [], f"{person}\n{company}", "work")
        boxes[person] = (box, fl)
    usable.append((*boxes[colleagues[0]], "work"))  # the user assists colleagues[0]
    away = boxes[rng.choice(colleagues[1:])][0]
    away.auto_reply = AutoReply(
        enabled=True, start_date="2026-04-10", end_date=f"2026-04-{rng.randrange(20, 29)}",
        subject="Out of office", message=f"I am on vacation with limited access to email. For urgent matters contact {colleagues[0]}.",
    )

    def add(box: Mailbox, folder: str, thread: str, sender: tuple[str, str], to: list[str], subject: str,
            body: str, ts: str, **extra: object) -> None:
        mid = msg_id()
        state.messages[mid] = Email(message_id=mid, mailbox_id=box.mailbox_id, folder_id=folder, thread_id=thread,
                                    from_name=sender[0], from_address=sender[1], to=to, subject=subject,
                                    body=body, timestamp=ts, **extra)

    for box, fl, style in usable:
        pool: list[tuple[str, str, str]] = []
        if style == "work":
            pool += [(c, f"{slug(c)}@{domain}", company) for c in [user, *colleagues] if c != box.owner]
        for _ in range(rng.randrange(6, 10)):
            pool.append(external(("mail.example.com", "inbox.example.org") if style == "personal" else ()))
        for name, addr, comp in pool:
            cid = con_id()
            state.contacts[cid] = Contact(contact_id=cid, mailbox_id=box.mailbox_id, name=name, email=addr,
                                          company=comp, phone=phone(rng), favorite=rng.random() < 0.25)
        me = (box.display_name, box.address)
        custom = [fl[n] for n in _CUSTOM[style]]
        for _ in range(rng.randrange(9, 14)):
            name, addr, _comp = rng.choice(pool)
            subject = _fill(rng.choice(_TOPICS[style]), rng, name.split()[0])
            thread = thr_id()
            t = datetime.fromisoformat(days_before(now, rng, 40, 1))
            outgoing = rng.random() < 0.3
            labels = sorted(rng.sample(_LABELS[style], rng.randrange(0, 2)))
            home_folder = rng.choices([fl["Inbox"], fl["Archive"], rng.choice(custom)], weights=[6, 3, 2])[0]
            n_msgs = rng.randrange(1, 5)
            for k in range(n_msgs):
                body = _fill(rng.choice(_BODIES), rng, (box.owner if not outgoing else name).split()[0])
                atts = [Attachment(name=f"{subject.split()[0].lower()}_{fname}", size_kb=rng.randrange(20, 9000), mime=mime)
                        for fname, mime in rng.sample(_FILES, rng.randrange(1, 3))] if k == 0 and rng.random() < 0.3 else []
                subj = subject if k == 0 else f"Re: {subject}"
                if outgoing:
                    add(box, fl["Sent"], thread, me, [addr], subj, f"{body}\n\n{box.signature}", iso(t), attachments=atts)
                else:
                    last = k == n_msgs - 1
                    add(box, home_folder, thread, (name, addr), [box.address], subj, body, iso(t), attachments=atts,
                        read=not (last and rng.random() < 0.45), starred=rng.random() < 0.12, labels=labels)
                outgoing = not outgoing
                t = min(t + timedelta(minutes=rng.randrange(20, 2000)), datetime.fromisoformat(now) - timedelta(minutes=5))
        for _ in range(rng.randrange(1, 3)):  # drafts
            name, addr, _comp = rng.choice(pool)
            add(box, fl["Drafts"], thr_id(), me, [addr] if rng.random() < 0.8 else [],
                _fill(rng.choice(_TOPICS[style]), rng, name.split()[0]),
                _fill(rng.choice(_BODIES), rng, name.split()[0]), days_before(now, rng, 5), is_draft=True)
        for _ in range(rng.randrange(1, 4)):  # trash
            comp = rng.choice(COMPANIES)
            add(box, fl["Trash"], thr_id(), (comp, f"promo@{_domain(comp)}"), [box.address],
                f"{rng.randrange(10, 60)}% off this week only", "Limited offer, see our website.",
                days_before(now, rng, 20))
    # Newsletters, filed by the personal mailbox's filter.
    news_folder = home_f["Newsletters"]
    fid = flt_id()
    state.filters[fid] = MailFilter(filter_id=fid, mailbox_id=home.mailbox_id, from_contains="news@",
                                    move_to_folder_id=news_folder, add_label="newsletter", mark_read=True)
    for comp in rng.sample(COMPANIES, 4):
        add(home, news_folder, thr_id(), (comp, f"news@{_domain(comp)}"), [home.address],
            f"{comp} newsletter: April edition", "Our latest stories and offers.", days_before(now, rng, 30),
            labels=["newsletter"])
    fid = flt_id()
    state.filters[fid] = MailFilter(filter_id=fid, mailbox_id=work.mailbox_id, subject_contains="Invoice",
                                    move_to_folder_id=work_f["Finance"], add_label="finance")
    fid = flt_id()
    state.filters[fid] = MailFilter(filter_id=fid, mailbox_id=support.mailbox_id, subject_contains="Refund",
                                    add_label="refund")
    for person, (box, fl) in boxes.items():  # mail of colleagues the user cannot read
        if person == colleagues[0]:
            continue
        for _ in range(rng.randrange(2, 5)):
            name, addr, _comp = external(())
            add(box, fl["Inbox"], thr_id(), (name, addr), [box.address],
                _fill(rng.choice(_TOPICS["work"]), rng, person.split()[0]),
                _fill(rng.choice(_BODIES), rng, person.split()[0]), days_before(now, rng, 20), read=False)
    state.messages = dict(sorted(state.messages.items(), key=lambda kv: kv[1].timestamp))
    return state
