"""Messaging tools: chat users, contacts, conversations, messages, reactions, groups, blocks, pins."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    Limit,
    Offset,
    Page,
    entity_id,
    entity_ids,
    moment,
    naming,
    parse_moment,
    text,
)
from prove.env.world import iso
from prove_servers.messaging.state import (
    EDIT_WINDOW_MINUTES,
    MAX_GROUP_MEMBERS,
    MAX_PINNED,
    MAX_TEXT_CHARS,
    BlockAction,
    ChatState,
    ChatUser,
    Conversation,
    ConversationId,
    ConversationKind,
    Emoji,
    Message,
    MessageId,
    PinAction,
    Reaction,
    UserId,
    UserStatus,
)

Text = text("body", f"Message text, 1 to {MAX_TEXT_CHARS} characters.", listed="text", min_length=1,
            max_length=MAX_TEXT_CHARS)


class UserCard(BaseModel):
    user_id: UserId
    handle: str
    display_name: str = Field(json_schema_extra=naming("name"))
    status: UserStatus
    status_message: str
    last_seen: str


class UserList(Page):
    users: list[UserCard]


class ContactList(Page):
    user_id: UserId
    contacts: list[UserCard]


class ConversationSummary(BaseModel):
    conversation_id: ConversationId
    kind: ConversationKind
    title: str = Field(json_schema_extra=naming("title"), description="Group name, or the other person's display name for a direct chat.")
    member_count: int
    muted: bool = Field(description="Whether the listing user has muted this conversation.")
    last_message_at: str | None
    last_message_preview: str | None


class ConversationList(Page):
    conversations: list[ConversationSummary]


class ConversationDetail(Conversation):
    pinned_messages: list[Message] = Field(description="The pinned messages, in pinning order.")
    message_count: int


class MessageList(Page):
    messages: list[Message]


def _user(state: ChatState, user_id: str, param: str = "user_id") -> ChatUser:
    return find(state.users, user_id)


def _conversation(state: ChatState, conversation_id: str) -> Conversation:
    return find(state.conversations, conversation_id)


def _message(state: ChatState, message_id: str, param: str = "message_id") -> Message:
    return find(state.messages, message_id)


def _card(user: ChatUser) -> UserCard:
    return UserCard(user_id=user.user_id, handle=user.handle, display_name=user.display_name,
                    status=user.status, status_message=user.status_message, last_seen=user.last_seen)


def _member(conv: Conversation, user_id: str, param: str) -> None:
    require(user_id in conv.members,
            f"user '{user_id}' ({param}) is not a member of conversation '{conv.conversation_id}'; "
            f"members: {known(conv.members)}",
            params=(param,), rejected=(user_id, conv.conversation_id), choices=shown(conv.members))


def _admin_of_group(conv: Conversation, admin_id: str) -> None:
    require(conv.kind == "group",
            f"conversation '{conv.conversation_id}' is a direct chat; members can only be added to or "
            "removed from group chats (create one with create_group_chat)",
            reason='state', rejected=(conv.conversation_id,), wanted=('group',))
    _member(conv, admin_id, "admin_id")
    require(admin_id in conv.admins,
            f"only admins of '{conv.conversation_id}' can add or remove members; '{admin_id}' is not "
            f"an admin (admins: {known(conv.admins)})",
            reason='state', rejected=(conv.conversation_id, admin_id), choices=shown(conv.admins))


def _not_blocked(state: ChatState, sender_id: str, other_id: str) -> None:
    require(other_id not in state.users[sender_id].blocked,
            f"'{sender_id}' has blocked '{other_id}'; unblock them with block_chat_user "
            "(action='unblock') before messaging them",
            params=('action',), rejected=(sender_id, other_id))
    require(sender_id not in state.users[other_id].blocked,
            f"'{other_id}' has blocked '{sender_id}'; messages to them cannot be delivered",
            rejected=(other_id, sender_id))


def _own_recent(state: ChatState, msg: Message, user_id: str, verb: str) -> None:
    require(not msg.deleted, f"message '{msg.message_id}' was deleted and cannot be {verb}",
            rejected=(msg.message_id, verb))
    require(msg.sender_id == user_id,
            f"only the sender ('{msg.sender_id}') can change message '{msg.message_id}'; "
            f"user_id '{user_id}' did not send it",
            reason='state', params=('user_id',), rejected=(msg.message_id, user_id), choices=(msg.sender_id,), wanted=('sender',))
    age = state.now_dt() - datetime.fromisoformat(msg.timestamp)
    require(age <= timedelta(minutes=EDIT_WINDOW_MINUTES),
            f"message '{msg.message_id}' was sent at {msg.timestamp}, more than {EDIT_WINDOW_MINUTES} "
            f"minutes before now ({state.now}), so it can no longer be {verb}",
            reason='limit', rejected=(msg.message_id, msg.timestamp, EDIT_WINDOW_MINUTES, verb))


def _newest_first(messages: list[Message]) -> list[Message]:
    return sorted(messages, key=lambda m: (m.timestamp, m.message_id), reverse=True)


def _direct_between(state: ChatState, a: str, b: str) -> Conversation | None:
    pair = sorted([a, b])
    return next((c for c in state.conversations.values()
                 if c.kind == "direct" and c.members == pair), None)


def _detail(state: ChatState, conv: Conversation) -> ConversationDetail:
    count = sum(1 for m in state.messages.values() if m.conversation_id == conv.conversation_id)
    pinned = [state.messages[mid] for mid in conv.pinned_message_ids]
    return ConversationDetail(**conv.model_dump(), pinned_messages=pinned, message_count=count)


@tool()
def search_chat_users(
    state: ChatState,
    query: text("query", "Case-insensitive substring of the handle, display name "
                                            "or phone number; empty matches everyone.", listed="display_name") = "",
    status: Annotated[UserStatus | None, Field(description="Only users with this presence status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> UserList:
    """Find chat users by handle, name or phone number, optionally only those online, away, etc."""
    q = query.strip().lower().lstrip("@")
    found = [
        _card(u) for u in state.users.values()
        if (q in u.handle or q in u.display_name.lower() or q in u.phone)
        and (status is None or u.status == status)
    ]
    return UserList.of(found, offset, limit)


@tool(sensitive=("user_id",))
def get_chat_user(state: ChatState, user_id: UserId) -> ChatUser:
    """Get a user's full profile: handle, phone, status, contact ids and the ids they have blocked."""
    return _user(state, user_id)


