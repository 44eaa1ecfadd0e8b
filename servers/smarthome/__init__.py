"""Smart-home MCP server (iot): homes, devices, scenes, automations; `prove serve --stdio smarthome`."""

from prove.env.registry import ServerSpec
from prove_servers.smarthome import tools
from prove_servers.smarthome.state import SmartHomeState, initial_state

SERVER = ServerSpec.build(
    name="smarthome",
    family="iot",
    description="Smart-home hub: homes, rooms, lights, thermostats, locks, cameras, plugs, scenes, "
    "automations and energy use.",
    state_model=SmartHomeState,
    initial_state=initial_state,
    tools_module=tools,
)
