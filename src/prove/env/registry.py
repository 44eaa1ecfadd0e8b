"""The server registry: every `prove_servers.<name>.SERVER`, with globally unique tool names.

Use: `from prove.env import load_registry; reg = load_registry(); reg.tool("transfer_funds")`.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import types
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pydantic import BaseModel

from prove.env.state import ServerState
from prove.env.tool import ToolSpec, is_tool

__all__ = ["ServerSpec", "Registry", "load_registry", "FAMILIES", "SERVER_PATH_ENV"]

FAMILIES = (
    "finance",
    "productivity",
    "commerce",
    "travel",
    "social",
    "iot",
    "developer",
    "knowledge",
)


@dataclass(frozen=True)
class ServerSpec:
    """One server: its name, family, state model, seeded initial state and tools."""

    name: str
    family: str
    description: str
    state_model: type[ServerState]
    initial_state: Callable[[int], ServerState]
    tools: tuple[ToolSpec, ...] = field(repr=False)

    @classmethod
    def build(
        cls,
        name: str,
        family: str,
        description: str,
        state_model: type[ServerState],
        initial_state: Callable[[int], ServerState],
        tools_module: types.ModuleType | Iterable[Callable[..., BaseModel]],
    ) -> ServerSpec:
        if family not in FAMILIES:
            raise ValueError(f"server {name}: family {family!r} is not one of {FAMILIES}")
        if isinstance(tools_module, types.ModuleType):
            # Only tools defined in that module: a tool imported from elsewhere is not this server's.
            fns = [f for n, f in vars(tools_module).items() if not n.startswith("_")
                   and is_tool(f) and f.__module__ == tools_module.__name__]
        else:
            fns = [f for f in tools_module if is_tool(f)]
        fns.sort(key=lambda f: f.__code__.co_firstlineno)
        specs = tuple(ToolSpec.from_function(f, name) for f in fns)
        return cls(name, family, description, state_model, initial_state, specs)

    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]


class Registry:
    """Servers by name and tools by globally unique name."""

    def __init__(self, servers: Sequence[ServerSpec]) -> None:
        self.servers: dict[str, ServerSpec] = {}
        self.tools: dict[str, ToolSpec] = {}
        for server in servers:
            if server.name in self.servers:
                raise ValueError(f"duplicate server name {server.name!r}")
            self.servers[server.name] = server
            for spec in server.tools:
                other = self.tools.get(spec.name)
                if other is not None:
                    raise ValueError(
                        f"tool name {spec.name!r} is defined by both {other.server!r} and "
                        f"{server.name!r}; tool names must be globally unique"
                    )
                self.tools[spec.name] = spec

    def server(self, name: str) -> ServerSpec:
        try:
            return self.servers[name]
        except KeyError:
            raise KeyError(
                f"unknown server {name!r}; known servers: {', '.join(self.servers)}"
            ) from None

    def tool(self, name: str) -> ToolSpec:
        try:
            return self.tools[name]
        except KeyError:
            raise KeyError(f"unknown tool {name!r}") from None

    def subset(self, names: Iterable[str]) -> Registry:
        return Registry([self.server(n) for n in names])

    def inventory(self) -> list[dict[str, object]]:
        """One row per tool: server, family, tool, read/write, #params, sensitive params."""
        return [
            {
                "server": s.name,
                "family": s.family,
                "tool": t.name,
                "kind": "write" if t.write else "read",
                "n_params": len(t.params),
                "sensitive": ",".join(t.sensitive),
            }
            for s in self.servers.values()
            for t in s.tools
        ]


SERVER_PATH_ENV = "PROVE_SERVER_PATH"
"""Extra directories (os.pathsep-separated) whose server packages join `prove_servers`."""


def _extend_server_path(path: list[str]) -> None:
    """Append the PROVE_SERVER_PATH directories to `prove_servers.__path__` (once each); refuse a
    missing directory and a package that would shadow one already on the path."""
    for entry in os.environ.get(SERVER_PATH_ENV, "").split(os.pathsep):
        if not entry.strip():
            continue
        directory = os.path.abspath(entry.strip())
        if not os.path.isdir(directory):
            raise ValueError(f"{SERVER_PATH_ENV}: {entry!r} is not a directory; it must name "
                             "directories holding server packages (<dir>/<name>/__init__.py)")
        if directory in path:
            continue
        known = {i.name for i in pkgutil.iter_modules(path) if i.ispkg}
        clash = sorted(known & {i.name for i in pkgutil.iter_modules([directory]) if i.ispkg})
        if clash:
            raise ValueError(f"{SERVER_PATH_ENV}: {directory} holds {clash}, which already exist; "
                             "server names must be unique")
        path.append(directory)


def _server_path_at_import() -> None:
    """Extend the path as soon as prove.env is imported, so `import prove_servers.<name>` finds an
    out-of-tree server too; a bad entry is reported by `load_registry`, not at import."""
    import prove_servers

    try:
        _extend_server_path(prove_servers.__path__)
    except ValueError:
        pass


_server_path_at_import()


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    """Import every package under `prove_servers` that exports SERVER, sorted by name.

    The environment variable PROVE_SERVERS (comma-separated names) restricts it to a subset;
    PROVE_SERVER_PATH (directories, os.pathsep-separated) adds server packages kept outside
    the repository.
    """
    import prove_servers

    _extend_server_path(prove_servers.__path__)
    wanted = {n.strip() for n in os.environ.get("PROVE_SERVERS", "").split(",") if n.strip()}
    specs = []
    for info in sorted(pkgutil.iter_modules(prove_servers.__path__), key=lambda i: i.name):
        if not info.ispkg or (wanted and info.name not in wanted):
            continue
        module = importlib.import_module(f"prove_servers.{info.name}")
        server = getattr(module, "SERVER", None)
        if isinstance(server, ServerSpec):
            specs.append(server)
    return Registry(specs)
