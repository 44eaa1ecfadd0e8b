"""Every numbered notebook runs on the smoke profile with papermill, and is stored without outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from notebook_run import NOTEBOOKS, SMOKE_TIMEOUT_S

# The smoke run itself is the session fixture `smoke_run` (tests/conftest.py, notebook_run.py): the
# end-to-end tests of what 06 executes (tests/eval: BFCL's chain entries, the τ² slice) read its
# outputs too, so whichever of them runs first runs the pipeline, once.


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
@pytest.mark.timeout(SMOKE_TIMEOUT_S)  # the first test to ask runs the whole smoke pipeline (~21 min here)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_on_smoke_profile(path: Path, smoke_run: dict[str, Any]) -> None:
    if path.stem in smoke_run["errors"]:
        raise smoke_run["errors"][path.stem]
    assert path.stem in smoke_run["ran"], f"not run: an earlier notebook failed ({list(smoke_run['errors'])})"
    results, figures = smoke_run["results"], smoke_run["figures"]
    assert any(results.iterdir()), "the notebook wrote no results"
    assert any(figures.glob("*.png")), "the notebook wrote no figure"


@pytest.mark.slow
@pytest.mark.timeout(SMOKE_TIMEOUT_S)
def test_smoke_run_trains_and_evaluates_the_chain(smoke_run: dict[str, Any]) -> None:
    """05 trained SFT then GRPO from it; 06 evaluated base, SFT and GRPO on the same held-out turns."""
    import pandas as pd

    if smoke_run["errors"]:
        pytest.fail(f"the smoke run failed at {list(smoke_run['errors'])}")
    results = smoke_run["results"]
    runs = pd.read_csv(results / "train_runs.csv")
    assert set(runs["run"]) == {"sft", "grpo_default"}
    grpo = runs.set_index("run").loc["grpo_default"]
    assert grpo["init"] == runs.set_index("run").loc["sft", "hf_model"]
    held = pd.read_csv(results / "heldout_summary.csv")
    assert set(held["run"]) == {"base", "sft", "grpo_default"}
    assert held["turns"].nunique() == 1 and held["turns"].iloc[0] > 0
    table = pd.read_csv(results / "eval_comparison.csv")
    row = table[(table["model"] == "SmolLM2-135M") & (table["benchmark"] == "prove_heldout")].iloc[0]
    assert row[["base", "sft", "trained"]].notna().all()
