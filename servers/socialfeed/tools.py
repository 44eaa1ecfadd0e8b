"""Social-feed tools: profiles, home feed, posts, comments, likes, reposts, follows, notifications, reports."""

from __future__ import annotations

import collections
import re
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    Limit,
    Offset,
    Page,
    day,
    entity_id,
    naming,
    parse_day,
    text,
)
from prove_servers.socialfeed.state import (
    MAX_COMMENT_CHARS,
    MAX_COMMENT_DEPTH,
    MAX_HASHTAGS,
    MAX_POST_CHARS,
    Comment,
    CommentId,
    FollowRequest,
    FollowRequestId,
    FollowStatus,
    MediaType,
    Notification,
    NotificationId,
    NotificationKind,
    Post,
    PostId,
    Profile,
    ProfileId,
    Report,
    ReportReason,
    SocialState,
    Visibility,
)

ActorId = entity_id("profile", "Your own profile id (the account acting), e.g. 'PRF-0004'.", example="PRF-0004")
Viewer = Annotated[ProfileId | None, Field(
    description="Profile id of who is looking (decides what is visible); omit for the logged-out public view.")]

_HINT = "use search_social_profiles to find profile ids by handle or name"
_TAG = re.compile(r"#(\w+)")


class ProfileCard(BaseModel):
    profile_id: ProfileId
    handle: str
    display_name: str = Field(json_schema_extra=naming("name"))
    city: str
    private: bool
    verified: bool
    follower_count: int


class ProfileList(Page):
    profiles: list[ProfileCard]


class Relationship(BaseModel):
    viewer_follows: bool
    follows_viewer: bool
    follow_request_pending: bool = Field(description="The viewer asked to follow and awaits approval.")
    viewer_is_close_friend: bool
    viewer_blocked_them: bool
    blocked_by_them: bool
    viewer_muted_them: bool


class ProfileDetails(BaseModel):
    profile_id: ProfileId
    handle: str
    display_name: str = Field(json_schema_extra=naming("name"))
    bio: str
    city: str
    private: bool
    verified: bool
    joined_on: str
    follower_count: int
    following_count: int
    post_count: int
    pending_follow_requests: int = Field(description="Requests awaiting this profile's approval.")
    relationship: Relationship | None = Field(description="How the viewer relates to this profile.")


class PostView(BaseModel):
    post_id: PostId
    author_id: ProfileId
    author_handle: str
    text: str
    media_type: MediaType
    hashtags: list[str]
    visibility: Visibility
    created_at: str
    repost_of: PostId | None = Field(description="For a repost: the original post (like or comment on that one).")
    like_count: int
    repost_count: int
    comment_count: int
    liked_by_viewer: bool | None
    reposted_by_viewer: bool | None
    reported_by_viewer: bool | None


class PostList(Page):
    posts: list[PostView]


class CommentView(BaseModel):
    comment_id: CommentId
    post_id: PostId
    author_id: ProfileId
    author_handle: str
    text: str
    parent_comment_id: CommentId | None
    depth: int
    created_at: str


class CommentList(Page):
    post_id: PostId
    comments: list[CommentView] = Field(description="Threads in order: each comment followed by its replies.")


class NotificationView(BaseModel):
    notification_id: NotificationId
    kind: NotificationKind
    actor_id: ProfileId
    actor_handle: str
    post_id: PostId | None
    comment_id: CommentId | None
    created_at: str
    read: bool


class NotificationList(Page):
    profile_id: ProfileId
    notifications: list[NotificationView]
    unread_count: int


class FollowResult(BaseModel):
    profile_id: ProfileId
    target_profile_id: ProfileId
    status: FollowStatus
    request_id: FollowRequestId | None = None


class DeletedPost(BaseModel):
    post_id: str
    deleted_comments: int
    deleted_reposts: list[str]


def _profile(state: SocialState, profile_id: str, param: str) -> Profile:
    return find(state.profiles, profile_id, hint=_HINT)


