"""τ²-bench timings on this machine: the self-check (mock + retail) and the smoke profile's mock run end to end.

    .venv/bin/python benchmarks/bench_tau2.py [results_dir]     # default results/bench_tau2
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from prove.eval.pipeline import EvalPlan, evaluate_model
from prove.eval.served import serve_local
from prove.eval.tau2 import main as tau2_main
from prove.profiles import load_profile


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "results/bench_tau2")
    start = time.perf_counter()
    tau2_main(["self-check"])
    print(f"self-check: {time.perf_counter() - start:.1f}s")
    plan = EvalPlan.from_profile(load_profile("smoke").eval, benchmarks=("tau2",), results_dir=out)
    start = time.perf_counter()
    with serve_local() as served:
        result = evaluate_model("SmolLM2-135M", "base", served.endpoint, plan)
    print(f"smoke τ² slice ({plan.tau2_domains}, tasks {plan.tau2_task_ids}, {plan.tau2_trials} trial, "
          f"max {plan.tau2_max_steps} steps): {time.perf_counter() - start:.1f}s")
    for row in result["tau2"]:
        print(row)
    print(result["rows"])
    print(f"results files: {sorted(str(p) for p in (out / 'tau2').glob('*/raw/*.json'))}")


if __name__ == "__main__":
    main()
