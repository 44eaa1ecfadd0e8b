"""`prove new-server NAME`: writes a minimal working server (servers/NAME/) and its test, following servers/README.md.

    prove new-server library --family knowledge            # into this checkout
    prove new-server library --root ~/my-servers            # out of tree: PROVE_SERVER_PATH=~/my-servers/servers

`scaffold(name, family, root)` writes `servers/<name>/{__init__,state,tools}.py` and
`tests/servers/test_<name>.py` under `root`, refusing (ScaffoldError) an invalid name, an unknown
family, a name or tool name already taken, or any file that exists; it never overwrites.
"""

from __future__ import annotations

import keyword
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path

from prove.env.contract import MAX_SERVER_NAME_CHARS, check_name
from prove.env.registry import FAMILIES

__all__ = ["ScaffoldError", "Scaffold", "scaffold", "tool_names", "id_prefix", "DEFAULT_FAMILY"]

DEFAULT_FAMILY = "productivity"


class ScaffoldError(ValueError):
    """A scaffold refused: what was wrong and what is valid."""


@dataclass(frozen=True)
class Scaffold:
    """What `scaffold` wrote."""

    name: str
    family: str
    files: tuple[Path, ...]
    tools: tuple[str, ...]


def tool_names(name: str) -> tuple[str, str, str]:
    """The scaffold's three tools for server `name`: list, get, create (unique per server name)."""
    return f"list_{name}_records", f"get_{name}_record", f"create_{name}_record"


def id_prefix(name: str) -> str:
    """The record id prefix, e.g. 'LIB' for 'library' (up to three letters/digits)."""
    return re.sub(r"[^A-Z0-9]", "", name.upper())[:3]


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _existing_servers() -> set[str]:
    """Server packages on `prove_servers`' path (PROVE_SERVER_PATH included), without importing them."""
    import prove_servers
    from prove.env.registry import _extend_server_path

    try:
        _extend_server_path(prove_servers.__path__)
    except ValueError as exc:  # a bad PROVE_SERVER_PATH entry
        raise ScaffoldError(str(exc)) from None
    return {i.name for i in pkgutil.iter_modules(prove_servers.__path__) if i.ispkg}


def _validate(name: str, family: str, root: Path) -> list[Path]:
    problem = check_name(name, "server name", MAX_SERVER_NAME_CHARS)
    if problem or keyword.iskeyword(name):
        raise ScaffoldError(problem or f"server name {name!r} is a Python keyword; choose another "
                            "lower_snake name")
    if family not in FAMILIES:
        raise ScaffoldError(f"family {family!r} is not one of {', '.join(FAMILIES)}")
    if name in _existing_servers():
        raise ScaffoldError(f"a server named {name!r} already exists (prove tools lists the servers); "
                            "choose another name")
    folder = root / "servers" / name
    test = root / "tests" / "servers" / f"test_{name}.py"
    for path in (folder, test):
        if path.exists():
            raise ScaffoldError(f"{path} already exists; the scaffold never overwrites: choose another "
                                "name or remove it")
    from prove.env.registry import load_registry

    taken = sorted(set(tool_names(name)) & set(load_registry().tools))
    if taken:
        raise ScaffoldError(f"tool name(s) {taken} already exist; tool names are global: choose "
                            "another server name")
    return [folder / "__init__.py", folder / "state.py", folder / "tools.py", test]


def scaffold(name: str, family: str = DEFAULT_FAMILY, root: Path | str = ".") -> Scaffold:
    """Write the server `name` and its test under `root`; return what was written."""
    root = Path(root)
    paths = _validate(name, family, root)
    values = {
        "name": name, "family": family, "Camel": _camel(name), "PREFIX": id_prefix(name),
        "list_tool": tool_names(name)[0], "get_tool": tool_names(name)[1],
        "create_tool": tool_names(name)[2],
        "state_imports": "".join(f"\n    {n}," for n in sorted(
            ["Category", "RecordId", f"{_camel(name)}Record", f"{_camel(name)}State"])) + "\n",
    }
    texts = [_render(t, values) for t in (_INIT, _STATE, _TOOLS, _TEST)]
    paths[0].parent.mkdir(parents=True, exist_ok=False)
    paths[3].parent.mkdir(parents=True, exist_ok=True)
    for path, text in zip(paths, texts, strict=True):
        with path.open("x") as fh:  # "x": never overwrite, even in a race
            fh.write(text)
    return Scaffold(name, family, tuple(paths), tool_names(name))


