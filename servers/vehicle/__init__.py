"""Connected-vehicle MCP server (iot): a car maker's app; `prove serve --stdio vehicle` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.vehicle import tools
from prove_servers.vehicle.state import VehicleState, initial_state

SERVER = ServerSpec.build(
    name="vehicle",
    family="iot",
    description="Connected cars: owners, drivers and guests; vehicle status, locks, climate, charging, "
    "trips, tire pressures, alerts, service appointments, valet mode, access sharing.",
    state_model=VehicleState,
    initial_state=initial_state,
    tools_module=tools,
)