def _viewer(state: SocialState, viewer_profile_id: str | None) -> Profile | None:
    return None if viewer_profile_id is None else _profile(state, viewer_profile_id, "viewer_profile_id")


def _post(state: SocialState, post_id: str, param: str = "post_id") -> Post:
    return find(state.posts, post_id, hint="find post ids with get_home_feed, list_profile_posts or search_hashtag_posts")


def _at(p: Profile) -> str:
    return f"@{p.handle} ({p.profile_id})"


def _walled(viewer: Profile | None, author: Profile) -> str | None:
    """Why `viewer` cannot see anything `author` posts (blocks, private profile), or None."""
    if viewer is not None and viewer.profile_id == author.profile_id:
        return None
    who = "a logged-out viewer" if viewer is None else _at(viewer)
    if viewer is not None and viewer.profile_id in author.blocked:
        return f"{_at(author)} has blocked {who}"
    if viewer is not None and author.profile_id in viewer.blocked:
        return f"{who} has blocked {_at(author)}"
    if author.private and (viewer is None or author.profile_id not in viewer.following):
        return (f"{_at(author)} is a private profile and {who} does not follow it "
                "(request to follow with follow_profile)")
    return None


def _hidden(state: SocialState, viewer: Profile | None, post: Post) -> str | None:
    """Why `viewer` cannot see `post`, or None when it can (a repost also needs its original)."""
    author = state.profiles[post.author_id]
    if viewer is not None and viewer.profile_id == author.profile_id:
        return None
    wall = _walled(viewer, author)
    if wall is not None:
        return wall
    who = "a logged-out viewer" if viewer is None else _at(viewer)
    if post.visibility == "followers" and (viewer is None or author.profile_id not in viewer.following):
        return f"post '{post.post_id}' is visible to followers of {_at(author)} only and {who} does not follow them"
    if post.visibility == "close_friends" and (viewer is None or viewer.profile_id not in author.close_friends):
        return f"post '{post.post_id}' is shared with {_at(author)}'s close friends only"
    if post.repost_of is not None and post.repost_of in state.posts:
        return _hidden(state, viewer, state.posts[post.repost_of])
    return None


def _visible(state: SocialState, viewer: Profile | None, post_id: str, param: str = "post_id") -> Post:
    post = _post(state, post_id, param)
    reason = _hidden(state, viewer, post)
    require(reason is None, f"cannot see post '{post_id}' (parameter '{param}'): {reason}",
            params=(param,), rejected=(post_id, reason))
    return post


def _original(post: Post, verb: str) -> None:
    require(post.repost_of is None,
            f"post '{post.post_id}' is a repost of '{post.repost_of}'; {verb} the original: post_id='{post.repost_of}'",
            params=('post_id',), rejected=(post.post_id, post.repost_of, verb))


class _Stats:
    """Comment and repost counts per post, computed once per call."""

    def __init__(self, state: SocialState) -> None:
        self.comments = collections.Counter(c.post_id for c in state.comments.values())
        self.reposts = collections.Counter(p.repost_of for p in state.posts.values() if p.repost_of)
        self.reposted = {(p.author_id, p.repost_of) for p in state.posts.values() if p.repost_of}
        self.reported = {(r.reporter_id, r.post_id) for r in state.reports.values()}


def _view(state: SocialState, post: Post, viewer: Profile | None, stats: _Stats | None = None) -> PostView:
    stats = stats or _Stats(state)
    me = viewer.profile_id if viewer else None
    return PostView(
        post_id=post.post_id, author_id=post.author_id, author_handle=state.profiles[post.author_id].handle,
        text=post.text, media_type=post.media_type, hashtags=post.hashtags, visibility=post.visibility,
        created_at=post.created_at, repost_of=post.repost_of, like_count=len(post.liked_by),
        repost_count=stats.reposts[post.post_id], comment_count=stats.comments[post.post_id],
        liked_by_viewer=None if me is None else me in post.liked_by,
        reposted_by_viewer=None if me is None else (me, post.post_id) in stats.reposted,
        reported_by_viewer=None if me is None else (me, post.post_id) in stats.reported,
    )


