"""Code hosting tools: repositories, branches, commits, issues, pull requests, reviews and merges."""

from __future__ import annotations

import hashlib
import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from prove.env.helpers import known, lookup, require, shown
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
from prove_servers.codehost.state import (
    Branch,
    BranchName,
    CheckStatus,
    CloseReason,
    CodeHostState,
    Commit,
    CommitSha,
    Issue,
    IssueComment,
    IssueNumber,
    LabelName,
    Language,
    Login,
    MergeMethod,
    Permission,
    PullNumber,
    PullRequest,
    RepoName,
    Repository,
    Review,
    ReviewDecision,
    Verdict,
    Visibility,
    branch_key,
    item_key,
)

_BRANCH_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


class RepositoryList(Page):
    viewer: Login = Field(description="Login of the signed-in user; only repositories it can see are listed.")
    repositories: list[Repository]


class RepositoryInfo(Repository):
    viewer_permission: Permission
    open_issues: int
    open_pull_requests: int
    branch_count: int


class BranchInfo(BaseModel):
    name: BranchName = Field(json_schema_extra=naming("name"))
    head_sha: CommitSha
    is_default: bool
    ahead_of_default: int = Field(description="Commits on this branch not on the default branch.")
    behind_default: int = Field(description="Commits on the default branch not on this branch.")
    last_commit_at: str


class BranchList(Page):
    repo: RepoName
    default_branch: BranchName
    branches: list[BranchInfo]


class CommitList(Page):
    repo: RepoName
    branch: BranchName
    commits: list[Commit]


class IssueList(Page):
    repo: RepoName
    issues: list[Issue]


class PullRequestInfo(PullRequest):
    head_sha: CommitSha | None = Field(description="Head branch's latest commit; None once the branch is deleted.")
    checks: CheckStatus | None = Field(description="CI status of the head commit.")
    review_decision: ReviewDecision
    approved_by: entity_ids("account", "Reviewers whose latest verdict approves.")
    changes_requested_by: entity_ids("account", "Reviewers whose latest verdict requests changes.")
    mergeable: bool
    merge_blockers: list[str] = Field(description="Why merging is blocked right now; empty when mergeable.")


class PullRequestList(Page):
    repo: RepoName
    pull_requests: list[PullRequestInfo]


# -- lookups ---------------------------------------------------------------------------------
def _visible(state: CodeHostState) -> list[str]:
    return sorted(r.full_name for r in state.repositories.values() if state.permission(r) != "none")


def _repo(state: CodeHostState, repo: str) -> Repository:
    found = state.repositories.get(repo)
    if found is None or state.permission(found) == "none":
        raise ToolError(
            f"repository '{repo}' not found or not visible to you ('{state.viewer}') "
            f"(parameter 'repo'); repositories you can see: {known(_visible(state), 10)}",
            reason='not_found', params=('repo',), rejected=(repo, state.viewer),
            choices=shown(_visible(state), 10)
        )
    return found


def _writers(state: CodeHostState, repo: Repository) -> list[str]:
    owner = state.accounts[repo.owner]
    return ([owner.login] if owner.kind == "user" else []) + repo.collaborators


def _need_write(state: CodeHostState, repo: Repository, action: str) -> None:
    perm = state.permission(repo)
    require(
        perm in ("admin", "write"),
        f"you ('{state.viewer}') have {perm} access to '{repo.full_name}'; {action} needs write "
        f"access (people with write access: {', '.join(_writers(state, repo))})",
        reason='missing', rejected=(state.viewer, perm, repo.full_name, action),
        choices=tuple(_writers(state, repo))
    )


def _branches(state: CodeHostState, repo: Repository) -> list[Branch]:
    return [b for b in state.branches.values() if b.repo == repo.full_name]


def _branch(state: CodeHostState, repo: Repository, name: str, param: str) -> Branch:
    found = state.branches.get(branch_key(repo.full_name, name))
    if found is None:
        names = [b.name for b in _branches(state, repo)]
        raise ToolError(f"branch '{name}' not found in '{repo.full_name}' (parameter '{param}'); "
                        f"branches: {known(names, 12)}",
                        reason='not_found', params=('branch', param),
                        rejected=(name, repo.full_name), choices=shown(names, 12))
    return found


