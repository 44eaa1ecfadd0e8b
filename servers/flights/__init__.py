"""Flights MCP server (travel): airline booking; `prove serve --stdio flights` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.flights import tools
from prove_servers.flights.state import FlightState, initial_state

SERVER = ServerSpec.build(
    name="flights",
    family="travel",
    description="Airline: airports, flight search and status, seat maps, bookings, check-in, miles upgrades.",
    state_model=FlightState,
    initial_state=initial_state,
    tools_module=tools,
)
