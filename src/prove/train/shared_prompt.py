"""Completion log-probabilities with a group's shared prompt computed once (the GRPO loss's forward pass).

    from prove.train.shared_prompt import shared_prompt_logps
    logps, entropies = shared_prompt_logps(model, input_ids, attention_mask, logits_to_keep)

A GRPO group is ``n`` completions of one prompt. TRL's ``GRPOTrainer`` scores them as ``n`` full
sequences (prompt + completion), so the prompt's layers run ``n`` times, forward and backward; on a
CPU the prompt is most of the work (a 900-token prompt against 64-256 completion tokens). Here the
rows of a batch whose prompt tokens and mask are identical run the prompt once (its key/value cache,
kept in the autograd graph) and their completions on top of it, repeated over the group: the same
positions, mask and causal attention as the full forward, so the same log-probabilities and, through
the repeated cache, the same gradient (``tests/train/test_train_shared_prompt.py`` checks both
against TRL's own pass; ``benchmarks/bench_shared_prompt.py`` times them).

Rows are grouped wherever they sit in the batch and returned in their order; a row with no twin is a
group of one. Only the completion positions are scored (the prompt's logits are never built).
"""

from __future__ import annotations

from typing import Any

__all__ = ["prompt_groups", "shared_prompt_logps"]


def prompt_groups(prompt_ids: Any, prompt_mask: Any) -> list[list[int]]:
    """Indices of the rows with identical prompt tokens and mask, in first-seen order."""
    groups: dict[bytes, list[int]] = {}
    for i, (ids, mask) in enumerate(zip(prompt_ids, prompt_mask, strict=True)):
        key = ids.mul(mask).cpu().numpy().tobytes() + mask.cpu().numpy().tobytes()
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def shared_prompt_logps(model: Any, input_ids: Any, attention_mask: Any, logits_to_keep: int, *,
                        temperature: float = 1.0, compute_entropy: bool = False,
                        entropy_grad: bool = False) -> tuple[Any, Any]:
    """Per-token log-probabilities of the last ``logits_to_keep`` tokens of each row (TRL's
    ``_get_per_token_logps_and_entropies`` contract: logits divided by ``temperature``; entropies
    when asked, with gradient only when ``entropy_grad``), the prompt (every earlier token) computed
    once per group of rows that share it."""
    import torch
    from transformers import DynamicCache
    from trl.trainer.utils import entropy_from_logits, selective_log_softmax

    prompt_len = input_ids.size(1) - logits_to_keep
    if prompt_len < 1:
        raise ValueError(f"logits_to_keep={logits_to_keep} leaves no prompt in rows of {input_ids.size(1)} tokens")
    completions = input_ids[:, prompt_len:]
    parts: list[tuple[list[int], Any, Any]] = []
    for rows in prompt_groups(input_ids[:, :prompt_len], attention_mask[:, :prompt_len]):
        first = rows[0]
        prompt_mask = attention_mask[first: first + 1, :prompt_len]
        cache = DynamicCache()
        out = model(input_ids=input_ids[first: first + 1, :prompt_len], attention_mask=prompt_mask,
                    past_key_values=cache, use_cache=True, logits_to_keep=1)
        cache = out.past_key_values
        cache.batch_repeat_interleave(len(rows))  # differentiable: the group's gradients meet in the prompt
        index = torch.tensor(rows, device=input_ids.device)
        group = completions[index]
        rest = model(input_ids=group, attention_mask=attention_mask[index], past_key_values=cache,
                     use_cache=True)
        # the prompt's last logit predicts the first completion token; the last completion logit predicts
        # nothing (TRL drops it too)
        logits = torch.cat([out.logits[:, -1:, :].expand(len(rows), -1, -1), rest.logits[:, :-1, :]], dim=1)
        logits = logits / temperature
        group_logps = selective_log_softmax(logits, group)
        group_entropies = None
        if compute_entropy:
            if entropy_grad:
                group_entropies = entropy_from_logits(logits)
            else:
                with torch.no_grad():
                    group_entropies = entropy_from_logits(logits)
        parts.append((rows, group_logps, group_entropies))
    # the groups' rows back in the batch's order
    inverse = torch.argsort(torch.tensor([i for rows, _, _ in parts for i in rows], device=input_ids.device))
    logps = torch.cat([p[1] for p in parts], dim=0)[inverse]
    entropies = torch.cat([p[2] for p in parts], dim=0)[inverse] if compute_entropy else None
    return logps, entropies
