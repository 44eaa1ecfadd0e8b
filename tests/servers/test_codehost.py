"""Codehost server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

import pytest
from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove.env.state import state_hash
from prove_servers.codehost import SERVER
from prove_servers.codehost.state import (
    Account,
    Branch,
    CodeHostState,
    Commit,
    Issue,
    IssueComment,
    PullRequest,
    Repository,
    Review,
    initial_state,
)

C1, C2 = "aaaaaa1", "aaaaaa2"  # acme/web main: C1 <- C2


def tiny() -> CodeHostState:
    s = CodeHostState(now="2026-04-20T10:30", viewer="ada")
    for login in ("ada", "bo", "cy"):
        s.accounts[login] = Account(login=login, kind="user", name=login.title(), email=f"{login}@x.com",
                                    location="Berlin")
    for org, members in (("acme", ["ada", "bo"]), ("zeta", ["cy"])):
        s.accounts[org] = Account(login=org, kind="organization", name=org.title(), location="Oslo", members=members)
    repo = dict(description="", default_branch="main", created_at="2024-01-01T00:00")
    for full, vis, lang, stars, collab, labels in (
        ("acme/web", "public", "Python", 50, ["ada", "bo"], ["bug", "docs", "enhancement"]),
        ("acme/handbook", "internal", "Ruby", 3, ["bo"], ["docs"]),
        ("acme/secret", "private", "Go", 9, ["bo"], ["bug"]),
        ("cy/tools", "public", "Go", 7, [], ["bug"]),
        ("zeta/infra", "internal", "Rust", 1, ["cy"], ["bug"]),
    ):
        owner, name = full.split("/")
        s.repositories[full] = Repository(full_name=full, owner=owner, name=name, visibility=vis, language=lang,
                                          stars=stars, labels=labels, collaborators=collab,
                                          required_approvals=1, **repo)
    commits = [  # sha, repo, parent, checks, branch it heads (or None)
        (C1, "acme/web", None, "passing", None), (C2, "acme/web", C1, "passing", "main"),
        ("b000001", "acme/web", C2, "passing", "feature/login"),
        ("b000002", "acme/web", C2, "failing", "fix/crash"),
        ("b000003", "acme/web", C2, "passing", "feature/conflict"),
        ("b000004", "acme/web", C2, "pending", "feature/pending"),
        ("b000005", "acme/web", C2, "passing", "feature/mine"),
        ("b000006", "acme/web", C2, "passing", "feature/new"),
        ("c000001", "acme/handbook", None, "passing", "main"),
        ("c000002", "acme/secret", None, "passing", "main"),
        ("c000003", "cy/tools", None, "passing", "main"),
        ("c000004", "cy/tools", "c000003", "passing", "feature/x"),
        ("c000005", "zeta/infra", None, "passing", "main"),
    ]
    for i, (sha, full, parent, checks, branch) in enumerate(commits):
        s.commits[sha] = Commit(sha=sha, repo=full, author="bo", message=f"change {i}",
                                timestamp=f"2026-03-{i + 1:02d}T12:00", parents=[parent] if parent else [],
                                checks=checks, additions=10 * (i + 1), deletions=i)
        if branch:
            s.branches[f"{full}:{branch}"] = Branch(repo=full, name=branch, head_sha=sha)
    s.branches["acme/web:docs/empty"] = Branch(repo="acme/web", name="docs/empty", head_sha=C2)
    s.branches["acme/web:release"] = Branch(repo="acme/web", name="release", head_sha=C1)
    issue = dict(body="details", created_at="2026-04-01T09:00")
    s.issues["acme/web#1"] = Issue(repo="acme/web", number=1, title="Crash on empty input", author="cy", state="open",
                                   labels=["bug"], assignee="bo", **issue, comments=[IssueComment(
                                       comment_id="CMT-0001", author="bo", body="Repro?", created_at="2026-04-02T09:00")])
    s.issues["acme/web#2"] = Issue(repo="acme/web", number=2, title="Old docs", author="bo", state="closed",
                                   labels=[], assignee=None, closed_at="2026-04-03T09:00",
                                   close_reason="completed", **issue)
    s.issues["acme/handbook#1"] = Issue(repo="acme/handbook", number=1, title="Typo", author="ada", state="open",
                                        labels=[], assignee=None, **issue)
    s.issues["acme/handbook#2"] = Issue(repo="acme/handbook", number=2, title="Holidays", author="bo",
                                        state="open", labels=[], assignee=None, **issue)

    def review(n: int, who: str, verdict: str) -> Review:
        return Review(review_id=f"REV-{n:04d}", reviewer=who, verdict=verdict, body="ok",
                      submitted_at="2026-04-10T09:00")

    pr = dict(body="", base="main", created_at="2026-04-05T09:00", has_conflicts=False)
    for number, head, author, pstate, extra in (
        (3, "feature/login", "bo", "open", {}),
        (4, "fix/crash", "bo", "open", {"reviews": [review(1, "cy", "approved")]}),
        (5, "feature/conflict", "bo", "open", {"has_conflicts": True, "reviews": [review(2, "ada", "approved")]}),
        (6, "feature/pending", "bo", "open", {"reviews": [review(3, "cy", "changes_requested")]}),
        (7, "feature/mine", "ada", "open", {}),
        (8, "feature/old", "bo", "merged", {"merged_at": "2026-03-02T12:00", "closed_at": "2026-03-02T12:00",
                                            "merged_by": "bo", "merge_commit_sha": C2}),
        (9, "fix/crash", "bo", "closed", {"closed_at": "2026-04-06T09:00"}),
        (10, "main", "bo", "open", {"base": "release", "reviews": [review(4, "ada", "approved")]}),
    ):
        s.pulls[f"acme/web#{number}"] = PullRequest(**{**pr, **extra}, repo="acme/web", number=number,
                                                    title=f"PR {head}", head=head, author=author, state=pstate)
    s.pulls["cy/tools#1"] = PullRequest(**pr, repo="cy/tools", number=1, title="Tools", head="feature/x",
                                        author="cy", state="open")
    return s


hub = hub_fixture(SERVER, tiny)


def names(items: list[dict], key: str = "full_name") -> list:
    return [i[key] for i in items]


def test_exactly_17_tools_with_both_kinds() -> None:
    assert len(SERVER.tools) == 17
    assert sum(t.write for t in SERVER.tools) == 9


def test_repositories_hide_what_the_viewer_cannot_see(hub: Hub) -> None:
    res = ok(hub, "list_repositories")
    assert res["viewer"] == "ada" and names(res["repositories"]) == ["acme/handbook", "acme/web", "cy/tools"]
    assert names(ok(hub, "list_repositories", owner="acme")["repositories"]) == ["acme/handbook", "acme/web"]
    assert names(ok(hub, "list_repositories", visibility="internal")["repositories"]) == ["acme/handbook"]
    assert ok(hub, "list_repositories", language="Go")["total"] == 1  # acme/secret is Go but hidden
    assert names(ok(hub, "list_repositories", sort="stars")["repositories"])[0] == "acme/web"
    assert names(ok(hub, "list_repositories", query="HAND")["repositories"]) == ["acme/handbook"]
    page = ok(hub, "list_repositories", limit=2)
    assert page["next_offset"] == 2 and ok(hub, "list_repositories", offset=2)["next_offset"] is None
    fails(hub, "list_repositories", "user or organization 'nobody' not found", "acme", owner="nobody")
    fails(hub, "list_repositories", "visibility", "'public', 'private' or 'internal'", visibility="secret")
    info = ok(hub, "get_repository", repo="acme/web")
    assert info["viewer_permission"] == "write" and info["open_issues"] == 1
    assert info["open_pull_requests"] == 6 and info["branch_count"] == 9
    assert ok(hub, "get_repository", repo="acme/handbook")["viewer_permission"] == "read"
    assert ok(hub, "get_repository", repo="cy/tools")["viewer_permission"] == "read"
    for hidden in ("acme/secret", "zeta/infra", "nope/nothing"):
        fails(hub, "get_repository", f"repository '{hidden}' not found or not visible to you ('ada')",
              "acme/handbook, acme/web, cy/tools", repo=hidden)


def test_branches(hub: Hub) -> None:
    res = ok(hub, "list_repo_branches", repo="acme/web")
    by_name = {b["name"]: b for b in res["branches"]}
    assert res["default_branch"] == "main" and by_name["main"]["is_default"]
    assert by_name["feature/login"]["ahead_of_default"] == 1 and by_name["release"]["behind_default"] == 1
    assert ok(hub, "list_repo_branches", repo="acme/web", query="feature")["total"] == 5
    assert ok(hub, "list_repo_branches", repo="acme/web", limit=4)["next_offset"] == 4
    new = ok(hub, "create_branch", repo="acme/web", name="fix/typo")
    assert new["head_sha"] == C2 and new["ahead_of_default"] == 0
    assert "fix/typo" in names(ok(hub, "list_repo_branches", repo="acme/web")["branches"], "name")
    off = ok(hub, "create_branch", repo="acme/web", name="spike", from_branch="feature/login")
    assert off["head_sha"] == "b000001" and off["ahead_of_default"] == 1
    fails(hub, "create_branch", "branch 'fix/typo' already exists", "aaaaaa2", repo="acme/web", name="fix/typo")
    fails(hub, "create_branch", "branch 'nope' not found", "from_branch", "feature/login",
          repo="acme/web", name="x", from_branch="nope")
    fails(hub, "create_branch", "invalid branch name 'bad name'", repo="acme/web", name="bad name")
    fails(hub, "create_branch", "invalid branch name", repo="acme/web", name="a..b")
    fails(hub, "create_branch", "you ('ada') have read access to 'acme/handbook'", "needs write access", "bo",
          repo="acme/handbook", name="x")
    fails(hub, "create_branch", "not found or not visible", repo="acme/secret", name="x")


def test_commits(hub: Hub) -> None:
    assert names(ok(hub, "list_commits", repo="acme/web")["commits"], "sha") == [C2, C1]
    res = ok(hub, "list_commits", repo="acme/web", branch="feature/login")
    assert res["branch"] == "feature/login" and names(res["commits"], "sha") == ["b000001", C2, C1]
    assert ok(hub, "list_commits", repo="acme/web", since="2026-03-02")["total"] == 1
    assert ok(hub, "list_commits", repo="acme/web", author="cy")["total"] == 0
    assert ok(hub, "list_commits", repo="acme/web", limit=1)["next_offset"] == 1
    fails(hub, "list_commits", "since must be a date YYYY-MM-DD", "got 'last week'", repo="acme/web", since="last week")
    fails(hub, "list_commits", "since must be a date YYYY-MM-DD", repo="acme/web", since="2026-03-02T10:00")
    fails(hub, "list_commits", "branch 'dev' not found", "(parameter 'branch')", repo="acme/web", branch="dev")
    commit = ok(hub, "get_commit", repo="acme/web", sha="B000001")
    assert commit["parents"] == [C2] and commit["checks"] == "passing"
    assert ok(hub, "get_commit", repo="acme/web", sha=C2 + "ffff")["sha"] == C2
    fails(hub, "get_commit", "commit 'c000003' not found in 'acme/web'", f"{C2}, {C1}", repo="acme/web", sha="c000003")
    fails(hub, "get_commit", "sha", "at least 7 characters", repo="acme/web", sha="aaaa")


def test_commit_pages_continue(hub: Hub) -> None:
    first = ok(hub, "list_commits", repo="acme/web", branch="feature/login", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_commits", repo="acme/web", branch="feature/login", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert names(first["commits"] + second["commits"], "sha") == ["b000001", C2, C1]


def test_issue_listing_and_creation(hub: Hub) -> None:
    assert names(ok(hub, "list_repo_issues", repo="acme/web")["issues"], "number") == [1]
    assert names(ok(hub, "list_repo_issues", repo="acme/web", status="all")["issues"], "number") == [2, 1]
    assert ok(hub, "list_repo_issues", repo="acme/web", status="all", label="bug")["total"] == 1
    assert ok(hub, "list_repo_issues", repo="acme/web", assignee="bo")["total"] == 1
    assert ok(hub, "list_repo_issues", repo="acme/web", status="all", query="docs")["total"] == 1
    fails(hub, "list_repo_issues", "label(s) 'wontfix' not defined in 'acme/web'", "bug, docs, enhancement",
          repo="acme/web", label="wontfix")
    new = ok(hub, "create_issue", repo="acme/web", title="Add dark mode", labels=["enhancement", "docs"],
             assignee="bo")
    assert new["number"] == 11 and new["author"] == "ada" and new["labels"] == ["docs", "enhancement"]
    assert names(ok(hub, "list_repo_issues", repo="acme/web", label="enhancement")["issues"], "number") == [11]
    fails(hub, "create_issue", "label(s) 'ux' not defined", repo="acme/web", title="x", labels=["ux"])
    fails(hub, "create_issue", "assignee 'cy' cannot be assigned", "ada, bo", repo="acme/web", title="x",
          assignee="cy")
    fails(hub, "create_issue", "title must not be blank", repo="acme/web", title="   ")
    fails(hub, "create_issue", "setting labels or an assignee needs write access", repo="acme/handbook",
          title="x", labels=["docs"])
    fails(hub, "create_issue", "not found or not visible", repo="acme/secret", title="x")
    assert ok(hub, "create_issue", repo="acme/handbook", title="Add FAQ")["number"] == 3


def test_comment_and_close_issue(hub: Hub) -> None:
    issue = ok(hub, "comment_on_issue", repo="acme/web", number=1, body="Fixed on main.")
    assert [c["comment_id"] for c in issue["comments"]] == ["CMT-0001", "CMT-0002"]
    assert issue["comments"][-1]["author"] == "ada"
    fails(hub, "comment_on_issue", "body must not be blank", repo="acme/web", number=1, body="  ")
    fails(hub, "comment_on_issue", "#3 in 'acme/web' is a pull request", repo="acme/web", number=3, body="hi")
    fails(hub, "comment_on_issue", "issue #99 not found", "#1, #2", repo="acme/web", number=99, body="hi")
    closed = ok(hub, "close_issue", repo="acme/web", number=1, reason="not_planned", comment="Won't fix.")
    assert closed["state"] == "closed" and closed["close_reason"] == "not_planned" and len(closed["comments"]) == 3
    assert ok(hub, "list_repo_issues", repo="acme/web")["total"] == 0
    assert ok(hub, "list_repo_issues", repo="acme/web", status="closed")["total"] == 2
    fails(hub, "close_issue", "issue #1 in 'acme/web' is already closed (not_planned", repo="acme/web", number=1)
    fails(hub, "close_issue", "closing someone else's issue needs write access", repo="acme/handbook", number=2)
    assert ok(hub, "close_issue", repo="acme/handbook", number=1)["state"] == "closed"  # own issue, read access
    fails(hub, "close_issue", "reason", "'completed' or 'not_planned'", repo="acme/web", number=2, reason="done")


def test_label_issue(hub: Hub) -> None:
    assert ok(hub, "label_issue", repo="acme/web", number=1, labels=["docs"])["labels"] == ["bug", "docs"]
    assert ok(hub, "list_repo_issues", repo="acme/web", label="docs")["total"] == 1
    fails(hub, "label_issue", "issue #1 already has label(s) bug", repo="acme/web", number=1, labels=["bug"])
    fails(hub, "label_issue", "does not have label(s) enhancement", "its labels: bug, docs",
          repo="acme/web", number=1, labels=["enhancement"], action="remove")
    assert ok(hub, "label_issue", repo="acme/web", number=1, labels=["bug"], action="remove")["labels"] == ["docs"]
    fails(hub, "label_issue", "label(s) 'urgent' not defined", "bug, docs, enhancement",
          repo="acme/web", number=1, labels=["urgent"])
    fails(hub, "label_issue", "labelling issues needs write access", repo="acme/handbook", number=1, labels=["docs"])
    fails(hub, "label_issue", "labels", "at least 1 item", repo="acme/web", number=1, labels=[])


def test_pull_request_reads(hub: Hub) -> None:
    assert names(ok(hub, "list_pull_requests", repo="acme/web")["pull_requests"], "number") == [10, 7, 6, 5, 4, 3]
    assert names(ok(hub, "list_pull_requests", repo="acme/web", status="merged")["pull_requests"], "number") == [8]
    assert ok(hub, "list_pull_requests", repo="acme/web", status="all", author="ada")["total"] == 1
    assert ok(hub, "list_pull_requests", repo="acme/web", base="release")["total"] == 1
    assert ok(hub, "list_pull_requests", repo="acme/web", limit=2)["next_offset"] == 2
    pr = ok(hub, "get_pull_request", repo="acme/web", number=3)
    assert pr["review_decision"] == "review_required" and not pr["mergeable"]
    assert pr["merge_blockers"] == ["needs 1 approving review(s), has 0"] and pr["head_sha"] == "b000001"
    assert ok(hub, "get_pull_request", repo="acme/web", number=4)["merge_blockers"] == [
        "checks are failing on head commit b000002"]
    assert ok(hub, "get_pull_request", repo="acme/web", number=5)["merge_blockers"] == [
        "merge conflicts with base branch 'main'"]
    six = ok(hub, "get_pull_request", repo="acme/web", number=6)
    assert six["review_decision"] == "changes_requested" and six["changes_requested_by"] == ["cy"]
    assert ok(hub, "get_pull_request", repo="acme/web", number=10)["mergeable"]
    fails(hub, "get_pull_request", "#1 in 'acme/web' is an issue, not a pull request", repo="acme/web", number=1)
    fails(hub, "get_pull_request", "pull request #42 not found", "#3, #4", repo="acme/web", number=42)
    fails(hub, "get_pull_request", "number", "greater than or equal to 1", repo="acme/web", number=0)


def test_create_pull_request(hub: Hub) -> None:
    pr = ok(hub, "create_pull_request", repo="acme/web", title="New feature", head="feature/new")
    assert pr["number"] == 11 and pr["base"] == "main" and pr["author"] == "ada" and pr["checks"] == "passing"
    assert pr["merge_blockers"] == ["needs 1 approving review(s), has 0"]
    assert names(ok(hub, "list_pull_requests", repo="acme/web", author="ada")["pull_requests"], "number") == [11, 7]
    fails(hub, "create_pull_request", "pull request #11 is already open for 'feature/new' into 'main'",
          repo="acme/web", title="again", head="feature/new")
    fails(hub, "create_pull_request", "head and base are both 'main'", repo="acme/web", title="x", head="main")
    fails(hub, "create_pull_request", "no commits between 'main' and 'docs/empty'",
          repo="acme/web", title="x", head="docs/empty")
    fails(hub, "create_pull_request", "branch 'nope' not found", "(parameter 'head')", "feature/login",
          repo="acme/web", title="x", head="nope")
    fails(hub, "create_pull_request", "branch 'dev' not found", "(parameter 'base')",
          repo="acme/web", title="x", head="feature/new", base="dev")
    fails(hub, "create_pull_request", "title must not be blank", repo="acme/web", title=" ", head="feature/new")
    assert ok(hub, "create_pull_request", repo="acme/web", title="Backport", head="feature/new",
              base="release")["number"] == 12


def test_review_then_merge_is_visible_everywhere(hub: Hub) -> None:
    fails(hub, "merge_pull_request", "cannot merge pull request #3", "needs 1 approving review(s), has 0",
          repo="acme/web", number=3)
    pr = ok(hub, "review_pull_request", repo="acme/web", number=3, verdict="approved")
    assert pr["review_decision"] == "approved" and pr["approved_by"] == ["ada"] and pr["mergeable"]
    assert pr["reviews"][-1]["review_id"] == "REV-0005"
    stacked = ok(hub, "create_pull_request", repo="acme/web", title="Stacked", head="feature/new", base="feature/login")
    merged = ok(hub, "merge_pull_request", repo="acme/web", number=3, delete_branch=True)
    assert ok(hub, "get_pull_request", repo="acme/web", number=stacked["number"])["merge_blockers"] == [
        "base branch 'feature/login' no longer exists"]
    assert merged["state"] == "merged" and merged["merged_by"] == "ada" and merged["head_sha"] is None
    sha = merged["merge_commit_sha"]
    commit = ok(hub, "get_commit", repo="acme/web", sha=sha)
    assert commit["parents"] == [C2, "b000001"] and commit["message"] == "Merge pull request #3 from feature/login"
    assert commit["additions"] == 30 and commit["checks"] == "pending"
    assert names(ok(hub, "list_commits", repo="acme/web")["commits"], "sha") == [sha, "b000001", C2, C1]
    assert "feature/login" not in names(ok(hub, "list_repo_branches", repo="acme/web")["branches"], "name")
    assert ok(hub, "get_pull_request", repo="acme/web", number=3)["state"] == "merged"
    assert ok(hub, "list_pull_requests", repo="acme/web", status="merged")["total"] == 2
    fails(hub, "merge_pull_request", "#3 in 'acme/web' was already merged", f"(commit {sha})", repo="acme/web", number=3)
    fails(hub, "close_pull_request", "was merged", "cannot be closed", repo="acme/web", number=3)
    fails(hub, "review_pull_request", "is merged; only open pull requests", repo="acme/web", number=3,
          verdict="approved")


def test_squash_merge_keeps_branch(hub: Hub) -> None:
    ok(hub, "review_pull_request", repo="acme/web", number=3, verdict="approved")
    merged = ok(hub, "merge_pull_request", repo="acme/web", number=3, method="squash")
    commit = ok(hub, "get_commit", repo="acme/web", sha=merged["merge_commit_sha"])
    assert commit["parents"] == [C2] and commit["message"] == "PR feature/login (#3)"
    assert "feature/login" in names(ok(hub, "list_repo_branches", repo="acme/web")["branches"], "name")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"number": 4}, ("checks are failing on head commit b000002",)),
        ({"number": 5}, ("merge conflicts with base branch 'main'",)),
        ({"number": 6}, ("checks are pending", "changes requested by cy", "needs 1 approving review(s), has 0")),
        ({"number": 7}, ("needs 1 approving review(s), has 0",)),
        ({"number": 9}, ("#9 in 'acme/web' is closed; it cannot be merged",)),
        ({"number": 10, "delete_branch": True}, ("'main' is the default branch of 'acme/web'",)),
        ({"number": 2}, ("#2 in 'acme/web' is an issue",)),
        ({"number": 3, "method": "rebase"}, ("method", "'merge' or 'squash'")),
        ({"repo": "cy/tools", "number": 1}, ("you ('ada') have read access to 'cy/tools'", "merging needs write", "cy")),
    ],
)
def test_merge_failures(hub: Hub, args: dict, fragments: tuple[str, ...]) -> None:
    fails(hub, "merge_pull_request", *fragments, **{"repo": "acme/web", **args})


def test_review_rules(hub: Hub) -> None:
    fails(hub, "review_pull_request", "you ('ada') opened pull request #7", "cannot review your own", "bo",
          repo="acme/web", number=7, verdict="approved")
    fails(hub, "review_pull_request", "body is required when the verdict is 'changes_requested'",
          repo="acme/web", number=6, verdict="changes_requested")
    fails(hub, "review_pull_request", "is closed; only open", repo="acme/web", number=9, verdict="commented",
          body="late")
    fails(hub, "review_pull_request", "verdict", "'approved', 'changes_requested' or 'commented'",
          repo="acme/web", number=6, verdict="lgtm")
    pr = ok(hub, "review_pull_request", repo="acme/web", number=6, verdict="changes_requested", body="Tests?")
    assert pr["changes_requested_by"] == ["ada", "cy"]
    pr = ok(hub, "review_pull_request", repo="cy/tools", number=1, verdict="commented", body="Nice")
    assert pr["review_decision"] == "review_required" and pr["reviews"][0]["reviewer"] == "ada"
    assert ok(hub, "review_pull_request", repo="acme/web", number=5, verdict="changes_requested",
              body="Rebase")["approved_by"] == []  # the latest verdict per reviewer counts


def test_close_pull_request(hub: Hub) -> None:
    closed = ok(hub, "close_pull_request", repo="acme/web", number=7)
    assert closed["state"] == "closed" and closed["closed_at"] == "2026-04-20T10:31"
    assert 7 in names(ok(hub, "list_pull_requests", repo="acme/web", status="closed")["pull_requests"], "number")
    fails(hub, "close_pull_request", "#7 in 'acme/web' is already closed", repo="acme/web", number=7)
    fails(hub, "close_pull_request", "#8 in 'acme/web' was merged", repo="acme/web", number=8)
    fails(hub, "close_pull_request", "closing someone else's pull request needs write access", "cy",
          repo="cy/tools", number=1)
    assert ok(hub, "close_pull_request", repo="acme/web", number=4)["state"] == "closed"  # bo's, ada has write
    fails(hub, "close_pull_request", "not found or not visible", repo="zeta/infra", number=1)


def test_seeded_world_is_deterministic_and_consistent() -> None:
    for seed in range(4):
        s = initial_state(seed)
        assert state_hash(s) == state_hash(initial_state(seed))
        assert not s.counters  # new ids continue after the seeded ones, uncounted
        assert s.model_copy(deep=True).new_id("CMT") == f"CMT-{sum(len(i.comments) for i in s.issues.values()) + 1:04d}"
        assert s.model_copy(deep=True).new_id("REV") == f"REV-{sum(len(p.reviews) for p in s.pulls.values()) + 1:04d}"
        perms = {s.permission(r) for r in s.repositories.values()}
        assert {"admin", "write", "read", "none"} <= perms
        assert any(p.author == s.viewer and p.state == "open" for p in s.pulls.values())
        for b in s.branches.values():
            assert s.commits[b.head_sha].repo == b.repo
        for p in s.pulls.values():
            assert p.state == "merged" or f"{p.repo}:{p.head}" in s.branches
    assert state_hash(initial_state(0)) != state_hash(initial_state(1))


def test_seeded_hub_runs_a_chain() -> None:
    hub = Hub.for_state(SERVER, initial_state(5))
    hub.open("t", seed=0)
    listing = ok(hub, "list_repositories", limit=50)
    repos, viewer = listing["repositories"], listing["viewer"]
    mine = [r["full_name"] for r in repos if ok(hub, "get_repository", repo=r["full_name"])["viewer_permission"]
            in ("admin", "write")]
    assert mine
    res = ok(hub, "create_issue", repo=mine[0], title="Flaky test", labels=["bug"])
    assert ok(hub, "list_repo_issues", repo=mine[0], label="bug")["issues"][0]["number"] == res["number"]
    merged = 0
    for repo in mine:  # approve others' pull requests, then merge those nothing else blocks
        for pr in ok(hub, "list_pull_requests", repo=repo)["pull_requests"]:
            if pr["author"] == viewer:
                continue
            if ok(hub, "review_pull_request", repo=repo, number=pr["number"], verdict="approved")["mergeable"]:
                done = ok(hub, "merge_pull_request", repo=repo, number=pr["number"])
                head = ok(hub, "list_commits", repo=repo, branch=pr["base"], limit=1)["commits"][0]
                assert head["sha"] == done["merge_commit_sha"]
                merged += 1
    assert merged
