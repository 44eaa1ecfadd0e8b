"""Every numbered notebook runs with papermill on the rehearsal profile (the paper's code paths at CPU
sizes), the smoke profile's data notebooks run too, and every notebook is stored without outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from notebook_run import NOTEBOOKS, PIPELINE_TIMEOUT_S, SMOKE_DATA_NOTEBOOKS

# The runs themselves are the session fixtures `pipeline_run` and `smoke_data_run` (tests/conftest.py,
# notebook_run.py): the end-to-end tests of what 06 executes (tests/eval: BFCL's chain entries, the τ²
# slice) read the pipeline's outputs too, so whichever of them runs first runs the pipeline, once.


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


def _ran(run: dict[str, Any], path: Path) -> None:
    if path.stem in run["errors"]:
        raise run["errors"][path.stem]
    assert path.stem in run["ran"], f"not run: an earlier notebook failed ({list(run['errors'])})"
    results, figures = run["results"], run["figures"]
    assert any(results.iterdir()), "the notebook wrote no results"
    assert any(figures.glob("*.png")), "the notebook wrote no figure"


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)  # the first test to ask runs the whole pipeline
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_on_the_rehearsal_profile(path: Path, pipeline_run: dict[str, Any]) -> None:
    _ran(pipeline_run, path)


@pytest.mark.slow
@pytest.mark.timeout(PIPELINE_TIMEOUT_S)
@pytest.mark.parametrize("path", SMOKE_DATA_NOTEBOOKS, ids=[p.stem for p in SMOKE_DATA_NOTEBOOKS])
def test_notebook_runs_on_the_smoke_profile(path: Path, smoke_data_run: dict[str, Any]) -> None:
    _ran(smoke_data_run, path)
