"""Helpers shared by the served held-out tests (imported by name: pytest puts this folder on sys.path)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest


def heldout_config(synth_examples: list[dict[str, Any]], root: Path, rows: int) -> Any:
    """smollm2-135m's config whose held-out split is the first ``rows`` turns of the synthesis
    fixture (both of its splits, in ``prove.train.data``'s order), two tools offered per row,
    prompts within the config's 1024-token prompt length, written under ``root``."""
    pytest.importorskip("verl", reason="the train extra (verl) is not installed")
    from prove.rows import write_rows
    from prove.train.chat_template import load_tokenizer
    from prove.train.config import DataPaths, load_train_config
    from prove.train.data import _rows

    data = DataPaths(rl_val=str(root / "rl_val.parquet"), max_tools=2, max_prompt_tokens=1000)
    found, _, _ = _rows(synth_examples, "val", data, load_tokenizer(), rows)
    assert len(found) == rows, "the synthesis fixture has too few turns that fit 1000 tokens"
    write_rows(found, data.rl_val)
    return dataclasses.replace(load_train_config("smollm2-135m"), data=data)
