"""The smoke pipeline as ./run_all.sh runs it: notebooks 01..07 with papermill into one results folder (test helper).

    from notebook_run import NOTEBOOKS, SMOKE_TIMEOUT_S, smoke_results
    results = smoke_results(smoke_run, "06")     # in a test that requests the `smoke_run` fixture

The session fixture `smoke_run` (tests/conftest.py) runs the pipeline once, for whichever test asks
first: tests/test_notebooks.py checks each notebook, and the end-to-end tests of what the notebooks
already execute (tests/eval: BFCL's chain entries, the τ² slice) assert on its outputs instead of
running the same work again. Every test that requests it is marked ``slow`` and carries
``@pytest.mark.timeout(SMOKE_TIMEOUT_S)``: it may be the one that runs the whole pipeline (~21 min
on two cores; papermill's per-cell limit stops a hung cell long before).
"""

from __future__ import annotations

import os
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
SMOKE_TIMEOUT_S = 2400
"""pytest-timeout for a test that requests `smoke_run`: the whole pipeline, should it run in its setup."""


def install_kernel() -> str:
    """The name of this venv's Jupyter kernel (``prove``), installed into the venv if missing."""
    from jupyter_client.kernelspec import find_kernel_specs

    if "prove" not in find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "prove",
                        "--display-name", "PROVE (.venv)"], check=True, capture_output=True)
    return "prove"


def run_smoke(root: Path, kernel: str) -> dict[str, Any]:
    """01..07 in order on the smoke profile into ``root/results`` and ``root/figures``, as
    ./run_all.sh runs them: 05 trains on 03's export and 06 evaluates what 05 trained. A failing
    notebook stops the run (later ones are not run), and its error is kept for its own test to report.

    Returns {"results", "figures", "errors": {stem: exception}, "ran": [stem, ...]}."""
    import papermill as pm

    from prove.env.launch import EnvServer

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


def smoke_results(run: dict[str, Any], upto: str) -> Path:
    """The smoke run's results folder, once the notebook whose name starts with ``upto`` (``"06"``)
    and every one before it ran; otherwise the test fails naming the notebook that did not (its own
    test in tests/test_notebooks.py shows the error)."""
    [stem] = [p.stem for p in NOTEBOOKS if p.stem.startswith(upto)]
    if stem not in run["ran"]:
        failed = next(iter(run["errors"]), None)
        pytest.fail(f"the smoke run did not get through {stem}: {failed} failed "
                    f"({run['errors'].get(failed)!r}); see test_notebook_runs_on_smoke_profile[{failed}]")
    return Path(run["results"])
