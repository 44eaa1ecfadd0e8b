"""Email server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.email import SERVER
from prove_servers.email.state import (
    SYSTEM_FOLDERS,
    Attachment,
    AutoReply,
    Contact,
    Email,
    EmailState,
    Folder,
    Mailbox,
    MailFilter,
)

ADA, SUPPORT, BO = "ada@acme.example", "support@acme.example", "bo@acme.example"
CAROL = "carol@ext.example"
PDF = {"name": "report.pdf", "size_kb": 2048, "mime": "application/pdf"}


def tiny() -> EmailState:
    s = EmailState(now="2026-04-14T10:30", signed_in_user="Ada Chen")
    boxes = (("MBX-0001", ADA, "Ada Chen", "personal", "Ada Chen", []),
             ("MBX-0002", SUPPORT, "Acme Support", "shared", "Bo Silva", ["Ada Chen"]),
             ("MBX-0003", BO, "Bo Silva", "personal", "Bo Silva", []))
    n = 0
    for mid, addr, display, kind, owner, delegates in boxes:
        s.mailboxes[mid] = Mailbox(mailbox_id=mid, address=addr, display_name=display, kind=kind, owner=owner,
                                   delegates=delegates, signature=f"-- {display}")
        for name, fkind in SYSTEM_FOLDERS:
            n += 1
            s.folders[f"FLD-{n:04d}"] = Folder(folder_id=f"FLD-{n:04d}", mailbox_id=mid, name=name, kind=fkind)
    # FLD-0001..0005: Ada's Inbox/Sent/Drafts/Archive/Trash; 0006..0010 support; 0011..0015 Bo.
    s.folders["FLD-0016"] = Folder(folder_id="FLD-0016", mailbox_id="MBX-0001", name="Projects", kind="custom")
    s.folders["FLD-0017"] = Folder(folder_id="FLD-0017", mailbox_id="MBX-0003", name="Finance", kind="custom")
    s.mailboxes["MBX-0003"].auto_reply = AutoReply(enabled=True, start_date="2026-04-10", end_date="2026-04-20",
                                                   subject="Away", message="I am on leave until the 21st.")
    s.filters["FLT-0001"] = MailFilter(filter_id="FLT-0001", mailbox_id="MBX-0003", subject_contains="invoice",
                                       move_to_folder_id="FLD-0017", add_label="finance", mark_read=True)
    mail = (
        ("MSG-0001", "MBX-0001", "FLD-0001", "THR-0001", CAROL, "Carol Diaz", [ADA], "Quarterly report",
         "2026-04-10T09:00", {"read": False, "cc": [BO], "labels": ["clients"], "attachments": [Attachment(**PDF)]}),
        ("MSG-0002", "MBX-0001", "FLD-0002", "THR-0001", ADA, "Ada Chen", [CAROL], "Re: Quarterly report",
         "2026-04-10T11:00", {}),
        ("MSG-0003", "MBX-0001", "FLD-0003", "THR-0002", ADA, "Ada Chen", [CAROL], "Lunch plans",
         "2026-04-11T08:00", {"is_draft": True}),
        ("MSG-0004", "MBX-0001", "FLD-0005", "THR-0003", "promo@shop.example", "Shop", [ADA], "50% off",
         "2026-04-12T08:00", {}),
        ("MSG-0005", "MBX-0002", "FLD-0006", "THR-0004", "dan@cust.example", "Dan Ito", [SUPPORT],
         "Refund request for order 77", "2026-04-12T10:00", {"read": False}),
        ("MSG-0006", "MBX-0003", "FLD-0011", "THR-0005", "eve@ext.example", "Eve Xu", [BO], "Secret plans",
         "2026-04-13T10:00", {"read": False}),
        ("MSG-0007", "MBX-0001", "FLD-0003", "THR-0006", ADA, "Ada Chen", [], "Ideas", "2026-04-13T11:00",
         {"is_draft": True}),
        ("MSG-0008", "MBX-0001", "FLD-0001", "THR-0007", "news@shop.example", "Shop News", [ADA],
         "April newsletter", "2026-04-13T12:00", {"starred": True}),
    )
    for mid, box, folder, thread, sender, sname, to, subject, ts, extra in mail:
        s.messages[mid] = Email(message_id=mid, mailbox_id=box, folder_id=folder, thread_id=thread,
                                from_address=sender, from_name=sname, to=to, subject=subject,
                                body=f"Body of {subject}.", timestamp=ts, **extra)
    s.contacts["CON-0001"] = Contact(contact_id="CON-0001", mailbox_id="MBX-0001", name="Carol Diaz", email=CAROL,
                                     company="Ext Ltd", phone="+1-555-100-1000")
    s.contacts["CON-0002"] = Contact(contact_id="CON-0002", mailbox_id="MBX-0001", name="Bo Silva", email=BO,
                                     company="Acme", phone="+1-555-100-2000", favorite=True)
    return s


hub = hub_fixture(SERVER, tiny)


def ids(result: dict) -> list[str]:
    return [m["message_id"] for m in result["emails"]]


def test_mailboxes_and_settings(hub: Hub) -> None:
    res = ok(hub, "list_mailboxes")
    assert res["signed_in_user"] == "Ada Chen" and res["total"] == 3
    assert [m["your_access"] for m in res["mailboxes"]] == ["owner", "delegate", "none"]
    assert [m["unread_in_inbox"] for m in res["mailboxes"]] == [1, 1, None]
    assert ok(hub, "list_mailboxes", accessible_only=True)["total"] == 2
    settings = ok(hub, "get_mailbox_settings", mailbox_id="MBX-0002")
    assert settings["delegates"] == ["Ada Chen"] and not settings["auto_reply_active_today"]
    fails(hub, "get_mailbox_settings", "belongs to Bo Silva", "MBX-0001 (ada@acme.example)", "MBX-0002",
          mailbox_id="MBX-0003")
    fails(hub, "get_mailbox_settings", "mailbox 'MBX-9' not found", mailbox_id="MBX-9")


def test_folders(hub: Hub) -> None:
    folders = {f["name"]: f for f in ok(hub, "list_email_folders", mailbox_id="MBX-0001")["folders"]}
    assert list(folders) == ["Inbox", "Sent", "Drafts", "Archive", "Trash", "Projects"]
    assert (folders["Inbox"]["total"], folders["Inbox"]["unread"], folders["Drafts"]["total"]) == (2, 1, 2)
    fails(hub, "list_email_folders", "neither its owner nor a delegate", mailbox_id="MBX-0003")


def test_mailbox_and_folder_lists_page(hub: Hub) -> None:
    first = ok(hub, "list_email_folders", mailbox_id="MBX-0001", limit=4)
    assert first["total"] == 6 and first["next_offset"] == 4
    second = ok(hub, "list_email_folders", mailbox_id="MBX-0001", offset=first["next_offset"], limit=4)
    assert second["total"] == 6 and second["next_offset"] is None
    assert [f["name"] for f in first["folders"] + second["folders"]] == [
        "Inbox", "Sent", "Drafts", "Archive", "Trash", "Projects"]
    boxes = ok(hub, "list_mailboxes", limit=2)
    assert boxes["total"] == 3 and boxes["next_offset"] == 2
    rest = ok(hub, "list_mailboxes", offset=2, limit=2)
    assert rest["next_offset"] is None
    assert [m["mailbox_id"] for m in boxes["mailboxes"] + rest["mailboxes"]] == ["MBX-0001", "MBX-0002", "MBX-0003"]


def test_list_emails(hub: Hub) -> None:
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001")) == ["MSG-0008", "MSG-0001"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", unread_only=True)) == ["MSG-0001"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", starred_only=True)) == ["MSG-0008"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", label="clients")) == ["MSG-0001"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", from_address="carol")) == ["MSG-0001"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", folder="drafts")) == ["MSG-0007", "MSG-0003"]
    page = ok(hub, "list_emails", mailbox_id="MBX-0001", limit=1)
    assert page["total"] == 2 and page["next_offset"] == 1
    assert ok(hub, "list_emails", mailbox_id="MBX-0001", offset=1)["next_offset"] is None
    fails(hub, "list_emails", "folder 'Spam' not found", "Inbox, Sent, Drafts, Archive, Trash, Projects",
          mailbox_id="MBX-0001", folder="Spam")
    fails(hub, "list_emails", "belongs to Bo Silva", mailbox_id="MBX-0003")


def test_search_get_and_thread(hub: Hub) -> None:
    assert ids(ok(hub, "search_emails", query="report.pdf")) == ["MSG-0001"]
    assert ids(ok(hub, "search_emails", query="quarterly")) == ["MSG-0002", "MSG-0001"]
    assert ids(ok(hub, "search_emails", query="quarterly", has_attachment=False)) == ["MSG-0002"]
    assert ok(hub, "search_emails", query="refund", mailbox_id="MBX-0001")["total"] == 0
    assert ids(ok(hub, "search_emails", query="refund")) == ["MSG-0005"]
    assert ok(hub, "search_emails", query="50% off")["total"] == 0
    assert ids(ok(hub, "search_emails", query="50% off", include_trash=True)) == ["MSG-0004"]
    assert ids(ok(hub, "search_emails", query="body", since="2026-04-13")) == ["MSG-0008", "MSG-0007"]
    assert ok(hub, "search_emails", query="secret")["total"] == 0  # Bo's mailbox is private
    fails(hub, "search_emails", "since must be a date YYYY-MM-DD", "got 'last week'", query="x", since="last week")
    msg = ok(hub, "get_email", message_id="MSG-0001")
    assert msg["folder"] == "Inbox" and msg["attachments"][0]["name"] == "report.pdf" and msg["cc"] == [BO]
    assert not ok(hub, "get_email", message_id="MSG-0001")["read"]  # reading does not mark it read
    fails(hub, "get_email", "message 'MSG-0006' not found", "search_emails", message_id="MSG-0006")
    thread = ok(hub, "get_email_thread", thread_id="THR-0001")
    assert thread["total"] == 2 and thread["subject"] == "Quarterly report"
    fails(hub, "get_email_thread", "thread 'THR-0005' not found", thread_id="THR-0005")


def test_contacts(hub: Hub) -> None:
    assert ok(hub, "list_email_contacts", mailbox_id="MBX-0001")["total"] == 2
    assert ok(hub, "list_email_contacts", mailbox_id="MBX-0001", query="ext ltd")["contacts"][0]["email"] == CAROL
    assert ok(hub, "list_email_contacts", mailbox_id="MBX-0001", favorites_only=True)["contacts"][0]["name"] == "Bo Silva"
    assert ok(hub, "list_email_contacts", mailbox_id="MBX-0002")["total"] == 0
    fails(hub, "list_email_contacts", "belongs to Bo Silva", mailbox_id="MBX-0003")


def test_send_delivers_filters_and_auto_replies_once(hub: Hub) -> None:
    r = ok(hub, "send_email", mailbox_id="MBX-0001", to=["Bo@Acme.example", "x@ext.example"],
           subject="Invoice for March", body="See attached.", cc=[BO, "y@ext.example"], attachments=[PDF])
    assert r["message_id"] == "MSG-0009" and r["to"] == [BO, "x@ext.example"] and r["cc"] == ["y@ext.example"]
    assert r["delivered_to_mailboxes"] == [BO] and r["auto_replies_received"] == [BO]
    assert r["timestamp"] == "2026-04-14T10:31" and r["attachment_count"] == 1
    sent = ok(hub, "get_email", message_id="MSG-0009")
    assert sent["folder"] == "Sent" and sent["body"].endswith("-- Ada Chen")
    inbox = ok(hub, "list_emails", mailbox_id="MBX-0001", unread_only=True)["emails"]
    assert inbox[0]["from_address"] == BO and inbox[0]["subject"] == "Away: Invoice for March"
    assert ok(hub, "get_email_thread", thread_id=r["thread_id"])["total"] == 2  # sent copy + auto-reply
    copy = hub.state("t", "email")["messages"]["MSG-0010"]  # Bo's copy, filed by his filter
    assert (copy["mailbox_id"], copy["folder_id"], copy["labels"], copy["read"]) == ("MBX-0003", "FLD-0017", ["finance"], True)
    again = ok(hub, "send_email", mailbox_id="MBX-0001", to=[BO], subject="One more", body="Hi")
    assert again["auto_replies_received"] == []  # each sender gets the auto-reply once


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"to": ["bob@"]}, ("invalid recipient address 'bob@'", "parameter 'to'")),
        ({"to": [CAROL], "cc": ["not an address"]}, ("invalid recipient address", "parameter 'cc'")),
        ({"to": [CAROL], "attachments": [{**PDF, "size_kb": 30 * 1024}]}, ("'report.pdf' is 30.0 MB", "at most 20 MB")),
        ({"to": [CAROL], "attachments": [{**PDF, "size_kb": 10 * 1024}] * 3}, ("total 30.0 MB", "at most 25 MB")),
        ({"to": [CAROL], "attachments": [{**PDF, "mime": "video/mp4"}]}, ("mime",)),
        ({"to": [CAROL], "mailbox_id": "MBX-0003"}, ("belongs to Bo Silva", "MBX-0001 (ada@acme.example)")),
        ({"to": [CAROL], "subject": "  "}, ("subject must not be empty",)),
        ({"to": []}, ("to",)),
    ],
)
def test_send_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "send_email", *fragments, **{"mailbox_id": "MBX-0001", "subject": "Hi", "body": "Hello", **args})


def test_reply(hub: Hub) -> None:
    r = ok(hub, "reply_to_email", mailbox_id="MBX-0001", message_id="MSG-0001", body="Thanks!", reply_all=True)
    assert r["to"] == [CAROL] and r["cc"] == [BO] and r["subject"] == "Re: Quarterly report"
    assert r["thread_id"] == "THR-0001" and r["delivered_to_mailboxes"] == [BO] == r["auto_replies_received"]
    assert ok(hub, "get_email", message_id="MSG-0001")["read"]
    assert ok(hub, "get_email_thread", thread_id="THR-0001")["total"] == 4  # + reply and Bo's auto-reply
    own = ok(hub, "reply_to_email", mailbox_id="MBX-0001", message_id="MSG-0002", body="Any news?")
    assert own["to"] == [CAROL] and own["subject"] == "Re: Quarterly report" and own["cc"] == []
    fails(hub, "reply_to_email", "is in mailbox 'MBX-0001'", "use mailbox_id 'MBX-0001'",
          mailbox_id="MBX-0002", message_id="MSG-0001", body="x")
    fails(hub, "reply_to_email", "unsent draft", "send_email_draft", mailbox_id="MBX-0001", message_id="MSG-0003", body="x")
    fails(hub, "reply_to_email", "belongs to Bo Silva", mailbox_id="MBX-0003", message_id="MSG-0006", body="x")
    fails(hub, "reply_to_email", "message 'MSG-0006' not found", mailbox_id="MBX-0001", message_id="MSG-0006", body="x")


def test_forward(hub: Hub) -> None:
    r = ok(hub, "forward_email", mailbox_id="MBX-0001", message_id="MSG-0001", to=["z@ext.example"], note="FYI")
    assert r["subject"] == "Fwd: Quarterly report" and r["attachment_count"] == 1 and r["thread_id"] != "THR-0001"
    body = ok(hub, "get_email", message_id=r["message_id"])["body"]
    assert body.startswith("FYI") and "From: Carol Diaz <carol@ext.example>" in body
    bare = ok(hub, "forward_email", mailbox_id="MBX-0001", message_id="MSG-0001", to=[BO], include_attachments=False)
    assert bare["attachment_count"] == 0 and bare["delivered_to_mailboxes"] == [BO]
    fails(hub, "forward_email", "invalid recipient address 'z@'", mailbox_id="MBX-0001", message_id="MSG-0001", to=["z@"])
    fails(hub, "forward_email", "is in mailbox 'MBX-0002'", mailbox_id="MBX-0001", message_id="MSG-0005", to=[CAROL])


def test_drafts(hub: Hub) -> None:
    d = ok(hub, "save_email_draft", mailbox_id="MBX-0002", subject="Refund approved", body="Done.",
           to=["dan@cust.example"], attachments=[PDF])
    assert d["message_id"] == "MSG-0009" and d["folder"] == "Drafts" and d["is_draft"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0002", folder="Drafts")) == ["MSG-0009"]
    sent = ok(hub, "send_email_draft", message_id="MSG-0009")
    assert sent["message_id"] == "MSG-0009" and sent["from_address"] == SUPPORT and sent["attachment_count"] == 1
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0002", folder="Sent")) == ["MSG-0009"]
    assert ok(hub, "list_emails", mailbox_id="MBX-0002", folder="Drafts")["total"] == 0
    fails(hub, "send_email_draft", "draft 'MSG-0009' was already sent", "in Sent", message_id="MSG-0009")
    fails(hub, "send_email_draft", "not a draft (it is in Inbox)", message_id="MSG-0001")
    fails(hub, "send_email_draft", "has no recipients", message_id="MSG-0007")
    fails(hub, "send_email_draft", "message 'MSG-0006' not found", message_id="MSG-0006")
    fails(hub, "save_email_draft", "at most 20 MB", mailbox_id="MBX-0001", subject="s", body="b",
          attachments=[{**PDF, "size_kb": 25 * 1024}])
    fails(hub, "save_email_draft", "invalid recipient address", mailbox_id="MBX-0001", subject="s", body="b", to=["a@b"])
    fails(hub, "save_email_draft", "belongs to Bo Silva", mailbox_id="MBX-0003", subject="s", body="b")
    assert ok(hub, "send_email_draft", message_id="MSG-0003")["to"] == [CAROL]


def test_move(hub: Hub) -> None:
    moved = ok(hub, "move_email", message_id="MSG-0001", folder="projects")
    assert moved["folder"] == "Projects"
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", folder="Projects")) == ["MSG-0001"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001")) == ["MSG-0008"]
    fails(hub, "move_email", "already in Projects", message_id="MSG-0001", folder="Projects")
    fails(hub, "move_email", "folder 'Receipts' not found", "Inbox, Sent, Drafts, Archive, Trash, Projects",
          message_id="MSG-0001", folder="Receipts")
    fails(hub, "move_email", "only drafts live in the Drafts folder", message_id="MSG-0001", folder="Drafts")
    fails(hub, "move_email", "is a draft", message_id="MSG-0003", folder="Archive")
    fails(hub, "move_email", "message 'MSG-0006' not found", message_id="MSG-0006", folder="Archive")


def test_mark_read(hub: Hub) -> None:
    r = ok(hub, "mark_email_read", message_ids=["MSG-0001", "MSG-0008"])
    assert r["updated"] == ["MSG-0001"] and r["unchanged"] == ["MSG-0008"]
    assert ok(hub, "list_emails", mailbox_id="MBX-0001", unread_only=True)["total"] == 0
    fails(hub, "mark_email_read", "already read", message_ids=["MSG-0001"])
    assert ok(hub, "mark_email_read", message_ids=["MSG-0008"], read=False)["updated"] == ["MSG-0008"]
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", unread_only=True)) == ["MSG-0008"]
    fails(hub, "mark_email_read", "message 'MSG-0099' not found", "message_ids", message_ids=["MSG-0008", "MSG-0099"])


def test_delete_moves_to_trash_then_is_permanent_once(hub: Hub) -> None:
    first = ok(hub, "delete_email", message_id="MSG-0008")
    assert first == {"message_id": "MSG-0008", "permanently_deleted": False, "folder": "Trash"}
    assert "MSG-0008" in ids(ok(hub, "list_emails", mailbox_id="MBX-0001", folder="Trash"))
    assert ok(hub, "delete_email", message_id="MSG-0008")["permanently_deleted"]
    fails(hub, "delete_email", "message 'MSG-0008' not found", "deleted from Trash is gone", message_id="MSG-0008")
    assert ok(hub, "delete_email", message_id="MSG-0007")["permanently_deleted"]  # discarding a draft
    assert ids(ok(hub, "list_emails", mailbox_id="MBX-0001", folder="Drafts")) == ["MSG-0003"]


def test_create_folder(hub: Hub) -> None:
    f = ok(hub, "create_email_folder", mailbox_id="MBX-0001", name="  Receipts ")
    assert f == {"folder_id": "FLD-0018", "name": "Receipts", "kind": "custom", "total": 0, "unread": 0}
    assert ok(hub, "move_email", message_id="MSG-0008", folder="Receipts")["folder"] == "Receipts"
    fails(hub, "create_email_folder", "'receipts' already exists", "Projects, Receipts", mailbox_id="MBX-0001", name="receipts")
    fails(hub, "create_email_folder", "'Inbox' already exists", mailbox_id="MBX-0001", name="Inbox")
    fails(hub, "create_email_folder", "contain no '/'", mailbox_id="MBX-0001", name="a/b")
    fails(hub, "create_email_folder", "belongs to Bo Silva", mailbox_id="MBX-0003", name="X")
    assert ok(hub, "create_email_folder", mailbox_id="MBX-0002", name="Receipts")["folder_id"] == "FLD-0019"


def test_auto_reply(hub: Hub) -> None:
    on = ok(hub, "set_auto_reply", mailbox_id="MBX-0001", enabled=True, start_date="2026-04-14",
            end_date="2026-04-30", message="Back in May.")
    assert on["auto_reply_active_today"] and on["auto_reply"]["end_date"] == "2026-04-30"
    r = ok(hub, "send_email", mailbox_id="MBX-0002", to=[ADA], subject="Ticket 5", body="Please check")
    assert r["auto_replies_received"] == [ADA]
    auto = ok(hub, "list_emails", mailbox_id="MBX-0002", unread_only=True)["emails"][0]
    assert auto["from_address"] == ADA and auto["subject"] == "Out of office: Ticket 5"
    later = ok(hub, "set_auto_reply", mailbox_id="MBX-0002", enabled=True, start_date="2026-05-01",
               end_date="2026-05-02", message="Closed for the holiday.")
    assert not later["auto_reply_active_today"]
    base = {"mailbox_id": "MBX-0001", "enabled": True, "message": "Away"}
    fails(hub, "set_auto_reply", "end_date 2026-04-20 is before start_date 2026-04-25",
          start_date="2026-04-25", end_date="2026-04-20", **base)
    fails(hub, "set_auto_reply", "end_date 2026-04-01 is in the past", start_date="2026-03-25", end_date="2026-04-01", **base)
    fails(hub, "set_auto_reply", "start_date and end_date are required", start_date="2026-04-25", **base)
    fails(hub, "set_auto_reply", "end_date must be a date YYYY-MM-DD", start_date="2026-04-25", end_date="May 3", **base)
    fails(hub, "set_auto_reply", "message must not be empty", mailbox_id="MBX-0001", enabled=True,
          start_date="2026-04-25", end_date="2026-04-26")
    fails(hub, "set_auto_reply", "belongs to Bo Silva", mailbox_id="MBX-0003", enabled=False)
    assert not ok(hub, "set_auto_reply", mailbox_id="MBX-0001", enabled=False)["auto_reply"]["enabled"]
    fails(hub, "set_auto_reply", "already off", mailbox_id="MBX-0001", enabled=False)
