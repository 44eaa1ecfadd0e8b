"""Cost of the CPU training chain: seconds per SFT and GRPO step, peak memory (USS/PSS), tool vs generation time.

    python benchmarks/bench_train_cpu.py                       # SFT 2 steps, GRPO 2 steps (smollm2-135m)
    python benchmarks/bench_train_cpu.py --sft-steps 1 --grpo-steps 1 --out /tmp/bench

Runs the real chain (``prove train smollm2-135m --variant sft``, then GRPO from it) into a scratch
results/checkpoints folder, sampling the whole process tree's memory every second (USS and PSS
from /proc/<pid>/smaps_rollup: pages shared between the trainer, Ray workers and the rollout
server counted once, unlike summed RSS). Seconds per step come from VERL's own step timers in
``metrics.jsonl`` (``timing_s/step`` for GRPO; wall time between SFT steps from its log);
the rollout split comes from VERL's per-trajectory agent-loop timers (generation vs tool calls) on
the trained model, run through the training agent path. Prints one table; never run as a test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil


def _tree_memory(root: psutil.Process) -> tuple[int, int]:
    uss = pss = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            info = proc.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        uss += getattr(info, "uss", 0)
        pss += getattr(info, "pss", 0)
    return uss, pss


class MemorySampler(threading.Thread):
    """Peak USS and PSS of this process and all its descendants, sampled every ``every`` seconds."""

    def __init__(self, every: float = 1.0) -> None:
        super().__init__(daemon=True)
        self.every, self.peak_uss, self.peak_pss = every, 0, 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        me = psutil.Process()
        while not self._stop_event.is_set():
            uss, pss = _tree_memory(me)
            self.peak_uss, self.peak_pss = max(self.peak_uss, uss), max(self.peak_pss, pss)
            self._stop_event.wait(self.every)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()


def _metrics(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def _run(label: str, fn, sampler_every: float = 1.0) -> dict:
    sampler = MemorySampler(sampler_every)
    sampler.start()
    start = time.perf_counter()
    try:
        fn()
    finally:
        sampler.stop()
    return {"phase": label, "wall_s": time.perf_counter() - start,
            "peak_uss_gb": sampler.peak_uss / 2**30, "peak_pss_gb": sampler.peak_pss / 2**30}


def _rollout_split(cfg, results: Path, ckpt: Path, rows: int) -> None:
    """Rollout time in tool calls vs generation, from VERL's per-trajectory timers (AgentLoopMetrics)
    on the GRPO model: the training agent path (AgentLoopWorker, prove_tool_agent, ProveTool,
    prove serve) with greedy generation, as the held-out evaluation runs it."""
    import json as _json

    from prove.env.launch import EnvServer
    from prove.eval.heldout import HeldoutPlan, evaluate_heldout
    from prove.train.launch import RunPaths

    model = _json.loads(RunPaths.for_run(cfg, cfg.variant("default"), results, ckpt).model.read_text())
    with EnvServer() as server:
        turns, _ = evaluate_heldout(model["hf_model"], cfg, server.url, HeldoutPlan(max_rows=rows))
    gen, tool = float(turns["generate_s"].sum()), float(turns["tool_calls_s"].sum())
    print(f"rollout split over {len(turns)} trajectories ({int(turns['n_pred'].sum())} tool calls): "
          f"generation {gen:.1f}s, tool calls {tool:.2f}s, tool share {tool / (gen + tool):.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="smollm2-135m")
    parser.add_argument("--sft-steps", type=int, default=2)
    parser.add_argument("--grpo-steps", type=int, default=2)
    parser.add_argument("--out", default=None, help="scratch folder (default: a temporary one)")
    parser.add_argument("--rollout-rows", type=int, default=6,
                        help="held-out rows run through the agent path for the tool/generation split")
    args = parser.parse_args(argv)

    import dataclasses

    from prove.train.config import load_train_config
    from prove.train.launch import RunPaths, launch

    out = Path(args.out or tempfile.mkdtemp(prefix="prove-bench-train-"))
    out.mkdir(parents=True, exist_ok=True)
    cfg = load_train_config(args.config)
    # the data is prepared into the scratch folder from the config's synthesis export
    data = dataclasses.replace(cfg.data, **{k: str(out / "data" / f"{k}.parquet")
                                            for k in ("rl_train", "rl_val", "sft_train", "sft_val")})
    cfg = dataclasses.replace(cfg, data=data)
    results, ckpt = out / "results", out / "checkpoints"
    log = open(out / "bench.log", "w")  # noqa: SIM115 - closed at the end

    phases = []
    for variant, steps in (("sft", args.sft_steps), ("default", args.grpo_steps)):
        def go(variant: str = variant, steps: int = steps) -> None:
            code = launch(cfg, variant, results_dir=results, checkpoints_dir=ckpt, out=log, steps=steps)
            if code != 0:
                raise SystemExit(f"{variant} exited {code}; see {out}")
        phases.append(_run(variant, go))
    log.close()

    sft = _metrics(RunPaths.for_run(cfg, cfg.variant("sft"), results, ckpt).metrics)
    grpo = _metrics(RunPaths.for_run(cfg, cfg.variant("default"), results, ckpt).metrics)
    grpo_steps = [m["data"] for m in grpo if "timing_s/step" in m["data"]]
    step_s = [d["timing_s/step"] for d in grpo_steps]
    gen = [d.get("timing_s/agent_loop/generate_sequences/mean", float("nan")) for d in grpo_steps]
    tool = [d.get("timing_s/agent_loop/tool_calls/mean", float("nan")) for d in grpo_steps]
    sft_train = [m for m in sft if any(k.startswith("train/loss") for k in m["data"])]

    print(f"{'phase':<6} {'wall s':>8} {'steps':>6} {'s/step':>8} {'peak USS GB':>12} {'peak PSS GB':>12}")
    for p, n in zip(phases, (len(sft_train), len(step_s)), strict=True):
        per = p["wall_s"] / n if n else float("nan")
        print(f"{p['phase']:<6} {p['wall_s']:>8.1f} {n:>6} {per:>8.1f} {p['peak_uss_gb']:>12.2f} "
              f"{p['peak_pss_gb']:>12.2f}")
    if step_s:
        print(f"GRPO timing_s/step (VERL): {', '.join(f'{s:.1f}' for s in step_s)}")
        if not all(g != g for g in gen):  # VERL's v1 trainer does not log the agent-loop timers
            print("agent-loop timers (VERL): generation " + ", ".join(f"{g:.2f}s" for g in gen)
                  + "; tool calls " + ", ".join(f"{t:.3f}s" for t in tool))
        for key in ("response_length/mean", "critic/score/mean", "actor/pg_loss", "actor/grad_norm"):
            vals = [d.get(key) for d in grpo_steps]
            print(f"  {key}: {vals}")
    print(f"(wall s includes each trainer's start-up: Ray, model load, data preparation; folder {out})")
    _rollout_split(cfg, results, ckpt, args.rollout_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
