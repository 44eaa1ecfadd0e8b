"""Email tools: mailboxes, folders, reading and searching mail, sending, replying, drafts, auto-reply."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, require
from prove.env.tool import ToolError, tool
from prove.env.types import (
    DEFAULT_LIMIT,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    entity_ids,
    naming,
    parse_day,
    text,
)
from prove_servers.email.state import (
    MAX_ATTACHMENT_KB,
    MAX_RECIPIENTS,
    MAX_TOTAL_ATTACHMENT_KB,
    Access,
    Attachment,
    AutoReply,
    Contact,
    Email,
    EmailState,
    FilterId,
    Folder,
    FolderId,
    FolderKind,
    Mailbox,
    MailboxId,
    MailboxKind,
    MessageId,
    ThreadId,
)

Addresses = text("word", "Recipient email addresses.", listed="to", many=True,
                 max_length=MAX_RECIPIENTS)
CopyAddresses = text("word", "Recipient email addresses.", listed="cc", many=True,
                     max_length=MAX_RECIPIENTS)
Subject = text("title", "Subject line.", listed="subject", max_length=200)
Body = text("body", "Plain-text body; the mailbox signature is appended when sent.", listed="body",
            max_length=4000)
Attachments = Annotated[list[Attachment], Field(
    max_length=10, description="Files to attach, each with name, size_kb and mime; at most 20 MB each, 25 MB in total.")]

_ADDRESS = re.compile(r"^[a-z0-9._%+-]+@[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}$")
_FIND_HINT = "use list_emails or search_emails to find message ids (a message deleted from Trash is gone)"


class MailboxSummary(BaseModel):
    mailbox_id: MailboxId
    address: str
    display_name: str = Field(json_schema_extra=naming("name"))
    kind: MailboxKind
    owner: str
    your_access: Access = Field(description="Whether the signed-in user owns it, is a delegate, or has no access.")
    unread_in_inbox: int | None = Field(description="Unread inbox messages; None without access.")


class MailboxList(Page):
    signed_in_user: str
    mailboxes: list[MailboxSummary]


class FilterView(BaseModel):
    filter_id: FilterId
    from_contains: str | None
    subject_contains: str | None
    move_to_folder: str | None
    add_label: str | None
    mark_read: bool


class MailboxSettings(BaseModel):
    mailbox_id: MailboxId
    address: str
    display_name: str = Field(json_schema_extra=naming("name"))
    owner: str
    delegates: list[str]
    signature: str
    auto_reply: AutoReply
    auto_reply_active_today: bool
    filters: list[FilterView]


class FolderInfo(BaseModel):
    folder_id: FolderId
    name: str = Field(json_schema_extra=naming("name"))
    kind: FolderKind
    total: int
    unread: int


class FolderList(Page):
    mailbox_id: MailboxId
    folders: list[FolderInfo]


class EmailSummary(BaseModel):
    message_id: MessageId
    mailbox_id: MailboxId
    folder: str
    thread_id: ThreadId
    from_address: str
    from_name: str
    to: list[str]
    subject: str = Field(json_schema_extra=naming("title"))
    snippet: str = Field(description="The first characters of the body.")
    timestamp: str
    read: bool
    starred: bool
    labels: list[str]
    attachment_count: int
    is_draft: bool


class EmailList(Page):
    emails: list[EmailSummary]


class EmailDetails(Email):
    folder: str = Field(description="Name of the folder the message is in.")


class EmailThread(BaseModel):
    thread_id: ThreadId
    subject: str = Field(json_schema_extra=naming("title"))
    messages: list[EmailDetails] = Field(description="Oldest first, across the mailboxes you can use.")
    total: int


class ContactList(Page):
    contacts: list[Contact]


class SendReceipt(BaseModel):
    message_id: MessageId = Field(description="Id of the copy in the sender's Sent folder.")
    thread_id: ThreadId
    mailbox_id: MailboxId
    from_address: str
    to: list[str]
    cc: list[str]
    subject: str = Field(json_schema_extra=naming("title"))
    timestamp: str
    attachment_count: int
    delivered_to_mailboxes: list[str] = Field(description="Recipients hosted here, whose inbox got a copy.")
    auto_replies_received: list[str] = Field(description="Recipients whose vacation auto-reply came back.")


class ReadMarkResult(BaseModel):
    read: bool
    updated: entity_ids("message", "Messages whose read flag changed.")
    unchanged: entity_ids("message", "Messages that already had that read flag.")


class DeleteResult(BaseModel):
    message_id: MessageId
    permanently_deleted: bool
    folder: str | None = Field(description="'Trash' when moved there; None when gone for good.")


# -- helpers -------------------------------------------------------------------------------


def _access(state: EmailState, box: Mailbox) -> Access:
    if box.owner == state.signed_in_user:
        return "owner"
    return "delegate" if state.signed_in_user in box.delegates else "none"


def _usable(state: EmailState) -> str:
    return ", ".join(f"{b.mailbox_id} ({b.address})" for b in state.mailboxes.values() if _access(state, b) != "none")


def _mailbox(state: EmailState, mailbox_id: str, param: str = "mailbox_id") -> Mailbox:
    box = find(state.mailboxes, mailbox_id)
    require(_access(state, box) != "none",
            f"mailbox '{mailbox_id}' ({box.address}) belongs to {box.owner} and you ({state.signed_in_user}) "
            f"are neither its owner nor a delegate (parameter '{param}'); mailboxes you can use: {_usable(state)}",
            params=(param,), rejected=(mailbox_id, box.owner), choices=tuple(b.mailbox_id for b in state.mailboxes.values() if _access(state, b) != 'none'))
    return box


def _message(state: EmailState, message_id: str, param: str = "message_id") -> Email:
    msg = state.messages.get(message_id)
    if msg is None or _access(state, state.mailboxes[msg.mailbox_id]) == "none":
        raise ToolError(f"message '{message_id}' not found (parameter '{param}'); {_FIND_HINT}",
                        reason='not_found', params=('message', param),
                        rejected=(message_id, _FIND_HINT))
    return msg


def _folders(state: EmailState, mailbox_id: str) -> list[Folder]:
    return [f for f in state.folders.values() if f.mailbox_id == mailbox_id]


def _folder(state: EmailState, mailbox_id: str, name: str, param: str = "folder") -> Folder:
    wanted = name.strip().lower()
    folders = _folders(state, mailbox_id)
    hit = next((f for f in folders if f.name.lower() == wanted or f.folder_id.lower() == wanted), None)
    require(hit is not None, f"folder '{name}' not found in mailbox '{mailbox_id}' (parameter '{param}'); "
            f"folders: {', '.join(f.name for f in folders)}",
            reason='not_found', params=('folder', param), rejected=(name, mailbox_id),
            choices=tuple(f.name for f in folders))
    return hit  # type: ignore[return-value]


def _kind_folder(state: EmailState, mailbox_id: str, kind: FolderKind) -> Folder:
    return next(f for f in _folders(state, mailbox_id) if f.kind == kind)


def _summary(state: EmailState, m: Email) -> EmailSummary:
    return EmailSummary(
        message_id=m.message_id, mailbox_id=m.mailbox_id, folder=state.folders[m.folder_id].name,
        thread_id=m.thread_id, from_address=m.from_address, from_name=m.from_name, to=m.to, subject=m.subject,
        snippet=" ".join(m.body.split())[:80], timestamp=m.timestamp, read=m.read, starred=m.starred,
        labels=m.labels, attachment_count=len(m.attachments), is_draft=m.is_draft,
    )


def _details(state: EmailState, m: Email) -> EmailDetails:
    return EmailDetails(**m.model_dump(), folder=state.folders[m.folder_id].name)


def _addresses(values: list[str], param: str, taken: list[str] | None = None) -> list[str]:
    out: list[str] = []
    for raw in values:
        addr = raw.strip().lower()
        require(bool(_ADDRESS.match(addr)),
                f"invalid recipient address '{raw}' (parameter '{param}'); expected name@domain.tld",
                params=('name', param), rejected=(raw,))
        if addr not in out and addr not in (taken or []):
            out.append(addr)
    return out


def _check_attachments(files: list[Attachment], param: str = "attachments") -> None:
    for f in files:
        require(f.size_kb <= MAX_ATTACHMENT_KB,
                f"attachment '{f.name}' is {f.size_kb / 1024:.1f} MB (parameter '{param}'); "
                f"each attachment may be at most {MAX_ATTACHMENT_KB // 1024} MB",
                reason='limit', params=(param,), rejected=(f.name,))
    total = sum(f.size_kb for f in files)
    require(total <= MAX_TOTAL_ATTACHMENT_KB,
            f"attachments total {total / 1024:.1f} MB (parameter '{param}'); a message may carry at most "
            f"{MAX_TOTAL_ATTACHMENT_KB // 1024} MB",
            reason='limit', params=('attachments', 'message', param))


def _auto_reply_active(state: EmailState, box: Mailbox) -> bool:
    ar, today = box.auto_reply, state.now[:10]
    return ar.enabled and (ar.start_date or today) <= today <= (ar.end_date or today)


def _file_incoming(state: EmailState, copy: Email) -> None:
    for flt in state.filters.values():
        if flt.mailbox_id != copy.mailbox_id:
            continue
        if flt.from_contains and flt.from_contains.lower() not in copy.from_address:
            continue
        if flt.subject_contains and flt.subject_contains.lower() not in copy.subject.lower():
            continue
        if flt.move_to_folder_id in state.folders:
            copy.folder_id = flt.move_to_folder_id
        if flt.add_label and flt.add_label not in copy.labels:
            copy.labels = sorted([*copy.labels, flt.add_label])
        copy.read = copy.read or flt.mark_read


def _send(state: EmailState, box: Mailbox, msg: Email) -> SendReceipt:
    """File `msg` (already built, id assigned) in Sent and deliver copies to mailboxes hosted here."""
    msg.folder_id, msg.is_draft, msg.read = _kind_folder(state, box.mailbox_id, "sent").folder_id, False, True
    state.messages[msg.message_id] = msg
    by_address = {b.address: b for b in state.mailboxes.values()}
    delivered, auto = [], []
    for addr in [*msg.to, *msg.cc]:
        target = by_address.get(addr)
        if target is None:
            continue
        copy = msg.model_copy(deep=True, update={
            "message_id": state.new_id("MSG"), "mailbox_id": target.mailbox_id, "read": False, "labels": [],
            "folder_id": _kind_folder(state, target.mailbox_id, "inbox").folder_id,
        })
        _file_incoming(state, copy)
        state.messages[copy.message_id] = copy
        delivered.append(addr)
        ar = target.auto_reply
        if target is not box and _auto_reply_active(state, target) and box.address not in ar.replied_to:
            ar.replied_to = sorted([*ar.replied_to, box.address])
            reply = Email(
                message_id=state.new_id("MSG"), mailbox_id=box.mailbox_id, thread_id=msg.thread_id,
                folder_id=_kind_folder(state, box.mailbox_id, "inbox").folder_id, from_address=target.address,
                from_name=target.display_name, to=[box.address], subject=f"{ar.subject or 'Automatic reply'}: {msg.subject}",
                body=ar.message, timestamp=state.now, read=False, in_reply_to=msg.message_id,
            )
            state.messages[reply.message_id] = reply
            auto.append(addr)
    return SendReceipt(
        message_id=msg.message_id, thread_id=msg.thread_id, mailbox_id=box.mailbox_id, from_address=box.address,
        to=msg.to, cc=msg.cc, subject=msg.subject, timestamp=msg.timestamp, attachment_count=len(msg.attachments),
        delivered_to_mailboxes=delivered, auto_replies_received=auto,
    )


def _new_message(state: EmailState, box: Mailbox, to: list[str], cc: list[str], subject: str, body: str,
                 attachments: list[Attachment], thread_id: str | None = None, in_reply_to: str | None = None,
                 draft: bool = False) -> Email:
    state.advance()
    sig = "" if draft or not box.signature else f"\n\n{box.signature}"
    return Email(
        message_id=state.new_id("MSG"), mailbox_id=box.mailbox_id, thread_id=thread_id or state.new_id("THR"),
        folder_id=_kind_folder(state, box.mailbox_id, "drafts").folder_id, from_address=box.address,
        from_name=box.display_name, to=to, cc=cc, subject=subject.strip(), body=body.rstrip() + sig,
        timestamp=state.now, attachments=[a.model_copy() for a in attachments], is_draft=draft, in_reply_to=in_reply_to,
    )


def _same_mailbox(state: EmailState, msg: Email, box: Mailbox) -> None:
    require(msg.mailbox_id == box.mailbox_id,
            f"message '{msg.message_id}' is in mailbox '{msg.mailbox_id}' "
            f"({state.mailboxes[msg.mailbox_id].address}), not in '{box.mailbox_id}' ({box.address}); "
            f"use mailbox_id '{msg.mailbox_id}'",
            params=('mailbox_id', 'message'),
            rejected=(msg.message_id, msg.mailbox_id, box.mailbox_id))
    require(not msg.is_draft, f"message '{msg.message_id}' is an unsent draft; send it with send_email_draft",
            params=('message',), rejected=(msg.message_id,))


# -- reads ---------------------------------------------------------------------------------


@tool()
def list_mailboxes(
    state: EmailState,
    accessible_only: Annotated[bool, Field(description="Only mailboxes you own or are a delegate of.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> MailboxList:
    """List the organisation's mailboxes and whether the signed-in user may use each one, a page at a time."""
    rows = [
        MailboxSummary(
            mailbox_id=b.mailbox_id, address=b.address, display_name=b.display_name, kind=b.kind, owner=b.owner,
            your_access=_access(state, b),
            unread_in_inbox=None if _access(state, b) == "none" else sum(
                1 for m in state.messages.values()
                if m.mailbox_id == b.mailbox_id and not m.read and state.folders[m.folder_id].kind == "inbox"),
        )
        for b in state.mailboxes.values()
        if not accessible_only or _access(state, b) != "none"
    ]
    return MailboxList.of(rows, offset, limit, signed_in_user=state.signed_in_user)


