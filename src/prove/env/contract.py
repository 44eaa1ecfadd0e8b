"""The server contract: what every PROVE server must have, its limits, and `check_server` that says what breaks it.

    from prove.env.contract import check_server
    problems = check_server(load_registry().server("banking"))   # [] when it keeps the contract

tests/env/test_server_contract.py runs `check_server` over whatever `load_registry()` returns (so
`PROVE_SERVERS=banking,<name>` checks the new server beside the reference). What a server must have:

- a package `prove_servers.<name>` (a folder under servers/, or under a directory named in
  `PROVE_SERVER_PATH`) exporting `SERVER = ServerSpec.build(...)`, `<name>` lower_snake;
- a family from `FAMILIES` (`prove.env.registry`, the one list) and a one-line description;
- a state model subclassing `ServerState`, its entities `Record`s in dicts keyed by id, at least one
  such table seeded by `initial_state(seed)`; `initial_state` returns that model, is
  deterministic (the same seed gives the same state hash, every time) and writes no id counter
  (`new_id` continues from the seeded ids);
- tools: at least one read and one write (the episode, exactly-once and fuzz tests need both),
  each with a lower_snake name a model API accepts, a description, every parameter described,
  every `Literal` surfacing as an enum, every string that is no id, enum or date declaring the
  kind of text it takes (`prove.env.types.text`), an object output schema from a pydantic return
  type;
- errors raised as `prove.env.errors.ToolError` (through `require`, `lookup` or directly), whose
  facts (reason, parameters, rejected values, choices) travel as data; a module that imports MCP's
  own ToolError raises errors synthesis cannot read;
- the declared-meaning rules of servers/README ("Meaning is declared once, in the type": id
  parameters declare their entity kind and some tool returns it, one date format, paged listings,
  names that say whose noun) are part of the contract and are checked by
  tests/env/test_declarations.py, not again here.

The intents file `data/intents/<name>.yaml` is optional (`INTENTS_REQUIRED`): without it synthesis
words each user request from the tool's own description and parameters and draws off-tool
requests from a generic pool; with it, tests/synth/test_intents.py checks its rules.

The paper's inventory (20 named servers, 343 tools, 10-25 tools each with an enum and a sensitive
parameter, at least two servers per family) is a property of that library, not a rule for a new
server: `check_paper_inventory` checks it by name, and tests/env/test_registry.py runs it once.
"""

from __future__ import annotations

import re
import sys
import typing
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from pydantic import BaseModel

from prove.env.registry import FAMILIES, Registry, ServerSpec
from prove.env.state import Record, ServerState, state_hash
from prove.env.tool import ToolSpec
from prove.env.types import TEXT_KINDS, declared_entity, declared_format, declared_text

__all__ = [
    "NAME_PATTERN", "MAX_SERVER_NAME_CHARS", "MAX_TOOL_NAME_CHARS", "MIN_DESCRIPTION_CHARS",
    "MIN_READ_TOOLS", "MIN_WRITE_TOOLS", "MAX_TOOLS", "CONTRACT_SEEDS", "INTENTS_REQUIRED",
    "FAMILIES", "PAPER_INVENTORY", "PAPER_TOOLS", "PAPER_TOOLS_PER_SERVER",
    "PAPER_MIN_SERVERS_PER_FAMILY", "check_server", "check_tool", "check_name",
    "check_paper_inventory",
]

NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
"""A server or tool name: lower_snake, starting with a letter (`banking`, `transfer_funds`)."""
MAX_SERVER_NAME_CHARS = 32
MAX_TOOL_NAME_CHARS = 64
"""Longest function name the model APIs accept (OpenAI: ^[a-zA-Z0-9_-]{1,64}$)."""
MIN_DESCRIPTION_CHARS = 15
"""Shortest server or tool description: a phrase that says what it does, not a label."""
MIN_READ_TOOLS = 1
MIN_WRITE_TOOLS = 1
MAX_TOOLS = 40
"""A design limit, not a technical one: a server offers all its tools to a policy at once; past
40, split it (the paper's servers have 17-18)."""
CONTRACT_SEEDS = (0, 1)
"""Seeds `check_server` builds the initial state from, twice each."""
INTENTS_REQUIRED = False
"""data/intents/<name>.yaml is optional; see the module docstring for what synthesis does without it."""

PAPER_INVENTORY: Mapping[str, int] = {
    "banking": 17, "brokerage": 18, "calendar": 17, "carrental": 17, "cicd": 17, "codehost": 17,
    "crm": 17, "email": 18, "expenses": 17, "flights": 17, "fooddelivery": 17, "hotels": 18,
    "messaging": 17, "shop": 17, "smarthome": 17, "socialfeed": 17, "support": 17, "tasks": 17,
    "vehicle": 17, "wiki": 17,
}
"""The paper's 20 servers and their tool counts."""
PAPER_TOOLS = 343
PAPER_TOOLS_PER_SERVER = (10, 25)
PAPER_MIN_SERVERS_PER_FAMILY = 2


