"""CI/CD tools: projects, pipeline runs and logs, artifacts, environments, deployments, freezes."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, Field

from prove.env.helpers import find, known, require
from prove.env.tool import tool
from prove.env.types import (
    DEFAULT_LIMIT,
    EXAMPLE,
    Limit,
    Offset,
    Page,
    entity_id,
    moment,
    parse_moment,
    text,
)
from prove.env.world import iso
from prove_servers.cicd.state import (
    FINISHED,
    Artifact,
    ArtifactId,
    BranchName,
    CICDState,
    Commit,
    CommitSha,
    DeployFreeze,
    Deployment,
    DeploymentId,
    DeployStatus,
    Environment,
    EnvName,
    EnvVariable,
    Incident,
    JobName,
    JobResult,
    Pipeline,
    PipelineId,
    PipelineRun,
    Project,
    ProjectId,
    RunId,
    RunStatus,
    User,
    Username,
)

EnvParam = Annotated[EnvName, Field(description="Target environment: dev, staging or production.")]
Actor = entity_id("user", "Username of the person acting, e.g. 'mei-tanaka'.", example="mei-tanaka")

_UPPER_SNAKE = re.compile(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)*")
_MAX_FREEZE_DAYS = 30


class ProjectList(Page):
    projects: list[Project]


class BranchHead(BaseModel):
    branch: BranchName
    head_sha: CommitSha | None
    head_message: str | None
    last_run_id: RunId | None
    last_run_status: RunStatus | None


class ProjectInfo(BaseModel):
    project: Project
    pipelines: list[Pipeline]
    branch_heads: list[BranchHead]
    running_versions: dict[str, str | None] = Field(description="Version currently running per environment.")


class RunList(Page):
    runs: list[PipelineRun]


class RunInfo(BaseModel):
    run: PipelineRun
    pipeline_name: str
    commit: Commit
    artifact_id: ArtifactId | None = Field(description="Artifact this run built, if any.")
    artifact_version: str | None


class RunLogs(BaseModel):
    run_id: RunId
    status: RunStatus
    failing_job: JobName | None
    job: JobName | None = Field(description="Job the lines are filtered to (None: all jobs).")
    jobs: list[JobResult]
    lines: list[str]


class ArtifactInfo(BaseModel):
    artifact: Artifact
    run_status: RunStatus = Field(description="Status of the run that built it; deploy only passed ones upstream.")
    running_in: list[EnvName] = Field(description="Environments where this artifact is currently live.")


class ArtifactList(Page):
    artifacts: list[ArtifactInfo]


class EnvironmentInfo(BaseModel):
    environment: Environment
    current_version: str | None
    current_deployment_id: DeploymentId | None
    waiting_deployment_id: DeploymentId | None = Field(description="Deployment pending approval or in progress.")
    active_freeze: DeployFreeze | None
    upcoming_freezes: list[DeployFreeze]


class EnvironmentList(Page):
    project_id: ProjectId
    environments: list[EnvironmentInfo]


class DeploymentList(Page):
    deployments: list[Deployment]


class DeploymentInfo(BaseModel):
    deployment: Deployment
    run_id: RunId
    run_status: RunStatus
    commit_sha: CommitSha
    incidents: list[Incident]


def _project(state: CICDState, project_id: str) -> Project:
    return find(state.projects, project_id, hint=f"use list_ci_projects to find one; known: {known(state.projects)}")


def _user(state: CICDState, username: str, param: str) -> User:
    return find(state.users, username)


def _branch(state: CICDState, project: Project, branch: str) -> str:
    require(branch in project.branches,
            f"branch '{branch}' does not exist in {project.project_id} ({project.name}) (parameter "
            f"'branch'); branches: {', '.join(project.branches)}",
            reason='not_found', params=('branch',), rejected=(branch, project.project_id),
            choices=tuple(project.branches))
    return branch


def _env(state: CICDState, project_id: str, name: EnvName) -> Environment:
    return next(e for e in state.environments.values() if e.project_id == project_id and e.name == name)


def _current(state: CICDState, project_id: str, env: EnvName) -> Deployment | None:
    live = [d for d in state.deployments.values()
            if d.project_id == project_id and d.environment == env and d.status == "succeeded"]
    return max(live, key=lambda d: (d.finished_at or "", d.deployment_id), default=None)


def _waiting(state: CICDState, project_id: str, env: EnvName) -> Deployment | None:
    return next((d for d in state.deployments.values() if d.project_id == project_id
                 and d.environment == env and d.status in ("pending_approval", "in_progress")), None)


def _freezes(state: CICDState, project_id: str, env: EnvName) -> list[DeployFreeze]:
    return sorted((f for f in state.freezes.values() if f.project_id == project_id
                   and f.environment == env and f.ends_at > state.now), key=lambda f: f.starts_at)


def _active_freeze(state: CICDState, project_id: str, env: EnvName) -> DeployFreeze | None:
    return next((f for f in _freezes(state, project_id, env) if f.starts_at <= state.now), None)


def _not_frozen(state: CICDState, project_id: str, env: EnvName, action: str) -> None:
    frz = _active_freeze(state, project_id, env)
    require(frz is None, f"cannot {action}: {env} of {project_id} is frozen until "
            f"{frz.ends_at if frz else ''} ({frz.freeze_id if frz else ''}: {frz.reason if frz else ''})",
            reason='state', rejected=(action, env, project_id))


def _artifact_of(state: CICDState, run_id: str) -> Artifact | None:
    return next((a for a in state.artifacts.values() if a.run_id == run_id), None)


@tool(sensitive=("owner",))
def list_ci_projects(
    state: CICDState,
    query: text("query", "Case-insensitive substring of the name, repo or description.", listed="name") = "",
    owner: Annotated[Username | None, Field(description="Only projects this username owns.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ProjectList:
    """List the services built and deployed by the CI/CD platform, optionally filtered by name or owner."""
    q = query.strip().lower()
    found = [p for p in state.projects.values()
             if (q in p.name.lower() or q in p.repo.lower() or q in p.description.lower())
             and (owner is None or owner in p.owners)]
    return ProjectList.of(found, offset, limit)


@tool(sensitive=("project_id",))
def get_ci_project(state: CICDState, project_id: ProjectId) -> ProjectInfo:
    """Get a CI project: repo, owners, pipelines, branch heads with their last run, live versions."""
    project = _project(state, project_id)
    heads = []
    for branch in project.branches:
        commits = [c for c in state.commits.values() if c.project_id == project_id and c.branch == branch]
        head = max(commits, key=lambda c: c.committed_at, default=None)
        runs = [r for r in state.runs.values() if r.project_id == project_id and r.branch == branch]
        last = max(runs, key=lambda r: (r.created_at, r.run_id), default=None)
        heads.append(BranchHead(branch=branch, head_sha=head.sha if head else None,
                                head_message=head.message if head else None,
                                last_run_id=last.run_id if last else None,
                                last_run_status=last.status if last else None))
    live = {}
    for env in ("dev", "staging", "production"):
        cur = _current(state, project_id, env)
        live[env] = cur.version if cur else None
    return ProjectInfo(project=project, branch_heads=heads, running_versions=live,
                       pipelines=[p for p in state.pipelines.values() if p.project_id == project_id])


@tool(sensitive=("project_id", "branch", "pipeline_id"))
def list_pipeline_runs(
    state: CICDState,
    project_id: ProjectId,
    branch: Annotated[BranchName | None, Field(description="Only runs on this branch.")] = None,
    status: Annotated[RunStatus | None, Field(description="Only runs in this status.")] = None,
    pipeline_id: Annotated[PipelineId | None, Field(description="Only runs of this pipeline, e.g. 'PPL-0002'.", json_schema_extra={EXAMPLE: "PPL-0002"})] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RunList:
    """List a project's pipeline runs, newest first, filtered by branch, status and pipeline."""
    project = _project(state, project_id)
    if branch is not None:
        _branch(state, project, branch)
    found = sorted((r for r in state.runs.values() if r.project_id == project_id
                    and (branch is None or r.branch == branch)
                    and (status is None or r.status == status)
                    and (pipeline_id is None or r.pipeline_id == pipeline_id)),
                   key=lambda r: (r.created_at, r.run_id), reverse=True)
    return RunList.of(found, offset, limit)


