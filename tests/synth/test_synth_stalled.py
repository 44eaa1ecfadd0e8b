"""Synthesis that cannot keep a kind stops with a message naming the kind and the main rejections.

    .venv/bin/python -m pytest tests/synth/test_synth_stalled.py -q
"""

from __future__ import annotations

import pytest

from prove.synth.pipeline import SynthConfig, SynthesisStalled, synthesize


def test_a_teacher_that_never_answers_stops_synthesis_with_its_reasons() -> None:
    cfg = SynthConfig(sizes={"multi_turn": 2, "clarification": 0, "abstention": 0}, teacher="openai",
                      base_url="http://127.0.0.1:9/v1", model="nobody", servers=("banking",),
                      n_chains=40, n_worlds=1, max_attempts=6, chunk_size=3)
    with pytest.raises(SynthesisStalled, match=r"multi_turn: 0 of 2 kept after 6 attempts on banking "
                                               r"\(teacher openai nobody\); main rejections: .*\(\d+\)"):
        synthesize(cfg)
    assert "max_attempts" not in cfg.data_fields()  # machinery: it does not shape the data
