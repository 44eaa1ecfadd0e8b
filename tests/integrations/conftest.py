"""Fixtures for the framework adapters' tests: SmolLM2-135M served once by vLLM's CPU build for every
module of this folder (``smollm2``), and the synthesis fixture's rows as a parquet file (``rows_parquet``).

vLLM is started with ``--enable-scale-out``, which SkyRL's ``RemoteInferenceClient`` needs (it asks the
server for its world size); OpenAI-compatible clients (OpenEnv, verifiers) do not notice it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prove.llm.endpoint import Endpoint


@pytest.fixture(scope="package")
def smollm2() -> Iterator[Endpoint]:
    """SmolLM2-135M-Instruct on loopback (vLLM CPU, hermes tool parser, 8,192-token context), stopped
    after this folder's last test: its memory is free again before the training tests start Ray."""
    from prove.llm.vllm import serve_local, vllm_available

    ok, why = vllm_available()
    if not ok:
        pytest.skip(f"vLLM's CPU build is not installed: {why}")
    with serve_local(threads=2, max_model_len=8192, extra_args=("--enable-scale-out",)) as served:
        yield served.endpoint


@pytest.fixture(scope="session")
def rows_parquet(synth_rows: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every row of the synthesis fixture in one parquet file (what a user passes an adapter)."""
    from prove.rows import write_rows

    return write_rows(synth_rows, tmp_path_factory.mktemp("integrations") / "rows.parquet")


@pytest.fixture(scope="package")
def writing_row(synth_rows: list[dict[str, Any]], env_server: Any) -> dict[str, Any]:
    """The first row of the synthesis fixture whose ground truth changes the records: its expected
    effect differs from an untouched episode's, so two rollouts' states can be told apart."""
    from prove.integrations.turn import Turn, TurnRow, run_sync

    for i, raw in enumerate(synth_rows):
        row = TurnRow.from_row(raw)
        if not (row.ground_truth["calls"] and row.expected_effect):
            continue
        probe = Turn(row, env_server.url, episode_id=f"test-integrations-probe-{i}")
        effect = run_sync(probe.effect())
        run_sync(probe.close())
        if effect != row.expected_effect:
            return raw
    raise AssertionError("no row of the synthesis fixture writes")