def _page(state: SocialState, posts: list[Post], viewer: Profile | None, offset: int, limit: int) -> PostList:
    newest = sorted(posts, key=lambda p: (p.created_at, p.post_id), reverse=True)
    stats = _Stats(state)
    return PostList.of(newest, offset, limit, view=lambda p: _view(state, p, viewer, stats))


def _followers(state: SocialState, profile_id: str) -> list[str]:
    return [p.profile_id for p in state.profiles.values() if profile_id in p.following]


def _pending(state: SocialState, requester_id: str, target_id: str) -> FollowRequest | None:
    return next((r for r in state.follow_requests.values() if r.status == "pending"
                 and r.requester_id == requester_id and r.target_id == target_id), None)


def _notify(state: SocialState, recipient: str, kind: NotificationKind, actor: str,
            post_id: str | None = None, comment_id: str | None = None) -> None:
    if recipient == actor:
        return
    note = Notification(notification_id=state.new_id("NTF"), profile_id=recipient, kind=kind, actor_id=actor,
                        post_id=post_id, comment_id=comment_id, created_at=state.now)
    state.notifications[note.notification_id] = note


def _card(state: SocialState, p: Profile) -> ProfileCard:
    return ProfileCard(profile_id=p.profile_id, handle=p.handle, display_name=p.display_name, city=p.city,
                       private=p.private, verified=p.verified, follower_count=len(_followers(state, p.profile_id)))


def _comment_view(state: SocialState, c: Comment) -> CommentView:
    return CommentView(comment_id=c.comment_id, post_id=c.post_id, author_id=c.author_id,
                       author_handle=state.profiles[c.author_id].handle, text=c.text,
                       parent_comment_id=c.parent_comment_id, depth=c.depth, created_at=c.created_at)


