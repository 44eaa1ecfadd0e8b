"""Wiki tools: spaces, page search and trees, edits with revisions, publishing, locks, comments, tags."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require, shown
from prove.env.tool import tool
from prove.env.types import DEFAULT_LIMIT, EXAMPLE, Limit, Offset, Page, entity_id, naming, text
from prove_servers.wiki.state import (
    MAX_TAGS,
    Attachment,
    Comment,
    PageId,
    PageSort,
    PageStatus,
    Revision,
    SpaceKey,
    UserId,
    Visibility,
    WikiPage,
    WikiSpace,
    WikiState,
    WikiUser,
)

ActingUserId = entity_id("user", "Id of the person making the change, e.g. 'USR-0004'.", example="USR-0004")
Title = text("title", "Page title, unique within its space.", listed="title", min_length=1,
             max_length=120)

_TAG = re.compile(r"^[a-z0-9][a-z0-9-]{0,29}$")


class PageRef(BaseModel):
    page_id: PageId
    title: str = Field(json_schema_extra=naming("title"))
    status: PageStatus


class PageSummary(BaseModel):
    page_id: PageId
    space_key: SpaceKey
    title: str = Field(json_schema_extra=naming("title"))
    status: PageStatus
    parent_id: PageId | None
    author_id: UserId
    tags: list[str]
    locked_by: UserId | None
    view_count: int
    version: int
    updated_at: str
    snippet: str = Field(description="The first characters of the body.")


class SpaceList(Page):
    spaces: list[WikiSpace]


class SpaceDetail(WikiSpace):
    owners: list[WikiUser] = Field(description="The owners' names and emails.")
    page_counts: dict[str, int] = Field(description="Number of pages per status.")
    top_level_pages: list[PageRef]


class UserList(Page):
    users: list[WikiUser]


class PageList(Page):
    pages: list[PageSummary]


class PageView(WikiPage):
    author_name: str
    ancestors: list[PageRef] = Field(description="Breadcrumb from the top-level page down to the parent.")
    child_count: int
    comment_count: int
    attachments: list[Attachment]


class RevisionList(Page):
    page_id: PageId
    current_version: int
    revisions: list[Revision]


class CommentList(Page):
    page_id: PageId
    comments: list[Comment]


def _page(state: WikiState, page_id: str, param: str = "page_id") -> WikiPage:
    return find(state.pages, page_id)


def _space(state: WikiState, space_key: str, param: str = "space_key") -> WikiSpace:
    return find(state.spaces, space_key)


def _editor(state: WikiState, space: WikiSpace, user_id: str, param: str = "user_id") -> WikiUser:
    """The acting user, who must be allowed to change pages of `space`."""
    user = find(state.users, user_id)
    require(
        space.visibility == "public" or user_id in space.member_ids,
        f"user '{user_id}' ({param}) is not a member of {space.visibility} space '{space.space_key}'; "
        f"only members may change it: {known(space.member_ids)}",
        reason='state', params=(param,), rejected=(user_id, space.visibility, space.space_key),
        choices=shown(space.member_ids)
    )
    return user


def _unlocked(state: WikiState, page: WikiPage, user_id: str) -> None:
    holder = page.locked_by
    require(
        holder is None or holder == user_id,
        f"page '{page.page_id}' is locked by {holder} "
        f"({state.users[holder].name if holder in state.users else 'unknown'}); "
        "only that user can change it until a space owner unlocks it",
        reason='state', params=('locked',), rejected=(page.page_id, holder)
    )


def _not_archived(page: WikiPage, action: str) -> None:
    require(page.status != "archived",
            f"page '{page.page_id}' ('{page.title}') is archived; archived pages cannot be {action}",
            reason='state', rejected=(page.page_id, page.title, action))


def _title_free(state: WikiState, space_key: str, title: str, ignore: str | None = None) -> None:
    clash = next((p for p in state.pages.values() if p.space_key == space_key and p.page_id != ignore
                  and p.title.casefold() == title.strip().casefold()), None)
    require(clash is None, f"a page titled '{title.strip()}' already exists in space '{space_key}': "
            f"'{clash.page_id if clash else ''}'; choose another title",
            reason='conflict', params=('title',),
            rejected=(title.strip(), space_key, clash.page_id if clash else ''))


def _children(state: WikiState, page_id: str) -> list[WikiPage]:
    return [p for p in state.pages.values() if p.parent_id == page_id]


def _descendants(state: WikiState, page_id: str) -> list[WikiPage]:
    out, todo = [], [page_id]
    while todo:
        kids = _children(state, todo.pop())
        out += kids
        todo += [k.page_id for k in kids]
    return out


def _summary(page: WikiPage) -> PageSummary:
    snippet = page.body if len(page.body) <= 120 else page.body[:117] + "..."
    return PageSummary(**page.model_dump(exclude={"body", "created_at", "watcher_ids"}), snippet=snippet)


def _ref(page: WikiPage) -> PageRef:
    return PageRef(page_id=page.page_id, title=page.title, status=page.status)


def _watch(page: WikiPage, user_id: str) -> None:
    if user_id not in page.watcher_ids:
        page.watcher_ids = sorted([*page.watcher_ids, user_id])


def _revise(state: WikiState, page: WikiPage, user_id: str, title: str, body: str, summary: str) -> None:
    """Apply a new title/body as the next revision (call only after every check has passed)."""
    state.advance()
    page.title, page.body = title, body
    page.version += 1
    page.updated_at = state.now
    rid = state.new_id("REV")
    state.revisions[rid] = Revision(revision_id=rid, page_id=page.page_id, number=page.version,
                                    author_id=user_id, timestamp=state.now, summary=summary,
                                    title=title, body=body)
    _watch(page, user_id)


@tool(sensitive=("member_id",))
def list_wiki_spaces(
    state: WikiState,
    visibility: Annotated[Visibility | None, Field(description="Only spaces with this visibility.")] = None,
    member_id: Annotated[UserId | None, Field(description="Only spaces this user belongs to, e.g. 'USR-0004'.", json_schema_extra={EXAMPLE: "USR-0004"})] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> SpaceList:
    """List the wiki's spaces with their owners, members and visibility, a page at a time."""
    if member_id is not None:
        find(state.users, member_id)
    found = [s for s in state.spaces.values()
             if (visibility is None or s.visibility == visibility)
             and (member_id is None or member_id in s.member_ids)]
    return SpaceList.of(found, offset, limit)


