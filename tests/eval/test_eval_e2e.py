"""End to end on CPU: a real OpenAI-compatible server (SmolLM2-135M) on loopback, BFCL's generation and checker."""

from __future__ import annotations

import json
import math
import time

import pytest

pytest.importorskip("bfcl_eval", reason="bfcl-eval is not installed")
llm = pytest.importorskip("prove.llm", reason="prove.llm (the local model server) is not available")

from prove.eval.bfcl import BFCL, BFCLConfig, write_results  # noqa: E402
from prove.eval.served import serve_local  # noqa: E402

# One single-turn entry: each model step prefills ~6k prompt tokens (the function docs), which
# takes minutes on two CPU cores; more entries scale linearly.
E2E_IDS = ("multi_turn_base_50",)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_bfcl_entries_run_through_the_real_generation_path_and_official_checker(tmp_path):
    ok, why = llm.llm_extra_available()
    if not ok:
        pytest.skip(why)
    start = time.perf_counter()
    with serve_local() as served:
        cfg = BFCLConfig(label="smollm2-135m", handler="QwenHandler", is_fc_model=False,
                         categories=("multi_turn_base",), ids=E2E_IDS, tokenizer_path=str(served.model_dir),
                         project_dir=tmp_path / "bfcl", num_threads=1, max_new_tokens=32,
                         max_steps_per_turn=1, timeout_s=1500)
        BFCL(cfg).run(served.endpoint)
    score = BFCL(cfg).score()
    row = score["categories"][0]
    assert row["total"] == len(E2E_IDS) and 0 <= row["correct"] <= row["total"]
    assert 0.0 <= score["overall"] <= 1.0 and not math.isnan(row["accuracy_reachable"])
    result_file = tmp_path / "bfcl" / "result" / "prove_smollm2-135m" / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    entries = [json.loads(line) for line in result_file.read_text().splitlines()]
    assert [e["id"] for e in entries] == list(E2E_IDS)
    for entry in entries:  # one list of model outputs per user turn, real token counts from the server
        assert isinstance(entry["result"], list) and entry["result"]
        assert all(n > 1000 for turn in entry["input_token_count"] for n in turn)
    paths = write_results([score], tmp_path / "results")
    assert paths["csv"].read_text().count("smollm2-135m") == 2  # the category row and the overall row
    print(f"\nBFCL e2e on SmolLM2-135M: {row['correct']}/{row['total']} in {time.perf_counter() - start:.0f}s")