@tool(sensitive=("mailbox_id",))
def get_mailbox_settings(state: EmailState, mailbox_id: MailboxId) -> MailboxSettings:
    """Get a mailbox's signature, delegates, vacation auto-reply and incoming-mail filters."""
    box = _mailbox(state, mailbox_id)
    filters = [
        FilterView(filter_id=f.filter_id, from_contains=f.from_contains, subject_contains=f.subject_contains,
                   move_to_folder=state.folders[f.move_to_folder_id].name if f.move_to_folder_id else None,
                   add_label=f.add_label, mark_read=f.mark_read)
        for f in state.filters.values() if f.mailbox_id == mailbox_id
    ]
    return MailboxSettings(
        mailbox_id=box.mailbox_id, address=box.address, display_name=box.display_name, owner=box.owner,
        delegates=box.delegates, signature=box.signature, auto_reply=box.auto_reply,
        auto_reply_active_today=_auto_reply_active(state, box), filters=filters,
    )


@tool(sensitive=("mailbox_id",))
def list_email_folders(state: EmailState, mailbox_id: MailboxId, offset: Offset = 0,
                       limit: Limit = DEFAULT_LIMIT) -> FolderList:
    """List a mailbox's folders (system and custom) with their total and unread message counts, a page at a time."""
    _mailbox(state, mailbox_id)
    folders = _folders(state, mailbox_id)

    def info(f: Folder) -> FolderInfo:
        msgs = [m for m in state.messages.values() if m.folder_id == f.folder_id]
        return FolderInfo(folder_id=f.folder_id, name=f.name, kind=f.kind, total=len(msgs),
                          unread=sum(not m.read for m in msgs))

    return FolderList.of(folders, offset, limit, view=info, mailbox_id=mailbox_id)


