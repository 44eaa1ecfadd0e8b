"""Task-management tools: projects, members, tasks, dependencies, comments, time logs, milestones."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from prove.env.helpers import find, lookup, require
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
from prove_servers.tasks.state import (
    MAX_HOURS_PER_DAY,
    MAX_SPRINT_DAYS,
    Comment,
    Milestone,
    MilestoneId,
    MilestoneKind,
    Priority,
    Project,
    ProjectId,
    ProjectStatus,
    Role,
    Task,
    TaskId,
    TaskState,
    TaskStatus,
    TimeLog,
    UserEmail,
    UserId,
    WorkspaceId,
)

DueDate = day("Due date.", listed="due_date")

_PRIORITY_RANK = {"urgent": 0, "high": 1, "medium": 2, "low": 3}


class ProjectSummary(BaseModel):
    project_id: ProjectId
    workspace_id: WorkspaceId
    name: str = Field(json_schema_extra=naming("name"))
    status: ProjectStatus
    owner_id: UserId
    owner_name: str
    due_date: str
    your_role: Role | None = Field(description="The signed-in user's role; None when not a member.")
    member_count: int
    open_tasks: int


class ProjectList(Page):
    projects: list[ProjectSummary]


class MemberInfo(BaseModel):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("name"))
    email: UserEmail
    title: str
    role: Role


class MemberList(Page):
    project_id: ProjectId
    members: list[MemberInfo]


class TaskCounts(BaseModel):
    todo: int
    in_progress: int
    blocked: int
    done: int


class ProjectDetails(Project):
    workspace_name: str
    your_role: Role | None
    task_counts: TaskCounts
    milestones: list[Milestone]


class TaskSummary(BaseModel):
    task_id: TaskId
    project_id: ProjectId
    title: str = Field(json_schema_extra=naming("title"))
    assignee_id: UserId | None
    status: TaskStatus
    priority: Priority
    due_date: str | None
    estimate_hours: float
    parent_id: TaskId | None
    labels: list[str]
    overdue: bool


class TaskList(Page):
    tasks: list[TaskSummary]


class TaskRef(BaseModel):
    task_id: TaskId
    title: str = Field(json_schema_extra=naming("title"))
    status: TaskStatus


class TaskDetails(Task):
    project_name: str
    assignee_name: str | None
    subtasks: list[TaskRef]
    dependencies: list[TaskRef] = Field(description="Tasks this one waits for.")
    blocking: list[TaskRef] = Field(description="Tasks that wait for this one.")
    comments: list[Comment]
    time_logs: list[TimeLog]


class MilestoneInfo(Milestone):
    tasks_total: int
    tasks_done: int


class MilestoneList(Page):
    project_id: ProjectId
    milestones: list[MilestoneInfo]


class UserWorkload(BaseModel):
    user_id: UserId
    name: str = Field(json_schema_extra=naming("name"))
    open_tasks: int
    in_progress: int
    blocked: int
    overdue: int
    remaining_estimate_hours: float
    logged_hours_last_7_days: float
    weekly_capacity_hours: float


class WorkloadSummary(BaseModel):
    as_of: str
    people: list[UserWorkload] = Field(description="Busiest first (most remaining estimated hours).")


# -- helpers -------------------------------------------------------------------------------


def _today(state: TaskState) -> str:
    return state.now[:10]


def _project(state: TaskState, project_id: str, param: str = "project_id") -> Project:
    return find(state.projects, project_id)


def _task(state: TaskState, task_id: str, param: str = "task_id") -> Task:
    return find(state.tasks, task_id, hint="use list_tasks to find task ids")


def _members(state: TaskState, project: Project) -> str:
    return ", ".join(f"{u} ({state.users[u].name}, {r})" for u, r in project.members.items())


def _check_can(state: TaskState, project: Project, need: Literal["member", "editor", "owner"]) -> None:
    """The signed-in user may change `project`: not archived, and holds the role `need` asks for."""
    pid = project.project_id
    require(project.status != "archived", f"project '{pid}' ({project.name}) is archived and read-only",
            reason='state', rejected=(pid,))
    me = state.users[state.current_user_id]
    role = project.members.get(me.user_id)
    require(role is not None, f"you ({me.name}, {me.user_id}) are not a member of project '{pid}' "
            f"({project.name}); its owner {state.users[project.owner_id].name} can add you",
            rejected=(me.user_id, pid, state.users[project.owner_id].name))
    if need == "editor":
        require(role != "viewer", f"you ({me.name}) are a viewer on project '{pid}' and viewers cannot edit; "
                f"ask the owner {state.users[project.owner_id].name} for the editor role",
                params=('role',), rejected=(pid, state.users[project.owner_id].name))
    if need == "owner":
        require(role == "owner", f"only owners can manage members of project '{pid}'; you are {role}",
                reason='state', rejected=(pid, role))


def _check_due(state: TaskState, project: Project, value: str, param: str = "due_date") -> str:
    day = parse_day(value, param).isoformat()
    require(day >= _today(state), f"{param} {day} is in the past (today is {_today(state)})",
            reason='past', params=(param,), rejected=(day,))
    require(day <= project.due_date, f"{param} {day} is after the due date of project "
            f"'{project.project_id}' ({project.due_date})",
            params=('date', param), rejected=(day, project.project_id))
    return day


def _assignable(state: TaskState, project: Project, user_id: str, param: str = "assignee_id") -> None:
    role = project.members.get(user_id)
    require(role is not None, f"user '{user_id}' (parameter '{param}') is not a member of project "
            f"'{project.project_id}'; members: {_members(state, project)}",
            params=(param,), rejected=(user_id, project.project_id), choices=tuple(project.members))
    require(role != "viewer", f"{state.users[user_id].name} ({user_id}) is a viewer on project "
            f"'{project.project_id}'; assign an owner or editor: {_members(state, project)}",
            reason='state', params=(param,), rejected=(user_id, project.project_id), choices=tuple(u for u, r in project.members.items() if r != 'viewer'))


def _ref(t: Task) -> TaskRef:
    return TaskRef(task_id=t.task_id, title=t.title, status=t.status)


def _summary(state: TaskState, t: Task) -> TaskSummary:
    overdue = t.status != "done" and t.due_date is not None and t.due_date < _today(state)
    return TaskSummary(task_id=t.task_id, project_id=t.project_id, title=t.title, assignee_id=t.assignee_id,
                       status=t.status, priority=t.priority, due_date=t.due_date, estimate_hours=t.estimate_hours,
                       parent_id=t.parent_id, labels=t.labels, overdue=overdue)


def _details(state: TaskState, t: Task) -> TaskDetails:
    tasks = state.tasks.values()
    return TaskDetails(
        **t.model_dump(), project_name=state.projects[t.project_id].name,
        assignee_name=state.users[t.assignee_id].name if t.assignee_id else None,
        subtasks=[_ref(s) for s in tasks if s.parent_id == t.task_id],
        dependencies=[_ref(state.tasks[d]) for d in t.depends_on],
        blocking=[_ref(s) for s in tasks if t.task_id in s.depends_on],
        comments=[c for c in state.comments.values() if c.task_id == t.task_id],
        time_logs=[g for g in state.time_logs.values() if g.task_id == t.task_id],
    )


def _project_details(state: TaskState, p: Project) -> ProjectDetails:
    counts = {s: 0 for s in ("todo", "in_progress", "blocked", "done")}
    for t in state.tasks.values():
        if t.project_id == p.project_id:
            counts[t.status] += 1
    return ProjectDetails(
        **p.model_dump(), workspace_name=state.workspaces[p.workspace_id].name,
        your_role=p.members.get(state.current_user_id), task_counts=TaskCounts(**counts),
        milestones=[m for m in state.milestones.values() if m.project_id == p.project_id],
    )


def _dependency_path(state: TaskState, start: str, goal: str) -> list[str] | None:
    """A chain start -> ... -> goal following depends_on edges, or None."""
    stack, seen = [[start]], {start}
    while stack:
        path = stack.pop()
        if path[-1] == goal:
            return path
        for nxt in state.tasks[path[-1]].depends_on:
            if nxt not in seen:
                seen.add(nxt)
                stack.append([*path, nxt])
    return None


# -- reads ---------------------------------------------------------------------------------


@tool(sensitive=("workspace_id", "member_id"))
def list_task_projects(
    state: TaskState,
    workspace_id: Annotated[WorkspaceId | None, Field(description="Only projects of this workspace, e.g. 'WSP-0001'.", json_schema_extra={EXAMPLE: "WSP-0001"})] = None,
    status: Annotated[ProjectStatus | None, Field(description="Only projects in this status.")] = None,
    member_id: Annotated[UserId | None, Field(description="Only projects this user is a member of.")] = None,
    query: text("query", "Case-insensitive part of the project name.", max_length=100, listed="name") = "",
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ProjectList:
    """List projects with their status, owner, due date, your role and open task count."""
    if workspace_id is not None:
        find(state.workspaces, workspace_id)
    if member_id is not None:
        find(state.users, member_id, hint="use list_project_members to find user ids")
    q = query.strip().lower()
    found = [
        ProjectSummary(
            project_id=p.project_id, workspace_id=p.workspace_id, name=p.name, status=p.status, owner_id=p.owner_id,
            owner_name=state.users[p.owner_id].name, due_date=p.due_date,
            your_role=p.members.get(state.current_user_id), member_count=len(p.members),
            open_tasks=sum(1 for t in state.tasks.values() if t.project_id == p.project_id and t.status != "done"),
        )
        for p in state.projects.values()
        if (workspace_id is None or p.workspace_id == workspace_id) and (status is None or p.status == status)
        and (member_id is None or member_id in p.members) and q in p.name.lower()
    ]
    return ProjectList.of(found, offset, limit)


@tool(sensitive=("project_id",))
def get_task_project(state: TaskState, project_id: ProjectId) -> ProjectDetails:
    """Get a project's details: status, dates, members' roles, task counts by status and milestones."""
    return _project_details(state, _project(state, project_id))


@tool(sensitive=("project_id",))
def list_project_members(state: TaskState, project_id: ProjectId, offset: Offset = 0,
                         limit: Limit = DEFAULT_LIMIT) -> MemberList:
    """List a project's members with their user ids, emails and roles (owner, editor, viewer), a page at a time."""
    p = _project(state, project_id)
    rows = [MemberInfo(user_id=u, name=state.users[u].name, email=state.users[u].email, title=state.users[u].title,
                       role=r) for u, r in p.members.items()]
    return MemberList.of(rows, offset, limit, project_id=project_id)


