"""Messaging server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove.env.state import state_hash
from prove_servers.messaging import SERVER
from prove_servers.messaging.state import (
    ChatState,
    ChatUser,
    Conversation,
    Message,
    Reaction,
    initial_state,
)

NOW = "2026-03-16T09:00"


def tiny() -> ChatState:
    """Ada, Bo, Cy, Di and seven extras; Cy blocked Di, Eve blocked Ada; CNV-0004 is a full group."""
    s = ChatState(now=NOW)
    people = [("ada", "Ada Chen", "online"), ("bo", "Bo Silva", "away"), ("cy", "Cy Park", "offline"),
              ("di", "Di Ito", "dnd"), ("eve", "Eve Roth", "online")]
    people += [(f"extra{i}", f"Extra Person {i}", "offline") for i in range(6, 12)]
    for n, (handle, name, status) in enumerate(people, 1):
        uid = f"USR-{n:04d}"
        s.users[uid] = ChatUser(user_id=uid, handle=handle, display_name=name, phone=f"+1-555-100-{n:04d}",
                                status=status, last_seen=NOW)
    s.users["USR-0001"].contacts = ["USR-0002", "USR-0003", "USR-0004"]
    s.users["USR-0003"].blocked = ["USR-0004"]
    s.users["USR-0005"].blocked = ["USR-0001"]
    conv = dict(created_at="2026-01-01T10:00")
    s.conversations["CNV-0001"] = Conversation(conversation_id="CNV-0001", kind="direct",
                                               members=["USR-0001", "USR-0002"], created_by="USR-0001", **conv)
    s.conversations["CNV-0002"] = Conversation(conversation_id="CNV-0002", kind="direct",
                                               members=["USR-0003", "USR-0004"], created_by="USR-0004", **conv)
    s.conversations["CNV-0003"] = Conversation(
        conversation_id="CNV-0003", kind="group", name="Book Club", members=["USR-0001", "USR-0002", "USR-0003"],
        admins=["USR-0001"], muted_by=["USR-0002"], pinned_message_ids=["MSG-0003"], created_by="USR-0001", **conv)
    s.conversations["CNV-0004"] = Conversation(
        conversation_id="CNV-0004", kind="group", name="Full House",
        members=[f"USR-{n:04d}" for n in range(1, 11)], admins=["USR-0002"], created_by="USR-0002", **conv)
    for mid, cid, sender, text, ts in (
        ("MSG-0001", "CNV-0002", "USR-0004", "hello? anyone there", "2026-03-01T10:00"),
        ("MSG-0002", "CNV-0001", "USR-0002", "Did you get the tickets?", "2026-03-10T12:00"),
        ("MSG-0003", "CNV-0003", "USR-0003", "Next book: Dune", "2026-03-12T18:00"),
        ("MSG-0004", "CNV-0003", "USR-0001", "Meeting moved to Friday", "2026-03-16T08:30"),
        ("MSG-0005", "CNV-0003", "USR-0002", "", "2026-03-16T08:48"),
        ("MSG-0006", "CNV-0001", "USR-0001", "Got the tickets, lunch at noon?", "2026-03-16T08:50"),
    ):
        s.messages[mid] = Message(message_id=mid, conversation_id=cid, sender_id=sender, text=text, timestamp=ts)
    s.messages["MSG-0005"].deleted = True
    s.messages["MSG-0006"].reply_to = "MSG-0002"
    s.messages["MSG-0003"].reactions = [Reaction(user_id="USR-0001", emoji="heart")]
    return s


hub = hub_fixture(SERVER, tiny)


def ids(rows: list[dict], key: str) -> list[str]:
    return [r[key] for r in rows]


def test_initial_state_is_seeded_linked_and_continues_ids() -> None:
    a, b = initial_state(3), initial_state(3)
    assert state_hash(a) == state_hash(b) and state_hash(a) != state_hash(initial_state(4))
    assert len(a.users) >= 20 and len(a.conversations) >= 20 and len(a.messages) >= 200
    for conv in a.conversations.values():
        assert set(conv.admins) <= set(conv.members) and len(conv.pinned_message_ids) <= 3
        assert all(a.messages[m].conversation_id == conv.conversation_id for m in conv.pinned_message_ids)
    for msg in a.messages.values():
        assert msg.sender_id in a.conversations[msg.conversation_id].members
        assert msg.reply_to is None or a.messages[msg.reply_to].conversation_id == msg.conversation_id
    assert a.new_id("MSG") not in a.messages and a.new_id("CNV") not in a.conversations


def test_users_and_contacts(hub: Hub) -> None:
    assert ids(ok(hub, "search_chat_users", query="@ada")["users"], "user_id") == ["USR-0001"]
    assert ok(hub, "search_chat_users", query="silva")["users"][0]["handle"] == "bo"
    assert ok(hub, "search_chat_users", query="555-100-0003")["total"] == 1
    assert ids(ok(hub, "search_chat_users", status="online")["users"], "user_id") == ["USR-0001", "USR-0005"]
    page = ok(hub, "search_chat_users", limit=4)
    assert page["total"] == 11 and page["next_offset"] == 4 and len(page["users"]) == 4
    assert ok(hub, "search_chat_users", offset=8, limit=4)["next_offset"] is None
    fails(hub, "search_chat_users", "status", "'online'", status="busy")
    user = ok(hub, "get_chat_user", user_id="USR-0003")
    assert user["blocked"] == ["USR-0004"] and user["status"] == "offline"
    fails(hub, "get_chat_user", "user 'USR-99' not found", "USR-0001", user_id="USR-99")
    contacts = ok(hub, "list_chat_contacts", user_id="USR-0001")
    assert contacts["total"] == 3 and ids(contacts["contacts"], "display_name") == ["Bo Silva", "Cy Park", "Di Ito"]
    assert ids(ok(hub, "list_chat_contacts", user_id="USR-0001", status="dnd")["contacts"], "user_id") == ["USR-0004"]
    fails(hub, "list_chat_contacts", "user 'USR-0042' not found", user_id="USR-0042")


def test_contacts_page(hub: Hub) -> None:
    first = ok(hub, "list_chat_contacts", user_id="USR-0001", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_chat_contacts", user_id="USR-0001", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert ids(first["contacts"] + second["contacts"], "user_id") == ["USR-0002", "USR-0003", "USR-0004"]


def test_conversations(hub: Hub) -> None:
    res = ok(hub, "list_chat_conversations", user_id="USR-0001")
    assert ids(res["conversations"], "conversation_id") == ["CNV-0001", "CNV-0003", "CNV-0004"]
    first = res["conversations"][0]
    assert first["title"] == "Bo Silva" and first["last_message_preview"].startswith("Got the tickets")
    assert res["conversations"][1]["last_message_preview"] == "(deleted)"
    assert res["conversations"][2]["last_message_at"] is None
    assert ok(hub, "list_chat_conversations", user_id="USR-0001", kind="group")["total"] == 2
    assert ids(ok(hub, "list_chat_conversations", user_id="USR-0002", muted=True)["conversations"],
               "conversation_id") == ["CNV-0003"]
    assert ok(hub, "list_chat_conversations", user_id="USR-0002", muted=False)["total"] == 2
    assert ids(ok(hub, "list_chat_conversations", user_id="USR-0001", query="book")["conversations"],
               "title") == ["Book Club"]
    assert ok(hub, "list_chat_conversations", user_id="USR-0001", query="bo silva")["total"] == 3
    page = ok(hub, "list_chat_conversations", user_id="USR-0001", limit=2)
    assert page["next_offset"] == 2 and len(page["conversations"]) == 2
    fails(hub, "list_chat_conversations", "user 'USR-77' not found", user_id="USR-77")
    fails(hub, "list_chat_conversations", "kind", "'direct'", user_id="USR-0001", kind="channel")
    conv = ok(hub, "get_chat_conversation", conversation_id="CNV-0003")
    assert conv["admins"] == ["USR-0001"] and conv["message_count"] == 3
    assert ids(conv["pinned_messages"], "text") == ["Next book: Dune"]
    fails(hub, "get_chat_conversation", "conversation 'CNV-9' not found", "CNV-0001", conversation_id="CNV-9")


def test_messages(hub: Hub) -> None:
    res = ok(hub, "list_chat_messages", conversation_id="CNV-0003")
    assert ids(res["messages"], "message_id") == ["MSG-0005", "MSG-0004", "MSG-0003"]
    assert res["messages"][0]["deleted"] and res["messages"][0]["text"] == ""
    assert ok(hub, "list_chat_messages", conversation_id="CNV-0003", since="2026-03-16T00:00")["total"] == 2
    assert ok(hub, "list_chat_messages", conversation_id="CNV-0003", since="2026-03-16T08:45")["total"] == 1
    assert ids(ok(hub, "list_chat_messages", conversation_id="CNV-0003", sender_id="USR-0003")["messages"],
               "message_id") == ["MSG-0003"]
    page = ok(hub, "list_chat_messages", conversation_id="CNV-0003", limit=2)
    assert page["next_offset"] == 2 and ok(hub, "list_chat_messages", conversation_id="CNV-0003",
                                           offset=2, limit=2)["next_offset"] is None
    fails(hub, "list_chat_messages", "since must be a date and time YYYY-MM-DDTHH:MM", conversation_id="CNV-0003",
          since="yesterday")
    fails(hub, "list_chat_messages", "got '2026-03-16'", conversation_id="CNV-0003", since="2026-03-16")
    fails(hub, "list_chat_messages", "user 'USR-404' not found", "sender_id", conversation_id="CNV-0003",
          sender_id="USR-404")
    fails(hub, "list_chat_messages", "conversation 'CNV-0099' not found", conversation_id="CNV-0099")
    assert ids(ok(hub, "search_chat_messages", query="TICKETS")["messages"], "message_id") == ["MSG-0006", "MSG-0002"]
    assert ok(hub, "search_chat_messages", query="tickets", sender_id="USR-0002")["total"] == 1
    assert ok(hub, "search_chat_messages", query="e", user_id="USR-0004")["total"] == 1  # only CNV-0002
    assert ok(hub, "search_chat_messages", query="e", conversation_id="CNV-0003")["total"] == 2  # not deleted
    fails(hub, "search_chat_messages", "query must not be blank", query="   ")
    fails(hub, "search_chat_messages", "conversation 'CNV-5' not found", query="x", conversation_id="CNV-5")
    msg = ok(hub, "get_chat_message", message_id="MSG-0006")
    assert msg["reply_to"] == "MSG-0002" and msg["sender_id"] == "USR-0001"
    fails(hub, "get_chat_message", "message 'MSG-0' not found", "MSG-0001", message_id="MSG-0")


def test_send_to_conversation_and_directly(hub: Hub) -> None:
    msg = ok(hub, "send_chat_message", sender_id="USR-0002", conversation_id="CNV-0003", text="I'm in!",
             reply_to_message_id="MSG-0004")
    assert msg["message_id"] == "MSG-0007" and msg["timestamp"] == "2026-03-16T09:01"
    assert msg["reply_to"] == "MSG-0004"
    assert ok(hub, "list_chat_messages", conversation_id="CNV-0003")["messages"][0]["text"] == "I'm in!"
    listed = ok(hub, "list_chat_conversations", user_id="USR-0001")["conversations"]
    assert listed[0]["conversation_id"] == "CNV-0003" and listed[0]["last_message_preview"] == "I'm in!"
    again = ok(hub, "send_chat_message", sender_id="USR-0001", recipient_id="USR-0002", text="see you")
    assert again["conversation_id"] == "CNV-0001"  # the existing direct chat
    new = ok(hub, "send_chat_message", sender_id="USR-0001", recipient_id="USR-0004", text="hi Di")
    assert new["conversation_id"] == "CNV-0005" and new["message_id"] == "MSG-0009"
    conv = ok(hub, "get_chat_conversation", conversation_id="CNV-0005")
    assert conv["kind"] == "direct" and conv["members"] == ["USR-0001", "USR-0004"]
    assert ok(hub, "list_chat_conversations", user_id="USR-0004", query="ada", kind="direct")["total"] == 1


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"sender_id": "USR-0004", "conversation_id": "CNV-0003"}, ("not a member of conversation 'CNV-0003'",
                                                                   "sender_id", "USR-0001")),
        ({"sender_id": "USR-0004", "conversation_id": "CNV-0002"}, ("'USR-0003' has blocked 'USR-0004'",)),
        ({"sender_id": "USR-0004", "recipient_id": "USR-0003"}, ("'USR-0003' has blocked 'USR-0004'",)),
        ({"sender_id": "USR-0003", "recipient_id": "USR-0004"}, ("'USR-0003' has blocked 'USR-0004'", "unblock")),
        ({"sender_id": "USR-0001", "recipient_id": "USR-0005"}, ("'USR-0005' has blocked 'USR-0001'",)),
        ({"sender_id": "USR-0001"}, ("exactly one of conversation_id",)),
        ({"sender_id": "USR-0001", "recipient_id": "USR-0002", "conversation_id": "CNV-0001"}, ("exactly one",)),
        ({"sender_id": "USR-0001", "recipient_id": "USR-0001"}, ("must differ",)),
        ({"sender_id": "USR-0001", "recipient_id": "USR-0088"}, ("user 'USR-0088' not found", "recipient_id")),
        ({"sender_id": "USR-0001", "conversation_id": "CNV-0001", "text": "x" * 1001}, ("text", "1000 characters")),
        ({"sender_id": "USR-0001", "conversation_id": "CNV-0001", "text": "  "}, ("text must not be blank",)),
        ({"sender_id": "USR-0001", "conversation_id": "CNV-0001", "reply_to_message_id": "MSG-0003"},
         ("is in conversation 'CNV-0003', not in 'CNV-0001'",)),
        ({"sender_id": "USR-0001", "recipient_id": "USR-0004", "reply_to_message_id": "MSG-0002"},
         ("a new direct chat",)),
    ],
)
def test_send_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "send_chat_message", *fragments, **{"text": "hello", **args})


def test_edit_and_delete_window(hub: Hub) -> None:
    msg = ok(hub, "edit_chat_message", user_id="USR-0001", message_id="MSG-0006", text="Lunch at 12:30?")
    assert msg["edited"] and msg["edited_at"] == NOW
    assert ok(hub, "get_chat_message", message_id="MSG-0006")["text"] == "Lunch at 12:30?"
    fails(hub, "edit_chat_message", "only the sender ('USR-0001')", user_id="USR-0002", message_id="MSG-0006",
          text="hijack")
    fails(hub, "edit_chat_message", "more than 15 minutes", "no longer be edited", user_id="USR-0001",
          message_id="MSG-0004", text="Meeting moved to Saturday")
    fails(hub, "edit_chat_message", "was deleted", user_id="USR-0002", message_id="MSG-0005", text="oops")
    fails(hub, "edit_chat_message", "text", "1000 characters", user_id="USR-0001", message_id="MSG-0006",
          text="y" * 1001)
    fails(hub, "delete_chat_message", "only the sender", user_id="USR-0002", message_id="MSG-0006")
    fails(hub, "delete_chat_message", "no longer be deleted", user_id="USR-0001", message_id="MSG-0004")
    for _ in range(3):  # the clock moves one minute per sent message
        ok(hub, "send_chat_message", sender_id="USR-0002", recipient_id="USR-0001", text="tick")
    gone = ok(hub, "delete_chat_message", user_id="USR-0001", message_id="MSG-0006")
    assert gone["deleted"] and gone["text"] == ""
    assert ok(hub, "search_chat_messages", query="lunch")["total"] == 0
    fails(hub, "delete_chat_message", "was deleted", user_id="USR-0001", message_id="MSG-0006")
    for _ in range(13):  # MSG-0007 was sent at 09:01; now is 09:16, the last minute it may change
        ok(hub, "send_chat_message", sender_id="USR-0002", recipient_id="USR-0001", text="tock")
    ok(hub, "edit_chat_message", user_id="USR-0002", message_id="MSG-0007", text="tick (edited)")
    ok(hub, "send_chat_message", sender_id="USR-0002", recipient_id="USR-0001", text="tock")
    fails(hub, "edit_chat_message", "more than 15 minutes", user_id="USR-0002", message_id="MSG-0007", text="t")


def test_delete_unpins(hub: Hub) -> None:
    msg = ok(hub, "send_chat_message", sender_id="USR-0003", conversation_id="CNV-0003", text="Vote by Friday")
    ok(hub, "pin_chat_message", user_id="USR-0002", message_id=msg["message_id"])
    assert ok(hub, "get_chat_conversation", conversation_id="CNV-0003")["pinned_message_ids"] == [
        "MSG-0003", msg["message_id"]]
    ok(hub, "delete_chat_message", user_id="USR-0003", message_id=msg["message_id"])
    assert ok(hub, "get_chat_conversation", conversation_id="CNV-0003")["pinned_message_ids"] == ["MSG-0003"]


def test_reactions(hub: Hub) -> None:
    msg = ok(hub, "react_to_chat_message", user_id="USR-0002", message_id="MSG-0003", emoji="laugh")
    assert msg["reactions"] == [{"user_id": "USR-0001", "emoji": "heart"}, {"user_id": "USR-0002", "emoji": "laugh"}]
    msg = ok(hub, "react_to_chat_message", user_id="USR-0001", message_id="MSG-0003", emoji="thumbs_up")
    assert msg["reactions"][0] == {"user_id": "USR-0001", "emoji": "thumbs_up"} and len(msg["reactions"]) == 2
    assert ok(hub, "get_chat_message", message_id="MSG-0003")["reactions"][0]["emoji"] == "thumbs_up"
    fails(hub, "react_to_chat_message", "already reacted", "thumbs_up", user_id="USR-0001", message_id="MSG-0003",
          emoji="thumbs_up")
    fails(hub, "react_to_chat_message", "not a member", user_id="USR-0004", message_id="MSG-0003", emoji="heart")
    fails(hub, "react_to_chat_message", "was deleted", user_id="USR-0001", message_id="MSG-0005", emoji="sad")
    fails(hub, "react_to_chat_message", "emoji", "'thumbs_up'", user_id="USR-0001", message_id="MSG-0003",
          emoji="fire")


def test_create_group(hub: Hub) -> None:
    conv = ok(hub, "create_group_chat", creator_id="USR-0001", name=" Climbing Crew ",
              member_ids=["USR-0003", "USR-0002", "USR-0003", "USR-0001"])
    assert conv["conversation_id"] == "CNV-0005" and conv["name"] == "Climbing Crew"
    assert conv["members"] == ["USR-0001", "USR-0002", "USR-0003"] and conv["admins"] == ["USR-0001"]
    assert ok(hub, "list_chat_conversations", user_id="USR-0003", query="climbing")["total"] == 1
    ok(hub, "send_chat_message", sender_id="USR-0003", conversation_id="CNV-0005", text="Saturday at 10?")
    fails(hub, "create_group_chat", "at least 2 members besides the creator", creator_id="USR-0001", name="Duo",
          member_ids=["USR-0002", "USR-0001"])
    fails(hub, "create_group_chat", "user 'USR-0500' not found", "member_ids", creator_id="USR-0001", name="X",
          member_ids=["USR-0002", "USR-0500"])
    fails(hub, "create_group_chat", "'USR-0003' blocked 'USR-0004'", creator_id="USR-0004", name="X",
          member_ids=["USR-0002", "USR-0003"])
    fails(hub, "create_group_chat", "member_ids", "at most 9 items", creator_id="USR-0001", name="Huge",
          member_ids=[f"USR-{n:04d}" for n in range(2, 12)])
    fails(hub, "create_group_chat", "name must not be blank", creator_id="USR-0001", name="  ",
          member_ids=["USR-0002", "USR-0003"])


def test_group_membership(hub: Hub) -> None:
    conv = ok(hub, "add_group_chat_member", admin_id="USR-0001", conversation_id="CNV-0003", user_id="USR-0004")
    assert conv["members"] == ["USR-0001", "USR-0002", "USR-0003", "USR-0004"]
    ok(hub, "send_chat_message", sender_id="USR-0004", conversation_id="CNV-0003", text="thanks for adding me")
    fails(hub, "add_group_chat_member", "only admins of 'CNV-0003'", "USR-0001", admin_id="USR-0002",
          conversation_id="CNV-0003", user_id="USR-0006")
    fails(hub, "add_group_chat_member", "already a member", admin_id="USR-0001", conversation_id="CNV-0003",
          user_id="USR-0002")
    fails(hub, "add_group_chat_member", "is full (10 of 10 members)", admin_id="USR-0002",
          conversation_id="CNV-0004", user_id="USR-0011")
    fails(hub, "add_group_chat_member", "'USR-0005' has blocked 'USR-0001'", admin_id="USR-0001",
          conversation_id="CNV-0003", user_id="USR-0005")
    fails(hub, "add_group_chat_member", "is a direct chat", admin_id="USR-0001", conversation_id="CNV-0001",
          user_id="USR-0003")
    fails(hub, "add_group_chat_member", "not a member of conversation", "admin_id", admin_id="USR-0011",
          conversation_id="CNV-0003", user_id="USR-0006")
    conv = ok(hub, "remove_group_chat_member", admin_id="USR-0001", conversation_id="CNV-0003", user_id="USR-0002")
    assert "USR-0002" not in conv["members"] and conv["muted_by"] == []
    fails(hub, "send_chat_message", "not a member", sender_id="USR-0002", conversation_id="CNV-0003", text="hey")
    fails(hub, "remove_group_chat_member", "is not a member", admin_id="USR-0001", conversation_id="CNV-0003",
          user_id="USR-0002")
    fails(hub, "remove_group_chat_member", "only admins", admin_id="USR-0003", conversation_id="CNV-0003",
          user_id="USR-0004")
    fails(hub, "remove_group_chat_member", "only admin of 'CNV-0003'", admin_id="USR-0001",
          conversation_id="CNV-0003", user_id="USR-0001")
    fails(hub, "remove_group_chat_member", "is a direct chat", admin_id="USR-0001", conversation_id="CNV-0001",
          user_id="USR-0002")
    ok(hub, "remove_group_chat_member", admin_id="USR-0002", conversation_id="CNV-0004", user_id="USR-0010")
    ok(hub, "add_group_chat_member", admin_id="USR-0002", conversation_id="CNV-0004", user_id="USR-0011")


def test_block_and_unblock(hub: Hub) -> None:
    user = ok(hub, "block_chat_user", user_id="USR-0001", target_user_id="USR-0002")
    assert user["blocked"] == ["USR-0002"]
    fails(hub, "send_chat_message", "'USR-0001' has blocked 'USR-0002'", sender_id="USR-0002",
          conversation_id="CNV-0001", text="hello?")
    fails(hub, "block_chat_user", "already blocked", user_id="USR-0001", target_user_id="USR-0002")
    fails(hub, "block_chat_user", "must differ", user_id="USR-0001", target_user_id="USR-0001")
    fails(hub, "block_chat_user", "user 'USR-0123' not found", "target_user_id", user_id="USR-0001",
          target_user_id="USR-0123")
    fails(hub, "block_chat_user", "has not blocked 'USR-0003'", "USR-0002", user_id="USR-0001",
          target_user_id="USR-0003", action="unblock")
    assert ok(hub, "block_chat_user", user_id="USR-0001", target_user_id="USR-0002", action="unblock")["blocked"] == []
    ok(hub, "send_chat_message", sender_id="USR-0002", conversation_id="CNV-0001", text="hello again")
    ok(hub, "block_chat_user", user_id="USR-0003", target_user_id="USR-0004", action="unblock")
    ok(hub, "send_chat_message", sender_id="USR-0004", recipient_id="USR-0003", text="finally")


def test_pins(hub: Hub) -> None:
    conv = ok(hub, "pin_chat_message", user_id="USR-0003", message_id="MSG-0004")
    assert conv["pinned_message_ids"] == ["MSG-0003", "MSG-0004"]
    assert ids(conv["pinned_messages"], "text") == ["Next book: Dune", "Meeting moved to Friday"]
    fails(hub, "pin_chat_message", "already pinned", user_id="USR-0001", message_id="MSG-0004")
    fails(hub, "pin_chat_message", "was deleted", user_id="USR-0001", message_id="MSG-0005")
    fails(hub, "pin_chat_message", "not a member of conversation 'CNV-0003'", user_id="USR-0004",
          message_id="MSG-0003")
    extra = ok(hub, "send_chat_message", sender_id="USR-0001", conversation_id="CNV-0003", text="Snacks: cake")
    ok(hub, "pin_chat_message", user_id="USR-0001", message_id=extra["message_id"])
    last = ok(hub, "send_chat_message", sender_id="USR-0001", conversation_id="CNV-0003", text="one more")
    fails(hub, "pin_chat_message", "already has 3 pinned messages", "MSG-0003, MSG-0004", "action='unpin'",
          user_id="USR-0001", message_id=last["message_id"])
    conv = ok(hub, "pin_chat_message", user_id="USR-0002", message_id="MSG-0003", action="unpin")
    assert conv["pinned_message_ids"] == ["MSG-0004", extra["message_id"]]
    fails(hub, "pin_chat_message", "is not pinned", user_id="USR-0002", message_id="MSG-0003", action="unpin")
    ok(hub, "pin_chat_message", user_id="USR-0001", message_id=last["message_id"])
    pinned = ok(hub, "get_chat_conversation", conversation_id="CNV-0003")["pinned_messages"]
    assert ids(pinned, "text") == ["Meeting moved to Friday", "Snacks: cake", "one more"]
