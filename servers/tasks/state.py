"""Task-management server state: workspaces, projects with member roles, tasks, comments, time logs, milestones."""

from __future__ import annotations

import random
from datetime import date, timedelta
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, naming
from prove.env.world import COMPANIES, FIRST_NAMES, LAST_NAMES, days_before, slug

ProjectStatus = Literal["active", "on_hold", "completed", "archived"]
Role = Literal["owner", "editor", "viewer"]
TaskStatus = Literal["todo", "in_progress", "blocked", "done"]
Priority = Literal["low", "medium", "high", "urgent"]
MilestoneKind = Literal["milestone", "sprint"]

MAX_HOURS_PER_DAY = 12.0
"""Most hours one person may log across all tasks on one day."""
MAX_SPRINT_DAYS = 28
"""Longest sprint."""

UserId = entity_id("user", "User id, e.g. 'USR-0007' (see list_project_members).", example="USR-0007")
UserEmail = entity_id("user_email", "Work email of a user, e.g. 'mei.ito@acme.example'.", example="mei.ito@acme.example")
WorkspaceId = entity_id("workspace", "Workspace id, e.g. 'WSP-0001'.", example="WSP-0001")
ProjectId = entity_id("project", "Project id, e.g. 'PRJ-0003' (see list_task_projects).", example="PRJ-0003")
TaskId = entity_id("task", "Task id, e.g. 'TSK-0042'.", example="TSK-0042")
CommentId = entity_id("comment", "Task comment id, e.g. 'CMT-0010'.", example="CMT-0010")
TimeLogId = entity_id("time_log", "Time log id, e.g. 'TLG-0005'.", example="TLG-0005")
MilestoneId = entity_id("milestone", "Milestone or sprint id, e.g. 'MLS-0002'.", example="MLS-0002")


class User(Record):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("alone"))
    email: UserEmail
    title: str
    weekly_capacity_hours: float


class Workspace(Record):
    workspace_id: WorkspaceId
    name: str = Field(json_schema_extra=naming("name"))
    member_ids: list[UserId] = Field(description="Sorted ids of the users in the workspace.")


class Project(Record):
    project_id: ProjectId
    workspace_id: WorkspaceId
    name: str = Field(json_schema_extra=naming("name"))
    description: str
    owner_id: UserId
    status: ProjectStatus
    start_date: str
    due_date: str
    members: dict[str, Role] = Field(description="Role of each member, by user id.")


class Task(Record):
    task_id: TaskId
    project_id: ProjectId
    title: str = Field(json_schema_extra=naming("title"))
    description: str = ""
    assignee_id: UserId | None = None
    status: TaskStatus = "todo"
    priority: Priority = "medium"
    due_date: str | None = None
    estimate_hours: float = 0.0
    parent_id: TaskId | None = Field(None, description="Parent task id when this is a subtask.")
    depends_on: list[TaskId] = Field(default_factory=list, description="Sorted ids of tasks that must be done first.")
    labels: list[str] = Field(default_factory=list, description="Sorted labels.")
    milestone_id: MilestoneId | None = None
    created_at: str
    completed_at: str | None = None
    logged_hours: float = 0.0


class Comment(Record):
    comment_id: CommentId
    task_id: TaskId
    author_id: UserId
    body: str
    created_at: str


class TimeLog(Record):
    log_id: TimeLogId
    task_id: TaskId
    user_id: UserId
    hours: float
    date: str
    note: str = ""


class Milestone(Record):
    milestone_id: MilestoneId
    project_id: ProjectId
    name: str = Field(json_schema_extra=naming("name"))
    kind: MilestoneKind
    start_date: str | None = Field(None, description="Sprints only: first day.")
    due_date: str


class TaskState(ServerState):
    current_user_id: UserId = Field(description="The signed-in user; permissions are checked against this user.")
    users: dict[str, User] = Field(default_factory=dict)
    workspaces: dict[str, Workspace] = Field(default_factory=dict)
    projects: dict[str, Project] = Field(default_factory=dict)
    tasks: dict[str, Task] = Field(default_factory=dict)
    comments: dict[str, Comment] = Field(default_factory=dict)
    time_logs: dict[str, TimeLog] = Field(default_factory=dict)
    milestones: dict[str, Milestone] = Field(default_factory=dict)


_TITLES = ("Engineer", "Designer", "Product Manager", "QA Analyst", "Marketing Lead", "Data Analyst",
           "Copywriter", "Engineering Manager", "DevOps Engineer", "Content Strategist")