def check_name(name: str, what: str, max_chars: int) -> str | None:
    """None if `name` is a valid lower_snake name, else what is wrong and what is valid."""
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name) or len(name) > max_chars:
        return (f"{what} {name!r} is not a valid name: use lower_snake letters and digits, starting "
                f"with a letter, at most {max_chars} characters (e.g. 'banking', 'transfer_funds')")
    return None


def _has_enum(schema: Mapping[str, Any]) -> bool:
    """An enum at the top, inside anyOf/oneOf, or in a list's items."""
    if "enum" in schema or "const" in schema:
        return True
    nested = [*schema.get("anyOf", []), *schema.get("oneOf", [])]
    if isinstance(schema.get("items"), Mapping):
        nested.append(schema["items"])
    return any(_has_enum(s) for s in nested)


def _free_string(prop: Mapping[str, Any], defs: Mapping[str, Any]) -> bool:
    """A string (or list of strings) parameter that declares no entity, enum or format: free text
    or a value, which must say which with `text`."""
    if declared_entity(prop, defs) or _has_enum(prop) or declared_format(prop):
        return False
    options = [o for o in prop.get("anyOf", ()) if o.get("type") != "null"] or [prop]
    node = options[0]
    if node.get("type") == "array":
        node = node.get("items", {})
    return node.get("type") == "string"


def check_tool(spec: ToolSpec) -> list[str]:
    """What is wrong with one tool's declaration (empty when nothing is)."""
    where = f"tool {spec.name}"
    problems = []
    bad_name = check_name(spec.name, "tool name", MAX_TOOL_NAME_CHARS)
    if bad_name:
        problems.append(bad_name)
    if len(spec.description) < MIN_DESCRIPTION_CHARS:
        problems.append(f"{where}: its docstring is the description and must say what it does in at "
                        f"least {MIN_DESCRIPTION_CHARS} characters; got {spec.description!r}")
    schema = spec.input_schema
    if schema.get("type") != "object" or schema.get("additionalProperties") is not False:
        problems.append(f"{where}: input schema must be an object refusing unknown arguments")
    try:
        hints = typing.get_type_hints(spec.fn, include_extras=True)
    except Exception as exc:  # an unresolvable annotation
        return [*problems, f"{where}: its type hints do not resolve ({exc})"]
    for pname, prop in schema.get("properties", {}).items():
        if not prop.get("description"):
            problems.append(f"{where}: parameter '{pname}' has no description; declare it as "
                            "Annotated[T, Field(description=...)] or with a prove.env.types alias")
        if "Literal" in repr(hints.get(pname)) and not _has_enum(prop):
            problems.append(f"{where}: parameter '{pname}' is a Literal but its schema has no enum")
        if _free_string(prop, schema.get("$defs", {})) and declared_text(prop) is None:
            problems.append(f"{where}: parameter '{pname}' takes a string that is no id, enum or date; "
                            "declare what it takes with prove.env.types.text(kind, description, "
                            f"listed=..., example=...), kind one of {', '.join(TEXT_KINDS)}")
    returned = hints.get("return")
    if not (isinstance(returned, type) and issubclass(returned, BaseModel)):
        problems.append(f"{where}: must return a pydantic model (its schema is the output schema); "
                        f"returns {returned!r}")
    elif not spec.output_schema or spec.output_schema.get("type") != "object":
        problems.append(f"{where}: its output schema must be a JSON object")
    unknown = sorted(set(spec.sensitive) - set(spec.params))
    if unknown:
        problems.append(f"{where}: sensitive names unknown parameters {unknown}; valid: {list(spec.params)}")
    return problems


def _tables(state: ServerState) -> dict[str, dict[Any, Any]]:
    return {k: v for k, v in state.__dict__.items() if isinstance(v, dict) and k != "counters"}


def _check_errors(spec: ServerSpec, package: str) -> list[str]:
    """Modules of the server's package that would raise MCP's unstructured ToolError."""
    return [f"server {spec.name}: {name} imports MCP's ToolError, whose errors carry no facts; "
            f"raise prove.env.errors.ToolError (or use require/lookup from prove.env.helpers) with "
            f"its reason, params, rejected values and choices"
            for name, module in sorted(sys.modules.items())
            if (name == package or name.startswith(package + "."))
            and getattr(module, "ToolError", None) is McpToolError]


