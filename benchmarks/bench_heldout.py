"""Held-out turns per minute: the served model (vLLM, concurrency 1 and 8) vs Hugging Face ``generate``
in-process one row at a time (the evaluation's old generator), on the same rows of a small synthesis run.

    .venv/bin/python benchmarks/bench_heldout.py [--rows 8] [--max-new-tokens 64] [--concurrency 1 8]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path
from typing import Any

import prove.eval  # noqa: F401  (prove.llm.vllm imports prove.eval.base: load prove.eval first)
from prove.env.launch import EnvServer
from prove.eval.heldout import (
    HeldoutPlan,
    ServedGenerator,
    _run,
    _run_to_completion,
    _verl_config,
    check_endpoint,
    model_folder,
    rollout_context,
    turn_table,
)
from prove.llm.vllm import serve_local
from prove.train.config import DataPaths, load_train_config

SERVERS = ("banking", "email", "shop")
SIZES = {"multi_turn": 6, "clarification": 2, "abstention": 2}


class HFGenerator:
    """The evaluation's former generator: ``prove.train.hf_generate.HFGenerateServer`` in this process,
    greedy, one request at a time (VERL's LLM-client interface)."""

    def __init__(self, verl_cfg: Any, max_new_tokens: int) -> None:
        from verl.utils.config import omega_conf_to_dataclass

        from prove.train.hf_generate import HFGenerateServer

        model_config = omega_conf_to_dataclass(verl_cfg.actor_rollout_ref.model)
        self.server = HFGenerateServer(verl_cfg.actor_rollout_ref.rollout, model_config)
        self.max_new_tokens = max_new_tokens
        self.generated_tokens = 0

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        params = {**sampling_params, "temperature": 0.0, "max_tokens": self.max_new_tokens}
        out = await self.server.generate(prompt_ids=prompt_ids, sampling_params=params, request_id=request_id)
        self.generated_tokens += len(out.token_ids)
        out.extra_fields.setdefault("min_global_steps", None)
        out.extra_fields.setdefault("max_global_steps", None)
        return out


def held_out_config(work: Path, rows: int) -> Any:
    """smollm2-135m's config whose held-out split is ``rows`` turns of a small synthesis run (both of
    its splits, in ``prove.train.data``'s order), two tools offered per row, prompts within 1000 tokens."""
    import json

    from prove.rows import write_rows
    from prove.synth.pipeline import SynthConfig, synthesize
    from prove.train.chat_template import load_tokenizer
    from prove.train.data import _rows

    synth = work / "synth"
    synthesize(SynthConfig(sizes=dict(SIZES), seed=3, n_chains=60, n_worlds=2, servers=SERVERS, chunk_size=8,
                           val_fraction=0.25, workers=1), synth)
    examples = [json.loads(line) for line in (synth / "examples.jsonl").read_text().splitlines()]
    data = DataPaths(rl_val=str(work / "rl_val.parquet"), max_tools=2, max_prompt_tokens=1000)
    kept, _, _ = _rows(examples, "val", data, load_tokenizer(), rows)
    write_rows(kept, data.rl_val)
    return dataclasses.replace(load_train_config("smollm2-135m"), data=data)


def measure(name: str, llm: Any, verl_cfg: Any, cfg: Any, plan: HeldoutPlan, concurrency: int) -> dict[str, Any]:
    start = time.perf_counter()
    raw = _run_to_completion(_run(verl_cfg, cfg.data.resolve("rl_val"), plan, llm, concurrency))
    took = time.perf_counter() - start
    turns = turn_table(raw, name, plan.reward)
    return {"generator": name, "concurrency": concurrency, "turns": len(turns), "seconds": took,
            "turns_per_min": 60 * len(turns) / took, "tokens": getattr(llm, "generated_tokens", 0),
            "calls": list(turns["calls"]), "score": float(turns["score"].mean()),
            "in_flight": getattr(llm, "max_in_flight", 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8, help="held-out rows (turns) per generator")
    parser.add_argument("--max-new-tokens", type=int, default=64, help="tokens per generation")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8], help="served runs' concurrency")
    parser.add_argument("--no-hf", action="store_true", help="skip the Hugging Face baseline")
    args = parser.parse_args()
    plan = HeldoutPlan(max_rows=args.rows, max_new_tokens=args.max_new_tokens)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-heldout-") as tmp, EnvServer() as env:
        cfg = held_out_config(Path(tmp), args.rows)
        folder = model_folder(cfg.model_path())
        verl_cfg = _verl_config(folder, cfg, [env.url], Path(tmp) / "verl", plan)
        if not args.no_hf:
            results.append(measure("hf-generate (old)", HFGenerator(verl_cfg, args.max_new_tokens), verl_cfg, cfg,
                                   plan, 1))
        start = time.perf_counter()
        with serve_local(model_dir=folder) as served:
            print(f"vLLM (CPU build) started in {time.perf_counter() - start:.0f} s", flush=True)
            context = min(rollout_context(verl_cfg), check_endpoint(served.endpoint) or 10**9)
            for c in args.concurrency:
                llm = ServedGenerator(served.endpoint, args.max_new_tokens, context)
                results.append(measure("vllm served", llm, verl_cfg, cfg, plan, c))
    base = results[0]["calls"]
    print(f"\n{'generator':<18} {'conc':>4} {'in flight':>9} {'turns':>5} {'seconds':>8} {'turns/min':>9} "
          f"{'tokens':>6} {'mean score':>10} {'same calls as line 1':>20}")
    for r in results:
        same = sum(a == b for a, b in zip(r["calls"], base, strict=True))
        print(f"{r['generator']:<18} {r['concurrency']:>4} {r['in_flight']:>9} {r['turns']:>5} {r['seconds']:>8.1f} "
              f"{r['turns_per_min']:>9.2f} {r['tokens']:>6} {r['score']:>10.3f} {same:>16}/{len(base)}")

if __name__ == "__main__":
    main()