_PROJECTS = {
    "Product & Engineering": ("Mobile App Redesign", "Billing Migration", "Customer Portal", "API v2",
                              "Security Audit", "Data Warehouse", "Search Relevance"),
    "Marketing": ("Q3 Launch Campaign", "SEO Refresh", "Partner Webinar Series", "Brand Guidelines",
                  "Customer Stories"),
}
_VERBS = ("Draft", "Review", "Implement", "Test", "Design", "Document", "Migrate", "Set up", "Fix", "Plan")
_OBJECTS = ("login flow", "pricing page", "invoice export", "onboarding emails", "analytics dashboard",
            "API rate limits", "release notes", "landing page copy", "backup job", "user interviews",
            "accessibility audit", "search filters", "payment webhook", "press kit", "style guide")
_LABELS = ("frontend", "backend", "design", "docs", "bug", "research", "content", "infra")
_COMMENTS = ("Started on this today.", "Blocked until the API is ready.", "Can someone review my draft?",
             "Moved the deadline after the sync.", "Looks good to me.", "Added notes to the description.",
             "Need input from design here.", "Done on my side, please verify.")
_MILESTONES = ("Design sign-off", "Beta release", "GA launch", "Content freeze", "Stakeholder review")


def _d(day: date) -> str:
    return day.isoformat()


def initial_state(seed: int) -> TaskState:
    """Two workspaces, ~24 users, ~11 projects, ~180 tasks with deps, comments, time logs."""
    rng = random.Random(seed)
    now = "2026-05-11T09:00"
    today = date(2026, 5, 11)
    names = [f"{f} {s}" for f, s in zip(rng.sample(FIRST_NAMES, 24), rng.sample(LAST_NAMES, 24), strict=True)]
    domain = slug(rng.choice(COMPANIES).split()[0]) + ".example"
    state = TaskState(now=now, current_user_id="USR-0001")
    usr, wsp, prj, tsk = Counter("USR"), Counter("WSP"), Counter("PRJ"), Counter("TSK")
    cmt, tlg, mls = Counter("CMT"), Counter("TLG"), Counter("MLS")
    for name in names:
        uid = usr()
        state.users[uid] = User(user_id=uid, name=name, email=f"{slug(name)}@{domain}", title=rng.choice(_TITLES),
                                weekly_capacity_hours=float(rng.choice([20, 32, 40, 40, 40])))
    ids = list(state.users)
    me = ids[0]
    spaces = {"Product & Engineering": [me, *ids[1:15]], "Marketing": [me, *ids[12:]]}
    my_roles: list[Role | None] = ["owner", "owner", "editor", "editor", "editor", "editor", "viewer", "viewer", None, None]
    rng.shuffle(my_roles)
    sizes = {ws: rng.randrange(4, 6) for ws in spaces}
    statuses: list[ProjectStatus] = ["on_hold", "completed", "archived"] + ["active"] * (sum(sizes.values()) - 3)
    rng.shuffle(statuses)
    logged: dict[tuple[str, str], float] = {}
    k = 0
    for ws_name, pool in spaces.items():
        wid = wsp()
        state.workspaces[wid] = Workspace(workspace_id=wid, name=ws_name, member_ids=sorted(pool))
        for pname in rng.sample(_PROJECTS[ws_name], sizes[ws_name]):
            my_role, status = my_roles[k % len(my_roles)], statuses[k]
            k += 1
            start = today - timedelta(days=rng.randrange(40, 220))
            due = (today - timedelta(days=rng.randrange(5, 30)) if status in ("completed", "archived")
                   else today + timedelta(days=rng.randrange(30, 160)))
            others = rng.sample([u for u in pool if u != me], rng.randrange(4, 8))
            owner = me if my_role == "owner" else others[0]
            members: dict[str, Role] = {u: rng.choices(["editor", "viewer"], weights=[3, 1])[0] for u in others}
            members[owner] = "owner"
            if my_role is not None:
                members[me] = my_role
            pid = prj()
            state.projects[pid] = Project(
                project_id=pid, workspace_id=wid, name=pname, owner_id=owner, status=status, start_date=_d(start),
                due_date=_d(due), members=dict(sorted(members.items())),
                description=f"{pname} for {ws_name.lower()}: scope, plan and delivery.",
            )
            s_start = min(max(start, today - timedelta(days=rng.randrange(0, 10))), due - timedelta(days=13))
            stones = [mls()]
            state.milestones[stones[0]] = Milestone(
                milestone_id=stones[0], project_id=pid, name=f"Sprint {rng.randrange(3, 20)}", kind="sprint",
                start_date=_d(s_start), due_date=_d(s_start + timedelta(days=13)))
            for stone_name in rng.sample(_MILESTONES, rng.randrange(0, 3)):
                mid = mls()
                state.milestones[mid] = Milestone(milestone_id=mid, project_id=pid, name=stone_name, kind="milestone",
                                                  due_date=_d(start + (due - start) * rng.uniform(0.3, 1.0)))
                stones.append(mid)
            workers = [u for u, r in members.items() if r != "viewer"]
            member_ids = list(members)
            top: list[Task] = []
            for _ in range(rng.randrange(8, 13)):
                task = _task(rng, tsk(), pid, status, workers, start, due, today, stones)
                done_pool = [t.task_id for t in top if t.status == "done" or task.status != "done"]
                if done_pool and rng.random() < 0.35:
                    task.depends_on = sorted(rng.sample(done_pool, min(len(done_pool), rng.randrange(1, 3))))
                top.append(task)
                state.tasks[task.task_id] = task
                if rng.random() < 0.2:
                    for _ in range(rng.randrange(1, 4)):
                        sub = _task(rng, tsk(), pid, status, workers, start, due, today, [])
                        sub.parent_id, sub.estimate_hours = task.task_id, float(rng.choice([1, 2, 3]))
                        if task.status == "done":
                            sub.status, sub.completed_at = "done", task.completed_at
                        state.tasks[sub.task_id] = sub
            for task in [t for t in state.tasks.values() if t.project_id == pid]:
                for _ in range(rng.choices((0, 1, 2), weights=(5, 3, 1))[0]):
                    cid = cmt()
                    state.comments[cid] = Comment(comment_id=cid, task_id=task.task_id, author_id=rng.choice(member_ids),
                                                  body=rng.choice(_COMMENTS), created_at=days_before(now, rng, 30))
                if task.status in ("in_progress", "done") and task.assignee_id:
                    for _ in range(rng.randrange(1, 3)):
                        day = _d(today - timedelta(days=rng.randrange(1, 15)))
                        hours = rng.choice([0.5, 1.0, 1.5, 2.0, 3.0, 4.0])
                        if logged.get((task.assignee_id, day), 0.0) + hours > 8:
                            continue
                        logged[(task.assignee_id, day)] = logged.get((task.assignee_id, day), 0.0) + hours
                        lid = tlg()
                        state.time_logs[lid] = TimeLog(log_id=lid, task_id=task.task_id, user_id=task.assignee_id,
                                                       hours=hours, date=day, note=rng.choice(("", "", "pairing", "review")))
                        task.logged_hours = round(task.logged_hours + hours, 2)
    return state