@tool(sensitive=("project_id", "assignee_id", "milestone_id"))
def list_tasks(
    state: TaskState,
    project_id: Annotated[ProjectId | None, Field(description="Only tasks of this project.")] = None,
    assignee_id: Annotated[UserId | None, Field(description="Only tasks assigned to this user id.")] = None,
    status: Annotated[TaskStatus | None, Field(description="Only tasks in this status.")] = None,
    priority: Annotated[Priority | None, Field(description="Only tasks of this priority.")] = None,
    label: text("query", "Only tasks carrying this label, e.g. 'bug'.", example="bug", optional=True, listed="labels") = None,
    due_before: Annotated[day("Only tasks due on or before this date.") | None,
                          Field(description="Only tasks due on or before this date.")] = None,
    milestone_id: Annotated[MilestoneId | None, Field(description="Only tasks in this milestone or sprint.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> TaskList:
    """List tasks filtered by project, assignee, status, priority, label, due date or milestone, soonest due first."""
    if project_id is not None:
        _project(state, project_id)
    if assignee_id is not None:
        find(state.users, assignee_id, hint="use list_project_members to find user ids")
    if milestone_id is not None:
        find(state.milestones, milestone_id, hint="use list_milestones")
    before = parse_day(due_before, "due_before").isoformat() if due_before is not None else None
    found = [
        t for t in state.tasks.values()
        if (project_id is None or t.project_id == project_id) and (assignee_id is None or t.assignee_id == assignee_id)
        and (status is None or t.status == status) and (priority is None or t.priority == priority)
        and (label is None or label.strip().lower() in t.labels) and (milestone_id is None or t.milestone_id == milestone_id)
        and (before is None or (t.due_date is not None and t.due_date <= before))
    ]
    found.sort(key=lambda t: (t.due_date or "9999", _PRIORITY_RANK[t.priority], t.task_id))
    return TaskList.of(found, offset, limit, view=lambda t: _summary(state, t))


@tool(sensitive=("task_id",))
def get_task(state: TaskState, task_id: TaskId) -> TaskDetails:
    """Get a task in full: subtasks, dependencies and what it blocks, comments and logged time."""
    return _details(state, _task(state, task_id))


@tool(sensitive=("project_id",))
def list_milestones(
    state: TaskState,
    project_id: ProjectId,
    kind: Annotated[MilestoneKind | None, Field(description="Only milestones or only sprints.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> MilestoneList:
    """List a project's milestones and sprints with their dates and task progress, a page at a time."""
    _project(state, project_id)
    rows = []
    for m in state.milestones.values():
        if m.project_id == project_id and (kind is None or m.kind == kind):
            tasks = [t for t in state.tasks.values() if t.milestone_id == m.milestone_id]
            rows.append(MilestoneInfo(**m.model_dump(), tasks_total=len(tasks),
                                      tasks_done=sum(t.status == "done" for t in tasks)))
    rows.sort(key=lambda m: m.due_date)
    return MilestoneList.of(rows, offset, limit, project_id=project_id)


@tool(sensitive=("project_id", "user_id"))
def get_workload_summary(
    state: TaskState,
    project_id: Annotated[ProjectId | None, Field(description="Only this project's tasks and members.")] = None,
    user_id: Annotated[UserId | None, Field(description="Only this user.")] = None,
) -> WorkloadSummary:
    """Summarise each person's open tasks, overdue tasks, remaining estimate and recently logged hours."""
    project = _project(state, project_id) if project_id is not None else None
    if user_id is not None:
        find(state.users, user_id, hint="use list_project_members to find user ids")
    people = [user_id] if user_id is not None else list(project.members) if project else list(state.users)
    today = _today(state)
    week_ago = date.fromisoformat(today).toordinal() - 7
    rows = []
    for uid in people:
        mine = [t for t in state.tasks.values() if t.assignee_id == uid and t.status != "done"
                and state.projects[t.project_id].status != "archived" and (project_id is None or t.project_id == project_id)]
        logged = sum(g.hours for g in state.time_logs.values() if g.user_id == uid
                     and date.fromisoformat(g.date).toordinal() > week_ago
                     and (project_id is None or state.tasks[g.task_id].project_id == project_id))
        rows.append(UserWorkload(
            user_id=uid, name=state.users[uid].name, open_tasks=len(mine),
            in_progress=sum(t.status == "in_progress" for t in mine), blocked=sum(t.status == "blocked" for t in mine),
            overdue=sum(t.due_date is not None and t.due_date < today for t in mine),
            remaining_estimate_hours=round(sum(max(t.estimate_hours - t.logged_hours, 0.0) for t in mine), 2),
            logged_hours_last_7_days=round(logged, 2), weekly_capacity_hours=state.users[uid].weekly_capacity_hours,
        ))
    rows.sort(key=lambda r: (-r.remaining_estimate_hours, r.user_id))
    return WorkloadSummary(as_of=today, people=rows)


# -- writes --------------------------------------------------------------------------------


@tool(write=True, sensitive=("workspace_id",))
def create_project(
    state: TaskState,
    workspace_id: entity_id("workspace", "Workspace to create it in, e.g. 'WSP-0001'.", example="WSP-0001"),
    name: text("title", "Project name, unique in the workspace.", listed="name", min_length=1, max_length=80),
    due_date: DueDate,
    description: text("body", "What the project is about.", listed="description", max_length=1000) = "",
) -> ProjectDetails:
    """Create a project in a workspace; you become its owner and it starts active today."""
    ws = find(state.workspaces, workspace_id)
    require(state.current_user_id in ws.member_ids, f"you are not a member of workspace '{workspace_id}'",
            rejected=(workspace_id,))
    clean = " ".join(name.split())
    require(bool(clean), "name must not be empty", params=('name',))
    clash = next((p for p in state.projects.values()
                  if p.workspace_id == workspace_id and p.name.lower() == clean.lower()), None)
    require(clash is None, f"workspace '{workspace_id}' already has a project named '{clean}' "
            f"('{clash.project_id if clash else ''}')",
            reason='conflict', rejected=(workspace_id, clean, clash.project_id if clash else ''))
    due = parse_day(due_date, "due_date").isoformat()
    require(due > _today(state), f"due_date {due} must be after today ({_today(state)})",
            reason='past', params=('due_date',), rejected=(due,))
    p = Project(project_id=state.new_id("PRJ"), workspace_id=workspace_id, name=clean, description=description.strip(),
                owner_id=state.current_user_id, status="active", start_date=_today(state), due_date=due,
                members={state.current_user_id: "owner"})
    state.projects[p.project_id] = p
    return _project_details(state, p)


@tool(write=True, sensitive=("project_id", "email"))
def add_project_member(
    state: TaskState,
    project_id: ProjectId,
    email: entity_id("user_email", "Work email of the person to add, e.g. 'mei.ito@acme.example'.", example="mei.ito@acme.example"),
    role: Annotated[Role, Field(description="Their role: owner, editor (can edit) or viewer (read and comment).")] = "editor",
) -> MemberList:
    """Add a workspace user to a project with a role (project owners only)."""
    p = _project(state, project_id)
    _check_can(state, p, "owner")
    by_email = {u.email: u for u in state.users.values()}
    user = lookup(by_email, email.strip().lower(), "email", "user with email",
                  hint="check the address with the person (emails look like 'mei.ito@acme.example')")
    require(user.user_id in state.workspaces[p.workspace_id].member_ids,
            f"{user.name} is not in workspace '{p.workspace_id}' ({state.workspaces[p.workspace_id].name})",
            rejected=(user.name, p.workspace_id))
    require(user.user_id not in p.members,
            f"{user.name} ({user.user_id}) is already a member of project '{project_id}' as {p.members.get(user.user_id)}",
            reason='conflict', rejected=(user.name, project_id))
    p.members = dict(sorted({**p.members, user.user_id: role}.items()))
    return list_project_members(state, project_id)


@tool(write=True, sensitive=("project_id", "assignee_id", "parent_task_id", "milestone_id"))
def create_task(
    state: TaskState,
    project_id: ProjectId,
    title: text("title", "Short task title.", listed="title", min_length=1, max_length=120),
    description: text("body", "Details and acceptance criteria.", listed="description", max_length=2000) = "",
    assignee_id: Annotated[UserId | None, Field(description="Project member (owner or editor) to assign.")] = None,
    priority: Annotated[Priority, Field(description="Task priority.")] = "medium",
    due_date: Annotated[day("Due date, not after the project's due date.", listed="due_date") | None,
                        Field(description="Due date, not after the project's due date.")] = None,
    estimate_hours: Annotated[float, Field(ge=0, le=500, description="Estimated effort in hours.")] = 0.0,
    labels: text("word", "Labels, e.g. ['bug', 'frontend'].", many=True, max_length=5) = [],  # noqa: B006
    parent_task_id: Annotated[TaskId | None, Field(description="Make it a subtask of this task (same project).")] = None,
    milestone_id: Annotated[MilestoneId | None, Field(description="Milestone or sprint of the same project.")] = None,
) -> TaskDetails:
    """Create a task (or a subtask) in a project you can edit."""
    p = _project(state, project_id)
    _check_can(state, p, "editor")
    require(bool(title.strip()), "title must not be empty", params=('title',))
    if assignee_id is not None:
        _assignable(state, p, assignee_id)
    due = _check_due(state, p, due_date) if due_date is not None else None
    if parent_task_id is not None:
        parent = _task(state, parent_task_id, "parent_task_id")
        require(parent.project_id == project_id, f"parent task '{parent_task_id}' is in project '{parent.project_id}', "
                f"not '{project_id}'", rejected=(parent_task_id, parent.project_id, project_id))
        require(parent.parent_id is None, f"'{parent_task_id}' is itself a subtask; subtasks cannot be nested",
                rejected=(parent_task_id,))
        require(parent.status != "done", f"parent task '{parent_task_id}' is done; reopen it before adding subtasks",
                rejected=(parent_task_id,))
    if milestone_id is not None:
        stone = find(state.milestones, milestone_id, hint=f"use list_milestones for project '{project_id}'")
        require(stone.project_id == project_id, f"milestone '{milestone_id}' belongs to project '{stone.project_id}'",
                rejected=(milestone_id, stone.project_id))
    task = Task(task_id=state.new_id("TSK"), project_id=project_id, title=" ".join(title.split()),
                description=description.strip(), assignee_id=assignee_id, priority=priority, due_date=due,
                estimate_hours=round(estimate_hours, 2), parent_id=parent_task_id, milestone_id=milestone_id,
                labels=sorted({x.strip().lower() for x in labels if x.strip()}), created_at=state.now)
    state.tasks[task.task_id] = task
    return _details(state, task)


@tool(write=True, sensitive=("task_id",))
def update_task_status(
    state: TaskState,
    task_id: TaskId,
    status: Annotated[TaskStatus, Field(description="New status.")],
) -> TaskDetails:
    """Move a task to todo, in_progress, blocked or done; done needs its dependencies and subtasks done."""
    t = _task(state, task_id)
    _check_can(state, state.projects[t.project_id], "editor")
    require(t.status != status, f"task '{task_id}' is already {status}",
            reason='conflict', rejected=(task_id, status))
    if status == "done":
        waiting = [state.tasks[d] for d in t.depends_on if state.tasks[d].status != "done"]
        require(not waiting, f"task '{task_id}' cannot be done while it depends on unfinished task(s): "
                + ", ".join(f"{d.task_id} '{d.title}' ({d.status})" for d in waiting),
                rejected=(task_id,),
                choices=tuple(f"{d.task_id} '{d.title}' ({d.status})" for d in waiting))
        open_subs = [s for s in state.tasks.values() if s.parent_id == task_id and s.status != "done"]
        require(not open_subs, f"task '{task_id}' has unfinished subtask(s): "
                + ", ".join(f"{s.task_id} '{s.title}' ({s.status})" for s in open_subs),
                rejected=(task_id,),
                choices=tuple(f"{s.task_id} '{s.title}' ({s.status})" for s in open_subs))
    elif t.status == "done":
        after = [s for s in state.tasks.values() if task_id in s.depends_on and s.status == "done"]
        require(not after, f"task '{task_id}' cannot be reopened: done task(s) depend on it: "
                + ", ".join(f"{s.task_id} '{s.title}'" for s in after),
                rejected=(task_id,), choices=tuple(f"{s.task_id} '{s.title}'" for s in after))
        parent = state.tasks.get(t.parent_id or "")
        require(parent is None or parent.status != "done",
                f"subtask '{task_id}' cannot be reopened while its parent '{t.parent_id}' is done",
                rejected=(task_id, t.parent_id))
    t.status = status
    t.completed_at = state.now if status == "done" else None
    return _details(state, t)


@tool(write=True, sensitive=("task_id", "assignee_id"))
def assign_task(state: TaskState, task_id: TaskId, assignee_id: UserId) -> TaskDetails:
    """Assign (or reassign) a task to a project member who is an owner or editor."""
    t = _task(state, task_id)
    p = state.projects[t.project_id]
    _check_can(state, p, "editor")
    _assignable(state, p, assignee_id)
    require(t.assignee_id != assignee_id, f"task '{task_id}' is already assigned to {state.users[assignee_id].name}",
            reason='conflict', rejected=(task_id, state.users[assignee_id].name))
    t.assignee_id = assignee_id
    return _details(state, t)


@tool(write=True, sensitive=("task_id",))
def set_task_due_date(state: TaskState, task_id: TaskId, due_date: DueDate) -> TaskDetails:
    """Set or move a task's due date; it must not be in the past or after the project's due date."""
    t = _task(state, task_id)
    p = state.projects[t.project_id]
    _check_can(state, p, "editor")
    due = _check_due(state, p, due_date)
    require(t.due_date != due, f"task '{task_id}' is already due on {due}",
            reason='conflict', rejected=(task_id, due))
    t.due_date = due
    return _details(state, t)


@tool(write=True, sensitive=("task_id", "depends_on_task_id"))
def add_task_dependency(
    state: TaskState,
    task_id: entity_id("task", "The task that has to wait, e.g. 'TSK-0042'.", example="TSK-0042"),
    depends_on_task_id: entity_id("task", "The task that must be done first (same project)."),
) -> TaskDetails:
    """Record that a task cannot be finished before another task of the same project is done."""
    t = _task(state, task_id)
    first = _task(state, depends_on_task_id, "depends_on_task_id")
    _check_can(state, state.projects[t.project_id], "editor")
    require(task_id != depends_on_task_id, "a task cannot depend on itself")
    require(first.project_id == t.project_id, f"'{depends_on_task_id}' is in project '{first.project_id}', "
            f"'{task_id}' in '{t.project_id}'; dependencies must stay within one project",
            rejected=(depends_on_task_id, first.project_id, task_id, t.project_id))
    require(depends_on_task_id not in t.depends_on, f"'{task_id}' already depends on '{depends_on_task_id}'",
            reason='conflict', rejected=(task_id, depends_on_task_id))
    cycle = _dependency_path(state, depends_on_task_id, task_id)
    require(cycle is None, "this dependency would create a cycle: " + " -> ".join([task_id, *(cycle or [])]))
    require(t.status != "done" or first.status == "done",
            f"task '{task_id}' is done; it cannot depend on unfinished '{depends_on_task_id}' ({first.status})",
            rejected=(task_id, depends_on_task_id))
    t.depends_on = sorted([*t.depends_on, depends_on_task_id])
    return _details(state, t)


@tool(write=True, sensitive=("task_id",))
def add_task_comment(
    state: TaskState,
    task_id: TaskId,
    body: text("body", "Comment text.", listed="body", min_length=1, max_length=2000),
) -> Comment:
    """Comment on a task as the signed-in user (any project member, viewers included)."""
    t = _task(state, task_id)
    _check_can(state, state.projects[t.project_id], "member")
    require(bool(body.strip()), "body must not be empty", params=('body',))
    state.advance()
    c = Comment(comment_id=state.new_id("CMT"), task_id=task_id, author_id=state.current_user_id,
                body=body.strip(), created_at=state.now)
    state.comments[c.comment_id] = c
    return c


@tool(write=True, sensitive=("task_id", "hours"))
def log_time_on_task(
    state: TaskState,
    task_id: TaskId,
    hours: Annotated[float, Field(gt=0, le=24, description="Hours worked, e.g. 1.5.")],
    date: Annotated[day("Day worked; default today.", listed="date") | None, Field(description="Day worked; default today.")] = None,
    note: text("body", "What was done.", listed="note", max_length=200) = "",
) -> TaskDetails:
    """Log time you worked on a task; a person may log at most 12 hours per day across all tasks."""
    t = _task(state, task_id)
    p = state.projects[t.project_id]
    _check_can(state, p, "editor")
    day = parse_day(date, "date").isoformat() if date is not None else _today(state)
    require(day <= _today(state), f"date {day} is in the future (today is {_today(state)})",
            reason='future', params=('date',), rejected=(day,))
    require(day >= p.start_date, f"date {day} is before project '{p.project_id}' started ({p.start_date})",
            params=('date',), rejected=(day, p.project_id))
    used = sum(g.hours for g in state.time_logs.values() if g.user_id == state.current_user_id and g.date == day)
    require(used + hours <= MAX_HOURS_PER_DAY + 1e-9,
            f"you already logged {used:g} h on {day}; at most {MAX_HOURS_PER_DAY:g} h per day, so {max(MAX_HOURS_PER_DAY - used, 0):g} h are left",
            reason='conflict', rejected=(used, day, MAX_HOURS_PER_DAY))
    g = TimeLog(log_id=state.new_id("TLG"), task_id=task_id, user_id=state.current_user_id, hours=round(hours, 2),
                date=day, note=note.strip())
    state.time_logs[g.log_id] = g
    t.logged_hours = round(t.logged_hours + g.hours, 2)
    return _details(state, t)


@tool(write=True, sensitive=("project_id",))
def create_milestone(
    state: TaskState,
    project_id: ProjectId,
    name: text("title", "Name, e.g. 'Beta release' or 'Sprint 12'.", listed="name", example="Beta release", min_length=1, max_length=80),
    due_date: day("Due date (sprints: last day).", listed="due_date"),
    kind: Annotated[MilestoneKind, Field(description="A one-day milestone or a sprint with a start date.")] = "milestone",
    start_date: Annotated[day("Sprints only: first day.", listed="start_date") | None, Field(description="Sprints only: first day.")] = None,
) -> MilestoneInfo:
    """Create a milestone or a sprint in a project you can edit; sprints of a project may not overlap."""
    p = _project(state, project_id)
    _check_can(state, p, "editor")
    clean = " ".join(name.split())
    others = [m for m in state.milestones.values() if m.project_id == project_id]
    require(clean.lower() not in (m.name.lower() for m in others),
            f"project '{project_id}' already has a milestone named '{clean}'",
            reason='conflict', rejected=(project_id, clean))
    due = _check_due(state, p, due_date)
    start = None
    if kind == "sprint":
        require(start_date is not None, "start_date is required for a sprint",
                reason='missing', params=('start_date',))
        start = parse_day(start_date or "", "start_date").isoformat()
        require(start < due, f"start_date {start} must be before due_date {due}",
                params=('due_date', 'start_date'), rejected=(start, due))
        days = date.fromisoformat(due).toordinal() - date.fromisoformat(start).toordinal() + 1
        require(days <= MAX_SPRINT_DAYS, f"a sprint lasts at most {MAX_SPRINT_DAYS} days; this one has {days}",
                reason='limit', rejected=(MAX_SPRINT_DAYS, days))
        clash = next((m for m in others if m.kind == "sprint" and m.start_date and m.start_date <= due
                      and start <= m.due_date), None)
        require(clash is None, f"sprint overlaps '{clash.name if clash else ''}' ({clash.start_date if clash else ''} "
                f"to {clash.due_date if clash else ''}) in project '{project_id}'",
                reason='conflict', rejected=(clash.name if clash else '', project_id))
    else:
        require(start_date is None, "start_date is only for sprints; leave it out for a milestone",
                reason='state', params=('start_date',))
    m = Milestone(milestone_id=state.new_id("MLS"), project_id=project_id, name=clean, kind=kind,
                  start_date=start, due_date=due)
    state.milestones[m.milestone_id] = m
    return MilestoneInfo(**m.model_dump(), tasks_total=0, tasks_done=0)