def _render(template: str, values: dict[str, str]) -> str:
    """Fill `<<key>>` markers (templates hold Python braces of their own)."""
    return re.sub(r"<<(\w+)>>", lambda m: values[m.group(1)], template)


_INIT = '''"""<<Camel>> MCP server (<<family>>): records with a category; `prove serve --stdio <<name>>` runs it alone."""

from prove.env.registry import ServerSpec
from prove_servers.<<name>> import tools
from prove_servers.<<name>>.state import (
    <<Camel>>State,
    initial_state,
)

SERVER = ServerSpec.build(
    name="<<name>>",
    family="<<family>>",
    description="<<Camel>>: records with a title, a category and an owner's email.",
    state_model=<<Camel>>State,
    initial_state=initial_state,
    tools_module=tools,
)
'''

_STATE = '''"""<<Camel>> server state: records (title, category, owner), seeded by `initial_state(seed)`."""

from __future__ import annotations

import random
from typing import Literal

from pydantic import Field

from prove.env.state import Counter, Record, ServerState
from prove.env.types import entity_id
from prove.env.world import COMPANIES, days_before, email, person

Category = Literal["general", "urgent", "archive"]

RecordId = entity_id("record", "Record id, e.g. '<<PREFIX>>-0001'.", example="<<PREFIX>>-0001")


class <<Camel>>Record(Record):
    record_id: RecordId
    title: str
    category: Category
    owner_email: str = Field(description="Email of the person who owns the record.")
    created_at: str


class <<Camel>>State(ServerState):
    records: dict[str, <<Camel>>Record] = Field(default_factory=dict)


_TOPICS = ("budget", "roadmap", "inventory", "hiring plan", "audit", "launch", "survey", "contract")


def initial_state(seed: int) -> <<Camel>>State:
    """~20 records with distinct titles; deterministic in `seed`."""
    rng = random.Random(seed)
    now = "2026-03-16T09:00"
    state = <<Camel>>State(now=now)
    record_id = Counter("<<PREFIX>>")
    titles: set[str] = set()
    wanted = rng.randrange(16, 24)
    while len(titles) < wanted:
        titles.add(f"{rng.choice(COMPANIES)} {rng.choice(_TOPICS)}")
    for title in sorted(titles):
        rid = record_id()
        owner = person(rng)
        state.records[rid] = <<Camel>>Record(
            record_id=rid, title=title, category=rng.choice(["general", "urgent", "archive"]),
            owner_email=email(owner, "mail.example.com"), created_at=days_before(now, rng, 200),
        )
    return state
'''

_TOOLS = '''"""<<Camel>> tools: list, get and create records."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from prove.env.helpers import find, require
from prove.env.tool import tool
from prove.env.types import DEFAULT_LIMIT, Limit, Offset, Page, text
from prove_servers.<<name>>.state import (<<state_imports>>)


class RecordList(Page):
    records: list[<<Camel>>Record]


@tool()
def <<list_tool>>(
    state: <<Camel>>State,
    query: text("query", "Case-insensitive substring of the title.") = "",
    category: Annotated[Category | None, Field(description="Only records in this category.")] = None,
    offset: Offset = 0,
    limit: Limit = DEFAULT_LIMIT,
) -> RecordList:
    """List <<name>> records by title and category, a page at a time."""
    q = query.strip().lower()
    found = [r for r in state.records.values()
             if q in r.title.lower() and (category is None or r.category == category)]
    return RecordList.of(found, offset, limit)


@tool(sensitive=("record_id",))
def <<get_tool>>(state: <<Camel>>State, record_id: RecordId) -> <<Camel>>Record:
    """Get one <<name>> record: its title, category, owner and creation time."""
    return find(state.records, record_id)  # entity and parameter read from RecordId's declaration


@tool(write=True, sensitive=("owner_email",))
def <<create_tool>>(
    state: <<Camel>>State,
    title: text("title", "Title of the new record.", listed="title", min_length=3, max_length=120),
    category: Annotated[Category, Field(description="Category of the new record.")],
    owner_email: text("word", "Email of the record's owner.", listed="owner_email",
                      example="ada@mail.example.com", max_length=120),
) -> <<Camel>>Record:
    """Create a <<name>> record; titles are unique, so an existing title is refused."""
    require("@" in owner_email.strip("@"),
            f"owner_email must be an email address like 'ada@mail.example.com', got '{owner_email}'",
            params=("owner_email",), rejected=(owner_email,))
    same = next((r for r in state.records.values() if r.title.lower() == title.strip().lower()), None)
    require(same is None, f"title '{title}' is taken by record "
            f"'{same.record_id if same else ''}' (parameter 'title'); choose another title",
            reason="conflict", params=("title",), rejected=(title,))
    record = <<Camel>>Record(record_id=state.new_id("<<PREFIX>>"), title=title.strip(),
                             category=category, owner_email=owner_email, created_at=state.now)
    state.records[record.record_id] = record
    return record
'''