@tool(sensitive=("user_id",))
def list_chat_contacts(
    state: ChatState,
    user_id: UserId,
    status: Annotated[UserStatus | None, Field(description="Only contacts with this presence status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ContactList:
    """List the people in a user's address book with their presence, e.g. to see who is online, a page at a time."""
    user = _user(state, user_id)
    cards = [_card(state.users[c]) for c in user.contacts
             if status is None or state.users[c].status == status]
    return ContactList.of(cards, offset, limit, user_id=user_id)


@tool(sensitive=("user_id",))
def list_chat_conversations(
    state: ChatState,
    user_id: entity_id("user", "List this user's conversations, e.g. 'USR-0003'.", example="USR-0003"),
    kind: Annotated[ConversationKind | None, Field(description="Only direct or only group chats.")] = None,
    muted: Annotated[bool | None, Field(description="Only conversations this user has (true) or "
                                                    "has not (false) muted.")] = None,
    query: text("query", "Case-insensitive substring of the group name or of a "
                                            "member's display name.", listed="title") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ConversationList:
    """List the conversations a user belongs to, most recently active first, with a preview of the last message."""
    _user(state, user_id)
    last: dict[str, Message] = {}
    for m in state.messages.values():
        prev = last.get(m.conversation_id)
        if prev is None or (m.timestamp, m.message_id) > (prev.timestamp, prev.message_id):
            last[m.conversation_id] = m
    q = query.strip().lower()
    rows: list[tuple[str, ConversationSummary]] = []
    for conv in state.conversations.values():
        if user_id not in conv.members or (kind is not None and conv.kind != kind):
            continue
        is_muted = user_id in conv.muted_by
        if muted is not None and is_muted != muted:
            continue
        names = [state.users[m].display_name.lower() for m in conv.members if m != user_id]
        if q and not (q in (conv.name or "").lower() or any(q in n for n in names)):
            continue
        other = next((m for m in conv.members if m != user_id), user_id)
        msg = last.get(conv.conversation_id)
        preview = None if msg is None else ("(deleted)" if msg.deleted else msg.text[:80])
        rows.append(((msg.timestamp if msg else conv.created_at) + conv.conversation_id, ConversationSummary(
            conversation_id=conv.conversation_id, kind=conv.kind,
            title=conv.name or state.users[other].display_name, member_count=len(conv.members),
            muted=is_muted, last_message_at=msg.timestamp if msg else None, last_message_preview=preview,
        )))
    found = [summary for _, summary in sorted(rows, key=lambda r: r[0], reverse=True)]
    return ConversationList.of(found, offset, limit)


@tool(sensitive=("conversation_id",))
def get_chat_conversation(state: ChatState, conversation_id: ConversationId) -> ConversationDetail:
    """Get a conversation's members, admins, who muted it, and its pinned messages."""
    return _detail(state, _conversation(state, conversation_id))


@tool(sensitive=("conversation_id", "sender_id"))
def list_chat_messages(
    state: ChatState,
    conversation_id: ConversationId,
    since: Annotated[moment("Only messages sent at or after this time.") | None,
                     Field(description="Only messages sent at or after this time.")] = None,
    sender_id: Annotated[UserId | None, Field(description="Only messages sent by this user id.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> MessageList:
    """List a conversation's messages, newest first, optionally since a time or from one sender."""
    _conversation(state, conversation_id)
    if sender_id is not None:
        _user(state, sender_id, "sender_id")
    start = None if since is None else iso(parse_moment(since, "since"))
    found = _newest_first([
        m for m in state.messages.values()
        if m.conversation_id == conversation_id
        and (start is None or m.timestamp >= start)
        and (sender_id is None or m.sender_id == sender_id)
    ])
    return MessageList.of(found, offset, limit)


@tool(sensitive=("user_id", "conversation_id", "sender_id"))
def search_chat_messages(
    state: ChatState,
    query: text("query", "Case-insensitive text to look for in messages.", min_length=1, max_length=200, listed="text"),
    user_id: Annotated[UserId | None, Field(description="Only conversations this user belongs to.")] = None,
    conversation_id: Annotated[ConversationId | None, Field(description="Only this conversation.")] = None,
    sender_id: Annotated[UserId | None, Field(description="Only messages sent by this user id.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> MessageList:
    """Search message text across conversations, newest first; deleted messages are never matched."""
    if user_id is not None:
        _user(state, user_id)
    if conversation_id is not None:
        _conversation(state, conversation_id)
    if sender_id is not None:
        _user(state, sender_id, "sender_id")
    q = query.strip().lower()
    require(q != "", "query must not be blank", params=('query',))
    found = _newest_first([
        m for m in state.messages.values()
        if not m.deleted and q in m.text.lower()
        and (user_id is None or user_id in state.conversations[m.conversation_id].members)
        and (conversation_id is None or m.conversation_id == conversation_id)
        and (sender_id is None or m.sender_id == sender_id)
    ])
    return MessageList.of(found, offset, limit)


@tool(sensitive=("message_id",))
def get_chat_message(state: ChatState, message_id: MessageId) -> Message:
    """Get one message by id, e.g. the message another one replies to."""
    return _message(state, message_id)


@tool(write=True, sensitive=("sender_id", "conversation_id", "recipient_id", "reply_to_message_id"))
def send_chat_message(
    state: ChatState,
    sender_id: entity_id("user", "User id of the sender, e.g. 'USR-0003'.", example="USR-0003"),
    text: Text,
    conversation_id: Annotated[ConversationId | None, Field(description="Existing conversation to post in; "
                                                                        "give this or recipient_id, not both.")] = None,
    recipient_id: Annotated[UserId | None, Field(description="User id to message directly; give this or "
                                                             "conversation_id, not both.")] = None,
    reply_to_message_id: Annotated[MessageId | None, Field(description="Message in the same conversation "
                                                                       "that this one replies to.")] = None,
) -> Message:
    """Send a message to a conversation the sender belongs to, or directly to one user (recipient_id),
    which opens a direct chat if there is none. Users who blocked each other cannot message directly."""
    _user(state, sender_id, "sender_id")
    require((conversation_id is None) != (recipient_id is None),
            "give exactly one of conversation_id (post in an existing chat) or recipient_id "
            "(direct message to one user)",
            reason='missing', params=('conversation_id', 'recipient_id'))
    require(text.strip() != "", "text must not be blank", params=('text',))
    conv: Conversation | None
    if conversation_id is not None:
        conv = _conversation(state, conversation_id)
        _member(conv, sender_id, "sender_id")
        if conv.kind == "direct":
            _not_blocked(state, sender_id, next(m for m in conv.members if m != sender_id))
    else:
        assert recipient_id is not None
        _user(state, recipient_id, "recipient_id")
        require(recipient_id != sender_id, "recipient_id must differ from sender_id",
                params=('recipient_id', 'sender_id'))
        _not_blocked(state, sender_id, recipient_id)
        conv = _direct_between(state, sender_id, recipient_id)
    if reply_to_message_id is not None:
        parent = _message(state, reply_to_message_id, "reply_to_message_id")
        here = conv.conversation_id if conv else "a new direct chat"
        require(conv is not None and parent.conversation_id == conv.conversation_id,
                f"reply_to_message_id '{reply_to_message_id}' is in conversation "
                f"'{parent.conversation_id}', not in {here!r}; a reply must be in the same conversation",
                params=('reply_to_message_id',),
                rejected=(reply_to_message_id, parent.conversation_id, here))
    state.advance()
    if conv is None:
        assert recipient_id is not None
        conv = Conversation(conversation_id=state.new_id("CNV"), kind="direct",
                            members=sorted([sender_id, recipient_id]), created_by=sender_id,
                            created_at=state.now)
        state.conversations[conv.conversation_id] = conv
    msg = Message(message_id=state.new_id("MSG"), conversation_id=conv.conversation_id,
                  sender_id=sender_id, text=text, timestamp=state.now, reply_to=reply_to_message_id)
    state.messages[msg.message_id] = msg
    return msg


@tool(write=True, sensitive=("user_id", "message_id"))
def edit_chat_message(
    state: ChatState,
    user_id: entity_id("user", "User making the edit; must be the message's sender."),
    message_id: MessageId,
    text: Text,
) -> Message:
    """Replace the text of a message; only its sender can, within 15 minutes of sending it."""
    msg = _message(state, message_id)
    _user(state, user_id)
    _own_recent(state, msg, user_id, "edited")
    require(text.strip() != "", "text must not be blank", params=('text',))
    msg.text, msg.edited, msg.edited_at = text, True, state.now
    return msg


@tool(write=True, sensitive=("user_id", "message_id"))
def delete_chat_message(
    state: ChatState,
    user_id: entity_id("user", "User deleting the message; must be its sender."),
    message_id: MessageId,
) -> Message:
    """Delete a message for everyone (its text and reactions go and it is unpinned); only its
    sender can, within 15 minutes of sending it."""
    msg = _message(state, message_id)
    _user(state, user_id)
    _own_recent(state, msg, user_id, "deleted")
    msg.text, msg.deleted, msg.reactions = "", True, []
    conv = state.conversations[msg.conversation_id]
    conv.pinned_message_ids = [m for m in conv.pinned_message_ids if m != message_id]
    return msg


@tool(write=True, sensitive=("user_id", "message_id"))
def react_to_chat_message(
    state: ChatState,
    user_id: entity_id("user", "Reacting user; must be a member of the conversation."),
    message_id: MessageId,
    emoji: Annotated[Emoji, Field(description="The reaction.")],
) -> Message:
    """React to a message with an emoji; each user has one reaction per message, so a new one replaces theirs."""
    msg = _message(state, message_id)
    _user(state, user_id)
    _member(state.conversations[msg.conversation_id], user_id, "user_id")
    require(not msg.deleted, f"message '{message_id}' was deleted and cannot be reacted to",
            rejected=(message_id,))
    mine = next((r for r in msg.reactions if r.user_id == user_id), None)
    require(mine is None or mine.emoji != emoji,
            f"user '{user_id}' already reacted to '{message_id}' with {emoji}",
            reason='conflict', rejected=(user_id, message_id, emoji))
    others = [r for r in msg.reactions if r.user_id != user_id]
    msg.reactions = sorted([*others, Reaction(user_id=user_id, emoji=emoji)], key=lambda r: r.user_id)
    return msg


@tool(write=True, sensitive=("creator_id", "member_ids"))
def create_group_chat(
    state: ChatState,
    creator_id: entity_id("user", "User creating the group; becomes its admin."),
    name: text("title", "Group name.", listed="name", min_length=1, max_length=60),
    member_ids: entity_ids(
        "user", f"User ids to add besides the creator: at least 2, at most {MAX_GROUP_MEMBERS - 1}.",
        min_length=2, max_length=MAX_GROUP_MEMBERS - 1),
) -> Conversation:
    """Create a named group chat; the creator becomes its admin. A group holds 3 to 10 members."""
    _user(state, creator_id, "creator_id")
    for member in member_ids:
        _user(state, member, "member_ids")
    others = sorted(set(member_ids) - {creator_id})
    require(len(others) >= 2,
            f"a group needs at least 2 members besides the creator, got {len(others)}; "
            "to talk to one person use send_chat_message with recipient_id",
            reason='limit', params=('recipient_id',))
    require(name.strip() != "", "name must not be blank", params=('name',))
    blockers = [m for m in others if creator_id in state.users[m].blocked]
    require(not blockers, f"{', '.join(repr(b) for b in blockers)} blocked '{creator_id}' and cannot be added "
            "to a group they create; leave them out of member_ids",
            params=('member_ids',), rejected=(creator_id,),
            choices=tuple(repr(b) for b in blockers))
    conv = Conversation(conversation_id=state.new_id("CNV"), kind="group", name=name.strip(),
                        members=sorted([*others, creator_id]), admins=[creator_id],
                        created_by=creator_id, created_at=state.now)
    state.conversations[conv.conversation_id] = conv
    return conv


@tool(write=True, sensitive=("admin_id", "conversation_id", "user_id"))
def add_group_chat_member(
    state: ChatState,
    admin_id: entity_id("user", "Admin of the group doing the adding."),
    conversation_id: ConversationId,
    user_id: entity_id("user", "User to add to the group."),
) -> Conversation:
    """Add a user to a group chat; only the group's admins can, and a group holds at most 10 members."""
    conv = _conversation(state, conversation_id)
    _user(state, admin_id, "admin_id")
    target = _user(state, user_id)
    _admin_of_group(conv, admin_id)
    require(user_id not in conv.members, f"user '{user_id}' is already a member of '{conversation_id}'",
            reason='conflict', rejected=(user_id, conversation_id))
    require(len(conv.members) < MAX_GROUP_MEMBERS,
            f"group '{conversation_id}' is full ({len(conv.members)} of {MAX_GROUP_MEMBERS} members); "
            "remove a member first", rejected=(conversation_id, MAX_GROUP_MEMBERS))
    require(admin_id not in target.blocked,
            f"user '{user_id}' has blocked '{admin_id}' and cannot be added to groups by them",
            rejected=(user_id, admin_id))
    conv.members = sorted([*conv.members, user_id])
    return conv


@tool(write=True, sensitive=("admin_id", "conversation_id", "user_id"))
def remove_group_chat_member(
    state: ChatState,
    admin_id: entity_id("user", "Admin of the group doing the removing."),
    conversation_id: ConversationId,
    user_id: entity_id("user", "Member to remove (an admin may remove themselves)."),
) -> Conversation:
    """Remove a member from a group chat; only admins can, and the group's only admin cannot be removed."""
    conv = _conversation(state, conversation_id)
    _user(state, admin_id, "admin_id")
    _user(state, user_id)
    _admin_of_group(conv, admin_id)
    _member(conv, user_id, "user_id")
    require(conv.admins != [user_id],
            f"'{user_id}' is the only admin of '{conversation_id}' and cannot be removed",
            reason='state', rejected=(user_id, conversation_id))
    conv.members = [m for m in conv.members if m != user_id]
    conv.admins = [m for m in conv.admins if m != user_id]
    conv.muted_by = [m for m in conv.muted_by if m != user_id]
    return conv


@tool(write=True, sensitive=("user_id", "target_user_id"))
def block_chat_user(
    state: ChatState,
    user_id: entity_id("user", "User who blocks or unblocks."),
    target_user_id: entity_id("user", "User to block or unblock."),
    action: Annotated[BlockAction, Field(description="Block (default) or unblock.")] = "block",
) -> ChatUser:
    """Block or unblock a user; blocked users cannot message each other directly or add each other to groups."""
    user = _user(state, user_id)
    _user(state, target_user_id, "target_user_id")
    require(target_user_id != user_id, "user_id and target_user_id must differ",
            params=('target_user_id', 'user_id'))
    if action == "block":
        require(target_user_id not in user.blocked, f"'{user_id}' has already blocked '{target_user_id}'",
                reason='conflict', rejected=(user_id, target_user_id))
        user.blocked = sorted([*user.blocked, target_user_id])
    else:
        require(target_user_id in user.blocked,
                f"'{user_id}' has not blocked '{target_user_id}'; blocked: {known(user.blocked)}",
                rejected=(user_id, target_user_id), choices=shown(user.blocked))
        user.blocked = [b for b in user.blocked if b != target_user_id]
    return user


@tool(write=True, sensitive=("user_id", "message_id"))
def pin_chat_message(
    state: ChatState,
    user_id: entity_id("user", "Member of the conversation who pins or unpins."),
    message_id: MessageId,
    action: Annotated[PinAction, Field(description="Pin (default) or unpin.")] = "pin",
) -> ConversationDetail:
    """Pin a message in its conversation (at most 3 pinned per conversation) or unpin it; any member can."""
    msg = _message(state, message_id)
    _user(state, user_id)
    conv = state.conversations[msg.conversation_id]
    _member(conv, user_id, "user_id")
    pinned = conv.pinned_message_ids
    if action == "pin":
        require(not msg.deleted, f"message '{message_id}' was deleted and cannot be pinned",
                rejected=(message_id,))
        require(message_id not in pinned, f"message '{message_id}' is already pinned",
                reason='conflict', rejected=(message_id,))
        require(len(pinned) < MAX_PINNED,
                f"conversation '{conv.conversation_id}' already has {MAX_PINNED} pinned messages "
                f"({known(pinned)}); unpin one first with action='unpin'",
                reason='conflict', params=('action',), rejected=(conv.conversation_id, MAX_PINNED),
                choices=shown(pinned))
        conv.pinned_message_ids = [*pinned, message_id]
    else:
        require(message_id in pinned,
                f"message '{message_id}' is not pinned; pinned in '{conv.conversation_id}': {known(pinned)}",
                rejected=(message_id, conv.conversation_id), choices=shown(pinned))
        conv.pinned_message_ids = [m for m in pinned if m != message_id]
    return _detail(state, conv)
