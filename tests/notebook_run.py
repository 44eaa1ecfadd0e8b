"""The notebooks as ./run_all.sh runs them, with papermill into one results folder (test helper).

    from notebook_run import NOTEBOOKS, PIPELINE_TIMEOUT_S, pipeline_results
    results = pipeline_results(pipeline_run, "06")   # in a test that requests the `pipeline_run` fixture

The suite runs the notebooks twice (tests/conftest.py's session fixtures, each once, for whichever
test asks first):

- ``pipeline_run``: 01..07 on the **rehearsal** profile (``PIPELINE_PROFILE``), the paper profile's
  stages and code paths at CPU sizes: the LLM-classified graph and the teacher comparison on a
  vLLM-served teacher, the learning-rate sweep picked on validation, SFT, a reward ablation, 06's
  placement plan and vLLM-served models for held-out, BFCL and τ² with a vLLM-served user simulator.
  tests/test_notebooks.py checks each notebook, and the end-to-end tests of what 06 executes
  (tests/eval: BFCL's chain entries, the τ² slice) assert on its outputs instead of running the same
  work again;
- ``smoke_data_run``: the smoke profile's 01..04 and 07 (``SMOKE_DATA_NOTEBOOKS``), whose sizes
  differ from the rehearsal's (the schema graph of every server, 260 examples over four worlds). Its
  05 and 06 run the rehearsal's code at larger sizes (tests/test_profiles.py pins every difference
  between the two profiles) and are not run a second time.

Every test that requests either is marked ``slow`` and carries ``@pytest.mark.timeout(PIPELINE_TIMEOUT_S)``:
it may be the one that runs the whole pipeline (papermill's per-cell limit stops a hung cell long before).
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
PIPELINE_PROFILE = "rehearsal"
"""The profile the suite runs the whole pipeline on: the paper's code paths (see the module's docstring)."""
SMOKE_DATA_NOTEBOOKS = tuple(p for p in NOTEBOOKS if p.stem[:2] in ("01", "02", "03", "04", "07"))
"""The smoke profile's notebooks the suite also runs: its 05 and 06 are the rehearsal's code at larger sizes."""
# A cell that runs longer fails with its notebook and source named. The longest cell, the rehearsal's
# 05 training matrix, took 860 s here on an idle machine (2026-12-06, three sweep points: each GRPO
# launch ~200 s, ~100 s of it Ray, VERL's workers and vLLM starting) and ran past 1,200 s on CI's machine
# (stop 42): the limit leaves CI's slower machine room, and a hang still costs 30 minutes, not the run.
CELL_TIMEOUT_S = 1800
PIPELINE_TIMEOUT_S = 3600
"""pytest-timeout for a test that requests `pipeline_run`: the whole pipeline, should it run in its setup."""


def install_kernel() -> str:
    """The name of this venv's Jupyter kernel (``prove``), installed into the venv if missing."""
    from jupyter_client.kernelspec import find_kernel_specs

    if "prove" not in find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", "prove",
                        "--display-name", "PROVE (.venv)"], check=True, capture_output=True)
    return "prove"


def run_pipeline(root: Path, kernel: str, profile: str = PIPELINE_PROFILE,
                 notebooks: tuple[Path, ...] = tuple(NOTEBOOKS)) -> dict[str, Any]:
    """`notebooks` in order on `profile` into ``root/results`` and ``root/figures``, as
    ./run_all.sh runs them against one `prove serve`: 05 trains on 03's export and 06 evaluates what
    05 trained. A failing notebook stops the run (later ones are not run), and its error is kept for
    its own test to report.

    Returns {"profile", "results", "figures", "errors": {stem: exception}, "ran": [stem, ...]}."""
    import papermill as pm

    from prove.env.launch import EnvServer

    results, figures = root / "results", root / "figures"
    done: dict[str, Any] = {"profile": profile, "results": results, "figures": figures, "errors": {}, "ran": []}
    with EnvServer() as server:
        for path in notebooks:
            try:
                _execute(pm, path, root, kernel, profile, results, figures, server.url)
                done["ran"].append(path.stem)
            except Exception as exc:  # noqa: BLE001 - reported by the notebook's own test
                done["errors"][path.stem] = exc
                break
    return done


def _execute(pm: Any, path: Path, root: Path, kernel: str, profile: str, results: Path, figures: Path,
             url: str) -> None:
    before = {k: os.environ.get(k) for k in ("PROVE_ENV_URL", "PROVE_GRAPH_CACHE")}
    os.environ["PROVE_ENV_URL"] = url  # the kernel inherits it, as under ./run_all.sh
    # the LLM classifier's answers stay in the run's folder: none from an earlier run, none left behind
    os.environ["PROVE_GRAPH_CACHE"] = str(root / "llm_pairs.jsonl")
    try:
        pm.execute_notebook(
            str(path), str(root / path.name), kernel_name=kernel, cwd=str(ROOT), progress_bar=False,
            execution_timeout=CELL_TIMEOUT_S, interrupt_on_timeout=True,  # Ctrl-C: a launch stops its trainer
            parameters={"profile": profile, "results_dir": str(results), "figures_dir": str(figures)},
        )
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def pipeline_results(run: dict[str, Any], upto: str) -> Path:
    """The run's results folder, once the notebook whose name starts with ``upto`` (``"06"``) and
    every one before it ran; otherwise the test fails naming the notebook that did not (its own
    test in tests/test_notebooks.py shows the error)."""
    [stem] = [p.stem for p in NOTEBOOKS if p.stem.startswith(upto)]
    if stem not in run["ran"]:
        failed = next(iter(run["errors"]), None)
        pytest.fail(f"the {run['profile']} run did not get through {stem}: {failed} failed "
                    f"({run['errors'].get(failed)!r}); see its test in tests/test_notebooks.py")
    return Path(run["results"])
