"""Shared fixtures: the registry, one `prove serve` on a free loopback port per session, one
small real synthesis run whose examples and training rows the training and reward tests use, and
the notebooks as ./run_all.sh runs them (`notebook_run`: the rehearsal's 01..07 and the smoke
profile's data notebooks) whose outputs the notebook tests and the end-to-end tests of what the
notebooks execute assert on."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from notebook_run import SMOKE_DATA_NOTEBOOKS, install_kernel, run_pipeline

from prove.env.launch import EnvServer
from prove.env.registry import Registry, load_registry

# The training tests' data: a few servers (banking among them: the transfer tests move money), every
# kind of example, a fixed seed, one process: ~2.5 s here. Tests pick rows by kind, turn and what
# their ground truth calls, never by position or by a value written into the test.
SYNTH_SERVERS = ("banking", "email", "shop")
SYNTH_SIZES = {"multi_turn": 6, "clarification": 2, "abstention": 2}


@pytest.fixture(scope="session")
def registry() -> Registry:
    return load_registry()


@pytest.fixture(scope="session")
def env_server() -> Iterator[EnvServer]:
    with EnvServer() as server:
        yield server


@pytest.fixture(scope="session")
def synth_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A synthesis export (examples.jsonl, train.parquet, val.parquet, card) of a small real run."""
    from prove.synth.pipeline import SynthConfig, synthesize

    out = tmp_path_factory.mktemp("synth-train")
    cfg = SynthConfig(sizes=dict(SYNTH_SIZES), seed=3, n_chains=60, n_worlds=2, servers=SYNTH_SERVERS,
                      chunk_size=8, val_fraction=0.25, workers=1)
    synthesize(cfg, out)
    return out


@pytest.fixture(scope="session")
def synth_examples(synth_export: Path) -> list[dict[str, Any]]:
    """The export's examples, in file order."""
    with (synth_export / "examples.jsonl").open() as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="session")
def synth_rows(synth_export: Path) -> list[dict[str, Any]]:
    """Every training row the export wrote (train.parquet, then val.parquet), as training reads
    them, with ``extra_info.index`` numbered through both files (one file the tests write back)."""
    import pyarrow.parquet as pq

    rows = [r for split in ("train", "val") for r in pq.read_table(synth_export / f"{split}.parquet").to_pylist()]
    for i, row in enumerate(rows):
        row["extra_info"]["index"] = i
    return rows


@pytest.fixture(scope="session")
def kernel() -> str:
    """This venv's Jupyter kernel, installed on first use."""
    return install_kernel()


@pytest.fixture(scope="session")
def pipeline_run(tmp_path_factory: pytest.TempPathFactory, kernel: str) -> dict[str, Any]:
    """01..07 in order on the rehearsal profile into one results folder, as ./run_all.sh runs them
    (``notebook_run.run_pipeline``), once per session for whichever test asks first: a test that
    requests it is marked ``slow`` with ``@pytest.mark.timeout(notebook_run.PIPELINE_TIMEOUT_S)``
    and reads the folder through ``notebook_run.pipeline_results``."""
    return run_pipeline(tmp_path_factory.mktemp("pipeline_run"), kernel)


@pytest.fixture(scope="session")
def smoke_data_run(tmp_path_factory: pytest.TempPathFactory, kernel: str) -> dict[str, Any]:
    """The smoke profile's 01..04 and 07 (``notebook_run.SMOKE_DATA_NOTEBOOKS``), as ./run_all.sh
    runs them, once per session."""
    return run_pipeline(tmp_path_factory.mktemp("smoke_data_run"), kernel, "smoke", SMOKE_DATA_NOTEBOOKS)
