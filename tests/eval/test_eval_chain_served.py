"""``evaluate_chain`` serves each model once (vLLM's CPU build here) for its held-out turns and its
benchmarks, then stops it; which server config a model gets (placement, CPU, GPU).

The 06 notebook runs ``evaluate_chain`` for real on the smoke profile, and tests/eval/test_tau2_e2e.py
checks there that BFCL and τ² of each model went to one server. What a finished run cannot show is
checked here, with stand-in benchmarks on one model: the held-out run's server still answers when
the benchmarks start, and it is stopped, with no member of its process group left, before
``evaluate_chain`` returns.

    .venv/bin/python -m pytest tests/eval/test_eval_chain_served.py -x -q
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from eval_helpers import heldout_config

from prove.env.launch import EnvServer
from prove.eval import chain
from prove.eval.heldout import HeldoutPlan, check_endpoint, model_folder
from prove.eval.pipeline import EvalPlan


@pytest.fixture(scope="module")
def heldout_cfg(synth_examples: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """smollm2-135m's config with 2 held-out turns of the synthesis fixture (eval_helpers)."""
    return heldout_config(synth_examples, tmp_path_factory.mktemp("heldout-data"), 2)


@pytest.mark.slow
def test_each_model_is_served_once_for_heldout_and_benchmarks_then_stopped(
        heldout_cfg: Any, env_server: EnvServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prove.llm.vllm import vllm_available

    ok, why = vllm_available()
    if not ok:
        pytest.skip(why)
    started: list[Any] = []
    benchmark_calls: list[dict[str, Any]] = []
    original = chain.serve_for_eval

    def recorded(model: str, cfg: Any, plan: EvalPlan | None = None) -> Any:
        served = original(model, cfg, plan)
        started.append(served)
        return served

    def benchmarks(name: str, variant: str, endpoint: Any, plan: EvalPlan) -> dict[str, Any]:
        served = started[-1]
        assert check_endpoint(endpoint) is not None  # the held-out run's server still answers
        benchmark_calls.append({"endpoint": endpoint, "served": served.endpoint, "pgid": os.getpgid(served.proc.pid),
                                "tokenizer": plan.tokenizer_path, "model_dir": str(served.model_dir)})
        return {"rows": [{"model": name, "variant": variant, "benchmark": "stand-in", "value": 1.0}]}

    monkeypatch.setattr(chain, "serve_for_eval", recorded)
    monkeypatch.setattr(chain, "evaluate_model", benchmarks)
    out = chain.evaluate_chain(heldout_cfg, env_server.url, EvalPlan(benchmarks=("bfcl",)),
                               HeldoutPlan(max_rows=2, max_new_tokens=32, concurrency=2),
                               results_dir=tmp_path / "results", checkpoints_dir=tmp_path / "ckpt")

    assert len(started) == 1 and list(out["heldout"]["run"]) == ["base"]  # no run trained: base only
    (call,) = benchmark_calls
    assert call["endpoint"] == call["served"] and call["tokenizer"] == call["model_dir"]
    assert started[0].proc is None  # stopped
    with pytest.raises(ProcessLookupError):  # and no member of its process group is left
        os.killpg(call["pgid"], 0)
    assert out["heldout"]["turns"].tolist() == [2.0] and len(out["turns"]) == 2
    assert {"benchmark": "stand-in"}.items() <= out["rows"][-1].items()
    assert out["benchmarks"]["base"]["rows"][0]["variant"] == "base"


def test_a_model_gets_the_placement_slot_or_the_device_default() -> None:
    from prove.eval.placement import plan_placement
    from prove.llm.vllm import LOCAL_MODEL
    from prove.profiles import ServeSettings
    from prove.train.config import load_train_config

    cfg = load_train_config("smollm2-135m")
    folder = str(model_folder(LOCAL_MODEL))
    cpu = chain.serve_for_eval(folder, cfg).cmd
    assert cpu[cpu.index("--model") + 1] == folder and "--enforce-eager" in cpu  # the CPU build
    gpu = chain.serve_for_eval(folder, dataclasses.replace(cfg, device="cuda")).cmd
    assert "--gpu-memory-utilization" in gpu
    settings = ServeSettings(device="cpu", gpus=0, gpu_memory_gib=0, policy_tensor_parallel_size=1,
                             policy_gpu_memory_utilization=0.9, policy_max_model_len=2048,
                             user_tensor_parallel_size=1, user_gpu_memory_utilization=0.9, user_max_model_len=2048)
    placed = chain.serve_for_eval(folder, cfg, EvalPlan(placement=plan_placement(settings, policy=LOCAL_MODEL))).cmd
    assert placed[placed.index("--max-model-len") + 1] == "2048" and placed[placed.index("--model") + 1] == folder
