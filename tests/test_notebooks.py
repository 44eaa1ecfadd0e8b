"""Every numbered notebook runs on the smoke profile with papermill, and is stored without outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# A cell that runs longer fails with its notebook and source named (the longest smoke cells, 05's
# training and 06's evaluation, take ~7 min on two cores): a hang costs 20 minutes, not the run.
CELL_TIMEOUT_S = 1200


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


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory: pytest.TempPathFactory, kernel: str) -> dict[str, Any]:
    """01..07 in order on the smoke profile into one results folder, as ./run_all.sh runs them:
    05 trains on 03's export and 06 evaluates what 05 trained. A failing notebook stops the run
    (later ones are not run), and its error is kept for its own test to report."""
    import papermill as pm

    from prove.env.launch import EnvServer

    root = tmp_path_factory.mktemp("smoke_run")
    results, figures = root / "results", root / "figures"
    done: dict[str, Any] = {"results": results, "figures": figures, "errors": {}, "ran": []}
    with EnvServer() as server:
        for path in NOTEBOOKS:
            try:
                _execute(pm, path, root, kernel, results, figures, server.url)
                done["ran"].append(path.stem)
            except Exception as exc:  # noqa: BLE001 - reported by the notebook's own test
                done["errors"][path.stem] = exc
                break
    return done


def _execute(pm: Any, path: Path, root: Path, kernel: str, results: Path, figures: Path, url: str) -> None:
    import os

    before = os.environ.get("PROVE_ENV_URL")
    os.environ["PROVE_ENV_URL"] = url  # the kernel inherits it, as under ./run_all.sh
    try:
        pm.execute_notebook(
            str(path), str(root / path.name), kernel_name=kernel, cwd=str(ROOT), progress_bar=False,
            execution_timeout=CELL_TIMEOUT_S, interrupt_on_timeout=True,  # Ctrl-C: a launch stops its trainer
            parameters={"profile": "smoke", "results_dir": str(results), "figures_dir": str(figures)},
        )
    finally:
        if before is None:
            os.environ.pop("PROVE_ENV_URL", None)
        else:
            os.environ["PROVE_ENV_URL"] = before


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the first one runs the whole smoke pipeline (the session fixture, ~16 min here)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_on_smoke_profile(path: Path, smoke_run: dict[str, Any]) -> None:
    if path.stem in smoke_run["errors"]:
        raise smoke_run["errors"][path.stem]
    assert path.stem in smoke_run["ran"], f"not run: an earlier notebook failed ({list(smoke_run['errors'])})"
    results, figures = smoke_run["results"], smoke_run["figures"]
    assert any(results.iterdir()), "the notebook wrote no results"
    assert any(figures.glob("*.png")), "the notebook wrote no figure"


@pytest.mark.slow
@pytest.mark.timeout(2400)
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
