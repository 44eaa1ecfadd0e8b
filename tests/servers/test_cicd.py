"""CI/CD server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok

from prove.env import Hub
from prove_servers.cicd import SERVER
from prove_servers.cicd.state import (
    Artifact,
    CICDState,
    Commit,
    DeployFreeze,
    Deployment,
    Environment,
    EnvVariable,
    Incident,
    JobResult,
    Pipeline,
    PipelineJob,
    PipelineRun,
    Project,
    User,
)

NOW = "2026-04-08T14:30"


def _run(run_id: str, pipeline_id: str, project_id: str, sha: str, branch: str, status: str,
         failing: str | None = None) -> PipelineRun:
    jobs = [JobResult(name="build:compile", stage="build", status="passed", duration_seconds=60),
            JobResult(name="test:unit", stage="test",
                      status={"failed": "failed", "running": "running"}.get(status, "passed"),
                      duration_seconds=None if status == "running" else 90)]
    logs = ["[build:compile] completed in 60s"]
    if failing:
        logs += ["[test:unit] AssertionError: expected 200, got 500", "[test:unit] job failed with exit code 1"]
    done = status != "running"
    return PipelineRun(run_id=run_id, pipeline_id=pipeline_id, project_id=project_id, commit_sha=sha,
                       branch=branch, status=status, triggered_by="ada", created_at="2026-04-07T10:00",
                       finished_at="2026-04-07T10:03" if done else None, duration_seconds=150 if done else None,
                       failing_job=failing, jobs=jobs, logs=logs)


def tiny() -> CICDState:
    s = CICDState(now=NOW)
    for user, role in (("ada", "developer"), ("bo", "developer"), ("cy", "release_manager"), ("dee", "developer")):
        s.users[user] = User(username=user, name=user.title(), email=f"{user}@eng.x.com", role=role)
    s.projects["PRJ-0001"] = Project(project_id="PRJ-0001", name="payments-api", repo="acme/payments-api",
                                     default_branch="main", branches=["develop", "main"], owners=["ada"],
                                     description="Payments API", created_at="2025-01-01T00:00")
    s.projects["PRJ-0002"] = Project(project_id="PRJ-0002", name="docs-site", repo="acme/docs-site",
                                     default_branch="main", branches=["main"], owners=["bo"],
                                     description="Public docs", created_at="2025-02-01T00:00")
    for sha, pid, branch, at in (("aaaaaaaaa1", "PRJ-0001", "main", "2026-04-06T09:00"),
                                 ("aaaaaaaaa2", "PRJ-0001", "main", "2026-04-07T09:00"),
                                 ("bbbbbbbbb1", "PRJ-0001", "develop", "2026-04-07T11:00"),
                                 ("ddddddddd1", "PRJ-0002", "main", "2026-04-05T09:00")):
        s.commits[sha] = Commit(sha=sha, project_id=pid, branch=branch, author="ada", message=f"change {sha}",
                                committed_at=at)
    jobs = [PipelineJob(name="build:compile", stage="build"), PipelineJob(name="test:unit", stage="test")]
    for ppl, pid in (("PPL-0001", "PRJ-0001"), ("PPL-0002", "PRJ-0002")):
        s.pipelines[ppl] = Pipeline(pipeline_id=ppl, project_id=pid, name="ci", stages=["build", "test"], jobs=jobs)
    s.runs["RUN-0001"] = _run("RUN-0001", "PPL-0001", "PRJ-0001", "aaaaaaaaa1", "main", "passed")
    s.runs["RUN-0002"] = _run("RUN-0002", "PPL-0001", "PRJ-0001", "aaaaaaaaa2", "main", "failed", "test:unit")
    s.runs["RUN-0003"] = _run("RUN-0003", "PPL-0001", "PRJ-0001", "bbbbbbbbb1", "develop", "running")
    s.runs["RUN-0004"] = _run("RUN-0004", "PPL-0002", "PRJ-0002", "ddddddddd1", "main", "passed")
    for art, pid, version, run in (("ART-0001", "PRJ-0001", "v1.0.1", "RUN-0001"),
                                   ("ART-0002", "PRJ-0001", "v1.0.2", "RUN-0002"),
                                   ("ART-0003", "PRJ-0002", "v0.1.0", "RUN-0004")):
        s.artifacts[art] = Artifact(artifact_id=art, project_id=pid, version=version, run_id=run,
                                    commit_sha=s.runs[run].commit_sha, created_at="2026-04-07T10:03", size_mb=50.0)
    n = 0
    for pid in ("PRJ-0001", "PRJ-0002"):
        for name in ("dev", "staging", "production"):
            n += 1
            s.environments[f"ENV-{n:04d}"] = Environment(
                environment_id=f"ENV-{n:04d}", project_id=pid, name=name,
                requires_passing_run=name != "dev", requires_approval=name == "production",
                requires_staging_success=name == "production",
                variables=[EnvVariable(name="DB_PASSWORD", secret=True, value=None, updated_at="2026-01-01T00:00"),
                           EnvVariable(name="LOG_LEVEL", secret=False, value="info", updated_at="2026-01-01T00:00")])
    s.freezes["FRZ-0001"] = DeployFreeze(freeze_id="FRZ-0001", project_id="PRJ-0002", environment="production",
                                         starts_at="2026-04-08T00:00", ends_at="2026-04-10T00:00",
                                         reason="launch week", created_by="bo")
    dep = dict(created_at="2026-04-07T12:00", finished_at="2026-04-07T12:05")
    s.deployments["DEP-0001"] = Deployment(deployment_id="DEP-0001", project_id="PRJ-0001", environment="dev",
                                           artifact_id="ART-0001", version="v1.0.1", status="succeeded",
                                           deployer="ada", **dep)
    s.deployments["DEP-0002"] = Deployment(deployment_id="DEP-0002", project_id="PRJ-0001", environment="staging",
                                           artifact_id="ART-0001", version="v1.0.1", status="failed",
                                           deployer="ada", **dep)
    s.deployments["DEP-0003"] = Deployment(deployment_id="DEP-0003", project_id="PRJ-0002", environment="staging",
                                           artifact_id="ART-0003", version="v0.1.0", status="succeeded",
                                           deployer="bo", **dep)
    s.deployments["DEP-0004"] = Deployment(deployment_id="DEP-0004", project_id="PRJ-0002",
                                           environment="production", artifact_id="ART-0003", version="v0.1.0",
                                           status="succeeded", deployer="bo", approver="cy",
                                           approved_at="2026-04-07T12:01", **dep)
    s.incidents["INC-0001"] = Incident(incident_id="INC-0001", project_id="PRJ-0001", deployment_id="DEP-0002",
                                       title="v1.0.1 failed to roll out to staging", severity="sev2",
                                       status="open", opened_at="2026-04-07T12:05")
    return s


hub = hub_fixture(SERVER, tiny)


def test_projects(hub: Hub) -> None:
    assert ok(hub, "list_ci_projects", query="PAYMENTS")["projects"][0]["project_id"] == "PRJ-0001"
    assert ok(hub, "list_ci_projects", owner="bo")["total"] == 1
    page = ok(hub, "list_ci_projects", limit=1)
    assert page["next_offset"] == 1 and ok(hub, "list_ci_projects", offset=1)["next_offset"] is None
    info = ok(hub, "get_ci_project", project_id="PRJ-0001")
    heads = {h["branch"]: h for h in info["branch_heads"]}
    assert heads["main"]["head_sha"] == "aaaaaaaaa2" and heads["main"]["last_run_status"] == "failed"
    assert heads["develop"]["last_run_id"] == "RUN-0003"
    assert info["running_versions"] == {"dev": "v1.0.1", "staging": None, "production": None}
    assert [p["pipeline_id"] for p in info["pipelines"]] == ["PPL-0001"]
    fails(hub, "get_ci_project", "project 'PRJ-9' not found", "list_ci_projects", "PRJ-0001", project_id="PRJ-9")


def test_runs_and_logs(hub: Hub) -> None:
    runs = ok(hub, "list_pipeline_runs", project_id="PRJ-0001")
    assert runs["total"] == 3
    assert ok(hub, "list_pipeline_runs", project_id="PRJ-0001", branch="main", status="failed")["runs"][0][
        "run_id"] == "RUN-0002"
    assert ok(hub, "list_pipeline_runs", project_id="PRJ-0001", limit=2)["next_offset"] == 2
    fails(hub, "list_pipeline_runs", "branch 'master' does not exist", "develop, main",
          project_id="PRJ-0001", branch="master")
    fails(hub, "list_pipeline_runs", "status", "'queued'", project_id="PRJ-0001", status="green")
    run = ok(hub, "get_pipeline_run", run_id="RUN-0001")
    assert run["artifact_version"] == "v1.0.1" and run["commit"]["sha"] == "aaaaaaaaa1"
    assert run["pipeline_name"] == "ci"
    assert ok(hub, "get_pipeline_run", run_id="RUN-0003")["artifact_id"] is None
    fails(hub, "get_pipeline_run", "pipeline run 'RUN-77' not found", run_id="RUN-77")
    logs = ok(hub, "get_run_logs", run_id="RUN-0002", job="test:unit")
    assert logs["failing_job"] == "test:unit" and len(logs["lines"]) == 2 and "AssertionError" in logs["lines"][0]
    assert len(ok(hub, "get_run_logs", run_id="RUN-0002")["lines"]) == 3
    fails(hub, "get_run_logs", "job 'deploy' is not part", "build:compile, test:unit", run_id="RUN-0002",
          job="deploy")


def test_trigger_pipeline_run(hub: Hub) -> None:
    run = ok(hub, "trigger_pipeline_run", project_id="PRJ-0001", pipeline_id="PPL-0001", branch="main",
             triggered_by="bo")
    assert run["run_id"] == "RUN-0005" and run["commit_sha"] == "aaaaaaaaa2" and run["status"] == "queued"
    assert [j["status"] for j in run["jobs"]] == ["pending", "pending"]
    queued = ok(hub, "list_pipeline_runs", project_id="PRJ-0001", status="queued")
    assert [r["run_id"] for r in queued["runs"]] == ["RUN-0005"]
    fails(hub, "trigger_pipeline_run", "already queued", project_id="PRJ-0001", pipeline_id="PPL-0001",
          branch="main", triggered_by="bo")
    assert ok(hub, "trigger_pipeline_run", project_id="PRJ-0001", pipeline_id="PPL-0001", branch="main",
              commit_sha="aaaaaaaaa1", triggered_by="bo")["run_id"] == "RUN-0006"
    fails(hub, "trigger_pipeline_run", "branch 'feature/x' does not exist", "develop, main",
          project_id="PRJ-0001", pipeline_id="PPL-0001", branch="feature/x", triggered_by="bo")
    fails(hub, "trigger_pipeline_run", "pipeline 'PPL-0002' not found in PRJ-0001", "PPL-0001",
          project_id="PRJ-0001", pipeline_id="PPL-0002", branch="main", triggered_by="bo")
    fails(hub, "trigger_pipeline_run", "commit 'bbbbbbbbb1' is not on branch 'main'", "aaaaaaaaa2",
          project_id="PRJ-0001", pipeline_id="PPL-0001", branch="main", commit_sha="bbbbbbbbb1",
          triggered_by="bo")
    fails(hub, "trigger_pipeline_run", "user 'zed' not found", "triggered_by", project_id="PRJ-0001",
          pipeline_id="PPL-0001", branch="develop", triggered_by="zed")


def test_cancel_and_retry(hub: Hub) -> None:
    run = ok(hub, "cancel_pipeline_run", run_id="RUN-0003")
    assert run["status"] == "cancelled" and run["finished_at"] is not None
    assert [j["status"] for j in run["jobs"]] == ["passed", "cancelled"]
    assert ok(hub, "get_pipeline_run", run_id="RUN-0003")["run"]["status"] == "cancelled"
    fails(hub, "cancel_pipeline_run", "already finished (cancelled", run_id="RUN-0003")
    fails(hub, "cancel_pipeline_run", "already finished (passed", run_id="RUN-0001")
    retry = ok(hub, "retry_pipeline_run", run_id="RUN-0002", triggered_by="ada")
    assert retry["run_id"] == "RUN-0005" and retry["retry_of"] == "RUN-0002" and retry["commit_sha"] == "aaaaaaaaa2"
    fails(hub, "retry_pipeline_run", "RUN-0005", "already queued", run_id="RUN-0002", triggered_by="ada")
    fails(hub, "retry_pipeline_run", "is still queued", run_id="RUN-0005", triggered_by="ada")
    fails(hub, "retry_pipeline_run", "passed; there is nothing to retry", run_id="RUN-0001", triggered_by="ada")
    ok(hub, "cancel_pipeline_run", run_id="RUN-0005")
    assert ok(hub, "retry_pipeline_run", run_id="RUN-0003", triggered_by="bo")["branch"] == "develop"


def test_artifacts_and_environments(hub: Hub) -> None:
    arts = ok(hub, "list_build_artifacts", project_id="PRJ-0001")
    assert [(a["artifact"]["version"], a["run_status"]) for a in arts["artifacts"]] == [
        ("v1.0.2", "failed"), ("v1.0.1", "passed")]
    assert arts["artifacts"][1]["running_in"] == ["dev"]
    assert ok(hub, "list_build_artifacts", project_id="PRJ-0001", passing_only=True)["total"] == 1
    assert ok(hub, "list_build_artifacts", project_id="PRJ-0001", version="v1.0.2")["total"] == 1
    fails(hub, "list_build_artifacts", "project 'PRJ-0' not found", project_id="PRJ-0")
    envs = {e["environment"]["name"]: e for e in ok(hub, "list_environments", project_id="PRJ-0002")["environments"]}
    assert envs["production"]["active_freeze"]["freeze_id"] == "FRZ-0001"
    assert envs["production"]["current_version"] == "v0.1.0" and envs["dev"]["current_version"] is None
    assert envs["production"]["environment"]["requires_approval"] is True


def test_list_environments_pages(hub: Hub) -> None:
    def names(res: dict) -> list[str]:
        return [e["environment"]["name"] for e in res["environments"]]

    first = ok(hub, "list_environments", project_id="PRJ-0001", limit=2)
    assert (first["total"], first["next_offset"], names(first)) == (3, 2, ["dev", "staging"])
    second = ok(hub, "list_environments", project_id="PRJ-0001", offset=first["next_offset"], limit=2)
    assert (second["total"], second["next_offset"], names(second)) == (3, None, ["production"])
    assert names(first) + names(second) == names(ok(hub, "list_environments", project_id="PRJ-0001"))


def test_deploy_approve_flow(hub: Hub) -> None:
    fails(hub, "deploy_artifact", "built by run RUN-0002, which failed in job test:unit", "passed runs",
          artifact_id="ART-0002", environment="staging", deployer="ada")
    fails(hub, "deploy_artifact", "no successful staging deployment", "staging first",
          artifact_id="ART-0001", environment="production", deployer="ada")
    fails(hub, "deploy_artifact", "already live in dev", artifact_id="ART-0001", environment="dev", deployer="ada")
    fails(hub, "deploy_artifact", "artifact 'ART-9' not found", "list_build_artifacts", artifact_id="ART-9",
          environment="dev", deployer="ada")
    fails(hub, "deploy_artifact", "environment", "'production'", artifact_id="ART-0001", environment="qa",
          deployer="ada")
    staged = ok(hub, "deploy_artifact", artifact_id="ART-0001", environment="staging", deployer="ada")
    assert staged["status"] == "succeeded" and staged["deployment_id"] == "DEP-0005"
    prod = ok(hub, "deploy_artifact", artifact_id="ART-0001", environment="production", deployer="ada")
    assert prod["status"] == "pending_approval"
    fails(hub, "deploy_artifact", "already has deployment DEP-0006 pending_approval",
          artifact_id="ART-0001", environment="production", deployer="bo")
    fails(hub, "approve_deployment", "'ada' requested deployment DEP-0006", deployment_id="DEP-0006", approver="ada")
    fails(hub, "approve_deployment", "'dee' may not approve", "project owners: ada", deployment_id="DEP-0006",
          approver="dee")
    done = ok(hub, "approve_deployment", deployment_id="DEP-0006", approver="cy")
    assert done["status"] == "succeeded" and done["approver"] == "cy"
    fails(hub, "approve_deployment", "is succeeded, not pending_approval", deployment_id="DEP-0006", approver="cy")
    env = ok(hub, "list_environments", project_id="PRJ-0001")["environments"][2]
    assert env["current_version"] == "v1.0.1" and env["current_deployment_id"] == "DEP-0006"
    assert ok(hub, "get_ci_project", project_id="PRJ-0001")["running_versions"]["production"] == "v1.0.1"
    # Dev accepts artifacts of failed runs.
    assert ok(hub, "deploy_artifact", artifact_id="ART-0002", environment="dev", deployer="bo")["status"] == "succeeded"


def test_freezes(hub: Hub) -> None:
    fails(hub, "deploy_artifact", "frozen until 2026-04-10T00:00", "FRZ-0001", artifact_id="ART-0003",
          environment="production", deployer="bo")
    ok(hub, "deploy_artifact", artifact_id="ART-0001", environment="staging", deployer="ada")
    pending = ok(hub, "deploy_artifact", artifact_id="ART-0001", environment="production", deployer="ada")
    frz = ok(hub, "create_deploy_freeze", project_id="PRJ-0001", environment="production",
             starts_at="2026-04-08T14:00", ends_at="2026-04-09T09:00", reason="incident review", created_by="ada")
    assert frz["freeze_id"] == "FRZ-0002"
    fails(hub, "approve_deployment", "cannot approve", "frozen until 2026-04-09T09:00", "FRZ-0002",
          deployment_id=pending["deployment_id"], approver="cy")
    assert ok(hub, "list_environments", project_id="PRJ-0001")["environments"][2]["active_freeze"]["reason"] == \
        "incident review"
    args = dict(project_id="PRJ-0001", environment="production", reason="x-mas", created_by="ada")
    fails(hub, "create_deploy_freeze", "overlaps freeze FRZ-0002", starts_at="2026-04-09T08:00",
          ends_at="2026-04-12T00:00", **args)
    fails(hub, "create_deploy_freeze", "must be after starts_at", starts_at="2026-05-02T00:00",
          ends_at="2026-05-01T00:00", **args)
    fails(hub, "create_deploy_freeze", "at most 30 days", starts_at="2026-05-01T00:00",
          ends_at="2026-07-01T00:00", **args)
    fails(hub, "create_deploy_freeze", "already in the past", starts_at="2026-03-01T00:00",
          ends_at="2026-03-02T00:00", **args)
    fails(hub, "create_deploy_freeze", "starts_at must be a date and time YYYY-MM-DDTHH:MM", starts_at="next friday",
          ends_at="2026-05-01T00:00", **args)
    fails(hub, "create_deploy_freeze", "between 2000 and 2100", starts_at="9999-01-01T00:00",
          ends_at="9999-01-02T00:00", **args)
    later = ok(hub, "create_deploy_freeze", starts_at="2026-05-01T00:00", ends_at="2026-05-03T00:00", **args)
    assert ok(hub, "list_environments", project_id="PRJ-0001")["environments"][2]["upcoming_freezes"][0][
        "freeze_id"] == later["freeze_id"]


def test_rollback(hub: Hub) -> None:
    fails(hub, "rollback_deployment", "nothing is live in production", project_id="PRJ-0001",
          environment="production", deployer="ada")
    fails(hub, "rollback_deployment", "no earlier successful deployment", "live: v1.0.1", project_id="PRJ-0001",
          environment="dev", deployer="ada")
    ok(hub, "deploy_artifact", artifact_id="ART-0002", environment="dev", deployer="ada")
    back = ok(hub, "rollback_deployment", project_id="PRJ-0001", environment="dev", deployer="ada")
    assert back["version"] == "v1.0.1" and back["rollback_of"] == "DEP-0005" and back["status"] == "succeeded"
    assert ok(hub, "get_deployment", deployment_id="DEP-0005")["deployment"]["status"] == "rolled_back"
    assert ok(hub, "list_deployments", project_id="PRJ-0001", status="rolled_back")["total"] == 1
    fails(hub, "rollback_deployment", "no earlier successful deployment", project_id="PRJ-0001",
          environment="dev", deployer="ada")


def test_deployments_read(hub: Hub) -> None:
    deps = ok(hub, "list_deployments", project_id="PRJ-0001")
    assert deps["total"] == 2
    assert ok(hub, "list_deployments", project_id="PRJ-0002", environment="production")["deployments"][0][
        "approver"] == "cy"
    assert ok(hub, "list_deployments", project_id="PRJ-0002", limit=1)["next_offset"] == 1
    info = ok(hub, "get_deployment", deployment_id="DEP-0002")
    assert info["run_id"] == "RUN-0001" and info["incidents"][0]["incident_id"] == "INC-0001"
    fails(hub, "get_deployment", "deployment 'DEP-99' not found", deployment_id="DEP-99")


def test_environment_variables(hub: Hub) -> None:
    var = ok(hub, "set_environment_variable", project_id="PRJ-0001", environment="staging", name="API_TIMEOUT",
             value="30")
    assert var == {"name": "API_TIMEOUT", "secret": False, "value": "30", "updated_at": NOW}
    secret = ok(hub, "set_environment_variable", project_id="PRJ-0001", environment="staging",
                name="STRIPE_KEY", value="sk_live_123", secret=True)
    assert secret["value"] is None
    ok(hub, "set_environment_variable", project_id="PRJ-0001", environment="staging", name="LOG_LEVEL",
       value="debug")
    env = ok(hub, "list_environments", project_id="PRJ-0001")["environments"][1]["environment"]
    assert [(v["name"], v["value"]) for v in env["variables"]] == [
        ("API_TIMEOUT", "30"), ("DB_PASSWORD", None), ("LOG_LEVEL", "debug"), ("STRIPE_KEY", None)]
    fails(hub, "set_environment_variable", "'DB_PASSWORD' is a secret", project_id="PRJ-0001",
          environment="staging", name="DB_PASSWORD", value="plain")
    for bad in ("api_timeout", "API-TIMEOUT", "API__X", "_API"):
        fails(hub, "set_environment_variable", f"name '{bad}' must be UPPER_SNAKE", project_id="PRJ-0001",
              environment="staging", name=bad, value="1")
    fails(hub, "set_environment_variable", "cannot change variables", "FRZ-0001", project_id="PRJ-0002",
          environment="production", name="LOG_LEVEL", value="warn")
