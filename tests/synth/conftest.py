"""Shared fixtures for the synthesis tests: one small data set, generated once per session."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_helpers import small_config

from prove.synth.pipeline import SynthResult, synthesize


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[SynthResult, Path]:
    out = tmp_path_factory.mktemp("synth-a")
    return synthesize(small_config(), out), out