_TEST = '''"""<<Camel>> server: every tool through the hub on a tiny hand-built state, happy path and failures."""

from __future__ import annotations

from server_helpers import fails, hub_fixture, ok, refusal

from prove.env import Hub
from prove_servers.<<name>> import SERVER
from prove_servers.<<name>>.state import (
    <<Camel>>Record,
    <<Camel>>State,
)


def tiny() -> <<Camel>>State:
    s = <<Camel>>State(now="2026-03-16T09:00")
    for n, (title, category) in enumerate((("Acme budget", "general"), ("Acme audit", "urgent"),
                                           ("Old survey", "archive")), start=1):
        rid = f"<<PREFIX>>-{n:04d}"
        s.records[rid] = <<Camel>>Record(record_id=rid, title=title, category=category,
                                     owner_email="ada@mail.example.com", created_at="2026-03-01T10:00")
    return s


hub = hub_fixture(SERVER, tiny)


def test_list_filters_and_pages(hub: Hub) -> None:
    assert ok(hub, "<<list_tool>>")["total"] == 3
    assert [r["record_id"] for r in ok(hub, "<<list_tool>>", query="acme")["records"]] == [
        "<<PREFIX>>-0001", "<<PREFIX>>-0002"]
    assert ok(hub, "<<list_tool>>", category="archive")["records"][0]["title"] == "Old survey"
    page = ok(hub, "<<list_tool>>", limit=2)
    assert len(page["records"]) == 2 and page["next_offset"] == 2
    assert ok(hub, "<<list_tool>>", offset=2)["next_offset"] is None
    fails(hub, "<<list_tool>>", "category", "general", category="secret")


def test_get(hub: Hub) -> None:
    assert ok(hub, "<<get_tool>>", record_id="<<PREFIX>>-0002")["title"] == "Acme audit"
    fails(hub, "<<get_tool>>", "record '<<PREFIX>>-0099' not found", "<<PREFIX>>-0001",
          record_id="<<PREFIX>>-0099")
    detail = refusal(hub, "<<get_tool>>", record_id="<<PREFIX>>-0099")  # the facts, as data
    assert detail["reason"] == "not_found" and detail["params"] == ["record_id"]
    assert "<<PREFIX>>-0001" in detail["choices"]


def test_create_and_its_preconditions(hub: Hub) -> None:
    made = ok(hub, "<<create_tool>>", title="Launch plan", category="urgent",
              owner_email="bo@mail.example.com")
    assert made["record_id"] == "<<PREFIX>>-0004" and made["created_at"] == "2026-03-16T09:00"
    assert ok(hub, "<<get_tool>>", record_id="<<PREFIX>>-0004")["title"] == "Launch plan"
    assert ok(hub, "<<list_tool>>", category="urgent")["total"] == 2
    fails(hub, "<<create_tool>>", "title 'acme BUDGET' is taken", "<<PREFIX>>-0001",
          title="acme BUDGET", category="general", owner_email="bo@mail.example.com")
    assert refusal(hub, "<<create_tool>>", title="acme BUDGET", category="general",
                   owner_email="bo@mail.example.com")["reason"] == "conflict"
    fails(hub, "<<create_tool>>", "owner_email must be an email address", title="New one",
          category="general", owner_email="bo")
    fails(hub, "<<create_tool>>", "category", "urgent", title="New one", category="later",
          owner_email="bo@mail.example.com")
    assert ok(hub, "<<list_tool>>")["total"] == 4  # the refused calls created nothing
'''
