"""`prove new-server` writes a server that keeps the contract and passes its own test, and refuses bad input.

    .venv/bin/python -m pytest tests/env/test_scaffold.py -q

The scaffold goes into a temporary directory and is loaded through PROVE_SERVER_PATH, so the
repository's servers/ folder is never written.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from prove.cli import main
from prove.env.scaffold import ScaffoldError, id_prefix, scaffold, tool_names

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp: Path, servers: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PROVE_SERVERS", "PROVE_SERVER_PATH")}
    return {**env, "PROVE_SERVERS": servers, "PROVE_SERVER_PATH": str(tmp / "servers"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "servers"), env.get("PYTHONPATH", "")])}


@pytest.mark.slow
def test_a_scaffolded_server_passes_the_contract_its_test_and_the_declarations(tmp_path: Path) -> None:
    made = scaffold("lending_library", "knowledge", tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in made.files) == [
        "servers/lending_library/__init__.py", "servers/lending_library/state.py",
        "servers/lending_library/tools.py", "tests/servers/test_lending_library.py"]
    lint = subprocess.run([str(ROOT / ".venv" / "bin" / "ruff"), "check", "--config",
                           str(ROOT / "pyproject.toml"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stdout
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:randomly", "-p", "no:cacheprovider",
         str(tmp_path / "tests" / "servers" / "test_lending_library.py"),
         "tests/env/test_server_contract.py", "tests/env/test_declarations.py"],
        cwd=ROOT, env=_env(tmp_path, "banking,lending_library"), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "test_server_keeps_the_contract[lending_library] PASSED" in run.stdout  # it was selected
    assert "::test_create_and_its_preconditions PASSED" in run.stdout
    tools = subprocess.run([sys.executable, "-m", "prove", "tools", "-v"], cwd=ROOT,
                           env=_env(tmp_path, "banking,lending_library"), capture_output=True,
                           text=True, timeout=120)
    assert tools.returncode == 0, tools.stderr
    assert "lending_library knowledge       3 tools (2 read, 1 write)" in tools.stdout
    assert all(f" {name}(" in tools.stdout for name in tool_names("lending_library"))


def test_two_scaffolds_do_not_clash_and_ids_follow_the_name(tmp_path: Path) -> None:
    a, b = scaffold("zoo", "social", tmp_path), scaffold("zoo_two", "iot", tmp_path)
    assert not set(a.tools) & set(b.tools)
    assert id_prefix("zoo") == "ZOO" and id_prefix("lending_library") == "LEN" and id_prefix("a1_b") == "A1B"
    assert "'ZOO-0001'" in (tmp_path / "servers" / "zoo" / "state.py").read_text()


@pytest.mark.parametrize("bad", ["Library", "my-server", "2fast", "lib__x", "_lib", "class", "x" * 33, ""])
def test_an_invalid_name_is_refused_with_what_is_valid(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ScaffoldError, match="lower_snake|Python keyword"):
        scaffold(bad, "finance", tmp_path)
    assert not (tmp_path / "servers").exists()


def test_an_existing_server_folder_or_unknown_family_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ScaffoldError, match="a server named 'banking' already exists"):
        scaffold("banking", "finance", tmp_path)
    with pytest.raises(ScaffoldError, match="family 'gaming' is not one of finance, productivity"):
        scaffold("arcade", "gaming", tmp_path)
    (tmp_path / "servers" / "arcade").mkdir(parents=True)
    with pytest.raises(ScaffoldError, match="arcade already exists; the scaffold never overwrites"):
        scaffold("arcade", "social", tmp_path)
    test = tmp_path / "tests" / "servers" / "test_pinball.py"
    test.parent.mkdir(parents=True)
    test.write_text("# mine\n")
    with pytest.raises(ScaffoldError, match="test_pinball.py already exists"):
        scaffold("pinball", "social", tmp_path)
    assert test.read_text() == "# mine\n" and not (tmp_path / "servers" / "pinball").exists()


def test_the_command_writes_and_refuses_with_exit_status_2(tmp_path: Path, capsys) -> None:
    assert main(["new-server", "kiosk", "--family", "commerce", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'servers' / 'kiosk' / 'tools.py'}" in out
    assert f"PROVE_SERVER_PATH={tmp_path.resolve() / 'servers'} PYTHONPATH=tests/servers" in out
    assert "PROVE_SERVERS=banking,kiosk" in out
    assert 'family="commerce"' in (tmp_path / "servers" / "kiosk" / "__init__.py").read_text()
    assert main(["new-server", "kiosk", "--root", str(tmp_path)]) == 2
    assert "kiosk already exists; the scaffold never overwrites" in capsys.readouterr().err
    assert main(["new-server", "Kiosk", "--root", str(tmp_path)]) == 2
    assert "server name 'Kiosk' is not a valid name" in capsys.readouterr().err