@tool(sensitive=("run_id",))
def get_pipeline_run(state: CICDState, run_id: RunId) -> RunInfo:
    """Get one pipeline run: status, jobs, duration, failing job, its commit and the artifact it built."""
    run = find(state.runs, run_id)
    art = _artifact_of(state, run_id)
    return RunInfo(run=run, pipeline_name=state.pipelines[run.pipeline_id].name,
                   commit=state.commits[run.commit_sha], artifact_id=art.artifact_id if art else None,
                   artifact_version=art.version if art else None)


@tool(sensitive=("run_id", "job"))
def get_run_logs(
    state: CICDState,
    run_id: RunId,
    job: Annotated[JobName | None, Field(description="Only this job's lines, e.g. 'test:unit'.", json_schema_extra={EXAMPLE: "test:unit"})] = None,
) -> RunLogs:
    """Read the log excerpt of a pipeline run, optionally for one job; shows why a run failed."""
    run = find(state.runs, run_id)
    names = [j.name for j in run.jobs]
    require(job is None or job in names,
            f"job '{job}' is not part of run {run_id} (parameter 'job'); jobs: {', '.join(names)}",
            params=('job',), rejected=(job, run_id), choices=tuple(names))
    lines = [ln for ln in run.logs if job is None or ln.startswith(f"[{job}]")]
    return RunLogs(run_id=run_id, status=run.status, failing_job=run.failing_job, job=job,
                   jobs=run.jobs, lines=lines)