def _issue(state: CodeHostState, repo: Repository, number: int) -> Issue:
    key = item_key(repo.full_name, number)
    require(key not in state.pulls, f"#{number} in '{repo.full_name}' is a pull request, not an issue; "
            "use the pull request tools (get_pull_request, review_pull_request, close_pull_request)",
            rejected=(repo.full_name,))
    found = state.issues.get(key)
    if found is None:
        numbers = [f"#{i.number}" for i in state.issues.values() if i.repo == repo.full_name]
        raise ToolError(f"issue #{number} not found in '{repo.full_name}' (parameter 'number'); "
                        f"issues: {known(numbers, 12)}",
                        reason='not_found', params=('number',), rejected=(repo.full_name,),
                        choices=shown(numbers, 12))
    return found


def _pull(state: CodeHostState, repo: Repository, number: int) -> PullRequest:
    key = item_key(repo.full_name, number)
    require(key not in state.issues, f"#{number} in '{repo.full_name}' is an issue, not a pull request; "
            "use list_repo_issues or the issue tools", rejected=(repo.full_name,))
    found = state.pulls.get(key)
    if found is None:
        numbers = [f"#{p.number}" for p in state.pulls.values() if p.repo == repo.full_name]
        raise ToolError(f"pull request #{number} not found in '{repo.full_name}' (parameter 'number'); "
                        f"pull requests: {known(numbers, 12)}",
                        reason='not_found', params=('number',), rejected=(repo.full_name,),
                        choices=shown(numbers, 12))
    return found


def _labels(repo: Repository, labels: list[str], param: str) -> list[str]:
    unknown = [x for x in labels if x not in repo.labels]
    require(not unknown, f"label(s) {', '.join(map(repr, unknown))} not defined in '{repo.full_name}' "
            f"(parameter '{param}'); labels: {', '.join(repo.labels)}",
            params=('label', 'labels', param), rejected=(repo.full_name,),
            choices=(*tuple(map(repr, unknown)), *tuple(repo.labels),))
    return sorted(set(labels))


# -- history -----------------------------------------------------------------------------------
def _reachable(state: CodeHostState, sha: str) -> set[str]:
    seen: set[str] = set()
    stack = [sha]
    while stack:
        cur = stack.pop()
        if cur in seen or cur not in state.commits:
            continue
        seen.add(cur)
        stack.extend(state.commits[cur].parents)
    return seen


def _only_in(state: CodeHostState, sha: str, other: str | None = None) -> list[Commit]:
    """Commits reachable from `sha` (but not from `other`), newest first."""
    shas = _reachable(state, sha) - (_reachable(state, other) if other else set())
    return sorted((state.commits[s] for s in shas), key=lambda c: c.timestamp, reverse=True)


def _new_sha(state: CodeHostState) -> str:
    """A short sha no commit has: the clock and the commit count salt it, the count rising on a clash."""
    n = len(state.commits)
    while True:
        n += 1
        sha = hashlib.sha1(f"{state.now}|SHA-{n:04d}".encode()).hexdigest()[:7]
        if sha not in state.commits:
            return sha


def _next_number(state: CodeHostState, repo: Repository) -> int:
    used = [i.number for i in state.issues.values() if i.repo == repo.full_name]
    used += [p.number for p in state.pulls.values() if p.repo == repo.full_name]
    return max(used, default=0) + 1


# -- pull request status ---------------------------------------------------------------------
def _verdicts(pr: PullRequest) -> dict[str, Verdict]:
    latest: dict[str, Verdict] = {}
    for review in pr.reviews:
        if review.verdict != "commented":
            latest[review.reviewer] = review.verdict
    return latest


