"""CRM MCP server (knowledge): accounts, contacts, leads, opportunities; `prove serve --stdio crm`."""

from prove.env.registry import ServerSpec
from prove_servers.crm import tools
from prove_servers.crm.state import CRMState, initial_state

SERVER = ServerSpec.build(
    name="crm",
    family="knowledge",
    description="Sales CRM: accounts, contacts, leads and conversion, opportunities through stages, "
    "activities, reps with quotas and capacity, products and quotes.",
    state_model=CRMState,
    initial_state=initial_state,
    tools_module=tools,
)
