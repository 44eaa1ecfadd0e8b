"""Social-feed server state: profiles, follows and requests, posts, comments, notifications, reports."""

from __future__ import annotations

import random
from bisect import bisect
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, entity_ids, naming
from prove.env.world import CITIES, FIRST_NAMES, LAST_NAMES, days_before, iso, shift

MediaType = Literal["none", "image", "video", "link"]
Visibility = Literal["public", "followers", "close_friends"]
RequestStatus = Literal["pending", "approved", "cancelled"]
NotificationKind = Literal["like", "comment", "reply", "repost", "follow", "follow_request", "follow_accepted"]
ReportReason = Literal["spam", "harassment", "hate_speech", "misinformation", "violence", "nudity", "other"]
ReportStatus = Literal["open", "reviewed", "dismissed"]
FollowStatus = Literal["following", "requested", "unfollowed", "request_cancelled", "approved"]

MAX_POST_CHARS = 280
MAX_HASHTAGS = 5
MAX_COMMENT_CHARS = 500
MAX_COMMENT_DEPTH = 2
"""Top-level comments have depth 0; a reply to a depth-2 comment would be too deep."""

ProfileId = entity_id("profile", "Profile id, e.g. 'PRF-0007'.", example="PRF-0007")
FollowRequestId = entity_id("follow_request", "Follow request id, e.g. 'FRQ-0003'.", example="FRQ-0003")
PostId = entity_id("post", "Post id, e.g. 'PST-0042'.", example="PST-0042")
CommentId = entity_id("comment", "Comment id, e.g. 'CMT-0031'.", example="CMT-0031")
NotificationId = entity_id("notification", "Notification id, e.g. 'NTF-0120'.", example="NTF-0120")
ReportId = entity_id("report", "Report id, e.g. 'RPT-0002'.", example="RPT-0002")


class Profile(Record):
    profile_id: ProfileId
    handle: str = Field(description="Unique handle without the leading '@'.")
    display_name: str = Field(json_schema_extra=naming("name"))
    bio: str
    city: str
    private: bool = Field(description="Private profiles approve followers; only followers see posts.")
    verified: bool
    joined_on: str
    following: entity_ids("profile", "Profile ids this profile follows.") = Field(default_factory=list)
    close_friends: entity_ids("profile", "Followers who see close-friends posts.") = Field(default_factory=list)
    blocked: entity_ids("profile", "Profile ids this profile has blocked.") = Field(default_factory=list)
    muted: entity_ids("profile", "Followed ids hidden from the home feed.") = Field(default_factory=list)


class FollowRequest(Record):
    request_id: FollowRequestId
    requester_id: ProfileId
    target_id: entity_id("profile", "The private profile asked to approve.")
    status: RequestStatus
    created_at: str


class Post(Record):
    post_id: PostId
    author_id: ProfileId
    text: str
    media_type: MediaType
    hashtags: list[str] = Field(description="Lower-case tags without '#', in order of appearance.")
    visibility: Visibility
    created_at: str
    liked_by: entity_ids("profile", "Profile ids that liked the post.") = Field(default_factory=list)
    repost_of: PostId | None = Field(None, description="For a repost: the original post id.")


class Comment(Record):
    comment_id: CommentId
    post_id: PostId
    author_id: ProfileId
    text: str
    parent_comment_id: CommentId | None = None
    depth: int = Field(description="0 for a top-level comment, +1 per reply level.")
    created_at: str


class Notification(Record):
    notification_id: NotificationId
    profile_id: entity_id("profile", "Recipient.")
    kind: NotificationKind
    actor_id: ProfileId
    post_id: PostId | None = None
    comment_id: CommentId | None = None
    created_at: str
    read: bool = False


class Report(Record):
    report_id: ReportId
    post_id: PostId
    reporter_id: ProfileId
    reason: ReportReason
    details: str
    status: ReportStatus
    created_at: str


