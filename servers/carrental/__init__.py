"""Car rental MCP server (travel): branches, car search and quotes, rentals, damage reports, rides."""

from prove.env.registry import ServerSpec
from prove_servers.carrental import tools
from prove_servers.carrental.state import CarRentalState, initial_state

SERVER = ServerSpec.build(
    name="carrental",
    family="travel",
    description="Car rental and rides: branches, vehicles, rental reservations, pickups and returns, ride requests.",
    state_model=CarRentalState,
    initial_state=initial_state,
    tools_module=tools,
)
