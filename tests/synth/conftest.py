"""Shared fixtures for the synthesis tests: one small data set, generated once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from prove.synth.pipeline import SynthConfig, SynthResult, synthesize

SERVERS = ("banking", "email", "shop", "calendar", "flights")
SMALL = {"multi_turn": 10, "clarification": 4, "abstention": 4}


def small_config(**overrides: object) -> SynthConfig:
    base: dict[str, object] = dict(sizes=dict(SMALL), seed=3, n_chains=120, n_worlds=3,
                                   servers=SERVERS, chunk_size=8, val_fraction=0.25)
    base.update(overrides)
    return SynthConfig(**base)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[SynthResult, Path]:
    out = tmp_path_factory.mktemp("synth-a")
    return synthesize(small_config(), out), out