def _check_state(spec: ServerSpec) -> list[str]:
    where = f"server {spec.name}"
    if not (isinstance(spec.state_model, type) and issubclass(spec.state_model, ServerState)):
        return [f"{where}: state_model must subclass prove.env.state.ServerState, got {spec.state_model!r}"]
    problems: list[str] = []
    for seed in CONTRACT_SEEDS:
        try:
            first, again = spec.initial_state(seed), spec.initial_state(seed)
        except Exception as exc:
            return [f"{where}: initial_state({seed}) raised {type(exc).__name__}: {exc}"]
        if type(first) is not spec.state_model:
            return [f"{where}: initial_state({seed}) must return a {spec.state_model.__name__}, "
                    f"got {type(first).__name__}"]
        if first.counters:
            problems.append(f"{where}: initial_state({seed}) sets counters {sorted(first.counters)}; "
                            "leave them empty: state.new_id(prefix) continues from the largest "
                            "seeded <prefix>-<n> by itself")
        if state_hash(first) != state_hash(again):
            problems.append(f"{where}: initial_state({seed}) is not deterministic: two calls gave "
                            "different state hashes; draw every random value from its own "
                            "random.Random(seed), never the wall clock, global random or uuid4")
        if seed != CONTRACT_SEEDS[0]:
            continue
        try:
            datetime.fromisoformat(first.now)
        except (TypeError, ValueError):
            problems.append(f"{where}: `now` must be an ISO date-time like '2026-03-16T09:00', "
                            f"got {first.now!r}")
        tables = _tables(first)
        for field, table in tables.items():
            loose = [type(v).__name__ for v in table.values()
                     if isinstance(v, BaseModel) and not isinstance(v, Record)]
            if loose:
                problems.append(f"{where}: entities in '{field}' must subclass prove.env.state.Record "
                                f"(unknown fields refused), found {sorted(set(loose))}")
        seeded = [f for f, t in tables.items() if t and all(isinstance(v, Record) for v in t.values())]
        if not seeded:
            problems.append(f"{where}: initial_state({seed}) seeds no entity table; a state holds its "
                            f"entities as Records in dicts keyed by id (tables: {sorted(tables) or 'none'})")
    return problems


def check_server(spec: ServerSpec) -> list[str]:
    """Every way `spec` breaks the server contract, each saying what is wrong and what is valid."""
    where = f"server {spec.name}"
    problems = []
    bad_name = check_name(spec.name, "server name", MAX_SERVER_NAME_CHARS)
    if bad_name:
        problems.append(bad_name)
    package = f"prove_servers.{spec.name}"
    module = getattr(spec.state_model, "__module__", "")
    if module != package and not module.startswith(package + "."):
        problems.append(f"{where}: must live in the package {package} (servers/{spec.name}/ or a "
                        f"PROVE_SERVER_PATH directory) so PROVE_SERVERS selects it; its state model "
                        f"is in {module!r}")
    if spec.family not in FAMILIES:
        problems.append(f"{where}: family {spec.family!r} is not one of {', '.join(FAMILIES)}")
    if len(spec.description.strip()) < MIN_DESCRIPTION_CHARS:
        problems.append(f"{where}: description must say what the app holds in at least "
                        f"{MIN_DESCRIPTION_CHARS} characters; got {spec.description!r}")
    problems += _check_state(spec)
    problems += _check_errors(spec, package)
    reads = sum(not t.write for t in spec.tools)
    writes = len(spec.tools) - reads
    if reads < MIN_READ_TOOLS or writes < MIN_WRITE_TOOLS:
        problems.append(f"{where}: needs at least {MIN_READ_TOOLS} read tool (@tool()) and "
                        f"{MIN_WRITE_TOOLS} write tool (@tool(write=True)); has {reads} read, "
                        f"{writes} write")
    if len(spec.tools) > MAX_TOOLS:
        problems.append(f"{where}: {len(spec.tools)} tools; at most {MAX_TOOLS}, split the server")
    for t in spec.tools:
        if t.server != spec.name:
            problems.append(f"tool {t.name}: belongs to server {t.server!r}, not {spec.name!r}")
        problems += check_tool(t)
    return problems


def check_paper_inventory(registry: Registry) -> list[str]:
    """What differs from the paper's library: its 20 servers by name with their tool counts, 343
    tools, 10-25 tools per server with an enum and a sensitive parameter, at least two servers per
    family. Servers beyond those 20 (a new one, an out-of-tree one) are not its concern."""
    problems = []
    missing = sorted(set(PAPER_INVENTORY) - set(registry.servers))
    if missing:
        problems.append(f"paper servers missing from the registry: {missing}")
    paper = [registry.servers[n] for n in PAPER_INVENTORY if n in registry.servers]
    low, high = PAPER_TOOLS_PER_SERVER
    for s in paper:
        if len(s.tools) != PAPER_INVENTORY[s.name]:
            problems.append(f"{s.name}: {len(s.tools)} tools, the paper's inventory has "
                            f"{PAPER_INVENTORY[s.name]} (update PAPER_INVENTORY and the paper together)")
        if not low <= len(s.tools) <= high:
            problems.append(f"{s.name}: {len(s.tools)} tools, the paper's servers have {low}-{high}")
        if not any(t.sensitive for t in s.tools):
            problems.append(f"{s.name}: declares no sensitive parameter")
        if not any("enum" in repr(t.input_schema) for t in s.tools):
            problems.append(f"{s.name}: has no enum parameter")
    total = sum(len(s.tools) for s in paper)
    if not missing and total != PAPER_TOOLS:
        problems.append(f"the paper's servers have {total} tools, the paper says {PAPER_TOOLS}")
    per_family = {f: sum(s.family == f for s in paper) for f in FAMILIES}
    thin = {f: n for f, n in per_family.items() if n < PAPER_MIN_SERVERS_PER_FAMILY}
    if thin:
        problems.append(f"families with fewer than {PAPER_MIN_SERVERS_PER_FAMILY} paper servers: {thin}")
    return problems
