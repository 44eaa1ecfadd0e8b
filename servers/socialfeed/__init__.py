"""Social-feed MCP server (social): profiles, posts, follows; `prove serve --stdio socialfeed` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.socialfeed import tools
from prove_servers.socialfeed.state import SocialState, initial_state

SERVER = ServerSpec.build(
    name="socialfeed",
    family="social",
    description="Social network: profiles, follows and follow requests, posts, comments, likes, "
    "reposts, hashtags, notifications, reports.",
    state_model=SocialState,
    initial_state=initial_state,
    tools_module=tools,
)