def _info(state: CodeHostState, pr: PullRequest) -> PullRequestInfo:
    repo = state.repositories[pr.repo]
    head = state.branches.get(branch_key(pr.repo, pr.head))
    checks = state.commits[head.head_sha].checks if head else None
    latest = _verdicts(pr)
    approved = sorted(r for r, v in latest.items() if v == "approved")
    changes = sorted(r for r, v in latest.items() if v == "changes_requested")
    blockers: list[str] = []
    if pr.state != "open":
        blockers.append(f"pull request is {pr.state}")
    elif head is None or branch_key(pr.repo, pr.base) not in state.branches:
        gone = pr.head if head is None else pr.base
        blockers.append(f"{'head' if head is None else 'base'} branch '{gone}' no longer exists")
    else:
        if pr.has_conflicts:
            blockers.append(f"merge conflicts with base branch '{pr.base}'")
        if checks != "passing":
            blockers.append(f"checks are {checks} on head commit {head.head_sha}")
        if changes:
            blockers.append(f"changes requested by {', '.join(changes)}")
        if len(approved) < repo.required_approvals:
            blockers.append(f"needs {repo.required_approvals} approving review(s), has {len(approved)}")
    decision: ReviewDecision = (
        "changes_requested" if changes
        else "approved" if len(approved) >= max(1, repo.required_approvals)
        else "review_required"
    )
    return PullRequestInfo(
        **pr.model_dump(), head_sha=head.head_sha if head else None, checks=checks,
        review_decision=decision, approved_by=approved, changes_requested_by=changes,
        mergeable=not blockers, merge_blockers=blockers,
    )