@tool(write=True, sensitive=("project_id", "pipeline_id", "branch", "commit_sha", "triggered_by"))
def trigger_pipeline_run(
    state: CICDState,
    project_id: ProjectId,
    pipeline_id: entity_id("pipeline", "Pipeline to run, e.g. 'PPL-0001' (see get_ci_project).", example="PPL-0001"),
    branch: entity_id("branch", "Branch to build."),
    triggered_by: Actor,
    commit_sha: Annotated[CommitSha | None, Field(description="Commit on that branch; default: the branch head.")] = None,
) -> PipelineRun:
    """Queue a new run of a project's pipeline on a branch (its head commit unless one is given)."""
    project = _project(state, project_id)
    mine = [p.pipeline_id for p in state.pipelines.values() if p.project_id == project_id]
    require(pipeline_id in mine, f"pipeline '{pipeline_id}' not found in {project_id} (parameter "
            f"'pipeline_id'); its pipelines: {', '.join(mine)}",
            reason='not_found', params=('pipeline_id',), rejected=(pipeline_id, project_id),
            choices=tuple(mine))
    _branch(state, project, branch)
    _user(state, triggered_by, "triggered_by")
    commits = sorted((c for c in state.commits.values() if c.project_id == project_id and c.branch == branch),
                     key=lambda c: c.committed_at, reverse=True)
    require(bool(commits), f"branch '{branch}' has no commits to build",
            params=('branch',), rejected=(branch,))
    if commit_sha is None:
        commit_sha = commits[0].sha
    require(any(c.sha == commit_sha for c in commits),
            f"commit '{commit_sha}' is not on branch '{branch}' (parameter 'commit_sha'); latest commits: "
            + ", ".join(c.sha for c in commits[:5]),
            params=('commit_sha', 'branch'), rejected=(commit_sha, branch),
            choices=tuple(c.sha for c in commits[:5]))
    dup = next((r for r in state.runs.values() if r.pipeline_id == pipeline_id
                and r.commit_sha == commit_sha and r.status in ("queued", "running")), None)
    require(dup is None, f"run '{dup.run_id if dup else ''}' of this pipeline is already "
            f"{dup.status if dup else ''} for commit {commit_sha}",
            reason='conflict', rejected=(dup.run_id if dup else '', commit_sha))
    pipe = state.pipelines[pipeline_id]
    run = PipelineRun(
        run_id=state.new_id("RUN"), pipeline_id=pipeline_id, project_id=project_id,
        commit_sha=commit_sha, branch=branch, status="queued", triggered_by=triggered_by,
        created_at=state.advance(), jobs=[JobResult(name=j.name, stage=j.stage, status="pending")
                                          for j in pipe.jobs],
    )
    state.runs[run.run_id] = run
    return run


