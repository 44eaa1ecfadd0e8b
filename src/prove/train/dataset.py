"""VERL's RL dataset for PROVE rows (``data.custom_cls``); the SFT one is ``prove.train.sft_dataset``.

    data.custom_cls.path=pkg://prove.train.dataset data.custom_cls.name=ProveRLDataset

A thin subclass of VERL's own ``RLHFDataset``. Rows store messages with a fixed parquet shape
(``prove.rows``): this class hands the chat template plain messages again (null keys
dropped, tool-call arguments as objects). It measures every prompt with the row's own offered
tools, normalised as the rollout offers them (VERL's filter would count all 343 tool schemas), and
never lets an over-long prompt through silently: with ``data.filter_overlong_prompts`` such rows
are dropped; without it, ``data.truncation: error`` fails here, at load, before any GPU work, and
``left|right|middle`` warn that ``ProveAgentLoop`` will cut them. The counts are printed, logged
and kept in ``prompt_stats`` (rows, over_limit, max_prompt_length, longest, dropped).
"""

from __future__ import annotations

import logging
from typing import Any

import datasets
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.tokenizer import normalize_token_ids

from prove.rows import decode_messages
from prove.train.schema import row_schemas

__all__ = ["ProveRLDataset", "prompt_length"]

logger = logging.getLogger(__name__)


def prompt_length(tokenizer: Any, row: dict[str, Any], prompt_key: str = "prompt",
                  template_kwargs: dict[str, Any] | None = None) -> int:
    """Tokens of a row's prompt as the rollout renders it (its offered tools included)."""
    extra = row.get("extra_info") or {}
    tools = row_schemas(extra.get("tools")) or None
    kwargs = {k: v for k, v in (template_kwargs or {}).items()
              if k not in ("tokenize", "return_dict", "return_tensors")}
    ids = tokenizer.apply_chat_template(decode_messages(row[prompt_key]), tools=tools,
                                        add_generation_prompt=True, tokenize=True, **kwargs)
    return len(normalize_token_ids(ids))


class ProveRLDataset(RLHFDataset):
    """``RLHFDataset`` over PROVE rows (see the module doc)."""

    prompt_stats: dict[str, int]

    def maybe_filter_out_long_prompts(self, dataframe: datasets.Dataset | None = None) -> datasets.Dataset:
        tokenizer, key, limit = self.tokenizer, self.prompt_key, int(self.max_prompt_length)
        kwargs = dict(self.apply_chat_template_kwargs)
        lengths = dataframe.map(
            lambda row: {"_prove_prompt_length": prompt_length(tokenizer, row, key, kwargs)},
            num_proc=self.num_workers if len(dataframe) > 64 else None,
            desc=f"Measuring prompts (row tools included) against {limit} tokens",
        )["_prove_prompt_length"]
        over = [i for i, n in enumerate(lengths) if n > limit]
        self.prompt_stats = {"rows": len(lengths), "over_limit": len(over), "max_prompt_length": limit,
                             "longest": max(lengths, default=0), "dropped": 0}
        summary = (f"{len(over)} of {len(lengths)} prompts are longer than data.max_prompt_length="
                   f"{limit} tokens (longest {self.prompt_stats['longest']}, offered tools included)")
        if not over:
            print(f"prompt lengths: {summary}")
            return dataframe
        if self.filter_overlong_prompts:
            kept = dataframe.select([i for i, n in enumerate(lengths) if n <= limit])
            self.prompt_stats["dropped"] = len(over)
            message = f"{summary}: dropped (data.filter_overlong_prompts); {len(kept)} rows kept"
            print(message)
            logger.warning(message)
            return kept
        if self.truncation == "error":
            raise ValueError(f"{summary} and data.truncation=error: set data.filter_overlong_prompts=true "
                             "to drop them, or raise data.max_prompt_length")
        message = f"{summary}: ProveAgentLoop will cut them ({self.truncation}, data.truncation)"
        print(message)
        logger.warning(message)
        return dataframe

    def __getitem__(self, item: int) -> dict[str, Any]:
        row = super().__getitem__(item)
        row["raw_prompt"] = decode_messages(row["raw_prompt"])
        return row
