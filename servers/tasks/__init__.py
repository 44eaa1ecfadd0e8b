"""Tasks MCP server (productivity): projects, members, tasks, dependencies, time; `prove serve --stdio tasks`."""

from prove.env.registry import ServerSpec
from prove_servers.tasks import tools
from prove_servers.tasks.state import TaskState, initial_state

SERVER = ServerSpec.build(
    name="tasks",
    family="productivity",
    description="Project and task management: projects, member roles, tasks, dependencies, comments, time logs, milestones.",
    state_model=TaskState,
    initial_state=initial_state,
    tools_module=tools,
)
