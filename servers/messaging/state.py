"""Messaging server state: chat users, contacts and blocks, conversations, messages, reactions, pins."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, entity_ids, naming
from prove.env.world import (
    CITIES,
    COMPANIES,
    FIRST_NAMES,
    LAST_NAMES,
    days_before,
    phone,
    shift,
)

UserStatus = Literal["online", "away", "offline", "dnd"]
ConversationKind = Literal["direct", "group"]
Emoji = Literal["thumbs_up", "heart", "laugh", "surprised", "sad", "pray"]
BlockAction = Literal["block", "unblock"]
PinAction = Literal["pin", "unpin"]

MAX_TEXT_CHARS = 1000
"""Longest message text."""
MAX_GROUP_MEMBERS = 10
"""Most members a group chat may hold, its creator included."""
MAX_PINNED = 3
"""Most pinned messages per conversation."""
EDIT_WINDOW_MINUTES = 15
"""A sender may edit or delete a message only this long after sending it."""

UserId = entity_id("user", "Chat user id, e.g. 'USR-0003'.", example="USR-0003")
ConversationId = entity_id("conversation", "Conversation id, e.g. 'CNV-0007'.", example="CNV-0007")
MessageId = entity_id("message", "Message id, e.g. 'MSG-0042'.", example="MSG-0042")


class ChatUser(Record):
    user_id: UserId
    handle: str = Field(description="Unique @handle without the '@'.")
    display_name: str = Field(json_schema_extra=naming("name"))
    phone: str
    status: UserStatus
    status_message: str = ""
    last_seen: str
    contacts: entity_ids("user", "Sorted user ids in the address book.") = Field(default_factory=list)
    blocked: entity_ids("user", "Sorted user ids this user has blocked.") = Field(default_factory=list)


class Conversation(Record):
    conversation_id: ConversationId
    kind: ConversationKind
    name: str | None = Field(json_schema_extra=naming("name"), default=None, description="Group name; None for direct conversations.")
    members: entity_ids("user", "Sorted member user ids.")
    admins: entity_ids("user", "Sorted admin ids (groups only).") = Field(default_factory=list)
    muted_by: entity_ids("user", "Sorted ids of members who muted it.") = Field(default_factory=list)
    pinned_message_ids: entity_ids("message", "In pinning order.") = Field(default_factory=list)
    created_by: UserId
    created_at: str


class Reaction(Record):
    user_id: UserId
    emoji: Emoji


class Message(Record):
    message_id: MessageId
    conversation_id: ConversationId
    sender_id: UserId
    text: str = Field(description="Empty once the message is deleted.")
    timestamp: str
    reply_to: MessageId | None = Field(None, description="Id of the message this one replies to.")
    edited: bool = False
    edited_at: str | None = None
    deleted: bool = False
    reactions: list[Reaction] = Field(default_factory=list, description="At most one per user.")


class ChatState(ServerState):
    users: dict[str, ChatUser] = Field(default_factory=dict)
    conversations: dict[str, Conversation] = Field(default_factory=dict)
    messages: dict[str, Message] = Field(default_factory=dict)


_EMOJIS: tuple[Emoji, ...] = ("thumbs_up", "heart", "laugh", "surprised", "sad", "pray")
_STATUS_MESSAGES = (
    "", "", "", "Available", "At the gym", "Busy, urgent calls only", "On vacation until Monday",
    "Working from {city}", "Battery about to die", "In meetings all day",
)
_GROUP_NAMES = (
    "Weekend Hikers", "Book Club", "Flatmates", "Family", "Marathon Training", "Office Lunch",
    "Board Game Night", "Project Falcon", "Climbing Crew", "Wedding Planning", "Five-a-side Football",
    "Parents of Class 3B", "Road Trip 2026", "Photography Walks",
)
_TEXTS = (
    "Are we still on for {day}?", "Running about {n} minutes late, sorry!", "Can you send me the {thing}?",
    "Just landed in {city}!", "Meeting moved to {time}.", "Thanks, that helps a lot.", "Sounds good to me.",
    "Who's bringing the {food}?", "Happy birthday, {first}!", "Did you see the game last night?",
    "I'll call you after work.", "The {thing} is in the shared folder.", "Can we push this to {day}?",
    "Lunch at {time}? I was thinking {food}.", "On my way.", "Great job on the presentation!",
    "Reminder: rent is due on the 1st.", "Anyone up for a run on {day}?",
    "I booked a table for {n} at {time}.", "Has anyone heard back from {company}?",
    "Photos from {city} are up, check them out.", "Can someone pick up {food} on the way?",
    "I'm out of office until {day}.", "Let's do a quick call at {time}.", "Finished the {thing}, have a look.",
    "Is {first} joining us?", "Traffic is terrible, start without me.", "See you all {day}!",
)
_FILL = {
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "tomorrow"),
    "thing": ("slides", "invoice", "contract draft", "budget sheet", "tickets", "itinerary", "recipe"),
    "time": ("9:30", "11:00", "12:30", "15:00", "17:45", "19:00", "20:30"),
    "food": ("pizza", "snacks", "sushi", "cake", "coffee", "tacos", "bagels"),
}


def _text(rng: random.Random, first: str) -> str:
    return rng.choice(_TEXTS).format(
        day=rng.choice(_FILL["day"]), thing=rng.choice(_FILL["thing"]), time=rng.choice(_FILL["time"]),
        food=rng.choice(_FILL["food"]), city=rng.choice(CITIES), company=rng.choice(COMPANIES),
        n=rng.randrange(2, 9), first=first,
    )


def initial_state(seed: int) -> ChatState:
    """A chat app with ~30 users, ~30 conversations and ~300 messages; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-18T14:30"
    state = ChatState(now=now)
    usr_id, cnv_id, msg_id = Counter("USR"), Counter("CNV"), Counter("MSG")
    handles: set[str] = set()
    for _ in range(rng.randrange(26, 34)):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        handle = f"{first}_{last}".lower()
        while handle in handles:
            handle = f"{first.lower()}_{last.lower()}{rng.randrange(2, 99)}"
        handles.add(handle)
        status: UserStatus = rng.choices(["online", "away", "offline", "dnd"], weights=[4, 2, 5, 1])[0]
        uid = usr_id()
        state.users[uid] = ChatUser(
            user_id=uid, handle=handle, display_name=f"{first} {last}", phone=phone(rng), status=status,
            status_message=rng.choice(_STATUS_MESSAGES).format(city=rng.choice(CITIES)),
            last_seen=now if status == "online" else days_before(now, rng, 6),
        )
    ids = list(state.users)
    for uid, user in state.users.items():
        others = [o for o in ids if o != uid]
        user.contacts = sorted(rng.sample(others, rng.randrange(4, 11)))
        if rng.random() < 0.2:
            user.blocked = sorted(rng.sample(others, rng.randrange(1, 3)))

    def conversation(kind: ConversationKind, members: list[str], name: str | None) -> Conversation:
        cid = cnv_id()
        admins = sorted({members[0], *rng.sample(members, rng.randrange(0, 2))}) if kind == "group" else []
        muted = sorted(m for m in members if rng.random() < 0.12)
        conv = Conversation(
            conversation_id=cid, kind=kind, name=name, members=sorted(members), admins=admins,
            muted_by=muted, created_by=members[0], created_at=days_before(now, rng, 400, 35),
        )
        state.conversations[cid] = conv
        return conv

    pairs: set[tuple[str, str]] = set()
    for _ in range(rng.randrange(18, 24)):
        uid = rng.choice(ids)
        other = rng.choice(state.users[uid].contacts)
        pair = (min(uid, other), max(uid, other))
        if pair not in pairs:
            pairs.add(pair)
            conversation("direct", [uid, other], None)
    names = rng.sample(_GROUP_NAMES, rng.randrange(8, 12))
    for i, name in enumerate(names):
        size = MAX_GROUP_MEMBERS if i == 0 else rng.randrange(3, 9)  # one group is full
        conversation("group", rng.sample(ids, size), name)

    # Draft messages per conversation, then number them in global time order.
    drafts: list[tuple[str, str, str]] = []  # (timestamp, conversation_id, sender_id)
    for cid, conv in state.conversations.items():
        stamps = [days_before(now, rng, 30, 1) for _ in range(rng.randrange(4, 16))]
        if rng.random() < 0.35:  # recent activity: still inside the edit window
            stamps.append(shift(now, minutes=-rng.randrange(1, EDIT_WINDOW_MINUTES - 2)))
        drafts += [(ts, cid, rng.choice(conv.members)) for ts in stamps]
    drafts.sort()
    per_conv: dict[str, list[str]] = {}
    for ts, cid, sender in drafts:
        mid = msg_id()
        earlier = per_conv.setdefault(cid, [])
        members = state.conversations[cid].members
        msg = Message(
            message_id=mid, conversation_id=cid, sender_id=sender, timestamp=ts,
            text=_text(rng, state.users[rng.choice(members)].display_name.split()[0]),
            reply_to=rng.choice(earlier) if earlier and rng.random() < 0.15 else None,
        )
        roll = rng.random()
        if roll < 0.04:
            msg.text, msg.deleted = "", True
        elif roll < 0.12:
            edited_at = shift(ts, minutes=rng.randrange(1, 10))
            msg.edited, msg.edited_at = True, min(edited_at, now)
        if not msg.deleted and rng.random() < 0.25:
            fans = rng.sample([m for m in members if m != sender], min(len(members) - 1, rng.randrange(1, 3)))
            msg.reactions = [Reaction(user_id=u, emoji=rng.choice(_EMOJIS)) for u in sorted(fans)]
        state.messages[mid] = msg
        earlier.append(mid)
    for n, (cid, mids) in enumerate(per_conv.items()):
        conv = state.conversations[cid]
        live = [m for m in mids if not state.messages[m].deleted]
        if conv.kind == "group" and live and (n % 3 == 0 or rng.random() < 0.3):
            conv.pinned_message_ids = rng.sample(live, min(len(live), MAX_PINNED if n % 3 == 0 else 1))
    return state

