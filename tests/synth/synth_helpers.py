"""The synthesis tests' small data set settings (a module of its own: ``from conftest import``
finds whichever tests/*/conftest.py pytest imported first when several folders run together)."""

from __future__ import annotations

from prove.synth.pipeline import SynthConfig

SERVERS = ("banking", "email", "shop", "calendar", "flights")
SMALL = {"multi_turn": 10, "clarification": 4, "abstention": 4}


def small_config(**overrides: object) -> SynthConfig:
    base: dict[str, object] = dict(sizes=dict(SMALL), seed=3, n_chains=120, n_worlds=3,
                                   servers=SERVERS, chunk_size=8, val_fraction=0.25)
    base.update(overrides)
    return SynthConfig(**base)  # type: ignore[arg-type]
