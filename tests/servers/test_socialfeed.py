"""Social-feed server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.socialfeed import SERVER
from prove_servers.socialfeed.state import (
    Comment,
    FollowRequest,
    Notification,
    Post,
    Profile,
    Report,
    SocialState,
)

ADA, BO, CY, DEE, EVE, FIN = (f"PRF-000{i}" for i in range(1, 7))


def tiny() -> SocialState:
    s = SocialState(now="2026-04-22T18:30")
    people = [  # id, handle, city, private, verified, following, close friends, blocked, muted
        (ADA, "ada.chen", "Berlin", False, True, [BO, CY, FIN], [BO], [], [FIN]),
        (BO, "bo.silva", "Lisbon", False, False, [ADA], [], [], []),
        (CY, "cy.ito", "Berlin", True, False, [ADA], [ADA], [], []),
        (DEE, "dee.okafor", "Oslo", False, False, [], [], [ADA], []),
        (EVE, "eve.rossi", "Rome", True, False, [], [], [], []),
        (FIN, "fin.weber", "Oslo", False, False, [], [], [], []),
    ]
    for pid, handle, city, private, verified, following, close, blocked, muted in people:
        s.profiles[pid] = Profile(
            profile_id=pid, handle=handle, display_name=handle.replace(".", " ").title(), bio="hi", city=city,
            private=private, verified=verified, joined_on="2021-01-01", following=following,
            close_friends=close, blocked=blocked, muted=muted,
        )
    posts = [  # id, author, text, tags, media, visibility, repost of, liked by
        ("PST-0001", ADA, "Hello #coffee", ["coffee"], "none", "public", None, [BO]),
        ("PST-0002", BO, "for followers", [], "none", "followers", None, []),
        ("PST-0003", CY, "private life", [], "none", "public", None, []),
        ("PST-0004", BO, "Lisbon trip #travel #coffee", ["travel", "coffee"], "image", "public", None, []),
        ("PST-0005", ADA, "close friends only", [], "none", "close_friends", None, []),
        ("PST-0006", BO, "Hello #coffee", ["coffee"], "none", "public", "PST-0001", []),
        ("PST-0007", DEE, "dee speaks", [], "none", "public", None, []),
        ("PST-0008", FIN, "fin speaks", [], "video", "public", None, []),
    ]
    for i, (pid, author, text, tags, media, vis, repost_of, liked) in enumerate(posts):
        s.posts[pid] = Post(post_id=pid, author_id=author, text=text, hashtags=tags, media_type=media,
                            visibility=vis, repost_of=repost_of, liked_by=liked, created_at=f"2026-04-1{i}T10:00")
    for i, (author, parent) in enumerate([(BO, None), (ADA, "CMT-0001"), (BO, "CMT-0002")]):
        cid = f"CMT-000{i + 1}"
        s.comments[cid] = Comment(comment_id=cid, post_id="PST-0001", author_id=author, text=f"c{i}",
                                  parent_comment_id=parent, depth=i, created_at=f"2026-04-20T1{i}:00")
    s.notifications["NTF-0001"] = Notification(notification_id="NTF-0001", profile_id=ADA, kind="like",
                                               actor_id=BO, post_id="PST-0001", created_at="2026-04-20T09:00")
    s.notifications["NTF-0002"] = Notification(notification_id="NTF-0002", profile_id=EVE, kind="follow_request",
                                               actor_id=BO, created_at="2026-04-21T09:00", read=True)
    s.follow_requests["FRQ-0001"] = FollowRequest(request_id="FRQ-0001", requester_id=BO, target_id=EVE,
                                                  status="pending", created_at="2026-04-21T09:00")
    s.reports["RPT-0001"] = Report(report_id="RPT-0001", post_id="PST-0004", reporter_id=ADA, reason="spam",
                                   details="", status="open", created_at="2026-04-21T10:00")
    return s


hub = hub_fixture(SERVER, tiny)


def ids(result: dict, key: str = "posts", field: str = "post_id") -> list[str]:
    return [x[field] for x in result[key]]


def test_profiles(hub: Hub) -> None:
    assert ids(ok(hub, "search_social_profiles", query="@ADA"), "profiles", "profile_id") == [ADA]
    assert ok(hub, "search_social_profiles", city="oslo")["total"] == 2
    assert ok(hub, "search_social_profiles", verified_only=True)["profiles"][0]["follower_count"] == 2
    page = ok(hub, "search_social_profiles", limit=4)
    assert page["next_offset"] == 4 and ok(hub, "search_social_profiles", offset=4)["next_offset"] is None
    prof = ok(hub, "get_social_profile", profile_id=CY, viewer_profile_id=ADA)
    assert (prof["private"], prof["follower_count"], prof["following_count"], prof["post_count"]) == (True, 1, 1, 1)
    assert prof["relationship"]["viewer_follows"] and prof["relationship"]["viewer_is_close_friend"]
    rel = ok(hub, "get_social_profile", profile_id=DEE, viewer_profile_id=ADA)["relationship"]
    assert rel["blocked_by_them"] and not rel["viewer_blocked_them"]
    assert ok(hub, "get_social_profile", profile_id=EVE)["pending_follow_requests"] == 1
    assert ok(hub, "get_social_profile", profile_id=EVE)["relationship"] is None
    fails(hub, "get_social_profile", "profile 'PRF-0099' not found", "search_social_profiles", profile_id="PRF-0099")
    fails(hub, "get_social_profile", "viewer_profile_id", profile_id=ADA, viewer_profile_id="ada")


def test_home_feed_follows_visibility_and_mutes(hub: Hub) -> None:
    feed = ok(hub, "get_home_feed", profile_id=ADA)
    assert ids(feed) == ["PST-0006", "PST-0005", "PST-0004", "PST-0003", "PST-0002", "PST-0001"]
    assert ids(ok(hub, "get_home_feed", profile_id=ADA, media_type="image")) == ["PST-0004"]
    page = ok(hub, "get_home_feed", profile_id=ADA, limit=2, offset=2)
    assert ids(page) == ["PST-0004", "PST-0003"] and page["next_offset"] == 4
    # Bo is in Ada's close friends but does not follow Cy (private): Cy's post stays out.
    assert ids(ok(hub, "get_home_feed", profile_id=BO)) == ["PST-0006", "PST-0005", "PST-0004", "PST-0002", "PST-0001"]
    fails(hub, "get_home_feed", "profile 'PRF-7' not found", profile_id="PRF-7")


def test_profile_posts(hub: Hub) -> None:
    assert ids(ok(hub, "list_profile_posts", profile_id=CY, viewer_profile_id=ADA)) == ["PST-0003"]
    fails(hub, "list_profile_posts", "private profile", "does not follow", "follow_profile",
          profile_id=CY, viewer_profile_id=BO)
    fails(hub, "list_profile_posts", "@dee.okafor (PRF-0004) has blocked @ada.chen", profile_id=DEE, viewer_profile_id=ADA)
    assert ids(ok(hub, "list_profile_posts", profile_id=BO)) == ["PST-0006", "PST-0004"]
    assert ids(ok(hub, "list_profile_posts", profile_id=BO, include_reposts=False)) == ["PST-0004"]
    assert ids(ok(hub, "list_profile_posts", profile_id=BO, viewer_profile_id=ADA, media_type="none")) == [
        "PST-0006", "PST-0002"]
    assert ok(hub, "list_profile_posts", profile_id=ADA, viewer_profile_id=FIN)["total"] == 1


def test_get_post_and_comments(hub: Hub) -> None:
    post = ok(hub, "get_social_post", post_id="PST-0001", viewer_profile_id=BO)
    assert (post["like_count"], post["repost_count"], post["comment_count"]) == (1, 1, 3)
    assert post["liked_by_viewer"] and not post["reported_by_viewer"]
    assert ok(hub, "get_social_post", post_id="PST-0001")["liked_by_viewer"] is None
    fails(hub, "get_social_post", "followers of @bo.silva", post_id="PST-0002", viewer_profile_id=DEE)
    fails(hub, "get_social_post", "close friends only", post_id="PST-0005", viewer_profile_id=CY)
    fails(hub, "get_social_post", "logged-out", post_id="PST-0003")
    fails(hub, "get_social_post", "post 'PST-0404' not found", "get_home_feed", post_id="PST-0404")
    thread = ok(hub, "list_post_comments", post_id="PST-0001", viewer_profile_id=ADA)
    assert ids(thread, "comments", "comment_id") == ["CMT-0001", "CMT-0002", "CMT-0003"]
    assert [c["depth"] for c in thread["comments"]] == [0, 1, 2]
    assert ok(hub, "list_post_comments", post_id="PST-0001", limit=2)["next_offset"] == 2
    fails(hub, "list_post_comments", "repost of 'PST-0001'", post_id="PST-0006")


def test_comments_page(hub: Hub) -> None:
    first = ok(hub, "list_post_comments", post_id="PST-0001", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_post_comments", post_id="PST-0001", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert ids(first, "comments", "comment_id") + ids(second, "comments", "comment_id") == [
        "CMT-0001", "CMT-0002", "CMT-0003"]


def test_hashtags_and_notifications(hub: Hub) -> None:
    assert ids(ok(hub, "search_hashtag_posts", hashtag="#Coffee")) == ["PST-0004", "PST-0001"]
    assert ids(ok(hub, "search_hashtag_posts", hashtag="coffee", since="2026-04-12")) == ["PST-0004"]
    assert ok(hub, "search_hashtag_posts", hashtag="coffee", media_type="video")["total"] == 0
    fails(hub, "search_hashtag_posts", "one word", hashtag="two words")
    fails(hub, "search_hashtag_posts", "since must be a date", hashtag="coffee", since="last week")
    note = ok(hub, "list_social_notifications", profile_id=ADA)
    assert (note["total"], note["unread_count"]) == (1, 1) and note["notifications"][0]["actor_handle"] == "bo.silva"
    assert ok(hub, "list_social_notifications", profile_id=EVE, unread_only=True)["total"] == 0
    assert ok(hub, "list_social_notifications", profile_id=EVE, kind="follow_request")["total"] == 1
    fails(hub, "list_social_notifications", "kind", "'follow_request'", profile_id=ADA, kind="poke")


def test_create_and_delete_post(hub: Hub) -> None:
    post = ok(hub, "create_social_post", profile_id=ADA, text="Flat white #Coffee #coffee #berlin", media_type="image")
    assert (post["post_id"], post["hashtags"]) == ("PST-0009", ["coffee", "berlin"])
    assert ids(ok(hub, "get_home_feed", profile_id=BO))[0] == "PST-0009"
    assert ids(ok(hub, "search_hashtag_posts", hashtag="berlin")) == ["PST-0009"]
    fails(hub, "create_social_post", "281 characters", "limited to 280", profile_id=ADA, text="x" * 281)
    fails(hub, "create_social_post", "6 hashtags", "at most 5", profile_id=ADA, text="#a #b #c #d #e #f")
    fails(hub, "create_social_post", "no close friends", profile_id=BO, text="hi", visibility="close_friends")
    fails(hub, "create_social_post", "must not be blank", profile_id=BO, text="   ")
    fails(hub, "create_social_post", "visibility", profile_id=BO, text="hi", visibility="friends")
    fails(hub, "delete_social_post", "only the author", "@ada.chen", profile_id=BO, post_id="PST-0001")
    gone = ok(hub, "delete_social_post", profile_id=ADA, post_id="PST-0001")
    assert gone == {"post_id": "PST-0001", "deleted_comments": 3, "deleted_reposts": ["PST-0006"]}
    fails(hub, "get_social_post", "not found", post_id="PST-0001")
    assert "PST-0006" not in ids(ok(hub, "get_home_feed", profile_id=ADA))


def test_likes(hub: Hub) -> None:
    liked = ok(hub, "like_social_post", profile_id=ADA, post_id="PST-0004")
    assert liked["like_count"] == 1 and liked["liked_by_viewer"]
    note = ok(hub, "list_social_notifications", profile_id=BO)["notifications"][0]
    assert (note["notification_id"], note["kind"], note["actor_id"]) == ("NTF-0003", "like", ADA)
    fails(hub, "like_social_post", "already likes", profile_id=ADA, post_id="PST-0004")
    fails(hub, "like_social_post", "repost of 'PST-0001'", "post_id='PST-0001'", profile_id=ADA, post_id="PST-0006")
    fails(hub, "like_social_post", "followers of @bo.silva (PRF-0002) only", profile_id=DEE, post_id="PST-0002")
    fails(hub, "like_social_post", "has blocked", profile_id=ADA, post_id="PST-0007")


def test_comments(hub: Hub) -> None:
    new = ok(hub, "comment_on_social_post", profile_id=ADA, post_id="PST-0004", text=" Gorgeous! ")
    assert (new["comment_id"], new["text"], new["depth"]) == ("CMT-0004", "Gorgeous!", 0)
    reply = ok(hub, "comment_on_social_post", profile_id=BO, post_id="PST-0004", text="thanks",
               reply_to_comment_id="CMT-0004")
    assert reply["depth"] == 1 and reply["parent_comment_id"] == "CMT-0004"
    assert ids(ok(hub, "list_post_comments", post_id="PST-0004"), "comments", "comment_id") == ["CMT-0004", "CMT-0005"]
    kinds = [n["kind"] for n in ok(hub, "list_social_notifications", profile_id=ADA)["notifications"]]
    assert kinds[0] == "reply"  # Bo replying on his own post notifies only Ada, whose comment it answers
    assert ok(hub, "get_social_post", post_id="PST-0004")["comment_count"] == 2
    fails(hub, "comment_on_social_post", "depth 2", "CMT-0002", profile_id=ADA, post_id="PST-0001", text="x",
          reply_to_comment_id="CMT-0003")
    fails(hub, "comment_on_social_post", "belongs to post 'PST-0001'", profile_id=ADA, post_id="PST-0004", text="x",
          reply_to_comment_id="CMT-0001")
    fails(hub, "comment_on_social_post", "comment 'CMT-0999' not found", profile_id=ADA, post_id="PST-0004",
          text="x", reply_to_comment_id="CMT-0999")
    fails(hub, "comment_on_social_post", "followers of @bo.silva (PRF-0002) only", profile_id=DEE, post_id="PST-0002", text="x")
    fails(hub, "comment_on_social_post", "limited to 500", profile_id=ADA, post_id="PST-0004", text="y" * 501)
    fails(hub, "comment_on_social_post", "repost of", profile_id=ADA, post_id="PST-0006", text="x")


def test_reposts(hub: Hub) -> None:
    repost = ok(hub, "repost_social_post", profile_id=ADA, post_id="PST-0004")
    assert (repost["post_id"], repost["repost_of"], repost["text"]) == ("PST-0009", "PST-0004", "Lisbon trip #travel #coffee")
    assert ok(hub, "get_social_post", post_id="PST-0004", viewer_profile_id=ADA)["reposted_by_viewer"]
    assert ids(ok(hub, "list_profile_posts", profile_id=ADA))[0] == "PST-0009"
    fails(hub, "repost_social_post", "already reposted 'PST-0004' as 'PST-0009'", profile_id=ADA, post_id="PST-0004")
    fails(hub, "repost_social_post", "your own post", profile_id=BO, post_id="PST-0004")
    fails(hub, "repost_social_post", "shared with followers only", profile_id=ADA, post_id="PST-0002")
    fails(hub, "repost_social_post", "private profile", profile_id=ADA, post_id="PST-0003")
    fails(hub, "repost_social_post", "repost of 'PST-0004'", profile_id=BO, post_id="PST-0009")


def test_follow_and_unfollow(hub: Hub) -> None:
    assert ok(hub, "follow_profile", profile_id=BO, target_profile_id=FIN)["status"] == "following"
    assert ok(hub, "get_social_profile", profile_id=FIN)["follower_count"] == 2
    req = ok(hub, "follow_profile", profile_id=BO, target_profile_id=CY)
    assert (req["status"], req["request_id"]) == ("requested", "FRQ-0002")
    assert ok(hub, "get_social_profile", profile_id=CY, viewer_profile_id=BO)["relationship"]["follow_request_pending"]
    assert ok(hub, "list_social_notifications", profile_id=CY, kind="follow_request")["total"] == 1
    fails(hub, "follow_profile", "already asked", "FRQ-0002", profile_id=BO, target_profile_id=CY)
    fails(hub, "follow_profile", "already follows", profile_id=ADA, target_profile_id=BO)
    fails(hub, "follow_profile", "@dee.okafor (PRF-0004) has blocked @ada.chen", profile_id=ADA, target_profile_id=DEE)
    fails(hub, "follow_profile", "@dee.okafor (PRF-0004) has blocked @ada.chen", profile_id=DEE, target_profile_id=ADA)
    fails(hub, "follow_profile", "must differ", profile_id=ADA, target_profile_id=ADA)
    fails(hub, "follow_profile", "target_profile_id", profile_id=ADA, target_profile_id="PRF-0077")
    assert ok(hub, "unfollow_profile", profile_id=ADA, target_profile_id=BO)["status"] == "unfollowed"
    fails(hub, "get_social_post", "does not follow them", post_id="PST-0002", viewer_profile_id=ADA)
    assert ok(hub, "unfollow_profile", profile_id=BO, target_profile_id=CY)["status"] == "request_cancelled"
    assert not ok(hub, "get_social_profile", profile_id=CY, viewer_profile_id=BO)["relationship"]["follow_request_pending"]
    fails(hub, "unfollow_profile", "does not follow", "no pending request", profile_id=ADA, target_profile_id=DEE)
    assert ok(hub, "unfollow_profile", profile_id=ADA, target_profile_id=CY)["status"] == "unfollowed"
    assert ok(hub, "get_social_profile", profile_id=CY, viewer_profile_id=ADA)["relationship"] == {
        "viewer_follows": False, "follows_viewer": True, "follow_request_pending": False,
        "viewer_is_close_friend": False, "viewer_blocked_them": False, "blocked_by_them": False,
        "viewer_muted_them": False}


def test_approve_follow_request(hub: Hub) -> None:
    fails(hub, "list_profile_posts", "private profile", profile_id=EVE, viewer_profile_id=BO)
    done = ok(hub, "approve_follow_request", profile_id=EVE, requester_profile_id=BO)
    assert (done["status"], done["request_id"]) == ("approved", "FRQ-0001")
    assert ok(hub, "list_profile_posts", profile_id=EVE, viewer_profile_id=BO)["total"] == 0
    assert ok(hub, "get_social_profile", profile_id=EVE)["pending_follow_requests"] == 0
    assert ok(hub, "list_social_notifications", profile_id=BO, kind="follow_accepted")["total"] == 1
    fails(hub, "approve_follow_request", "no pending request", "pending requesters: (none)",
          profile_id=EVE, requester_profile_id=BO)
    ok(hub, "follow_profile", profile_id=ADA, target_profile_id=EVE)
    fails(hub, "approve_follow_request", "pending requesters: PRF-0001", profile_id=EVE, requester_profile_id=FIN)


def test_reports(hub: Hub) -> None:
    report = ok(hub, "report_social_post", profile_id=BO, post_id="PST-0001", reason="spam", details=" ads ")
    assert (report["report_id"], report["status"], report["details"]) == ("RPT-0002", "open", "ads")
    assert ok(hub, "get_social_post", post_id="PST-0001", viewer_profile_id=BO)["reported_by_viewer"]
    fails(hub, "report_social_post", "already reported", "RPT-0002", profile_id=BO, post_id="PST-0001", reason="spam")
    fails(hub, "report_social_post", "already reported", "RPT-0001", profile_id=ADA, post_id="PST-0004", reason="other")
    fails(hub, "report_social_post", "your own post", profile_id=ADA, post_id="PST-0001", reason="spam")
    fails(hub, "report_social_post", "close friends only", profile_id=CY, post_id="PST-0005", reason="spam")
    fails(hub, "report_social_post", "reason", "'spam'", profile_id=BO, post_id="PST-0001", reason="boring")