@tool(write=True, sensitive=("run_id",))
def cancel_pipeline_run(state: CICDState, run_id: RunId) -> PipelineRun:
    """Cancel a queued or running pipeline run; finished runs cannot be cancelled."""
    run = find(state.runs, run_id)
    require(run.status not in FINISHED,
            f"run '{run_id}' already finished ({run.status} at {run.finished_at}); only queued or "
            "running runs can be cancelled",
            reason='state', rejected=(run_id, run.finished_at),
            wanted=('queued', 'running', 'cancelled'))
    run.status = "cancelled"
    run.finished_at = state.advance()
    run.duration_seconds = int((datetime.fromisoformat(run.finished_at)
                                - datetime.fromisoformat(run.created_at)).total_seconds())
    for job in run.jobs:
        if job.status in ("pending", "running"):
            job.status = "cancelled"
    run.logs.append(f"[{run.jobs[0].name}] run cancelled")
    return run


@tool(write=True, sensitive=("run_id", "triggered_by"))
def retry_pipeline_run(state: CICDState, run_id: RunId, triggered_by: Actor) -> PipelineRun:
    """Re-run a failed or cancelled pipeline run on the same commit; returns the new queued run."""
    old = find(state.runs, run_id)
    require(old.status != "passed", f"run '{run_id}' passed; there is nothing to retry (trigger a new "
            "run with trigger_pipeline_run instead)", rejected=(run_id,))
    require(old.status in ("failed", "cancelled"),
            f"run '{run_id}' is still {old.status}; wait for it or cancel it before retrying",
            rejected=(run_id, old.status))
    _user(state, triggered_by, "triggered_by")
    dup = next((r for r in state.runs.values() if r.pipeline_id == old.pipeline_id
                and r.commit_sha == old.commit_sha and r.status in ("queued", "running")), None)
    require(dup is None, f"run '{dup.run_id if dup else ''}' is already {dup.status if dup else ''} "
            f"for commit {old.commit_sha}",
            reason='conflict', rejected=(dup.run_id if dup else '', old.commit_sha))
    run = PipelineRun(
        run_id=state.new_id("RUN"), pipeline_id=old.pipeline_id, project_id=old.project_id,
        commit_sha=old.commit_sha, branch=old.branch, status="queued", triggered_by=triggered_by,
        created_at=state.advance(), retry_of=run_id,
        jobs=[JobResult(name=j.name, stage=j.stage, status="pending") for j in old.jobs],
    )
    state.runs[run.run_id] = run
    return run