def _task(rng: random.Random, tid: str, pid: str, project_status: ProjectStatus, workers: list[str],
          start: date, due: date, today: date, stones: list[str]) -> Task:
    closed = project_status in ("completed", "archived")
    status: TaskStatus = "done" if closed else rng.choices(
        ["todo", "in_progress", "blocked", "done"], weights=[4, 3, 1, 3])[0]
    created = start + timedelta(days=rng.randrange(0, 20))
    span = max((due - created).days, 1)
    task_due = created + timedelta(days=rng.randrange(5, span + 5))
    return Task(
        task_id=tid, project_id=pid, title=f"{rng.choice(_VERBS)} {rng.choice(_OBJECTS)}",
        description=rng.choice(("", "See the linked spec.", "Acceptance criteria in the project doc.")),
        assignee_id=rng.choice(workers) if rng.random() < 0.85 else None, status=status,
        priority=rng.choices(["low", "medium", "high", "urgent"], weights=[2, 5, 3, 1])[0],
        due_date=_d(min(task_due, due)) if rng.random() < 0.85 else None,
        estimate_hours=float(rng.choice([1, 2, 3, 5, 8, 13])),
        labels=sorted(rng.sample(_LABELS, rng.randrange(0, 3))),
        milestone_id=rng.choice(stones) if stones and rng.random() < 0.4 else None,
        created_at=f"{_d(min(created, today))}T{rng.randrange(8, 18):02d}:00",
        completed_at=f"{_d(min(task_due, today - timedelta(days=1)))}T17:00" if status == "done" else None,
    )