class SocialState(ServerState):
    profiles: dict[str, Profile] = Field(default_factory=dict)
    follow_requests: dict[str, FollowRequest] = Field(default_factory=dict)
    posts: dict[str, Post] = Field(default_factory=dict)
    comments: dict[str, Comment] = Field(default_factory=dict)
    notifications: dict[str, Notification] = Field(default_factory=dict)
    reports: dict[str, Report] = Field(default_factory=dict)


_BIOS = (
    "Coffee first, code second.", "Amateur photographer based in {city}.", "Runner. Reader. Dog person.",
    "Designer who cooks too much.", "Exploring {city} one cafe at a time.", "Product person, climber, optimist.",
    "Plant parent and weekend baker.", "Writing about tech and the people behind it.", "Music, maps and mountains.",
    "Teacher by day, guitarist by night.", "Cyclist chasing sunsets around {city}.", "Opinions are my cat's.",
)
_TOPICS: dict[str, tuple[str, ...]] = {
    "travel": ("Just landed in {city} and already in love", "Hidden gem in {city}: a tiny bookshop by the river"),
    "coffee": ("Best flat white in {city}? Taking recommendations", "Third coffee of the day, no regrets"),
    "running": ("Morning 10k done before the city woke up", "New personal best on the river loop today"),
    "photography": ("Golden hour over {city} never gets old", "Shot this on film last weekend"),
    "foodie": ("Homemade ramen attempt number four", "This taco place in {city} is unreal"),
    "tech": ("Finally migrated my side project to a new framework", "Hot take: most meetings could be a doc"),
    "music": ("Live jazz in {city} tonight was something else", "On repeat all week, send help"),
    "books": ("Finished a great novel on the train", "Book club pick for May is in, thoughts?"),
    "hiking": ("Summit views worth every step", "Trail mix, thermos, two dogs: perfect Sunday"),
    "gardening": ("First tomatoes of the season!", "Balcony garden update: the basil is winning"),
    "startup": ("We shipped! Six months of work live today", "Hiring two engineers in {city}, DM me"),
    "cycling": ("120 km ride along the coast", "Commuting by bike all month, week one down"),
    "art": ("New sketchbook, new habits", "Gallery night in {city} was packed"),
    "football": ("What a finish last night", "Sunday league: we won 3-2!"),
}
_VISIBILITIES: tuple[Visibility, ...] = ("public", "followers", "close_friends")
_MEDIA: tuple[MediaType, ...] = ("none", "image", "video", "link")
_COMMENTS = (
    "Love this!", "Where exactly is this?", "So true.", "Congrats, well deserved!", "Need to try this.",
    "Great shot!", "Saving this for later.", "Haha, same here.", "Looks amazing.", "Tell me more!",
    "Agree 100%.", "Count me in next time.", "This made my day.", "Recipe please?",
)


def _pick(rng: random.Random, options: tuple, cum: tuple[float, ...]) -> Any:
    """A weighted choice given cumulative weights (cheaper than `rng.choices` in a hot loop)."""
    return options[bisect(cum, rng.random() * cum[-1])]


def _handle(first: str, last: str, rng: random.Random, taken: set[str]) -> str:
    handle = f"{first}.{last}".lower()
    while handle in taken:
        handle = f"{first.lower()}_{last.lower()}{rng.randrange(2, 99)}"
    taken.add(handle)
    return handle


