"""Food delivery MCP server (commerce): `prove serve --stdio fooddelivery` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.fooddelivery import tools
from prove_servers.fooddelivery.state import FoodState, initial_state

SERVER = ServerSpec.build(
    name="fooddelivery",
    family="commerce",
    description="Food delivery app: restaurants, menus, baskets, promos, orders, couriers, tips, ratings.",
    state_model=FoodState,
    initial_state=initial_state,
    tools_module=tools,
)
