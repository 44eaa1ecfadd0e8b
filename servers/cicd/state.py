"""CI/CD server state: projects, commits, pipelines, runs, artifacts, environments, deployments."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id, entity_ids, moment, naming
from prove.env.world import COMPANIES, days_before, email, person, shift, slug

Stage = Literal["build", "test", "deploy"]
RunStatus = Literal["queued", "running", "passed", "failed", "cancelled"]
JobStatus = Literal["pending", "running", "passed", "failed", "skipped", "cancelled"]
EnvName = Literal["dev", "staging", "production"]
DeployStatus = Literal["pending_approval", "in_progress", "succeeded", "failed", "rolled_back"]
UserRole = Literal["developer", "release_manager", "admin"]
Severity = Literal["sev1", "sev2", "sev3"]
IncidentStatus = Literal["open", "resolved"]

ENV_NAMES: tuple[EnvName, ...] = ("dev", "staging", "production")
FINISHED: tuple[RunStatus, ...] = ("passed", "failed", "cancelled")

Username = entity_id("user", "Username, e.g. 'mei-tanaka'.", example="mei-tanaka")
Usernames = entity_ids("user", "Usernames, sorted.")
ProjectId = entity_id("project", "CI project id, e.g. 'PRJ-0003'.", example="PRJ-0003")
BranchName = entity_id("branch", "Branch name of a project's repository, e.g. 'main'.", example="main")
BranchNames = entity_ids("branch", "Branch names, sorted.")
CommitSha = entity_id("commit", "Short commit hash, 10 hex digits, e.g. '3f9a0c12be'.", example="3f9a0c12be")
PipelineId = entity_id("pipeline", "Pipeline id, e.g. 'PPL-0002'.", example="PPL-0002")
JobName = entity_id("job", "Job name, 'stage:task', e.g. 'test:unit'.", example="test:unit")
RunId = entity_id("pipeline_run", "Pipeline run id, e.g. 'RUN-0042'.", example="RUN-0042")
ArtifactId = entity_id("artifact", "Build artifact id, e.g. 'ART-0012'.", example="ART-0012")
EnvironmentId = entity_id("environment", "Environment id, e.g. 'ENV-0004'.", example="ENV-0004")
FreezeId = entity_id("deploy_freeze", "Deploy freeze id, e.g. 'FRZ-0002'.", example="FRZ-0002")
DeploymentId = entity_id("deployment", "Deployment id, e.g. 'DEP-0017'.", example="DEP-0017")
IncidentId = entity_id("incident", "Incident id, e.g. 'INC-0003'.", example="INC-0003")


class User(Record):
    username: Username
    name: str = Field(json_schema_extra=naming("alone"))
    email: str
    role: UserRole = Field(description="release_manager and admin may approve any deployment.")


class Project(Record):
    project_id: ProjectId
    name: str = Field(json_schema_extra=naming("name"), description="Service name, e.g. 'payments-api'.")
    repo: str = Field(description="Source repository, 'org/name'.")
    default_branch: BranchName
    branches: BranchNames = Field(description="Branch names, sorted.")
    owners: Usernames = Field(description="Usernames that own the service (may approve its deployments), sorted.")
    description: str
    created_at: str


class Commit(Record):
    sha: CommitSha
    project_id: ProjectId
    branch: BranchName
    author: Username
    message: str
    committed_at: str


class PipelineJob(Record):
    name: JobName = Field(json_schema_extra=naming("name"))
    stage: Stage


class Pipeline(Record):
    pipeline_id: PipelineId
    project_id: ProjectId
    name: str = Field(json_schema_extra=naming("name"))
    stages: list[Stage]
    jobs: list[PipelineJob]


class JobResult(Record):
    name: JobName = Field(json_schema_extra=naming("name"))
    stage: Stage
    status: JobStatus
    duration_seconds: int | None = None


class PipelineRun(Record):
    run_id: RunId
    pipeline_id: PipelineId
    project_id: ProjectId
    commit_sha: CommitSha
    branch: BranchName
    status: RunStatus
    triggered_by: Username
    created_at: str
    finished_at: str | None = None
    duration_seconds: int | None = None
    failing_job: JobName | None = None
    jobs: list[JobResult]
    logs: list[str] = Field(default_factory=list, description="Log excerpt, lines prefixed '[job]'.")
    retry_of: RunId | None = Field(None, description="Run this one retries.")


class Artifact(Record):
    artifact_id: ArtifactId
    project_id: ProjectId
    version: str = Field(json_schema_extra=naming("name"), description="Version tag, e.g. 'v2.4.1'.")
    run_id: RunId = Field(description="Pipeline run that built it.")
    commit_sha: CommitSha
    created_at: str
    size_mb: float


class EnvVariable(Record):
    name: str = Field(json_schema_extra=naming("name"), description="UPPER_SNAKE name.")
    secret: bool
    value: str | None = Field(description="Plain value; None for secrets (only names are kept).")
    updated_at: str


class Environment(Record):
    environment_id: EnvironmentId
    project_id: ProjectId
    name: EnvName = Field(json_schema_extra=naming("name"))
    requires_passing_run: bool = Field(description="Only artifacts built by a passed run may deploy.")
    requires_approval: bool = Field(description="Deployments wait for approval by someone else.")
    requires_staging_success: bool = Field(description="The same artifact must have succeeded on staging.")
    variables: list[EnvVariable] = Field(default_factory=list, description="Sorted by name.")


class DeployFreeze(Record):
    freeze_id: FreezeId
    project_id: ProjectId
    environment: EnvName
    starts_at: moment("Start of the freeze.")
    ends_at: moment("End of the freeze.")
    reason: str
    created_by: Username


class Deployment(Record):
    deployment_id: DeploymentId
    project_id: ProjectId
    environment: EnvName
    artifact_id: ArtifactId
    version: str = Field(json_schema_extra=naming("name"), description="Version tag it rolled out.")
    status: DeployStatus
    deployer: Username
    created_at: str
    finished_at: str | None = None
    approver: Username | None = None
    approved_at: str | None = None
    rollback_of: DeploymentId | None = Field(None, description="Deployment this one rolled back.")


class Incident(Record):
    incident_id: IncidentId
    project_id: ProjectId
    deployment_id: DeploymentId
    title: str = Field(json_schema_extra=naming("title"))
    severity: Severity
    status: IncidentStatus
    opened_at: str


class CICDState(ServerState):
    users: dict[str, User] = Field(default_factory=dict, description="Keyed by username.")
    projects: dict[str, Project] = Field(default_factory=dict)
    commits: dict[str, Commit] = Field(default_factory=dict, description="Keyed by sha.")
    pipelines: dict[str, Pipeline] = Field(default_factory=dict)
    runs: dict[str, PipelineRun] = Field(default_factory=dict)
    artifacts: dict[str, Artifact] = Field(default_factory=dict)
    environments: dict[str, Environment] = Field(default_factory=dict)
    freezes: dict[str, DeployFreeze] = Field(default_factory=dict)
    deployments: dict[str, Deployment] = Field(default_factory=dict)
    incidents: dict[str, Incident] = Field(default_factory=dict)


_SERVICES = (
    ("payments-api", "Card and wallet payment processing API"),
    ("checkout-web", "Customer-facing checkout frontend"),
    ("auth-service", "Login, sessions and OAuth tokens"),
    ("search-indexer", "Builds the product search index"),
    ("notification-worker", "Sends email, SMS and push notifications"),
    ("inventory-service", "Stock levels and reservations"),
    ("mobile-bff", "Backend-for-frontend of the mobile apps"),
    ("billing-service", "Invoices, subscriptions and dunning"),
    ("user-profile", "Profiles, preferences and avatars"),
    ("recommendation-engine", "Personalised product recommendations"),
    ("media-transcoder", "Video and image transcoding jobs"),
    ("api-gateway", "Edge routing, rate limits and auth checks"),
    ("feature-flags", "Feature flag evaluation service"),
    ("docs-site", "Public developer documentation"),
)
_EXTRA_BRANCHES = ("develop", "release/2026.03", "release/2026.04", "feature/retry-backoff",
                   "feature/new-onboarding", "hotfix/null-currency", "feature/otel-tracing")
_MESSAGES = (
    "Fix flaky retry in {x} client", "Add metrics for {x} latency", "Bump dependencies",
    "Refactor {x} handler", "Handle timeouts when calling {x}", "Add integration tests for {x}",
    "Improve logging around {x}", "Remove deprecated {x} endpoint", "Cache {x} lookups",
    "Validate {x} payloads", "Upgrade base image", "Tune connection pool for {x}",
)
_TOPICS = ("orders", "refunds", "sessions", "webhooks", "currency", "search", "profiles", "quota")
_PIPELINES: dict[str, tuple[tuple[str, Stage], ...]] = {
    "ci": (("build:compile", "build"), ("test:lint", "test"), ("test:unit", "test"),
           ("test:integration", "test")),
    "release": (("build:docker-image", "build"), ("test:smoke", "test"), ("deploy:publish", "deploy")),
}
_FAILURES: dict[Stage, tuple[str, ...]] = {
    "build": ("error: cannot find module '{x}-client'", "Dockerfile:14 COPY failed: no such file",
              "compilation failed: 3 type errors in {x}/handler"),
    "test": ("AssertionError: expected 200, got 500 in test_{x}_flow",
             "Timeout after 600s waiting for postgres to become ready",
             "FAILED tests/test_{x}.py::test_rounding - assert 10.01 == 10.0"),
    "deploy": ("registry push denied: quota exceeded", "helm upgrade timed out after 300s"),
}
_VARS = (("LOG_LEVEL", "info"), ("FEATURE_NEW_CHECKOUT", "false"), ("REGION", "eu-west-1"),
         ("MAX_WORKERS", "8"), ("DATABASE_URL", None), ("STRIPE_API_KEY", None),
         ("SENTRY_DSN", None), ("JWT_SIGNING_KEY", None))


def _run_jobs(rng: random.Random, pipeline: Pipeline, status: RunStatus, topic: str
              ) -> tuple[list[JobResult], list[str], str | None]:
    jobs, logs, failing = [], [], None
    fail_at = rng.randrange(len(pipeline.jobs)) if status == "failed" else -1
    if status == "failed" and rng.random() < 0.7:
        fail_at = max(1, fail_at) if len(pipeline.jobs) > 1 else 0  # builds mostly succeed
    cut = rng.randrange(1, len(pipeline.jobs)) if status in ("cancelled", "running") else -1
    for i, job in enumerate(pipeline.jobs):
        if status == "queued" or (cut >= 0 and i > cut):
            jobs.append(JobResult(name=job.name, stage=job.stage,
                                  status="cancelled" if status == "cancelled" else "pending"))
            continue
        if failing is not None:
            jobs.append(JobResult(name=job.name, stage=job.stage, status="skipped"))
            continue
        secs = rng.randrange(20, 420)
        if i == fail_at:
            failing = job.name
            logs.append(f"[{job.name}] {rng.choice(_FAILURES[job.stage]).format(x=topic)}")
            logs.append(f"[{job.name}] job failed with exit code 1")
            jobs.append(JobResult(name=job.name, stage=job.stage, status="failed", duration_seconds=secs))
        elif i == cut:
            state: JobStatus = "running" if status == "running" else "cancelled"
            logs.append(f"[{job.name}] started")
            jobs.append(JobResult(name=job.name, stage=job.stage, status=state))
        else:
            logs.append(f"[{job.name}] completed in {secs}s")
            jobs.append(JobResult(name=job.name, stage=job.stage, status="passed", duration_seconds=secs))
    return jobs, logs, failing


def initial_state(seed: int) -> CICDState:
    """~10 services with pipelines, ~100 runs, artifacts and deployment histories; deterministic."""
    rng = random.Random(seed)
    now = "2026-04-08T14:30"
    state = CICDState(now=now)
    ids = {k: Counter(k) for k in ("PRJ", "PPL", "RUN", "ART", "ENV", "FRZ", "DEP", "INC")}
    for i in range(rng.randrange(16, 22)):
        name = person(rng)
        username = slug(name).replace(".", "-")
        if username in state.users:
            username = f"{username}-{i}"
        role: UserRole = "release_manager" if i % 6 == 1 else "admin" if i == 4 else "developer"
        state.users[username] = User(username=username, name=name,
                                     email=email(name, "eng.example.com"), role=role)
    people = sorted(u for u, x in state.users.items() if x.role == "developer")
    shas: set[str] = set()
    for service, blurb in rng.sample(_SERVICES, rng.randrange(9, 12)):
        pid = ids["PRJ"]()
        default = "main" if rng.random() < 0.85 else "master"
        branches = sorted([default, *rng.sample(_EXTRA_BRANCHES, rng.randrange(1, 4))])
        created = days_before(now, rng, 900, 200)
        project = Project(project_id=pid, name=service, repo=f"{slug(rng.choice(COMPANIES)).replace('.', '-')}/{service}",
                          default_branch=default, branches=branches,
                          owners=sorted(rng.sample(people, rng.randrange(1, 4))),
                          description=blurb, created_at=created)
        state.projects[pid] = project
        topic = rng.choice(_TOPICS)
        on_branch: dict[str, list[Commit]] = {}
        for branch in branches:
            times = sorted(days_before(now, rng, 30, 0 if branch == default else 1)
                           for _ in range(rng.randrange(2, 6) if branch == default else rng.randrange(1, 4)))
            for at in times:
                sha = f"{rng.getrandbits(40):010x}"
                while sha in shas:
                    sha = f"{rng.getrandbits(40):010x}"
                shas.add(sha)
                commit = Commit(sha=sha, project_id=pid, branch=branch, author=rng.choice(people),
                                message=rng.choice(_MESSAGES).format(x=rng.choice(_TOPICS)), committed_at=at)
                state.commits[sha] = commit
                on_branch.setdefault(branch, []).append(commit)
        pipes = []
        for pname in ["ci"] + (["release"] if rng.random() < 0.6 else []):
            jobs = [PipelineJob(name=n, stage=s) for n, s in _PIPELINES[pname]]
            stages: list[Stage] = [s for s in ("build", "test", "deploy") if any(j.stage == s for j in jobs)]
            pipe = Pipeline(pipeline_id=ids["PPL"](), project_id=pid, name=pname, stages=stages, jobs=jobs)
            state.pipelines[pipe.pipeline_id] = pipe
            pipes.append(pipe)
        # Runs: one per commit (sometimes two), oldest first; the newest may still be queued/running.
        commits = sorted((c for cs in on_branch.values() for c in cs), key=lambda c: c.committed_at)
        runs: list[PipelineRun] = []
        for k, commit in enumerate(commits):
            for pipe in pipes if commit.branch == default else pipes[:1]:
                fresh = k >= len(commits) - 2
                status: RunStatus = (rng.choice(["queued", "running"]) if fresh and rng.random() < 0.4
                                     else rng.choices(["passed", "failed", "cancelled"], weights=[7, 3, 1])[0])
                jobs, logs, failing = _run_jobs(rng, pipe, status, topic)
                created = min(shift(commit.committed_at, minutes=rng.randrange(1, 4)), now)
                secs = sum(j.duration_seconds or 0 for j in jobs)
                done = status in FINISHED
                run = PipelineRun(
                    run_id=ids["RUN"](), pipeline_id=pipe.pipeline_id, project_id=pid,
                    commit_sha=commit.sha, branch=commit.branch, status=status,
                    triggered_by=commit.author, created_at=created,
                    finished_at=min(shift(created, minutes=secs // 60 + 1), now) if done else None,
                    duration_seconds=secs if done else None, failing_job=failing, jobs=jobs, logs=logs,
                )
                state.runs[run.run_id] = run
                runs.append(run)
        envs = {}
        for env_name in ENV_NAMES:
            env = Environment(
                environment_id=ids["ENV"](), project_id=pid, name=env_name,
                requires_passing_run=env_name != "dev",
                requires_approval=env_name == "production" or (env_name == "staging" and rng.random() < 0.2),
                requires_staging_success=env_name == "production",
                variables=sorted(
                    (EnvVariable(name=n, secret=v is None, value=None if v is None else (
                        "debug" if n == "LOG_LEVEL" and env_name == "dev" else v), updated_at=created)
                     for n, v in rng.sample(_VARS, rng.randrange(2, 6))), key=lambda x: x.name),
            )
            state.environments[env.environment_id] = env
            envs[env_name] = env
        # Artifacts: default-branch runs of the last pipeline whose build passed (some failed later).
        major, minor, patch = rng.randrange(1, 4), rng.randrange(0, 12), 0
        arts: list[tuple[Artifact, PipelineRun]] = []
        for run in runs:
            built = all(j.status == "passed" for j in run.jobs if j.stage == "build")
            if (run.branch != default or run.pipeline_id != pipes[-1].pipeline_id
                    or run.status not in ("passed", "failed") or not built):
                continue
            patch += 1
            art = Artifact(artifact_id=ids["ART"](), project_id=pid, version=f"v{major}.{minor}.{patch}",
                           run_id=run.run_id, commit_sha=run.commit_sha,
                           created_at=run.finished_at or run.created_at,
                           size_mb=round(rng.uniform(20, 900), 1))
            state.artifacts[art.artifact_id] = art
            arts.append((art, run))
        _deploy_history(state, rng, ids, pid, arts, envs, people)
        roll = rng.random()
        if roll < 0.6:  # an active production freeze, or an upcoming one
            start = days_before(now, rng, 2, 0) if roll < 0.35 else shift(now, minutes=rng.randrange(3, 20) * 1440)
            fid = ids["FRZ"]()
            state.freezes[fid] = DeployFreeze(
                freeze_id=fid, project_id=pid, environment="production" if roll < 0.5 else "staging",
                starts_at=start, ends_at=shift(start, minutes=rng.randrange(1, 5) * 1440),
                reason=rng.choice(["quarter-end close", "marketing launch", "planned database migration"]),
                created_by=project.owners[0])
    return state


def _deploy_history(state: CICDState, rng: random.Random, ids: dict[str, Counter], pid: str,
                    arts: list[tuple[Artifact, PipelineRun]], envs: dict[str, Environment],
                    people: list[str]) -> None:
    """dev <- every passing artifact, staging <- most, production <- some that succeeded on staging."""
    approvers = sorted(set(state.projects[pid].owners)
                       | {u for u, x in state.users.items() if x.role != "developer"})
    latest = shift(state.now, minutes=-120)
    prod_ok: list[Deployment] = []
    passing = [art for art, run in arts if run.status == "passed"]
    for n, art in enumerate(passing):
        last = n == len(passing) - 1
        at = art.created_at
        for env_name, delay, chance in (("dev", 20, 1.0), ("staging", 120, 0.8), ("production", 1500, 0.75)):
            at = shift(at, minutes=delay + rng.randrange(0, 60))
            env = envs[env_name]
            waiting = last and env.requires_approval and rng.random() < 0.5
            running = last and not env.requires_approval and env_name == "staging" and rng.random() < 0.2
            if rng.random() > chance or (at > latest and not (waiting or running)):
                break
            at = min(at, latest)
            deployer = rng.choice(people)
            status: DeployStatus = ("pending_approval" if waiting else "in_progress" if running
                                    else rng.choices(["succeeded", "failed"], weights=[9, 1])[0])
            approved = env.requires_approval and not waiting
            dep = Deployment(
                deployment_id=ids["DEP"](), project_id=pid, environment=env_name,
                artifact_id=art.artifact_id, version=art.version, status=status, deployer=deployer,
                created_at=at, approver=rng.choice([a for a in approvers if a != deployer]) if approved else None,
                approved_at=shift(at, minutes=30) if approved else None,
                finished_at=None if waiting or running else shift(at, minutes=35 if approved else 5),
            )
            state.deployments[dep.deployment_id] = dep
            if status == "failed":
                inc = Incident(incident_id=ids["INC"](), project_id=pid, deployment_id=dep.deployment_id,
                               title=f"{art.version} failed to roll out to {env_name}",
                               severity="sev1" if env_name == "production" else rng.choice(["sev2", "sev3"]),
                               status=rng.choice(["open", "resolved"]), opened_at=dep.finished_at or at)
                state.incidents[inc.incident_id] = inc
            if status != "succeeded":
                break
            if env_name != "production":
                continue
            if prod_ok and not last and rng.random() < 0.3:  # found bad an hour later: rolled back
                dep.status = "rolled_back"
                prev = prod_ok[-1]
                back = Deployment(deployment_id=ids["DEP"](), project_id=pid, environment="production",
                                  artifact_id=prev.artifact_id, version=prev.version, status="succeeded",
                                  deployer=rng.choice(approvers), created_at=shift(at, minutes=90),
                                  finished_at=shift(at, minutes=95), rollback_of=dep.deployment_id)
                state.deployments[back.deployment_id] = back
                inc = Incident(incident_id=ids["INC"](), project_id=pid, deployment_id=dep.deployment_id,
                               title=f"Error rate spike after {art.version}", severity="sev2",
                               status="resolved", opened_at=shift(at, minutes=60))
                state.incidents[inc.incident_id] = inc
            else:
                prod_ok.append(dep)