def initial_state(seed: int) -> SocialState:
    """A social network with ~35 profiles, ~150 posts, ~250 comments; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-04-22T18:30"
    state = SocialState(now=now)
    now_dt = state.now_dt()
    prf_id, pst_id, cmt_id = Counter("PRF"), Counter("PST"), Counter("CMT")
    frq_id, ntf_id, rpt_id = Counter("FRQ"), Counter("NTF"), Counter("RPT")
    taken: set[str] = set()
    for _ in range(rng.randrange(30, 40)):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        pid, city = prf_id(), rng.choice(CITIES)
        state.profiles[pid] = Profile(
            profile_id=pid, handle=_handle(first, last, rng, taken), display_name=f"{first} {last}",
            bio=rng.choice(_BIOS).format(city=city), city=city, private=rng.random() < 0.2,
            verified=rng.random() < 0.12, joined_on=days_before(now, rng, 2500, 60)[:10],
        )
    ids = list(state.profiles)
    following: dict[str, set[str]] = {p: set() for p in ids}
    pending: list[tuple[str, str]] = []
    for pid in ids:
        for target in rng.sample([o for o in ids if o != pid], rng.randrange(4, 14)):
            if state.profiles[target].private and rng.random() < 0.3:
                pending.append((pid, target))
            else:
                following[pid].add(target)
    blocks = {(a, b) for a, b in (rng.sample(ids, 2) for _ in range(rng.randrange(3, 6)))}
    for a, b in blocks:
        following[a].discard(b)
        following[b].discard(a)
    pending = [(a, b) for a, b in pending if (a, b) not in blocks and (b, a) not in blocks]
    followers: dict[str, list[str]] = {p: sorted(q for q in ids if p in following[q]) for p in ids}
    for pid, prof in state.profiles.items():
        prof.following = sorted(following[pid])
        prof.close_friends = sorted(rng.sample(followers[pid], min(len(followers[pid]), rng.randrange(0, 4))))
        prof.blocked = sorted(b for a, b in blocks if a == pid)
        if prof.following and rng.random() < 0.25:
            prof.muted = [rng.choice(prof.following)]
    for requester, target in sorted(pending, key=lambda _: rng.random()):
        rid = frq_id()
        state.follow_requests[rid] = FollowRequest(
            request_id=rid, requester_id=requester, target_id=target, status="pending",
            created_at=days_before(now, rng, 12),
        )

    seen: dict[tuple[str, str], list[str]] = {}

    def audience(author: str, visibility: str) -> list[str]:
        """Who can see a post of `author` (the rules the tools enforce)."""
        if (author, visibility) in seen:
            return seen[author, visibility]
        prof = state.profiles[author]
        if visibility == "close_friends":
            return prof.close_friends
        if visibility == "followers" or prof.private:
            return followers[author]
        seen[author, visibility] = [p for p in ids if p != author and (author, p) not in blocks
                                    and (p, author) not in blocks]
        return seen[author, visibility]

    # Draft originals and reposts, then number posts in time order.
    drafts: list[dict] = []
    for pid, prof in state.profiles.items():
        for _ in range(rng.randrange(2, 7)):
            tags = rng.sample(list(_TOPICS), _pick(rng, (0, 1, 2, 3), (2, 7, 10, 11)))
            topic = tags[0] if tags else rng.choice(list(_TOPICS))
            text = rng.choice(_TOPICS[topic]).format(city=prof.city if rng.random() < 0.7 else rng.choice(CITIES))
            visibility = _pick(rng, _VISIBILITIES, (7, 9, 10))
            drafts.append({
                "author": pid, "at": days_before(now, rng, 45), "tags": tags, "repost_of": None,
                "text": " ".join([text] + [f"#{t}" for t in tags]), "visibility": visibility,
                "media": _pick(rng, _MEDIA, (4, 8, 9, 10)),
            })
    for i, draft in enumerate(list(drafts)):
        fans = audience(draft["author"], draft["visibility"])
        if draft["visibility"] == "public" and not state.profiles[draft["author"]].private and fans \
                and rng.random() < 0.1:
            at = datetime.fromisoformat(draft["at"]) + timedelta(minutes=rng.randrange(5, 3000))
            drafts.append({**draft, "author": rng.choice(fans), "at": iso(min(at, now_dt)), "repost_of": i})
    order = sorted(range(len(drafts)), key=lambda i: (drafts[i]["at"], i))
    post_ids = {i: pst_id() for i in order}
    events: list[tuple[str, str, NotificationKind, str, str | None, str | None]] = []
    for i in order:
        d = drafts[i]
        post = Post(
            post_id=post_ids[i], author_id=d["author"], text=d["text"], media_type=d["media"],
            hashtags=d["tags"], visibility="public" if d["repost_of"] is not None else d["visibility"],
            created_at=d["at"], repost_of=None if d["repost_of"] is None else post_ids[d["repost_of"]],
        )
        if post.repost_of is not None:
            events.append((d["at"], drafts[d["repost_of"]]["author"], "repost", d["author"], post.repost_of, None))
        else:
            fans = audience(d["author"], d["visibility"])
            post.liked_by = sorted(rng.sample(fans, min(len(fans), rng.randrange(0, 12))))
            events += [(d["at"], d["author"], "like", fan, post.post_id, None) for fan in post.liked_by[:2]]
        state.posts[post.post_id] = post
    # Comments: threads under originals, numbered in time order.
    threads: list[tuple[str, str, str, int, int | None]] = []  # (at, post, author, depth, parent index)
    for post in state.posts.values():
        if post.repost_of is not None:
            continue
        fans = audience(post.author_id, post.visibility) + [post.author_id]
        base = datetime.fromisoformat(post.created_at)
        for _ in range(_pick(rng, (0, 1, 2, 3), (3, 6, 8, 9))):
            parent: int | None = None
            at = base
            for depth in range(_pick(rng, (1, 2, 3), (6, 9, 10))):
                at = min(at + timedelta(minutes=rng.randrange(3, 900)), now_dt)
                threads.append((iso(at), post.post_id, rng.choice(fans), depth, parent))
                parent = len(threads) - 1
    corder = sorted(range(len(threads)), key=lambda i: (threads[i][0], i))
    comment_ids = {i: cmt_id() for i in corder}
    for i in corder:
        at, post_id, author, depth, parent = threads[i]
        cid = comment_ids[i]
        state.comments[cid] = Comment(
            comment_id=cid, post_id=post_id, author_id=author, text=rng.choice(_COMMENTS), depth=depth,
            parent_comment_id=None if parent is None else comment_ids[parent], created_at=at,
        )
        target = state.posts[post_id].author_id if parent is None else threads[parent][2]
        events.append((at, target, "comment" if parent is None else "reply", author, post_id, cid))
    for req in state.follow_requests.values():
        events.append((req.created_at, req.target_id, "follow_request", req.requester_id, None, None))
    for pid in ids:
        for fan in followers[pid][:3]:
            events.append((days_before(now, rng, 20), pid, "follow", fan, None, None))
    cutoff = shift(now, days=-10)
    recent = sorted((e for e in events if e[0] >= cutoff and e[1] != e[3]), key=lambda e: e[0])
    read_before = shift(now, days=-2)
    for at, recipient, kind, actor, post_id, comment_id in recent:
        nid = ntf_id()
        state.notifications[nid] = Notification(
            notification_id=nid, profile_id=recipient, kind=kind, actor_id=actor, post_id=post_id,
            comment_id=comment_id, created_at=at, read=at < read_before or rng.random() < 0.3,
        )
    reported: set[tuple[str, str]] = set()
    for _ in range(rng.randrange(3, 7)):
        post = rng.choice(list(state.posts.values()))
        fans = [f for f in audience(post.author_id, post.visibility) if (post.post_id, f) not in reported]
        if fans:
            reporter = rng.choice(fans)
            reported.add((post.post_id, reporter))
            rid = rpt_id()
            state.reports[rid] = Report(
                report_id=rid, post_id=post.post_id, reporter_id=reporter,
                reason=rng.choice(["spam", "misinformation", "harassment", "other"]), details="",
                status=rng.choice(["open", "reviewed"]), created_at=max(post.created_at, days_before(now, rng, 5)),
            )
    return state
