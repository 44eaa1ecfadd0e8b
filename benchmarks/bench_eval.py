"""Time the evaluation harness without a model: BFCL self-check (800 entries x 2) and T-Eval scoring of the samples.

    .venv/bin/python benchmarks/bench_eval.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from prove.eval import bfcl, teval


def main() -> None:
    start = time.perf_counter()
    rows = bfcl.self_check()
    took = time.perf_counter() - start
    per_category = ", ".join(f"{r['category']} {r['seconds']}s" for r in rows)
    print(f"bfcl self-check: {sum(r['replay_correct'] for r in rows)}/{sum(r['total'] for r in rows)} replayed, "
          f"{sum(r['dropped_correct'] for r in rows)} with the last call dropped, {took:.1f}s ({per_category})")
    cfg = teval.TEvalConfig(label="gold", data_dir=teval.SAMPLE_DATA_DIR)
    tmp = Path(tempfile.mkdtemp())
    start = time.perf_counter()
    cfg.embedding_model = str(teval.bag_of_words_model(teval.sample_texts(cfg), tmp / "bow"))
    teval.write_predictions(cfg, tmp / "gold", teval.gold_prediction)
    score = teval.TEval(cfg).score(tmp / "gold")
    print(f"t-eval gold samples: overall {score['abilities']['overall']:.2f} in {time.perf_counter() - start:.1f}s")


if __name__ == "__main__":
    main()