@tool(sensitive=("mailbox_id", "from_address"))
def list_emails(
    state: EmailState,
    mailbox_id: MailboxId,
    folder: entity_id("folder", "Folder name or id, e.g. 'Inbox', 'Sent', 'Drafts' or a custom one.", example="Inbox") = "Inbox",
    unread_only: Annotated[bool, Field(description="Only unread messages.")] = False,
    starred_only: Annotated[bool, Field(description="Only starred messages.")] = False,
    label: text("query", "Only messages carrying this label.", optional=True, listed="labels") = None,
    from_address: text("word", "Only messages whose sender address contains this.", listed="from_address", optional=True) = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EmailList:
    """List the messages in one folder of a mailbox, newest first, with filters, a page at a time."""
    _mailbox(state, mailbox_id)
    fid = _folder(state, mailbox_id, folder).folder_id
    sender = (from_address or "").strip().lower()
    found = [
        _summary(state, m) for m in reversed(state.messages.values())
        if m.folder_id == fid and (not unread_only or not m.read) and (not starred_only or m.starred)
        and (label is None or label.strip().lower() in m.labels) and sender in m.from_address
    ]
    return EmailList.of(found, offset, limit)


@tool(sensitive=("mailbox_id",))
def search_emails(
    state: EmailState,
    query: text("query", "Words to find in subject, body, sender, recipients or attachment names.", min_length=1, max_length=200, listed="subject"),
    mailbox_id: Annotated[MailboxId | None, Field(description="Only this mailbox; default: every mailbox you can use.")] = None,
    has_attachment: Annotated[bool | None, Field(description="Only messages with (true) or without (false) attachments.")] = None,
    since: Annotated[day("A calendar date.") | None, Field(description="Only messages on or after this date.")] = None,
    include_trash: Annotated[bool, Field(description="Also search the Trash folder.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> EmailList:
    """Search messages by words (all must match), newest first, across your mailboxes or in one of them."""
    if mailbox_id is not None:
        _mailbox(state, mailbox_id)
    start = parse_day(since, "since").isoformat() if since is not None else ""
    words = query.lower().split()
    found = []
    for m in reversed(state.messages.values()):
        box = state.mailboxes[m.mailbox_id]
        if (mailbox_id is not None and m.mailbox_id != mailbox_id) or _access(state, box) == "none":
            continue
        if (not include_trash and state.folders[m.folder_id].kind == "trash") or m.timestamp[:10] < start:
            continue
        if has_attachment is not None and bool(m.attachments) != has_attachment:
            continue
        text = " ".join([m.subject, m.body, m.from_name, m.from_address, *m.to, *m.cc,
                         *(a.name for a in m.attachments)]).lower()
        if all(w in text for w in words):
            found.append(_summary(state, m))
    return EmailList.of(found, offset, limit)


@tool(sensitive=("message_id",))
def get_email(state: EmailState, message_id: MessageId) -> EmailDetails:
    """Get one message in full: recipients, body, labels, attachments and folder (does not mark it read)."""
    return _details(state, _message(state, message_id))


@tool(sensitive=("thread_id",))
def get_email_thread(
    state: EmailState,
    thread_id: entity_id("thread", "Thread id, e.g. 'THR-0007' (from any of its messages).", example="THR-0007"),
) -> EmailThread:
    """Get every message of a conversation thread, oldest first, across the mailboxes you can use."""
    msgs = [_details(state, m) for m in state.messages.values()
            if m.thread_id == thread_id and _access(state, state.mailboxes[m.mailbox_id]) != "none"]
    require(bool(msgs), f"thread '{thread_id}' not found (parameter 'thread_id'); "
            "use get_email or list_emails to see a message's thread_id",
            reason='not_found', params=('thread_id', 'message'), rejected=(thread_id,))
    return EmailThread(thread_id=thread_id, subject=msgs[0].subject, messages=msgs, total=len(msgs))


@tool(sensitive=("mailbox_id",))
def list_email_contacts(
    state: EmailState,
    mailbox_id: MailboxId,
    query: text("query", "Case-insensitive part of a name, address or company.", max_length=100, listed="name") = "",
    favorites_only: Annotated[bool, Field(description="Only contacts marked as favorites.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ContactList:
    """List or look up the address book of a mailbox, e.g. to find someone's email address."""
    _mailbox(state, mailbox_id)
    q = query.strip().lower()
    found = [
        c for c in state.contacts.values()
        if c.mailbox_id == mailbox_id and (not favorites_only or c.favorite)
        and (q in c.name.lower() or q in c.email or q in c.company.lower())
    ]
    return ContactList.of(found, offset, limit)


# -- writes --------------------------------------------------------------------------------


@tool(write=True, sensitive=("mailbox_id", "to", "cc", "attachments"))
def send_email(
    state: EmailState,
    mailbox_id: entity_id("mailbox", "Mailbox to send from (you must own it or be a delegate)."),
    to: text("word", "Recipient email addresses.", listed="to", many=True, min_length=1, max_length=MAX_RECIPIENTS),
    subject: Subject,
    body: Body,
    cc: CopyAddresses = [],  # noqa: B006 - pydantic copies defaults
    attachments: Attachments = [],  # noqa: B006
) -> SendReceipt:
    """Send a new email from a mailbox you can use; recipients hosted here receive it in their inbox."""
    box = _mailbox(state, mailbox_id)
    to_list = _addresses(to, "to")
    cc_list = _addresses(cc, "cc", taken=to_list)
    require(len(to_list) + len(cc_list) <= MAX_RECIPIENTS, f"at most {MAX_RECIPIENTS} recipients in to and cc together",
            reason='limit', params=('cc',), rejected=(MAX_RECIPIENTS,))
    require(bool(subject.strip()), "subject must not be empty", params=('subject',))
    _check_attachments(attachments)
    return _send(state, box, _new_message(state, box, to_list, cc_list, subject, body, attachments))


@tool(write=True, sensitive=("mailbox_id", "message_id"))
def reply_to_email(
    state: EmailState,
    mailbox_id: entity_id("mailbox", "Mailbox holding the message; the reply is sent from it."),
    message_id: MessageId,
    body: Body,
    reply_all: Annotated[bool, Field(description="Also reply to everyone else on the message (to and cc).")] = False,
) -> SendReceipt:
    """Reply to a message in the same thread, to its sender (or to everyone with reply_all)."""
    box = _mailbox(state, mailbox_id)
    msg = _message(state, message_id)
    _same_mailbox(state, msg, box)
    mine = msg.from_address == box.address
    to = list(msg.to) if mine else [msg.from_address]
    cc = [a for a in [*msg.to, *msg.cc] if a != box.address and a not in to] if reply_all else []
    subject = msg.subject if msg.subject.lower().startswith("re:") else f"Re: {msg.subject}"
    msg.read = True
    reply = _new_message(state, box, to, list(dict.fromkeys(cc)), subject, body, [], msg.thread_id, msg.message_id)
    return _send(state, box, reply)


@tool(write=True, sensitive=("mailbox_id", "message_id", "to"))
def forward_email(
    state: EmailState,
    mailbox_id: entity_id("mailbox", "Mailbox holding the message; it is forwarded from it."),
    message_id: MessageId,
    to: text("word", "Addresses to forward to.", listed="to", many=True, min_length=1, max_length=MAX_RECIPIENTS),
    note: text("body", "Text written above the forwarded message.", max_length=2000) = "",
    include_attachments: Annotated[bool, Field(description="Forward the original attachments too.")] = True,
) -> SendReceipt:
    """Forward a message (and by default its attachments) to new recipients as a new thread."""
    box = _mailbox(state, mailbox_id)
    msg = _message(state, message_id)
    _same_mailbox(state, msg, box)
    to_list = _addresses(to, "to")
    subject = msg.subject if msg.subject.lower().startswith("fwd:") else f"Fwd: {msg.subject}"
    quoted = (f"{note}\n\n---------- Forwarded message ----------\nFrom: {msg.from_name} <{msg.from_address}>\n"
              f"Date: {msg.timestamp}\nSubject: {msg.subject}\n\n{msg.body}").lstrip()
    fwd = _new_message(state, box, to_list, [], subject, quoted, msg.attachments if include_attachments else [])
    return _send(state, box, fwd)


@tool(write=True, sensitive=("mailbox_id", "to", "cc", "attachments"))
def save_email_draft(
    state: EmailState,
    mailbox_id: MailboxId,
    subject: Subject,
    body: Body,
    to: Addresses = [],  # noqa: B006
    cc: CopyAddresses = [],  # noqa: B006
    attachments: Attachments = [],  # noqa: B006
) -> EmailDetails:
    """Save an unsent draft in a mailbox's Drafts folder; send it later with send_email_draft."""
    box = _mailbox(state, mailbox_id)
    to_list = _addresses(to, "to")
    cc_list = _addresses(cc, "cc", taken=to_list)
    _check_attachments(attachments)
    draft = _new_message(state, box, to_list, cc_list, subject, body, attachments, draft=True)
    state.messages[draft.message_id] = draft
    return _details(state, draft)


@tool(write=True, sensitive=("message_id",))
def send_email_draft(
    state: EmailState,
    message_id: entity_id("message", "Id of a draft in a Drafts folder, e.g. 'MSG-0101'.", example="MSG-0101"),
) -> SendReceipt:
    """Send a saved draft; it moves to the Sent folder and keeps its message id."""
    msg = _message(state, message_id)
    folder = state.folders[msg.folder_id]
    require(msg.is_draft, f"draft '{message_id}' was already sent at {msg.timestamp} (it is in {folder.name})"
            if folder.kind == "sent" else f"message '{message_id}' is not a draft (it is in {folder.name}); "
            "use forward_email or reply_to_email to send it on",
            reason='conflict', params=('message',),
            rejected=(message_id, msg.timestamp, folder.name))
    require(bool(msg.to), f"draft '{message_id}' has no recipients; save a new draft with 'to' or use send_email",
            rejected=(message_id,))
    _check_attachments(msg.attachments)
    box = state.mailboxes[msg.mailbox_id]
    state.advance()
    msg.timestamp = state.now
    if box.signature:
        msg.body = f"{msg.body}\n\n{box.signature}"
    return _send(state, box, msg)


@tool(write=True, sensitive=("message_id",))
def move_email(
    state: EmailState,
    message_id: MessageId,
    folder: entity_id("folder", "Destination folder name (or id) in the same mailbox, e.g. 'Archive'.", example="Archive"),
) -> EmailSummary:
    """Move a message to another folder of its mailbox (e.g. archive it or file it in a custom folder)."""
    msg = _message(state, message_id)
    require(not msg.is_draft, f"message '{message_id}' is a draft; drafts stay in Drafts until sent or deleted",
            params=('message',), rejected=(message_id,))
    target = _folder(state, msg.mailbox_id, folder)
    require(target.kind != "drafts", "only drafts live in the Drafts folder (parameter 'folder'); choose another folder",
            reason='state', params=('folder',), wanted=('drafts',))
    require(target.folder_id != msg.folder_id, f"message '{message_id}' is already in {target.name}",
            reason='conflict', params=('message',), rejected=(message_id, target.name))
    msg.folder_id = target.folder_id
    return _summary(state, msg)


@tool(write=True, sensitive=("message_ids",))
def mark_email_read(
    state: EmailState,
    message_ids: entity_ids("message", "Message ids to update.", min_length=1, max_length=50),
    read: Annotated[bool, Field(description="True marks them read, false marks them unread.")] = True,
) -> ReadMarkResult:
    """Mark one or more messages as read (or unread)."""
    msgs = [_message(state, mid, "message_ids") for mid in dict.fromkeys(message_ids)]
    changed = [m for m in msgs if m.read != read]
    require(bool(changed), f"all {len(msgs)} message(s) are already {'read' if read else 'unread'}",
            reason='conflict', params=('message',))
    for m in changed:
        m.read = read
    updated = [m.message_id for m in changed]
    return ReadMarkResult(read=read, updated=updated,
                          unchanged=[m.message_id for m in msgs if m.message_id not in updated])


@tool(write=True, sensitive=("message_id",))
def delete_email(state: EmailState, message_id: MessageId) -> DeleteResult:
    """Delete a message: it moves to Trash; deleting it from Trash (or discarding a draft) removes it for good."""
    msg = _message(state, message_id)
    if msg.is_draft or state.folders[msg.folder_id].kind == "trash":
        del state.messages[message_id]
        return DeleteResult(message_id=message_id, permanently_deleted=True, folder=None)
    msg.folder_id = _kind_folder(state, msg.mailbox_id, "trash").folder_id
    return DeleteResult(message_id=message_id, permanently_deleted=False, folder="Trash")


@tool(write=True, sensitive=("mailbox_id",))
def create_email_folder(
    state: EmailState,
    mailbox_id: MailboxId,
    name: text("title", "New folder name, e.g. 'Receipts'.", listed="name", example="Receipts", min_length=1, max_length=40),
) -> FolderInfo:
    """Create a custom folder in a mailbox."""
    _mailbox(state, mailbox_id)
    clean = " ".join(name.split())
    require(bool(clean) and "/" not in clean, f"folder name must be non-empty and contain no '/', got '{name}'",
            params=('folder', 'name'), rejected=(name,))
    names = [f.name for f in _folders(state, mailbox_id)]
    require(clean.lower() not in (n.lower() for n in names),
            f"folder '{clean}' already exists in mailbox '{mailbox_id}'; folders: {', '.join(names)}",
            reason='conflict', params=('folder',), rejected=(clean, mailbox_id),
            choices=tuple(names))
    folder = Folder(folder_id=state.new_id("FLD"), mailbox_id=mailbox_id, name=clean, kind="custom")
    state.folders[folder.folder_id] = folder
    return FolderInfo(folder_id=folder.folder_id, name=clean, kind="custom", total=0, unread=0)


@tool(write=True, sensitive=("mailbox_id",))
def set_auto_reply(
    state: EmailState,
    mailbox_id: MailboxId,
    enabled: Annotated[bool, Field(description="True turns the vacation auto-reply on, false turns it off.")],
    start_date: Annotated[day("A calendar date.", listed="start_date") | None, Field(description="First day to auto-reply; needed when enabling.")] = None,
    end_date: Annotated[day("A calendar date.", listed="end_date", role="end") | None, Field(description="Last day to auto-reply; needed when enabling.")] = None,
    message: text("body", "Auto-reply text; needed when enabling.", listed="message", max_length=1000) = "",
    subject: text("title", "Auto-reply subject prefix.", listed="subject", max_length=100) = "Out of office",
) -> MailboxSettings:
    """Turn a mailbox's vacation auto-reply on for a date range (with a message) or off."""
    box = _mailbox(state, mailbox_id)
    if not enabled:
        require(box.auto_reply.enabled, f"the auto-reply of mailbox '{mailbox_id}' is already off",
                reason='conflict', rejected=(mailbox_id,))
        box.auto_reply = box.auto_reply.model_copy(update={"enabled": False})
        return get_mailbox_settings(state, mailbox_id)
    require(start_date is not None and end_date is not None, "start_date and end_date are required to enable the auto-reply",
            reason='missing', params=('end_date', 'start_date'))
    start = parse_day(start_date or "", "start_date").isoformat()
    end = parse_day(end_date or "", "end_date").isoformat()
    require(end >= start, f"end_date {end} is before start_date {start}",
            params=('end_date', 'start_date'), rejected=(end, start))
    require(end >= state.now[:10], f"end_date {end} is in the past (today is {state.now[:10]})",
            reason='past', params=('end_date',), rejected=(end,))
    require(bool(message.strip()), "message must not be empty when enabling the auto-reply",
            params=('message',))
    box.auto_reply = AutoReply(enabled=True, start_date=start, end_date=end, subject=subject.strip(), message=message.strip())
    return get_mailbox_settings(state, mailbox_id)