@tool()
def search_social_profiles(
    state: SocialState,
    query: text("query", "Case-insensitive substring of the handle or display name; '@' is ignored.", max_length=100, listed="display_name") = "",
    city: text("word", "Only profiles in this city.", listed="city", optional=True) = None,
    verified_only: Annotated[bool, Field(description="Only verified profiles.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ProfileList:
    """Find social profiles by handle or name, optionally in one city or verified only."""
    q = query.strip().lstrip("@").lower()
    found = [
        p for p in state.profiles.values()
        if (q in p.handle.lower() or q in p.display_name.lower())
        and (city is None or p.city.lower() == city.strip().lower()) and (p.verified or not verified_only)
    ]
    return ProfileList.of(found, offset, limit, view=lambda p: _card(state, p))


@tool(sensitive=("profile_id", "viewer_profile_id"))
def get_social_profile(
    state: SocialState,
    profile_id: entity_id("profile", "Profile to show, e.g. 'PRF-0007'.", example="PRF-0007"),
    viewer_profile_id: Viewer = None,
) -> ProfileDetails:
    """Get a profile's bio, counts and privacy; with a viewer, also how the viewer relates to it."""
    prof = _profile(state, profile_id, "profile_id")
    viewer = _viewer(state, viewer_profile_id)
    rel = None
    if viewer is not None:
        rel = Relationship(
            viewer_follows=profile_id in viewer.following, follows_viewer=viewer.profile_id in prof.following,
            follow_request_pending=_pending(state, viewer.profile_id, profile_id) is not None,
            viewer_is_close_friend=viewer.profile_id in prof.close_friends,
            viewer_blocked_them=profile_id in viewer.blocked, blocked_by_them=viewer.profile_id in prof.blocked,
            viewer_muted_them=profile_id in viewer.muted,
        )
    return ProfileDetails(
        profile_id=prof.profile_id, handle=prof.handle, display_name=prof.display_name, bio=prof.bio,
        city=prof.city, private=prof.private, verified=prof.verified, joined_on=prof.joined_on,
        follower_count=len(_followers(state, profile_id)), following_count=len(prof.following),
        post_count=sum(p.author_id == profile_id for p in state.posts.values()),
        pending_follow_requests=sum(r.status == "pending" and r.target_id == profile_id
                                    for r in state.follow_requests.values()),
        relationship=rel,
    )


@tool(sensitive=("profile_id",))
def get_home_feed(
    state: SocialState,
    profile_id: entity_id("profile", "Whose home feed, e.g. 'PRF-0004'.", example="PRF-0004"),
    media_type: Annotated[MediaType | None, Field(description="Only posts with this kind of media.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PostList:
    """A profile's home feed: posts and reposts by the profiles it follows and its own, newest first.

    Muted profiles and posts the profile cannot see are left out.
    """
    me = _profile(state, profile_id, "profile_id")
    authors = set(me.following) - set(me.muted) | {profile_id}
    found = [p for p in state.posts.values() if p.author_id in authors
             and (media_type is None or p.media_type == media_type) and _hidden(state, me, p) is None]
    return _page(state, found, me, offset, limit)


@tool(sensitive=("profile_id", "viewer_profile_id"))
def list_profile_posts(
    state: SocialState,
    profile_id: entity_id("profile", "Author whose posts to list, e.g. 'PRF-0007'.", example="PRF-0007"),
    viewer_profile_id: Viewer = None,
    include_reposts: Annotated[bool, Field(description="Also list the author's reposts.")] = True,
    media_type: Annotated[MediaType | None, Field(description="Only posts with this kind of media.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PostList:
    """List the posts of one profile that the viewer can see, newest first."""
    author = _profile(state, profile_id, "profile_id")
    viewer = _viewer(state, viewer_profile_id)
    reason = _walled(viewer, author)
    require(reason is None, f"cannot list posts of {_at(author)} (parameter 'profile_id'): {reason}",
            params=('profile_id',), rejected=(reason,))
    found = [p for p in state.posts.values() if p.author_id == profile_id
             and (include_reposts or p.repost_of is None)
             and (media_type is None or p.media_type == media_type) and _hidden(state, viewer, p) is None]
    return _page(state, found, viewer, offset, limit)


@tool(sensitive=("post_id", "viewer_profile_id"))
def get_social_post(state: SocialState, post_id: PostId, viewer_profile_id: Viewer = None) -> PostView:
    """Get one post with its like, repost and comment counts, if the viewer can see it."""
    viewer = _viewer(state, viewer_profile_id)
    return _view(state, _visible(state, viewer, post_id), viewer)


@tool(sensitive=("post_id", "viewer_profile_id"))
def list_post_comments(
    state: SocialState,
    post_id: PostId,
    viewer_profile_id: Viewer = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CommentList:
    """List a post's comments as threads (each comment followed by its replies), oldest thread first."""
    viewer = _viewer(state, viewer_profile_id)
    post = _visible(state, viewer, post_id)
    _original(post, "list the comments of")
    hidden = set() if viewer is None else set(viewer.blocked) | {
        p.profile_id for p in state.profiles.values() if viewer.profile_id in p.blocked}
    children: dict[str | None, list[Comment]] = collections.defaultdict(list)
    for c in state.comments.values():
        if c.post_id == post_id:
            children[c.parent_comment_id].append(c)
    ordered: list[Comment] = []

    def walk(parent: str | None) -> None:
        for c in children.get(parent, []):
            if c.author_id not in hidden:
                ordered.append(c)
                walk(c.comment_id)

    walk(None)
    return CommentList.of(ordered, offset, limit, view=lambda c: _comment_view(state, c),
                          post_id=post_id)


@tool(sensitive=("viewer_profile_id",))
def search_hashtag_posts(
    state: SocialState,
    hashtag: text("query", "Hashtag with or without '#', e.g. 'coffee'.", example="coffee", min_length=1, max_length=60, listed="hashtags"),
    viewer_profile_id: Viewer = None,
    media_type: Annotated[MediaType | None, Field(description="Only posts with this kind of media.")] = None,
    since: Annotated[day("Only posts on or after this date.") | None,
                     Field(description="Only posts on or after this date.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PostList:
    """Find original posts tagged with a hashtag that the viewer can see, newest first."""
    tag = hashtag.strip().lstrip("#").lower()
    require(bool(tag) and re.fullmatch(r"\w+", tag) is not None,
            f"hashtag must be one word of letters, digits or '_' (e.g. 'coffee'), got '{hashtag}'",
            params=('hashtag',), rejected=(hashtag,), choices=('coffee',))
    viewer = _viewer(state, viewer_profile_id)
    first = parse_day(since, "since").isoformat() if since is not None else ""
    found = [p for p in state.posts.values() if p.repost_of is None and tag in p.hashtags
             and p.created_at[:10] >= first and (media_type is None or p.media_type == media_type)
             and _hidden(state, viewer, p) is None]
    return _page(state, found, viewer, offset, limit)


@tool(sensitive=("profile_id",))
def list_social_notifications(
    state: SocialState,
    profile_id: entity_id("profile", "Whose notifications, e.g. 'PRF-0004'.", example="PRF-0004"),
    unread_only: Annotated[bool, Field(description="Only notifications not read yet.")] = False,
    kind: Annotated[NotificationKind | None, Field(description="Only notifications of this kind.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> NotificationList:
    """List a profile's notifications (likes, comments, reposts, follows, follow requests), newest first."""
    _profile(state, profile_id, "profile_id")
    mine = [n for n in state.notifications.values() if n.profile_id == profile_id]
    found = [n for n in reversed(mine) if (not unread_only or not n.read) and (kind is None or n.kind == kind)]
    return NotificationList.of(found, offset, limit, view=lambda n: NotificationView(
        notification_id=n.notification_id, kind=n.kind, actor_id=n.actor_id,
        actor_handle=state.profiles[n.actor_id].handle, post_id=n.post_id, comment_id=n.comment_id,
        created_at=n.created_at, read=n.read), profile_id=profile_id, unread_count=sum(not n.read for n in mine))


@tool(write=True, sensitive=("profile_id",))
def create_social_post(
    state: SocialState,
    profile_id: ActorId,
    text: text("body", f"Post text, at most {MAX_POST_CHARS} characters; '#word' adds a hashtag (at most {MAX_HASHTAGS}).", listed="text", min_length=1),
    media_type: Annotated[MediaType, Field(description="Kind of media attached.")] = "none",
    visibility: Annotated[Visibility, Field(description="Who may see it: everyone, followers, or close friends.")] = "public",
) -> PostView:
    """Publish a new post from your profile; hashtags are taken from '#words' in the text."""
    me = _profile(state, profile_id, "profile_id")
    body = text.strip()
    require(bool(body), "text must not be blank", params=('text',))
    require(len(body) <= MAX_POST_CHARS,
            f"text is {len(body)} characters long; posts are limited to {MAX_POST_CHARS}",
            reason='limit', params=('text',), rejected=(MAX_POST_CHARS,))
    tags = list(dict.fromkeys(t.lower() for t in _TAG.findall(body)))
    require(len(tags) <= MAX_HASHTAGS,
            f"text has {len(tags)} hashtags ({', '.join('#' + t for t in tags)}); at most {MAX_HASHTAGS} are allowed",
            reason='limit', params=('text',), rejected=(MAX_HASHTAGS,),
            choices=tuple('#' + t for t in tags))
    require(visibility != "close_friends" or bool(me.close_friends),
            f"{_at(me)} has no close friends yet; choose visibility 'public' or 'followers'",
            params=('visibility',))
    state.advance()
    post = Post(post_id=state.new_id("PST"), author_id=profile_id, text=body, media_type=media_type,
                hashtags=tags, visibility=visibility, created_at=state.now)
    state.posts[post.post_id] = post
    return _view(state, post, me)


@tool(write=True, sensitive=("profile_id", "post_id"))
def delete_social_post(state: SocialState, profile_id: ActorId, post_id: PostId) -> DeletedPost:
    """Delete one of your own posts (or reposts); its comments and any reposts of it go too."""
    me = _profile(state, profile_id, "profile_id")
    post = _post(state, post_id)
    author = state.profiles[post.author_id]
    require(post.author_id == profile_id,
            f"only the author can delete a post: '{post_id}' was posted by {_at(author)}, not {_at(me)}",
            reason='state', rejected=(post_id,))
    reposts = [p.post_id for p in state.posts.values() if p.repost_of == post_id]
    doomed = [c for c, v in state.comments.items() if v.post_id == post_id]
    for pid in [post_id, *reposts]:
        del state.posts[pid]
    for cid in doomed:
        del state.comments[cid]
    return DeletedPost(post_id=post_id, deleted_comments=len(doomed), deleted_reposts=reposts)


@tool(write=True, sensitive=("profile_id", "post_id"))
def like_social_post(state: SocialState, profile_id: ActorId, post_id: PostId) -> PostView:
    """Like a post you can see; the author is notified."""
    me = _profile(state, profile_id, "profile_id")
    post = _visible(state, me, post_id)
    _original(post, "like")
    require(profile_id not in post.liked_by, f"{_at(me)} already likes post '{post_id}'",
            reason='conflict', rejected=(post_id,))
    post.liked_by = sorted([*post.liked_by, profile_id])
    _notify(state, post.author_id, "like", profile_id, post_id)
    return _view(state, post, me)


@tool(write=True, sensitive=("profile_id", "post_id", "reply_to_comment_id"))
def comment_on_social_post(
    state: SocialState,
    profile_id: ActorId,
    post_id: PostId,
    text: text("body", f"Comment text, at most {MAX_COMMENT_CHARS} characters.", listed="text", min_length=1),
    reply_to_comment_id: Annotated[CommentId | None, Field(description="Comment to reply to, e.g. 'CMT-0031'; omit for a top-level comment.", json_schema_extra={EXAMPLE: "CMT-0031"})] = None,
) -> CommentView:
    """Comment on a post you can see, or reply to one of its comments (threads nest 3 levels deep)."""
    me = _profile(state, profile_id, "profile_id")
    post = _visible(state, me, post_id)
    _original(post, "comment on")
    body = text.strip()
    require(bool(body), "text must not be blank", params=('text',))
    require(len(body) <= MAX_COMMENT_CHARS,
            f"text is {len(body)} characters long; comments are limited to {MAX_COMMENT_CHARS}",
            reason='limit', params=('text',), rejected=(MAX_COMMENT_CHARS,))
    depth, parent = 0, None
    if reply_to_comment_id is not None:
        parent = find(state.comments, reply_to_comment_id, hint=f"see the comments of '{post_id}' with list_post_comments")
        require(parent.post_id == post_id,
                f"comment '{reply_to_comment_id}' belongs to post '{parent.post_id}', not '{post_id}' "
                "(parameter 'reply_to_comment_id')",
                params=('reply_to_comment_id',),
                rejected=(reply_to_comment_id, parent.post_id, post_id))
        require(parent.depth < MAX_COMMENT_DEPTH,
                f"comment '{reply_to_comment_id}' is already a reply at depth {parent.depth}; threads nest at most "
                f"{MAX_COMMENT_DEPTH + 1} levels, so reply to its parent '{parent.parent_comment_id}' instead",
                reason='conflict',
                rejected=(reply_to_comment_id, parent.depth, parent.parent_comment_id))
        require(profile_id not in state.profiles[parent.author_id].blocked,
                f"{_at(state.profiles[parent.author_id])} has blocked {_at(me)}; cannot reply to their comment")
        depth = parent.depth + 1
    state.advance()
    comment = Comment(comment_id=state.new_id("CMT"), post_id=post_id, author_id=profile_id, text=body,
                      parent_comment_id=reply_to_comment_id, depth=depth, created_at=state.now)
    state.comments[comment.comment_id] = comment
    _notify(state, post.author_id, "comment", profile_id, post_id, comment.comment_id)
    if parent is not None and parent.author_id != post.author_id:
        _notify(state, parent.author_id, "reply", profile_id, post_id, comment.comment_id)
    return _comment_view(state, comment)


@tool(write=True, sensitive=("profile_id", "post_id"))
def repost_social_post(state: SocialState, profile_id: ActorId, post_id: PostId) -> PostView:
    """Repost someone else's public post to your followers; returns the new repost."""
    me = _profile(state, profile_id, "profile_id")
    post = _visible(state, me, post_id)
    _original(post, "repost")
    author = state.profiles[post.author_id]
    require(post.author_id != profile_id, f"cannot repost your own post '{post_id}'",
            rejected=(post_id,))
    require(not author.private, f"post '{post_id}' belongs to the private profile {_at(author)}; "
            "only public posts can be reposted",
            reason='state', rejected=(post_id,), wanted=('public',))
    require(post.visibility == "public", f"post '{post_id}' is shared with {post.visibility.replace('_', ' ')} "
            "only; only public posts can be reposted",
            reason='state', rejected=(post_id,), wanted=('public',))
    mine = next((p for p in state.posts.values() if p.repost_of == post_id and p.author_id == profile_id), None)
    require(mine is None, f"{_at(me)} already reposted '{post_id}' as '{mine.post_id if mine else ''}'",
            reason='conflict', rejected=(post_id, mine.post_id if mine else ''))
    state.advance()
    repost = Post(post_id=state.new_id("PST"), author_id=profile_id, text=post.text, media_type=post.media_type,
                  hashtags=list(post.hashtags), visibility="public", created_at=state.now, repost_of=post_id)
    state.posts[repost.post_id] = repost
    _notify(state, post.author_id, "repost", profile_id, post_id)
    return _view(state, repost, me)


def _not_blocked(me: Profile, other: Profile) -> None:
    require(other.profile_id not in me.blocked, f"{_at(me)} has blocked {_at(other)}")
    require(me.profile_id not in other.blocked, f"{_at(other)} has blocked {_at(me)}")


@tool(write=True, sensitive=("profile_id", "target_profile_id"))
def follow_profile(
    state: SocialState,
    profile_id: ActorId,
    target_profile_id: entity_id("profile", "Profile to follow, e.g. 'PRF-0012'.", example="PRF-0012"),
) -> FollowResult:
    """Follow a profile; a private profile gets a follow request it must approve first."""
    me = _profile(state, profile_id, "profile_id")
    other = _profile(state, target_profile_id, "target_profile_id")
    require(profile_id != target_profile_id, "profile_id and target_profile_id must differ",
            params=('profile_id', 'target_profile_id'))
    _not_blocked(me, other)
    require(target_profile_id not in me.following, f"{_at(me)} already follows {_at(other)}",
            reason='conflict')
    asked = _pending(state, profile_id, target_profile_id)
    require(asked is None, f"{_at(me)} already asked to follow {_at(other)} (request "
            f"'{asked.request_id if asked else ''}' is pending their approval)",
            reason='conflict', rejected=(asked.request_id if asked else '',))
    if other.private:
        req = FollowRequest(request_id=state.new_id("FRQ"), requester_id=profile_id, target_id=target_profile_id,
                            status="pending", created_at=state.now)
        state.follow_requests[req.request_id] = req
        _notify(state, target_profile_id, "follow_request", profile_id)
        return FollowResult(profile_id=profile_id, target_profile_id=target_profile_id, status="requested",
                            request_id=req.request_id)
    me.following = sorted([*me.following, target_profile_id])
    _notify(state, target_profile_id, "follow", profile_id)
    return FollowResult(profile_id=profile_id, target_profile_id=target_profile_id, status="following")


@tool(write=True, sensitive=("profile_id", "target_profile_id"))
def unfollow_profile(
    state: SocialState,
    profile_id: ActorId,
    target_profile_id: entity_id("profile", "Profile to stop following, e.g. 'PRF-0012'.", example="PRF-0012"),
) -> FollowResult:
    """Stop following a profile, or withdraw a pending follow request to it."""
    me = _profile(state, profile_id, "profile_id")
    other = _profile(state, target_profile_id, "target_profile_id")
    asked = _pending(state, profile_id, target_profile_id)
    require(target_profile_id in me.following or asked is not None,
            f"{_at(me)} does not follow {_at(other)} and has no pending request to them")
    if asked is not None:
        asked.status = "cancelled"
        return FollowResult(profile_id=profile_id, target_profile_id=target_profile_id,
                            status="request_cancelled", request_id=asked.request_id)
    me.following = [p for p in me.following if p != target_profile_id]
    me.muted = [p for p in me.muted if p != target_profile_id]
    other.close_friends = [p for p in other.close_friends if p != profile_id]
    return FollowResult(profile_id=profile_id, target_profile_id=target_profile_id, status="unfollowed")


@tool(write=True, sensitive=("profile_id", "requester_profile_id"))
def approve_follow_request(
    state: SocialState,
    profile_id: ActorId,
    requester_profile_id: entity_id("profile", "Profile that asked to follow you, e.g. 'PRF-0019'.", example="PRF-0019"),
) -> FollowResult:
    """Approve a pending request to follow your private profile; the requester becomes a follower."""
    me = _profile(state, profile_id, "profile_id")
    other = _profile(state, requester_profile_id, "requester_profile_id")
    req = _pending(state, requester_profile_id, profile_id)
    waiting = [r.requester_id for r in state.follow_requests.values()
               if r.status == "pending" and r.target_id == profile_id]
    require(req is not None, f"{_at(other)} has no pending request to follow {_at(me)} "
            f"(parameter 'requester_profile_id'); pending requesters: {known(waiting)}",
            params=('requester_profile_id',), choices=shown(waiting))
    assert req is not None
    _not_blocked(me, other)
    req.status = "approved"
    other.following = sorted([*other.following, profile_id])
    _notify(state, requester_profile_id, "follow_accepted", profile_id)
    return FollowResult(profile_id=requester_profile_id, target_profile_id=profile_id, status="approved",
                        request_id=req.request_id)


@tool(write=True, sensitive=("profile_id", "post_id"))
def report_social_post(
    state: SocialState,
    profile_id: ActorId,
    post_id: PostId,
    reason: Annotated[ReportReason, Field(description="Why the post breaks the rules.")],
    details: text("body", "Optional context for the moderators.", max_length=500) = "",
) -> Report:
    """Report someone else's post to the moderators; each profile can report a post once."""
    me = _profile(state, profile_id, "profile_id")
    post = _visible(state, me, post_id)
    require(post.author_id != profile_id, f"cannot report your own post '{post_id}'; delete it instead",
            rejected=(post_id,))
    dup = next((r for r in state.reports.values() if r.post_id == post_id and r.reporter_id == profile_id), None)
    require(dup is None, f"{_at(me)} already reported post '{post_id}' (report '{dup.report_id if dup else ''}', "
            f"{dup.status if dup else ''})",
            reason='conflict', rejected=(post_id, dup.report_id if dup else ''))
    report = Report(report_id=state.new_id("RPT"), post_id=post_id, reporter_id=profile_id, reason=reason,
                    details=details.strip(), status="open", created_at=state.now)
    state.reports[report.report_id] = report
    return report
