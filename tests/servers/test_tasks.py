"""Tasks server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.tasks import SERVER
from prove_servers.tasks.state import (
    Comment,
    Milestone,
    Project,
    Task,
    TaskState,
    TimeLog,
    User,
    Workspace,
)

ADA, BO, CY, DI, ED = "USR-0001", "USR-0002", "USR-0003", "USR-0004", "USR-0005"


def tiny() -> TaskState:
    s = TaskState(now="2026-05-11T09:00", current_user_id=ADA)
    for uid, name in ((ADA, "Ada Chen"), (BO, "Bo Silva"), (CY, "Cy Park"), (DI, "Di Ito"), (ED, "Ed Roe")):
        s.users[uid] = User(user_id=uid, name=name, email=f"{name.split()[0].lower()}@acme.example",
                            title="Engineer", weekly_capacity_hours=40.0)
    for wid, name, members in (("WSP-0001", "Product", [ADA, BO, CY, DI]), ("WSP-0002", "Marketing", [ADA, ED]),
                               ("WSP-0003", "Legal", [ED])):
        s.workspaces[wid] = Workspace(workspace_id=wid, name=name, member_ids=members)
    projects = (
        ("PRJ-0001", "WSP-0001", "App Redesign", ADA, "active", "2026-07-31", {ADA: "owner", BO: "editor", CY: "viewer"}),
        ("PRJ-0002", "WSP-0001", "Billing", BO, "active", "2026-09-30", {ADA: "viewer", BO: "owner"}),
        ("PRJ-0003", "WSP-0001", "Old Site", ADA, "archived", "2026-01-31", {ADA: "owner", BO: "editor"}),
        ("PRJ-0004", "WSP-0002", "SEO", ED, "active", "2026-08-31", {ED: "owner"}),
    )
    for pid, wid, name, owner, status, due, members in projects:
        s.projects[pid] = Project(project_id=pid, workspace_id=wid, name=name, description=f"{name} project",
                                  owner_id=owner, status=status, start_date="2026-03-01", due_date=due, members=members)
    tasks = (
        ("TSK-0001", "PRJ-0001", "Design mockups", BO, "done", "medium", "2026-04-20", 8.0, {"logged_hours": 3.0}),
        ("TSK-0002", "PRJ-0001", "Build login", ADA, "in_progress", "medium", "2026-05-20", 5.0,
         {"depends_on": ["TSK-0001", "TSK-0003"], "labels": ["frontend"], "milestone_id": "MLS-0001",
          "logged_hours": 10.0}),
        ("TSK-0003", "PRJ-0001", "API spec", BO, "todo", "high", "2026-05-05", 3.0, {"labels": ["backend"]}),
        ("TSK-0004", "PRJ-0001", "Login tests", ADA, "todo", "low", None, 2.0, {"parent_id": "TSK-0002"}),
        ("TSK-0005", "PRJ-0001", "Write docs", BO, "done", "urgent", None, 1.0, {"depends_on": ["TSK-0001"]}),
        ("TSK-0006", "PRJ-0002", "Invoice export", BO, "todo", "medium", "2026-06-10", 5.0, {}),
        ("TSK-0007", "PRJ-0003", "Old task", ADA, "done", "low", None, 1.0, {}),
        ("TSK-0008", "PRJ-0004", "Keyword research", ED, "todo", "medium", None, 4.0, {}),
    )
    for tid, pid, title, who, status, prio, due, est, extra in tasks:
        s.tasks[tid] = Task(task_id=tid, project_id=pid, title=title, assignee_id=who, status=status, priority=prio,
                            due_date=due, estimate_hours=est, created_at="2026-03-02T10:00",
                            completed_at="2026-04-20T17:00" if status == "done" else None, **extra)
    s.comments["CMT-0001"] = Comment(comment_id="CMT-0001", task_id="TSK-0002", author_id=BO, body="Waiting on the spec.",
                                     created_at="2026-05-06T12:00")
    s.time_logs["TLG-0001"] = TimeLog(log_id="TLG-0001", task_id="TSK-0001", user_id=BO, hours=3.0, date="2026-04-20")
    s.time_logs["TLG-0002"] = TimeLog(log_id="TLG-0002", task_id="TSK-0002", user_id=ADA, hours=10.0, date="2026-05-08")
    s.milestones["MLS-0001"] = Milestone(milestone_id="MLS-0001", project_id="PRJ-0001", name="Sprint 1", kind="sprint",
                                         start_date="2026-05-04", due_date="2026-05-17")
    s.milestones["MLS-0002"] = Milestone(milestone_id="MLS-0002", project_id="PRJ-0001", name="Beta", kind="milestone",
                                         due_date="2026-06-30")
    s.milestones["MLS-0003"] = Milestone(milestone_id="MLS-0003", project_id="PRJ-0002", name="Launch",
                                         kind="milestone", due_date="2026-09-01")
    return s


hub = hub_fixture(SERVER, tiny)


def tids(result: dict) -> list[str]:
    return [t["task_id"] for t in result["tasks"]]


def test_projects_and_members(hub: Hub) -> None:
    res = ok(hub, "list_task_projects")
    assert res["total"] == 4 and [p["your_role"] for p in res["projects"]] == ["owner", "viewer", "owner", None]
    assert res["projects"][0]["open_tasks"] == 3 and res["projects"][1]["owner_name"] == "Bo Silva"
    assert [p["project_id"] for p in ok(hub, "list_task_projects", status="archived")["projects"]] == ["PRJ-0003"]
    assert [p["project_id"] for p in ok(hub, "list_task_projects", member_id=ED)["projects"]] == ["PRJ-0004"]
    assert ok(hub, "list_task_projects", workspace_id="WSP-0001", query="bill")["projects"][0]["project_id"] == "PRJ-0002"
    page = ok(hub, "list_task_projects", limit=3)
    assert page["next_offset"] == 3 and ok(hub, "list_task_projects", offset=3)["next_offset"] is None
    fails(hub, "list_task_projects", "workspace 'WSP-9' not found", "WSP-0001", workspace_id="WSP-9")
    fails(hub, "list_task_projects", "status", "'archived'", status="deleted")
    p = ok(hub, "get_task_project", project_id="PRJ-0001")
    assert p["task_counts"] == {"todo": 2, "in_progress": 1, "blocked": 0, "done": 2}
    assert p["workspace_name"] == "Product" and len(p["milestones"]) == 2 and p["your_role"] == "owner"
    fails(hub, "get_task_project", "project 'PRJ-9' not found", "PRJ-0001", project_id="PRJ-9")
    members = ok(hub, "list_project_members", project_id="PRJ-0001")["members"]
    assert [(m["user_id"], m["role"]) for m in members] == [(ADA, "owner"), (BO, "editor"), (CY, "viewer")]
    fails(hub, "list_project_members", "project 'PRJ-7' not found", project_id="PRJ-7")


def test_list_and_get_tasks(hub: Hub) -> None:
    assert tids(ok(hub, "list_tasks", project_id="PRJ-0001")) == ["TSK-0001", "TSK-0003", "TSK-0002", "TSK-0005", "TSK-0004"]
    assert tids(ok(hub, "list_tasks", assignee_id=ADA)) == ["TSK-0002", "TSK-0004", "TSK-0007"]
    assert tids(ok(hub, "list_tasks", project_id="PRJ-0001", status="done")) == ["TSK-0001", "TSK-0005"]
    assert tids(ok(hub, "list_tasks", priority="high")) == ["TSK-0003"]
    assert tids(ok(hub, "list_tasks", label="FRONTEND")) == ["TSK-0002"]
    assert tids(ok(hub, "list_tasks", due_before="2026-05-10")) == ["TSK-0001", "TSK-0003"]
    assert tids(ok(hub, "list_tasks", milestone_id="MLS-0001")) == ["TSK-0002"]
    done, overdue = ok(hub, "list_tasks", project_id="PRJ-0001")["tasks"][:2]
    assert overdue["overdue"] and not done["overdue"]  # both past due; only the open one is overdue
    page = ok(hub, "list_tasks", limit=5)
    assert page["total"] == 8 and page["next_offset"] == 5
    fails(hub, "list_tasks", "due_before must be a date", due_before="next week")
    fails(hub, "list_tasks", "milestone 'MLS-9' not found", "list_milestones", milestone_id="MLS-9")
    fails(hub, "list_tasks", "user 'USR-9' not found", assignee_id="USR-9")
    t = ok(hub, "get_task", task_id="TSK-0002")
    assert [(d["task_id"], d["status"]) for d in t["dependencies"]] == [("TSK-0001", "done"), ("TSK-0003", "todo")]
    assert [s["task_id"] for s in t["subtasks"]] == ["TSK-0004"] and t["project_name"] == "App Redesign"
    assert len(t["comments"]) == 1 and t["time_logs"][0]["hours"] == 10.0 and t["assignee_name"] == "Ada Chen"
    assert [b["task_id"] for b in ok(hub, "get_task", task_id="TSK-0001")["blocking"]] == ["TSK-0002", "TSK-0005"]
    fails(hub, "get_task", "task 'TSK-99' not found", "list_tasks", task_id="TSK-99")


def test_members_and_milestones_page(hub: Hub) -> None:
    first = ok(hub, "list_project_members", project_id="PRJ-0001", limit=2)
    assert first["total"] == 3 and first["next_offset"] == 2
    second = ok(hub, "list_project_members", project_id="PRJ-0001", offset=first["next_offset"], limit=2)
    assert second["total"] == 3 and second["next_offset"] is None
    assert [m["user_id"] for m in first["members"] + second["members"]] == [ADA, BO, CY]
    stones = ok(hub, "list_milestones", project_id="PRJ-0001", limit=1)
    assert stones["total"] == 2 and stones["next_offset"] == 1 and stones["milestones"][0]["name"] == "Sprint 1"
    assert [m["name"] for m in ok(hub, "list_milestones", project_id="PRJ-0001", offset=1)["milestones"]] == ["Beta"]


def test_milestones_and_workload(hub: Hub) -> None:
    stones = ok(hub, "list_milestones", project_id="PRJ-0001")["milestones"]
    assert [(m["name"], m["tasks_total"], m["tasks_done"]) for m in stones] == [("Sprint 1", 1, 0), ("Beta", 0, 0)]
    assert [m["milestone_id"] for m in ok(hub, "list_milestones", project_id="PRJ-0001", kind="sprint")["milestones"]] == ["MLS-0001"]
    fails(hub, "list_milestones", "kind", "'sprint'", project_id="PRJ-0001", kind="epic")
    rows = {r["user_id"]: r for r in ok(hub, "get_workload_summary", project_id="PRJ-0001")["people"]}
    assert set(rows) == {ADA, BO, CY}
    assert (rows[ADA]["open_tasks"], rows[ADA]["remaining_estimate_hours"], rows[ADA]["logged_hours_last_7_days"]) == (2, 2.0, 10.0)
    assert (rows[BO]["open_tasks"], rows[BO]["overdue"]) == (1, 1)
    everyone = ok(hub, "get_workload_summary")["people"]
    assert len(everyone) == 5 and everyone[0]["user_id"] == BO  # 3 + 5 h remaining: the busiest
    me = ok(hub, "get_workload_summary", user_id=ADA)["people"]
    assert len(me) == 1 and me[0]["open_tasks"] == 2  # TSK-0007 is done (and archived)
    fails(hub, "get_workload_summary", "user 'USR-77' not found", user_id="USR-77")


def test_create_project(hub: Hub) -> None:
    p = ok(hub, "create_project", workspace_id="WSP-0002", name=" Spring  Campaign ", due_date="2026-08-01")
    assert p["project_id"] == "PRJ-0005" and p["name"] == "Spring Campaign" and p["members"] == {ADA: "owner"}
    assert p["start_date"] == "2026-05-11" and p["status"] == "active"
    assert ok(hub, "list_task_projects", workspace_id="WSP-0002")["total"] == 2
    fails(hub, "create_project", "already has a project named 'spring campaign'", "PRJ-0005",
          workspace_id="WSP-0002", name="spring campaign", due_date="2026-08-01")
    fails(hub, "create_project", "must be after today (2026-05-11)", workspace_id="WSP-0002", name="X", due_date="2026-05-01")
    fails(hub, "create_project", "not a member of workspace 'WSP-0003'", workspace_id="WSP-0003", name="X", due_date="2026-08-01")
    fails(hub, "create_project", "due_date must be a date", workspace_id="WSP-0002", name="X", due_date="soon")


def test_add_member(hub: Hub) -> None:
    res = ok(hub, "add_project_member", project_id="PRJ-0001", email="Di@acme.example", role="editor")
    assert (DI, "editor") in [(m["user_id"], m["role"]) for m in res["members"]]
    assert ok(hub, "get_task_project", project_id="PRJ-0001")["members"][DI] == "editor"
    fails(hub, "add_project_member", "Di Ito (USR-0004) is already a member", "as editor",
          project_id="PRJ-0001", email="di@acme.example")
    fails(hub, "add_project_member", "user with email 'zed@acme.example' not found", project_id="PRJ-0001",
          email="zed@acme.example")
    fails(hub, "add_project_member", "Ed Roe is not in workspace 'WSP-0001'", project_id="PRJ-0001", email="ed@acme.example")
    fails(hub, "add_project_member", "only owners can manage members", "you are viewer", project_id="PRJ-0002",
          email="di@acme.example")
    fails(hub, "add_project_member", "archived and read-only", project_id="PRJ-0003", email="di@acme.example")
    fails(hub, "add_project_member", "not a member of project 'PRJ-0004'", "Ed Roe can add you",
          project_id="PRJ-0004", email="ed@acme.example")


def test_create_task(hub: Hub) -> None:
    t = ok(hub, "create_task", project_id="PRJ-0001", title="Ship beta", assignee_id=BO, priority="urgent",
           due_date="2026-06-01", estimate_hours=6, labels=["Release", "release"], milestone_id="MLS-0002")
    assert t["task_id"] == "TSK-0009" and t["labels"] == ["release"] and t["created_at"] == "2026-05-11T09:00"
    assert "TSK-0009" in tids(ok(hub, "list_tasks", assignee_id=BO, priority="urgent"))
    sub = ok(hub, "create_task", project_id="PRJ-0001", title="Beta checklist", parent_task_id="TSK-0009")
    assert sub["parent_id"] == "TSK-0009" and sub["assignee_id"] is None
    assert [s["task_id"] for s in ok(hub, "get_task", task_id="TSK-0009")["subtasks"]] == ["TSK-0010"]
    base = {"project_id": "PRJ-0001", "title": "X"}
    fails(hub, "create_task", "user 'USR-0004' (parameter 'assignee_id') is not a member", "USR-0002 (Bo Silva, editor)",
          assignee_id=DI, **base)
    fails(hub, "create_task", "Cy Park (USR-0003) is a viewer", assignee_id=CY, **base)
    fails(hub, "create_task", "due_date 2026-08-15 is after the due date of project 'PRJ-0001' (2026-07-31)",
          due_date="2026-08-15", **base)
    fails(hub, "create_task", "due_date 2026-05-01 is in the past", due_date="2026-05-01", **base)
    fails(hub, "create_task", "parent task 'TSK-0006' is in project 'PRJ-0002'", parent_task_id="TSK-0006", **base)
    fails(hub, "create_task", "'TSK-0004' is itself a subtask", parent_task_id="TSK-0004", **base)
    fails(hub, "create_task", "parent task 'TSK-0001' is done", parent_task_id="TSK-0001", **base)
    fails(hub, "create_task", "milestone 'MLS-0003' belongs to project 'PRJ-0002'", milestone_id="MLS-0003", **base)
    fails(hub, "create_task", "you (Ada Chen) are a viewer", "viewers cannot edit", project_id="PRJ-0002", title="X")
    fails(hub, "create_task", "archived and read-only", project_id="PRJ-0003", title="X")
    fails(hub, "create_task", "estimate_hours", estimate_hours=-1, **base)


def test_status_needs_dependencies_and_subtasks_done(hub: Hub) -> None:
    fails(hub, "update_task_status", "depends on unfinished task(s): TSK-0003 'API spec' (todo)",
          task_id="TSK-0002", status="done")
    assert ok(hub, "update_task_status", task_id="TSK-0003", status="done")["completed_at"] == "2026-05-11T09:00"
    fails(hub, "update_task_status", "unfinished subtask(s): TSK-0004 'Login tests' (todo)", task_id="TSK-0002", status="done")
    ok(hub, "update_task_status", task_id="TSK-0004", status="done")
    assert ok(hub, "update_task_status", task_id="TSK-0002", status="done")["status"] == "done"
    assert ok(hub, "get_task_project", project_id="PRJ-0001")["task_counts"]["done"] == 5
    fails(hub, "update_task_status", "while its parent 'TSK-0002' is done", task_id="TSK-0004", status="todo")
    fails(hub, "update_task_status", "cannot be reopened: done task(s) depend on it", "TSK-0002 'Build login'",
          task_id="TSK-0003", status="in_progress")
    fails(hub, "update_task_status", "already done", task_id="TSK-0002", status="done")
    fails(hub, "update_task_status", "viewers cannot edit", task_id="TSK-0006", status="in_progress")
    fails(hub, "update_task_status", "archived and read-only", task_id="TSK-0007", status="todo")
    fails(hub, "update_task_status", "status", "'blocked'", task_id="TSK-0006", status="finished")
    assert ok(hub, "update_task_status", task_id="TSK-0002", status="blocked")["completed_at"] is None


def test_assign_and_due_date(hub: Hub) -> None:
    assert ok(hub, "assign_task", task_id="TSK-0003", assignee_id=ADA)["assignee_name"] == "Ada Chen"
    assert "TSK-0003" in tids(ok(hub, "list_tasks", assignee_id=ADA))
    fails(hub, "assign_task", "already assigned to Ada Chen", task_id="TSK-0003", assignee_id=ADA)
    fails(hub, "assign_task", "is not a member of project 'PRJ-0001'", "USR-0001 (Ada Chen, owner)",
          task_id="TSK-0003", assignee_id=DI)
    fails(hub, "assign_task", "is a viewer", task_id="TSK-0003", assignee_id=CY)
    fails(hub, "assign_task", "viewers cannot edit", task_id="TSK-0006", assignee_id=BO)
    assert ok(hub, "set_task_due_date", task_id="TSK-0003", due_date="2026-05-29")["due_date"] == "2026-05-29"
    assert not ok(hub, "list_tasks", priority="high")["tasks"][0]["overdue"]
    fails(hub, "set_task_due_date", "already due on 2026-05-29", task_id="TSK-0003", due_date="2026-05-29")
    fails(hub, "set_task_due_date", "is in the past (today is 2026-05-11)", task_id="TSK-0003", due_date="2026-05-10")
    fails(hub, "set_task_due_date", "after the due date of project 'PRJ-0001' (2026-07-31)", task_id="TSK-0003",
          due_date="2026-08-01")
    fails(hub, "set_task_due_date", "due_date must be a date YYYY-MM-DD between 2000 and 2100", task_id="TSK-0003",
          due_date="1999-01-01")
    fails(hub, "set_task_due_date", "archived", task_id="TSK-0007", due_date="2026-06-01")


def test_dependencies(hub: Hub) -> None:
    t = ok(hub, "add_task_dependency", task_id="TSK-0004", depends_on_task_id="TSK-0003")
    assert [d["task_id"] for d in t["dependencies"]] == ["TSK-0003"]
    assert [b["task_id"] for b in ok(hub, "get_task", task_id="TSK-0003")["blocking"]] == ["TSK-0002", "TSK-0004"]
    fails(hub, "add_task_dependency", "would create a cycle: TSK-0003 -> TSK-0002 -> TSK-0003",
          task_id="TSK-0003", depends_on_task_id="TSK-0002")
    fails(hub, "add_task_dependency", "cannot depend on itself", task_id="TSK-0003", depends_on_task_id="TSK-0003")
    fails(hub, "add_task_dependency", "must stay within one project", task_id="TSK-0003", depends_on_task_id="TSK-0006")
    fails(hub, "add_task_dependency", "already depends on 'TSK-0003'", task_id="TSK-0004", depends_on_task_id="TSK-0003")
    fails(hub, "add_task_dependency", "'TSK-0005' is done; it cannot depend on unfinished 'TSK-0003' (todo)",
          task_id="TSK-0005", depends_on_task_id="TSK-0003")
    fails(hub, "add_task_dependency", "task 'TSK-0404' not found", "depends_on_task_id", task_id="TSK-0003",
          depends_on_task_id="TSK-0404")


def test_comments(hub: Hub) -> None:
    c = ok(hub, "add_task_comment", task_id="TSK-0006", body=" Looks right to me. ")
    assert c == {"comment_id": "CMT-0002", "task_id": "TSK-0006", "author_id": ADA, "body": "Looks right to me.",
                 "created_at": "2026-05-11T09:01"}
    assert ok(hub, "get_task", task_id="TSK-0006")["comments"][0]["comment_id"] == "CMT-0002"
    fails(hub, "add_task_comment", "not a member of project 'PRJ-0004'", task_id="TSK-0008", body="hi")
    fails(hub, "add_task_comment", "archived", task_id="TSK-0007", body="hi")
    fails(hub, "add_task_comment", "body must not be empty", task_id="TSK-0002", body="   ")


def test_log_time(hub: Hub) -> None:
    t = ok(hub, "log_time_on_task", task_id="TSK-0002", hours=1.5, note="pairing")
    assert t["logged_hours"] == 11.5 and t["time_logs"][-1]["date"] == "2026-05-11"
    assert ok(hub, "get_workload_summary", user_id=ADA)["people"][0]["logged_hours_last_7_days"] == 11.5
    ok(hub, "log_time_on_task", task_id="TSK-0004", hours=2, date="2026-05-08")
    fails(hub, "log_time_on_task", "already logged 12 h on 2026-05-08", "0 h are left", task_id="TSK-0002",
          hours=0.5, date="2026-05-08")
    fails(hub, "log_time_on_task", "hours", "greater than 0", task_id="TSK-0002", hours=-2)
    fails(hub, "log_time_on_task", "hours", "less than or equal to 24", task_id="TSK-0002", hours=30)
    fails(hub, "log_time_on_task", "is in the future", task_id="TSK-0002", hours=1, date="2026-05-12")
    fails(hub, "log_time_on_task", "before project 'PRJ-0001' started (2026-03-01)", task_id="TSK-0002", hours=1,
          date="2026-02-01")
    fails(hub, "log_time_on_task", "viewers cannot edit", task_id="TSK-0006", hours=1)


def test_milestones(hub: Hub) -> None:
    m = ok(hub, "create_milestone", project_id="PRJ-0001", name="GA", due_date="2026-07-15")
    assert m["milestone_id"] == "MLS-0004" and m["kind"] == "milestone" and m["start_date"] is None
    s = ok(hub, "create_milestone", project_id="PRJ-0001", name="Sprint 2", kind="sprint", start_date="2026-05-18",
           due_date="2026-05-31")
    assert s["start_date"] == "2026-05-18"
    assert len(ok(hub, "list_milestones", project_id="PRJ-0001", kind="sprint")["milestones"]) == 2
    base = {"project_id": "PRJ-0001", "kind": "sprint"}
    fails(hub, "create_milestone", "overlaps 'Sprint 2' (2026-05-18 to 2026-05-31)", name="Sprint 3",
          start_date="2026-05-25", due_date="2026-06-07", **base)
    fails(hub, "create_milestone", "at most 28 days; this one has 31", name="Long", start_date="2026-06-01",
          due_date="2026-07-01", **base)
    fails(hub, "create_milestone", "start_date is required", name="S", due_date="2026-06-07", **base)
    fails(hub, "create_milestone", "must be before due_date", name="S", start_date="2026-06-09", due_date="2026-06-07", **base)
    fails(hub, "create_milestone", "already has a milestone named 'beta'", project_id="PRJ-0001", name="beta",
          due_date="2026-06-01")
    fails(hub, "create_milestone", "after the due date of project", project_id="PRJ-0001", name="Late", due_date="2026-12-01")
    fails(hub, "create_milestone", "only for sprints", project_id="PRJ-0001", name="M", due_date="2026-06-01",
          start_date="2026-05-20")
    fails(hub, "create_milestone", "viewers cannot edit", project_id="PRJ-0002", name="M", due_date="2026-06-01")
