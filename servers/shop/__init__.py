"""Shop MCP server (commerce): catalog, carts, coupons, orders; `prove serve --stdio shop` runs it alone."""

from prove.env.registry import ServerSpec

from . import tools
from .state import ShopState, initial_state

SERVER = ServerSpec.build(
    name="shop",
    family="commerce",
    description="Online shop: product catalog and reviews, shopping carts, coupons, orders, shipping, returns.",
    state_model=ShopState,
    initial_state=initial_state,
    tools_module=tools,
)
