"""Calendar MCP server (productivity): people, calendars, events, rooms; `prove serve --stdio calendar`."""

from prove.env.registry import ServerSpec
from prove_servers.calendar import tools
from prove_servers.calendar.state import CalendarState, initial_state

SERVER = ServerSpec.build(
    name="calendar",
    family="productivity",
    description="Company calendar: people, personal and team calendars, events, invitations, "
    "meeting rooms, reminders.",
    state_model=CalendarState,
    initial_state=initial_state,
    tools_module=tools,
)