# -- repositories ------------------------------------------------------------------------------
@tool(sensitive=("owner",))
def list_repositories(
    state: CodeHostState,
    owner: Annotated[Login | None, Field(description="Only repositories of this user or organization login.")] = None,
    visibility: Annotated[Visibility | None, Field(description="Only repositories with this visibility.")] = None,
    language: Annotated[Language | None, Field(description="Only repositories in this main language.")] = None,
    query: text("query", "Case-insensitive substring of the full name or description.", max_length=100, listed="full_name") = "",
    sort: Annotated[Literal["name", "stars", "created"], Field(
        description="Order: by full name, most stars first, or newest first.")] = "name",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RepositoryList:
    """List the repositories the signed-in user can see, filtered by owner, visibility, language or a name/description match."""
    if owner is not None:
        lookup(state.accounts, owner, "owner", "user or organization")  # reads better than "account"
    q = query.strip().lower()
    found = [
        r for r in state.repositories.values()
        if state.permission(r) != "none"
        and (owner is None or r.owner == owner)
        and (visibility is None or r.visibility == visibility)
        and (language is None or r.language == language)
        and (q in r.full_name.lower() or q in r.description.lower())
    ]
    if sort == "stars":
        found.sort(key=lambda r: (-r.stars, r.full_name))
    elif sort == "created":
        found.sort(key=lambda r: r.created_at, reverse=True)
    else:
        found.sort(key=lambda r: r.full_name)
    return RepositoryList.of(found, offset, limit, viewer=state.viewer)


@tool(sensitive=("repo",))
def get_repository(state: CodeHostState, repo: RepoName) -> RepositoryInfo:
    """Get a repository's details: default branch, labels, collaborators, required approvals, your permission and open counts."""
    r = _repo(state, repo)
    return RepositoryInfo(
        **r.model_dump(), viewer_permission=state.permission(r),
        open_issues=sum(i.repo == repo and i.state == "open" for i in state.issues.values()),
        open_pull_requests=sum(p.repo == repo and p.state == "open" for p in state.pulls.values()),
        branch_count=len(_branches(state, r)),
    )


# -- branches and commits ------------------------------------------------------------------------
@tool(sensitive=("repo",))
def list_repo_branches(
    state: CodeHostState,
    repo: RepoName,
    query: text("query", "Case-insensitive substring of the branch name.", max_length=100, listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> BranchList:
    """List a repository's branches with their head commit and how far each is ahead of or behind the default branch."""
    r = _repo(state, repo)
    default = _branch(state, r, r.default_branch, "repo")
    q = query.strip().lower()
    found = sorted((b for b in _branches(state, r) if q in b.name.lower()), key=lambda b: b.name)
    base = _reachable(state, default.head_sha)

    def info(b: Branch) -> BranchInfo:
        mine = _reachable(state, b.head_sha)
        return BranchInfo(
            name=b.name, head_sha=b.head_sha, is_default=b.name == r.default_branch,
            ahead_of_default=len(mine - base), behind_default=len(base - mine),
            last_commit_at=state.commits[b.head_sha].timestamp,
        )

    return BranchList.of(found, offset, limit, view=info, repo=repo, default_branch=r.default_branch)


@tool(write=True, sensitive=("repo", "name", "from_branch"))
def create_branch(
    state: CodeHostState,
    repo: RepoName,
    name: text("title", "New branch name, e.g. 'fix/login-timeout'.", listed="name", example="fix/login-timeout", min_length=1, max_length=100),
    from_branch: Annotated[BranchName | None, Field(description="Branch to start from; default: the repository's default branch.")] = None,
) -> BranchInfo:
    """Create a branch pointing at the head commit of an existing branch (needs write access)."""
    r = _repo(state, repo)
    _need_write(state, r, "creating a branch")
    require(bool(_BRANCH_NAME.match(name)) and ".." not in name and not name.endswith(("/", ".lock")),
            f"invalid branch name '{name}' (parameter 'name'): use letters, digits, '.', '_', '-' and '/', "
            "starting with a letter or digit", params=('name', 'branch'), rejected=(name,))
    existing = state.branches.get(branch_key(repo, name))
    require(existing is None, f"branch '{name}' already exists in '{repo}' "
            f"(head {existing.head_sha if existing else ''}); pick another name",
            reason='conflict', params=('branch', 'head', 'name'), rejected=(name, repo))
    source = _branch(state, r, from_branch or r.default_branch, "from_branch")
    state.advance()
    state.branches[branch_key(repo, name)] = Branch(repo=repo, name=name, head_sha=source.head_sha)
    default = _branch(state, r, r.default_branch, "from_branch")
    mine, base = _reachable(state, source.head_sha), _reachable(state, default.head_sha)
    return BranchInfo(name=name, head_sha=source.head_sha, is_default=False,
                      ahead_of_default=len(mine - base), behind_default=len(base - mine),
                      last_commit_at=state.commits[source.head_sha].timestamp)


@tool(sensitive=("repo", "branch", "author"))
def list_commits(
    state: CodeHostState,
    repo: RepoName,
    branch: Annotated[BranchName | None, Field(description="Branch whose history to list; default: the default branch.")] = None,
    author: Annotated[Login | None, Field(description="Only commits by this user login.")] = None,
    since: Annotated[day("A calendar date.") | None, Field(description="Only commits on or after this date.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> CommitList:
    """List the commits reachable from a branch, newest first, optionally by one author or since a date."""
    r = _repo(state, repo)
    b = _branch(state, r, branch or r.default_branch, "branch")
    if since is not None:
        parse_day(since, "since")
    found = [
        c for c in _only_in(state, b.head_sha)
        if (author is None or c.author == author) and (since is None or c.timestamp[:10] >= since[:10])
    ]
    return CommitList.of(found, offset, limit, repo=repo, branch=b.name)


@tool(sensitive=("repo", "sha"))
def get_commit(
    state: CodeHostState,
    repo: RepoName,
    sha: entity_id("commit", "Commit sha (first 7 hex digits are enough), e.g. 'a1b2c3d'.", min_length=7, max_length=40, example="a1b2c3d"),
) -> Commit:
    """Get one commit: author, message, time, parents, CI checks status and line counts."""
    r = _repo(state, repo)
    found = state.commits.get(sha.lower()[:7])
    if found is None or found.repo != repo:
        default = _branch(state, r, r.default_branch, "repo")
        recent = [c.sha for c in _only_in(state, default.head_sha)]
        raise ToolError(f"commit '{sha}' not found in '{repo}' (parameter 'sha'); recent commits on "
                        f"'{r.default_branch}': {known(recent, 6)}",
                        reason='not_found', params=('sha',), rejected=(sha, repo, r.default_branch),
                        choices=shown(recent, 6))
    return found


# -- issues ------------------------------------------------------------------------------------
@tool(sensitive=("repo", "label", "assignee"))
def list_repo_issues(
    state: CodeHostState,
    repo: RepoName,
    status: Annotated[Literal["open", "closed", "all"], Field(description="Which issues to list by state.")] = "open",
    label: Annotated[LabelName | None, Field(description="Only issues carrying this label (must exist in the repository).")] = None,
    assignee: Annotated[Login | None, Field(description="Only issues assigned to this user login.")] = None,
    query: text("query", "Case-insensitive substring of the title or body.", max_length=100, listed="title") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> IssueList:
    """List a repository's issues (not pull requests), newest first, with their labels, assignee and comments."""
    r = _repo(state, repo)
    if label is not None:
        _labels(r, [label], "label")
    q = query.strip().lower()
    found = [
        i for i in sorted(state.issues.values(), key=lambda i: i.number, reverse=True)
        if i.repo == repo and (status == "all" or i.state == status)
        and (label is None or label in i.labels) and (assignee is None or i.assignee == assignee)
        and (q in i.title.lower() or q in i.body.lower())
    ]
    return IssueList.of(found, offset, limit, repo=repo)


@tool(write=True, sensitive=("repo", "labels", "assignee"))
def create_issue(
    state: CodeHostState,
    repo: RepoName,
    title: text("title", "Short summary of the issue.", listed="title", min_length=1, max_length=200),
    body: text("body", "Details: what happened, steps, expectations.", listed="body", max_length=4000) = "",
    labels: Annotated[entity_ids("label", "Labels defined in the repository.") | None, Field(max_length=10, description="Labels to apply; each must be defined in the repository.")] = None,
    assignee: Annotated[Login | None, Field(description="Login of a user with write access to assign.")] = None,
) -> Issue:
    """Open a new issue in a repository; setting labels or an assignee needs write access."""
    r = _repo(state, repo)
    require(bool(title.strip()), "title must not be blank", params=('title',))
    chosen = _labels(r, labels or [], "labels")
    if chosen or assignee is not None:
        _need_write(state, r, "setting labels or an assignee")
    if assignee is not None:
        require(assignee in _writers(state, r), f"assignee '{assignee}' cannot be assigned in '{repo}'; "
                f"assignable users: {', '.join(_writers(state, r))}",
                params=('assignee',), rejected=(assignee, repo), choices=tuple(_writers(state, r)))
    created = state.advance()
    issue = Issue(repo=repo, number=_next_number(state, r), title=title.strip(), body=body,
                  author=state.viewer, state="open", labels=chosen, assignee=assignee, created_at=created)
    state.issues[item_key(repo, issue.number)] = issue
    return issue


@tool(write=True, sensitive=("repo", "number"))
def comment_on_issue(
    state: CodeHostState,
    repo: RepoName,
    number: IssueNumber,
    body: text("body", "Comment text (Markdown).", listed="body", min_length=1, max_length=4000),
) -> Issue:
    """Add a comment to an issue (open or closed); returns the issue with all its comments."""
    r = _repo(state, repo)
    issue = _issue(state, r, number)
    require(bool(body.strip()), "body must not be blank", params=('body',))
    created = state.advance()
    issue.comments.append(IssueComment(comment_id=state.new_id("CMT"), author=state.viewer,
                                       body=body.strip(), created_at=created))
    return issue


@tool(write=True, sensitive=("repo", "number"))
def close_issue(
    state: CodeHostState,
    repo: RepoName,
    number: IssueNumber,
    reason: Annotated[CloseReason, Field(description="'completed' (done) or 'not_planned' (won't fix, duplicate).")] = "completed",
    comment: text("body", "Optional closing comment.", max_length=4000) = "",
) -> Issue:
    """Close an open issue as completed or not planned, optionally with a closing comment (author or write access)."""
    r = _repo(state, repo)
    issue = _issue(state, r, number)
    require(issue.state == "open", f"issue #{number} in '{repo}' is already closed "
            f"({issue.close_reason}, at {issue.closed_at})",
            reason='conflict', rejected=(repo, issue.closed_at))
    if issue.author != state.viewer:
        _need_write(state, r, "closing someone else's issue")
    closed = state.advance()
    if comment.strip():
        issue.comments.append(IssueComment(comment_id=state.new_id("CMT"), author=state.viewer,
                                           body=comment.strip(), created_at=closed))
    issue.state, issue.closed_at, issue.close_reason = "closed", closed, reason
    return issue


@tool(write=True, sensitive=("repo", "number", "labels"))
def label_issue(
    state: CodeHostState,
    repo: RepoName,
    number: IssueNumber,
    labels: entity_ids("label", "Labels to add or remove; each must be defined in the repository.", min_length=1, max_length=10),
    action: Annotated[Literal["add", "remove"], Field(description="Add the labels to the issue or remove them from it.")] = "add",
) -> Issue:
    """Add labels to an issue or remove labels from it (needs write access)."""
    r = _repo(state, repo)
    issue = _issue(state, r, number)
    chosen = _labels(r, labels, "labels")
    _need_write(state, r, "labelling issues")
    if action == "add":
        new = [x for x in chosen if x not in issue.labels]
        require(bool(new), f"issue #{number} already has label(s) {', '.join(chosen)}",
                reason='conflict', params=('label',), choices=tuple(chosen))
        issue.labels = sorted({*issue.labels, *new})
    else:
        missing = [x for x in chosen if x not in issue.labels]
        require(not missing, f"issue #{number} does not have label(s) {', '.join(missing)}; "
                f"its labels: {', '.join(issue.labels) or '(none)'}",
                params=('label', 'labels'), choices=(*tuple(missing), *tuple(issue.labels),))
        issue.labels = [x for x in issue.labels if x not in chosen]
    state.advance()
    return issue


# -- pull requests -----------------------------------------------------------------------------
@tool(sensitive=("repo", "author", "base"))
def list_pull_requests(
    state: CodeHostState,
    repo: RepoName,
    status: Annotated[Literal["open", "closed", "merged", "all"], Field(description="Which pull requests to list by state.")] = "open",
    author: Annotated[Login | None, Field(description="Only pull requests opened by this user login.")] = None,
    base: Annotated[BranchName | None, Field(description="Only pull requests into this base branch.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> PullRequestList:
    """List a repository's pull requests, newest first, with review decision, checks and merge blockers."""
    _repo(state, repo)
    found = [
        p for p in sorted(state.pulls.values(), key=lambda p: p.number, reverse=True)
        if p.repo == repo and (status == "all" or p.state == status)
        and (author is None or p.author == author) and (base is None or p.base == base)
    ]
    return PullRequestList.of(found, offset, limit, view=lambda p: _info(state, p), repo=repo)


@tool(sensitive=("repo", "number"))
def get_pull_request(state: CodeHostState, repo: RepoName, number: PullNumber) -> PullRequestInfo:
    """Get one pull request with its reviews, CI checks, conflicts and whether (and why not) it can be merged."""
    r = _repo(state, repo)
    return _info(state, _pull(state, r, number))


@tool(write=True, sensitive=("repo", "head", "base"))
def create_pull_request(
    state: CodeHostState,
    repo: RepoName,
    title: text("title", "Pull request title.", listed="title", min_length=1, max_length=200),
    head: entity_id("branch", "Branch with the changes, e.g. 'feature/dark-mode'.", example="feature/dark-mode"),
    base: Annotated[BranchName | None, Field(description="Branch to merge into; default: the default branch.")] = None,
    body: text("body", "Description of the change.", listed="body", max_length=4000) = "",
) -> PullRequestInfo:
    """Open a pull request proposing to merge the head branch into the base branch."""
    r = _repo(state, repo)
    require(bool(title.strip()), "title must not be blank", params=('title',))
    h = _branch(state, r, head, "head")
    b = _branch(state, r, base or r.default_branch, "base")
    require(h.name != b.name, f"head and base are both '{h.name}'; pick a head branch with new commits",
            params=('base', 'branch', 'head'), rejected=(h.name,))
    dup = next((p for p in state.pulls.values() if p.repo == repo and p.state == "open"
                and p.head == h.name and p.base == b.name), None)
    require(dup is None, f"pull request #{dup.number if dup else 0} is already open for "
            f"'{h.name}' into '{b.name}'", reason='conflict', rejected=(h.name, b.name))
    require(bool(_only_in(state, h.head_sha, b.head_sha)),
            f"no commits between '{b.name}' and '{h.name}': '{h.name}' has nothing new to merge",
            rejected=(b.name, h.name))
    created = state.advance()
    pr = PullRequest(repo=repo, number=_next_number(state, r), title=title.strip(), body=body,
                     author=state.viewer, head=h.name, base=b.name, state="open",
                     has_conflicts=False, created_at=created)
    state.pulls[item_key(repo, pr.number)] = pr
    return _info(state, pr)


@tool(write=True, sensitive=("repo", "number"))
def review_pull_request(
    state: CodeHostState,
    repo: RepoName,
    number: PullNumber,
    verdict: Annotated[Verdict, Field(description="Approve, request changes, or comment only.")],
    body: text("body", "Review text; required unless approving.", listed="body", max_length=4000) = "",
) -> PullRequestInfo:
    """Submit a review on someone else's open pull request: approve, request changes, or comment."""
    r = _repo(state, repo)
    pr = _pull(state, r, number)
    require(pr.state == "open", f"pull request #{number} in '{repo}' is {pr.state}; only open pull requests "
            "can be reviewed", reason='state', rejected=(repo, pr.state), wanted=('open',))
    require(pr.author != state.viewer, f"you ('{state.viewer}') opened pull request #{number} and cannot "
            f"review your own pull request; ask one of: "
            f"{', '.join(x for x in _writers(state, r) if x != state.viewer) or '(nobody)'}",
            rejected=(state.viewer,),
            choices=tuple(x for x in _writers(state, r) if x != state.viewer))
    require(verdict == "approved" or bool(body.strip()),
            f"body is required when the verdict is '{verdict}'",
            reason='missing', params=('body', 'verdict'), rejected=(verdict,))
    submitted = state.advance()
    pr.reviews.append(Review(review_id=state.new_id("REV"), reviewer=state.viewer, verdict=verdict,
                             body=body.strip(), submitted_at=submitted))
    return _info(state, pr)


@tool(write=True, sensitive=("repo", "number"))
def merge_pull_request(
    state: CodeHostState,
    repo: RepoName,
    number: PullNumber,
    method: Annotated[MergeMethod, Field(description="'merge' keeps the branch's commits; 'squash' makes one commit.")] = "merge",
    delete_branch: Annotated[bool, Field(description="Delete the head branch after merging.")] = False,
) -> PullRequestInfo:
    """Merge an open pull request into its base branch; blocked by conflicts, failing or pending checks, or missing approvals."""
    r = _repo(state, repo)
    pr = _pull(state, r, number)
    require(pr.state != "merged", f"pull request #{number} in '{repo}' was already merged at "
            f"{pr.merged_at} by {pr.merged_by} (commit {pr.merge_commit_sha})",
            reason='conflict', rejected=(repo, pr.merged_at, pr.merged_by, pr.merge_commit_sha))
    require(pr.state == "open", f"pull request #{number} in '{repo}' is closed; it cannot be merged",
            reason='state', rejected=(repo,))
    _need_write(state, r, "merging")
    blockers = _info(state, pr).merge_blockers
    require(not blockers, f"cannot merge pull request #{number} in '{repo}': {'; '.join(blockers)}",
            rejected=(repo,))
    require(not (delete_branch and pr.head == r.default_branch),
            f"delete_branch: '{pr.head}' is the default branch of '{repo}' and cannot be deleted",
            params=('branch', 'delete_branch'), rejected=(pr.head, repo))
    head = _branch(state, r, pr.head, "number")
    base = _branch(state, r, pr.base, "number")
    new = _only_in(state, head.head_sha, base.head_sha)
    merged = state.advance()
    commit = Commit(
        sha=_new_sha(state), repo=repo, author=state.viewer, timestamp=merged,
        message=f"Merge pull request #{number} from {pr.head}" if method == "merge" else f"{pr.title} (#{number})",
        parents=[base.head_sha, head.head_sha] if method == "merge" else [base.head_sha],
        checks="pending", additions=sum(c.additions for c in new), deletions=sum(c.deletions for c in new),
    )
    state.commits[commit.sha] = commit
    base.head_sha = commit.sha
    if delete_branch:
        del state.branches[branch_key(repo, pr.head)]
    pr.state, pr.merged_at, pr.closed_at = "merged", merged, merged
    pr.merged_by, pr.merge_commit_sha = state.viewer, commit.sha
    return _info(state, pr)


@tool(write=True, sensitive=("repo", "number"))
def close_pull_request(state: CodeHostState, repo: RepoName, number: PullNumber) -> PullRequestInfo:
    """Close an open pull request without merging it (its author or someone with write access)."""
    r = _repo(state, repo)
    pr = _pull(state, r, number)
    require(pr.state != "merged", f"pull request #{number} in '{repo}' was merged at {pr.merged_at} and "
            "cannot be closed", rejected=(repo, pr.merged_at))
    require(pr.state == "open", f"pull request #{number} in '{repo}' is already closed (at {pr.closed_at})",
            reason='conflict', rejected=(repo, pr.closed_at))
    if pr.author != state.viewer:
        _need_write(state, r, "closing someone else's pull request")
    pr.state, pr.closed_at = "closed", state.advance()
    return _info(state, pr)