@tool(sensitive=("project_id", "version"))
def list_build_artifacts(
    state: CICDState,
    project_id: ProjectId,
    version: text("word", "Only versions starting with this, e.g. 'v2.4'.", listed="version", example="v2.4", optional=True) = None,
    passing_only: Annotated[bool, Field(description="Only artifacts whose build run passed.")] = False,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> ArtifactList:
    """List a project's build artifacts, newest first, with their run status and where they are live."""
    _project(state, project_id)
    live: dict[str, list[EnvName]] = {}
    for env in ("dev", "staging", "production"):
        cur = _current(state, project_id, env)
        if cur:
            live.setdefault(cur.artifact_id, []).append(env)
    found = [
        ArtifactInfo(artifact=a, run_status=state.runs[a.run_id].status, running_in=live.get(a.artifact_id, []))
        for a in sorted(state.artifacts.values(), key=lambda a: (a.created_at, a.artifact_id), reverse=True)
        if a.project_id == project_id and (version is None or a.version.startswith(version))
        and (not passing_only or state.runs[a.run_id].status == "passed")
    ]
    return ArtifactList.of(found, offset, limit)


@tool(sensitive=("project_id",))
def list_environments(state: CICDState, project_id: ProjectId, offset: Offset = 0,
                      limit: Limit = DEFAULT_LIMIT) -> EnvironmentList:
    """List a project's environments: protection rules, live version, freezes and variable names, a page at a time."""
    _project(state, project_id)
    out = []
    for env in ("dev", "staging", "production"):
        cur, wait = _current(state, project_id, env), _waiting(state, project_id, env)
        freezes = _freezes(state, project_id, env)
        active = _active_freeze(state, project_id, env)
        out.append(EnvironmentInfo(
            environment=_env(state, project_id, env), current_version=cur.version if cur else None,
            current_deployment_id=cur.deployment_id if cur else None,
            waiting_deployment_id=wait.deployment_id if wait else None, active_freeze=active,
            upcoming_freezes=[f for f in freezes if f is not active],
        ))
    return EnvironmentList.of(out, offset, limit, project_id=project_id)


@tool(write=True, sensitive=("artifact_id", "deployer"))
def deploy_artifact(
    state: CICDState,
    artifact_id: entity_id("artifact", "Artifact to deploy, e.g. 'ART-0012'.", example="ART-0012"),
    environment: EnvParam,
    deployer: Actor,
) -> Deployment:
    """Deploy a build artifact to an environment; protected environments wait for approval."""
    art = find(state.artifacts, artifact_id, hint="use list_build_artifacts to find one")
    _user(state, deployer, "deployer")
    env = _env(state, art.project_id, environment)
    run = state.runs[art.run_id]
    require(not env.requires_passing_run or run.status == "passed",
            f"artifact {artifact_id} ({art.version}) was built by run {run.run_id}, which {run.status}"
            + (f" in job {run.failing_job}" if run.failing_job else "")
            + f"; {environment} only accepts artifacts from passed runs",
            reason='state', params=('job',),
            rejected=(artifact_id, run.run_id, run.status, run.failing_job, environment),
            wanted=('passed',))
    if env.requires_staging_success:
        staged = any(d.artifact_id == artifact_id and d.environment == "staging" and d.status == "succeeded"
                     for d in state.deployments.values())
        require(staged, f"{art.version} ({artifact_id}) has no successful staging deployment; "
                f"deploy it to staging first, then to {environment}",
                rejected=(art.version, environment))
    _not_frozen(state, art.project_id, environment, "deploy")
    wait = _waiting(state, art.project_id, environment)
    require(wait is None, f"{environment} of {art.project_id} already has deployment "
            f"{wait.deployment_id if wait else ''} {wait.status if wait else ''}; finish it first",
            reason='conflict', rejected=(environment, art.project_id))
    cur = _current(state, art.project_id, environment)
    require(cur is None or cur.artifact_id != artifact_id,
            f"{art.version} is already live in {environment} (deployment {cur.deployment_id if cur else ''})",
            reason='conflict', rejected=(art.version, environment))
    at = state.advance(2)
    dep = Deployment(
        deployment_id=state.new_id("DEP"), project_id=art.project_id, environment=environment,
        artifact_id=artifact_id, version=art.version, deployer=deployer, created_at=at,
        status="pending_approval" if env.requires_approval else "succeeded",
        finished_at=None if env.requires_approval else state.advance(5),
    )
    state.deployments[dep.deployment_id] = dep
    return dep


@tool(write=True, sensitive=("deployment_id", "approver"))
def approve_deployment(state: CICDState, deployment_id: DeploymentId, approver: Actor) -> Deployment:
    """Approve a deployment that is pending approval; it then rolls out. Deployers cannot self-approve."""
    dep = find(state.deployments, deployment_id)
    require(dep.status == "pending_approval",
            f"deployment '{deployment_id}' is {dep.status}, not pending_approval",
            rejected=(deployment_id, dep.status))
    user = _user(state, approver, "approver")
    require(approver != dep.deployer, f"'{approver}' requested deployment {deployment_id} and cannot "
            "approve it; another owner or a release manager must",
            params=('owner',), rejected=(approver, deployment_id))
    owners = state.projects[dep.project_id].owners
    require(approver in owners or user.role != "developer",
            f"'{approver}' may not approve {dep.project_id} deployments; project owners: {', '.join(owners)} "
            "(release managers and admins may also approve)",
            rejected=(approver, dep.project_id), choices=tuple(owners))
    _not_frozen(state, dep.project_id, dep.environment, "approve")
    dep.approver, dep.approved_at = approver, state.advance()
    dep.status, dep.finished_at = "succeeded", state.advance(5)
    return dep


@tool(write=True, sensitive=("project_id", "deployer"))
def rollback_deployment(
    state: CICDState,
    project_id: ProjectId,
    environment: EnvParam,
    deployer: Actor,
) -> Deployment:
    """Roll an environment back to the previous successfully deployed version (allowed during freezes)."""
    _project(state, project_id)
    _user(state, deployer, "deployer")
    cur = _current(state, project_id, environment)
    require(cur is not None, f"nothing is live in {environment} of {project_id}; nothing to roll back",
            rejected=(environment, project_id))
    earlier = [d for d in state.deployments.values() if d.project_id == project_id
               and d.environment == environment and d.status == "succeeded"
               and cur is not None and d.artifact_id != cur.artifact_id
               and (d.finished_at or "") <= (cur.finished_at or "")]
    prev = max(earlier, key=lambda d: (d.finished_at or "", d.deployment_id), default=None)
    require(prev is not None, f"no earlier successful deployment of another version in {environment} "
            f"of {project_id} to roll back to (live: {cur.version if cur else ''})",
            params=('version',), rejected=(environment, project_id))
    busy = _waiting(state, project_id, environment)
    require(busy is None or busy.status != "in_progress",
            f"deployment {busy.deployment_id if busy else ''} is in progress in {environment}; wait for it",
            rejected=(environment,))
    cur.status = "rolled_back"
    at = state.advance(2)
    dep = Deployment(
        deployment_id=state.new_id("DEP"), project_id=project_id, environment=environment,
        artifact_id=prev.artifact_id, version=prev.version, status="succeeded", deployer=deployer,
        created_at=at, finished_at=state.advance(3), rollback_of=cur.deployment_id,
    )
    state.deployments[dep.deployment_id] = dep
    return dep


@tool(sensitive=("project_id",))
def list_deployments(
    state: CICDState,
    project_id: ProjectId,
    environment: Annotated[EnvName | None, Field(description="Only deployments to this environment.")] = None,
    status: Annotated[DeployStatus | None, Field(description="Only deployments in this status.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> DeploymentList:
    """List a project's deployments, newest first, filtered by environment and status."""
    _project(state, project_id)
    found = sorted((d for d in state.deployments.values() if d.project_id == project_id
                    and (environment is None or d.environment == environment)
                    and (status is None or d.status == status)),
                   key=lambda d: (d.created_at, d.deployment_id), reverse=True)
    return DeploymentList.of(found, offset, limit)


@tool(sensitive=("deployment_id",))
def get_deployment(state: CICDState, deployment_id: DeploymentId) -> DeploymentInfo:
    """Get one deployment: version, status, deployer, approval, its build run and any incidents."""
    dep = find(state.deployments, deployment_id)
    art = state.artifacts[dep.artifact_id]
    return DeploymentInfo(deployment=dep, run_id=art.run_id, run_status=state.runs[art.run_id].status,
                          commit_sha=art.commit_sha,
                          incidents=[i for i in state.incidents.values() if i.deployment_id == deployment_id])


@tool(write=True, sensitive=("project_id", "name", "value"))
def set_environment_variable(
    state: CICDState,
    project_id: ProjectId,
    environment: EnvParam,
    name: text("title", "UPPER_SNAKE name, e.g. 'LOG_LEVEL'.", listed="name", example="LOG_LEVEL", min_length=1, max_length=64),
    value: text("word", "Value to set.", min_length=1, max_length=500),
    secret: Annotated[bool, Field(description="Store as a secret: only the name stays visible.")] = False,
) -> EnvVariable:
    """Create or update an environment variable or secret of one environment of a project."""
    _project(state, project_id)
    require(bool(_UPPER_SNAKE.fullmatch(name)),
            f"name '{name}' must be UPPER_SNAKE (capital letters, digits, single underscores), e.g. 'API_TIMEOUT'",
            params=('name',), rejected=(name,), choices=('API_TIMEOUT',))
    env = _env(state, project_id, environment)
    old = next((v for v in env.variables if v.name == name), None)
    require(old is None or not old.secret or secret,
            f"'{name}' is a secret in {environment}; it cannot be turned back into a plain variable "
            "(pass secret=true to rotate it)", params=('secret',), rejected=(name, environment))
    _not_frozen(state, project_id, environment, "change variables")
    var = EnvVariable(name=name, secret=secret, value=None if secret else value, updated_at=state.now)
    env.variables = sorted([v for v in env.variables if v.name != name] + [var], key=lambda v: v.name)
    return var


@tool(write=True, sensitive=("project_id", "created_by"))
def create_deploy_freeze(
    state: CICDState,
    project_id: ProjectId,
    environment: EnvParam,
    starts_at: moment("Start, e.g. '2026-04-10T18:00'.", listed="starts_at"),
    ends_at: moment("End, after the start, at most 30 days later.", listed="ends_at", role="end"),
    reason: text("reason", "Why deploys are frozen.", listed="reason", min_length=3, max_length=200),
    created_by: Actor,
) -> DeployFreeze:
    """Block deployments to one environment of a project during a time window."""
    _project(state, project_id)
    start, end = iso(parse_moment(starts_at, "starts_at")), iso(parse_moment(ends_at, "ends_at"))
    _user(state, created_by, "created_by")
    require(end > start, f"ends_at {end} must be after starts_at {start}",
            params=('ends_at', 'starts_at'), rejected=(end, start))
    require(end > state.now, f"ends_at {end} is already in the past (now: {state.now})",
            reason='conflict', params=('ends_at',), rejected=(end, state.now))
    days = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds() / 86400
    require(days <= _MAX_FREEZE_DAYS, f"a freeze may last at most {_MAX_FREEZE_DAYS} days; this one "
            f"lasts {days:.1f}", reason='limit', rejected=(_MAX_FREEZE_DAYS, days))
    clash = next((f for f in _freezes(state, project_id, environment)
                  if f.starts_at < end and start < f.ends_at), None)
    require(clash is None, f"overlaps freeze {clash.freeze_id if clash else ''} "
            f"({clash.starts_at if clash else ''} to {clash.ends_at if clash else ''}) in {environment}",
            reason='conflict', rejected=(environment,))
    frz = DeployFreeze(freeze_id=state.new_id("FRZ"), project_id=project_id, environment=environment,
                       starts_at=start, ends_at=end, reason=reason.strip(), created_by=created_by)
    state.freezes[frz.freeze_id] = frz
    return frz
