"""The TRL engine renders its prompts and tool turns in the run's thinking mode.

    .venv/bin/python -m pytest tests/train/test_train_trl_thinking.py -q
"""

from __future__ import annotations

import json

import pytest
from test_train_boundaries import family_tokenizer


def test_prove_rollout_renders_with_the_runs_chat_template_kwargs() -> None:
    pytest.importorskip("trl")
    from prove.llm.families import chat_template_kwargs
    from prove.train.trl_engine import ProveRollout, trl_settings

    tok = family_tokenizer("qwen3")  # the fixture mirrors Qwen3's template: enable_thinking=false
    row = {"messages": json.dumps([{"role": "user", "content": "What is my balance?"}]), "tools": "[]"}
    off = ProveRollout(tok, ["http://127.0.0.1:9"], trl_settings({}),
                       template_kwargs=chat_template_kwargs("qwen3", False))
    default = ProveRollout(tok, ["http://127.0.0.1:9"], trl_settings({}))
    text_off, text_default = tok.decode(off.prompt_ids(row)), tok.decode(default.prompt_ids(row))
    assert text_off.endswith("<think>\n\n</think>\n\n") and not text_default.endswith("</think>\n\n")
    off.loop.close()
    default.loop.close()
