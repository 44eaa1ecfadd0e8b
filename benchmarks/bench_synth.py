"""Synthesis at paper scale: 10,895 multi-turn + 1,500 clarification + 1,122 abstention examples with
the programmatic teacher; prints examples/s per stage, totals, the funnel and the files' SHA-256.

    python benchmarks/bench_synth.py --workers 2 --out /tmp/prove-synth-paper
    python benchmarks/bench_synth.py --scale 0.05            # a quick look

Stage times are summed over workers (CPU-side seconds, inflated on a shared machine); `wall` is
the elapsed time of the whole run, graph and chain sampling included. Run it twice with the same
seed to check the SHA-256 lines are identical.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from prove.synth.pipeline import PAPER_SIZES, SynthConfig, synthesize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the paper sizes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/prove-synth-bench")
    args = ap.parse_args()
    sizes = {k: max(1, round(v * args.scale)) for k, v in PAPER_SIZES.items()}
    cfg = SynthConfig.from_profile("paper", teacher="programmatic", sizes=sizes, seed=args.seed,
                                   workers=args.workers)
    t0 = time.perf_counter()
    cpu0 = os.times()
    result = synthesize(cfg, args.out, progress=lambda m: print(f"[{time.perf_counter() - t0:7.1f}s] {m}",
                                                                  flush=True))
    cpu1 = os.times()
    wall = result.timings["wall"]
    print(f"\nsizes {sizes}, seed {args.seed}, {args.workers} workers, {result.n_chains} chains, "
          f"{cfg.n_worlds} worlds")
    print(f"wall {wall:.1f}s ({wall / 60:.1f} min); CPU user+sys: parent "
          f"{cpu1.user - cpu0.user + cpu1.system - cpu0.system:.1f}s, workers "
          f"{cpu1.children_user - cpu0.children_user + cpu1.children_system - cpu0.children_system:.1f}s; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    thr = result.throughput()
    attempted = sum(f["attempted"] for f in result.funnel.values())
    print(f"{'stage':<12}{'seconds':>10}{'examples/s':>12}")
    for stage in ("sampling", "generation", "replay", "export"):
        print(f"{stage:<12}{result.timings.get(stage, 0.0):>10.1f}{thr[stage]:>12.1f}")
    print(f"{'end to end':<12}{wall:>10.1f}{thr['end_to_end']:>12.1f}   "
          f"({sum(result.kept.values())} kept of {attempted} attempted)")
    for kind, f in result.funnel.items():
        print(f"  {kind:<14} attempted {f['attempted']:>6} generated {f['generated']:>6} "
              f"replay-valid {f['replay_valid']:>6} kept {f['kept']:>6} rejected {f['rejected']}")
    for name, digest in sorted(result.files.items()):
        size = os.path.getsize(os.path.join(args.out, name)) / 2**20
        print(f"  {digest}  {name} ({size:.1f} MiB)")


if __name__ == "__main__":
    main()
