"""Hotels MCP server (travel): hotel search, room availability, reservations, loyalty points, reviews."""

from prove.env.registry import ServerSpec
from prove_servers.hotels import tools
from prove_servers.hotels.state import HotelState, initial_state

SERVER = ServerSpec.build(
    name="hotels",
    family="travel",
    description="Hotel booking: hotels, room types and nightly availability, guests, reservations, reviews.",
    state_model=HotelState,
    initial_state=initial_state,
    tools_module=tools,
)
