"""Code hosting server state: accounts, repositories, branches, commits, issues, pull requests."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, entity_ids, naming
from prove.env.world import CITIES, COMPANIES, FIRST_NAMES, LAST_NAMES, email, shift, slug

AccountKind = Literal["user", "organization"]
Visibility = Literal["public", "private", "internal"]
Language = Literal["Python", "TypeScript", "Go", "Rust", "Java", "Ruby", "Kotlin", "C++"]
Permission = Literal["admin", "write", "read", "none"]
CheckStatus = Literal["pending", "passing", "failing"]
IssueState = Literal["open", "closed"]
CloseReason = Literal["completed", "not_planned"]
PullState = Literal["open", "closed", "merged"]
Verdict = Literal["approved", "changes_requested", "commented"]
ReviewDecision = Literal["approved", "changes_requested", "review_required"]
MergeMethod = Literal["merge", "squash"]

Login = entity_id("account", "User or organization login, e.g. 'mei-tanaka' or 'cobalt-systems'.", example="mei-tanaka")
RepoName = entity_id("repository", "Repository as 'owner/name', e.g. 'cobalt-systems/web-app'.", example="cobalt-systems/web-app")
BranchName = entity_id("branch", "Branch name within the repository, e.g. 'main' or 'feature/dark-mode'.", example="main")
CommitSha = entity_id("commit", "Short commit hash, 7 hex digits, e.g. 'a1b2c3d'.", example="a1b2c3d")
LabelName = entity_id("label", "Label defined in the repository, e.g. 'bug'.", example="bug")
IssueNumber = entity_id("issue", "Issue number within the repository, e.g. 12.", type_=int, ge=1)
PullNumber = entity_id("pull_request", "Pull request number within the repository, e.g. 7.", type_=int, ge=1)
CommentId = entity_id("issue_comment", "Issue comment id, e.g. 'CMT-0004'.", example="CMT-0004")
ReviewId = entity_id("review", "Pull request review id, e.g. 'REV-0002'.", example="REV-0002")


class Account(Record):
    login: Login = Field(description="Unique handle, e.g. 'mei-tanaka' or 'cobalt-systems'.")
    kind: AccountKind
    name: str = Field(json_schema_extra=naming("name"))
    email: str | None = Field(None, description="Public email (users only).")
    location: str
    members: entity_ids("account", "Organizations: member logins, sorted.") = Field(default_factory=list)


class Repository(Record):
    full_name: RepoName = Field(description="'owner/name', the repository's id.")
    owner: Login
    name: str = Field(json_schema_extra=naming("name"))
    description: str
    visibility: Visibility
    default_branch: BranchName
    language: Language
    stars: int
    labels: entity_ids("label", "Labels defined in this repository, sorted.")
    collaborators: entity_ids("account", "Logins with write access besides the owner, sorted.")
    required_approvals: int = Field(description="Approving reviews a pull request needs before merging.")
    created_at: str


class Branch(Record):
    repo: RepoName
    name: BranchName = Field(json_schema_extra=naming("name"))
    head_sha: CommitSha


class Commit(Record):
    sha: CommitSha = Field(description="Short commit hash, 7 hex digits.")
    repo: RepoName
    author: Login
    message: str
    timestamp: str
    parents: entity_ids("commit", "Parent shas; the first is the branch's previous commit.")
    checks: CheckStatus = Field(description="Combined CI status of this commit.")
    additions: int
    deletions: int


class IssueComment(Record):
    comment_id: CommentId
    author: Login
    body: str
    created_at: str


class Issue(Record):
    repo: RepoName
    number: IssueNumber = Field(description="Per-repository number, shared with pull requests.")
    title: str = Field(json_schema_extra=naming("title"))
    body: str
    author: Login
    state: IssueState
    labels: entity_ids("label", "Labels on the issue, sorted.")
    assignee: Login | None
    created_at: str
    closed_at: str | None = None
    close_reason: CloseReason | None = None
    comments: list[IssueComment] = Field(default_factory=list)


class Review(Record):
    review_id: ReviewId
    reviewer: Login
    verdict: Verdict
    body: str
    submitted_at: str


class PullRequest(Record):
    repo: RepoName
    number: PullNumber = Field(description="Per-repository number, shared with issues.")
    title: str = Field(json_schema_extra=naming("title"))
    body: str
    author: Login
    head: BranchName = Field(description="Branch with the changes.")
    base: BranchName = Field(description="Branch the changes merge into.")
    state: PullState
    has_conflicts: bool
    reviews: list[Review] = Field(default_factory=list)
    created_at: str
    closed_at: str | None = None
    merged_at: str | None = None
    merged_by: Login | None = None
    merge_commit_sha: CommitSha | None = None


class CodeHostState(ServerState):
    viewer: Login = Field(description="Login of the signed-in user every tool acts as.")
    accounts: dict[str, Account] = Field(default_factory=dict)
    repositories: dict[str, Repository] = Field(default_factory=dict)
    branches: dict[str, Branch] = Field(default_factory=dict, description="Keyed 'owner/name:branch'.")
    commits: dict[str, Commit] = Field(default_factory=dict, description="Keyed by sha.")
    issues: dict[str, Issue] = Field(default_factory=dict, description="Keyed 'owner/name#number'.")
    pulls: dict[str, PullRequest] = Field(default_factory=dict, description="Keyed 'owner/name#number'.")

    def permission(self, repo: Repository, login: str | None = None) -> Permission:
        """What `login` (default: the viewer) may do in `repo`."""
        login = self.viewer if login is None else login
        if repo.owner == login:
            return "admin"
        if login in repo.collaborators:
            return "write"
        owner = self.accounts.get(repo.owner)
        if repo.visibility == "public" or (
            repo.visibility == "internal" and owner is not None and login in owner.members
        ):
            return "read"
        return "none"


def branch_key(repo: str, name: str) -> str:
    return f"{repo}:{name}"


def item_key(repo: str, number: int) -> str:
    return f"{repo}#{number}"


_PROJECTS = (
    "web-app", "api-gateway", "billing-service", "mobile-client", "data-pipeline", "design-system",
    "infra", "docs-site", "cli", "auth-service", "search-indexer", "ml-models", "dotfiles",
    "blog", "ray-tracer", "chess-engine", "budget-tracker", "feature-flags", "etl-jobs", "status-page",
    "k8s-operator", "slack-bot", "invoice-pdf", "recipe-app",
)
_TOPICS = (
    "dark mode", "CSV export", "pagination", "webhooks", "rate limiter", "search endpoint",
    "config loader", "retry logic", "cache layer", "file upload", "notifications", "login page",
    "audit log", "metrics dashboard", "password reset", "timezone handling", "bulk import", "SSO",
)
_LABELS = (
    "bug", "enhancement", "documentation", "good first issue", "help wanted", "question",
    "security", "performance", "wontfix", "duplicate", "dependencies", "ui",
)
_ISSUE_TITLES = {
    "bug": ("{t} crashes on empty input", "{t} returns 500 after upgrade", "Wrong results from {t}"),
    "enhancement": ("Add {t} support", "Make {t} configurable", "Improve {t}"),
    "documentation": ("Document {t}", "Outdated docs for {t}"),
    "performance": ("{t} is slow on large repos", "Reduce memory use of {t}"),
    "security": ("{t} leaks tokens in logs",),
}
_VERBS = ("Fix", "Add", "Refactor", "Update", "Remove unused code in", "Improve", "Test")
_BRANCH_KIND = (("feature", "Add"), ("fix", "Fix"), ("chore", "Clean up"), ("refactor", "Refactor"))
_COMMENTS = (
    "I can reproduce this on the latest release.", "Any update on this?", "Working on a fix.",
    "Could you share the logs?", "+1, this blocks our rollout.", "Fixed in the last deploy, please verify.",
)
_REVIEW_BODY = {
    "approved": ("LGTM", "Looks good, thanks!", "Ship it."),
    "changes_requested": ("Please add tests.", "This breaks the public API.", "Needs a migration."),
    "commented": ("Nice cleanup.", "Left a few nits.", "Question about the retry policy."),
}


_DAY = 1440  # minutes; the builder keeps times as minutes before `now` and formats them once


class _Builder:
    """Grows one seeded world; only `initial_state` uses it."""

    def __init__(self, rng: random.Random, now: str) -> None:
        self.rng, self.now = rng, now
        self.state = CodeHostState(now=now, viewer="")
        self.ago: dict[str, int] = {}  # commit sha -> minutes before now
        self.cmt, self.rev = Counter("CMT"), Counter("REV")

    def ts(self, ago: int) -> str:
        return shift(self.now, minutes=-ago)

    def later(self, ago: int, until: int = 0) -> int:
        """A random time strictly between `ago` and `until` minutes before now (or `until`)."""
        return self.rng.randrange(until + 1, ago) if ago - until > 1 else until

    def commit(self, repo: str, author: str, message: str, ago: int, parents: list[str],
               checks: CheckStatus = "passing") -> Commit:
        rng = self.rng
        sha = f"{rng.getrandbits(28):07x}"
        while sha in self.ago:
            sha = f"{rng.getrandbits(28):07x}"
        c = Commit(sha=sha, repo=repo, author=author, message=message, timestamp=self.ts(ago),
                   parents=parents, checks=checks, additions=rng.randrange(1, 400),
                   deletions=rng.randrange(0, 200))
        self.state.commits[sha], self.ago[sha] = c, ago
        return c

    def user(self, taken: set[str]) -> Account:
        rng = self.rng
        while True:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            login = f"{first}-{last}".lower()
            if login not in taken:
                taken.add(login)
                name = f"{first} {last}"
                return Account(login=login, kind="user", name=name, email=email(name, "devmail.example.com"),
                               location=rng.choice(CITIES))

    def repo(self, owner: str, name: str, visibility: Visibility, writers: list[str]) -> None:
        """One repository with its history; the viewer's own repositories start with its open PR."""
        rng, s = self.rng, self.state
        full = f"{owner}/{name}"
        labels = sorted({"bug", "enhancement", *rng.sample(_LABELS[2:], rng.randrange(3, 7))})
        people = [owner] if s.accounts[owner].kind == "user" else []
        collaborators = sorted(set(writers) - {owner})
        people += collaborators
        repo = s.repositories[full] = Repository(
            full_name=full, owner=owner, name=name, visibility=visibility,
            description=f"{name.replace('-', ' ').capitalize()} with {rng.choice(_TOPICS)}",
            default_branch=rng.choice(["main", "main", "main", "master"]),
            language=rng.choice(["Python", "TypeScript", "Go", "Rust", "Java", "Ruby", "Kotlin", "C++"]),
            stars=rng.choice([0, 2, 5, 12, 40, 130, 900, 4200]) + rng.randrange(0, 10),
            labels=labels, collaborators=collaborators, required_approvals=rng.choice([0, 1, 1, 1, 2]),
            created_at=self.ts(rng.randrange(420 * _DAY, 900 * _DAY)),
        )
        # Default branch: a first-parent chain of commits over the last ~400 days.
        chain: list[Commit] = []
        for ago in sorted((rng.randrange(3 * _DAY, 400 * _DAY) for _ in range(rng.randrange(6, 12))), reverse=True):
            msg = f"{rng.choice(_VERBS)} {rng.choice(_TOPICS)}" if chain else "Initial commit"
            chain.append(self.commit(full, rng.choice(people), msg, ago, [chain[-1].sha] if chain else []))
        s.branches[branch_key(full, repo.default_branch)] = Branch(
            repo=full, name=repo.default_branch, head_sha=chain[-1].sha)
        if rng.random() < 0.35:
            s.branches[branch_key(full, "release/1.x")] = Branch(
                repo=full, name="release/1.x", head_sha=chain[len(chain) // 2].sha)
        items: list[tuple[int, tuple]] = []  # (created, draft); numbered oldest first
        used = {repo.default_branch, "release/1.x"}
        # Merged pull requests: earlier default-branch commits that merged a since-deleted branch.
        for c in rng.sample(chain[1:], rng.randrange(0, 3)):
            kind, verb = rng.choice(_BRANCH_KIND)
            t = rng.choice(_TOPICS)
            bname = f"{kind}/{slug(t).replace('.', '-')}"
            used.add(bname)
            items.append((self.ago[c.sha] + rng.randrange(_DAY, 6 * _DAY),
                          ("merged", c, bname, f"{verb} {t}", c.author)))
        # Feature branches off recent default-branch commits, some with open/closed PRs.
        need_mine = owner == s.viewer
        for _ in range(rng.randrange(1, 5)):
            kind, verb = rng.choice(_BRANCH_KIND)
            t = rng.choice(_TOPICS)
            bname = f"{kind}/{slug(t).replace('.', '-')}"
            if bname in used:
                continue
            used.add(bname)
            mine, need_mine = need_mine, False
            author = s.viewer if mine else rng.choice(people)
            tip = rng.choice(chain[-4:])
            for i in range(rng.randrange(1, 4)):
                checks: CheckStatus = rng.choices(["passing", "failing", "pending"], weights=[6, 2, 2])[0]
                tip = self.commit(full, author, f"{verb} {t}" if i == 0 else f"Address review on {t}",
                                  self.later(self.ago[tip.sha]), [tip.sha], checks)
            s.branches[branch_key(full, bname)] = Branch(repo=full, name=bname, head_sha=tip.sha)
            if mine or rng.random() < 0.7:
                pstate = "open" if mine else rng.choices(["open", "closed"], weights=[5, 1])[0]
                items.append((self.ago[tip.sha] + rng.randrange(0, 2 * _DAY),
                              (pstate, tip, bname, f"{verb} {t}", author)))
        for _ in range(rng.randrange(2, 7)):
            kind = rng.choice(list(_ISSUE_TITLES))
            title = rng.choice(_ISSUE_TITLES[kind]).format(t=rng.choice(_TOPICS))
            items.append((rng.randrange(_DAY, 120 * _DAY), ("issue", kind if kind in labels else None, title)))
        items.sort(key=lambda it: -it[0])
        if repo.visibility == "public":
            readers = [a.login for a in s.accounts.values() if a.kind == "user"]
        else:
            readers = sorted({*people, *([s.viewer] if s.permission(repo) != "none" else [])})
        for number, (created, draft) in enumerate(items, start=1):
            self._item(repo, people, readers, number, created, draft)

    def _item(self, repo: Repository, people: list[str], readers: list[str], number: int, created: int,
              draft: tuple) -> None:
        rng, s, full = self.rng, self.state, repo.full_name
        key = item_key(full, number)
        if draft[0] == "issue":
            _, label, title = draft
            closed = rng.random() < 0.3
            extra = rng.sample([x for x in repo.labels if x != label], rng.randrange(0, 2))
            issue = Issue(
                repo=full, number=number, title=title, body=f"Steps to reproduce and context for: {title.lower()}.",
                author=rng.choice(readers), state="closed" if closed else "open",
                labels=sorted(({label} if label else set()) | set(extra)),
                assignee=rng.choice(people + [None]), created_at=self.ts(created),
            )
            at = created
            for _ in range(rng.randrange(0, 4)):
                at = self.later(at)
                issue.comments.append(IssueComment(comment_id=self.cmt(), author=rng.choice(readers),
                                                   body=rng.choice(_COMMENTS), created_at=self.ts(at)))
            if closed:
                issue.closed_at = self.ts(self.later(at))
                issue.close_reason = rng.choice(["completed", "completed", "not_planned"])
            s.issues[key] = issue
            return
        pstate, commit, head, title, author = draft
        pr = PullRequest(
            repo=full, number=number, title=title, body=f"This PR: {title.lower()}.", author=author,
            head=head, base=repo.default_branch, state=pstate,
            has_conflicts=pstate == "open" and rng.random() < 0.2, created_at=self.ts(created),
        )
        others = [p for p in people if p != author]
        at = created
        for reviewer in rng.sample(others, min(len(others), rng.randrange(0, 3))):
            verdict: Verdict = "approved" if pstate == "merged" else rng.choices(
                ["approved", "changes_requested", "commented"], weights=[5, 2, 2])[0]
            at = self.later(at, self.ago[commit.sha] if pstate == "merged" else 0)
            pr.reviews.append(Review(review_id=self.rev(), reviewer=reviewer, verdict=verdict,
                                     body=rng.choice(_REVIEW_BODY[verdict]), submitted_at=self.ts(at)))
        if pstate == "merged":
            commit.message = f"Merge pull request #{number} from {head}"
            pr.merged_at = pr.closed_at = commit.timestamp
            pr.merged_by, pr.merge_commit_sha = commit.author, commit.sha
        elif pstate == "closed":
            pr.closed_at = self.ts(self.later(at))
        s.pulls[key] = pr


def initial_state(seed: int) -> CodeHostState:
    """~12 users, 3 organizations, ~20 repositories with commits, branches, issues and PRs."""
    rng = random.Random(seed)
    b = _Builder(rng, "2026-04-20T10:30")
    s, taken = b.state, set[str]()
    users = [b.user(taken) for _ in range(rng.randrange(10, 14))]
    for u in users:
        s.accounts[u.login] = u
    s.viewer = users[0].login
    logins = [u.login for u in users]
    orgs = []
    for company in rng.sample(COMPANIES, 3):
        members = sorted(rng.sample(logins[1:], rng.randrange(3, 6)))
        orgs.append(Account(login=slug(company).replace(".", "-"), kind="organization", name=company,
                            location=rng.choice(CITIES), members=members))
    # The viewer belongs to the first two organizations, not the third.
    for org in orgs[:2]:
        org.members = sorted({*org.members, s.viewer})
    for org in orgs:
        s.accounts[org.login] = org
    projects = list(_PROJECTS)
    rng.shuffle(projects)
    for i, org in enumerate(orgs):
        for j in range(rng.randrange(3, 6)):
            writers = rng.sample(org.members, min(len(org.members), rng.randrange(2, 5)))
            if i < 2 and j == 0:
                writers = sorted({*writers, s.viewer})  # at least one writable repo per org
            vis: Visibility = rng.choice(["public", "public", "private", "internal"])
            if i == 2 and j == 0:
                vis = "private"  # at least one repository the viewer cannot see
            b.repo(org.login, projects.pop(), vis, writers)
    for k, owner in enumerate(logins[:7]):
        own: Visibility = "private" if k in (0, 3) else "public"
        friends = rng.sample([x for x in logins if x != owner], rng.randrange(0, 3))
        b.repo(owner, projects.pop(), own, friends)
    return s
