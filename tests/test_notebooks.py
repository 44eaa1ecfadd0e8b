"""Every numbered notebook runs on the smoke profile with papermill, and is stored without outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.fixture(scope="session")
def kernel() -> str:
    from jupyter_client.kernelspec import find_kernel_specs

    if "prove" not in find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "prove",
                        "--display-name", "PROVE (.venv)"], check=True, capture_output=True)
    return "prove"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_clean_with_a_parameters_cell(path: Path) -> None:
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "strip outputs"
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", [])
    src = "".join(first["source"])
    for name in ("profile", "results_dir", "figures_dir"):
        assert f"{name} = " in src


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_on_smoke_profile(path: Path, tmp_path: Path, kernel: str) -> None:
    import papermill as pm

    results, figures = tmp_path / "results", tmp_path / "figures"
    pm.execute_notebook(
        str(path), str(tmp_path / path.name), kernel_name=kernel, cwd=str(ROOT), progress_bar=False,
        parameters={"profile": "smoke", "results_dir": str(results), "figures_dir": str(figures)},
    )
    assert any(results.iterdir()), "the notebook wrote no results"
    assert any(figures.glob("*.png")), "the notebook wrote no figure"
