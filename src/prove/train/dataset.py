"""VERL's RL dataset for PROVE rows (``data.custom_cls``); the SFT one is ``prove.train.sft_dataset``.

    data.custom_cls.path=pkg://prove.train.dataset data.custom_cls.name=ProveRLDataset

A thin subclass of VERL's own ``RLHFDataset``. Rows store messages with a
fixed parquet shape (``prove.train.rows``): this class hands the chat template plain messages
again (null keys dropped, tool-call arguments as objects), and measures prompt length with the
row's own offered tools, normalised as the rollout offers them, when filtering overlong prompts
(VERL's filter would count all 343 tool schemas).
"""

from __future__ import annotations

from typing import Any

import datasets
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.tokenizer import normalize_token_ids

from prove.train.rows import decode_messages
from prove.train.schema import row_schemas

__all__ = ["ProveRLDataset", "prompt_length"]


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

    def maybe_filter_out_long_prompts(self, dataframe: datasets.Dataset | None = None) -> datasets.Dataset:
        if not self.filter_overlong_prompts:
            return dataframe
        tokenizer, key, limit = self.tokenizer, self.prompt_key, self.max_prompt_length
        kwargs = dict(self.apply_chat_template_kwargs)
        kept = dataframe.filter(
            lambda row: prompt_length(tokenizer, row, key, kwargs) <= limit,
            num_proc=self.num_workers,
            desc=f"Filtering prompts longer than {limit} tokens (row tools included)",
        )
        print(f"filter dataset len: {len(kept)} of {len(dataframe)}")
        return kept

    def __getitem__(self, item: int) -> dict[str, Any]:
        row = super().__getitem__(item)
        row["raw_prompt"] = decode_messages(row["raw_prompt"])
        return row

