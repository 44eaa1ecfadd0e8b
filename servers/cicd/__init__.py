"""CI/CD MCP server (developer): pipelines, artifacts, environments and deployments; `prove serve --stdio cicd`."""

from prove.env.registry import ServerSpec
from prove_servers.cicd import tools
from prove_servers.cicd.state import CICDState, initial_state

SERVER = ServerSpec.build(
    name="cicd",
    family="developer",
    description="CI/CD platform: services, pipeline runs and logs, build artifacts, environments "
    "with protection rules and freezes, deployments, approvals and rollbacks.",
    state_model=CICDState,
    initial_state=initial_state,
    tools_module=tools,
)