@tool(sensitive=("space_key",))
def get_wiki_space(state: WikiState, space_key: SpaceKey) -> SpaceDetail:
    """Get one space: its owners, page counts per status and its top-level pages."""
    space = _space(state, space_key)
    pages = [p for p in state.pages.values() if p.space_key == space_key]
    counts = {status: sum(p.status == status for p in pages) for status in ("draft", "published", "archived")}
    return SpaceDetail(
        **space.model_dump(), owners=[state.users[u] for u in space.owner_ids], page_counts=counts,
        top_level_pages=[_ref(p) for p in pages if p.parent_id is None],
    )


@tool(sensitive=("space_key",))
def find_wiki_users(
    state: WikiState,
    query: text("query", "Case-insensitive substring of the name or email.", max_length=100, listed="name") = "",
    space_key: Annotated[SpaceKey | None, Field(description="Only members of this space, e.g. 'ENG'.", json_schema_extra={EXAMPLE: "ENG"})] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> UserList:
    """Find wiki users by name or email, optionally only the members of one space, a page at a time."""
    members = _space(state, space_key).member_ids if space_key is not None else None
    q = query.strip().lower()
    found = [u for u in state.users.values()
             if (q in u.name.lower() or q in u.email.lower()) and (members is None or u.user_id in members)]
    return UserList.of(found, offset, limit)


@tool(sensitive=("space_key", "author_id"))
def search_wiki_pages(
    state: WikiState,
    query: text("query", "Words that must all appear in the title, body or tags (case-insensitive); empty matches all.", max_length=200, listed="title") = "",
    space_key: Annotated[SpaceKey | None, Field(description="Only pages in this space, e.g. 'ENG'.", json_schema_extra={EXAMPLE: "ENG"})] = None,
    tag: text("query", "Only pages carrying this tag.", optional=True, listed="tags") = None,
    status: Annotated[PageStatus | None, Field(description="Only pages in this status.")] = None,
    author_id: Annotated[UserId | None, Field(description="Only pages created by this user.")] = None,
    sort: Annotated[PageSort, Field(description="Most recently updated first, most viewed first, or by title.")] = "updated",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PageList:
    """Search wiki pages by words, space, tag, status and author, a page of results at a time."""
    if space_key is not None:
        _space(state, space_key)
    if author_id is not None:
        find(state.users, author_id)
    words = query.lower().split()
    found = [
        p for p in state.pages.values()
        if (space_key is None or p.space_key == space_key)
        and (tag is None or tag.lower() in p.tags)
        and (status is None or p.status == status)
        and (author_id is None or p.author_id == author_id)
        and all(w in f"{p.title} {p.body} {' '.join(p.tags)}".lower() for w in words)
    ]
    if sort == "title":
        found.sort(key=lambda p: (p.title.lower(), p.page_id))
    elif sort == "views":
        found.sort(key=lambda p: (-p.view_count, p.page_id))
    else:
        found.sort(key=lambda p: (p.updated_at, p.page_id), reverse=True)
    return PageList.of(found, offset, limit, view=_summary)


@tool(sensitive=("page_id",))
def get_wiki_page(state: WikiState, page_id: PageId) -> PageView:
    """Get a page with its full body, breadcrumb, watchers, lock holder and attachments."""
    page = _page(state, page_id)
    ancestors, parent = [], page.parent_id
    while parent is not None:
        ancestors.insert(0, _ref(state.pages[parent]))
        parent = state.pages[parent].parent_id
    return PageView(
        **page.model_dump(), author_name=state.users[page.author_id].name, ancestors=ancestors,
        child_count=len(_children(state, page_id)),
        comment_count=sum(c.page_id == page_id for c in state.comments.values()),
        attachments=[a for a in state.attachments.values() if a.page_id == page_id],
    )


@tool(sensitive=("page_id",))
def list_page_children(
    state: WikiState,
    page_id: PageId,
    include_descendants: Annotated[bool, Field(description="Also list grandchildren and deeper pages.")] = False,
    status: Annotated[PageStatus | None, Field(description="Only pages in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PageList:
    """List the pages directly under a page (or its whole subtree), a page at a time."""
    _page(state, page_id)
    pages = _descendants(state, page_id) if include_descendants else _children(state, page_id)
    found = [p for p in pages if status is None or p.status == status]
    return PageList.of(found, offset, limit, view=_summary)


@tool(sensitive=("page_id",))
def list_page_revisions(state: WikiState, page_id: PageId, offset: Offset = 0,
                        limit: Limit = DEFAULT_LIMIT) -> RevisionList:
    """List a page's revisions, newest first, with their number, author, summary and content."""
    page = _page(state, page_id)
    found = sorted((r for r in state.revisions.values() if r.page_id == page_id), key=lambda r: -r.number)
    return RevisionList.of(found, offset, limit, page_id=page_id, current_version=page.version)


@tool(sensitive=("page_id",))
def list_page_comments(state: WikiState, page_id: PageId, offset: Offset = 0,
                       limit: Limit = DEFAULT_LIMIT) -> CommentList:
    """List the comments on a page, oldest first."""
    _page(state, page_id)
    found = [c for c in state.comments.values() if c.page_id == page_id]
    return CommentList.of(found, offset, limit, page_id=page_id)


def _check_tags(tags: list[str], param: str) -> list[str]:
    clean = [t.strip().lower() for t in tags]
    bad = [t for t in clean if not _TAG.match(t)]
    require(not bad, f"invalid tag(s) {', '.join(map(repr, bad))} in '{param}': use 1-30 lower-case "
            "letters, digits or hyphens, starting with a letter or digit",
            params=('tag',), choices=tuple(map(repr, bad)))
    return clean


@tool(write=True, sensitive=("space_key", "user_id", "parent_id"))
def create_wiki_page(
    state: WikiState,
    space_key: SpaceKey,
    title: Title,
    user_id: ActingUserId,
    body: text("body", "Page content (plain text or Markdown).", listed="body", max_length=4000) = "",
    parent_id: Annotated[PageId | None, Field(description=(
        "Page in the same space to nest under, e.g. 'PG-0003'; omit for a top-level page."),
        json_schema_extra={EXAMPLE: "PG-0003"})] = None,
    tags: text("word", f"Up to {MAX_TAGS} lower-case tags.", many=True, optional=True) = None,
) -> WikiPage:
    """Create a draft page (revision 1) in a space, optionally under a parent page; the author watches it."""
    space = _space(state, space_key)
    _editor(state, space, user_id)
    require(title.strip() != "", "title must not be blank", params=('title',))
    _title_free(state, space_key, title)
    if parent_id is not None:
        parent = _page(state, parent_id, "parent_id")
        require(parent.space_key == space_key,
                f"parent page '{parent_id}' is in space '{parent.space_key}', not '{space_key}' "
                f"(parameter 'parent_id'); pages in '{space_key}': "
                + known(p.page_id for p in state.pages.values() if p.space_key == space_key),
                params=('parent_id',), rejected=(parent_id, parent.space_key, space_key),
                choices=shown(p.page_id for p in state.pages.values() if p.space_key == space_key))
        _not_archived(parent, "given new child pages")
    clean = sorted(set(_check_tags(tags or [], "tags")))
    require(len(clean) <= MAX_TAGS, f"a page can carry at most {MAX_TAGS} tags; got {len(clean)}",
            reason='limit', params=('tags',), rejected=(MAX_TAGS,))
    state.advance()
    page = WikiPage(page_id=state.new_id("PG"), space_key=space_key, title=title.strip(), body=body,
                    author_id=user_id, parent_id=parent_id, tags=clean, status="draft",
                    created_at=state.now, updated_at=state.now, watcher_ids=[user_id])
    state.pages[page.page_id] = page
    rid = state.new_id("REV")
    state.revisions[rid] = Revision(revision_id=rid, page_id=page.page_id, number=1, author_id=user_id,
                                    timestamp=state.now, summary="Initial draft", title=page.title, body=body)
    return page


@tool(write=True, sensitive=("page_id", "user_id"))
def update_wiki_page(
    state: WikiState,
    page_id: PageId,
    user_id: ActingUserId,
    body: text("body", "New full content; omit to keep it.", listed="body", optional=True, max_length=4000) = None,
    title: text("title", "New title; omit to keep it.", listed="title", optional=True, min_length=1, max_length=120) = None,
    summary: text("body", "What changed, shown in the revision history.", listed="summary", max_length=200) = "",
) -> WikiPage:
    """Edit a page's title and/or body; this records a new revision and the editor starts watching it."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    _not_archived(page, "edited")
    _unlocked(state, page, user_id)
    require(body is not None or title is not None, "give a new 'body', a new 'title', or both",
            reason='missing', params=('body', 'title'))
    new_title = page.title if title is None else title.strip()
    require(new_title != "", "title must not be blank", params=('title',))
    new_body = page.body if body is None else body
    if new_title != page.title:
        _title_free(state, page.space_key, new_title, ignore=page_id)
    require((new_title, new_body) != (page.title, page.body),
            f"no change: page '{page_id}' already has this title and body (revision {page.version})",
            reason='conflict', params=('body', 'title'), rejected=(page_id, page.version))
    _revise(state, page, user_id, new_title, new_body, summary.strip() or "Edited")
    return page


@tool(write=True, sensitive=("page_id", "revision_number", "user_id"))
def revert_page_to_revision(
    state: WikiState,
    page_id: PageId,
    revision_number: entity_id("revision_number", "Number of the earlier revision to restore, e.g. 2.", type_=int, ge=1),
    user_id: ActingUserId,
) -> WikiPage:
    """Restore a page's title and body from an earlier revision, recorded as a new revision."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    _not_archived(page, "edited")
    revisions = {r.number: r for r in state.revisions.values() if r.page_id == page_id}
    require(revision_number in revisions, f"revision {revision_number} of page '{page_id}' not found "
            f"(parameter 'revision_number'); valid: {', '.join(map(str, sorted(revisions)))}",
            reason='not_found', params=('revision_number',), rejected=(revision_number, page_id),
            choices=tuple(map(str, sorted(revisions))))
    old = revisions[revision_number]
    require(revision_number != page.version,
            f"page '{page_id}' is already at revision {revision_number}; pick an earlier one",
            reason='conflict', rejected=(page_id, revision_number))
    _unlocked(state, page, user_id)
    if old.title != page.title:
        _title_free(state, page.space_key, old.title, ignore=page_id)
    _revise(state, page, user_id, old.title, old.body, f"Reverted to revision {revision_number}")
    return page


@tool(write=True, sensitive=("page_id", "user_id"))
def publish_wiki_page(state: WikiState, page_id: PageId, user_id: ActingUserId) -> WikiPage:
    """Publish a draft page so everyone can read it; its parent must already be published."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    require(page.status != "published", f"page '{page_id}' is already published",
            reason='conflict', rejected=(page_id,))
    _not_archived(page, "published")
    _unlocked(state, page, user_id)
    require(page.body.strip() != "",
            f"page '{page_id}' has an empty body; add content with update_wiki_page before publishing",
            params=('add', 'body'), rejected=(page_id,))
    parent = state.pages[page.parent_id] if page.parent_id else None
    require(parent is None or parent.status == "published",
            f"parent page '{parent.page_id if parent else ''}' ('{parent.title if parent else ''}') is "
            f"{parent.status if parent else ''}; publish the parent first",
            reason='state', params=('page_id',), choices=(parent.page_id,) if parent else ())
    state.advance()
    page.status, page.updated_at = "published", state.now
    return page


@tool(write=True, sensitive=("page_id", "user_id"))
def archive_wiki_page(state: WikiState, page_id: PageId, user_id: ActingUserId) -> WikiPage:
    """Archive a page (read-only from then on); only its author or a space owner may, and only
    once every child page is archived or moved away."""
    page = _page(state, page_id)
    space = state.spaces[page.space_key]
    _editor(state, space, user_id)
    require(page.status != "archived", f"page '{page_id}' is already archived",
            reason='conflict', rejected=(page_id,))
    require(user_id == page.author_id or user_id in space.owner_ids,
            f"only the author ({page.author_id}) or an owner of space '{space.space_key}' "
            f"({', '.join(space.owner_ids)}) may archive page '{page_id}'",
            reason='state', rejected=(space.space_key, page_id), choices=tuple(space.owner_ids))
    _unlocked(state, page, user_id)
    live = [c.page_id for c in _children(state, page_id) if c.status != "archived"]
    require(not live, f"page '{page_id}' still has child pages that are not archived: {', '.join(live)}; "
            "archive or move them first", rejected=(page_id,), choices=tuple(live))
    state.advance()
    page.status, page.updated_at = "archived", state.now
    return page


@tool(write=True, sensitive=("page_id", "user_id", "new_parent_id", "space_key"))
def move_wiki_page(
    state: WikiState,
    page_id: PageId,
    user_id: ActingUserId,
    new_parent_id: Annotated[PageId | None, Field(description=(
        "Page to move under, e.g. 'PG-0007'; omit to make the page top-level."),
        json_schema_extra={EXAMPLE: "PG-0007"})] = None,
    space_key: Annotated[SpaceKey | None, Field(description=(
        "Destination space; defaults to the new parent's space, or the page's own space."))] = None,
) -> WikiPage:
    """Move a page (with its whole subtree) under another page or to the top level of a space."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    parent = _page(state, new_parent_id, "new_parent_id") if new_parent_id is not None else None
    target = _space(state, space_key) if space_key is not None else (
        state.spaces[parent.space_key] if parent else state.spaces[page.space_key])
    subtree = _descendants(state, page_id)
    if parent is not None:
        require(parent.space_key == target.space_key,
                f"new parent '{parent.page_id}' is in space '{parent.space_key}', not '{target.space_key}' "
                f"(parameter 'new_parent_id'); pages in '{target.space_key}': "
                + known(p.page_id for p in state.pages.values() if p.space_key == target.space_key),
                params=('new_parent_id',),
                rejected=(parent.page_id, parent.space_key, target.space_key),
                choices=shown(p.page_id for p in state.pages.values() if p.space_key == target.space_key))
        require(parent.page_id != page_id, f"page '{page_id}' cannot be moved under itself",
                rejected=(page_id,))
        require(parent.page_id not in {p.page_id for p in subtree}, f"cannot move page '{page_id}' under its own descendant "
                f"'{parent.page_id}' ('{parent.title}')",
                rejected=(page_id, parent.page_id, parent.title))
        _not_archived(parent, "given new child pages")
    require((page.parent_id, page.space_key) != (new_parent_id, target.space_key),
            f"page '{page_id}' is already {'under ' + new_parent_id if new_parent_id else 'top-level'} "
            f"in space '{target.space_key}'",
            reason='conflict', rejected=(page_id, target.space_key))
    _unlocked(state, page, user_id)
    if target.space_key != page.space_key:
        _editor(state, target, user_id)
        for p in [page, *subtree]:
            _title_free(state, target.space_key, p.title)
    state.advance()
    page.parent_id, page.updated_at = new_parent_id, state.now
    for p in [page, *subtree]:
        p.space_key = target.space_key
    return page


@tool(write=True, sensitive=("page_id", "user_id"))
def add_page_comment(
    state: WikiState,
    page_id: PageId,
    user_id: ActingUserId,
    text: text("body", "The comment.", listed="text", min_length=1, max_length=2000),
) -> Comment:
    """Comment on a page; the commenter starts watching it. Archived pages take no comments."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    _not_archived(page, "commented on")
    require(text.strip() != "", "text must not be blank", params=('text',))
    state.advance()
    comment = Comment(comment_id=state.new_id("CMT"), page_id=page_id, author_id=user_id,
                      text=text.strip(), created_at=state.now)
    state.comments[comment.comment_id] = comment
    _watch(page, user_id)
    return comment


@tool(write=True, sensitive=("page_id", "user_id"))
def tag_wiki_page(
    state: WikiState,
    page_id: PageId,
    user_id: ActingUserId,
    add: text("word", "Tags to add, e.g. ['runbook'].", many=True, optional=True) = None,
    remove: text("word", "Tags to remove; each must be on the page.", many=True, optional=True) = None,
) -> WikiPage:
    """Add and/or remove tags on a page (at most 8 tags per page)."""
    page = _page(state, page_id)
    _editor(state, state.spaces[page.space_key], user_id)
    _not_archived(page, "edited")
    _unlocked(state, page, user_id)
    to_add, to_remove = _check_tags(add or [], "add"), _check_tags(remove or [], "remove")
    require(bool(to_add or to_remove), "give tags to 'add', to 'remove', or both",
            reason='missing', params=('add', 'remove', 'tags'))
    missing = [t for t in to_remove if t not in page.tags]
    require(not missing, f"page '{page_id}' has no tag(s) {', '.join(map(repr, missing))} (parameter "
            f"'remove'); its tags: {', '.join(page.tags) or '(none)'}",
            params=('remove', 'tag', 'tags'), rejected=(page_id,),
            choices=(*tuple(map(repr, missing)), *tuple(page.tags),))
    both = sorted(set(to_add) & set(to_remove))
    require(not both, f"tag(s) {', '.join(both)} appear in both 'add' and 'remove'",
            params=('add', 'remove', 'tag'), choices=tuple(both))
    new = sorted((set(page.tags) - set(to_remove)) | set(to_add))
    require(len(new) <= MAX_TAGS,
            f"tag limit: a page can carry at most {MAX_TAGS} tags; page '{page_id}' would have {len(new)} "
            f"(current: {', '.join(page.tags) or '(none)'}); remove some first",
            reason='limit', params=('limit', 'remove', 'tag', 'tags'), rejected=(MAX_TAGS, page_id),
            choices=tuple(page.tags))
    require(new != page.tags, f"no change: page '{page_id}' already has tags {', '.join(page.tags)}",
            reason='conflict', params=('tags',), rejected=(page_id,), choices=tuple(page.tags))
    state.advance()
    page.tags, page.updated_at = new, state.now
    return page


@tool(write=True, sensitive=("page_id", "user_id"))
def lock_wiki_page(
    state: WikiState,
    page_id: PageId,
    user_id: ActingUserId,
    locked: Annotated[bool, Field(description="True to lock the page for editing by others, False to unlock.")] = True,
) -> WikiPage:
    """Lock a page so only the locking owner can edit it, or unlock it; only space owners may."""
    page = _page(state, page_id)
    space = state.spaces[page.space_key]
    find(state.users, user_id)
    require(user_id in space.owner_ids, f"only owners of space '{space.space_key}' can lock or unlock "
            f"pages; owners: {', '.join(space.owner_ids)}",
            reason='state', params=('user_id',), rejected=(space.space_key, user_id), choices=tuple(space.owner_ids))
    if locked:
        holder = page.locked_by
        require(holder is None, f"page '{page_id}' is already locked by "
                f"{'you' if holder == user_id else holder}",
                reason='conflict', params=('locked',), rejected=(page_id,))
        _not_archived(page, "locked")
    else:
        require(page.locked_by is not None, f"page '{page_id}' is not locked",
                params=('locked',), rejected=(page_id,))
    page.locked_by = user_id if locked else None
    return page
