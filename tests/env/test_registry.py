"""The registry: globally unique tool names, explained refusals, and the paper's inventory by name.

    .venv/bin/python -m pytest tests/env/test_registry.py -q

What every server must have is tests/env/test_server_contract.py (prove.env.contract).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prove.env import Registry, ServerSpec, load_registry
from prove.env.contract import PAPER_INVENTORY, check_paper_inventory

REG = load_registry()


def test_tool_names_are_globally_unique_and_clash_is_rejected() -> None:
    names = [t.name for s in REG.servers.values() for t in s.tools]
    assert len(names) == len(set(names))
    banking = REG.server("banking")
    clone = ServerSpec(name="banking2", family="finance", description="dup", state_model=banking.state_model,
                       initial_state=banking.initial_state, tools=banking.tools[:1])
    with pytest.raises(ValueError, match="must be globally unique") as err:
        Registry([banking, clone])
    assert banking.tools[0].name in str(err.value)


def test_unknown_family_and_server_are_explained() -> None:
    from prove_servers.banking import state, tools

    with pytest.raises(ValueError, match="not one of"):
        ServerSpec.build("x", "gaming", "d", state.BankState, state.initial_state, tools)
    with pytest.raises(KeyError, match="known servers: .*banking"):
        REG.server("nope")


@pytest.mark.skipif(bool(os.environ.get("PROVE_SERVERS")),
                    reason="PROVE_SERVERS restricts the registry; the paper's inventory needs all 20 servers")
def test_the_paper_inventory_is_there_by_name() -> None:
    """The paper's 20 servers with their tool counts (343 in all), each 10-25 tools with an enum and a
    sensitive parameter, at least two per family; other servers beside them are not its concern."""
    problems = check_paper_inventory(REG)
    assert not problems, "\n".join(problems)


def test_the_paper_inventory_check_bites() -> None:
    banking = REG.server("banking")
    fewer = Registry([ServerSpec(**{**banking.__dict__, "tools": banking.tools[:-1]})])
    problems = "\n".join(check_paper_inventory(fewer))
    assert f"banking: {len(banking.tools) - 1} tools, the paper's inventory has {PAPER_INVENTORY['banking']}" in problems
    assert "paper servers missing from the registry: ['brokerage'" in problems
    assert "families with fewer than 2 paper servers" in problems


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("PROVE_SERVERS", "PROVE_SERVER_PATH")}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**environ, **env})


def test_prove_server_path_adds_out_of_tree_servers_and_refuses_bad_entries(tmp_path: Path) -> None:
    pkg = tmp_path / "servers" / "outside"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "from prove_servers.banking import SERVER as _B\n"
        "import dataclasses\n"
        "SERVER = dataclasses.replace(_B, name='outside', tools=())\n")
    code = "from prove.env import load_registry; print(sorted(load_registry().servers))"
    got = _run(code, PROVE_SERVERS="banking,outside", PROVE_SERVER_PATH=str(tmp_path / "servers"))
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["['banking',", "'outside']"]
    missing = _run(code, PROVE_SERVER_PATH=str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "is not a directory" in missing.stderr
    (tmp_path / "shadow" / "banking").mkdir(parents=True)
    (tmp_path / "shadow" / "banking" / "__init__.py").write_text("")
    shadow = _run(code, PROVE_SERVER_PATH=str(tmp_path / "shadow"))
    assert shadow.returncode != 0 and "holds ['banking'], which already exist" in shadow.stderr
