"""Wiki server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.wiki import SERVER
from prove_servers.wiki.state import (
    Attachment,
    Comment,
    Revision,
    WikiPage,
    WikiSpace,
    WikiState,
    WikiUser,
    initial_state,
)

SEVEN_TAGS = ["a1", "b2", "c3", "d4", "e5", "f6", "g7"]


def tiny() -> WikiState:
    """ENG (restricted: Ada owns, Bo is a member) and HR (public: Cy owns); Di belongs nowhere."""
    s = WikiState(now="2026-04-07T10:30")
    for uid, name, team in (("USR-0001", "Ada Chen", "engineering"), ("USR-0002", "Bo Silva", "engineering"),
                            ("USR-0003", "Cy Park", "people"), ("USR-0004", "Di Ito", "sales")):
        s.users[uid] = WikiUser(user_id=uid, name=name, email=f"{name.split()[0].lower()}@acme.example", team=team)
    s.spaces["ENG"] = WikiSpace(space_key="ENG", name="Engineering", description="eng docs", visibility="restricted",
                                owner_ids=["USR-0001"], member_ids=["USR-0001", "USR-0002"], created_at="2024-01-01T09:00")
    s.spaces["HR"] = WikiSpace(space_key="HR", name="People", description="policies", visibility="public",
                               owner_ids=["USR-0003"], member_ids=["USR-0003"], created_at="2024-02-01T09:00")
    rows = [  # id, space, title, body, author, parent, status, tags, locked_by, views, version
        ("PG-0001", "ENG", "Architecture", "Services and queues overview.", "USR-0001", None, "published",
         ["architecture"], None, 900, 2),
        ("PG-0002", "ENG", "Payments Runbook", "How to restart the payments queue.", "USR-0002", "PG-0001",
         "published", ["runbook"], None, 300, 1),
        ("PG-0003", "ENG", "Retry Policy", "", "USR-0002", "PG-0002", "draft", [], None, 0, 1),
        ("PG-0004", "ENG", "Old Design", "Monolith notes.", "USR-0001", "PG-0001", "archived", [], None, 50, 1),
        ("PG-0005", "ENG", "Style Guide", "Use black and ruff.", "USR-0001", None, "published", ["policy"],
         "USR-0001", 120, 1),
        ("PG-0006", "ENG", "Team Charter", "Who we are.", "USR-0002", None, "draft", SEVEN_TAGS, None, 3, 1),
        ("PG-0007", "HR", "Handbook", "Leave, travel and queues at lunch.", "USR-0003", None, "published",
         ["policy"], None, 2000, 1),
        ("PG-0008", "HR", "Style Guide", "Tone of voice.", "USR-0003", None, "published", [], None, 10, 1),
    ]
    rev = 0
    for pid, space, title, body, author, parent, status, tags, lock, views, version in rows:
        s.pages[pid] = WikiPage(page_id=pid, space_key=space, title=title, body=body, author_id=author,
                                parent_id=parent, tags=tags, status=status, locked_by=lock, view_count=views,
                                version=version, created_at="2026-01-01T09:00", updated_at=f"2026-02-{pid[-2:]}T09:00",
                                watcher_ids=[author])
        for n in range(1, version + 1):
            rev += 1
            old = n < version
            s.revisions[f"REV-{rev:04d}"] = Revision(
                revision_id=f"REV-{rev:04d}", page_id=pid, number=n, author_id=author,
                timestamp=f"2026-01-0{n}T09:00", summary="Initial draft" if n == 1 else "Edited",
                title=f"{title} v1" if old else title, body="First sketch." if old else body,
            )
    s.comments["CMT-0001"] = Comment(comment_id="CMT-0001", page_id="PG-0001", author_id="USR-0002",
                                     text="Is this still up to date?", created_at="2026-03-01T10:00")
    s.attachments["ATT-0001"] = Attachment(attachment_id="ATT-0001", page_id="PG-0001", file_name="diagram.png",
                                           size_kb=340, mime_type="image/png", uploaded_by="USR-0001",
                                           uploaded_at="2026-01-02T09:00")
    return s


hub = hub_fixture(SERVER, tiny)


def ids(pages: list[dict]) -> list[str]:
    return [p["page_id"] for p in pages]


def test_seeded_world_is_deterministic_and_consistent() -> None:
    a, b = initial_state(3), initial_state(3)
    assert a.model_dump() == b.model_dump() and a.model_dump() != initial_state(4).model_dump()
    assert len(a.pages) >= 40 and len(a.revisions) > len(a.pages) and len(a.spaces) >= 6
    for page in a.pages.values():
        revs = sorted(r.number for r in a.revisions.values() if r.page_id == page.page_id)
        assert revs == list(range(1, page.version + 1))
        if page.status == "published" and page.parent_id:
            assert a.pages[page.parent_id].status == "published"
        assert page.author_id in a.users and set(page.watcher_ids) <= set(a.users)
    assert a.new_id("PG") == f"PG-{len(a.pages) + 1:04d}"


def test_reads_do_not_mutate(hub: Hub) -> None:
    before = hub.server_hash("t", "wiki")
    ok(hub, "get_wiki_page", page_id="PG-0001")
    ok(hub, "search_wiki_pages", query="queue")
    ok(hub, "list_page_children", page_id="PG-0001", include_descendants=True)
    assert hub.server_hash("t", "wiki") == before


def test_spaces(hub: Hub) -> None:
    assert ok(hub, "list_wiki_spaces")["total"] == 2
    assert [s["space_key"] for s in ok(hub, "list_wiki_spaces", visibility="restricted")["spaces"]] == ["ENG"]
    assert [s["space_key"] for s in ok(hub, "list_wiki_spaces", member_id="USR-0003")["spaces"]] == ["HR"]
    assert ok(hub, "list_wiki_spaces", member_id="USR-0004")["total"] == 0
    fails(hub, "list_wiki_spaces", "user 'USR-0099' not found", "member_id", member_id="USR-0099")
    fails(hub, "list_wiki_spaces", "visibility", "'public', 'restricted' or 'private'", visibility="secret")
    eng = ok(hub, "get_wiki_space", space_key="ENG")
    assert eng["page_counts"] == {"draft": 2, "published": 3, "archived": 1}
    assert ids(eng["top_level_pages"]) == ["PG-0001", "PG-0005", "PG-0006"]
    assert [o["name"] for o in eng["owners"]] == ["Ada Chen"]
    fails(hub, "get_wiki_space", "space 'XYZ' not found", "ENG, HR", space_key="XYZ")


def test_users(hub: Hub) -> None:
    assert [u["user_id"] for u in ok(hub, "find_wiki_users", query="ADA")["users"]] == ["USR-0001"]
    assert ok(hub, "find_wiki_users", query="acme.example")["total"] == 4
    assert [u["name"] for u in ok(hub, "find_wiki_users", space_key="ENG")["users"]] == ["Ada Chen", "Bo Silva"]
    fails(hub, "find_wiki_users", "space 'OPS' not found", "parameter 'space_key'", space_key="OPS")


def test_users_spaces_and_children_page(hub: Hub) -> None:
    first = ok(hub, "find_wiki_users", query="acme.example", limit=3)
    assert first["total"] == 4 and first["next_offset"] == 3 and len(first["users"]) == 3
    second = ok(hub, "find_wiki_users", query="acme.example", offset=first["next_offset"], limit=3)
    assert second["total"] == 4 and second["next_offset"] is None and len(second["users"]) == 1
    assert len({u["user_id"] for u in first["users"] + second["users"]}) == 4
    spaces = ok(hub, "list_wiki_spaces", limit=1)
    assert spaces["total"] == 2 and spaces["next_offset"] == 1
    assert ok(hub, "list_wiki_spaces", offset=1)["spaces"][0]["space_key"] != spaces["spaces"][0]["space_key"]
    kids = ok(hub, "list_page_children", page_id="PG-0001", include_descendants=True, limit=2)
    assert kids["total"] == 3 and kids["next_offset"] == 2 and ids(kids["pages"]) == ["PG-0002", "PG-0004"]
    rest = ok(hub, "list_page_children", page_id="PG-0001", include_descendants=True, offset=2, limit=2)
    assert ids(rest["pages"]) == ["PG-0003"] and rest["next_offset"] is None


def test_search(hub: Hub) -> None:
    assert ids(ok(hub, "search_wiki_pages", query="queue")["pages"]) == ["PG-0007", "PG-0002", "PG-0001"]
    assert ids(ok(hub, "search_wiki_pages", query="queue", space_key="ENG", sort="views")["pages"]) == [
        "PG-0001", "PG-0002"]
    assert ids(ok(hub, "search_wiki_pages", query="restart queue")["pages"]) == ["PG-0002"]
    assert ids(ok(hub, "search_wiki_pages", tag="policy", sort="title")["pages"]) == ["PG-0007", "PG-0005"]
    assert ids(ok(hub, "search_wiki_pages", query="runbook")["pages"]) == ["PG-0002"]  # title and tag
    assert ok(hub, "search_wiki_pages", status="draft")["total"] == 2
    assert ok(hub, "search_wiki_pages", author_id="USR-0003")["total"] == 2
    page = ok(hub, "search_wiki_pages", limit=3)
    assert page["total"] == 8 and page["next_offset"] == 3 and len(page["pages"]) == 3
    assert ok(hub, "search_wiki_pages", offset=6, limit=3)["next_offset"] is None
    assert "body" not in page["pages"][0] and page["pages"][0]["snippet"]
    fails(hub, "search_wiki_pages", "space 'OPS' not found", space_key="OPS")
    fails(hub, "search_wiki_pages", "user 'USR-0042' not found", "author_id", author_id="USR-0042")
    fails(hub, "search_wiki_pages", "status", "'draft', 'published' or 'archived'", status="deleted")
    fails(hub, "search_wiki_pages", "limit", limit=500)


def test_get_page_and_children(hub: Hub) -> None:
    page = ok(hub, "get_wiki_page", page_id="PG-0003")
    assert ids(page["ancestors"]) == ["PG-0001", "PG-0002"] and page["author_name"] == "Bo Silva"
    top = ok(hub, "get_wiki_page", page_id="PG-0001")
    assert top["child_count"] == 2 and top["comment_count"] == 1 and top["ancestors"] == []
    assert [a["file_name"] for a in top["attachments"]] == ["diagram.png"]
    fails(hub, "get_wiki_page", "page 'PG-0404' not found", "PG-0001", page_id="PG-0404")
    assert ids(ok(hub, "list_page_children", page_id="PG-0001")["pages"]) == ["PG-0002", "PG-0004"]
    assert ids(ok(hub, "list_page_children", page_id="PG-0001", include_descendants=True)["pages"]) == [
        "PG-0002", "PG-0004", "PG-0003"]
    assert ids(ok(hub, "list_page_children", page_id="PG-0001", status="archived")["pages"]) == ["PG-0004"]
    assert ok(hub, "list_page_children", page_id="PG-0003")["total"] == 0
    fails(hub, "list_page_children", "page 'PG-9' not found", page_id="PG-9")


def test_revisions_and_revert(hub: Hub) -> None:
    revs = ok(hub, "list_page_revisions", page_id="PG-0001")
    assert [r["number"] for r in revs["revisions"]] == [2, 1] and revs["current_version"] == 2
    assert ok(hub, "list_page_revisions", page_id="PG-0001", limit=1)["next_offset"] == 1
    fails(hub, "list_page_revisions", "page 'PG-77' not found", page_id="PG-77")
    fails(hub, "revert_page_to_revision", "revision 5 of page 'PG-0001' not found", "valid: 1, 2",
          page_id="PG-0001", revision_number=5, user_id="USR-0001")
    fails(hub, "revert_page_to_revision", "already at revision 2", page_id="PG-0001", revision_number=2,
          user_id="USR-0001")
    fails(hub, "revert_page_to_revision", "revision_number", page_id="PG-0001", revision_number=0, user_id="USR-0001")
    fails(hub, "revert_page_to_revision", "not a member of restricted space 'ENG'", "USR-0001, USR-0002",
          page_id="PG-0001", revision_number=1, user_id="USR-0003")
    page = ok(hub, "revert_page_to_revision", page_id="PG-0001", revision_number=1, user_id="USR-0002")
    assert page["title"] == "Architecture v1" and page["body"] == "First sketch." and page["version"] == 3
    assert "USR-0002" in page["watcher_ids"] and page["updated_at"] == "2026-04-07T10:31"
    top = ok(hub, "list_page_revisions", page_id="PG-0001")["revisions"][0]
    assert top["number"] == 3 and top["summary"] == "Reverted to revision 1" and top["revision_id"] == "REV-0010"
    # Restoring revision 2 brings back the title 'Architecture' (still free): fine.
    assert ok(hub, "revert_page_to_revision", page_id="PG-0001", revision_number=2, user_id="USR-0001")[
        "title"] == "Architecture"


def test_revert_blocked(hub: Hub) -> None:
    ok(hub, "update_wiki_page", page_id="PG-0001", user_id="USR-0001", title="Systems")
    ok(hub, "create_wiki_page", space_key="ENG", title="Architecture", user_id="USR-0002")
    fails(hub, "revert_page_to_revision", "a page titled 'Architecture' already exists", "PG-0009",
          page_id="PG-0001", revision_number=2, user_id="USR-0001")
    fails(hub, "revert_page_to_revision", "is archived", page_id="PG-0004", revision_number=1, user_id="USR-0001")


def test_create_page(hub: Hub) -> None:
    page = ok(hub, "create_wiki_page", space_key="ENG", title="Queue Metrics", user_id="USR-0002",
              body="Lag and depth.", parent_id="PG-0002", tags=["Metrics", "runbook"])
    assert page["page_id"] == "PG-0009" and page["status"] == "draft" and page["version"] == 1
    assert page["tags"] == ["metrics", "runbook"] and page["watcher_ids"] == ["USR-0002"]
    assert "PG-0009" in ids(ok(hub, "list_page_children", page_id="PG-0002")["pages"])
    assert ok(hub, "list_page_revisions", page_id="PG-0009")["revisions"][0]["summary"] == "Initial draft"
    assert ids(ok(hub, "search_wiki_pages", query="lag depth")["pages"]) == ["PG-0009"]
    assert ok(hub, "get_wiki_space", space_key="ENG")["page_counts"]["draft"] == 3
    top = ok(hub, "create_wiki_page", space_key="HR", title="Payments Runbook", user_id="USR-0004")
    assert top["parent_id"] is None  # same title is fine in another space; HR is public


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"title": "architecture"}, ("a page titled 'architecture' already exists in space 'ENG'", "PG-0001")),
        ({"parent_id": "PG-0007"}, ("parent page 'PG-0007' is in space 'HR', not 'ENG'", "PG-0001")),
        ({"parent_id": "PG-0099"}, ("page 'PG-0099' not found (parameter 'parent_id')",)),
        ({"parent_id": "PG-0004"}, ("'Old Design') is archived",)),
        ({"user_id": "USR-0003"}, ("not a member of restricted space 'ENG'",)),
        ({"user_id": "USR-0009"}, ("user 'USR-0009' not found",)),
        ({"space_key": "OPS"}, ("space 'OPS' not found", "ENG, HR")),
        ({"tags": ["ok", "Bad Tag!"]}, ("invalid tag(s) 'bad tag!'",)),
        ({"tags": [f"t{i}" for i in range(9)]}, ("at most 8 tags",)),
        ({"title": ""}, ("title", "at least 1 character")),
        ({"title": "   "}, ("title must not be blank",)),
    ],
)
def test_create_page_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "create_wiki_page", *fragments, **{"space_key": "ENG", "title": "New", "user_id": "USR-0002", **args})


def test_update_page(hub: Hub) -> None:
    page = ok(hub, "update_wiki_page", page_id="PG-0002", user_id="USR-0001", body="Drain, then restart.",
              summary="Safer steps")
    assert page["version"] == 2 and page["watcher_ids"] == ["USR-0001", "USR-0002"]
    rev = ok(hub, "list_page_revisions", page_id="PG-0002")["revisions"][0]
    assert (rev["number"], rev["summary"], rev["author_id"]) == (2, "Safer steps", "USR-0001")
    assert ok(hub, "get_wiki_page", page_id="PG-0002")["body"] == "Drain, then restart."
    assert ok(hub, "update_wiki_page", page_id="PG-0005", user_id="USR-0001", title="Python Style")["title"] == (
        "Python Style")  # the lock holder may edit
    fails(hub, "update_wiki_page", "locked by USR-0001 (Ada Chen)", page_id="PG-0005", user_id="USR-0002", body="x")
    fails(hub, "update_wiki_page", "is archived", "cannot be edited", page_id="PG-0004", user_id="USR-0001", body="x")
    fails(hub, "update_wiki_page", "already exists in space 'ENG'", "'PG-0001'", page_id="PG-0002",
          user_id="USR-0002", title="ARCHITECTURE")
    fails(hub, "update_wiki_page", "no change", page_id="PG-0002", user_id="USR-0002", body="Drain, then restart.")
    fails(hub, "update_wiki_page", "give a new 'body', a new 'title', or both", page_id="PG-0002", user_id="USR-0002")
    fails(hub, "update_wiki_page", "not a member", page_id="PG-0002", user_id="USR-0004", body="hi")
    fails(hub, "update_wiki_page", "page 'PG-1' not found", page_id="PG-1", user_id="USR-0002", body="hi")


def test_publish(hub: Hub) -> None:
    fails(hub, "publish_wiki_page", "has an empty body", "update_wiki_page", page_id="PG-0003", user_id="USR-0002")
    fails(hub, "publish_wiki_page", "already published", page_id="PG-0002", user_id="USR-0002")
    fails(hub, "publish_wiki_page", "is archived", page_id="PG-0004", user_id="USR-0001")
    ok(hub, "update_wiki_page", page_id="PG-0003", user_id="USR-0002", body="Retry 3 times with backoff.")
    page = ok(hub, "publish_wiki_page", page_id="PG-0003", user_id="USR-0002")
    assert page["status"] == "published"
    assert ok(hub, "search_wiki_pages", status="published", space_key="ENG")["total"] == 4
    child = ok(hub, "create_wiki_page", space_key="ENG", title="Mission", user_id="USR-0002", body="Why.",
               parent_id="PG-0006")
    fails(hub, "publish_wiki_page", "parent page 'PG-0006' ('Team Charter') is draft", "publish the parent first",
          page_id=child["page_id"], user_id="USR-0002")
    ok(hub, "lock_wiki_page", page_id="PG-0006", user_id="USR-0001")
    fails(hub, "publish_wiki_page", "locked by USR-0001", page_id="PG-0006", user_id="USR-0002")
    assert ok(hub, "publish_wiki_page", page_id="PG-0006", user_id="USR-0001")["status"] == "published"
    assert ok(hub, "publish_wiki_page", page_id=child["page_id"], user_id="USR-0002")["status"] == "published"


def test_archive(hub: Hub) -> None:
    fails(hub, "archive_wiki_page", "still has child pages that are not archived: PG-0002", page_id="PG-0001",
          user_id="USR-0001")
    fails(hub, "archive_wiki_page", "only the author (USR-0001) or an owner of space 'ENG' (USR-0001)",
          page_id="PG-0001", user_id="USR-0002")
    fails(hub, "archive_wiki_page", "already archived", page_id="PG-0004", user_id="USR-0001")
    fails(hub, "archive_wiki_page", "still has child pages", "PG-0003", page_id="PG-0002", user_id="USR-0002")
    assert ok(hub, "archive_wiki_page", page_id="PG-0003", user_id="USR-0002")["status"] == "archived"
    assert ok(hub, "archive_wiki_page", page_id="PG-0002", user_id="USR-0001")["status"] == "archived"  # owner
    assert ok(hub, "archive_wiki_page", page_id="PG-0001", user_id="USR-0001")["status"] == "archived"
    assert ok(hub, "get_wiki_space", space_key="ENG")["page_counts"]["archived"] == 4
    ok(hub, "lock_wiki_page", page_id="PG-0006", user_id="USR-0001")
    fails(hub, "archive_wiki_page", "locked by USR-0001", page_id="PG-0006", user_id="USR-0002")


def test_move(hub: Hub) -> None:
    fails(hub, "move_wiki_page", "under its own descendant 'PG-0003' ('Retry Policy')", page_id="PG-0001",
          user_id="USR-0001", new_parent_id="PG-0003")
    fails(hub, "move_wiki_page", "cannot be moved under itself", page_id="PG-0001", user_id="USR-0001",
          new_parent_id="PG-0001")
    fails(hub, "move_wiki_page", "new parent 'PG-0007' is in space 'HR', not 'ENG'", "PG-0001",
          page_id="PG-0002", user_id="USR-0002", new_parent_id="PG-0007", space_key="ENG")
    fails(hub, "move_wiki_page", "page 'PG-0404' not found (parameter 'new_parent_id')", page_id="PG-0002",
          user_id="USR-0002", new_parent_id="PG-0404")
    fails(hub, "move_wiki_page", "already under PG-0001 in space 'ENG'", page_id="PG-0002", user_id="USR-0002",
          new_parent_id="PG-0001")
    fails(hub, "move_wiki_page", "already top-level", page_id="PG-0005", user_id="USR-0001")
    fails(hub, "move_wiki_page", "archived pages cannot be given new child pages", page_id="PG-0006",
          user_id="USR-0002", new_parent_id="PG-0004")
    fails(hub, "move_wiki_page", "locked by USR-0001", page_id="PG-0005", user_id="USR-0002", new_parent_id="PG-0001")
    fails(hub, "move_wiki_page", "a page titled 'Style Guide' already exists in space 'HR'", "PG-0008",
          page_id="PG-0005", user_id="USR-0001", space_key="HR")
    fails(hub, "move_wiki_page", "not a member of restricted space 'ENG'", page_id="PG-0007", user_id="USR-0003",
          space_key="ENG")
    page = ok(hub, "move_wiki_page", page_id="PG-0003", user_id="USR-0002", new_parent_id="PG-0006")
    assert page["parent_id"] == "PG-0006"
    assert ids(ok(hub, "get_wiki_page", page_id="PG-0003")["ancestors"]) == ["PG-0006"]
    # Moving a subtree to another space takes its descendants along.
    moved = ok(hub, "move_wiki_page", page_id="PG-0006", user_id="USR-0002", new_parent_id="PG-0007")
    assert moved["space_key"] == "HR" and moved["parent_id"] == "PG-0007"
    assert ok(hub, "get_wiki_page", page_id="PG-0003")["space_key"] == "HR"
    assert ok(hub, "get_wiki_space", space_key="HR")["page_counts"] == {"draft": 2, "published": 2, "archived": 0}
    top = ok(hub, "move_wiki_page", page_id="PG-0002", user_id="USR-0002")
    assert top["parent_id"] is None and "PG-0002" in ids(ok(hub, "get_wiki_space", space_key="ENG")["top_level_pages"])


def test_comments(hub: Hub) -> None:
    first = ok(hub, "list_page_comments", page_id="PG-0001")
    assert first["total"] == 1 and first["comments"][0]["author_id"] == "USR-0002"
    comment = ok(hub, "add_page_comment", page_id="PG-0007", user_id="USR-0004", text="  Where is the travel form?  ")
    assert comment["comment_id"] == "CMT-0002" and comment["text"] == "Where is the travel form?"
    assert ok(hub, "list_page_comments", page_id="PG-0007")["comments"][0]["comment_id"] == "CMT-0002"
    view = ok(hub, "get_wiki_page", page_id="PG-0007")
    assert view["comment_count"] == 1 and view["watcher_ids"] == ["USR-0003", "USR-0004"]
    fails(hub, "add_page_comment", "archived pages cannot be commented on", page_id="PG-0004", user_id="USR-0001",
          text="hi")
    fails(hub, "add_page_comment", "not a member of restricted space 'ENG'", page_id="PG-0001", user_id="USR-0004",
          text="hi")
    fails(hub, "add_page_comment", "text must not be blank", page_id="PG-0007", user_id="USR-0004", text="   ")
    fails(hub, "list_page_comments", "page 'PG-0' not found", page_id="PG-0")


def test_tags(hub: Hub) -> None:
    page = ok(hub, "tag_wiki_page", page_id="PG-0002", user_id="USR-0002", add=["On-Call"], remove=["runbook"])
    assert page["tags"] == ["on-call"]
    assert ids(ok(hub, "search_wiki_pages", tag="on-call")["pages"]) == ["PG-0002"]
    assert ok(hub, "search_wiki_pages", tag="runbook")["total"] == 0
    assert ok(hub, "tag_wiki_page", page_id="PG-0006", user_id="USR-0002", add=["h8"])["tags"][-1] == "h8"
    fails(hub, "tag_wiki_page", "tag limit", "at most 8 tags", "would have 9", "a1, b2", page_id="PG-0006",
          user_id="USR-0002", add=["z9"])
    fails(hub, "tag_wiki_page", "has no tag(s) 'nope'", "its tags: on-call", page_id="PG-0002", user_id="USR-0002",
          remove=["nope"])
    fails(hub, "tag_wiki_page", "invalid tag(s) '-x'", "'add'", page_id="PG-0002", user_id="USR-0002", add=["-x"])
    fails(hub, "tag_wiki_page", "no change", page_id="PG-0002", user_id="USR-0002", add=["on-call"])
    fails(hub, "tag_wiki_page", "appear in both", page_id="PG-0002", user_id="USR-0002", add=["on-call"],
          remove=["on-call"])
    fails(hub, "tag_wiki_page", "give tags to 'add'", page_id="PG-0002", user_id="USR-0002")
    fails(hub, "tag_wiki_page", "is archived", page_id="PG-0004", user_id="USR-0001", add=["old"])
    fails(hub, "tag_wiki_page", "locked by USR-0001", page_id="PG-0005", user_id="USR-0002", add=["style"])


def test_lock(hub: Hub) -> None:
    fails(hub, "lock_wiki_page", "only owners of space 'ENG' can lock", "owners: USR-0001", page_id="PG-0002",
          user_id="USR-0002")
    assert ok(hub, "lock_wiki_page", page_id="PG-0002", user_id="USR-0001")["locked_by"] == "USR-0001"
    assert ok(hub, "get_wiki_page", page_id="PG-0002")["locked_by"] == "USR-0001"
    fails(hub, "update_wiki_page", "locked by USR-0001 (Ada Chen)", page_id="PG-0002", user_id="USR-0002", body="x")
    fails(hub, "lock_wiki_page", "already locked by you", page_id="PG-0002", user_id="USR-0001")
    fails(hub, "lock_wiki_page", "cannot be locked", page_id="PG-0004", user_id="USR-0001")
    fails(hub, "lock_wiki_page", "user 'USR-0999' not found", page_id="PG-0002", user_id="USR-0999")
    assert ok(hub, "lock_wiki_page", page_id="PG-0002", user_id="USR-0001", locked=False)["locked_by"] is None
    fails(hub, "lock_wiki_page", "is not locked", page_id="PG-0002", user_id="USR-0001", locked=False)
    assert ok(hub, "update_wiki_page", page_id="PG-0002", user_id="USR-0002", body="x")["version"] == 2


def test_every_tool_is_exercised() -> None:
    assert len(SERVER.tools) == 17
    assert sum(t.write for t in SERVER.tools) == 9
    text = open(__file__).read()
    for name in SERVER.tool_names():
        assert f'"{name}"' in text, name
